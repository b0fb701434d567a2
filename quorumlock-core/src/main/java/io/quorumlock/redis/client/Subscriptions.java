package io.quorumlock.redis.client;

import io.quorumlock.internal.Ticker;
import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The channels a client listens to on every node, on connections of their own: one per node, never
 * a lane's, so a subscription holds up no round. The connections are opened when the first channel
 * is subscribed and read by a thread of their own ({@code quorumlock-release-channels}). A channel stays
 * subscribed for {@link #LINGER_NANOS} after its last listener left, so that a client that waits
 * for one resource again and again subscribes once; once no channel is left, the thread closes the
 * connections and ends. Each message is handed on once, whichever nodes repeat it ({@link
 * Listener}). A channel is known by its name as sent ({@link Command#asSent}), which is the name
 * the nodes' messages carry back, whatever characters it holds.
 *
 * <p>A node that drops the connection (a restart) has its channels subscribed again on a new one,
 * at once and then at most every {@link #RETRY_NANOS}. A node that refuses {@code SUBSCRIBE} (an
 * ACL user without channels, a proxy without pub/sub) is logged once and asked again only after
 * {@link #REFUSED_RETRY_NANOS}. Every command, I/O call and subscription change happens on the
 * thread; the callers only change the wanted state and wake it.
 */
public final class Subscriptions implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Subscriptions.class);

    /** How long a channel stays subscribed after its last listener left. */
    static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** How long after a failed SUBSCRIBE (a node down, a dropped connection) it is sent again. */
    static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How long after a refused SUBSCRIBE it is sent again: a configuration rarely changes sooner. */
    static final long REFUSED_RETRY_NANOS = TimeUnit.MINUTES.toNanos(1);

    /** Told of messages and of subscriptions, on the subscriptions' thread: it must not block. */
    public interface Listener {
        /**
         * A message, handed on once (by its payload) whichever nodes repeat it; {@code channel} is
         * the name as sent ({@link Command#asSent}).
         */
        void message(String channel, String payload);

        /**
         * {@code channel} is subscribed on one more node, {@code nodes} now: a message published
         * before on the nodes that did not have it (the first subscription, a connection dropped
         * and opened again) went unheard.
         */
        void subscribed(String channel, int nodes);
    }

    /** Where a channel stands on one node. */
    private enum State {
        WANTED,
        ASKED,
        CONFIRMED,
        FAILED
    }

    /** One subscribed channel: how many listen to it here, and where it stands on each node. */
    private static final class Channel {
        int listeners;
        /** When the last listener left. */
        long idleSince;

        final State[] states;
        /** The first word of the last message handed on: the other nodes' copies of it are dropped. */
        String lastDigest;
        /** {@link #confirmed()}, read without the lock (by every waiter after each refusal). */
        volatile int confirmedNow;

        Channel(int nodes) {
            states = new State[nodes];
            java.util.Arrays.fill(states, State.WANTED);
        }

        /** Under the subscriptions' lock: where the channel stands on {@code node} now. */
        void set(int node, State state) {
            states[node] = state;
            confirmedNow = confirmed();
        }

        int confirmed() {
            int count = 0;
            for (State state : states) {
                count += state == State.CONFIRMED ? 1 : 0;
            }
            return count;
        }

        boolean unsettled() {
            for (State state : states) {
                if (state == State.WANTED || state == State.ASKED) {
                    return true;
                }
            }
            return false;
        }
    }

    private final List<String> names;
    private final long timeoutNanos;
    private final Ticker ticker;
    private final Listener listener;
    private final Selector selector;
    private final RespLink[] links;

    /**
     * Changed under this object's lock, as is everything below; read without it by {@link
     * #confirmed}, which every waiter calls after each refusal.
     */
    private final Map<String, Channel> channels = new java.util.concurrent.ConcurrentHashMap<>();

    private final long[] retryAt;
    private final boolean[] refusalLogged;
    private Thread thread;
    private boolean closed;

    /**
     * Hands a message of a subscribed channel ({@code message}, channel, payload) to {@code push};
     * false if {@code reply} is none, but a reply to a command.
     */
    static boolean pushed(Reply reply, Push push) {
        if (reply instanceof Reply.Array array
                && array.items().size() == 3
                && array.items().get(0) instanceof Reply.Bulk kind
                && kind.text().equals("message")
                && array.items().get(1) instanceof Reply.Bulk channel
                && array.items().get(2) instanceof Reply.Bulk payload) {
            push.message(channel.text(), payload.text());
            return true;
        }
        return false;
    }

    /** What a connection in subscriber mode hands on besides the replies to its commands. */
    interface Push {
        /** A message with {@code payload} on {@code channel}. */
        void message(String channel, String payload);

        /** The connection was dropped: its subscriptions are gone. */
        void closed(String why);
    }

    /** Makes the connection to one node, on the subscriptions' selector. */
    @FunctionalInterface
    interface Links {
        RespLink link(int node, Selector selector, Push push);
    }

    /**
     * @param names the nodes, for messages
     * @param timeoutNanos how long a node may owe the answer to a SUBSCRIBE before its connection is
     *     dropped and opened again
     */
    Subscriptions(List<String> names, long timeoutNanos, Ticker ticker, Links connections, Listener listener) {
        this.names = names;
        this.timeoutNanos = timeoutNanos;
        this.ticker = ticker;
        this.listener = listener;
        this.selector = NioTransport.openSelector();
        this.links = new RespLink[names.size()];
        this.retryAt = new long[names.size()];
        this.refusalLogged = new boolean[names.size()];
        for (int i = 0; i < links.length; i++) {
            int node = i;
            links[i] = connections.link(node, selector, new Push() {
                @Override
                public void message(String channel, String payload) {
                    heard(channel, payload);
                }

                @Override
                public void closed(String why) {
                    dropped(node, why);
                }
            });
        }
    }

    /** Listens to {@code channel} on every node, counted: as many {@link #unsubscribe} calls end it. */
    public synchronized void subscribe(String channel) {
        if (closed) {
            return;
        }
        Channel state = channels.computeIfAbsent(Command.asSent(channel), c -> new Channel(links.length));
        state.listeners++;
        if (thread == null) {
            thread = new Thread(this::run, "quorumlock-release-channels");
            thread.setDaemon(true);
            thread.start();
        }
        selector.wakeup();
    }

    /**
     * One listener less for {@code channel}; {@link #LINGER_NANOS} after the last one left, the
     * channel is unsubscribed on every node. The thread is not woken: it looks again within {@link
     * #RETRY_NANOS} while a channel is subscribed, and a wake-up here would take a core from the
     * caller, which has just been granted the lock.
     */
    public synchronized void unsubscribe(String channel) {
        Channel state = channels.get(Command.asSent(channel));
        if (state != null && --state.listeners == 0) {
            state.idleSince = ticker.nanos();
        }
    }

    /** On how many nodes {@code channel} is subscribed now. Takes no lock. */
    public int confirmed(String channel) {
        Channel state = channels.get(Command.asSent(channel));
        return state == null ? 0 : state.confirmedNow;
    }

    /**
     * Waits until {@code channel} is subscribed on {@code nodes} nodes, or every node has answered,
     * or {@code nanos} have passed: on how many nodes it is subscribed then.
     *
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    public synchronized int awaitConfirmed(String channel, int nodes, long nanos) throws InterruptedException {
        long end = ticker.nanos() + nanos;
        String name = Command.asSent(channel);
        while (true) {
            Channel state = channels.get(name);
            if (state == null || state.confirmed() >= nodes || !state.unsettled()) {
                return state == null ? 0 : state.confirmed();
            }
            long left = end - ticker.nanos();
            if (left <= 0) {
                return 0;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /** Closes the connections for good; later subscriptions are ignored. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            channels.clear();
            notifyAll();
        }
        for (RespLink link : links) {
            link.shut();
        }
        try {
            selector.close();
        } catch (IOException e) {
            log.debug("closing the subscriptions' selector: {}", e.toString());
        }
    }

    // ---- on the thread -------------------------------------------------------------------------

    private void run() {
        try {
            while (true) {
                List<Runnable> sends = new ArrayList<>();
                long wait = 0;
                boolean idle;
                synchronized (this) {
                    long now = ticker.nanos();
                    if (closed) {
                        thread = null;
                        return;
                    }
                    idle = channels.isEmpty();
                    if (!idle) {
                        wait = plan(now, sends);
                    }
                }
                if (idle) {
                    for (RespLink link : links) {
                        link.close(Reply.Kind.BROKEN, "no channel subscribed");
                    }
                    synchronized (this) {
                        if (closed || channels.isEmpty()) { // else subscribed while the connections closed
                            thread = null;
                            return;
                        }
                    }
                    continue;
                }
                sends.forEach(Runnable::run);
                selector.select(this::ready, Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait)));
                expireSilent();
            }
        } catch (IOException | ClosedSelectorException e) {
            synchronized (this) {
                thread = null;
            }
            if (!closedNow()) {
                log.warn("the subscriptions for release wake-ups stopped: {}", e.toString());
            }
        }
    }

    private synchronized boolean closedNow() {
        return closed;
    }

    /** Under this object's lock: the commands to send now, and how long to wait before looking again. */
    private long plan(long now, List<Runnable> sends) {
        long wait = RETRY_NANOS;
        for (Iterator<Map.Entry<String, Channel>> it = channels.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Channel> entry = it.next();
            Channel channel = entry.getValue();
            if (channel.listeners == 0 && now - channel.idleSince >= LINGER_NANOS) {
                it.remove();
                for (RespLink link : links) {
                    sends.add(() -> link.send(Command.unsubscribe(entry.getKey()), (command, reply, from) -> {}));
                }
                continue;
            } else if (channel.listeners == 0) {
                wait = Math.min(wait, LINGER_NANOS - (now - channel.idleSince));
            }
            State[] states = channel.states;
            for (int node = 0; node < links.length; node++) {
                boolean due = states[node] == State.WANTED || states[node] == State.FAILED;
                if (due && retryAt[node] - now > 0) {
                    wait = Math.min(wait, retryAt[node] - now);
                } else if (due) {
                    states[node] = State.ASKED;
                    int target = node;
                    String name = entry.getKey();
                    sends.add(() -> links[target].send(
                            Command.subscribe(name), (command, reply, from) -> answered(target, name, reply)));
                }
            }
        }
        return Math.max(1_000_000, wait);
    }

    private synchronized void answered(int node, String channel, Reply reply) {
        Channel state = channels.get(channel);
        if (reply instanceof Reply.Array) {
            if (state != null && state.states[node] != State.CONFIRMED) {
                state.set(node, State.CONFIRMED);
                listener.subscribed(channel, state.confirmed());
            }
        } else {
            if (state != null) {
                state.set(node, State.FAILED);
            }
            long now = ticker.nanos();
            if (reply instanceof Reply.Error error) {
                retryAt[node] = now + REFUSED_RETRY_NANOS;
                if (!refusalLogged[node]) {
                    refusalLogged[node] = true;
                    log.warn(
                            "node {} refuses SUBSCRIBE ({}): waiters are not woken by releases through this node;"
                                    + " they try again at the end of the holder's TTL and at least every recheck."
                                    + " Allow the lock's user the channels quorumlock:released:* to wake them at once",
                            names.get(node),
                            NodeErrors.shortened(error.message()));
                }
            } else if (retryAt[node] - now <= 0) {
                retryAt[node] = now + RETRY_NANOS;
            }
        }
        notifyAll();
    }

    private synchronized void heard(String channel, String payload) {
        Channel state = channels.get(channel);
        // A message's first word tells it: the other words (who listens, whose turn) may differ
        // between the nodes' copies.
        int space = payload.indexOf(' ');
        String first = space < 0 ? payload : payload.substring(0, space);
        if (state == null || first.equals(state.lastDigest)) {
            return; // nobody listens, or another node's copy of a message handed on
        }
        state.lastDigest = first;
        listener.message(channel, payload);
    }

    /** The connection to {@code node} is gone, and its subscriptions with it: subscribe again, at once. */
    private synchronized void dropped(int node, String why) {
        for (Channel state : channels.values()) {
            if (state.states[node] != State.FAILED) {
                state.set(node, State.WANTED);
            }
        }
        log.debug("subscriptions on {} dropped: {}", names.get(node), why);
        notifyAll();
        selector.wakeup();
    }

    /** Drops a connection whose node owes an answer to SUBSCRIBE for longer than the timeout. */
    private void expireSilent() {
        long now = ticker.nanos();
        for (RespLink link : links) {
            long since = link.silentSince();
            if (since != Long.MAX_VALUE && now - since > timeoutNanos) {
                link.close(Reply.Kind.TIMED_OUT, "no answer to SUBSCRIBE within " + timeoutNanos / 1_000_000 + " ms");
            }
        }
    }

    private void ready(SelectionKey key) {
        ((RespLink) key.attachment()).ready(key);
    }
}
