package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real ZooKeeper server with a Curator client and a {@link ZooKeeperLock} of their own on it, as
 * two versions of an application share one ensemble during a migration: the set-up of the tests of
 * this library beside Curator's recipes. Curator's nodes carry {@link #CURATOR_DATA}, the lock's
 * its holder {@link #HOLDER}.
 */
abstract class BesideCurator {

    static final Duration TTL = Duration.ofSeconds(30);
    static final Duration SESSION = Duration.ofSeconds(4);
    static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));
    static final String CURATOR_DATA = "curator-host";
    static final String HOLDER = "quorumlock-host";

    @TempDir
    Path dataDir;

    TestingServer server;
    CuratorFramework curator;
    ZooKeeperLock lock;
    final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeEach
    void startBesideCurator() throws Exception {
        server = ZooKeeperServers.server(dataDir);
        curator = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString())
                .retryPolicy(new RetryOneTime(100))
                .sessionTimeoutMs((int) SESSION.toMillis())
                .defaultData(CURATOR_DATA.getBytes(StandardCharsets.UTF_8))
                .build();
        curator.start();
        assertThat(curator.blockUntilConnected((int) WAIT.toSeconds() + 1, TimeUnit.SECONDS))
                .isTrue();
        lock = ZooKeeperLock.builder()
                .connectString(server.getConnectString())
                .sessionTimeout(SESSION)
                .holder(HOLDER)
                .build();
    }

    @AfterEach
    void stopBesideCurator() throws Exception {
        threads.shutdownNow();
        lock.close();
        curator.close();
        server.close();
    }
}
