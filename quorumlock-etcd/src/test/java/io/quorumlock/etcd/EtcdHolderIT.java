package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.quorumlock.FencedLease;
import io.quorumlock.LockHolder;
import io.quorumlock.QuorumlockException;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.TestTime;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link EtcdLock#holder}: the first key of the lock's queue, on a real one-member etcd cluster. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class EtcdHolderIT {

    private static final Duration TTL = Duration.ofSeconds(5);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    private final List<AutoCloseable> open = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void closeAll() throws Exception {
        threads.shutdownNow();
        for (AutoCloseable closeable : open) {
            closeable.close();
        }
    }

    private EtcdLock lock(String holder) {
        EtcdLock lock =
                EtcdLock.builder().endpoints(etcd.endpoints()).holder(holder).build();
        open.add(lock);
        return lock;
    }

    private Client admin() {
        Client admin = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build();
        open.add(admin);
        return admin;
    }

    private static List<KeyValue> lockKeys(Client admin, String resource) {
        ByteSequence prefix = ByteSequence.from("/quorumlock/locks/" + resource + "/", StandardCharsets.UTF_8);
        try {
            return admin.getKVClient()
                    .get(
                            prefix,
                            GetOption.builder()
                                    .isPrefix(true)
                                    .withSortField(GetOption.SortTarget.CREATE)
                                    .build())
                    .get(5, TimeUnit.SECONDS)
                    .getKvs();
        } catch (Exception e) {
            throw new IllegalStateException("could not read the lock keys of " + resource, e);
        }
    }

    @Test
    void freeThenTheHolderWithItsTokenThenFreeAfterTheRelease() {
        EtcdLock billing = lock("billing-worker-1");
        EtcdLock observer = lock("observer");
        assertThat(observer.holder("report")).isEmpty();

        FencedLease lease = billing.acquire("report", TTL, WAIT);
        assertThat(observer.holder("report"))
                .contains(new LockHolder("billing-worker-1", OptionalLong.of(lease.fencingToken())));
        assertThat(observer.tryAcquire("report", TTL)).as("still held").isEmpty();
        lease.release();
        assertThat(observer.holder("report")).as("released").isEmpty();

        FencedLease next = observer.acquire("report", TTL, Duration.ZERO); // the reads took nothing
        assertThat(billing.holder("report")).contains(new LockHolder("observer", OptionalLong.of(next.fencingToken())));
        next.release();
    }

    @Test
    void aWaiterIsUndisturbedAndTheSuccessorOfAHolderWhoseLeaseEndedIsTheHolder() throws Exception {
        EtcdLock billing = lock("billing-worker-1");
        EtcdLock waiting = lock("billing-worker-2");
        EtcdLock observer = lock("observer");
        Client admin = admin();
        FencedLease held = billing.acquire("ledger", TTL, WAIT);
        Future<FencedLease> waiter = threads.submit(() -> waiting.acquire("ledger", TTL, Duration.ofSeconds(30)));
        TestTime.await(WAIT, () -> lockKeys(admin, "ledger").size() == 2, "the waiter's key");
        for (int i = 0; i < 10; i++) {
            assertThat(observer.holder("ledger").orElseThrow().fencingToken()).hasValue(held.fencingToken());
        }
        assertThat(waiter).isNotDone();
        assertThat(lockKeys(admin, "ledger")).as("the reads queued nothing").hasSize(2);

        // The holder's etcd lease ends without a release, as when it expires.
        long leaseId = lockKeys(admin, "ledger").get(0).getLease();
        admin.getLeaseClient().revoke(leaseId).get(5, TimeUnit.SECONDS);

        FencedLease next = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(observer.holder("ledger"))
                .contains(new LockHolder("billing-worker-2", OptionalLong.of(next.fencingToken())));
        next.release();
        assertThat(observer.holder("ledger")).isEmpty();
    }

    @Test
    void aKeyWithoutAHolderNameIsAnUnnamedHolder() throws Exception {
        Client admin = admin();
        // As etcd's own lock clients (etcdctl lock) and older quorumlock versions leave them: no value.
        ByteSequence key = ByteSequence.from("/quorumlock/locks/foreign/694d8b1c", StandardCharsets.UTF_8);
        long revision = admin.getKVClient()
                .put(key, ByteSequence.EMPTY)
                .get(5, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
        assertThat(lock("observer").holder("foreign")).contains(new LockHolder("", OptionalLong.of(revision)));
        admin.getKVClient().delete(key).get(5, TimeUnit.SECONDS);
    }

    @Test
    void noClusterIsAnOutageWithinTheRequestTimeout() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort(); // closed again: nothing listens there
        }
        EtcdLock nowhere = EtcdLock.builder()
                .endpoints("http://127.0.0.1:" + port)
                .requestTimeout(Duration.ofSeconds(1))
                .build();
        open.add(nowhere);
        long start = System.nanoTime();
        assertThatThrownBy(() -> nowhere.holder("r"))
                .isInstanceOf(QuorumlockException.class)
                .hasMessageContaining("could not tell who holds 'r'");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isLessThan(Duration.ofSeconds(1).plus(TestTime.scaled(Duration.ofSeconds(2))));
    }

    @Test
    void theHolderNameIsChecked() {
        assertThatThrownBy(() -> EtcdLock.builder()
                        .endpoints(etcd.endpoints())
                        .holder("x".repeat(65))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holder");
    }
}
