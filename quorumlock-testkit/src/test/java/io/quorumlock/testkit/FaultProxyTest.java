package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.testkit.FaultProxy.Direction;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The fault proxy in front of an echo server, through plain sockets. */
@Timeout(30)
class FaultProxyTest {

    /** How long a test waits to see that nothing arrives. */
    private static final Duration SILENCE = Duration.ofMillis(200);

    private EchoServer echo;
    private FaultProxy proxy;
    private final List<Socket> clients = new ArrayList<>();

    @BeforeEach
    void start() throws IOException {
        echo = EchoServer.start();
        proxy = FaultProxy.start("127.0.0.1", echo.port());
    }

    @AfterEach
    void stop() throws IOException {
        for (Socket client : clients) {
            client.close();
        }
        proxy.close();
        echo.close();
        assertThat(proxyThreads()).as("proxy threads left running").isEmpty();
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket();
        clients.add(socket);
        // Options before the connect: the proxy may reset a refused connection at once.
        socket.setTcpNoDelay(true);
        socket.setSoTimeout((int) TestTime.scaled(Duration.ofSeconds(5)).toMillis());
        socket.connect(new InetSocketAddress("127.0.0.1", proxy.port()), 2_000);
        return socket;
    }

    private static void send(Socket socket, String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
    }

    private static String receive(Socket socket, int length) throws IOException {
        byte[] bytes = socket.getInputStream().readNBytes(length);
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    private static void assertNothingArrivesFor(Socket socket, Duration silence) throws IOException {
        int timeout = socket.getSoTimeout();
        socket.setSoTimeout((int) silence.toMillis());
        try {
            assertThatThrownBy(() -> socket.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
        } finally {
            socket.setSoTimeout(timeout);
        }
    }

    /** Reads until the proxy ends the connection; true if it did with a reset or an end of stream. */
    /**
     * Connects to {@code port} expecting the proxy to end the connection at once: true if it did,
     * whether the reset came before the connect returned (a race on loopback) or after.
     */
    private boolean connectsAndIsEnded(int port) throws IOException {
        Socket socket = new Socket();
        clients.add(socket);
        socket.setSoTimeout((int) TestTime.scaled(Duration.ofSeconds(5)).toMillis());
        try {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
        } catch (SocketException e) {
            return true; // reset before the connect returned
        }
        return endedByProxy(socket);
    }

    /** Connects, and waits until the proxy has reached the server: a fault set after that applies to an open connection. */
    private Socket connectThrough() throws IOException {
        int before = echo.accepted();
        Socket socket = connect();
        TestTime.await(Duration.ofSeconds(5), () -> echo.accepted() > before, "the proxy to reach the server");
        return socket;
    }

    private static boolean endedByProxy(Socket socket) {
        try {
            return socket.getInputStream().read() < 0;
        } catch (SocketException e) {
            return true; // connection reset
        } catch (IOException e) {
            return false;
        }
    }

    private static List<Thread> proxyThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("quorumlock-fault-proxy-"))
                .toList();
    }

    private static long roundTripNanos(Socket socket) throws IOException {
        long start = System.nanoTime();
        send(socket, "p");
        assertThat(receive(socket, 1)).isEqualTo("p");
        return System.nanoTime() - start;
    }

    /** Round trips in milliseconds, sorted. */
    private static long[] roundTripsMillis(Socket socket, int count) throws IOException {
        long[] millis = new long[count];
        for (int i = 0; i < count; i++) {
            millis[i] = Duration.ofNanos(roundTripNanos(socket)).toMillis();
        }
        Arrays.sort(millis);
        return millis;
    }

    private static long median(long[] sorted) {
        return sorted[sorted.length / 2];
    }

    private static long max(long[] sorted) {
        return sorted[sorted.length - 1];
    }

    /**
     * Asserts that no round trip took less than {@code least}, which the proxy guarantees, and that
     * the median took at most {@code most} plus some slack (30 ms: a loaded machine delays about
     * every other round trip by 20 ms, and a latency applied twice would add 40 ms or more); a
     * single round trip may take longer on a loaded machine.
     */
    private static void assertRoundTrips(long[] sorted, long least, long most) {
        assertThat(sorted[0])
                .as("the shortest round trip of %s", Arrays.toString(sorted))
                .isGreaterThanOrEqualTo(least);
        assertThat(median(sorted))
                .as("the median round trip of %s", Arrays.toString(sorted))
                .isLessThanOrEqualTo(
                        most + TestTime.scaled(Duration.ofMillis(30)).toMillis());
    }

