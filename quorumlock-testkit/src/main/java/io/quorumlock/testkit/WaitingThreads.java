package io.quorumlock.testkit;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether waiting asynchronous acquires hold a thread each: counts the threads of this JVM before
 * they are asked for and at most while they wait, logs both, and fails if more than {@value
 * #MOST_ADDED} were added (room for the shared pools and other work of the JVM, far below one per
 * waiter); then ends the holds and takes every lease.
 */
public final class WaitingThreads {

    /** The most threads the waiters may add. */
    public static final int MOST_ADDED = 20;

    private static final Logger log = LoggerFactory.getLogger(WaitingThreads.class);

    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(20));

    private WaitingThreads() {}

    /**
     * Asks for the acquires with {@code ask} (after any warm-up: the threads are counted from the
     * call), waits until {@code waiting} says they all wait, checks the threads and that none has
     * ended, then ends the holds with {@code releaseHolds} and takes every lease in turn, releasing
     * it with {@code release}.
     *
     * @param what what the acquires wait on, for the log and the failures
     * @return the leases, in the order asked, released
     * @throws AssertionError if more than {@value #MOST_ADDED} threads were added, or an acquire
     *     ended before the holds did
     */
    public static <L> List<L> grantedWithoutThreadEach(
            String what,
            Supplier<? extends List<? extends CompletableFuture<L>>> ask,
            BooleanSupplier waiting,
            Runnable releaseHolds,
            Consumer<? super L> release)
            throws Exception {
        int before = threads();
        List<CompletableFuture<L>> futures = new ArrayList<>(ask.get());
        int[] most = {before};
        TestTime.await(
                WAIT,
                () -> {
                    most[0] = Math.max(most[0], threads());
                    return waiting.getAsBoolean();
                },
                "every acquire on " + what + " waiting");
        most[0] = Math.max(most[0], threads());
        log.info("{} threads before asynchronous acquires on {}, {} at most while they wait", before, what, most[0]);
        long ended = futures.stream().filter(CompletableFuture::isDone).count();
        if (ended > 0) {
            throw new AssertionError(ended + " acquires on " + what + " ended before the holds did");
        }
        if (most[0] - before > MOST_ADDED) {
            throw new AssertionError("asynchronous acquires on " + what + " added " + (most[0] - before)
                    + " threads while they waited (" + before + " before, " + most[0] + " at most), more than "
                    + MOST_ADDED);
        }
        releaseHolds.run();
        List<L> granted = new ArrayList<>();
        for (CompletableFuture<L> future : futures) {
            L lease = future.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            release.accept(lease);
            granted.add(lease);
        }
        return granted;
    }

    private static int threads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }
}
