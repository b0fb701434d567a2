package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.ServerAnswer;
import org.apache.zookeeper.KeeperException.Code;
import org.junit.jupiter.api.Test;

/** How a failed request to the ensemble reads in the evidence of a refusal. */
class ZooKeeperCallsTest {

    @Test
    void aConnectionThatBrokeUnderTheRequestIsUnreachableAndAServerTimeoutTimedOut() {
        assertThat(ZooKeeperCalls.kindOf(Code.CONNECTIONLOSS)).isEqualTo(ServerAnswer.Kind.UNREACHABLE);
        assertThat(ZooKeeperCalls.kindOf(Code.OPERATIONTIMEOUT)).isEqualTo(ServerAnswer.Kind.TIMED_OUT);
        assertThat(ZooKeeperCalls.kindOf(Code.SESSIONEXPIRED)).isEqualTo(ServerAnswer.Kind.ERROR);
        assertThat(ZooKeeperCalls.kindOf(Code.NONODE)).isEqualTo(ServerAnswer.Kind.ERROR);
    }

    @Test
    void onlyFailuresAnotherAttemptMayOvercomeAreRetried() {
        assertThat(ZooKeeperCalls.retryable(Code.CONNECTIONLOSS)).isTrue();
        assertThat(ZooKeeperCalls.retryable(Code.SESSIONEXPIRED)).isTrue();
        assertThat(ZooKeeperCalls.retryable(Code.NOAUTH)).isFalse();
        assertThat(ZooKeeperCalls.retryable(Code.BADARGUMENTS)).isFalse();
    }
}