    // ---- forwarding ---------------------------------------------------------------------------------

    @Test
    void forwardsBothWaysAndClosesWhenTheClientCloses() throws IOException {
        Socket client = connect();
        send(client, "hello");
        assertThat(receive(client, 5)).isEqualTo("hello");
        byte[] big = new byte[1_000_000];
        Arrays.fill(big, (byte) 'x');
        Thread writer = new Thread(() -> {
            try {
                client.getOutputStream().write(big);
            } catch (IOException e) {
                // the assertion below fails then
            }
        });
        writer.start();
        assertThat(client.getInputStream().readNBytes(big.length)).isEqualTo(big);
        assertThat(proxy.openConnections()).isEqualTo(1);
        assertThat(proxy.acceptedConnections()).isEqualTo(1);
        assertThat(proxy.uri()).isEqualTo("127.0.0.1:" + proxy.port()).isEqualTo(proxy.address());
        assertThat(proxy.upstream()).isEqualTo("127.0.0.1:" + echo.port());

        client.close();
        TestTime.await(Duration.ofSeconds(5), () -> proxy.openConnections() == 0, "the proxy to close the connection");
        TestTime.await(Duration.ofSeconds(5), () -> echo.open() == 0, "the server to see the connection closed");
    }

    @Test
    void aClientOfADownServerIsReset() throws IOException {
        int nothing = Processes.freePort("127.0.0.1");
        try (FaultProxy toNothing = FaultProxy.start("127.0.0.1", nothing)) {
            assertThat(connectsAndIsEnded(toNothing.port())).isTrue();
        }
    }

    // ---- latency ------------------------------------------------------------------------------------

    @Test
    void latencyDelaysEachDirectionByWhatWasAsked() throws IOException {
        Socket client = connect();
        long[] direct = roundTripsMillis(client, 5);
        assertThat(median(direct)).isLessThan(20);

        proxy.latency(Direction.CLIENT_TO_SERVER, Duration.ofMillis(40), Duration.ZERO);
        long[] oneWay = roundTripsMillis(client, 10);
        assertRoundTrips(oneWay, 40, 40);

        proxy.latency(Duration.ofMillis(40)); // both ways
        long[] bothWays = roundTripsMillis(client, 10);
        assertRoundTrips(bothWays, 80, 80);

        proxy.latency(Direction.SERVER_TO_CLIENT, Duration.ZERO, Duration.ZERO);
        assertRoundTrips(roundTripsMillis(client, 5), 40, 40);

        proxy.clearLatency();
        assertThat(median(roundTripsMillis(client, 5))).isLessThan(20);
        System.out.printf(
                "fault proxy round trips (ms): direct %s; 40 ms one way %s; 40 ms both ways %s%n",
                Arrays.toString(direct), Arrays.toString(oneWay), Arrays.toString(bothWays));
    }

    @Test
    void jitterStaysWithinItsBoundsAndNeverReordersBytes() throws IOException {
        Socket client = connect();
        proxy.latency(Direction.CLIENT_TO_SERVER, Duration.ofMillis(30), Duration.ofMillis(20));
        long[] jittered = roundTripsMillis(client, 30);
        assertRoundTrips(jittered, 10, 40); // uniform from 10 to 50 ms: the median near 30
        assertThat(jittered[jittered.length * 3 / 4] - jittered[jittered.length / 4])
                .as("the delays vary: %s", Arrays.toString(jittered))
                .isGreaterThanOrEqualTo(5);

        byte[] sent = new byte[200];
        for (int i = 0; i < sent.length; i++) {
            sent[i] = (byte) i;
            client.getOutputStream().write(sent[i]);
            client.getOutputStream().flush();
            LockSupport.parkNanos(Duration.ofMillis(1).toNanos()); // separate chunks, each with its own delay
        }
        assertThat(client.getInputStream().readNBytes(sent.length)).isEqualTo(sent);
        System.out.printf("fault proxy 30 +/- 20 ms one way (ms): %s%n", Arrays.toString(jittered));
    }

