package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a sentinel's answers mean; the real sentinels are in SentinelIT. */
class SentinelLocatorTest {

    private static Reply replica(String flags, String link) {
        List<Reply> fields = new ArrayList<>();
        for (String[] pair : new String[][] {{"ip", "10.0.0.8"}, {"flags", flags}, {"master-link-status", link}}) {
            fields.add(new Reply.Bulk(pair[0]));
            fields.add(new Reply.Bulk(pair[1]));
        }
        return new Reply.Array(fields);
    }

    @Test
    void countsTheReplicasThatAreUpAndLinked() {
        Reply replicas = new Reply.Array(List.of(
                replica("slave", "ok"),
                replica("s_down,slave,disconnected", "err"),
                replica("slave", "err"),
                replica("slave,o_down", "ok"),
                new Reply.Bulk("not a replica")));
        assertThat(SentinelLocator.replicasUp(replicas)).isEqualTo(1);
        assertThat(SentinelLocator.replicasUp(new Reply.Error("ERR unknown command")))
                .as("not known: a grant asks the master's ROLE once its write is answered")
                .isEqualTo(-1);
        assertThat(SentinelLocator.replicasUp(
                        new Reply.Array(List.of(new Reply.Array(List.of(new Reply.Bulk("flags")))))))
                .isZero();
    }
}
