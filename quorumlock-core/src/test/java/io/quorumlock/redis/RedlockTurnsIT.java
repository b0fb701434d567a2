package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * LocalLine are woken by releases. The threads of one client waiting for one resource take turns:
 * the first in line waits, the others send nothing, and a release in the process hands the lock to
 * the next at once. A release by another client wakes the waiter through the release channel each
 * node publishes on; the waiter tries again when the holder's keys run out without a release;
 * where the nodes refuse the channel, the release still works and the waiter falls back to its
 * backoff, with one warning per node; a release that no node could tell the waiter about, because
 * its channel was not subscribed yet, is made up for once it is; the subscription connections close once nobody waits. The
 * waiters here retry only every 30 s and recheck every 60 s, so a grant within the test's bound
 * was a hand-off.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RedlockTurnsIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final RetryPolicy SLOW_POLL =
            RetryPolicy.jitteredBackoff(Duration.ofSeconds(30), Duration.ofSeconds(30));
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));
    /** Longer than the backoff, so that a waiter pauses rather than gives up. */
    private static final Duration LONG_WAIT = Duration.ofSeconds(90);
    /** A waiter that hears no release tries again only after this, or at the end of the holder's TTL. */
    private static final Duration SLOW_RECHECK = Duration.ofSeconds(60);

    private static final String CHANNEL = "quorumlock:released:r";

    private final List<Redlock> clients = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void close() {
        threads.shutdownNow();
        clients.forEach(Redlock::close);
    }

    private Redlock client(RetryPolicy retry) {
        return client(redis.uris(), retry, SLOW_RECHECK);
    }

    private Redlock client(List<String> nodes, RetryPolicy retry, Duration recheck) {
        Redlock redlock = Redlock.builder()
                .nodes(nodes)
                .restartGuard(false)
                .retry(retry)
                .recheck(recheck)
                .build();
        clients.add(redlock);
        return redlock;
    }

    @Test
    void aReleaseInTheProcessHandsTheLockToItsWaiterAtOnce() throws Exception {
        Redlock lock = client(SLOW_POLL);
        Lease held = lock.acquire("r", TTL, Duration.ZERO);

        Future<Lease> waiter = threads.submit(() -> lock.acquire("r", TTL, LONG_WAIT));
        TestTime.await(Duration.ofSeconds(10), () -> lock.waiting("r") == 1, "the waiter to queue");
        held.release();

        waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).release();
    }

    /** How many waiters are in the line of resource {@code r} on node {@code i}. */
    private static long inLine(int i) {
        return inLine(i, "r");
    }

    /** How many waiters are in the line of {@code resource} on node {@code i}. */
    private static long inLine(int i, String resource) {
        try (Jedis jedis = redis.get(i).connect(Duration.ofSeconds(2))) {
            return jedis.zcard(Scripts.line(resource));
        }
    }

    @Test
    void waitersOfDifferentClientsAreServedInTheOrderTheyCameOneAttemptPerRelease() throws Exception {
        Redlock holder = client(SLOW_POLL);
        Lease held = holder.acquire("r", TTL, Duration.ZERO);

        List<Integer> served = new CopyOnWriteArrayList<>();
        List<Future<?>> waiters = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            int number = i;
            Redlock client = client(SLOW_POLL);
            waiters.add(threads.submit(() -> {
                try (Lease lease = client.acquire("r", TTL, LONG_WAIT)) {
                    served.add(number);
                    Thread.sleep(50); // so that the next release finds the others waiting, as before
                }
                return null;
            }));
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> inLine(0) == number && inLine(1) == number && inLine(2) == number,
                    "waiter " + number + " in line on every node");
        }
        held.release();

        for (Future<?> waiter : waiters) {
            waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(served).containsExactly(1, 2, 3, 4, 5);
        // a release returns once a majority is free: the last node's may still be on its way
        TestTime.await(
                Duration.ofSeconds(2),
                () -> inLine(0) == 0 && inLine(1) == 0 && inLine(2) == 0,
                "every node's line empty, each winner's release having left it");
    }

    @Test
    void aWaiterWhoseTurnCameButIsGoneHoldsTheOthersUpOnlyBriefly() throws Exception {
        Redlock holder = client(SLOW_POLL);
        Lease held = holder.acquire("r", TTL, Duration.ZERO);
        for (int i = 0; i < redis.size(); i++) {
            try (Jedis jedis = redis.get(i).connect(Duration.ofSeconds(2))) {
                // a waiter first in line whose client died: its place is kept for 3 s from now
                jedis.zadd(Scripts.line("r"), 0, "42");
                jedis.psetex(Scripts.waiting("r", "42"), NodeLine.PLACE_MILLIS, "1");
            }
        }
        Redlock client = client(SLOW_POLL);
        Future<Lease> waiter = threads.submit(() -> client.acquire("r", TTL, LONG_WAIT));
        TestTime.await(Duration.ofSeconds(10), () -> inLine(0) == 2, "the waiter in line behind the dead one");
        held.release();

        // its backoff is 30 s and its recheck 60 s: only the turn's grace lets it try
        waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).release();
    }

    @Test
    void aWaiterWhoseTurnCameButIsSlowToTakeItIsLetTakeIt() throws Exception {
        List<FaultProxy> proxies =
                redis.servers().servers().stream().map(FaultProxy::inFrontOf).toList();
        try {
            Redlock holder = client(SLOW_POLL);
            Lease held = holder.acquire("r", TTL, Duration.ZERO);
            // a waiter whose every round trip takes 400 ms, as a busy machine may make it: it hears
            // its turn and tries well after the others' turn of 200 ms has passed
            Redlock slow = Redlock.builder()
                    .nodes(proxies.stream().map(FaultProxy::uri).toList())
                    .nodeTimeout(Duration.ofSeconds(2))
                    .restartGuard(false)
                    .retry(SLOW_POLL)
                    .recheck(SLOW_RECHECK)
                    .build();
            clients.add(slow);
            slow.acquire("warm", TTL, Duration.ZERO).release(); // its lanes are open
            proxies.forEach(proxy -> proxy.latency(Duration.ofMillis(200)));
            Future<Lease> first = threads.submit(() -> slow.acquire("r", TTL, LONG_WAIT));
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> inLine(0) == 1 && inLine(1) == 1 && inLine(2) == 1,
                    "the slow waiter in line on every node");
            Redlock fast = client(SLOW_POLL);
            Future<Lease> second = threads.submit(() -> fast.acquire("r", TTL, LONG_WAIT));
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> inLine(0) == 2 && inLine(1) == 2 && inLine(2) == 2,
                    "the fast waiter in line behind it");
            held.release();

            Lease firstLease = first.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(second).as("the waiter behind, while the first holds").isNotDone();
            firstLease.release();
            second.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).release();
        } finally {
            proxies.forEach(FaultProxy::close);
        }
    }

    @Test
    void aWinnerStaysInTheLineUntilItsReleaseTakesItOut() throws Exception {
        Redlock holder = client(SLOW_POLL);
        Lease held = holder.acquire("r", TTL, Duration.ZERO);
        Redlock client = client(SLOW_POLL);
        Future<Lease> waiter = threads.submit(() -> client.acquire("r", TTL, LONG_WAIT));
        TestTime.await(
                Duration.ofSeconds(10),
                () -> inLine(0) == 1 && inLine(1) == 1 && inLine(2) == 1,
                "the waiter in line on every node");
        held.release();

        Lease lease = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        // the grant sent nothing more: the winner is still first in line while it holds
        for (int i = 0; i < redis.size(); i++) {
            assertThat(inLine(i))
                    .as("the winner in node %d's line while it holds", i)
                    .isOne();
        }
        lease.release();
        TestTime.await(
                Duration.ofSeconds(2),
                () -> inLine(0) == 0 && inLine(1) == 0 && inLine(2) == 0,
                "every node's line empty after the winner's release");
    }

    @Test
    void aWinnerLeavesTheLineAlsoOnTheNodesThatDidNotGrantIt() throws Exception {
        Redlock holder = client(SLOW_POLL);
        Lease held = holder.acquire("r", TTL, Duration.ZERO);
        Redlock client = client(SLOW_POLL);
        Future<Lease> waiter = threads.submit(() -> client.acquire("r", TTL, LONG_WAIT));
        TestTime.await(Duration.ofSeconds(10), () -> inLine(2) == 1, "the waiter in line on node 2");
        try (Jedis jedis = redis.get(2).connect(Duration.ofSeconds(2))) {
            jedis.set("r", "another owner's key, left over"); // node 2 refuses the waiter
        }
        held.release();

        Lease lease = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        lease.release();
        // the release does not go to node 2, which never held the winner's key: a leave of its
        // own does, else a later release there would name a waiter that no longer waits
        TestTime.await(
                Duration.ofSeconds(2),
                () -> inLine(0) == 0 && inLine(1) == 0 && inLine(2) == 0,
                "the winner gone from every node's line, node 2's included");
        try (Jedis jedis = redis.get(2).connect(Duration.ofSeconds(2))) {
            jedis.del("r");
        }
    }

    @Test
    void aWaiterWhoseClockIsBehindGoesAheadOfTheLastSecondsWaitersOnly() {
        try (Jedis jedis = redis.get(0).connect(Duration.ofSeconds(2))) {
            long now = NodeLine.newId();
            long anHourAgo = now - (3_600_000_000L << 10);
            long aSecondAgo = now - (1_000_000L << 10);
            for (long id : new long[] {now - (2_000_000L << 10), anHourAgo, now}) {
                jedis.eval(Scripts.JOIN.source(), List.of("skew"), List.of(Long.toString(id), "3000"));
            }
            List<String> line = jedis.zrange(Scripts.line("skew"), 0, -1);
            // the id from a clock an hour behind is placed a second before now, by the node's
            // clock: behind a waiter that came 2 s ago, ahead of one that comes now
            assertThat(line)
                    .containsExactly(
                            Long.toString(now - (2_000_000L << 10)), Long.toString(anHourAgo), Long.toString(now));
            assertThat(jedis.zscore(Scripts.line("skew"), Long.toString(anHourAgo)))
                    .isGreaterThan((double) aSecondAgo - (100_000L << 10));
            jedis.del(Scripts.line("skew"));
        }
    }

    @Test
    void aWaiterThatGivesUpLeavesTheLine() throws Exception {
        Redlock holder = client(SLOW_POLL);
        Lease held = holder.acquire("r", TTL, Duration.ZERO);
        Redlock client = client(SLOW_POLL);
        Duration patience = TestTime.scaled(Duration.ofSeconds(3));
        Future<Lease> waiter = threads.submit(() -> client.acquire("r", TTL, patience));
        TestTime.await(Duration.ofSeconds(10), () -> inLine(0) == 1, "the waiter in line");

        assertThatThrownBy(() -> waiter.get(patience.toMillis() + WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(LockUnavailableException.class);
        for (int i = 0; i < redis.size(); i++) {
            int node = i;
            TestTime.await(Duration.ofSeconds(2), () -> inLine(node) == 0, "the line on node " + i + " empty");
        }
        held.release();
    }

    @Test
    void theThreadsOfOneClientAreServedInTheOrderTheyCame() throws Exception {
        Redlock lock = client(SLOW_POLL);
        Lease held = lock.acquire("r", TTL, Duration.ZERO);

        List<Integer> served = new CopyOnWriteArrayList<>();
        List<Future<?>> waiters = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            int number = i;
            waiters.add(threads.submit(() -> {
                try (Lease lease = lock.acquire("r", TTL, LONG_WAIT)) {
                    served.add(number);
                }
                return null;
            }));
            TestTime.await(Duration.ofSeconds(10), () -> lock.waiting("r") == number, "waiter " + number + " to queue");
        }
        held.release();

        for (Future<?> waiter : waiters) {
            waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(served).containsExactly(1, 2, 3);
    }

    @Test
    void onlyTheFirstInLineOfAClientPollsTheNodes() throws Exception {
        Redlock other = client(SLOW_POLL);
        Lease held = other.acquire("r", TTL, Duration.ZERO);
        Redlock lock = client(RetryPolicy.jitteredBackoff(Duration.ofMillis(50), Duration.ofMillis(50)));
        try (Jedis node = redis.get(0).connect(Duration.ofSeconds(2))) {
            node.configResetStat();

            int waiters = 8;
            Duration wait = Duration.ofMillis(1500);
            List<Future<?>> calls = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                calls.add(threads.submit(() -> {
                    try {
                        lock.acquire("r", TTL, wait).release();
                    } catch (LockUnavailableException expected) {
                        // the other client held it throughout
                    }
                    return null;
                }));
            }
            for (Future<?> call : calls) {
                call.get(WAIT.plus(wait).toMillis(), TimeUnit.MILLISECONDS);
            }

            // One poller: about 1,500 / 50 = 30 attempts, and the 8 first ones; 8 pollers: about 240
            long sets = setCalls(node);
            assertThat(sets)
                    .as("SET commands on one node")
                    .isGreaterThanOrEqualTo(waiters)
                    .isLessThan(100);
        }
        held.release();
    }

    @Test
    void aReleaseByAnotherClientWakesItsWaiterAtOnce() throws Exception {
        Lease held = client(SLOW_POLL).acquire("r", TTL, Duration.ZERO);
        Future<Lease> waiting = waitingElsewhere();
        held.release();

        waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).release();
    }

    @Test
    void aReleaseByAnotherClientWakesItsWaiterAtOnceWhateverTheResourceName() throws Exception {
        // A lone surrogate has no UTF-8 form: the name goes to the nodes, and its channel comes
        // back from them, with '?' in its place.
        String resource = "r\uD800x";
        Lease held = client(SLOW_POLL).acquire(resource, TTL, Duration.ZERO);
        Redlock waiter = client(SLOW_POLL);
        Future<Lease> waiting = threads.submit(() -> waiter.acquire(resource, TTL, LONG_WAIT));
        awaitSubscribers(Scripts.RELEASED + "r?x", 1);
        TestTime.await(
                Duration.ofSeconds(10),
                () -> IntStream.range(0, redis.size()).allMatch(i -> inLine(i, "r?x") == 1),
                "the waiter in line on every node: refused, it sleeps until woken");

        long released = System.nanoTime();
        held.release();
        waiting.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS).release();
        assertThat(Duration.ofNanos(System.nanoTime() - released))
                .as(
                        "from the release to the grant; unwoken, the waiter tries again only at the end of the"
                                + " holder's TTL (%s) or after the recheck (%s)",
                        TTL, SLOW_RECHECK)
                .isLessThan(WAIT);
    }

    @Test
    void aWaiterTriesAgainWhenTheHoldersKeysRunOutWithoutARelease() throws Exception {
        client(SLOW_POLL).acquire("r", Duration.ofSeconds(2), Duration.ZERO); // never released: its keys run out

        Future<Lease> waiting = threads.submit(() -> client(SLOW_POLL).acquire("r", TTL, LONG_WAIT));

        waiting.get(WAIT.plusSeconds(2).toMillis(), TimeUnit.MILLISECONDS).release();
    }

    @Test
    void whereTheNodesRefuseTheChannelTheReleaseWorksAndTheWaiterPollsWithOneWarningPerNode() throws Exception {
        forEachNode(node -> node.aclSetUser("nochannels", "on", ">pw", "~*", "+@all", "resetchannels"));
        try {
            List<String> nodes = redis.servers().servers().stream()
                    .map(node -> "redis://nochannels:pw@" + node.host() + ":" + node.port())
                    .toList();
            ByteArrayOutputStream logged = new ByteArrayOutputStream();
            PrintStream stderr = System.err;
            System.setErr(new PrintStream(new Tee(stderr, logged), true, StandardCharsets.UTF_8));
            try {
                Redlock holder = client(nodes, SLOW_POLL, SLOW_RECHECK);
                Redlock waiter = client(
                        nodes, RetryPolicy.jitteredBackoff(Duration.ofMillis(20), Duration.ofMillis(50)), SLOW_RECHECK);
                for (int round = 0; round < 2; round++) {
                    Lease held = holder.acquire("r", TTL, Duration.ZERO);
                    Future<Lease> waiting = threads.submit(() -> waiter.acquire("r", TTL, LONG_WAIT));
                    TestTime.await(Duration.ofSeconds(10), () -> waiter.waiting("r") == 1, "the waiter to queue");
                    held.release();
                    waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).release();
                }
            } finally {
                System.setErr(stderr);
            }
            String log = logged.toString(StandardCharsets.UTF_8);
            assertThat(log.lines().filter(line -> line.contains("refuses SUBSCRIBE")))
                    .as("warnings in %s", log)
                    .hasSize(3)
                    .allSatisfy(line -> assertThat(line).contains("NOPERM").contains("quorumlock:released:*"));
        } finally {
            forEachNode(node -> node.aclDelUser("nochannels"));
        }
    }

    @Test
    void aReleaseMadeBeforeTheChannelIsHeardAnywhereWakesTheWaiterOnceItIs() throws Exception {
        List<FaultProxy> proxies =
                redis.servers().servers().stream().map(FaultProxy::inFrontOf).toList();
        try {
            Redlock waiter = client(proxies.stream().map(FaultProxy::uri).toList(), SLOW_POLL, SLOW_RECHECK);
            waiter.acquire("warm", TTL, Duration.ZERO).release(); // its lanes are open
            proxies.forEach(FaultProxy::refuseConnections); // its subscription connections are not
            Lease held = client(SLOW_POLL).acquire("r", TTL, Duration.ZERO);
            Future<Lease> waiting = threads.submit(() -> waiter.acquire("r", TTL, LONG_WAIT));
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> proxies.stream().allMatch(proxy -> proxy.acceptedConnections() == 2),
                    "the waiter's subscription connections to be refused");
            held.release(); // heard by nobody

            proxies.forEach(FaultProxy::acceptConnections);
            waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).release();
        } finally {
            proxies.forEach(FaultProxy::close);
        }
    }

    @Test
    void theSubscriptionConnectionsCloseOnceNobodyWaits() throws Exception {
        Lease held = client(SLOW_POLL).acquire("r", TTL, Duration.ZERO);
        Future<Lease> waiting = waitingElsewhere();
        assertThat(subscriberConnections())
                .as("subscriber connections while waiting")
                .isEqualTo(3);
        held.release();
        waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).release();

        awaitSubscribers(0); // 5 s after the wait
        TestTime.await(
                Duration.ofSeconds(20), () -> subscriberConnections() == 0, "the subscription connections to close");
    }

    @Test
    void aClientThatReleasesToAWaiterElsewhereLeavesItTheLockBeforeTakingItAgain() throws Exception {
        Redlock releaser = client(SLOW_POLL);
        Redlock waiter = client(SLOW_POLL);
        int rounds = 8;
        int waiterFirst = 0;
        for (int round = 0; round < rounds; round++) {
            Lease held = releaser.acquire("r", TTL, LONG_WAIT);
            Future<Lease> waiting = threads.submit(() -> waiter.acquire("r", TTL, LONG_WAIT));
            awaitSubscribers(1);
            held.release();
            Future<Lease> again = threads.submit(() -> releaser.acquire("r", TTL, LONG_WAIT));
            Lease first = threads.invokeAny(List.of(
                    () -> waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS),
                    () -> again.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)));
            waiterFirst += waiting.isDone() && !again.isDone() ? 1 : 0;
            first.release();
            (first == waiting.get() ? again : waiting)
                    .get(WAIT.toMillis(), TimeUnit.MILLISECONDS)
                    .release();
        }
        // Without the yield the releaser, which needs no wake-up, takes it again almost every time.
        assertThat(waiterFirst)
                .as("rounds the waiter took first, of %d", rounds)
                .isGreaterThanOrEqualTo(rounds / 2 + 1);
    }

    /** A client other than the holder's waiting for r, once it listens for releases on every node. */
    private Future<Lease> waitingElsewhere() {
        Redlock waiter = client(SLOW_POLL);
        Future<Lease> waiting = threads.submit(() -> waiter.acquire("r", TTL, LONG_WAIT));
        awaitSubscribers(1);
        return waiting;
    }

    /** Until every node has {@code count} subscribers of the channel of resource r. */
    private static void awaitSubscribers(long count) {
        awaitSubscribers(CHANNEL, count);
    }

    /** Until every node has {@code count} subscribers of {@code channel}. */
    private static void awaitSubscribers(String channel, long count) {
        TestTime.await(
                Duration.ofSeconds(20),
                () -> redis.servers().servers().stream().allMatch(node -> {
                    try (Jedis jedis = node.connect(Duration.ofSeconds(2))) {
                        Map<String, Long> subscribers = jedis.pubsubNumSub(channel);
                        return subscribers.getOrDefault(channel, 0L) == count;
                    }
                }),
                count + " subscriber(s) of " + channel + " on every node");
    }

    /** Connections of the lock whose last command was a (un)subscription, on all nodes. */
    private static long subscriberConnections() {
        long count = 0;
        for (RedisServer node : redis.servers().servers()) {
            try (Jedis jedis = node.connect(Duration.ofSeconds(2))) {
                count += jedis.clientList()
                        .lines()
                        .filter(line -> line.contains("name=quorumlock "))
                        .filter(line -> line.contains("cmd=subscribe") || line.contains("cmd=unsubscribe"))
                        .count();
            }
        }
        return count;
    }

    private static void forEachNode(Consumer<Jedis> command) {
        for (RedisServer node : redis.servers().servers()) {
            try (Jedis jedis = node.connect(Duration.ofSeconds(2))) {
                command.accept(jedis);
            }
        }
    }

    private static long setCalls(Jedis node) {
        for (String line : node.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_set:")) {
                for (String part : line.substring("cmdstat_set:".length()).split(",")) {
                    if (part.startsWith("calls=")) {
                        return Long.parseLong(part.substring("calls=".length()));
                    }
                }
            }
        }
        return 0;
    }
}
