package io.quorumlock.jdbc;

import io.quorumlock.FencedLease;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.Holders;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The attempts of a {@link JdbcLock}: one attempt (a token from the sequence, the row taken if it
 * is free), the grant, the refusal with what the row holds, and the undo in the background of the
 * grants whose answer was lost.
 */
final class JdbcAttempts {

    private static final Logger log = LoggerFactory.getLogger(JdbcLock.class);

    /** How many times one attempt draws a new token when the row changed hands under it. */
    private static final int ROUNDS_PER_ATTEMPT = 3;

    /** How soon the undo of a grant whose answer was lost is first tried again; the wait doubles up to the request timeout. */
    private static final long UNDO_RETRY_MILLIS = 250;

    private final Connections connections;
    private final JdbcRows rows;
    private final Ticker ticker;
    private final long requestTimeoutNanos;
    private final LockEvents events;
    /** The lock's timer and workers: the leases' renewals, and the tries at undoing a grant. */
    private final Timers timers;
    /** This process as the table's holder column names it. */
    private final String holder;
    /** The lock's closed flag: a grant made as it closes is released, and the undo leaves its last try to close. */
    private final AtomicBoolean closed;
    /** The grants being undone: {@link JdbcLock#close()} makes a last try at each. */
    private final Set<Undo> undoing = ConcurrentHashMap.newKeySet();

    JdbcAttempts(
            Connections connections,
            JdbcRows rows,
            LockEvents events,
            Timers timers,
            String holder,
            AtomicBoolean closed) {
        this.connections = connections;
        this.rows = rows;
        this.ticker = connections.ticker;
        this.requestTimeoutNanos = connections.requestTimeoutNanos;
        this.events = events;
        this.timers = timers;
        this.holder = holder;
        this.closed = closed;
    }

    /** @param wait the pauses of the acquire making the attempt, told of a holder; null for a try */
    AcquireLoop.Attempt<FencedLease> attempt(String resource, long ttlMillis, long deadline, ReleaseWait wait) {
        long sent = ticker.nanos();
        long pending = 0; // a token whose grant was sent without an answer yet
        long granted = 0;
        AcquireLoop.Attempt<FencedLease> refusal = null;
        LockTable statements = null;
        try (LockTable.Session session = connections.open(deadline, false)) {
            statements = connections.statements();
            boolean absent = false;
            long token = 0;
            long drawn = 0;
            Optional<LockTable.Row> row = Optional.empty();
            for (int round = 1; round <= ROUNDS_PER_ATTEMPT && granted == 0 && refusal == null; round++) {
                if (token == 0) {
                    token = statements.nextToken(session);
                    drawn = token;
                }
                pending = token;
                boolean taken = statements.take(session, resource, holder, token, ttlMillis, absent);
                pending = 0;
                if (taken) {
                    granted = token;
                } else {
                    row = statements.read(session, resource);
                    absent = row.isEmpty();
                    if (row.isPresent() && row.get().held()) {
                        refusal = busy(row.get());
                        if (wait != null) {
                            wait.held(row.get().millisLeft());
                        }
                    } else if (row.isPresent()) {
                        token = 0; // free, but a newer token took it meanwhile: draw a newer one
                    }
                }
            }
            if (granted == 0 && refusal == null) {
                String why = row.isPresent() && row.get().token() >= drawn
                        ? "the row of '" + resource + "' holds token "
                                + row.get().token()
                                + ", newer than the sequence gave: if the sequence was reset, restart it above that"
                        : "the lock changed hands during the attempt";
                refusal = AcquireLoop.Attempt.refused(
                        new ServerAnswer(connections.database(), ServerAnswer.Kind.ERROR, why), true);
            }
        } catch (SQLException e) {
            if (granted == 0) {
                SqlErrors.Failure failure = connections.classify(e, statements);
                ServerAnswer answer = new ServerAnswer(connections.database(), failure.kind(), failure.detail());
                if (!failure.retryable()) {
                    throw new LockConfigurationException(resource, 1, List.of(answer)); // refused: it did not run
                }
                if (pending != 0) {
                    undo(resource, pending, TimeUnit.MILLISECONDS.toNanos(ttlMillis)); // it may still run
                }
                log.debug("attempt on '{}' failed: {}", resource, answer);
                return AcquireLoop.Attempt.refused(answer, true);
            }
            log.debug("could not give back the connection of a grant: {}", SqlErrors.shortMessage(e));
        }
        return granted != 0 ? granted(resource, granted, ttlMillis, sent) : refusal;
    }

