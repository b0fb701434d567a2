package io.quorumlock.torture;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/** The kinds of fault the nemesis injects; the name is what {@code --faults} takes. */
public enum FaultKind {
    /** SIGKILL a minority of the nodes, start them again (empty) after a while. */
    KILL("kill", "a minority of nodes killed (SIGKILL), started again later"),
    /** SIGSTOP a minority of the nodes for a while. */
    FREEZE("freeze", "a minority of nodes frozen (SIGSTOP), then thawed"),
    /**
     * Restart a quorum of Redis nodes at once without persistence: their keys are gone. Consensus
     * members restart one at a time with their data, as they are built to.
     */
    RESTART("restart", "a quorum of Redis nodes restarted without persistence (one consensus member, data kept)"),
    /** Jump the wall clock of a quorum of Redis nodes far forward, then set it back. */
    CLOCK("clock", "the wall clock of a quorum of Redis nodes jumped forward by an hour, then set back"),
    /** Freeze a client process at its next write, for longer than its lease (the GC pause). */
    PAUSE("pause", "a client frozen (SIGSTOP) at its next write, for longer than its lease"),
    /** Expire the session of the client that holds a fenced lock. */
    EXPIRE("expire", "the session of the client holding a fenced lock expired by the ensemble"),
    /**
     * Cut one client off, for twice the lease, from a majority of the Redis nodes or from every
     * consensus member, while the servers stay up and the other clients still reach them: its
     * packets are held, nothing is reset.
     */
    PARTITION(
            "partition",
            "one client cut off (packets held, nothing reset) from a majority of the Redis nodes or from every"
                    + " consensus member, for twice its lease"),
    /** Add 50-300 ms of latency, with jitter, to a minority of the nodes for every client, for a while. */
    SLOW("slow", "50-300 ms of latency (with jitter) on a minority of the nodes, for every client, then cleared"),
    /**
     * The failover of the Redis article: the replica of a master that Sentinel manages is cut off
     * for longer than the lease, the master is killed and the replica, without the writes since,
     * promoted; the old master comes back as its replica. On Redlock's independent nodes (and the
     * single node without Sentinel), one node replaced by an empty one.
     */
    FAILOVER(
            "failover",
            "a Sentinel master's replica cut off for longer than the lease, the master killed, the replica promoted"
                    + " without the writes since (Redlock, one Redis node: a node replaced by an empty one)");

    private final String option;
    private final String description;

    FaultKind(String option, String description) {
        this.option = option;
        this.description = description;
    }

    /** The name used on the command line and in fault labels, such as {@code "clock"}. */
    public String option() {
        return option;
    }

    /** One line for the help and the report's legend. */
    public String description() {
        return description;
    }

    /**
     * Parses a comma-separated list such as {@code "kill,clock"}, or {@code "all"}.
     *
     * @throws IllegalArgumentException naming the unknown kind and the known ones
     */
    public static Set<FaultKind> parse(String list) {
        if (list.isBlank() || list.trim().equalsIgnoreCase("all")) {
            return EnumSet.allOf(FaultKind.class);
        }
        Set<FaultKind> kinds = EnumSet.noneOf(FaultKind.class);
        for (String name : list.split(",")) {
            kinds.add(byOption(name)
                    .orElseThrow(() -> new IllegalArgumentException("--faults: unknown fault kind '" + name.trim()
                            + "'; use all or a comma-separated list of " + names())));
        }
        return kinds;
    }

    /** The kind named {@code name} (as on the command line, or the first word of a fault's label), if any. */
    public static Optional<FaultKind> byOption(String name) {
        String wanted = name.trim().toLowerCase(Locale.ROOT);
        return Arrays.stream(values()).filter(k -> k.option.equals(wanted)).findFirst();
    }

    /** All option names, comma-separated. */
    public static String names() {
        return Arrays.stream(values()).map(FaultKind::option).collect(Collectors.joining(", "));
    }
}
