package io.quorumlock.lab.demo;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.lab.ProgressLine;
import io.quorumlock.redis.Redlock;
import io.quorumlock.redis.RedlockBuilder;
import io.quorumlock.testkit.RedisSentinels;
import io.quorumlock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The last part of the demo: the failure the article opens with, on a master behind Sentinel. A
 * locks on the master; the master dies before the key reaches its replica; the sentinels promote
 * the replica; B locks there; both hold. Then the same with the lock waiting for a replica's
 * acknowledgement (WAIT): A's grant does not count, and no key is left.
 */
final class FailoverDemo {

    static final String RESOURCE = "stock";
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration NODE_TIMEOUT = Duration.ofMillis(200);

    /**
     * What happened.
     *
     * @param timeline the lines to print, each with its time from A's lock
     * @param bothHeld whether A and B held the lock at once without WAIT
     * @param refusedWithWait whether A's grant with WAIT was refused, naming the replicas
     */
    record Result(List<String> timeline, boolean bothHeld, boolean refusedWithWait) {}

    private FailoverDemo() {}

    static Result run(ProgressLine progress) {
        progress.println("Starting a Redis master, its replica and three sentinels.");
        try (RedisSentinels redis = RedisSentinels.start()) {
            List<String> timeline = new ArrayList<>();
            long start = System.nanoTime();
            boolean bothHeld;
            RedisServer old = redis.master();
            RedisServer replica;
            try (Redlock a =
                            client(redis, "A").waitForReplicas(0, Duration.ZERO).build();
                    Redlock b =
                            client(redis, "B").waitForReplicas(0, Duration.ZERO).build()) {
                replica = redis.cutOffReplica();
                start = System.nanoTime();
                Lease leaseA = a.acquire(RESOURCE, TTL, Duration.ofSeconds(5));
                timeline.add(at(start) + "A locks '" + RESOURCE + "' on the master " + address(old)
                        + "; the key has not reached the replica " + address(replica));
                old.stop();
                replica.resume();
                timeline.add(at(start) + "the master dies (SIGKILL)");
                progress.println("Waiting for the sentinels to promote the replica.");
                redis.awaitNamedMaster(replica);
                timeline.add(at(start) + "the sentinels promote the replica " + address(replica) + ", without the key");
                Lease leaseB = b.acquire(RESOURCE, TTL, Duration.ofSeconds(10));
                bothHeld = leaseA.isValid() && leaseB.isValid();
                timeline.add(at(start) + "B locks '" + RESOURCE + "' on the new master: "
                        + (bothHeld
                                ? "A and B both hold it (A's lease has "
                                        + leaseA.remaining().toSeconds() + " s left)"
                                : "A no longer holds it"));
                leaseB.release();
            }
            // With WAIT: the old master, started again, follows the new one; then it is cut off too.
            progress.println("Starting the old master again, as the new master's replica.");
            redis.rejoin(old);
            boolean refused;
            try (Redlock a = client(redis, "A")
                    .waitForReplicas(1, NODE_TIMEOUT.dividedBy(2))
                    .build()) {
                a.acquire("warm-up", TTL, Duration.ofSeconds(5)).release();
                RedisServer cut = redis.cutOffReplica();
                try {
                    Optional<String> why = refusal(a);
                    refused = why.isPresent() && why.get().contains("NOREPLICAS 0 of 1");
                    timeline.add("           with WAIT for one replica, its link cut: A's grant does not count ("
                            + why.orElse("it was granted") + ")"
                            + (refused && keyGone(redis.master()) ? "; no key is left" : ""));
                } finally {
                    cut.resume();
                }
            }
            return new Result(timeline, bothHeld, refused);
        }
    }

    private static RedlockBuilder client(RedisSentinels redis, String holder) {
        return Redlock.builder()
                .node(redis.uri())
                .holder(holder)
                .nodeTimeout(NODE_TIMEOUT)
                .connectTimeout(Duration.ofSeconds(2));
    }

    /** Why one attempt on the resource is refused, in the refusal's words for the node; empty if granted. */
    private static Optional<String> refusal(Redlock a) {
        try {
            a.acquire(RESOURCE, TTL, Duration.ZERO).release();
            return Optional.empty();
        } catch (LockUnavailableException e) {
            String detail = e.lastAttempt().get(0).detail();
            return Optional.of(detail);
        }
    }

    private static boolean keyGone(RedisServer master) {
        try (var jedis = master.connect(Duration.ofSeconds(2))) {
            return !jedis.exists(RESOURCE);
        }
    }

    private static String address(RedisServer server) {
        return server.host() + ":" + server.port();
    }

    private static String at(long start) {
        return String.format("%6d ms  ", (System.nanoTime() - start) / 1_000_000);
    }
}