    // ---- partitions ---------------------------------------------------------------------------------

    @Test
    void aPartitionHoldsTheBytesOfOpenConnectionsAndHealingDeliversThemInOrder() throws IOException {
        Socket client = connect();
        send(client, "before");
        assertThat(receive(client, 6)).isEqualTo("before");

        proxy.partition();
        send(client, "held-");
        send(client, "back");
        assertNothingArrivesFor(client, SILENCE);
        assertThat(echo.received()).as("nothing reached the server").isEqualTo(6);
        assertThat(proxy.openConnections()).as("nothing was reset").isEqualTo(1);

        proxy.heal();
        assertThat(receive(client, 9)).isEqualTo("held-back");
        send(client, "after");
        assertThat(receive(client, 5)).isEqualTo("after");
    }

    @Test
    void aOneWayPartitionLetsRequestsThroughAndHoldsTheReplies() throws IOException {
        Socket client = connectThrough(); // a connection opened during a partition would be held whole
        proxy.partition(Direction.SERVER_TO_CLIENT);
        send(client, "abc");
        TestTime.await(Duration.ofSeconds(5), () -> echo.received() == 3, "the request to reach the server");
        assertNothingArrivesFor(client, SILENCE);
        proxy.heal();
        assertThat(receive(client, 3)).isEqualTo("abc");

        proxy.partition(Direction.CLIENT_TO_SERVER);
        send(client, "def");
        assertNothingArrivesFor(client, SILENCE);
        assertThat(echo.received()).isEqualTo(3);
        proxy.heal();
        assertThat(receive(client, 3)).isEqualTo("def");
    }

    @Test
    void aConnectionOpenedDuringAPartitionHangsUntilItHeals() throws IOException {
        proxy.partition(Direction.SERVER_TO_CLIENT);
        Socket client = connect(); // the kernel accepts it
        send(client, "late");
        assertNothingArrivesFor(client, SILENCE);
        assertThat(echo.accepted()).as("the server saw no connection").isZero();
        assertThat(proxy.openConnections()).isEqualTo(1);

        proxy.heal();
        assertThat(receive(client, 4)).isEqualTo("late");
        assertThat(echo.accepted()).isEqualTo(1);
    }

    @Test
    void aResetDuringAPartitionDropsTheHeldBytes() throws IOException {
        Socket client = connect();
        send(client, "x");
        assertThat(receive(client, 1)).isEqualTo("x");
        proxy.partition();
        send(client, "lost");
        proxy.reset();
        assertThat(endedByProxy(client)).isTrue();
        proxy.heal();
        TestTime.await(Duration.ofSeconds(5), () -> echo.open() == 0, "the server to see its connection reset");
        assertThat(echo.received())
                .as("the held bytes never reached the server")
                .isEqualTo(1);
    }

    // ---- reset and refuse ---------------------------------------------------------------------------

    @Test
    void resetClosesEveryOpenConnectionAndNewOnesWork() throws IOException {
        Socket first = connect();
        Socket second = connect();
        send(first, "1");
        send(second, "2");
        assertThat(receive(first, 1)).isEqualTo("1");
        assertThat(receive(second, 1)).isEqualTo("2");

        proxy.reset();
        assertThat(proxy.openConnections()).isZero();
        assertThat(endedByProxy(first)).isTrue();
        assertThat(endedByProxy(second)).isTrue();
        TestTime.await(Duration.ofSeconds(5), () -> echo.open() == 0, "the server to see both connections reset");

        Socket third = connect();
        send(third, "3");
        assertThat(receive(third, 1)).isEqualTo("3");
    }

    @Test
    void refusingClosesNewConnectionsAtOnceAndKeepsOpenOnes() throws IOException {
        Socket open = connect();
        send(open, "a");
        assertThat(receive(open, 1)).isEqualTo("a");

        proxy.refuseConnections();
        assertThat(connectsAndIsEnded(proxy.port())).isTrue();
        assertThat(echo.accepted()).isEqualTo(1);
        send(open, "b");
        assertThat(receive(open, 1)).as("the open connection goes on").isEqualTo("b");

        proxy.acceptConnections();
        Socket accepted = connect();
        send(accepted, "c");
        assertThat(receive(accepted, 1)).isEqualTo("c");
        assertThat(proxy.acceptedConnections()).isEqualTo(3);
    }

