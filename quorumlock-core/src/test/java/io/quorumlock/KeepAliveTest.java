package io.quorumlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** {@link DistributedLock#keepAlive} as the fenced locks inherit it: their leases keep themselves alive. */
class KeepAliveTest {

    private static final Duration TTL = Duration.ofSeconds(10);

    @Test
    void aFencedLeaseIsKeptAliveByItsBackendAndTellsItsNoticeOfLoss() {
        StubLease lease = new StubLease();
        CompletableFuture<LeaseLostException> lost = new StubLock().keepAlive(lease, TTL);
        assertThat(lost).isNotDone();

        LeaseLostException loss = new LeaseLostException("r", "session expired", null);
        lease.inDoubt.complete(loss);
        assertThat(lost).isCompletedWithValue(loss);
    }

    @Test
    void aReleasedLeaseOrOneWithoutATokenIsRefused() {
        StubLease released = new StubLease();
        released.valid = false;
        assertThatThrownBy(() -> new StubLock().keepAlive(released, TTL))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'r' was released");

        DistributedLock<Lease> plain = new StubLock().asPlain();
        assertThatThrownBy(() -> plain.keepAlive(new StubLease().asPlain(), TTL))
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("kept alive by the lock that granted it");
    }

    @Test
    void aLeaseAlreadyLostGivesItsLossAtOnce() {
        StubLease lease = new StubLease();
        lease.valid = false;
        lease.inDoubt.complete(new LeaseLostException("r", "revoked", null));
        assertThat(new StubLock().keepAlive(lease, TTL)).isDone();
    }

    @Test
    void anUnusableTtlIsRefusedAsTheLockRefusesIt() {
        assertThatThrownBy(() -> new StubLock().keepAlive(new StubLease(), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl");
    }

    private static final class StubLease implements FencedLease {
        final CompletableFuture<LeaseLostException> inDoubt = new CompletableFuture<>();
        boolean valid = true;

        @Override
        public long fencingToken() {
            return 1;
        }

        @Override
        public CompletableFuture<LeaseLostException> lost() {
            return inDoubt;
        }

        @Override
        public String resource() {
            return "r";
        }

        @Override
        public Duration validity() {
            return TTL;
        }

        @Override
        public Duration remaining() {
            return valid ? TTL : Duration.ZERO;
        }

        @Override
        public boolean isValid() {
            return valid;
        }

        @Override
        public boolean extend(Duration ttl) {
            return valid;
        }

        @Override
        public void release() {
            valid = false;
        }

        /** The same lease, seen without its token. */
        Lease asPlain() {
            StubLease fenced = this;
            return new Lease() {
                @Override
                public String resource() {
                    return fenced.resource();
                }

                @Override
                public Duration validity() {
                    return fenced.validity();
                }

                @Override
                public Duration remaining() {
                    return fenced.remaining();
                }

                @Override
                public boolean isValid() {
                    return fenced.isValid();
                }

                @Override
                public boolean extend(Duration ttl) {
                    return fenced.extend(ttl);
                }

                @Override
                public void release() {
                    fenced.release();
                }
            };
        }
    }

    /** A lock that grants nothing: only its inherited keepAlive is under test. */
    private static class StubLock implements DistributedLock<FencedLease> {
        @Override
        public Optional<FencedLease> tryAcquire(String resource, Duration ttl) {
            return Optional.empty();
        }

        @Override
        public FencedLease acquire(String resource, Duration ttl, Duration maxWait) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <T, X extends Exception> T withLease(
                String resource, Duration ttl, Duration maxWait, LeasedSection<FencedLease, T, X> work) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Duration lossNotice(Duration ttl) {
            if (ttl.isZero() || ttl.isNegative()) {
                throw new IllegalArgumentException("ttl must be positive");
            }
            return ttl.dividedBy(10);
        }

        @Override
        public Optional<LockHolder> holder(String resource) {
            return Optional.empty();
        }

        @Override
        public void close() {}

        DistributedLock<Lease> asPlain() {
            StubLock lock = this;
            return new DistributedLock<>() {
                @Override
                public Optional<Lease> tryAcquire(String resource, Duration ttl) {
                    return Optional.empty();
                }

                @Override
                public Lease acquire(String resource, Duration ttl, Duration maxWait) {
                    return lock.acquire(resource, ttl, maxWait);
                }

                @Override
                public <T, X extends Exception> T withLease(
                        String resource, Duration ttl, Duration maxWait, LeasedSection<Lease, T, X> work) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public Duration lossNotice(Duration ttl) {
                    return lock.lossNotice(ttl);
                }

                @Override
                public Optional<LockHolder> holder(String resource) {
                    return lock.holder(resource);
                }

                @Override
                public void close() {}
            };
        }
    }
}
