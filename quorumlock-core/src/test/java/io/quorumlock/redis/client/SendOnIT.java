package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.internal.Ticker;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What must follow a command on its own connection (a WAIT behind a write, which counts the
 * replicas of that connection's writes) is never sent on the connection that replaced it: it is
 * answered as not sent, where a plain request opens the new connection.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SendOnIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(1);

    private static Reply call(Transport.Lane lane, java.util.function.Consumer<Transport.ReplyHandler> send)
            throws InterruptedException {
        AtomicReference<Reply> reply = new AtomicReference<>();
        long start = System.nanoTime();
        send.accept((request, value, link) -> reply.set(value));
        lane.await(() -> reply.get() != null, () -> start + TimeUnit.SECONDS.toNanos(10));
        return reply.get();
    }

    private static Reply get(Transport.Lane lane, Transport.Link link) {
        try {
            return call(lane, h -> link.send(Command.get("k"), h));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aCommandSentOnAConnectionThatWasReplacedIsNotSentOnTheNewOne() throws Exception {
        try (FaultProxy proxy = FaultProxy.inFrontOf(redis.get(0));
                NioTransport transport = new NioTransport(
                        List.of(NodeAddress.parse(proxy.uri())),
                        TimeUnit.SECONDS.toNanos(2),
                        TimeUnit.SECONDS.toNanos(2),
                        1,
                        Ticker.SYSTEM,
                        null,
                        List.of())) {
            Transport.Lane lane = transport.borrow("k", null);
            Transport.Link link = lane.link(0);
            long none = link.connection();
            assertThat(call(lane, h -> link.sendOn(none, Command.waitForReplicas(0, 0), h)))
                    .as("before any connection: nothing to follow")
                    .isInstanceOf(Reply.Failure.class);
            assertThat(call(lane, h -> link.send(Command.get("k"), h))).isEqualTo(Reply.Nil.NIL);
            long first = link.connection();
            assertThat(first).as("the connection's id").isNotNegative();
            assertThat(call(lane, h -> link.sendOn(first, Command.waitForReplicas(0, 0), h)))
                    .as("on its own connection")
                    .isInstanceOf(Reply.Int.class);

            proxy.reset(); // the connection is dropped; the next plain request opens another
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> !(get(lane, link) instanceof Reply.Failure),
                    "a new connection to answer a plain request");
            assertThat(link.connection()).as("the new connection's id").isNotEqualTo(first);

            Reply wait = call(lane, h -> link.sendOn(first, Command.waitForReplicas(0, 0), h));
            assertThat(wait).isInstanceOf(Reply.Failure.class);
            assertThat(((Reply.Failure) wait).detail()).contains("the connection it had to follow was dropped");
            long second = link.connection();
            assertThat(call(lane, h -> link.sendOn(second, Command.waitForReplicas(0, 0), h)))
                    .as("on the new connection, named")
                    .isInstanceOf(Reply.Int.class);
            transport.giveBack(lane, "k");
        }
    }
}