    // ---- bandwidth ----------------------------------------------------------------------------------

    @Test
    void theBandwidthCapRoughlyHoldsInEachDirection() throws IOException {
        Socket client = connect();
        int size = 50_000;
        long rate = 100_000; // bytes per second: 0.5 s for 50 kB

        proxy.bandwidth(Direction.CLIENT_TO_SERVER, rate);
        long start = System.nanoTime();
        client.getOutputStream().write(new byte[size]);
        TestTime.await(Duration.ofSeconds(5), () -> echo.received() == size, "the bytes to reach the server");
        Duration toServer = Duration.ofNanos(System.nanoTime() - start);
        client.getInputStream().readNBytes(size);

        proxy.clearBandwidth().bandwidth(Direction.SERVER_TO_CLIENT, rate);
        start = System.nanoTime();
        client.getOutputStream().write(new byte[size]);
        client.getInputStream().readNBytes(size);
        Duration toClient = Duration.ofNanos(System.nanoTime() - start);

        proxy.clearBandwidth();
        start = System.nanoTime();
        client.getOutputStream().write(new byte[size]);
        client.getInputStream().readNBytes(size);
        Duration uncapped = Duration.ofNanos(System.nanoTime() - start);

        Duration expected = Duration.ofMillis(500);
        for (Duration capped : List.of(toServer, toClient)) {
            assertThat(capped)
                    .isBetween(expected.multipliedBy(7).dividedBy(10), TestTime.scaled(expected.multipliedBy(3)));
        }
        assertThat(uncapped).isLessThan(TestTime.scaled(expected.dividedBy(2)));
        System.out.printf(
                "fault proxy 50 kB at 100 kB/s: to server %d ms, to client %d ms; uncapped %d ms%n",
                toServer.toMillis(), toClient.toMillis(), uncapped.toMillis());
    }

    // ---- arguments and close ------------------------------------------------------------------------

    @Test
    void badSettingsAreRefusedNamingThem() {
        assertThatThrownBy(() -> proxy.latency(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("latency must not be negative, was PT-0.001S");
        assertThatThrownBy(() -> proxy.latency(Direction.BOTH, Duration.ZERO, Duration.ofMillis(-5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("jitter must not be negative");
        assertThatThrownBy(() -> proxy.bandwidth(Direction.BOTH, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bytesPerSecond must be at least 1, was 0");
        assertThatThrownBy(() -> FaultProxy.start("127.0.0.1", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("port must be between 1 and 65535, was 0");
    }

    @Test
    void closeEndsTheThreadTheConnectionsAndTheSwitches() throws IOException {
        Socket client = connect();
        send(client, "x");
        assertThat(receive(client, 1)).isEqualTo("x");
        proxy.partition().latency(Duration.ofMillis(5));
        assertThat(proxy.toString()).contains("partitioned", "latency 5 ms", "1 open");
        int port = proxy.port();

        proxy.close();
        proxy.close(); // idempotent
        assertThat(proxyThreads()).isEmpty();
        assertThat(endedByProxy(client)).isTrue();
        assertThatThrownBy(() -> new Socket("127.0.0.1", port).close()).isInstanceOf(IOException.class);
        assertThatThrownBy(proxy::heal)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageEndingWith("is closed");
    }

    @Test
    void switchesAreSafeFromManyThreads() throws Exception {
        Socket client = connect();
        List<Thread> switchers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread switcher = new Thread(() -> {
                for (int i = 0; i < 200; i++) {
                    proxy.latency(Duration.ofMillis(i % 3))
                            .partition(Direction.SERVER_TO_CLIENT)
                            .heal();
                    proxy.bandwidth(Direction.BOTH, 10_000_000).clearBandwidth();
                }
            });
            switchers.add(switcher);
            switcher.start();
        }
        for (int i = 0; i < 50; i++) {
            send(client, "k");
            proxy.heal(); // a switcher may have partitioned just now
            assertThat(receive(client, 1)).isEqualTo("k");
        }
        for (Thread switcher : switchers) {
            switcher.join();
        }
        proxy.clearFaults();
        send(client, "z");
        assertThat(receive(client, 1)).isEqualTo("z");
    }
}
