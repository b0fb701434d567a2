package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.redis.client.Reply;
import org.junit.jupiter.api.Test;

/** {@code CLUSTER NODES} in a few words; ClusterNodeIT reads a real cluster's. */
class ClusterViewTest {

    private static final String NODES = String.join(
            "\n",
            "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected",
            "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922",
            "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383",
            "6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005 slave 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected",
            "824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:30006@31006 slave,fail 292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 0 1426238317741 6 connected",
            "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460 [5461->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]",
            "");

    @Test
    void countsTheLiveMastersAndReplicasAndNamesThisNodesSlots() {
        assertThat(ClusterView.of(new Reply.Bulk(NODES)))
                .isEqualTo("3 master(s), 2 replica(s); this node is a master of slots 0-5460 (5461 of 16384)");
        assertThat(ClusterView.of(new Reply.Bulk(
                        NODES.replace("myself,master", "master").replace("slave e7d1", "myself,slave e7d1"))))
                .isEqualTo("3 master(s), 2 replica(s); this node is a replica of no slot");
    }

    @Test
    void whatItCannotReadIsSaidNotThrown() {
        assertThat(ClusterView.of(new Reply.Error("ERR This instance has cluster support disabled")))
                .startsWith("its CLUSTER NODES not answered: ");
        assertThat(ClusterView.of(new Reply.Bulk(
                        "garbage\n\n a b c\nx 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 5 7-x 9-3 16384")))
                .as("slots that are none are not taken")
                .isEqualTo("1 master(s), 0 replica(s); this node is a master of slots 5 (1 of 16384)");
        assertThat(ClusterView.of(new Reply.Bulk("x :7000@17000 myself,master - 0 0 1 connected 0-16383")))
                .as("a node that has met no other does not know its own address, and is a master all the same")
                .isEqualTo("1 master(s), 0 replica(s); this node is a master of slots 0-16383 (16384 of 16384)");
        assertThat(ClusterView.of(new Reply.Bulk("x\n".repeat(5_000) + "a b myself,master - 0 0 1 connected 1")))
                .as("the lines past the bound are not read")
                .isEqualTo("0 master(s), 0 replica(s)");
    }
}
