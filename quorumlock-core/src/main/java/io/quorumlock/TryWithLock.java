package io.quorumlock;

import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link DistributedLock#tryWithLock}: a lock held by another owner is a skipped run, not an error. */
final class TryWithLock {

    private static final Logger log = LoggerFactory.getLogger(DistributedLock.class);

    private TryWithLock() {}

    static <X extends Exception> boolean run(
            DistributedLock<?> lock, String resource, Duration ttl, CriticalRunnable<X> work) throws X {
        Objects.requireNonNull(work, "work");
        boolean[] started = {false};
        try {
            lock.withLock(resource, ttl, Duration.ZERO, () -> {
                started[0] = true;
                work.run();
            });
            return true;
        } catch (LockUnavailableException e) {
            if (started[0] || !e.busy()) { // the work's own, or an outage
                throw e;
            }
            log.debug("'{}' is held by another owner: not run ({})", resource, e.getMessage());
            return false;
        }
    }
}
