package io.quorumlock.zookeeper;

import java.time.Duration;

/** Locks for the tests, with a session timeout of the test's choosing. */
final class TestLocks {

    private TestLocks() {}

    /** A lock on {@code connectString} with the given session timeout. */
    static ZooKeeperLock lock(String connectString, Duration sessionTimeout) {
        return ZooKeeperLock.builder()
                .connectString(connectString)
                .sessionTimeout(sessionTimeout)
                .connectTimeout(sessionTimeout.dividedBy(2))
                .build();
    }
}
