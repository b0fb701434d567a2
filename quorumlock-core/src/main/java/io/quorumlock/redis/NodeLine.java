package io.quorumlock.redis;

import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.NodeErrors;
import io.quorumlock.redis.client.Reply;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The line of a resource's waiters on the nodes ({@link Scripts#LINE}), which serves the clients
 * that wait for one resource in the order they came. A waiter that a holder refused joins it on
 * every node ({@link Scripts#JOIN}), and joins again while it waits to keep its place; each
 * release names the first in line who still waits ({@link Scripts#RELEASE}, {@link
 * ReleaseChannels#turn}), which tries at once while the others go on waiting. A waiter's id is its place
 * (when its acquire began), so every node orders the line alike. A winner leaves the line on every
 * node, also those that did not grant it; a waiter that gives up leaves it; one whose client died
 * loses its place when it has not joined for {@link #PLACE_MILLIS}.
 *
 * <p>The line only orders the attempts: a grant is decided by the votes as always, so a node that
 * missed a join, a newcomer that tries before the waiter whose turn it is, or a node that refuses
 * the line's keys make the order less fair, never two holders.
 */
final class NodeLine {

    private static final Logger log = LoggerFactory.getLogger(NodeLine.class);

    /** How long a waiter's place is kept after it joined: a waiter dead this long loses its place. */
    static final long PLACE_MILLIS = 3_000;

    static final long PLACE_NANOS = TimeUnit.MILLISECONDS.toNanos(PLACE_MILLIS);

    /** How often a waiter joins again while it waits, to keep its place. */
    static final long REJOIN_NANOS = TimeUnit.MILLISECONDS.toNanos(PLACE_MILLIS / 3);

    private final Queries queries;
    private final List<String> names;
    private final int[] all;
    /** The nodes that refused the line, each told of once. */
    private final AtomicIntegerArray refused;

    NodeLine(Queries queries, List<String> names) {
        this.queries = queries;
        this.names = names;
        this.all = IntStream.range(0, names.size()).toArray();
        this.refused = new AtomicIntegerArray(names.size());
    }

    /**
     * A new waiter's id, which orders it in the line: the microseconds since the epoch now, with 10
     * random bits below them so that waiters that come in the same microsecond differ; never 0,
     * which names no waiter. The nodes sort the line by it, each the same way, so a release names the
     * same waiter on every node; clients whose clocks differ are ordered by their clocks.
     */
    static long newId() {
        Instant now = Instant.now();
        long micros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
        return (micros << 10) | ThreadLocalRandom.current().nextInt(1, 1024);
    }

    /**
     * Puts waiter {@code id} at the end of {@code resource}'s line on every node, or keeps its
     * place where it has one, for {@link #PLACE_MILLIS}. Whether a node took it.
     */
    boolean join(String resource, long id) {
        Reply[] replies =
                queries.query(resource, all, Command.script(Scripts.JOIN, resource, Long.toString(id), PLACE_MILLIS));
        boolean taken = false;
        for (int i = 0; i < replies.length; i++) {
            if (replies[i] instanceof Reply.Int) {
                taken = true;
            } else if (replies[i] instanceof Reply.Error error && refused.compareAndSet(i, 0, 1)) {
                log.warn(
                        "node {} refuses the line of waiters ({}): waiters of different clients take the lock in no"
                                + " set order through this node. Allow the lock's user the keys {}* and {}* to serve"
                                + " them in the order they came",
                        names.get(i),
                        NodeErrors.shortened(error.message()),
                        Scripts.LINE,
                        Scripts.WAITING);
            }
        }
        return taken;
    }

    /**
     * Whether waiter {@code id} still waits for {@code resource} on a quorum of the nodes: it
     * joined within {@link #PLACE_MILLIS} and has not left or released since. One {@link
     * Scripts#WAITS} per node, in one round.
     */
    boolean waits(String resource, long id) {
        Reply[] replies = queries.query(resource, all, Command.script(Scripts.WAITS, resource, Long.toString(id)));
        int waiting = 0;
        for (Reply reply : replies) {
            if (reply instanceof Reply.Int left && left.value() > 0) {
                waiting++;
            }
        }
        return waiting >= QuorumMath.quorum(names.size());
    }

    /**
     * Takes waiter {@code id} out of {@code resource}'s line on every node, without waiting for
     * the nodes: it gave up. A waiter that took the lock leaves the line with its lease's release
     * ({@link Rounds#release}).
     */
    void leave(String resource, long id) {
        try {
            queries.tell(resource, Command.script(Scripts.LEAVE, resource, Long.toString(id)));
        } catch (IllegalStateException closed) {
            // the lock was closed meanwhile: the place runs out by itself
        }
    }
}
