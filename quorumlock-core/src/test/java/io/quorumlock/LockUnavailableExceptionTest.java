package io.quorumlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A refusal tells a lock held by another owner from a lock service that could not form a quorum. */
class LockUnavailableExceptionTest {

    private static LockUnavailableException votes(int quorum, ServerAnswer.Kind... votes) {
        List<ServerAnswer> answers = new ArrayList<>();
        int yes = 0;
        for (int i = 0; i < votes.length; i++) {
            answers.add(new ServerAnswer("redis://10.0.0." + (i + 1) + ":6379", votes[i], ""));
            yes += votes[i] == ServerAnswer.Kind.GRANTED ? 1 : 0;
        }
        return new LockUnavailableException("job", Duration.ZERO, 1, yes, quorum, answers);
    }

    private static LockUnavailableException answer(ServerAnswer.Kind vote) {
        return new LockUnavailableException(
                "job", Duration.ZERO, 1, new ServerAnswer("zookeeper://127.0.0.1:2181", vote, ""), Optional.empty());
    }

    @Test
    void aHolderNamedByAQuorumOfReachableNodesIsBusy() {
        assertThat(votes(
                                2,
                                ServerAnswer.Kind.HELD_BY_OTHER,
                                ServerAnswer.Kind.HELD_BY_OTHER,
                                ServerAnswer.Kind.HELD_BY_OTHER)
                        .busy())
                .isTrue();
        assertThat(votes(2, ServerAnswer.Kind.HELD_BY_OTHER, ServerAnswer.Kind.HELD_BY_OTHER, ServerAnswer.Kind.PENDING)
                        .busy())
                .isTrue();
        assertThat(votes(
                                3,
                                ServerAnswer.Kind.HELD_BY_OTHER,
                                ServerAnswer.Kind.HELD_BY_OTHER,
                                ServerAnswer.Kind.GRANTED,
                                ServerAnswer.Kind.UNREACHABLE,
                                ServerAnswer.Kind.TIMED_OUT)
                        .busy())
                .isTrue();
    }

    @Test
    void aHolderOnSomeNodesWithTheOthersReachableIsBusy() {
        // Node 3 is down, yet nodes 1 and 2 could have granted the lock: another owner has it.
        assertThat(votes(2, ServerAnswer.Kind.HELD_BY_OTHER, ServerAnswer.Kind.GRANTED, ServerAnswer.Kind.UNREACHABLE)
                        .busy())
                .isTrue();
        // Not waited for: the refusal was certain before node 3 answered, so it is not known down.
        assertThat(votes(2, ServerAnswer.Kind.HELD_BY_OTHER, ServerAnswer.Kind.UNREACHABLE, ServerAnswer.Kind.PENDING)
                        .busy())
                .isTrue();
    }

    @Test
    void tooFewReachableNodesForAQuorumIsNotBusyWhoeverHoldsTheOthers() {
        assertThat(votes(2, ServerAnswer.Kind.UNREACHABLE, ServerAnswer.Kind.UNREACHABLE, ServerAnswer.Kind.UNREACHABLE)
                        .busy())
                .isFalse();
        assertThat(votes(2, ServerAnswer.Kind.TIMED_OUT, ServerAnswer.Kind.TIMED_OUT, ServerAnswer.Kind.TIMED_OUT)
                        .busy())
                .isFalse();
        // One node names a holder, two are down: nobody could be granted the lock, holder or not.
        assertThat(votes(2, ServerAnswer.Kind.HELD_BY_OTHER, ServerAnswer.Kind.UNREACHABLE, ServerAnswer.Kind.TIMED_OUT)
                        .busy())
                .isFalse();
        assertThat(votes(
                                3,
                                ServerAnswer.Kind.HELD_BY_OTHER,
                                ServerAnswer.Kind.HELD_BY_OTHER,
                                ServerAnswer.Kind.UNREACHABLE,
                                ServerAnswer.Kind.UNREACHABLE,
                                ServerAnswer.Kind.ERROR)
                        .busy())
                .isFalse();
    }

