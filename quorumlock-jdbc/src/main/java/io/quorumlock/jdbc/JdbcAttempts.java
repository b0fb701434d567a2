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
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The attempts of a {@link JdbcLock}: one attempt (the row taken if it is free, with a token the
 * statement draws), the grant, the refusal with what the row holds, and the undo in the background
 * of the grants whose answer was lost, found by their attempt identity.
 */
final class JdbcAttempts {

    private static final Logger log = LoggerFactory.getLogger(JdbcLock.class);

    /** How many grants one attempt sends while the row is free but beyond the bound, or changed hands under it. */
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
    /**
     * The newest token this lock has seen, the bound its grants are sent with: a grant takes only
     * a row whose token is at most the bound, so that the undo of a grant whose answer was lost
     * can put the row beyond the reach of its statement by drawing a newer token into it.
     */
    private final AtomicLong seen = new AtomicLong();

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

    /**
     * One attempt: the grant, in one statement (H2: two), tried again at once, up to {@value
     * #ROUNDS_PER_ATTEMPT} times, while the row is free but its token is beyond the bound (one this
     * lock had not seen) or newer than the statement drew.
     *
     * @param wait the pauses of the acquire making the attempt, told of a holder; null for a try
     * @param marks whether a refusal marks the row as wanted, for an acquire that will wait
     */
    AcquireLoop.Attempt<FencedLease> attempt(
            String resource, long ttlMillis, long deadline, ReleaseWait wait, boolean marks) {
        long sent = ticker.nanos();
        Grant pending = null; // a grant sent without an answer yet
        Grant granted = null;
        AcquireLoop.Attempt<FencedLease> refusal = null;
        LockTable statements = null;
        // a grant that may come back to back with a release takes the connection the last one kept
        try (LockTable.Session session = connections.open(deadline, false, !marks)) {
            statements = connections.statements();
            Optional<LockTable.Row> row = Optional.empty();
            long drawn = 0;
            for (int round = 1; round <= ROUNDS_PER_ATTEMPT && granted == null && refusal == null; round++) {
                pending = new Grant(newAttempt(), seen.get());
                Grants.Outcome outcome = statements.grant(
                        session,
                        resource,
                        holder,
                        ttlMillis,
                        pending.attempt,
                        pending.bound,
                        marks && wait != null ? wait.wantedMillis() : 0);
                Grant sentGrant = pending;
                pending = null;
                row = outcome.row();
                drawn = outcome.drawn();
                seen.accumulateAndGet(
                        Math.max(drawn, row.map(LockTable.Row::token).orElse(0L)), Math::max);
                if (outcome.granted()) {
                    granted = new Grant(
                            sentGrant.attempt,
                            sentGrant.bound,
                            row.orElseThrow().token());
                } else if (row.isPresent() && row.get().held()) {
                    refusal = busy(row.get());
                    if (wait != null) {
                        wait.held(row.get().millisLeft());
                    }
                }
                // else free, but with a token this lock had not seen, or newer than drawn: again
            }
            if (granted == null && refusal == null) {
                long next = drawn > 0 ? drawn : statements.nextToken(session);
                String why = row.isPresent() && row.get().token() >= next
                        ? "the row of '" + resource + "' holds token "
                                + row.get().token()
                                + ", newer than the sequence gave: if the sequence was reset, restart it above that"
                        : "the lock changed hands during the attempt";
                refusal = AcquireLoop.Attempt.refused(
                        new ServerAnswer(connections.database(), ServerAnswer.Kind.ERROR, why), true);
            }
            session.keep();
        } catch (SQLException e) {
            if (granted == null) {
                SqlErrors.Failure failure = connections.classify(e, statements);
                ServerAnswer answer = new ServerAnswer(connections.database(), failure.kind(), failure.detail());
                if (!failure.retryable()) {
                    throw new LockConfigurationException(resource, 1, List.of(answer)); // refused: it did not run
                }
                if (pending != null) {
                    undo(resource, pending, TimeUnit.MILLISECONDS.toNanos(ttlMillis)); // it may still run
                }
                log.debug("attempt on '{}' failed: {}", resource, answer);
                return AcquireLoop.Attempt.refused(answer, true);
            }
            log.debug("could not give back the connection of a grant: {}", SqlErrors.shortMessage(e));
        }
        return granted != null ? granted(resource, granted, ttlMillis, sent) : refusal;
    }

    /** A grant's identity, chosen before it is sent, and the bound it was sent with; its token once granted. */
    private record Grant(long attempt, long bound, long token) {
        Grant(long attempt, long bound) {
            this(attempt, bound, 0);
        }
    }

    /** A new attempt identity: random, never 0 (a row without one reads as 0). */
    private static long newAttempt() {
        long attempt;
        do {
            attempt = ThreadLocalRandom.current().nextLong();
        } while (attempt == 0);
        return attempt;
    }

    private AcquireLoop.Attempt<FencedLease> granted(String resource, Grant grant, long ttlMillis, long sent) {
        long ttlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMillis);
        long now = ticker.nanos();
        long token = grant.token;
        if (LeaseTimes.endAfter(sent, ttlNanos) - now <= 0) {
            undo(resource, grant, ttlNanos);
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
        final Grant grant;
        final long ttlNanos;
        long waitMillis = UNDO_RETRY_MILLIS;
        /** When the database first answered with the row held by an older token, if it did. */
        OptionalLong heldSince = OptionalLong.empty();

        Undo(String resource, Grant grant, long ttlNanos) {
            this.resource = resource;
            this.grant = grant;
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
    private void undo(String resource, Grant grant, long ttlNanos) {
        Undo undo = new Undo(resource, grant, ttlNanos);
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
                    "gave up undoing the grant of '{}' (attempt {}) whose answer was lost: the row stayed held by"
                            + " another holder for its TTL",
                    undo.resource,
                    undo.grant.attempt);
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
                "closed before the grant of '{}' (attempt {}) whose answer was lost was undone: if it landed, the row"
                        + " stays held until its TTL ({} ms) ends",
                undo.resource,
                undo.grant.attempt,
                TimeUnit.NANOSECONDS.toMillis(undo.ttlNanos));
    }

    /** One try at settling a grant, within the request timeout. */
    private Undone settle(Undo undo) {
        try (LockTable.Session session = connections.open(ticker.nanos() + requestTimeoutNanos, true)) {
            return connections.statements().settle(session, undo.resource, holder, undo.grant.attempt, undo.grant.bound)
                    ? Undone.SETTLED
                    : Undone.HELD;
        } catch (SQLException e) {
            log.debug(
                    "could not undo the grant of '{}' (attempt {}) on {} yet: {}",
                    undo.resource,
                    undo.grant.attempt,
                    connections.database(),
                    SqlErrors.shortMessage(e));
            return Undone.NO_ANSWER;
        }
    }
}
