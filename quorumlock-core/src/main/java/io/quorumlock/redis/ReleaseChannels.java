package io.quorumlock.redis;

import io.quorumlock.internal.LocalLine;
import io.quorumlock.redis.client.Subscriptions;
import io.quorumlock.redis.client.Transport;
import java.util.Optional;

/**
 * Releases by other clients, heard on the nodes: the release script publishes on the resource's
 * {@link Scripts#RELEASED} channel, and a lock with threads waiting for a resource listens to that
 * channel on every node, on connections of its own ({@link Subscriptions}), opened at the first
 * wait and closed a few seconds after the last. A message wakes the first waiter of the resource
 * in this process, as a release in this process does ({@link LocalLine#wake}). A channel stays
 * subscribed a few seconds after the last wait, so a client that waits for one resource again and
 * again subscribes once.
 *
 * <p>The message also names whose turn it is: the first waiter still waiting in the resource's
 * line on the node ({@link Scripts#LINE}), which every waiter that was refused by a holder joins
 * ({@link Scripts#JOIN}). That waiter tries at once; the others go on waiting, so that the clients
 * are served in the order they came, one attempt per release.
 *
 * <p>A release publishes on the nodes that held the key, a quorum of them at least: the channel is
 * heard once it is subscribed on enough nodes to share one with every quorum ({@link #heard}). When
 * it comes to be (the first subscription, or a connection dropped and opened again), the first
 * waiter is woken, since a release may have gone unheard.
 *
 * <p>The resources here are named as sent ({@link io.quorumlock.redis.client.Command#asSent}), as
 * {@link Redlock} passes them, so the channel a node's message names is the waiters' own.
 */
final class ReleaseChannels {

    private final Transport transport;
    private final LocalLine waiters;
    /** On how many nodes a channel must be subscribed to share one with every quorum. */
    private final int enough;
    /**
     * How many clients listened to each resource's last release heard: the waiters it woke, one per
     * client. Kept while the resource is listened to.
     */
    private final java.util.concurrent.ConcurrentHashMap<String, Integer> competitors =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** Whose turn the last release heard said it was, by resource, where it named one. */
    private final java.util.concurrent.ConcurrentHashMap<String, Long> turns =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** Made at the first wait; empty if the transport cannot subscribe. Guarded by this object. */
    private Optional<Subscriptions> subscriptions;

    ReleaseChannels(Transport transport, LocalLine waiters, int nodes) {
        this.transport = transport;
        this.waiters = waiters;
        this.enough = nodes - QuorumMath.quorum(nodes) + 1;
    }

    /** Listens to {@code resource}'s releases, counted; false if this lock cannot listen at all. */
    boolean listen(String resource) {
        Optional<Subscriptions> listening = subscriptions();
        listening.ifPresent(s -> s.subscribe(Scripts.RELEASED + resource));
        return listening.isPresent();
    }

    /**
     * How many clients, this one included, the last release of {@code resource} heard here woke:
     * 1 if none was heard.
     */
    int competitors(String resource) {
        return competitors.getOrDefault(resource, 1);
    }

    /** The listeners a release message names ("digest count [turn]"); 1 if it names none. */
    static int listeners(String payload) {
        int space = payload.indexOf(' ');
        int end = space < 0 ? -1 : payload.indexOf(' ', space + 1);
        end = end < 0 ? payload.length() : end;
        if (space < 0 || end - space > 8) {
            return 1;
        }
        try {
            return Math.max(1, Integer.parseInt(payload, space + 1, end, 10));
        } catch (NumberFormatException e) {
            return 1; // a message not of this library's release script
        }
    }

    /**
     * Whose turn a release message says it is ("digest count turn"): the id of the first waiter
     * in the resource's line on that node; 0 if it names none.
     */
    static long turnOf(String payload) {
        int space = payload.indexOf(' ');
        int second = space < 0 ? -1 : payload.indexOf(' ', space + 1);
        if (second < 0 || payload.length() - second > 20) {
            return 0;
        }
        try {
            return Math.max(0, Long.parseLong(payload, second + 1, payload.length(), 10));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * Whose turn the last release of {@code resource} heard here said it was (a waiter's id in the
     * resource's line); 0 if it named none, or the last wake-up was no such release.
     */
    long turn(String resource) {
        return turns.getOrDefault(resource, 0L);
    }

    /** A wake-up that is no release heard on the nodes is coming: it names no turn. */
    void forgetTurn(String resource) {
        turns.remove(resource);
    }

    /** Ends one {@link #listen}. */
    void stopListening(String resource) {
        if (waiters.waiting(resource) == 0) {
            competitors.remove(resource);
            turns.remove(resource);
        }
        subscriptions().ifPresent(s -> s.unsubscribe(Scripts.RELEASED + resource));
    }

    /** On how many nodes the releases of {@code resource} are listened to now. */
    int heardOn(String resource) {
        return subscriptions()
                .map(s -> s.confirmed(Scripts.RELEASED + resource))
                .orElse(0);
    }

    /** Whether every release of {@code resource} is heard now: listened to on enough nodes. */
    boolean heard(String resource) {
        return heardOn(resource) >= enough;
    }

    /**
     * Waits up to {@code nanos} until every release of {@code resource} is heard, or every node has
     * answered the subscription: whether every release is heard then.
     */
    boolean awaitHeard(String resource, long nanos) throws InterruptedException {
        Optional<Subscriptions> listening = subscriptions();
        return listening.isPresent()
                && listening.get().awaitConfirmed(Scripts.RELEASED + resource, enough, nanos) >= enough;
    }

    private synchronized Optional<Subscriptions> subscriptions() {
        if (subscriptions == null) {
            subscriptions = transport.subscriptions(new Subscriptions.Listener() {
                @Override
                public void message(String channel, String payload) {
                    if (channel.startsWith(Scripts.RELEASED)) {
                        String resource = channel.substring(Scripts.RELEASED.length());
                        if (waiters.waiting(resource) > 0) {
                            competitors.put(resource, listeners(payload));
                            long turn = turnOf(payload);
                            if (turn == 0) {
                                turns.remove(resource);
                            } else {
                                turns.put(resource, turn);
                            }
                        }
                        waiters.wake(resource);
                    }
                }

                @Override
                public void subscribed(String channel, int nodes) {
                    if (nodes == enough && channel.startsWith(Scripts.RELEASED)) {
                        String resource = channel.substring(Scripts.RELEASED.length());
                        turns.remove(resource);
                        waiters.wake(resource);
                    }
                }
            });
        }
        return subscriptions;
    }
}
