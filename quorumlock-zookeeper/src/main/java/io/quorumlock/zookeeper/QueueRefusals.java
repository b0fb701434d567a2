package io.quorumlock.zookeeper;

import io.quorumlock.FencedLease;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.AcquireLoop.Attempt;
import io.quorumlock.internal.Holders;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.data.Stat;

/**
 * The refusals of a lock's attempts, with their evidence: who holds the queue (as its node's data
 * names it, with the node, session and token), how many wait, or what the ensemble answered.
 */
final class QueueRefusals {

    private final ZooKeeperLock lock;
    private final CuratorFramework client;
    private final ZooKeeperCalls calls;
    /** The data of this lock's nodes: the name a refused contender of this lock goes by. */
    private final byte[] holder;

    QueueRefusals(ZooKeeperLock lock, CuratorFramework client, ZooKeeperCalls calls, byte[] holder) {
        this.lock = lock;
        this.client = client;
        this.calls = calls;
        this.holder = holder;
    }

    /** The refusal of a queue of several holders whose every place is taken. */
    Attempt<FencedLease> allHeld(LockQueue.Place place) {
        int ahead = place.present() ? place.index() : place.queue().size();
        String held = "all " + place.holders() + " leases held (" + ahead + " lease node" + (ahead == 1 ? "" : "s")
                + " ahead)";
        return Attempt.heldBy(held, answer(ServerAnswer.Kind.HELD_BY_OTHER, held));
    }

    /**
     * The refusal of a wait that ran out: who holds the lock, as its node's data names it, with
     * the node, session and token, and how many others wait.
     */
    Attempt<FencedLease> heldBy(String dir, LockQueue.Place place, long end) {
        String holderNode = Holders.shown(place.holder());
        int others = Math.max(0, place.queue().size() - 2);
        String waiting = others + " other contender" + (others == 1 ? "" : "s") + " waiting";
        try {
            String path = ZKPaths.makePath(dir, place.holder());
            CuratorEvent read = calls.answer(
                    calls.send(cb -> client.getData().inBackground(cb).forPath(path)), end, "read the holder");
            Stat stat = read.getStat();
            byte[] data = read.getData();
            String facts = "session " + ZooKeeperLease.hex(stat.getEphemeralOwner()) + ", token "
                    + ZooKeeperLease.hex(stat.getCzxid()) + "; " + waiting;
            Optional<String> named = Holders.read(data);
            if (named.isEmpty()) {
                // Another program's node, or its data: untrusted, so only its size is told.
                String shown = data == null || data.length == 0
                        ? facts
                        : "its data not shown (" + data.length + " bytes, not a holder's name), " + facts;
                return Attempt.heldBy(
                        "lock node " + holderNode + " (" + shown + ")",
                        answer(ServerAnswer.Kind.HELD_BY_OTHER, "holder lock node " + holderNode + ", " + shown));
            }
            String who = named.get();
            return Attempt.heldBy(
                    who + " (lock node " + holderNode + ", " + facts + ")",
                    answer(
                            ServerAnswer.Kind.HELD_BY_OTHER,
                            Holders.named(who, new String(holder, StandardCharsets.UTF_8)) + ", lock node " + holderNode
                                    + ", " + facts));
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return Attempt.heldBy(
                    "lock node " + holderNode + " (" + waiting + ")",
                    answer(ServerAnswer.Kind.HELD_BY_OTHER, "holder: lock node " + holderNode + "; " + waiting));
        }
    }

    /** A refusal that another attempt may overcome. */
    Attempt<FencedLease> refused(ServerAnswer.Kind vote, String detail) {
        return Attempt.refused(answer(vote, detail), true);
    }

    ServerAnswer answer(ServerAnswer.Kind vote, String detail) {
        return new ServerAnswer(lock.ensemble(), vote, detail);
    }
}
