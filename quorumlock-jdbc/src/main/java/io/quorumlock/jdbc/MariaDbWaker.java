package io.quorumlock.jdbc;

import io.quorumlock.internal.LocalLine;
import io.quorumlock.internal.Ticker;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one connection of a {@link JdbcLock} on MariaDB that waits in the server while threads wait,
 * so that a release wakes them at once. For each resource its threads wait for, the connection
 * holds one of the resource's {@value #SLOTS} wake-up slots, user-level locks ({@code GET_LOCK});
 * then it sleeps in {@code SELECT SLEEP(...)}. A release whose resource has a slot held finds the
 * holding connections ({@code IS_USED_LOCK}) and ends their sleep ({@code KILL QUERY}, which a
 * user may do to the connections of the same user); one with no slot held costs no more than the
 * release's own statement. A waiter that crashes leaves nothing behind: its connection's user
 * locks end with it. A wake-up that goes unheard (the connection between two statements, another
 * database user) costs the waiter its recheck.
 */
final class MariaDbWaker extends WakeThread {

    private static final Logger log = LoggerFactory.getLogger(MariaDbWaker.class);

    /** How many lock instances of a resource can wait to be woken at once; more recheck. */
    static final int SLOTS = 4;

    /** How long one sleep lasts when nothing ends it: the slots of resources no longer waited for are given up then. */
    private static final int SLEEP_SECONDS = 5;

    /** MariaDB's "Query execution was interrupted": the sleep was ended. */
    private static final int INTERRUPTED = 1317;

    private final String table;
    /** Ends the sleep of the waker's connection, from another connection: to take a slot at once. */
    private final Kicker kicker;

    /** The resources whose threads wait, and which slot this connection holds for each, by number. */
    private final Set<String> wanted = ConcurrentHashMap.newKeySet();

    private final Map<String, Long> registered = new ConcurrentHashMap<>();
    private final Map<String, String> slotNames = new ConcurrentHashMap<>();

    private long registrations;
    /** The connection's id while it sleeps, else 0. */
    private volatile long sleeping;

    /** Ends the current statement of a connection of the same user. */
    @FunctionalInterface
    interface Kicker {
        void kick(long connectionId);
    }

    MariaDbWaker(
            String table,
            Connector connector,
            Kicker kicker,
            LocalLine waiters,
            Ticker ticker,
            long requestTimeoutNanos,
            ThreadFactory threads,
            String database) {
        super(connector, waiters, ticker, requestTimeoutNanos, threads, database);
        this.table = table;
        this.kicker = kicker;
    }

    /** The names of the wake-up slots of {@code resource} in {@code table}: user locks of at most 64 characters. */
    static List<String> slots(String table, String resource) {
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-256")
                    .digest((table + '\0' + resource).getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JVM", e);
        }
        String name = "quorumlock:" + HexFormat.of().formatHex(digest, 0, 20) + ":";
        List<String> slots = new ArrayList<>(SLOTS);
        for (int i = 0; i < SLOTS; i++) {
            slots.add(name + i);
        }
        return slots;
    }

