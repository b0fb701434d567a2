package io.quorumlock.spring.integration;

import io.quorumlock.DistributedLock;
import io.quorumlock.DistributedReentrantLock;
import io.quorumlock.Lease;
import java.time.Duration;

/**
 * A registry's lock that is also Spring Integration 7's {@code DistributedLock}, whose {@code
 * lock(Duration ttl)} and {@code tryLock(Duration waitTime, Duration ttl)} it has from {@link
 * DistributedReentrantLock}. Loaded only where that interface is on the classpath ({@link
 * RegistryLocks}): Spring Integration 6.5 has none.
 */
final class SpringDistributedLock<L extends Lease> extends DistributedReentrantLock<L>
        implements org.springframework.integration.support.locks.DistributedLock {

    private SpringDistributedLock(DistributedLock<L> lock, String resource, Duration ttl) {
        super(lock, resource, ttl);
    }

    /** The lock on {@code resource}, typed as the registry hands it out. */
    static <L extends Lease> DistributedReentrantLock<L> of(DistributedLock<L> lock, String resource, Duration ttl) {
        return new SpringDistributedLock<>(lock, resource, ttl);
    }
}
