package io.quorumlock.redis;

import io.quorumlock.redis.client.Subscriptions;
import io.quorumlock.redis.client.Transport;
import io.quorumlock.spi.Waiters;
import java.util.Optional;

/**
 * Releases by other clients, heard on the nodes: the release script publishes on the resource's
 * {@link Scripts#RELEASED} channel, and a lock with threads waiting for a resource listens to that
 * channel on every node, on connections of its own ({@link Subscriptions}), opened at the first
 * wait and closed a few seconds after the last. A message wakes the first waiter of the resource
 * in this process, as a release in this process does ({@link Waiters#wake}). A channel stays
 * subscribed a few seconds after the last wait, so a client that waits for a resource again and
 * again subscribes once.
 */
final class Wakeups {

    private final Transport transport;
    private final Waiters waiters;
    /** Made at the first wait; empty if the transport cannot subscribe. Guarded by this object. */
    private Optional<Subscriptions> subscriptions;

    Wakeups(Transport transport, Waiters waiters) {
        this.transport = transport;
        this.waiters = waiters;
    }

    /** Listens to {@code resource}'s releases, counted; false if this lock cannot listen at all. */
    boolean listen(String resource) {
        Optional<Subscriptions> listening = subscriptions();
        listening.ifPresent(s -> s.subscribe(Scripts.RELEASED + resource));
        return listening.isPresent();
    }

    /** Ends one {@link #listen}. */
    void stopListening(String resource) {
        subscriptions().ifPresent(s -> s.unsubscribe(Scripts.RELEASED + resource));
    }

    /** On how many nodes the releases of {@code resource} are heard now. */
    int heardOn(String resource) {
        return subscriptions()
                .map(s -> s.confirmed(Scripts.RELEASED + resource))
                .orElse(0);
    }

    /**
     * Waits up to {@code nanos} until the releases of {@code resource} are heard on some node, or
     * every node has refused or failed to: on how many nodes they are heard then.
     */
    int awaitHeard(String resource, long nanos) throws InterruptedException {
        Optional<Subscriptions> listening = subscriptions();
        return listening.isPresent() ? listening.get().awaitConfirmed(Scripts.RELEASED + resource, nanos) : 0;
    }

    private synchronized Optional<Subscriptions> subscriptions() {
        if (subscriptions == null) {
            subscriptions = transport.subscriptions(channel -> {
                if (channel.startsWith(Scripts.RELEASED)) {
                    waiters.wake(channel.substring(Scripts.RELEASED.length()));
                }
            });
        }
        return subscriptions;
    }
}
