package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.internal.Ticker;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.Transport;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The count of a write's replicas, on a link that records what is sent (the real servers' side is
 * {@code MasterReplicaWaitIT}, {@code ClusterFailoverIT} and {@code SendOnIT}): a count not known
 * when the write is answered is asked on the write's own connection, and everything that counts
 * the write's replicas goes on that connection.
 */
class ReplicaSyncTest {

    private static final Command WRITE = Command.setIfAbsent("k", "token", 30_000);

    /** A link whose current connection is 7, and that records what is sent on which connection. */
    private static final class Recording implements Transport.Link {
        final List<String> sent = new ArrayList<>();

        @Override
        public String node() {
            return "redis://node";
        }

        @Override
        public int index() {
            return 0;
        }

        @Override
        public void send(Command command, Transport.ReplyHandler handler) {
            sent.add(command.kind() + " on any");
        }

        @Override
        public void sendBehind(Command command, Transport.ReplyHandler handler) {
            sent.add(command.kind() + " behind, on any");
        }

        @Override
        public long silentSince() {
            return Long.MAX_VALUE;
        }

        @Override
        public long connection() {
            return 7;
        }

        @Override
        public void sendOn(long connection, Command command, Transport.ReplyHandler handler) {
            sent.add(command.kind() + " " + command.key() + " on " + connection);
        }
    }

    private final List<Reply> handedOn = new ArrayList<>();
    private final Transport.ReplyHandler round = (command, reply, link) -> handedOn.add(reply);

    @Test
    void aCountStillUnknownWhenTheWriteIsAnsweredIsAskedWithRoleOnTheWritesConnection() {
        Recording link = new Recording();
        ReplicaSync sync = ReplicaSync.up(25).now(-1);
        assertThat(sync.on()).isTrue();
        assertThat(sync.upfront()).as("a WAIT right behind the write").isFalse();
        Transport.ReplyHandler handler = sync.handler(round, Ticker.SYSTEM, () -> -1);

        handler.onReply(WRITE, Reply.Simple.OK, link);
        assertThat(link.sent).containsExactly("ROLE  on 7");
        assertThat(handedOn).as("nothing before the replicas acknowledged").isEmpty();

        handler.onReply(Command.role(), role(2), link);
        assertThat(link.sent).containsExactly("ROLE  on 7", "WAIT 2 on 7");

        handler.onReply(Command.waitForReplicas(2, 25), new Reply.Int(2), link);
        assertThat(handedOn).containsExactly(Reply.Simple.OK);
    }

    @Test
    void aCountKnownOnceTheWriteIsAnsweredIsWaitedForThenOnItsConnectionAndAShortfallIsAskedAgainThere() {
        Recording link = new Recording();
        AtomicInteger up = new AtomicInteger(-1);
        Transport.ReplyHandler handler = ReplicaSync.up(25).now(up.get()).handler(round, Ticker.SYSTEM, up::get);
        up.set(1); // the connection's ROLE was answered before the write

        handler.onReply(WRITE, Reply.Simple.OK, link);
        handler.onReply(Command.waitForReplicas(1, 25), new Reply.Int(0), link);
        assertThat(link.sent).containsExactly("WAIT 1 on 7", "WAIT 1 on 7");
        handler.onReply(Command.waitForReplicas(1, 25), new Reply.Int(1), link);
        assertThat(handedOn).containsExactly(Reply.Simple.OK);
    }

    @Test
    void aMasterThatListsNoReplicaOrRefusesRoleHandsTheWriteOnAsAnswered() {
        for (Reply answer : List.of(role(0), new Reply.Error("NOPERM this user has no permissions to run 'role'"))) {
            handedOn.clear();
            Recording link = new Recording();
            Transport.ReplyHandler handler = ReplicaSync.up(25).now(-1).handler(round, Ticker.SYSTEM, () -> -1);
            handler.onReply(WRITE, Reply.Simple.OK, link);
            handler.onReply(Command.role(), answer, link);
            assertThat(link.sent).containsExactly("ROLE  on 7");
            assertThat(handedOn).containsExactly(Reply.Simple.OK);
        }
    }

    @Test
    void aRoleUnansweredOrSayingReplicaLeavesTheWritesEffectUnknown() {
        Reply dropped = new Reply.Failure(Reply.Kind.BROKEN, "not sent: the connection it had to follow was dropped");
        Reply replica = new Reply.Array(List.of(
                new Reply.Bulk("slave"),
                new Reply.Bulk("127.0.0.1"),
                new Reply.Int(7000),
                new Reply.Bulk("connected")));
        for (Reply answer : List.of(dropped, replica)) {
            handedOn.clear();
            Recording link = new Recording();
            Transport.ReplyHandler handler = ReplicaSync.up(25).now(-1).handler(round, Ticker.SYSTEM, () -> -1);
            handler.onReply(WRITE, Reply.Simple.OK, link);
            handler.onReply(Command.role(), answer, link);
            assertThat(link.sent).as("no WAIT").containsExactly("ROLE  on 7");
            assertThat(handedOn).hasSize(1);
            assertThat(handedOn.get(0)).as("not the write's OK").isNotEqualTo(Reply.Simple.OK);
        }
        assertThat(handedOn.get(0)).isInstanceOf(Reply.Error.class);
    }

    @Test
    void aWaitNotSentOnTheWritesConnectionLeavesTheWritesEffectUnknown() {
        Recording link = new Recording();
        Transport.ReplyHandler handler = ReplicaSync.up(25).now(1).handler(round, Ticker.SYSTEM, () -> 1);
        handler.onReply(WRITE, Reply.Simple.OK, link);
        Reply dropped = new Reply.Failure(Reply.Kind.BROKEN, "not sent: the connection it had to follow was dropped");
        handler.onReply(Command.waitForReplicas(1, 25), dropped, link);
        assertThat(handedOn).containsExactly(dropped);
    }

    /** A master's answer to ROLE with {@code replicas} connected. */
    private static Reply role(int replicas) {
        List<Reply> listed = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            listed.add(new Reply.Array(
                    List.of(new Reply.Bulk("127.0.0.1"), new Reply.Bulk("700" + i), new Reply.Bulk("42"))));
        }
        return new Reply.Array(List.of(new Reply.Bulk("master"), new Reply.Int(42), new Reply.Array(listed)));
    }
}
