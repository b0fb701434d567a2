package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A cluster node's {@code CLUSTER NODES}, read as untrusted input; ClusterLockIT reads a real cluster's. */
class ClusterNodesTest {

    @Test
    void readsEachNodesIdAddressRoleAndSlots() {
        List<ClusterNodes.Node> nodes = ClusterNodes.parse(String.join(
                "\n",
                "e7d1 10.0.0.1:7000@17000,host-a myself,master - 0 0 1 connected 0-5460 5500 [5461->-67ed]",
                "07c3 10.0.0.4:7003@17003 slave e7d1 0 1 4 connected",
                "6ec2 :0@0 slave,noaddr e7d1 0 1 5 disconnected",
                "8e1f [::1]:7001@17001 master,fail? - 0 1 2 connected 5461-10922",
                ""));
        assertThat(nodes).hasSize(4);
        ClusterNodes.Node first = nodes.get(0);
        assertThat(first.id()).isEqualTo("e7d1");
        assertThat(first.host()).isEqualTo("10.0.0.1");
        assertThat(first.port()).isEqualTo(7000);
        assertThat(first.master()).isTrue();
        assertThat(first.myself()).isTrue();
        assertThat(first.failing()).isFalse();
        assertThat(first.slots()).isEqualTo(5462);
        assertThat(first.rangesText(16)).isEqualTo("0-5460,5500");
        assertThat(nodes.get(1).masterId()).isEqualTo("e7d1");
        assertThat(nodes.get(1).master()).isFalse();
        assertThat(nodes.get(2).failing()).as("a node flagged noaddr").isTrue();
        assertThat(nodes.get(2).host()).isEmpty();
        assertThat(nodes.get(3).host()).isEqualTo("[::1]");
        assertThat(nodes.get(3).failing()).isTrue();
    }

    @Test
    void leavesOutWhatIsNoNodeAndReadsABoundedAnswer() {
        assertThat(ClusterNodes.parse("garbage\n\na b c\nx 1.2.3.4:x@1 master - 0 0 1 connected 1"))
                .isEmpty();
        assertThat(ClusterNodes.parse("x 1.2.3.4:1@2 master - 0 0 1 connected 16384 -1 3-2 1-x 9")
                        .get(0)
                        .rangesText(16))
                .as("only slots 0-16383 taken")
                .isEqualTo("9");
        assertThat(ClusterNodes.parse("x\n".repeat(5_000) + "a 1.2.3.4:1@2 master - 0 0 1 connected 1"))
                .as("lines past the bound are not read")
                .isEmpty();
    }

    @Test
    void readsARedirectAndNothingElse() {
        assertThat(ClusterTransport.Redirect.of("MOVED 3999 127.0.0.1:6381"))
                .isEqualTo(new ClusterTransport.Redirect(false, 3999, "127.0.0.1", 6381));
        assertThat(ClusterTransport.Redirect.of("ASK 1 ::1:7000"))
                .isEqualTo(new ClusterTransport.Redirect(true, 1, "::1", 7000));
        assertThat(ClusterTransport.Redirect.of("MOVED 3999 :6381"))
                .as("the node that answered, at another port")
                .isEqualTo(new ClusterTransport.Redirect(false, 3999, "", 6381));
        for (String other : List.of(
                "MOVED 16384 h:1",
                "MOVED -1 h:1",
                "MOVED 1 h:0",
                "MOVED 1 h",
                "MOVED 1",
                "ASK x h:1",
                "ERR MOVED 1 h:1")) {
            assertThat(ClusterTransport.Redirect.of(other)).as(other).isNull();
        }
    }
}
