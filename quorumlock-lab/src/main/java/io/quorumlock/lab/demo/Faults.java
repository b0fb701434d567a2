package io.quorumlock.lab.demo;

import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import java.util.SplittableRandom;

/**
 * The demo's faults: one node frozen (SIGSTOP, like a long GC pause: it accepts connections but
 * never answers) and another killed (SIGKILL), both chosen at random. Closing resumes the frozen
 * node, so that it can be stopped like the others.
 */
final class Faults implements AutoCloseable {

    private final RedisServers servers;
    private final int frozen;
    private final int killed;
    private boolean injected;

    Faults(RedisServers servers, SplittableRandom random) {
        this.servers = servers;
        this.frozen = random.nextInt(servers.size());
        this.killed = (frozen + 1 + random.nextInt(servers.size() - 1)) % servers.size();
    }

    boolean injected() {
        return injected;
    }

    /** How many nodes still answer once the faults are in. */
    int nodesLeft() {
        return servers.size() - 2;
    }

    /** Freezes one node and kills another; returns what it did, for people. */
    String inject() {
        servers.get(frozen).pause();
        servers.get(killed).stop();
        injected = true;
        return "froze node " + name(frozen) + " and killed node " + name(killed);
    }

    /** The faults in a few words: which node was frozen and which killed, if any. */
    String summary() {
        return injected
                ? "node " + (frozen + 1) + " frozen, node " + (killed + 1) + " killed"
                : "no faults (the run ended first)";
    }

    @Override
    public void close() {
        servers.get(frozen).resume();
    }

    private String name(int index) {
        RedisServer server = servers.get(index);
        return (index + 1) + " (" + server.host() + ":" + server.port() + ")";
    }
}
