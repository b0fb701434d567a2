package io.quorumlock.examples;

import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.LeaderElection;
import io.quorumlock.LeaseLostException;
import io.quorumlock.jdbc.JdbcFence;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * Two instances elect a leader; the leader reads the stock and pauses (a GC pause, a frozen VM)
 * for longer than its TTL. Its term ends, the other instance is elected with a larger fencing
 * token and sells one unit; the old leader wakes, still in the middle of its work, and writes what
 * it computed before the pause with its old term's token: {@link JdbcFence} refuses it, and the
 * sale stays. Every step goes on a timeline, in milliseconds from the start.
 */
public final class LeaderPauseTimeline {

    /**
     * Freezes instance A as far as its lock's server can tell: its renewals stop, for good (A's
     * work goes on without its lock once it wakes).
     */
    public interface Pause {
        void freeze() throws Exception;
    }

    /**
     * What the run showed.
     *
     * @param timeline one line per step, in order
     * @param tokenA the paused leader's token
     * @param tokenB the next leader's token
     * @param handOver from the pause to the next leader's election
     * @param staleWriteRefused whether the fence refused the paused leader's late write
     * @param stock the stock at the end (one unit sold from 1,000)
     */
    public record Result(
            List<String> timeline, long tokenA, long tokenB, Duration handOver, boolean staleWriteRefused, int stock) {}

    private static final String SKU = "SKU-42";

    private final DataSource database;
    private final Duration ttl;
    private final JdbcFence fence = JdbcFence.builder().build();
    /** Reads and writes the stock, as the pause timeline of two locks does. */
    private final PauseTimeline inventory;

    private final List<String> timeline = new ArrayList<>();
    private long start;

    /** Plays on the {@code inventory} and fence tables of {@code database}, which it creates if needed. */
    public LeaderPauseTimeline(DataSource database, Duration ttl) {
        this.database = database;
        this.ttl = ttl;
        this.inventory = new PauseTimeline(database, ttl);
    }

    /**
     * Elects A on {@code a}, then starts B on {@code b}, pauses A with {@code pause} after its read,
     * and returns once A's late write was judged.
     */
    public Result play(DistributedLock<FencedLease> a, DistributedLock<FencedLease> b, Pause pause) throws Exception {
        try (Connection c = database.getConnection()) {
            fence.createTable(c);
        }
        inventory.resetStock(1_000);
        start = System.nanoTime();
        CountDownLatch bWrote = new CountDownLatch(1);
        CountDownLatch aJudged = new CountDownLatch(1);
        long[] tokens = new long[2];
        long[] pausedAt = new long[1];
        long[] electedB = new long[1];
        boolean[] refused = new boolean[1];
        Duration bound = ttl.multipliedBy(10).plusSeconds(10);
        try (LeaderElection<FencedLease> electionA = LeaderElection.builder(a, "inventory-sync")
                .ttl(ttl)
                .listener(told("A"))
                .work(term -> {
                    if (aJudged.getCount() == 0) {
                        term.awaitEnd(); // the example's one term of A is over
                        return;
                    }
                    tokens[0] = term.fencingToken().orElseThrow();
                    int seen = inventory.stock();
                    note("A reads stock " + seen);
                    note("A pauses (longer than its TTL of " + ttl.toMillis() + " ms)");
                    pausedAt[0] = System.nanoTime();
                    pause.freeze();
                    awaitUninterruptibly(bWrote, bound); // a paused process sees no interrupt
                    note("A wakes, still in its work, and writes stock " + (seen - 1) + " with token " + tokens[0]);
                    refused[0] = !inventory.write(term.lease(), seen - 1, fence);
                    note(refused[0] ? "the fence refuses A's write: a newer token was seen" : "A's write went through");
                    aJudged.countDown();
                })
                .start()) {
            if (electionA.awaitLeadership(bound).isEmpty()) {
                throw new IllegalStateException("A was not elected within " + bound);
            }
            try (LeaderElection<FencedLease> electionB = LeaderElection.builder(b, "inventory-sync")
                    .ttl(ttl)
                    .listener(told("B"))
                    .work(term -> {
                        electedB[0] = System.nanoTime();
                        tokens[1] = term.fencingToken().orElseThrow();
                        int seen = inventory.stock();
                        note("B reads stock " + seen);
                        boolean written = inventory.write(term.lease(), seen - 1, fence);
                        note("B writes stock " + (seen - 1) + " with token " + tokens[1]
                                + (written ? ": accepted" : ": refused"));
                        bWrote.countDown();
                        term.awaitEnd();
                    })
                    .start()) {
                if (!aJudged.await(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("A's late write was not judged within " + bound
                            + "; the timeline so far:\n" + String.join("\n", snapshot()));
                }
            }
        }
        return new Result(
                snapshot(),
                tokens[0],
                tokens[1],
                Duration.ofNanos(electedB[0] - pausedAt[0]),
                refused[0],
                inventory.stock());
    }

    private LeaderElection.Listener<FencedLease> told(String instance) {
        return new LeaderElection.Listener<>() {
            @Override
            public void elected(LeaderElection.Term<? extends FencedLease> term) {
                note(instance + " elected, token " + term.fencingToken().orElseThrow());
            }

            @Override
            public void revoked(LeaderElection.Term<? extends FencedLease> term, Optional<LeaseLostException> cause) {
                note(instance + (cause.isPresent() ? " revoked: its lease is lost" : " steps down"));
            }
        };
    }

    private synchronized List<String> snapshot() {
        return List.copyOf(timeline);
    }

    private synchronized void note(String step) {
        timeline.add(String.format("%6d ms  %s", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), step));
    }

    private static void awaitUninterruptibly(CountDownLatch latch, Duration bound) {
        long end = System.nanoTime() + bound.toNanos();
        boolean interrupted = false;
        try {
            while (latch.getCount() > 0 && System.nanoTime() < end) {
                try {
                    latch.await(end - System.nanoTime(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