    /** Ends the sleep of every connection that holds a wake-up slot of {@code resource}; after its release. */
    static void wake(LockTable.Session session, String table, String resource) throws SQLException {
        List<String> slots = slots(table, resource);
        Set<Long> ids = new LinkedHashSet<>();
        try (PreparedStatement statement = session.prepare(
                "SELECT " + String.join(", ", java.util.Collections.nCopies(SLOTS, "IS_USED_LOCK(?)")))) {
            for (int i = 0; i < SLOTS; i++) {
                statement.setString(i + 1, slots.get(i));
            }
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                for (int i = 1; i <= SLOTS; i++) {
                    long id = rows.getLong(i);
                    if (!rows.wasNull()) {
                        ids.add(id);
                    }
                }
            }
        }
        for (long id : ids) {
            kill(session, id);
        }
    }

    /** Ends the current statement of the connection {@code id} ({@code KILL QUERY}): its sleep. */
    static void kill(LockTable.Session session, long id) {
        try (PreparedStatement kill = session.prepare("KILL QUERY " + id)) {
            kill.execute();
        } catch (SQLException e) {
            // gone since, or another user's: that waiter rechecks
            log.debug("could not wake the waiting connection {}: {}", id, SqlErrors.shortMessage(e));
        }
    }

    @Override
    public long listening(String resource) {
        return registered.getOrDefault(resource, 0L);
    }

    @Override
    public void wanted(String resource) {
        boolean added = wanted.add(resource);
        if (start()) {
            return;
        }
        long id = sleeping;
        if (added && id != 0) {
            kicker.kick(id); // to take the resource's slot now, not after the sleep
        }
    }

    @Override
    void closing() {
        long id = sleeping;
        if (id != 0) {
            kicker.kick(id);
        }
    }

    @Override
    void deaf() {
        registered.clear();
    }

    @Override
    void ended() {
        registered.clear();
        wanted.clear(); // a thread still waiting asks again
    }

    @Override
    String until() {
        return "they can wait in the database";
    }

    @Override
    void session() throws SQLException {
        try (Connection connection = connector.connect(ticker.nanos() + requestTimeoutNanos)) {
            connection.setNetworkTimeout(Runnable::run, (int)
                    (TimeUnit.NANOSECONDS.toMillis(requestTimeoutNanos) + TimeUnit.SECONDS.toMillis(SLEEP_SECONDS)));
            if (!connection.getAutoCommit()) {
                connection.setAutoCommit(true);
            }
            long id = queryLong(connection, "SELECT CONNECTION_ID()");
            log.debug("waiting for releases on {} (connection {})", database, id);
            try {
                long idleSince = 0;
                while (true) {
                    if (closed()) {
                        return;
                    }
                    if (take(connection)) {
                        idleSince = 0;
                    } else if (idleSince == 0) {
                        idleSince = ticker.nanos();
                    } else if (ticker.nanos() - idleSince > TimeUnit.MILLISECONDS.toNanos(LINGER_MILLIS)) {
                        return;
                    }
                    sleeping = id;
                    try (Statement statement = connection.createStatement();
                            ResultSet rows = statement.executeQuery("SELECT SLEEP(" + SLEEP_SECONDS + ")")) {
                        if (rows.next() && rows.getLong(1) == 1) {
                            waiters.wakeAll(); // ended early: as below
                        }
                    } catch (SQLException e) {
                        if (e.getErrorCode() != INTERRUPTED) {
                            throw e;
                        }
                        waiters.wakeAll(); // a release of one of the resources, or a new one to take
                    } finally {
                        sleeping = 0;
                    }
                }
            } finally {
                registered.clear();
                if (!connection.isClosed()) {
                    queryLong(connection, "SELECT RELEASE_ALL_LOCKS()"); // before the connection goes back to a pool
                }
            }
        }
    }

    /**
     * Takes a slot of each resource waited for that has none, and gives up those of resources no
     * longer waited for; true if a thread waits.
     */
    private boolean take(Connection connection) throws SQLException {
        for (String resource : List.copyOf(wanted)) {
            Long held = registered.get(resource);
            if (waiters.waiting(resource) == 0) {
                wanted.remove(resource);
                if (held != null) {
                    registered.remove(resource);
                    queryLong(connection, "SELECT RELEASE_LOCK('" + slotNames.remove(resource) + "')");
                }
            } else if (held == null) {
                for (String slot : slots(table, resource)) {
                    if (queryLong(connection, "SELECT GET_LOCK('" + slot + "', 0)") == 1) {
                        slotNames.put(resource, slot);
                        registered.put(resource, ++registrations);
                        waiters.wake(resource); // its attempt ran before: it tries again, now heard
                        break;
                    }
                }
            }
        }
        return !waiters.isEmpty();
    }

    private static long queryLong(Connection connection, String sql) throws SQLException {
        for (int tries = 0; ; tries++) {
            try (Statement statement = connection.createStatement();
                    ResultSet rows = statement.executeQuery(sql)) {
                rows.next();
                return rows.getLong(1);
            } catch (SQLException e) {
                if (e.getErrorCode() != INTERRUPTED || tries > 0) {
                    throw e; // a wake-up meant for the sleep ends this statement: once more
                }
            }
        }
    }
}
