package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.test.KillSession;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CuratorReadWriteLock} beside Curator's own {@link InterProcessReadWriteLock} on one path of
 * a real ZooKeeper server: readers of both share, a writer of either is alone, each waits for the
 * other's holders and is woken by their release, and a writer waiting in one library keeps the
 * later readers of the other out.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CuratorReadWriteLockIT extends BesideCurator {

    private static final String PATH = "/locks/catalog";

    private CuratorReadWriteLock ours;
    private InterProcessReadWriteLock theirs;

    @BeforeEach
    void makeLocks() {
        ours = CuratorReadWriteLock.of(lock, PATH);
        theirs = new InterProcessReadWriteLock(curator, PATH);
    }

    @Test
    void curatorsReadersAndOursShareAndKeepEitherWriterOut() throws Exception {
        theirs.readLock().acquire();
        FencedLease read = ours.tryAcquireRead(TTL).orElseThrow();
        assertThat(ours.readerNodes()).hasSize(2);

        assertThat(ours.tryAcquireWrite(TTL))
                .as("our writer beside two readers")
                .isEmpty();
        assertThat(ourWriteWithin(Duration.ofMillis(200)))
                .as("our writer, waiting 200 ms")
                .isFalse();
        assertThat(curatorWriteWithin(200))
                .as("Curator's writer, waiting 200 ms")
                .isFalse();

        theirs.readLock().release();
        read.release();
        assertThat(ours.readerNodes()).isEmpty();
        assertThat(ours.writerNodes()).as("no node left by the refused writers").isEmpty();
    }

    @Test
    void ourWriterWaitsForCuratorsReaderAndIsWokenByItsRelease() throws Exception {
        theirs.readLock().acquire();
        CompletableFuture<FencedLease> writer =
                CompletableFuture.supplyAsync(() -> ours.acquireWrite(TTL, WAIT), threads);
        TestTime.await(WAIT, () -> ours.writerNodes().size() == 1, "our writer's node");
        assertThat(writer).isNotDone();

        theirs.readLock().release();
        try (FencedLease write = writer.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(curatorReadWithin(100))
                    .as("Curator's reader while our writer holds")
                    .isFalse();
            assertThat(write.isValid()).isTrue();
        }
    }

    @Test
    void curatorsWriterWaitsForOurReaderAndIsWokenByItsRelease() throws Exception {
        FencedLease read = ours.acquireRead(TTL, WAIT);
        Future<Boolean> writer = threads.submit(() -> curatorWriteWithin(WAIT.toMillis()));
        TestTime.await(WAIT, () -> ours.writerNodes().size() == 1, "Curator's writer's node");
        assertThat(writer).isNotDone();

        read.release();
        assertThat(writer.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .as("Curator's writer, granted at our reader's release")
                .isTrue();
    }

    @Test
    void aWriterWaitingInOneLibraryKeepsTheLaterReadersOfTheOtherOut() throws Exception {
        FencedLease early = ours.acquireRead(TTL, WAIT);
        Future<Boolean> writer = threads.submit(() -> curatorWriteWithin(WAIT.toMillis()));
        TestTime.await(WAIT, () -> ours.writerNodes().size() == 1, "Curator's writer's node");

        assertThat(ours.tryAcquireRead(TTL))
                .as("a later reader, behind the waiting writer")
                .isEmpty();
        assertThatThrownBy(() -> ours.acquireRead(TTL, Duration.ofMillis(200)))
                .isInstanceOf(LockUnavailableException.class);

        early.release();
        assertThat(writer.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        try (FencedLease late = ours.acquireRead(TTL, WAIT)) {
            assertThat(late.fencingToken())
                    .as("a reader's token is above the earlier writer's, its node created after")
                    .isGreaterThan(early.fencingToken());
        }
    }

    @Test
    void aWriterStepsDownToReadingWithTheWaitingWriterStillBehindIt() throws Exception {
        FencedLease write = ours.acquireWrite(TTL, WAIT);
        Future<Boolean> other = threads.submit(() -> curatorWriteWithin(WAIT.toMillis() * 3));
        TestTime.await(WAIT, () -> ours.writerNodes().size() == 2, "Curator's writer's node behind ours");

        FencedLease read = ours.downgrade(write, TTL);
        write.release();
        assertThat(ours.writerNodes()).as("Curator's writer, still waiting").hasSize(1);
        assertThatThrownBy(() -> other.get(500, TimeUnit.MILLISECONDS))
                .as("Curator's writer while the downgraded reader reads")
                .isInstanceOf(TimeoutException.class);
        assertThat(ours.tryAcquireRead(TTL))
                .as("a new reader, behind the waiting writer")
                .isEmpty();

        read.release();
        assertThat(other.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThatThrownBy(() -> ours.downgrade(read, TTL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a write lease of " + PATH);
    }

    @Test
    void aWriterWhoseSessionEndsGivesWayAndItsLeaseIsLost() throws Exception {
        FencedLease write = ours.acquireWrite(TTL, WAIT);
        KillSession.kill(lock.client().getZookeeperClient().getZooKeeper());
        assertThat(write.lost().get(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isNotNull();

        assertThat(curatorReadWithin(WAIT.toMillis()))
                .as("Curator's reader once the writer's session ended")
                .isTrue();
        try (FencedLease next = ours.acquireWrite(TTL, WAIT)) {
            assertThat(next.fencingToken()).isGreaterThan(write.fencingToken());
        }
    }

    @Test
    void aPathThatIsNotOneIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> CuratorReadWriteLock.of(lock, "catalog"))
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("\"/locks/catalog\"");
        assertThat(ours.toString()).contains(PATH);
    }

    private boolean ourWriteWithin(Duration wait) {
        try (FencedLease write = ours.acquireWrite(TTL, wait)) {
            return write.isValid();
        } catch (LockUnavailableException refused) {
            return false;
        }
    }

    private boolean curatorWriteWithin(long millis) throws Exception {
        boolean got = theirs.writeLock().acquire(millis, TimeUnit.MILLISECONDS);
        if (got) {
            theirs.writeLock().release();
        }
        return got;
    }

    private boolean curatorReadWithin(long millis) throws Exception {
        boolean got = theirs.readLock().acquire(millis, TimeUnit.MILLISECONDS);
        if (got) {
            theirs.readLock().release();
        }
        return got;
    }
}
