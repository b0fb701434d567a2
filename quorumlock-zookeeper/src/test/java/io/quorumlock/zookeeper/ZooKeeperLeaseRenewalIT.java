package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ZooKeeper lease's own requests (its heartbeats) on a real server, where a grant comes late or
 * a heartbeat cannot be sent: the lease believes no more than the session, and no less than what it
 * knows.
 */
@Timeout(90)
class ZooKeeperLeaseRenewalIT {

    private static final Duration TTL = Duration.ofSeconds(30);

    @TempDir
    static Path dataDir;

    private static TestingServer server;

    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeAll
    static void startServer() throws Exception {
        server = ZooKeeperServers.server(dataDir);
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private ZooKeeperLock lock(String connectString, Duration session) {
        ZooKeeperLock lock = TestLocks.lock(connectString, session);
        open.add(lock);
        return lock;
    }

    /** Waits until the ticker has passed {@code nanos}. */
    private static void awaitTime(long nanos, Duration bound, String what) {
        TestTime.await(bound, () -> System.nanoTime() - nanos >= 0, what);
    }

    /**
     * Holds the lock's client's event thread for {@code stall} from now, as another user's slow
     * callback on a shared Curator client would: the answers to the session's requests reach their
     * callers that much later, while the connection itself stays up.
     */
    private static void stallEventThread(ZooKeeperLock lock, Duration stall) throws Exception {
        CountDownLatch stalled = new CountDownLatch(1);
        lock.client()
                .checkExists()
                .inBackground((client, event) -> {
                    stalled.countDown();
                    Thread.sleep(stall.toMillis());
                })
                .forPath("/");
        assertThat(stalled.await(TestTime.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
    }

    @Test
    void aLeaseGrantedLateInItsSessionRenewsAtOnceAndIsNeitherInvalidNorDoubtedNorLost() throws Exception {
        Duration session = TestTime.scaled(Duration.ofSeconds(3));
        ZooKeeperLock lock = lock(server.getConnectString(), session);
        // The queue's parent exists, so that the create and the listing go out at once.
        lock.client().create().creatingParentsIfNeeded().forPath(ZooKeeperLock.DEFAULT_BASE_PATH + "/late");

        // The listing that grants the lease is answered at once, but reaches the attempt three
        // quarters of the session timeout after it was sent: the lease starts with a quarter left.
        stallEventThread(lock, session.multipliedBy(3).dividedBy(4));
        long asked = System.nanoTime();
        FencedLease lease = lock.acquire("late", TTL, session.multipliedBy(2));
        long granted = System.nanoTime();
        assertThat(Duration.ofNanos(granted - asked))
                .as("how long the grant took")
                .isGreaterThan(session.dividedBy(2));

        // For a session timeout after the grant, the server answering everything, the lease is valid throughout.
        String[] firstGap = {null};
        TestTime.await(
                session.multipliedBy(3),
                () -> {
                    boolean valid = lease.isValid();
                    long since = System.nanoTime() - granted;
                    if (!valid && firstGap[0] == null) {
                        firstGap[0] = "at the grant + " + since / 1_000_000 + " ms the lease was not valid (session "
                                + session.toMillis() + " ms)";
                    }
                    return since > session.toNanos();
                },
                "a session timeout to pass");
        assertThat(firstGap[0])
                .as("a lease not valid while the server answered")
                .isNull();
        assertThat(lease.inDoubt())
                .as("the lease's doubt, the server answering everything")
                .isNotDone();
        assertThat(lease.lost()).isNotDone();
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.remaining()).isGreaterThan(session.dividedBy(3));
        lease.release();
    }

    @Test
    void aRenewalThatFallsDueWhileNothingCanBeSentChangesNothing() throws Exception {
        Duration session = TestTime.scaled(Duration.ofSeconds(6));
        FaultProxy proxy = FaultProxy.start("127.0.0.1", server.getPort());
        open.add(proxy);
        ZooKeeperLock lock = lock(proxy.address(), session);
        FencedLease lease = lock.acquire("unsent", TTL, session);
        // The lease's next renewal falls due when two thirds of the session timeout are left.
        long due = System.nanoTime() + lease.remaining().toNanos() - session.toNanos() * 2 / 3;
        long margin = session.toNanos() / 12;

        awaitTime(due - margin, session, "the renewal to be near");
        proxy.refuseConnections().reset(); // the client reconnects at once, and is refused
        TestTime.await(session, () -> !lease.isValid(), "the lease to be suspended");
        awaitTime(due + margin, session, "the renewal to fall due while nothing can be sent");
        proxy.acceptConnections();

        TestTime.await(session, lease::isValid, "the lease to be valid again, re-checked on the same session");
        assertThat(lease.lost()).isNotDone();
        assertThat(lease.remaining()).isGreaterThan(session.dividedBy(2));
        long back = System.nanoTime();
        awaitTime(back + session.toNanos(), session.multipliedBy(2), "a session timeout to pass");
        assertThat(lease.lost()).isNotDone();
        assertThat(lease.isValid()).isTrue();
        lease.release();
    }
}
