package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.internal.Ticker;
import io.quorumlock.redis.client.NioTransport;
import io.quorumlock.redis.client.NodeAddress;
import io.quorumlock.redis.client.Transport;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.FaultProxy.Direction;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lanes are added while more callers are in rounds than lanes are open. Meanwhile a resource keeps
 * the lane of its rounds under way, and the follow-ups of a grant wait on the grant's lane.
 */
class LaneGrowthIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final long TTL_MILLIS = 10_000;

    /** A resource that the hash puts on the second of two lanes, and on the first of one. */
    private static final String ON_SECOND_LANE = IntStream.range(0, 100)
            .mapToObj(i -> "resource-" + i)
            .filter(r -> Math.floorMod(r.hashCode(), 2) == 1)
            .findFirst()
            .orElseThrow();

    private static NioTransport transport(List<String> uris, Duration nodeTimeout) {
        return new NioTransport(
                uris.stream().map(NodeAddress::parse).toList(),
                nodeTimeout.toNanos(),
                nodeTimeout.toNanos(),
                2,
                Ticker.SYSTEM,
                null,
                Scripts.ALL);
    }

    @Test
    void roundsOnOneResourceUnderWayAtOnceShareALaneWhileALaneIsAdded() {
        try (NioTransport transport = transport(redis.uris(), Duration.ofSeconds(1))) {
            Transport.Lane first = transport.borrow(ON_SECOND_LANE, null);
            Transport.Lane second = transport.borrow(ON_SECOND_LANE, null); // a second lane opens now
            Transport.Lane other = transport.borrow("other", null);
            transport.giveBack(first, ON_SECOND_LANE);
            transport.giveBack(second, ON_SECOND_LANE);
            transport.giveBack(other, "other");
            assertThat(second)
                    .as("the lane of the round under way on the resource")
                    .isSameAs(first);
            Transport.Lane later = transport.borrow(ON_SECOND_LANE, null);
            transport.giveBack(later, ON_SECOND_LANE);
            assertThat(later)
                    .as("with no round under way, the hash chooses among the two lanes")
                    .isNotSameAs(first);
        }
    }

    /**
     * A grant whose reply from a slow node is still owed, then a lane added by another caller: the
     * extension is sent behind the grant on the grant's connection, and must be read there. Before,
     * the extension's round waited on the new lane, where nobody read that node's yes: with a
     * second node cut off, the extension failed with one vote of three.
     */
    @Test
    void anExtensionBehindAGrantStillOwedIsReadAfterALaneWasAdded() {
        Duration nodeTimeout = TestTime.scaled(Duration.ofSeconds(1));
        try (FaultProxies proxies = FaultProxies.inFrontOf(redis.servers());
                NioTransport transport = transport(proxies.uris(), nodeTimeout)) {
            Rounds rounds = new Rounds(
                    transport,
                    proxies.uris(),
                    nodeTimeout,
                    nodeTimeout,
                    0.01,
                    Ticker.SYSTEM,
                    false,
                    ReplicaSync.NONE,
                    io.quorumlock.internal.LockEvents.of("redis", io.quorumlock.LockListener.NONE),
                    io.quorumlock.internal.Timers.threads("test", 1));
            Rounds.Outcome warm = rounds.grant("warm-up", "w", TTL_MILLIS);
            assertThat(warm.held()).isTrue();
            assertThat(rounds.release("warm-up", "w", warm.round())).isTrue();

            proxies.get(2).latency(Direction.SERVER_TO_CLIENT, nodeTimeout.dividedBy(3), Duration.ZERO);
            Rounds.Outcome granted = rounds.grant(ON_SECOND_LANE, "t", TTL_MILLIS);
            assertThat(granted.held())
                    .as("granted by nodes 0 and 1: %s", granted.answers())
                    .isTrue();

            Transport.Lane busy = transport.borrow("busy", null); // another caller in a round
            try {
                proxies.get(1).partition();
                Rounds.Outcome extended =
                        rounds.extend(ON_SECOND_LANE, "t", TTL_MILLIS, granted.round(), Long.MAX_VALUE);
                assertThat(extended.held())
                        .as("extended by nodes 0 and 2: %s", extended.answers())
                        .isTrue();
            } finally {
                transport.giveBack(busy, "busy");
                proxies.clearFaults();
            }
            rounds.release(ON_SECOND_LANE, "t", granted.round());
        }
    }
}
