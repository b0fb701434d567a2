package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
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
}
