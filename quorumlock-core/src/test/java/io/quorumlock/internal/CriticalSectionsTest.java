package io.quorumlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.FencedLease;
import io.quorumlock.LeaseLostException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CriticalSectionsTest {

    /** A fenced lease whose loss the test triggers. */
    static final class TestLease implements FencedLease {
        final CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
        volatile boolean released;

        @Override
        public long fencingToken() {
            return 7;
        }

        @Override
        public CompletableFuture<LeaseLostException> lost() {
            return lost;
        }

        @Override
        public String resource() {
            return "r";
        }

        @Override
        public Duration validity() {
            return Duration.ofSeconds(10);
        }

        @Override
        public Duration remaining() {
            return lost.isDone() || released ? Duration.ZERO : Duration.ofSeconds(10);
        }

        @Override
        public boolean isValid() {
            return !remaining().isZero();
        }

        @Override
        public boolean extend(Duration ttl) {
            return isValid();
        }

        @Override
        public void release() {
            released = true;
        }
    }

    @Test
    void returnsTheResultAndReleases() {
        TestLease lease = new TestLease();
        assertThat(CriticalSections.run(lease, () -> 42)).isEqualTo(42);
        assertThat(lease.released).isTrue();
    }

    @Test
    void passesTheWorksExceptionWhenTheLeaseHeld() {
        TestLease lease = new TestLease();
        assertThatThrownBy(() -> CriticalSections.run(lease, () -> {
                    throw new java.io.IOException("disk full");
                }))
                .isInstanceOf(java.io.IOException.class);
        assertThat(lease.released).isTrue();
    }

    @Test
    void aLossInterruptsTheWorkAndEndsInLeaseLost() {
        TestLease lease = new TestLease();
        CountDownLatch started = new CountDownLatch(1);
        Thread loser = new Thread(() -> {
            try {
                started.await();
            } catch (InterruptedException e) {
                return;
            }
            lease.lost.complete(new LeaseLostException("r", "session expired", null));
        });
        loser.start();
        LeaseLostException e = org.junit.jupiter.api.Assertions.assertThrows(
                LeaseLostException.class,
                () -> CriticalSections.run(lease, () -> {
                    started.countDown();
                    Thread.sleep(TimeUnit.SECONDS.toMillis(20));
                    return null;
                }));
        assertThat(e.getMessage()).contains("session expired");
        assertThat(e.getSuppressed()).singleElement().isInstanceOf(InterruptedException.class);
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
        assertThat(lease.released).isTrue();
    }

    @Test
    void aLossAfterTheWorkIsStillReported() {
        TestLease lease = new TestLease();
        assertThatThrownBy(() -> CriticalSections.run(lease, () -> {
                    lease.lost.complete(new LeaseLostException("r", "lease revoked", null));
                    return "done";
                }))
                .isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("lease revoked");
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }
}
