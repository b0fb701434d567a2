package io.quorumlock.torture;

import io.quorumlock.testkit.Processes;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/** Plays the schedule on one strategy's servers and clients. */
record Nemesis(Torture.Run run, long startNanos) {

    /** How long a pause or an expiry waits for its client to reach a write; it is dropped after that. */
    private static final Duration STRIKE_WITHIN = Duration.ofMillis(1_500);

    void play(List<Fault> schedule, AtomicInteger done) throws Exception {
        for (Fault fault : schedule) {
            sleepUntil(fault.atMillis());
            boolean injected = switch (fault.kind()) {
                case PAUSE -> pause(fault);
                case EXPIRE -> expire(fault);
                default -> onServers(fault);
            };
            if (injected) {
                done.incrementAndGet();
            }
        }
    }

    private boolean onServers(Fault fault) throws InterruptedException {
        // The start is marked when the injection began, not when it returned: a grant made while
        // a quorum's clocks were being set forward (or a partition set up) then shows after it.
        // The end is marked when the heal begins: until then the fault held all along. A nemesis
        // that fell behind (a busy machine) starts a fault late and still heals it on schedule.
        long nanos = System.nanoTime();
        long wall = System.currentTimeMillis();
        Optional<String> label = run.target.start(fault);
        if (label.isEmpty()) {
            return false;
        }
        run.nemesis.append(Event.fault(label.get(), true, nanos, wall));
        sleepUntil(fault.endMillis());
        long healNanos = System.nanoTime();
        long healWall = System.currentTimeMillis();
        run.target.heal(fault);
        run.nemesis.append(Event.fault(label.get(), false, healNanos, healWall));
        return true;
    }

    /**
     * Freezes the first client to reach a write: every client is asked, one claims it. A
     * client process is thawed by us once the pause is over; a thread sleeps by itself.
     */
    private boolean pause(Fault fault) throws InterruptedException {
        long deadline = System.currentTimeMillis() + STRIKE_WITHIN.toMillis();
        Path claim = run.dir.resolve("pause-" + fault.atMillis() + ".claim");
        run.clients.forEach(c -> c.send("pause " + fault.durationMillis() + " " + deadline + " " + claim));
        if (run.clients.get(0).pid().isEmpty()) {
            return true;
        }
        while (true) {
            for (ClientHandle client : run.clients) {
                long pid = client.pid().getAsLong();
                if (Processes.isStopped(pid)) {
                    Thread.sleep(fault.durationMillis());
                    Processes.signal(pid, "CONT", false, Duration.ofSeconds(5));
                    return true;
                }
            }
            if (System.currentTimeMillis() > deadline + 500) {
                return false; // no client reached a write in time
            }
            Thread.sleep(5);
        }
    }

    /**
     * Has the session of the first client of a lock with tokens (fenced or not) to reach a
     * write expired, while it holds the lock.
     */
    private boolean expire(Fault fault) {
        if (!run.strategy.tokens()) {
            return false;
        }
        long deadline = System.currentTimeMillis() + STRIKE_WITHIN.toMillis();
        Path claim = run.dir.resolve("expire-" + fault.atMillis() + ".claim");
        run.clients.forEach(c -> c.send("expire " + deadline + " " + claim));
        return true;
    }

    private void sleepUntil(long atMillis) throws InterruptedException {
        long wait = atMillis - (System.nanoTime() - startNanos) / 1_000_000;
        if (wait > 0) {
            Thread.sleep(wait);
        }
    }
}
