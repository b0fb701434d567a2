package io.quorumlock.shedlock;

import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import java.util.function.Supplier;

/** Two instances of a service over the same servers, each with its own lock and provider. */
final class TwoClients implements AutoCloseable {

    final QuorumlockLockProvider a;
    final QuorumlockLockProvider b;
    private final DistributedLock<? extends Lease> lockA;
    private final DistributedLock<? extends Lease> lockB;

    TwoClients(Supplier<? extends DistributedLock<? extends Lease>> locks) {
        lockA = locks.get();
        lockB = locks.get();
        a = new QuorumlockLockProvider(lockA);
        b = new QuorumlockLockProvider(lockB);
    }

    @Override
    public void close() {
        a.close();
        b.close();
        lockA.close();
        lockB.close();
    }
}
