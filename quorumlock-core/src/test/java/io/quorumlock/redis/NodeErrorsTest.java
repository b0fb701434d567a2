package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.ServerAnswer;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import org.junit.jupiter.api.Test;

/** Which error replies are configuration mistakes, and the remedy each one names. */
class NodeErrorsTest {

    private static ServerAnswer outcome(String error) {
        return Ballot.vote(Command.setIfAbsent("k", "t", 1000), "redis://a:1", new Reply.Error(error));
    }

    @Test
    void authenticationAclClusterAndReplicaErrorsAreConfigurationErrorsWithTheirRemedy() {
        assertThat(outcome("WRONGPASS invalid username-password pair or user is disabled.")
                        .detail())
                .endsWith(": check the password (and user) given for this node");
        assertThat(outcome("NOAUTH Authentication required.").detail()).contains("set the password");
        assertThat(outcome("ERR AUTH <password> called without any password configured for the default user. Are you"
                                + " sure your configuration is correct?")
                        .detail())
                .contains("has no password", "remove the password");
        assertThat(outcome("ERR Client sent AUTH, but no password is set").detail())
                .contains("remove the password");
        assertThat(outcome("NOPERM User locker has no permissions to run the 'set' command")
                        .detail())
                .contains("ACL", "allow them");
        assertThat(outcome("READONLY You can't write against a read only replica.")
                        .detail())
                .contains("list masters only");
        assertThat(outcome("MOVED 3999 127.0.0.1:6381").detail()).contains("Cluster", "list masters only");
        assertThat(outcome("CLUSTERDOWN The cluster is down").detail()).contains("Cluster");
        assertThat(outcome("ERR DB index is out of range").detail()).contains("/db");
        assertThat(java.util.stream.Stream.of("WRONGPASS x", "NOAUTH x", "READONLY x", "MOVED 1 h:1")
                        .map(NodeErrorsTest::outcome)
                        .map(ServerAnswer::kind))
                .containsOnly(ServerAnswer.Kind.MISCONFIGURED);
    }

    @Test
    void otherErrorsStayErrorsAndALongErrorIsCutShort() {
        assertThat(outcome("LOADING Redis is loading the dataset in memory").kind())
                .isEqualTo(ServerAnswer.Kind.ERROR);
        assertThat(outcome("ERR unknown command 'EVALSHA'").kind()).isEqualTo(ServerAnswer.Kind.ERROR);
        ServerAnswer longError = outcome("ERR " + "x".repeat(10_000));
        assertThat(longError.kind()).isEqualTo(ServerAnswer.Kind.ERROR);
        assertThat(longError.detail()).hasSizeLessThan(200).endsWith("...");
    }
}
