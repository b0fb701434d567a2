package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

class RedisServersIT {

    @Test
    void startsTheNodesOnThePortsAskedForAndATakenPortFailsNamingIt() throws IOException {
        int free = Processes.freePort("127.0.0.1");
        try (RedisServers nodes = RedisServers.start(1, false, free)) {
            assertThat(nodes.uris()).containsExactly("redis://127.0.0.1:" + free);
            try (Jedis jedis = Clients.connect(nodes.get(0))) {
                assertThat(jedis.ping()).isEqualTo("PONG");
            }
        }
        long before = ProcessHandle.current().children().count();
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            assertThatThrownBy(() -> RedisServers.start(1, false, port))
                    .isInstanceOfSatisfying(
                            PortInUseException.class, e -> assertThat(e.port()).isEqualTo(port))
                    .hasMessage("port " + port + " of 127.0.0.1 is in use by another process");
        }
        assertThat(ProcessHandle.current().children().count())
                .as("no node left running")
                .isEqualTo(before);
        assertThatThrownBy(() -> RedisServers.start(2, false, 65535))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the ports of 2 nodes from 65535 must be between 1 and 65535");
    }

    @Test
    void startsIndependentNodesAndResetBringsThemBackEmpty() {
        List<Long> pids;
        try (RedisServers nodes = RedisServers.start(3)) {
            assertThat(nodes.size()).isEqualTo(3);
            assertThat(nodes.uris()).doesNotHaveDuplicates().allMatch(uri -> uri.startsWith("redis://127.0.0.1:"));
            assertThat(nodes).containsExactlyElementsOf(nodes.servers());
            for (RedisServer node : nodes) {
                try (Jedis jedis = Clients.connect(node)) {
                    jedis.set("k", node.uri());
                    assertThat(jedis.info("replication")).contains("role:master", "connected_slaves:0");
                }
            }

            try (Jedis jedis = Clients.connect(nodes.get(2))) {
                jedis.replicaof(nodes.get(0).host(), nodes.get(0).port());
            }
            nodes.get(0).pause();
            nodes.get(1).stop();
            if (RedisServer.clockControlAvailable()) {
                nodes.get(2).jumpClock(Duration.ofSeconds(30));
            }
            nodes.reset();

            for (RedisServer node : nodes) {
                assertThat(node.isRunning()).isTrue();
                assertThat(node.isPaused()).isFalse();
                assertThat(node.clockOffset()).isZero();
                try (Jedis jedis = Clients.connect(node, 500)) {
                    assertThat(jedis.dbSize()).isZero();
                    assertThat(jedis.info("replication")).contains("role:master");
                }
            }
            pids = nodes.servers().stream().map(RedisServer::pid).toList();
        }
        assertThat(pids).allMatch(Clients::processGone);
    }

    @Test
    void closeClosesEveryNodeEvenIfSomeAreStoppedOrPaused() {
        RedisServers nodes = RedisServers.start(2, true);
        long pausedPid = nodes.get(0).pid();
        nodes.get(0).pause();
        nodes.get(1).stop();
        nodes.close();
        assertThat(Clients.processGone(pausedPid)).isTrue();
        assertThat(nodes.servers())
                .allMatch(node -> !node.isRunning() && !node.dir().toFile().exists());
    }

    @Test
    void rejectsACountBelowOne() {
        assertThatThrownBy(() -> RedisServers.start(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("count must be at least 1, was 0");
    }
}