    @Test
    void aRefusalWithoutAHolderIsNotBusy() {
        // Votes that came too late: the service could not grant.
        assertThat(votes(2, ServerAnswer.Kind.GRANTED, ServerAnswer.Kind.GRANTED, ServerAnswer.Kind.GRANTED)
                        .busy())
                .isFalse();
        assertThat(votes(1, ServerAnswer.Kind.ERROR).busy()).isFalse();
    }

    @Test
    void nodesTheRestartGuardKeepsOutMayHoldTheLockForAnother() {
        // Restarted within a TTL, a node may have lost a holder's key: it answers, and keeps the
        // lock for whoever may hold it until the TTL has passed. Busy, not a service that is down.
        assertThat(votes(2, ServerAnswer.Kind.EXCLUDED, ServerAnswer.Kind.EXCLUDED, ServerAnswer.Kind.GRANTED)
                        .busy())
                .isTrue();
        assertThat(votes(2, ServerAnswer.Kind.EXCLUDED, ServerAnswer.Kind.EXCLUDED, ServerAnswer.Kind.EXCLUDED)
                        .busy())
                .isTrue();
        assertThat(votes(2, ServerAnswer.Kind.EXCLUDED, ServerAnswer.Kind.UNREACHABLE, ServerAnswer.Kind.UNREACHABLE)
                        .busy())
                .isFalse();
    }

    @Test
    void oneAuthorityIsBusyOnlyWhenItNamesAHolder() {
        assertThat(answer(ServerAnswer.Kind.HELD_BY_OTHER).busy()).isTrue();
        assertThat(answer(ServerAnswer.Kind.UNREACHABLE).busy()).isFalse();
        assertThat(answer(ServerAnswer.Kind.TIMED_OUT).busy()).isFalse();
        assertThat(answer(ServerAnswer.Kind.ERROR).busy()).isFalse();
    }

    @Test
    void aRefusalByTheLocksOwnHolderSaysLeasesAreNotReentrantAndNamesAsLock() {
        ServerAnswer own = new ServerAnswer(
                "redis://10.0.0.1:6379",
                ServerAnswer.Kind.HELD_BY_OTHER,
                io.quorumlock.internal.Holders.named("6409@vm", "6409@vm"));
        ServerAnswer other = new ServerAnswer(
                "redis://10.0.0.2:6379",
                ServerAnswer.Kind.HELD_BY_OTHER,
                io.quorumlock.internal.Holders.named("7000@vm", "6409@vm"));
        String votes =
                new LockUnavailableException("job", Duration.ZERO, 1, 0, 2, List.of(own, own, other)).getMessage();
        assertThat(votes)
                .contains("(holder 6409@vm, this lock's own holder name: held by this process under another lease)")
                .contains("(holder 7000@vm)")
                .endsWith("use asLock(resource, ttl), a reentrant java.util.concurrent.locks.Lock");
        assertThat(votes.indexOf("not reentrant")).isEqualTo(votes.lastIndexOf("not reentrant"));

        String single = new LockUnavailableException("job", Duration.ZERO, 1, 0, 1, List.of(own)).getMessage();
        assertThat(single).contains("this process under another lease").contains("asLock(resource, ttl)");
        String authority =
                new LockUnavailableException("job", Duration.ZERO, 1, own, Optional.of("6409@vm")).getMessage();
        assertThat(authority)
                .contains("held by 6409@vm on redis://10.0.0.1:6379")
                .contains("not reentrant");

        assertThat(new LockUnavailableException("job", Duration.ZERO, 1, 0, 1, List.of(other)).getMessage())
                .doesNotContain("reentrant");
        assertThat(new LockUnavailableException("job", Duration.ZERO, 1, other, Optional.of("7000@vm")).getMessage())
                .isEqualTo("could not acquire 'job' within 0 ms (1 attempt): held by 7000@vm on redis://10.0.0.2:6379");
    }
}
