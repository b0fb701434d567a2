package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.quorumlock.FencedLease;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The etcd lease's renewals on a real etcd, where a grant's answer comes late or a request cannot
 * be sent: the lease believes no more than etcd, and no less than what it knows.
 */
@Timeout(90)
class EtcdLeaseRenewalIT {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    private static final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "late-grant-answers");
        thread.setDaemon(true);
        return thread;
    });

    @AfterAll
    static void stop() {
        later.shutdownNow();
    }

    /**
     * Holds back the answer to the next lease grant by the delay the test sets, as a slow link or a
     * client kept off the CPU would: etcd granted the lease when the request came.
     */
    private static final class LateGrantAnswer implements ClientInterceptor {
        final AtomicLong nextDelayNanos = new AtomicLong();

        @Override
        public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
            ClientCall<Q, A> call = next.newCall(method, options);
            if (!method.getFullMethodName().endsWith("Lease/LeaseGrant")) {
                return call;
            }
            long delay = nextDelayNanos.getAndSet(0);
            if (delay == 0) {
                return call;
            }
            return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
                @Override
                public void start(Listener<A> listener, Metadata headers) {
                    super.start(
                            new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                                // Both on one thread with the same delay: in order.
                                @Override
                                public void onMessage(A answer) {
                                    later.schedule(() -> delegate().onMessage(answer), delay, TimeUnit.NANOSECONDS);
                                }

                                @Override
                                public void onClose(Status status, Metadata trailers) {
                                    later.schedule(
                                            () -> delegate().onClose(status, trailers), delay, TimeUnit.NANOSECONDS);
                                }
                            },
                            headers);
                }
            };
        }
    }

    @Test
    void aLeaseGrantedLateInItsTtlRenewsAtOnceAndIsNeitherDoubtedNorLost() {
        LateGrantAnswer late = new LateGrantAnswer();
        // etcd's TTLs are whole seconds: 3 s, or more on a slow machine.
        Duration ttl =
                Duration.ofSeconds((TestTime.scaled(Duration.ofSeconds(3)).toMillis() + 999) / 1000);
        try (Client client = Client.builder()
                        .endpoints(etcd.endpoints().toArray(String[]::new))
                        .interceptor(late)
                        .build();
                EtcdLock lock = EtcdLock.builder().client(client).build()) {
            lock.acquire("warm-up", ttl, Duration.ofSeconds(10)).release();
            late.nextDelayNanos.set(ttl.multipliedBy(2).dividedBy(3).toNanos()); // 2 s of 3 s

            FencedLease lease = lock.acquire("late", ttl, Duration.ofSeconds(10));
            long granted = System.nanoTime();

            // A whole TTL after the grant, etcd has renewed the lease and it was never doubted.
            TestTime.await(ttl.multipliedBy(2), () -> System.nanoTime() - granted > ttl.toNanos(), "a TTL to pass");
            assertThat(lease.inDoubt())
                    .as("the lease's doubt, etcd answering everything: %s", lease)
                    .isNotDone();
            assertThat(lease.lost()).as("%s", lease).isNotDone();
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.remaining()).isGreaterThan(ttl.dividedBy(3));
            lease.release();
        }
    }

    @Test
    void anExtensionThatCouldNotReachEtcdChangesNothing() {
        Duration requestTimeout = TestTime.scaled(Duration.ofSeconds(2));
        Duration ttl = Duration.ofSeconds(30);
        try (FaultProxies proxies = FaultProxies.inFrontOf(etcd.cluster());
                EtcdLock lock = EtcdLock.builder()
                        .endpoints(proxies.uris())
                        .requestTimeout(requestTimeout)
                        .connectTimeout(requestTimeout.dividedBy(2)) // fails as unreachable, not waiting
                        .build()) {
            FencedLease lease = lock.acquire("unreachable", ttl, Duration.ofSeconds(10));
            proxies.get(0).refuseConnections().reset(); // nothing reaches etcd

            boolean extended = lease.extend(ttl);
            long after = System.nanoTime();
            proxies.clearFaults();

            assertThat(extended).isFalse();
            assertThat(lease.remaining())
                    .as("what the lease believes after nothing was sent")
                    .isGreaterThan(ttl.dividedBy(2));
            Duration watch = Duration.ofSeconds(5);
            TestTime.await(watch.multipliedBy(2), () -> System.nanoTime() - after > watch.toNanos(), "5 s to pass");
            assertThat(lease.lost()).as("%s", lease).isNotDone();
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.remaining()).isGreaterThan(ttl.dividedBy(3));
            lease.release();
        }
    }
}
