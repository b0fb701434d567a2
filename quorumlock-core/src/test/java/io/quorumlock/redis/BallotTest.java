package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.ServerAnswer;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How the algorithm reads a node's reply as a vote. */
class BallotTest {

    @Test
    void everyKindOfFailureHasItsVote() {
        for (Reply.Kind kind : Reply.Kind.values()) {
            assertThat(Ballot.vote(kind))
                    .as(kind.name())
                    .isNotNull()
                    .isNotEqualTo(io.quorumlock.ServerAnswer.Kind.GRANTED);
        }
        assertThat(Ballot.vote(Reply.Kind.NOT_SENT)).isEqualTo(io.quorumlock.ServerAnswer.Kind.UNREACHABLE);
        assertThat(Ballot.vote(Reply.Kind.TIMED_OUT)).isEqualTo(io.quorumlock.ServerAnswer.Kind.TIMED_OUT);
    }

    @Test
    void repliesReadAsVotes() {
        Command set = Command.setIfAbsent("k", "t", 1000);
        assertThat(Ballot.vote(set, "n", Reply.Simple.OK).kind()).isEqualTo(io.quorumlock.ServerAnswer.Kind.GRANTED);
        assertThat(Ballot.vote(set, "n", Reply.Nil.NIL).kind())
                .isEqualTo(io.quorumlock.ServerAnswer.Kind.HELD_BY_OTHER);
        assertThat(Ballot.vote(Command.script(Scripts.DELETE_IF_EQUALS, "k", "t"), "n", Reply.Int.ZERO)
                        .kind())
                .isEqualTo(io.quorumlock.ServerAnswer.Kind.HELD_BY_OTHER);
        assertThat(Ballot.vote(set, "n", new Reply.Error("LOADING Redis is loading the dataset in memory")))
                .satisfies(o -> {
                    assertThat(o.kind()).isEqualTo(io.quorumlock.ServerAnswer.Kind.ERROR);
                    assertThat(o.detail()).startsWith("LOADING");
                });
        assertThat(Ballot.vote(set, "n", new Reply.Error("READONLY You can't write against a read only replica.")))
                .satisfies(o -> {
                    assertThat(o.kind()).isEqualTo(io.quorumlock.ServerAnswer.Kind.MISCONFIGURED);
                    assertThat(o.detail()).startsWith("READONLY").endsWith("list masters only");
                });
        // a reply of another shape answers nothing that was asked: an error, never a yes
        assertThat(Ballot.vote(set, "n", new Reply.Simple("PONG")).detail())
                .isEqualTo("protocol error: +PONG is no reply to SET");
        assertThat(Ballot.vote(Command.script(Scripts.DELETE_IF_EQUALS, "k", "t"), "n", Reply.Simple.OK)
                        .kind())
                .isEqualTo(io.quorumlock.ServerAnswer.Kind.ERROR);
        assertThat(Ballot.vote(set, "n", new Reply.Array(java.util.List.of(Reply.Simple.OK)))
                        .detail())
                .contains("an array of 1 elements is no reply to SET");
    }

    /**
     * Two nodes down decide the vote before the third answers; its yes then is no timeout: it came
     * in time, too late only for a vote already lost.
     */
    @Test
    void aYesAfterTheOutcomeWasDecidedIsGrantedTooLateNotTimedOut() {
        List<String> nodes = List.of("redis://a:1", "redis://b:1", "redis://c:1");
        Ballot ballot = new Ballot(nodes, kind -> kind == ServerAnswer.Kind.GRANTED);
        ballot.record(1, new ServerAnswer(nodes.get(1), ServerAnswer.Kind.UNREACHABLE, "connection refused"));
        ballot.record(2, new ServerAnswer(nodes.get(2), ServerAnswer.Kind.UNREACHABLE, "connection refused"));
        assertThat(ballot.decided()).isTrue();
        assertThat(ballot.close()).isZero();
        ballot.record(0, new ServerAnswer(nodes.get(0), ServerAnswer.Kind.GRANTED, ""));

        assertThat(ballot.answers().get(0))
                .isEqualTo(new ServerAnswer(
                        nodes.get(0),
                        ServerAnswer.Kind.PENDING,
                        "granted, too late to count: the outcome was decided before its reply"));
        assertThat(ballot.yes()).isZero();
    }

    @Test
    void aYesAfterTheWaitForRepliesEndedTimedOut() {
        List<String> nodes = List.of("redis://a:1", "redis://b:1", "redis://c:1");
        Ballot ballot = new Ballot(nodes, kind -> kind == ServerAnswer.Kind.GRANTED);
        ballot.record(1, new ServerAnswer(nodes.get(1), ServerAnswer.Kind.GRANTED, ""));
        ballot.expire();
        ballot.close();
        ballot.record(0, new ServerAnswer(nodes.get(0), ServerAnswer.Kind.GRANTED, ""));

        assertThat(ballot.answers().get(0).kind()).isEqualTo(ServerAnswer.Kind.TIMED_OUT);
        assertThat(ballot.answers().get(0).detail())
                .isEqualTo("granted after the wait for replies had ended, too late to count");
        assertThat(ballot.answers().get(2).detail()).isEqualTo("no reply within the node timeout");
    }
}
