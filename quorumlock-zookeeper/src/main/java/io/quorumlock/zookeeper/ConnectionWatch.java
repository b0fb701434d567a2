package io.quorumlock.zookeeper;

import io.quorumlock.internal.Ticker;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the connection to the ensemble does to the leases and the waiting contenders of one lock:
 * SUSPENDED (or READ_ONLY) puts every lease in doubt, a reconnection has each re-check its node,
 * LOST loses them all; every change wakes the contenders, whose node watches would not fire for a
 * lost session.
 */
final class ConnectionWatch implements ConnectionStateListener {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLock.class);

    private final CuratorFramework client;
    private final Supplier<String> ensemble;
    private final Ticker ticker;
    private final Set<ZooKeeperLease> leases = ConcurrentHashMap.newKeySet();
    private final Set<ReleaseWait> releaseWaits = ConcurrentHashMap.newKeySet();
    /** Counts connection state changes, so a grant can tell whether one slipped in while it checked ownership. */
    private final AtomicLong changes = new AtomicLong();
    /** The connection state Curator reported last; null before the first report. */
    private volatile ConnectionState lastState;

    /** Starts watching the connection of {@code client}; {@code ensemble} names it in the log. */
    ConnectionWatch(CuratorFramework client, Supplier<String> ensemble, Ticker ticker) {
        this.client = client;
        this.ensemble = ensemble;
        this.ticker = ticker;
        client.getConnectionStateListenable().addListener(this);
    }

    @Override
    public void stateChanged(CuratorFramework changed, ConnectionState state) {
        lastState = state;
        changes.incrementAndGet();
        log.debug("connection to {} is {}; {} lease(s) held", ensemble.get(), state, leases.size());
        switch (state) {
            case SUSPENDED, READ_ONLY -> leases.forEach(l -> l.suspend("the connection to the ensemble is " + state));
            case CONNECTED, RECONNECTED -> leases.forEach(ZooKeeperLease::recheck);
            case LOST ->
                leases.forEach(l ->
                        l.lose("the ZooKeeper session ended (Curator reported LOST: the ensemble expired the session,"
                                + " or no server answered within the session timeout)"));
        }
        wakeWaiters();
    }

    /** Stops watching the connection. */
    void close() {
        client.getConnectionStateListenable().removeListener(this);
    }

    /** Wakes every waiting contender, to look at the lock again. */
    void wakeWaiters() {
        releaseWaits.forEach(ReleaseWait::wake);
    }

    /**
     * Waits until the client is connected or {@code deadline} (on the lock's ticker) has passed.
     *
     * @return true if it is connected
     */
    boolean awaitConnected(long deadline) throws InterruptedException {
        if (client.getZookeeperClient().isConnected()) {
            return true;
        }
        long millis = (deadline - ticker.nanos() + 999_999) / 1_000_000;
        return millis > 0
                && client.blockUntilConnected((int) Math.min(millis, Integer.MAX_VALUE), TimeUnit.MILLISECONDS);
    }

    /** True unless the last state Curator reported is a broken connection (before any report: true). */
    boolean reportedConnected() {
        ConnectionState state = lastState;
        return state == null || state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED;
    }

    /** The connection state Curator reported last, or null before the first report. */
    ConnectionState lastState() {
        return lastState;
    }

    /** How many connection state changes there were so far. */
    long changes() {
        return changes.get();
    }

    /** From now on, {@code lease} follows the connection. */
    void follow(ZooKeeperLease lease) {
        leases.add(lease);
    }

    void forget(ZooKeeperLease lease) {
        leases.remove(lease);
    }

    /** The leases that follow the connection now. */
    List<ZooKeeperLease> leases() {
        return List.copyOf(leases);
    }

    /** A contender's pause, woken by connection changes until it is {@linkplain #done done}. */
    ReleaseWait releaseWait() {
        ReleaseWait pause = new ReleaseWait();
        releaseWaits.add(pause);
        return pause;
    }

    void done(ReleaseWait pause) {
        releaseWaits.remove(pause);
    }
}
