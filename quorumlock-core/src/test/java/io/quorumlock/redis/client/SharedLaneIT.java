package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.internal.Ticker;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * Callers sharing one lane: whoever polls its selector reads the replies for all of them, and a
 * caller left waiting is never left without a poller, nor its connection unwatched.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SharedLaneIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(2);

    private static final long LONG_WAIT = TimeUnit.SECONDS.toNanos(10);

    /** A request on a link and its reply, awaited on the lane: how long the wait took, and whether it was answered. */
    private record Wait(Duration took, Reply reply) {}

    private static Wait getAndAwait(Transport.Lane lane, int node, long waitNanos) throws InterruptedException {
        AtomicReference<Reply> reply = new AtomicReference<>();
        long start = System.nanoTime();
        lane.link(node).send(Command.get("shared-lane"), (request, value, link) -> reply.set(value));
        lane.await(() -> reply.get() != null, () -> start + waitNanos);
        return new Wait(Duration.ofNanos(System.nanoTime() - start), reply.get());
    }

    private static NioTransport transport(List<String> uris) {
        List<NodeAddress> nodes = uris.stream().map(NodeAddress::parse).toList();
        return new NioTransport(
                nodes, TimeUnit.SECONDS.toNanos(5), TimeUnit.SECONDS.toNanos(5), 1, Ticker.SYSTEM, null, List.of());
    }

    /**
     * A polls (its reply is slow), B waits behind it on the same connection; A's round ends first
     * and A leaves: B must take the polling over at once, not sleep until its own deadline.
     */
    @Test
    void aCallerWaitingBehindThePollerTakesOverWhenThePollerLeaves() throws Exception {
        try (FaultProxy proxy = FaultProxy.inFrontOf(redis.get(0));
                NioTransport transport = transport(List.of(proxy.uri()))) {
            warmUp(transport); // the connection is up before the latency is added
            proxy.latency(Duration.ofMillis(150));
            Transport.Lane first = transport.borrow("shared-lane", null);
            CompletableFuture<Wait> a = CompletableFuture.supplyAsync(() -> awaited(first, 0));
            Thread.sleep(100); // A is polling now, its reply still on the way
            Transport.Lane second = transport.borrow("shared-lane", null);
            assertThat(second).as("one lane at most: B shares A's").isSameAs(first);
            Wait b = getAndAwait(second, 0, LONG_WAIT);
            Wait aWait = a.get(20, TimeUnit.SECONDS);
            transport.giveBack(first, "shared-lane");
            transport.giveBack(second, "shared-lane");
            assertThat(aWait.reply()).as("A's reply").isNotNull().isNotInstanceOf(Reply.Failure.class);
            assertThat(b.reply()).as("B's reply").isNotNull().isNotInstanceOf(Reply.Failure.class);
            assertThat(b.took()).as("B's wait (its deadline was 10 s away)").isLessThan(Duration.ofSeconds(2));
        }
    }

    /**
     * A polls, waiting seconds for a slow node; B's first request to another node opens a new
     * connection while A's select is under way: that select must watch it, so B's reply is read
     * when it comes, not when A's select ends.
     */
    @Test
    void aConnectionOpenedWhileAnotherCallerPollsIsWatchedAtOnce() throws Exception {
        try (FaultProxy slow = FaultProxy.inFrontOf(redis.get(0));
                NioTransport transport =
                        transport(List.of(slow.uri(), redis.get(1).uri()))) {
            slow.latency(Duration.ofMillis(1500));
            Transport.Lane lane = transport.borrow("shared-lane", null);
            CompletableFuture<Wait> a = CompletableFuture.supplyAsync(() -> awaited(lane, 0));
            Thread.sleep(200); // A is in its select, for seconds
            Wait b = getAndAwait(lane, 1, TimeUnit.SECONDS.toNanos(8));
            Wait aWait = a.get(20, TimeUnit.SECONDS);
            transport.giveBack(lane, "shared-lane");
            assertThat(b.reply()).as("B's reply").isNotNull().isNotInstanceOf(Reply.Failure.class);
            // Read only when A's select ends (its reply 2 x 1.5 s away), B's wait would be at least 2.8 s.
            assertThat(b.took()).as("B's wait (A's select lasts seconds)").isLessThan(Duration.ofSeconds(2));
            assertThat(aWait.reply()).as("A's reply").isNotNull().isNotInstanceOf(Reply.Failure.class);
        }
    }

    /**
     * A reply the node sent long ago but nobody has read yet (no caller waited on the lane since)
     * is not a reply the node owes: the next request must go out, not be refused as if the node
     * had been silent for longer than the node timeout.
     */
    @Test
    void aReplyThatCameButWasNotReadIsNotOwed() throws Exception {
        List<NodeAddress> nodes = List.of(NodeAddress.parse(redis.get(0).uri()));
        long timeout = TimeUnit.MILLISECONDS.toNanos(100);
        try (NioTransport transport = new NioTransport(nodes, timeout, timeout, 1, Ticker.SYSTEM, null, List.of())) {
            warmUp(transport);
            Transport.Lane lane = transport.borrow("shared-lane", null);
            AtomicReference<Reply> unread = new AtomicReference<>();
            long answered = getCalls();
            lane.link(0).send(Command.get("shared-lane"), (request, value, link) -> unread.set(value));
            TestTime.await(Duration.ofSeconds(1), () -> getCalls() > answered, "the node to answer the GET");
            // Left in the socket, nobody waiting on the lane, for 3 node timeouts: owed that long,
            // it would be refused; 0.3 s is still well below the 2 s after which a link is stale.
            Thread.sleep(300);
            Wait next = getAndAwait(lane, 0, LONG_WAIT);
            transport.giveBack(lane, "shared-lane");
            assertThat(next.reply()).as("the next request's reply").isNotInstanceOf(Reply.Failure.class);
            assertThat(unread.get()).as("the reply left unread").isNotNull().isNotInstanceOf(Reply.Failure.class);
        }
    }

    private static Wait awaited(Transport.Lane lane, int node) {
        try {
            return getAndAwait(lane, node, LONG_WAIT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** How many GET commands node 0 has executed. */
    private static long getCalls() {
        try (Jedis jedis = redis.get(0).connect(Duration.ofSeconds(1))) {
            return jedis.info("commandstats")
                    .lines()
                    .filter(line -> line.startsWith("cmdstat_get:"))
                    .map(line -> line.replaceAll("^cmdstat_get:calls=([0-9]+),.*", "$1"))
                    .mapToLong(Long::parseLong)
                    .sum();
        }
    }

    private static void warmUp(NioTransport transport) throws InterruptedException {
        Transport.Lane lane = transport.borrow("shared-lane", null);
        try {
            assertThat(getAndAwait(lane, 0, LONG_WAIT).reply()).isNotInstanceOf(Reply.Failure.class);
        } finally {
            transport.giveBack(lane, "shared-lane");
        }
    }
}
