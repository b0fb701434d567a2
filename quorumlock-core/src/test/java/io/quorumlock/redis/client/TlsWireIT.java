package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.internal.Ticker;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.TlsMaterial;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bytes of a TLS connection on a real redis-server node: records split and left over. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TlsWireIT {

    private static final Duration NODE_TIMEOUT = Duration.ofMillis(200);
    private static final Duration PROMPTLY = TestTime.scaled(Duration.ofMillis(1500));

    private static TlsMaterial material;
    private static RedisServer tlsNode;

    @BeforeAll
    static void startNode() {
        material = TlsMaterial.generate();
        tlsNode = RedisServer.startTls(material, false);
    }

    @AfterAll
    static void stopNode() {
        if (tlsNode != null) {
            tlsNode.close();
        }
        if (material != null) {
            material.close();
        }
    }

    /**
     * A reply of 100 KB comes in several TLS records, and two of them pipelined in more: each is
     * read whole, however the records fall into the socket reads.
     */
    @Test
    void aReplyLongerThanATlsRecordIsReadWhole() throws Exception {
        String value = "v".repeat(100_000);
        RedisServer node = tlsNode;
        try (redis.clients.jedis.Jedis jedis = node.connect(Duration.ofSeconds(5))) {
            jedis.set("long-value", value);
        }
        try (NioTransport transport = new NioTransport(
                List.of(NodeAddress.parse(node.uri())),
                NODE_TIMEOUT.multipliedBy(10).toNanos(),
                NODE_TIMEOUT.multipliedBy(10).toNanos(),
                1,
                Ticker.SYSTEM,
                TlsConfig.of(material.clientContext()),
                List.of())) {
            Transport.Lane lane = transport.borrow("long-value", null);
            List<Reply> replies = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int i = 0; i < 2; i++) {
                lane.link(0).send(Command.get("long-value"), (request, reply, link) -> replies.add(reply));
            }
            long until = System.nanoTime() + PROMPTLY.toNanos();
            boolean answered = lane.await(() -> replies.size() == 2, () -> until);
            transport.giveBack(lane, "long-value");
            assertThat(answered).as("both replies read in time").isTrue();
            assertThat(replies).containsExactly(new Reply.Bulk(value), new Reply.Bulk(value));
        } finally {
            try (redis.clients.jedis.Jedis jedis = node.connect(Duration.ofSeconds(5))) {
                jedis.del("long-value");
            }
        }
    }

    /**
     * A request longer than the socket takes at once, through a slow link: the engine keeps the end
     * of the last TLS record after a partial write, and the next writable event must send it.
     * Before, nothing was written on that event (no request bytes were left) while OP_WRITE stayed
     * set: the selector spun and the request never reached the node.
     */
    @Test
    void theEndOfALastRecordLeftAfterAPartialWriteIsSentOnTheNextWritableEvent() throws Exception {
        RedisServer node = tlsNode;
        try (io.quorumlock.testkit.FaultProxy proxy = io.quorumlock.testkit.FaultProxy.inFrontOf(node);
                java.nio.channels.Selector selector = java.nio.channels.Selector.open();
                java.nio.channels.SocketChannel channel = java.nio.channels.SocketChannel.open()) {
            proxy.bandwidth(io.quorumlock.testkit.FaultProxy.Direction.CLIENT_TO_SERVER, 1_000_000);
            channel.setOption(java.net.StandardSocketOptions.SO_SNDBUF, 4096);
            channel.connect(new java.net.InetSocketAddress("127.0.0.1", proxy.port()));
            channel.configureBlocking(false);
            java.nio.channels.SelectionKey key = channel.register(selector, java.nio.channels.SelectionKey.OP_READ);
            TlsConfig tls = TlsConfig.of(material.clientContext());
            TlsWire wire = new TlsWire(channel, key, false, tls.engine("127.0.0.1", proxy.port()), tls);
            long deadline =
                    System.nanoTime() + TestTime.scaled(Duration.ofSeconds(12)).toNanos();
            while (!wire.connect()) {
                assertThat(System.nanoTime()).as("handshake done in time").isLessThan(deadline);
                selector.select(50);
                selector.selectedKeys().clear();
            }
            // EXISTS with a 3 MB key: more than the proxy holds, written as the slow link takes it.
            java.nio.ByteBuffer request =
                    Resp.command(java.nio.ByteBuffer.allocate(16), "EXISTS", "k".repeat(3_000_000));
            request.flip();
            java.nio.ByteBuffer in = java.nio.ByteBuffer.allocate(64);
            wire.write(request);
            wire.interest(request.hasRemaining());
            String reply = "";
            while (!reply.endsWith("\r\n")) {
                assertThat(System.nanoTime())
                        .as(
                                "the reply to a request whose last record was written only in part, %s bytes left",
                                request.remaining())
                        .isLessThan(deadline);
                selector.select(100);
                selector.selectedKeys().clear();
                if (key.isWritable()) {
                    wire.write(request);
                    wire.interest(request.hasRemaining());
                }
                if (key.isReadable() && wire.read(in) > 0) {
                    reply = new String(in.array(), 0, in.position(), java.nio.charset.StandardCharsets.US_ASCII);
                }
            }
            assertThat(reply).isEqualTo(":0\r\n");
        }
    }
}
