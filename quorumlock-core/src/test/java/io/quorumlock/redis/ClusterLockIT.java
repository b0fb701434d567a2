package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.Lease;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.HashSlots;
import io.quorumlock.testkit.RedisCluster;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.Jedis;

/**
 * The single-node lock on a Redis Cluster of three masters, named by one seed: each resource
 * locked on the master of its slot, a slot moved under a held lease ({@code MOVED}) or in the
 * middle of its move ({@code ASK}), a release that wakes a waiter on any master.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ClusterLockIT {

    private static final Duration TTL = Duration.ofSeconds(30);

    private static RedisCluster cluster;

    @BeforeAll
    static void start() {
        cluster = RedisCluster.start(3, 0);
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static String get(RedisServer node, String key) {
        try (Jedis jedis = node.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
            return jedis.get(key);
        }
    }

    /** {@code key} on a master that imports its slot: asked for as a client redirected by ASK asks. */
    private static String getImported(RedisServer node, String key) {
        try (Jedis jedis = node.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
            jedis.asking();
            return jedis.get(key);
        }
    }

    @Test
    void eachResourceIsLockedOnTheMasterOfItsSlotThroughOneSeed() {
        try (Redlock lock = Redlock.builder().node(cluster.uri()).build()) {
            Map<RedisServer, Lease> leases = new HashMap<>();
            for (RedisServer master : cluster.masters()) {
                String resource = cluster.keyServedBy(master, "every-master:");
                Lease lease = lock.acquire(resource, TTL, Duration.ZERO);
                leases.put(master, lease);
                assertThat(get(master, resource))
                        .as("the key on the master of slot %d", HashSlots.of(resource))
                        .isNotNull();
                assertThatThrownBy(() -> lock.acquire(resource, TTL, Duration.ZERO))
                        .isInstanceOf(LockUnavailableException.class);
            }
            leases.forEach((master, lease) -> {
                String resource = lease.resource();
                lease.close();
                assertThat(get(master, resource)).as("released on its master").isNull();
            });
            assertThat(lock.checkNodes().toString())
                    .contains("3 master(s)")
                    .contains("a Redis Cluster of 3 master(s) with 0 replica(s) up")
                    .doesNotContain("ERROR");
        }
    }

    /** How many times {@code master} ran {@code command} ({@code INFO commandstats}'s name) so far. */
    private static long calls(RedisServer master, String command) {
        try (Jedis jedis = master.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
            for (String line : jedis.info("commandstats").split("\r?\n")) {
                if (line.startsWith("cmdstat_" + command + ":calls=")) {
                    return Long.parseLong(line.substring(line.indexOf('=') + 1, line.indexOf(',')));
                }
            }
            return 0;
        }
    }

    /** How many times the cluster's masters were asked their layout ({@code CLUSTER NODES}) so far. */
    private static long layoutsAsked() {
        return cluster.masters().stream()
                .mapToLong(m -> calls(m, "cluster|nodes"))
                .sum();
    }

    /**
     * A waiter's requests about its resource (its place in the line, the holder's key) go to the
     * master of the resource's slot, as its grants do: none is redirected, so none has the lock ask
     * the cluster its layout again.
     */
    @Test
    void aWaitersRequestsGoToTheMasterOfItsSlotWithoutARedirect() throws Exception {
        // A node timeout a busy machine does not reach: a connection dropped as silent has the
        // lock ask the layout again, which is not what this counts.
        Duration patient = TestTime.scaled(Duration.ofSeconds(1));
        try (Redlock holder = Redlock.builder()
                        .node(cluster.uri())
                        .nodeTimeout(patient)
                        .build();
                Redlock waiter = Redlock.builder()
                        .node(cluster.uri())
                        .nodeTimeout(patient)
                        .retry(RetryPolicy.jitteredBackoff(Duration.ofSeconds(5), Duration.ofSeconds(5)))
                        .build()) {
            List<Lease> held = new java.util.ArrayList<>();
            List<String> resources = new java.util.ArrayList<>();
            for (RedisServer master : cluster.masters()) {
                String resource = cluster.keyServedBy(master, "waited:");
                resources.add(resource);
                held.add(holder.acquire(resource, TTL, Duration.ZERO));
                waiter.acquire("{" + resource + "}:warm", TTL, Duration.ZERO).release(); // the layout known
            }
            long before = layoutsAsked();
            List<CompletableFuture<Lease>> waits = resources.stream()
                    .map(resource -> CompletableFuture.supplyAsync(
                            () -> waiter.acquire(resource, TTL, TestTime.scaled(Duration.ofSeconds(20)))))
                    .toList();
            // Each waiter joins the line, and rejoins it every second to keep its place: by script.
            Map<RedisServer, Long> scripts = new HashMap<>();
            cluster.masters().forEach(m -> scripts.put(m, calls(m, "evalsha") + calls(m, "eval")));
            TestTime.await(
                    Duration.ofSeconds(20),
                    () -> cluster.masters().stream()
                            .allMatch(m -> calls(m, "evalsha") + calls(m, "eval") >= scripts.get(m) + 3),
                    "each waiter to join its master's line and rejoin it twice");
            long asked = layoutsAsked() - before;
            held.forEach(Lease::release);
            for (CompletableFuture<Lease> wait : waits) {
                wait.get(TestTime.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS)
                        .release();
            }
            assertThat(asked).as("layouts asked while 3 clients waited").isZero();
        }
    }

    @Test
    void aLeaseFollowsItsSlotToAnotherMasterAndTheNextGrantGoesThereAtOnce() {
        RedisServer from = cluster.masters().get(1);
        RedisServer to = cluster.masters().get(2);
        String resource = cluster.keyServedBy(from, "moved:");
        int slot = HashSlots.of(resource);
        try (Redlock lock = Redlock.builder().node(cluster.uri()).build()) {
            Lease lease = lock.acquire(resource, TTL, Duration.ZERO);
            String token = get(from, resource);
            cluster.migrate(slot, from, to);
            assertThat(get(to, resource)).as("the key moved with its slot").isEqualTo(token);

            // The extension goes where the grant went, is told MOVED, and follows.
            assertThat(lease.extend(Duration.ofSeconds(60))).isTrue();
            try (Jedis jedis = to.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
                assertThat(jedis.pttl(resource))
                        .as("extended on the slot's new master")
                        .isGreaterThan(30_000);
            }
            lease.close();
            assertThat(get(to, resource))
                    .as("released on the slot's new master")
                    .isNull();

            // The MOVED taught the lock the slot's master: the next grant goes there first.
            String sibling = "{" + resource + "}:sibling";
            try (Lease next = lock.acquire(sibling, TTL, Duration.ZERO)) {
                assertThat(get(to, sibling)).isNotNull();
            }
        } finally {
            cluster.migrate(slot, to, from);
        }
    }

    @Test
    void aKeyAskedForInTheMiddleOfItsSlotsMoveIsLockedAndReleasedOnTheImportingMaster() {
        RedisServer from = cluster.masters().get(0);
        RedisServer to = cluster.masters().get(1);
        String resource = cluster.keyServedBy(from, "asked:");
        int slot = HashSlots.of(resource);
        cluster.beginMigration(slot, from, to);
        try (Redlock lock = Redlock.builder().node(cluster.uri()).build()) {
            // The key is on neither master: the migrating one answers ASK, the importing one grants.
            Lease lease = lock.acquire(resource, TTL, Duration.ZERO);
            assertThat(getImported(to, resource))
                    .as("granted on the importing master")
                    .isNotNull();
            try (Jedis jedis = from.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
                assertThat(jedis.clusterCountKeysInSlot(slot))
                        .as("nothing on the migrating master")
                        .isZero();
            }
            assertThatThrownBy(() -> lock.acquire(resource, TTL, Duration.ZERO))
                    .as("the importing master holds it for everyone")
                    .isInstanceOf(LockUnavailableException.class);
            assertThat(lease.extend(TTL)).isTrue();
            lease.close();
            assertThat(getImported(to, resource))
                    .as("released on the importing master")
                    .isNull();
        } finally {
            cluster.endMigration(slot, from, to);
            cluster.migrate(slot, to, from);
        }
    }

    /**
     * A round redirected late (the migrating master slow to answer ASK) waits for the importing
     * master as long as that one answers within the node timeout of its own silence, not of the
     * round's start.
     */
    @Test
    void aRoundRedirectedLateWaitsForTheImportingMastersOwnSilence() throws Exception {
        RedisServer from = cluster.masters().get(2);
        RedisServer to = cluster.masters().get(0);
        String resource = cluster.keyServedBy(from, "late-ask:");
        int slot = HashSlots.of(resource);
        cluster.beginMigration(slot, from, to);
        Duration nodeTimeout = TestTime.scaled(Duration.ofMillis(500));
        long fault = nodeTimeout.toNanos() * 3 / 5; // each master silent for 0.6 node timeouts
        try (Redlock lock =
                Redlock.builder().node(cluster.uri()).nodeTimeout(nodeTimeout).build()) {
            for (RedisServer master : List.of(from, to)) { // connections and layout ready
                lock.acquire(cluster.keyServedBy(master, "warm:"), TTL, Duration.ZERO)
                        .release();
            }
            from.pause();
            java.util.concurrent.CompletableFuture<Lease> grant =
                    CompletableFuture.supplyAsync(() -> lock.acquire(resource, TTL, Duration.ZERO));
            try {
                // The faults' lengths, not waits for conditions: silences shorter than the node timeout.
                java.util.concurrent.locks.LockSupport.parkNanos(fault);
                to.pause();
                from.resume();
                java.util.concurrent.locks.LockSupport.parkNanos(fault);
            } finally {
                from.resume();
                to.resume();
            }
            Lease lease = grant.get(TestTime.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(getImported(to, resource))
                    .as("granted on the importing master")
                    .isNotNull();
            lease.close();
        } finally {
            cluster.endMigration(slot, from, to);
            cluster.migrate(slot, to, from);
        }
    }

    @Test
    void aReleaseWakesAWaiterOnAnyMaster() throws Exception {
        // Waiters that retry only every 30 s: a grant within the bound below was a hand-off.
        RetryPolicy slow = RetryPolicy.jitteredBackoff(Duration.ofSeconds(30), Duration.ofSeconds(30));
        try (Redlock a = Redlock.builder().node(cluster.uri()).build();
                Redlock b = Redlock.builder()
                        .node(cluster.uri())
                        .retry(slow)
                        .recheck(Duration.ofSeconds(60))
                        .build()) {
            for (RedisServer master : cluster.masters()) {
                String resource = cluster.keyServedBy(master, "woken:");
                Lease held = a.acquire(resource, TTL, Duration.ZERO);
                CompletableFuture<Lease> waiter =
                        CompletableFuture.supplyAsync(() -> b.acquire(resource, TTL, Duration.ofSeconds(90)));
                TestTime.await(
                        Duration.ofSeconds(10),
                        () -> b.rounds().channels.heard(Command.asSent(resource)),
                        "the waiter to listen on the cluster");
                held.close();
                try (Lease handed =
                        waiter.get(TestTime.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)) {
                    assertThat(get(master, resource)).isNotNull();
                }
            }
        }
    }

    @Test
    void aClusterOfOneMasterThatKnowsNoAddressOfItsOwnIsLockedOnThroughItsSeed() {
        try (RedisCluster one = RedisCluster.start(1, 0)) {
            RedisServer seed = one.masters().get(0);
            try (Redlock lock = Redlock.builder().node(one.uri()).build()) {
                // Its CLUSTER NODES shows its own line as ":port@bus": the lock takes the seed's address.
                Lease lease = lock.acquire("alone", TTL, Duration.ZERO);
                assertThat(get(seed, "alone")).isNotNull();
                lease.close();
                assertThat(get(seed, "alone")).isNull();
            }
        }
    }

    @Test
    void aSeedThatIsNoClusterIsNamedInTheRefusal() {
        try (RedisServer plain = RedisServer.start();
                Redlock lock = Redlock.builder()
                        .node("redis-cluster://" + plain.host() + ":" + plain.port())
                        .connectTimeout(Duration.ofSeconds(1))
                        .build()) {
            assertThatThrownBy(() -> lock.acquire("no-cluster", TTL, Duration.ofSeconds(5)))
                    .as("a mistake of the address: refused at once, not waited for")
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("answered CLUSTER NODES with ERR This instance has cluster support disabled")
                    .hasMessageContaining("no Redis Cluster there; name a standalone master as redis://host:port");
        }
    }

    @Test
    void aClusterIsNoRedlockNode() {
        assertThatThrownBy(() -> Redlock.builder()
                        .node(cluster.uri())
                        .node(cluster.masters().get(1).uri())
                        .node(cluster.masters().get(2).uri())
                        .build())
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("is a Redis Cluster: it serves the single-node lock only");
        assertThatThrownBy(() ->
                        Redlock.builder().node(cluster.uri()).restartGuard(true).build())
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("restartGuard")
                .hasMessageContaining("leave restartGuard unset");
    }
}
