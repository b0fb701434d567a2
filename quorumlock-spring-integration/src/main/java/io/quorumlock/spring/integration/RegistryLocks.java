package io.quorumlock.spring.integration;

import io.quorumlock.DistributedLock;
import io.quorumlock.DistributedReentrantLock;
import io.quorumlock.Lease;
import java.time.Duration;

/**
 * Makes the registry's locks: Spring Integration's {@code DistributedLock} too where the Spring
 * Integration on the classpath has it (7.0 and later), plain {@link DistributedReentrantLock}s
 * where it has not (6.5), with the same behaviour.
 */
final class RegistryLocks {

    /** The interface Spring Integration 7.0 added, by name: this class must load without it. */
    static final String SPRING_DISTRIBUTED_LOCK = "org.springframework.integration.support.locks.DistributedLock";

    private static final boolean SPRING_HAS_IT = present(SPRING_DISTRIBUTED_LOCK);

    private RegistryLocks() {}

    private static boolean present(String name) {
        try {
            Class.forName(name, false, RegistryLocks.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** The lock on {@code resource} of {@code lock}, its leases of {@code ttl}. */
    static <L extends Lease> DistributedReentrantLock<L> of(DistributedLock<L> lock, String resource, Duration ttl) {
        return SPRING_HAS_IT ? SpringDistributedLock.of(lock, resource, ttl) : lock.asLock(resource, ttl);
    }
}
