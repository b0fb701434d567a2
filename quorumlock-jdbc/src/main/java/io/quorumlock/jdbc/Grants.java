package io.quorumlock.jdbc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The grant of a {@link JdbcLock}'s row: on PostgreSQL and MariaDB one statement, which draws the
 * fencing token from the sequence itself, takes the row if it is free or expired by the
 * database's clock and its token older, or creates it, and answers with the row as it left it.
 *
 * <p>The grant is recorded with an attempt identity the client chose before sending, so that a
 * grant whose answer was lost can be found and freed ({@link LockTable#settle}). It takes the row
 * only if the row's token is at most a bound the client sent, the newest token it had seen: the
 * undo draws a newer token into a free row, and from then on no statement sent before can take it,
 * however late it runs. A row with a token beyond the bound is refused without a holder, and the
 * client tries again with the bound raised to it.
 *
 * <p>A waiting grant on PostgreSQL, refused, marks the row as wanted ({@code wanted_until}) in the
 * same statement, so that the release notifies only rows someone waits for. On H2 the grant takes
 * the statements it took before: the token first, then the row.
 */
final class Grants {

    /**
     * What one grant came to.
     *
     * @param granted whether the row was taken
     * @param row the row as the grant left it, empty if there is none (H2's race for a new row)
     * @param drawn the token the statement drew, 0 where the database does not say (MariaDB)
     */
    record Outcome(boolean granted, Optional<LockTable.Row> row, long drawn) {}

    /** A statement with named parameters ({@code :name}), as JDBC's positional ones. */
    record Named(String sql, List<String> names) {
        private static final Pattern PARAMETER = Pattern.compile(":([a-z]+)");

        static Named of(String text) {
            List<String> names = new ArrayList<>();
            Matcher matcher = PARAMETER.matcher(text);
            StringBuilder sql = new StringBuilder();
            while (matcher.find()) {
                names.add(matcher.group(1));
                matcher.appendReplacement(sql, "?");
            }
            matcher.appendTail(sql);
            return new Named(sql.toString(), List.copyOf(names));
        }

        PreparedStatement prepare(LockTable.Session session, Map<String, Object> values) throws SQLException {
            PreparedStatement statement = session.prepare(sql);
            try {
                for (int i = 0; i < names.size(); i++) {
                    statement.setObject(i + 1, values.get(names.get(i)));
                }
                return statement;
            } catch (SQLException | RuntimeException e) {
                statement.close();
                throw e;
            }
        }
    }

    private final Dialect dialect;
    /** The grant that changes nothing when refused. */
    private final Named plain;
    /** The grant of a waiting acquire: refused, it marks the row as wanted (PostgreSQL); else {@link #plain}. */
    private final Named waiting;
    /** H2's: the row taken with a token drawn before, or created. */
    private final Named take;

    private final Named insert;

    Grants(String table, Dialect dialect) {
        this.dialect = dialect;
        String left = dialect.millisLeft();
        String expiry = dialect.nowPlusMillis().replace("?", ":ttl");
        switch (dialect) {
            case POSTGRESQL -> {
                String free = "l.token < EXCLUDED.token AND l.token <= :bound"
                        + " AND (l.holder IS NULL OR l.expires_at <= statement_timestamp())";
                String head = "WITH drawn AS (SELECT " + dialect.nextValue(table) + " AS token),"
                        + " granted AS (INSERT INTO " + table + " AS l (resource, holder, token, expires_at, attempt)"
                        + " SELECT :resource, :holder, drawn.token, " + expiry + ", :attempt FROM drawn"
                        + " ON CONFLICT (resource) DO UPDATE SET ";
                String tail = " RETURNING l.attempt = :attempt AS won, l.holder, l.token, " + left + " AS millis)"
                        + " SELECT won, holder, token, millis, (SELECT token FROM drawn) FROM granted"
                        + " UNION ALL SELECT FALSE, holder, token, " + left + ", (SELECT token FROM drawn) FROM "
                        + table + " WHERE resource = :resource AND NOT EXISTS (SELECT 1 FROM granted)";
                this.plain = Named.of(head
                        + "holder = EXCLUDED.holder, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at,"
                        + " attempt = EXCLUDED.attempt WHERE " + free + tail);
                String when = "CASE WHEN " + free + " THEN ";
                this.waiting = Named.of(head
                        + "holder = " + when + "EXCLUDED.holder ELSE l.holder END,"
                        + " token = " + when + "EXCLUDED.token ELSE l.token END,"
                        + " expires_at = " + when + "EXCLUDED.expires_at ELSE l.expires_at END,"
                        + " attempt = " + when + "EXCLUDED.attempt ELSE l.attempt END,"
                        + " wanted_until = " + when + "l.wanted_until ELSE GREATEST(l.wanted_until,"
                        + " statement_timestamp() + INTERVAL '1 millisecond' * CAST(:wanted AS DOUBLE PRECISION)) END"
                        + tail);
                this.take = null;
                this.insert = null;
            }
            case MARIADB -> {
                // The condition is read once, into a variable: MariaDB's assignments may see the
                // columns assigned before them (or not, with SIMULTANEOUS_ASSIGNMENT).
                String now = dialect.now();
                this.plain = Named.of("INSERT INTO " + table + " (resource, holder, token, expires_at, attempt)"
                        + " VALUES (:resource, :holder, " + dialect.nextValue(table) + ", " + expiry + ", :attempt)"
                        + " ON DUPLICATE KEY UPDATE attempt = IF(@quorumlock_granted := (token < VALUES(token)"
                        + " AND token <= :bound AND (holder IS NULL OR expires_at <= " + now + ")),"
                        + " VALUES(attempt), attempt),"
                        + " holder = IF(@quorumlock_granted, VALUES(holder), holder),"
                        + " expires_at = IF(@quorumlock_granted, VALUES(expires_at), expires_at),"
                        + " token = IF(@quorumlock_granted, VALUES(token), token)"
                        + " RETURNING attempt = :attempt, holder, token, " + left + ", 0");
                this.waiting = plain;
                this.take = null;
                this.insert = null;
            }
            default -> {
                String now = dialect.now();
                this.plain = null;
                this.waiting = null;
                this.take = Named.of("UPDATE " + table + " SET holder = :holder, token = :token, expires_at = "
                        + expiry + ", attempt = :attempt WHERE resource = :resource AND token < :token"
                        + " AND token <= :bound AND (holder IS NULL OR expires_at <= " + now + ")");
                this.insert = Named.of("INSERT INTO " + table + " (resource, holder, token, expires_at, attempt)"
                        + " VALUES (:resource, :holder, :token, " + expiry + ", :attempt)");
            }
        }
    }

    /**
     * One grant of {@code resource} to {@code holder} for {@code ttlMillis}, recorded as {@code
     * attempt}, if the row's token is at most {@code bound}; {@code wantedMillis} above 0 marks a
     * refused row as wanted for that long (PostgreSQL).
     */
    Outcome grant(
            LockTable.Session session,
            LockTable table,
            String resource,
            String holder,
            long ttlMillis,
            long attempt,
            long bound,
            long wantedMillis)
            throws SQLException {
        Map<String, Object> values = Map.of(
                "resource", resource,
                "holder", holder,
                "ttl", ttlMillis,
                "attempt", attempt,
                "bound", bound,
                "wanted", Math.max(1, wantedMillis));
        if (take != null) {
            return h2Grant(session, table, resource, values);
        }
        try (PreparedStatement statement = (wantedMillis > 0 ? waiting : plain).prepare(session, values);
                ResultSet rows = statement.executeQuery()) {
            if (!rows.next()) {
                return new Outcome(false, Optional.empty(), 0);
            }
            boolean won = rows.getBoolean(1);
            LockTable.Row row = new LockTable.Row(
                    Optional.ofNullable(rows.getString(2)), rows.getLong(3), rows.getLong(4), won ? attempt : 0);
            return new Outcome(won, Optional.of(row), rows.getLong(5));
        }
    }

    /** H2: the token first, then the row taken, or created if there is none. */
    private Outcome h2Grant(LockTable.Session session, LockTable table, String resource, Map<String, Object> given)
            throws SQLException {
        long token = table.nextToken(session);
        Map<String, Object> values = new java.util.HashMap<>(given);
        values.put("token", token);
        LockTable.Row mine = new LockTable.Row(
                Optional.of((String) given.get("holder")), token, (Long) given.get("ttl"), (Long) given.get("attempt"));
        try (PreparedStatement statement = take.prepare(session, values)) {
            if (statement.executeUpdate() == 1) {
                return new Outcome(true, Optional.of(mine), token);
            }
        }
        Optional<LockTable.Row> row = table.read(session, resource);
        if (row.isPresent()) {
            return new Outcome(false, row, token);
        }
        try (PreparedStatement statement = insert.prepare(session, values)) {
            statement.executeUpdate();
            return new Outcome(true, Optional.of(mine), token);
        } catch (SQLException e) {
            if (SqlErrors.isUniqueViolation(e)) {
                return new Outcome(false, Optional.empty(), token); // another client created the row first
            }
            throw e;
        }
    }

    /** The dialect these statements are for. */
    Dialect dialect() {
        return dialect;
    }
}