    private AcquireLoop.Attempt<FencedLease> granted(String resource, long token, long ttlMillis, long sent) {
        long ttlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMillis);
        long now = ticker.nanos();
        if (LeaseTimes.endAfter(sent, ttlNanos) - now <= 0) {
            undo(resource, token, ttlNanos);
            return AcquireLoop.Attempt.refused(
                    new ServerAnswer(
                            connections.database(),
                            ServerAnswer.Kind.ERROR,
                            "granted too late: the attempt took " + (now - sent) / 1_000_000 + " ms of the " + ttlMillis
                                    + " ms TTL"),
                    true);
        }
        JdbcLease lease =
                new JdbcLease(rows, ticker, events, timers, resource, token, ttlNanos, sent, requestTimeoutNanos);
        rows.leases.add(lease);
        if (closed.get()) {
            lease.release();
            throw new IllegalStateException("this JdbcLock was closed during the attempt");
        }
        lease.start(ttlNanos);
        return AcquireLoop.Attempt.granted(lease);
    }

    private AcquireLoop.Attempt<FencedLease> busy(LockTable.Row row) {
        String who = row.holder().map(Holders::shown).orElse("?");
        return AcquireLoop.Attempt.busy(
                who,
                new ServerAnswer(
                        connections.database(),
                        ServerAnswer.Kind.HELD_BY_OTHER,
                        Holders.named(who, holder) + ", fencing token " + row.token() + ", " + row.millisLeft()
                                + " ms left by the database's clock"));
    }

    /** A grant of {@code ttlNanos} to undo, and how its tries went. */
    private static final class Undo {
        final String resource;
        final long token;
        final long ttlNanos;
        long waitMillis = UNDO_RETRY_MILLIS;
        /** When the database first answered with the row held by an older token, if it did. */
        OptionalLong heldSince = OptionalLong.empty();

        Undo(String resource, long token, long ttlNanos) {
            this.resource = resource;
            this.token = token;
            this.ttlNanos = ttlNanos;
        }
    }

    /**
     * Undoes, in the background, a grant whose answer was lost or came too late: its statement may
     * still run in the database after the client gave up on it (a database that froze, a row lock
     * it waited for), and would then hold the row for a whole TTL. Each try {@linkplain
     * LockTable#settle settles} the grant: it frees the row, or makes the statement unable to take
     * it. The tries go on with a wait from 250 ms doubling up to the request timeout, also while
     * the database does not answer, so that a grant landing later is freed within about a request
     * timeout of the database answering again; while the row is held by an older token, for at
     * most the grant's TTL. {@link JdbcLock#close()} makes a last try.
     */
    private void undo(String resource, long token, long ttlNanos) {
        Undo undo = new Undo(resource, token, ttlNanos);
        undoing.add(undo);
        try {
            timers.execute(() -> tryUndo(undo));
        } catch (RejectedExecutionException closing) {
            lastTry(undo);
        }
    }

    /** What one try at undoing a grant came to. */
    private enum Undone {
        SETTLED,
        /** The row is held by an older token: the grant's statement could take it once it is free. */
        HELD,
        NO_ANSWER
    }

    private void tryUndo(Undo undo) {
        if (closed.get()) {
            return; // close() makes the last try
        }
        Undone outcome = settle(undo);
        if (outcome == Undone.SETTLED) {
            undoing.remove(undo);
            return;
        }
        long now = ticker.nanos();
        if (outcome == Undone.HELD && undo.heldSince.isEmpty()) {
            undo.heldSince = OptionalLong.of(now);
        } else if (outcome == Undone.HELD && now - undo.heldSince.getAsLong() > undo.ttlNanos) {
            undoing.remove(undo);
            log.warn(
                    "gave up undoing the grant of '{}' (token {}) whose answer was lost: the row stayed held by an"
                            + " older token for its TTL",
                    undo.resource,
                    undo.token);
            return;
        }
        long wait = undo.waitMillis;
        undo.waitMillis = Math.max(wait, Math.min(2 * wait, TimeUnit.NANOSECONDS.toMillis(requestTimeoutNanos)));
        try {
            timers.schedule(() -> timers.execute(() -> tryUndo(undo)), TimeUnit.MILLISECONDS.toNanos(wait));
        } catch (RejectedExecutionException closing) {
            // close() makes the last try
        }
    }

    /** The last try at each grant being undone, as the lock closes; one it cannot settle is logged. */
    void lastTries() {
        for (Undo undo : List.copyOf(undoing)) {
            lastTry(undo);
        }
    }

    /** The try {@link JdbcLock#close()} makes; a grant it cannot settle is logged. */
    private void lastTry(Undo undo) {
        if (settle(undo) == Undone.SETTLED) {
            undoing.remove(undo);
            return;
        }
        log.warn(
                "closed before the grant of '{}' (token {}) whose answer was lost was undone: if it landed, the row"
                        + " stays held until its TTL ({} ms) ends",
                undo.resource,
                undo.token,
                TimeUnit.NANOSECONDS.toMillis(undo.ttlNanos));
    }

    /** One try at settling a grant, within the request timeout. */
    private Undone settle(Undo undo) {
        try (LockTable.Session session = connections.open(ticker.nanos() + requestTimeoutNanos, true)) {
            return connections.statements().settle(session, undo.resource, undo.token) ? Undone.SETTLED : Undone.HELD;
        } catch (SQLException e) {
            log.debug(
                    "could not undo the grant of '{}' (token {}) on {} yet: {}",
                    undo.resource,
                    undo.token,
                    connections.database(),
                    SqlErrors.shortMessage(e));
            return Undone.NO_ANSWER;
        }
    }
}
