package io.quorumlock.redis.client;

import io.quorumlock.internal.Ticker;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which master of a Redis Cluster serves each hash slot, as the cluster's nodes say ({@code
 * CLUSTER NODES}): asked of the masters known and then of the seeds, in the background, every
 * {@link #REFRESH_NANOS}, at once when a connection fails or a node answers {@code MOVED}, and
 * never on a caller's path. Each master has a place, a node of the transport underneath: a place
 * keeps its master's replicas, so that when one of them is promoted (a failover) the place
 * follows it and the connections to the old master are dropped ({@link Locator#moved}). At most
 * {@link #MAX_MASTERS} places.
 *
 * <p>What a node sends is untrusted: its answer is read within the reader's bounds and the
 * connect timeout, a line that does not parse is left out, and an answer that names no master
 * with slots is that node's error, after which the next node is asked. While no node answers,
 * the layout known last goes on serving: a {@code MOVED} corrects it slot by slot.
 */
final class ClusterTopology {

    private static final Logger log = LoggerFactory.getLogger(ClusterTopology.class);

    /** More masters than the lock serves in one cluster. */
    static final int MAX_MASTERS = 128;
    /** How often the layout is asked while nothing failed. */
    static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** A recheck asked for sooner than this after the last question waits for it. */
    static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9._:\\-\\[\\]%]{1,255}");

    private final NodeAddress cluster;
    private final TlsConfig tls;
    private final int timeoutMillis;
    private final Ticker ticker;
    private final ScheduledExecutorService asks;
    private final BackgroundQuestion<String> question;
    private final Place[] places = new Place[MAX_MASTERS];

    /** The place of each slot; -1 for a slot no master was seen serving. Written in place by MOVED. */
    private volatile short[] slots;

    /** Guarded by this, as is everything below. */
    private int placesUsed;

    /** The node that answered last, and the failure of the last question (null if it was answered). */
    private String answeredBy;

    private String lastFailure;
    private boolean loaded;
    /** Whether every node asked last was a standalone server. */
    private volatile boolean notACluster;

    private boolean fullLogged;

    ClusterTopology(NodeAddress cluster, TlsConfig tls, long timeoutNanos, Ticker ticker) {
        this.cluster = cluster;
        this.tls = tls;
        this.timeoutMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeoutNanos / 1_000_000));
        this.ticker = ticker;
        this.asks = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "quorumlock-cluster");
            thread.setDaemon(true);
            return thread;
        });
        short[] none = new short[HashSlots.COUNT];
        Arrays.fill(none, (short) -1);
        this.slots = none;
        for (int i = 0; i < MAX_MASTERS; i++) {
            places[i] = new Place(i);
        }
        this.question =
                new BackgroundQuestion<>(asks, ticker, REFRESH_NANOS, RECHECK_NANOS, this::ask, (failure, thrown) -> {
                    synchronized (this) {
                        lastFailure = thrown != null ? "cannot ask the cluster: " + thrown : failure;
                    }
                });
    }

    /** The locator of place {@code index}. */
    Locator locator(int index) {
        return places[index];
    }

    /** The place of {@code slot}'s master; place 0 while the slot's master is not known (it redirects). */
    int placeOf(int slot) {
        int place = slots[slot];
        return place < 0 ? 0 : place;
    }

    /** How many replicas the master of place {@code index} has up; -1 while no layout named it. */
    int replicasUp(int index) {
        return places[index].replicasUp();
    }

    /**
     * A node answered {@code MOVED slot host:port}: the slot is served there now. Returns the
     * place of that master (a replica that was promoted keeps its place), or -1 if there is no
     * room for another; asks the whole layout again.
     */
    int moved(int slot, String host, int port) {
        int place;
        synchronized (this) {
            place = placeFor(host, port);
            if (place >= 0) {
                slots[slot] = (short) place;
            }
        }
        recheck();
        return place;
    }

    /** A node answered {@code ASK slot host:port}: the place of that master, -1 if none can be had. */
    int asked(String host, int port) {
        int place;
        synchronized (this) {
            place = placeFor(host, port);
        }
        if (place < 0) {
            recheck();
        }
        return place;
    }

    /** The host of place {@code index}'s master, null if none is known. */
    String hostOf(int index) {
        Locator.Result master = places[index].master;
        return master == null ? null : master.address().getAddress().getHostAddress();
    }

    /**
     * The place of the node at {@code host} (an address, or a host name the layout gave) and
     * {@code port}, as {@link #placeFor(InetSocketAddress)} finds it; -1 for a host name not known
     * yet, which is not looked up here (the caller may be reading replies): the layout is asked
     * again instead. Under the lock.
     */
    private int placeFor(String host, int port) {
        if (Resolver.isLiteral(host)) {
            InetSocketAddress address = new InetSocketAddress(host, port);
            return address.isUnresolved() ? -1 : placeFor(address);
        }
        for (int i = 0; i < placesUsed; i++) {
            Locator.Result master = places[i].master;
            if (master != null
                    && host.equalsIgnoreCase(master.host())
                    && master.address().getPort() == port) {
                return placeFor(master.address());
            }
            for (InetSocketAddress replica : places[i].replicas) {
                if (host.equalsIgnoreCase(replica.getHostString()) && replica.getPort() == port) {
                    return placeFor(replica);
                }
            }
        }
        return -1;
    }

    /** How many places have a master: the masters known. */
    synchronized int mastersKnown() {
        return placesUsed;
    }

    /** What the lock knows of the cluster, for {@code checkNodes()}. */
    synchronized String describe() {
        if (!loaded) {
            return "the cluster's layout not known yet: " + (lastFailure != null ? lastFailure : "still asking");
        }
        int masters = 0;
        int replicas = 0;
        for (int i = 0; i < placesUsed; i++) {
            if (places[i].master != null) {
                masters++;
                replicas += places[i].replicasUp;
            }
        }
        return masters + " master(s) with " + replicas + " replica(s) up, the layout from the node " + answeredBy;
    }

    /** Asks the layout again soon, in the background: a connection failed, or a node redirected. */
    void recheck() {
        question.current();
    }

    void close() {
        question.close();
        asks.shutdownNow();
    }

    /** Asks the known masters, then the seeds, until one answers; null, or why none did. On the asking thread. */
    private String ask() {
        Set<InetSocketAddress> candidates = new LinkedHashSet<>();
        synchronized (this) {
            for (int i = 0; i < placesUsed; i++) {
                Locator.Result master = places[i].master;
                if (master != null) {
                    candidates.add(master.address());
                }
            }
        }
        candidates.addAll(cluster.clusterSeeds());
        List<String> failures = new ArrayList<>();
        int standalone = 0;
        for (InetSocketAddress node : candidates) {
            String name = node.getHostString() + ":" + node.getPort();
            try (Asking asking = Asking.open(node, cluster, tls, timeoutMillis, new String[] {"CLUSTER", "NODES"})) {
                Reply reply = asking.next();
                if (reply instanceof Reply.Error error && error.message().contains("cluster support disabled")) {
                    standalone++;
                }
                if (!(reply instanceof Reply.Bulk bulk)) {
                    failures.add(name + ": answered CLUSTER NODES with "
                            + (reply instanceof Reply.Error error
                                    ? NodeErrors.shortened(error.message())
                                    : Reply.shape(reply)));
                    continue;
                }
                String problem = apply(ClusterNodes.parse(bulk.text()), name, node);
                if (problem == null) {
                    return null;
                }
                failures.add(name + ": " + problem);
            } catch (IOException | RespReader.ProtocolException | RuntimeException e) {
                String text = NodeErrors.reason(e);
                failures.add(name + ": "
                        + cluster.password().map(p -> text.replace(p, "***")).orElse(text));
            }
            if (failures.size() >= 8) {
                break; // each may take the connect timeout: the next refresh asks again
            }
        }
        // Every node a standalone server: a mistake in the address, which waiting does not mend.
        notACluster = standalone == failures.size();
        String why = "no node of " + cluster + " told its layout: " + String.join("; ", failures)
                + (notACluster ? ": no Redis Cluster there; name a standalone master as redis://host:port" : "");
        log.debug("{}", why);
        return why;
    }

    /** Takes the layout in {@code nodes}, as {@code from} sent it; null, or why it is not one. */
    private String apply(List<ClusterNodes.Node> nodes, String from, InetSocketAddress asked) {
        short[] next = new short[HashSlots.COUNT];
        Arrays.fill(next, (short) -1);
        boolean any = false;
        synchronized (this) {
            for (ClusterNodes.Node master : nodes) {
                if (!master.master() || master.failing() || master.slots() == 0) {
                    continue;
                }
                // A node that has met no other does not know its own address: the one asked.
                InetSocketAddress address =
                        master.myself() && master.host().isEmpty() ? resolved(asked) : address(master);
                if (address == null) {
                    continue;
                }
                Set<String> ids = new HashSet<>();
                ids.add(master.id());
                List<InetSocketAddress> replicas = new ArrayList<>();
                int up = 0;
                for (ClusterNodes.Node replica : nodes) {
                    if (!replica.master() && replica.masterId().equals(master.id())) {
                        ids.add(replica.id());
                        InetSocketAddress at = address(replica);
                        if (at != null) {
                            replicas.add(at);
                        }
                        up += replica.failing() ? 0 : 1;
                    }
                }
                int place = placeOf(ids, address);
                if (place < 0) {
                    continue;
                }
                String host = master.host().isEmpty() ? address.getHostString() : master.host();
                places[place].update(new Locator.Result(address, host, null), ids, replicas, up);
                int[] ranges = master.ranges();
                for (int i = 0; i + 1 < ranges.length; i += 2) {
                    Arrays.fill(next, ranges[i], ranges[i + 1] + 1, (short) place);
                }
                any = true;
            }
            if (!any) {
                return "its CLUSTER NODES names no master that serves slots";
            }
            slots = next;
            answeredBy = from;
            loaded = true;
        }
        return null;
    }

    /** The place of the master with {@code ids} at {@code address}: its own, a free one, or -1. Under the lock. */
    private int placeOf(Set<String> ids, InetSocketAddress address) {
        for (int i = 0; i < placesUsed; i++) {
            for (String id : places[i].ids) {
                if (ids.contains(id)) {
                    return i;
                }
            }
        }
        return placeFor(address);
    }

    /** The place whose master or replica is at {@code address}, or a free one; -1 if none is left. Under the lock. */
    private int placeFor(InetSocketAddress address) {
        for (int i = 0; i < placesUsed; i++) {
            Locator.Result master = places[i].master;
            if (master != null && master.address().equals(address)) {
                return i;
            }
        }
        for (int i = 0; i < placesUsed; i++) {
            if (places[i].replicas.contains(address)) {
                places[i].promote(address);
                return i;
            }
        }
        if (placesUsed == MAX_MASTERS) {
            if (!fullLogged) {
                fullLogged = true;
                log.warn(
                        "{} has more than {} masters: the lock serves the slots of the first {} only",
                        cluster,
                        MAX_MASTERS,
                        MAX_MASTERS);
            }
            return -1;
        }
        places[placesUsed].update(new Locator.Result(address, address.getHostString(), null), Set.of(), List.of(), -1);
        return placesUsed++;
    }

    /** No address, for {@code why}: a configuration mistake if the seeds are no cluster. */
    private Locator.Result failed(String why) {
        return new Locator.Result(null, null, why, notACluster ? Reply.Kind.MISCONFIGURED : Reply.Kind.NOT_SENT);
    }

    /** {@code seed} looked up (on the asking thread), or null if it does not resolve. */
    private static InetSocketAddress resolved(InetSocketAddress seed) {
        InetSocketAddress address = new InetSocketAddress(seed.getHostString(), seed.getPort());
        return address.isUnresolved() ? null : address;
    }

    /** A node's address, or null if the cluster announces none that a client can use. */
    private static InetSocketAddress address(ClusterNodes.Node node) {
        if (node.port() == 0 || !HOST.matcher(node.host()).matches()) {
            return null;
        }
        InetSocketAddress address = new InetSocketAddress(node.host(), node.port());
        return address.isUnresolved() ? null : address;
    }

    /** One master's place: where the lock finds it now, and its replicas, one of which may take over. */
    private final class Place implements Locator {
        private final int index;
        private volatile Result master;
        /** The ids of the master and its replicas, as last seen. Guarded by the topology's lock. */
        private Set<String> ids = Set.of();

        private volatile List<InetSocketAddress> replicas = List.of();
        /** -1 until a layout named the place's master. */
        private volatile int replicasUp = -1;

        Place(int index) {
            this.index = index;
        }

        /** Under the topology's lock. */
        void update(Result now, Set<String> ids, List<InetSocketAddress> replicas, int up) {
            Result before = master;
            if (before != null && !before.address().equals(now.address())) {
                log.warn(
                        "{}: the master that serves place {}'s slots is {} now (was {}): connections to the old one"
                                + " are dropped",
                        cluster,
                        index,
                        now.host() + ":" + now.address().getPort(),
                        before.host() + ":" + before.address().getPort());
            }
            this.master = now;
            this.ids = Set.copyOf(ids);
            this.replicas = List.copyOf(replicas);
            this.replicasUp = up;
        }

        /** A replica of this place answered for its slots (a MOVED after a failover). Under the topology's lock. */
        void promote(InetSocketAddress replica) {
            List<InetSocketAddress> others = new ArrayList<>(replicas);
            others.remove(replica);
            if (master != null) {
                others.add(master.address());
            }
            update(
                    new Result(replica, replica.getHostString(), null),
                    ids,
                    others,
                    replicasUp < 0 ? -1 : Math.max(0, replicasUp - 1));
        }

        @Override
        public Result address(long deadlineNanos) {
            Result known = master;
            if (known != null) {
                return known;
            }
            synchronized (ClusterTopology.this) {
                if (loaded) {
                    // A layout may have come since the read above: it is read again under its lock.
                    known = master;
                    return known != null ? known : new Result(null, null, "no master of the cluster in place " + index);
                }
            }
            CompletableFuture<String> waitFor = question.current();
            if (waitFor == null) {
                String failure;
                synchronized (ClusterTopology.this) {
                    known = master; // a question may have ended since the read above
                    failure = lastFailure;
                }
                return known != null ? known : failed(failure != null ? failure : "the cluster was not asked yet");
            }
            try {
                String failure = waitFor.get(Math.max(0, deadlineNanos - ticker.nanos()), TimeUnit.NANOSECONDS);
                known = master;
                return known != null
                        ? known
                        : failed(failure != null ? failure : "no master of the cluster in place " + index);
            } catch (TimeoutException e) {
                return new Result(null, null, "no node of " + cluster + " told its layout within the connect timeout");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Result(null, null, "interrupted while asking " + cluster + " for its layout");
            } catch (ExecutionException e) {
                return new Result(null, null, "cannot ask the cluster: " + e.getCause());
            }
        }

        @Override
        public boolean moved(Result connectedTo) {
            Result known = master;
            return known != null && connectedTo != null && !known.address().equals(connectedTo.address());
        }

        @Override
        public boolean followsFailovers() {
            return true;
        }

        @Override
        public void recheck() {
            ClusterTopology.this.recheck();
        }

        @Override
        public java.util.Optional<String> describe() {
            return java.util.Optional.of(ClusterTopology.this.describe());
        }

        @Override
        public int replicasUp() {
            return replicasUp;
        }
    }
}
