package io.quorumlock.cli.run;

import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.cli.Formats;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The command running under a lease: applies {@code --on-lost} when the lease is lost before the
 * command exits, and decides run's exit code.
 */
final class Supervision {

    private final Child child;
    private final Lease lease;
    private final OnLost onLost;
    private final Duration grace;
    private final Consumer<String> report;

    private boolean exited; // guarded by this
    private LeaseLostException loss; // guarded by this
    private long killAt; // guarded by this: System.nanoTime() by which the command's processes are gone

    /**
     * @param report prints one line on stderr
     */
    Supervision(Child child, Lease lease, OnLost onLost, Duration grace, Consumer<String> report) {
        this.child = child;
        this.lease = lease;
        this.onLost = onLost;
        this.grace = grace;
        this.report = report;
    }

    /**
     * Waits for the command to exit, watching {@code lost} meanwhile.
     *
     * @return the command's exit code, or {@link RunCommand#LEASE_LOST} if the lease was lost while
     *     it ran and {@code --on-lost} is {@code terminate}
     */
    int awaitExit(CompletableFuture<LeaseLostException> lost) throws InterruptedException {
        lost.thenAccept(this::lost);
        int code = child.awaitExit();
        LeaseLostException seen;
        long deadline;
        synchronized (this) {
            exited = true;
            seen = loss;
            deadline = killAt;
        }
        if (seen == null && !lease.isValid()) {
            // No loss was reported, yet the lease cannot be confirmed now: this JVM may have been
            // suspended past its validity, or (ZooKeeper) the connection is down at this moment.
            seen = new LeaseLostException(lease.resource(), "it was not valid when the command ended", null);
            report.accept(seen.getMessage() + "; the command exited with " + code);
        }
        if (seen == null || onLost == OnLost.CONTINUE) {
            return code;
        }
        child.awaitTerminatedOrKill(deadline); // what the command started may still be stopping
        return RunCommand.LEASE_LOST;
    }

    private void lost(LeaseLostException lost) {
        synchronized (this) {
            if (exited) {
                return;
            }
            loss = lost;
            killAt = System.nanoTime() + grace.toNanos();
        }
        if (onLost == OnLost.CONTINUE) {
            report.accept(lost.getMessage() + "; the command goes on (--on-lost=continue),"
                    + " though another holder may now run at the same time");
            return;
        }
        report.accept(lost.getMessage() + "; stopping the command: SIGTERM now, SIGKILL after --grace "
                + Formats.duration(grace));
        child.terminate();
        CompletableFuture.delayedExecutor(grace.toNanos(), TimeUnit.NANOSECONDS).execute(child::kill);
    }
}
