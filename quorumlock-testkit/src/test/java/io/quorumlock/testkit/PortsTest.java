package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The ports the kit gives its servers: never one the kernel may give an outgoing connection, so a
 * server killed and started again on its port (a Redis node, a ZooKeeper member) cannot find it
 * taken by a client's socket, and never the same port twice in one JVM.
 */
class PortsTest {

    @Test
    void serverPortsLieOutsideTheKernelsRangeForOutgoingConnections() throws IOException {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        assumeTrue(Files.isReadable(range), "no " + range + " on this system");
        // Read line by line: Files.readString reads only the first bytes of some /proc files.
        String[] bounds = Files.readAllLines(range).get(0).trim().split("\\s+");
        int low = Integer.parseInt(bounds[0]);
        int high = Integer.parseInt(bounds[1]);
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            int port = Processes.freePort("127.0.0.1");
            assertThat(port < low || port > high)
                    .as("port %d against the range %d-%d", port, low, high)
                    .isTrue();
            assertThat(seen.add(port)).as("port %d handed out twice", port).isTrue();
        }
    }
}
