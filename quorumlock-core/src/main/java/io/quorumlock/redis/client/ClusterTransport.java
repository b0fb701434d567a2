package io.quorumlock.redis.client;

import io.quorumlock.internal.Ticker;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * A Redis Cluster as one node: each round goes to the master that serves its resource's hash
 * slot ({@link HashSlots}), as the {@link ClusterTopology} knows it, on a {@link NioTransport}
 * whose nodes are the masters' places. A node that answers {@code MOVED} has the slot's new master
 * learnt and the command sent there; one that answers {@code ASK} (a slot being migrated) has the
 * command sent to the importing master behind an {@code ASKING}; a {@code WAIT} behind a command
 * so redirected follows it. At most {@link #MAX_REDIRECTS} redirects per command; past them, the
 * node's last answer stands. The redirects are sent by the round's own thread while it waits, so
 * a round that has stopped waiting sends none.
 *
 * <p>Release wake-ups are listened to on every master known when the first waiter waits: a
 * release tells the waiters only where its master counts listeners ({@code PUBSUB NUMSUB} counts
 * a node's own), and the cluster hands each {@code PUBLISH} to all its nodes, whose copies are
 * handed on once. A master added to the cluster later is not listened to: its waiters wait for
 * the holder's TTL or their recheck.
 */
public final class ClusterTransport implements Transport {

    /** How many times one command is redirected at most: a slot moves once in a while, not in a loop. */
    static final int MAX_REDIRECTS = 5;

    private final NodeAddress cluster;
    private final ClusterTopology topology;
    private final NioTransport places;

    public ClusterTransport(
            NodeAddress cluster,
            long timeoutNanos,
            long connectTimeoutNanos,
            int maxLanes,
            Ticker ticker,
            TlsConfig tls,
            List<Script> scripts) {
        if (!cluster.cluster()) {
            throw new IllegalArgumentException(cluster + " names no Redis Cluster");
        }
        this.cluster = cluster;
        this.topology = new ClusterTopology(cluster, tls, Math.max(timeoutNanos, connectTimeoutNanos), ticker);
        this.places = new NioTransport(
                Collections.nCopies(ClusterTopology.MAX_MASTERS, cluster),
                timeoutNanos,
                connectTimeoutNanos,
                maxLanes,
                ticker,
                tls,
                scripts,
                topology::locator,
                topology::mastersKnown);
    }

    @Override
    public Lane borrow(String resource, Lane follows) {
        if (follows != null) {
            ClusterLane grant = (ClusterLane) follows;
            return new ClusterLane(places.borrow(null, grant.inner), grant.place);
        }
        int place = resource == null ? 0 : topology.placeOf(HashSlots.of(Command.asSent(resource)));
        return new ClusterLane(places.borrow(resource, null), place);
    }

    @Override
    public void giveBack(Lane lane, String resource) {
        places.giveBack(((ClusterLane) lane).inner, resource);
    }

    @Override
    public NodeStart nodeStart(int node) {
        return places.nodeStart(node);
    }

    @Override
    public java.util.Optional<String> whereIs(int node) {
        return java.util.Optional.of(topology.describe());
    }

    @Override
    public java.util.Optional<Subscriptions> subscriptions(Subscriptions.Listener listener) {
        return places.subscriptions(listener);
    }

    @Override
    public void close() {
        places.close();
        topology.close();
    }

    /** {@code MOVED slot host:port} or {@code ASK slot host:port}, read from a node's error; null for any other. */
    record Redirect(boolean ask, int slot, String host, int port) {

        static Redirect of(String error) {
            boolean ask = error.startsWith("ASK ");
            if (!ask && !error.startsWith("MOVED ")) {
                return null;
            }
            String[] words = error.split(" ");
            if (words.length != 3) {
                return null;
            }
            int colon = words[2].lastIndexOf(':');
            try {
                int slot = Integer.parseInt(words[1]);
                int port = Integer.parseInt(words[2].substring(colon + 1));
                if (colon < 0 || slot < 0 || slot >= HashSlots.COUNT || port < 1 || port > 65535) {
                    return null;
                }
                return new Redirect(ask, slot, words[2].substring(0, colon), port);
            } catch (NumberFormatException e) {
                return null;
            }
        }
    }

    /** A command to send again, on the round's thread: where, and how. */
    private record Resend(Command command, Transport.ReplyHandler handler, int place, boolean asking) {}

    /** One round's lane: the places' lane, and the place its commands go to. */
    private final class ClusterLane implements Lane, Link {
        final Lane inner;
        /** Where the round's commands go: the slot's master, or where a MOVED sent them. */
        volatile int place;
        /** Where the round's last write went, an ASK's target included: where a WAIT behind it goes. */
        private volatile int written;
        /** How many of the round's commands were redirected so far. */
        private volatile int redirects;
        /** Made at the first redirect: most rounds have none. Guarded by this lane. */
        private ArrayDeque<Resend> resends;

        ClusterLane(Lane inner, int place) {
            this.inner = inner;
            this.place = place;
            this.written = place;
        }

        @Override
        public Link link(int node) {
            return this;
        }

        @Override
        public Sends sends() {
            return inner.sends();
        }

        /** The replicas of the master the round's last write went to: a WAIT counts them there. */
        @Override
        public int replicasUp(int node) {
            return topology.replicasUp(written);
        }

        @Override
        public boolean await(BooleanSupplier done, LongSupplier deadlineNanos) throws InterruptedException {
            BooleanSupplier doneOrResend = () -> done.getAsBoolean() || pending();
            while (true) {
                boolean decided = inner.await(doneOrResend, deadlineNanos);
                if (!resend()) {
                    return decided;
                }
                if (done.getAsBoolean()) {
                    return true;
                }
            }
        }

        private synchronized boolean pending() {
            return resends != null && !resends.isEmpty();
        }

        /** Sends what the nodes redirected; false if there was nothing. */
        private boolean resend() {
            boolean any = false;
            while (true) {
                Resend next;
                synchronized (this) {
                    next = resends == null ? null : resends.poll();
                }
                if (next == null) {
                    return any;
                }
                any = true;
                RespLink to = (RespLink) inner.link(next.place());
                if (next.asking()) {
                    to.sendAsking(next.command(), next.handler());
                } else {
                    to.sendBehind(next.command(), next.handler());
                }
            }
        }

        // ---- the one node a round sees ------------------------------------------------------

        @Override
        public String node() {
            return cluster.toString();
        }

        @Override
        public int index() {
            return 0;
        }

        @Override
        public void send(Command command, ReplyHandler handler) {
            inner.link(to(command)).send(command, new Redirected(handler, 0, redirects));
        }

        @Override
        public void sendBehind(Command command, ReplyHandler handler) {
            inner.link(to(command)).sendBehind(command, new Redirected(handler, 0, redirects));
        }

        @Override
        public long connection() {
            return inner.link(written).connection();
        }

        @Override
        public void sendOn(long connection, Command command, ReplyHandler handler) {
            inner.link(to(command)).sendOn(connection, command, new Redirected(handler, 0, redirects));
        }

        /**
         * Where {@code command} goes: a WAIT, or the ROLE that counts the replicas it waits for,
         * where the round's last write went; anything else to its place.
         */
        private int to(Command command) {
            return command.kind() == Command.Kind.WAIT || command.kind() == Command.Kind.ROLE ? written : place;
        }

        @Override
        public boolean connecting() {
            int last = written;
            return inner.link(place).connecting()
                    || last != place && inner.link(last).connecting();
        }

        /**
         * As its place's connection, or, after an {@code ASK}, as the importing master's too: the
         * round is owed replies on both, and the later silence counts.
         */
        @Override
        public long silentSince() {
            long here = inner.link(place).silentSince();
            int last = written;
            if (last == place) {
                return here;
            }
            long there = inner.link(last).silentSince();
            return here == Long.MAX_VALUE ? there : there == Long.MAX_VALUE ? here : Math.max(here, there);
        }

        /** Hands a reply on as the round's one node's, or sends the command where the node redirected it. */
        private final class Redirected implements ReplyHandler {
            private final ReplyHandler round;
            private final int hops;
            /** How many of the round's commands had been redirected when this one was sent. */
            private final int redirectsBefore;

            Redirected(ReplyHandler round, int hops, int redirectsBefore) {
                this.round = round;
                this.hops = hops;
                this.redirectsBefore = redirectsBefore;
            }

            @Override
            public void onReply(Command command, Reply reply, Link link) {
                if (hops < MAX_REDIRECTS) {
                    if (reply instanceof Reply.Error error && redirected(command, Redirect.of(error.message()), link)) {
                        return;
                    }
                    if (command.kind() == Command.Kind.WAIT && redirects > redirectsBefore) {
                        // The write it counts replicas for was sent on since: it follows, behind it.
                        queue(new Resend(command, new Redirected(round, hops + 1, redirects), written, false));
                        return;
                    }
                }
                round.onReply(command, passing(reply), ClusterLane.this);
            }

            /**
             * A cluster's error that passes, as such: a redirect not followed (too many, or to a
             * master the lock cannot take), {@code CLUSTERDOWN} while a failover is under way. Read
             * as a node's errors are, they would name a configuration mistake.
             */
            private Reply passing(Reply reply) {
                if (reply instanceof Reply.Error error) {
                    String message = error.message();
                    if (message.startsWith("MOVED ")
                            || message.startsWith("ASK ")
                            || message.startsWith("CLUSTERDOWN")) {
                        return new Reply.Error("TRYAGAIN " + NodeErrors.shortened(message)
                                + " (the cluster is failing over or moving the slot, after " + hops
                                + " redirect(s))");
                    }
                }
                return reply;
            }

            private boolean redirected(Command command, Redirect redirect, Link from) {
                if (redirect == null) {
                    return false;
                }
                // An empty host: the node that answered, at another port.
                String host = redirect.host().isEmpty() ? topology.hostOf(from.index()) : redirect.host();
                int target = host == null
                        ? -1
                        : redirect.ask()
                                ? topology.asked(host, redirect.port())
                                : topology.moved(redirect.slot(), host, redirect.port());
                if (target < 0) {
                    return false;
                }
                if (!redirect.ask()) {
                    place = target;
                }
                written = target;
                queue(new Resend(command, new Redirected(round, hops + 1, redirects + 1), target, redirect.ask()));
                redirects++;
                return true;
            }

            private void queue(Resend resend) {
                synchronized (ClusterLane.this) {
                    if (resends == null) {
                        resends = new ArrayDeque<>(2);
                    }
                    resends.add(resend);
                }
            }
        }
    }
}
