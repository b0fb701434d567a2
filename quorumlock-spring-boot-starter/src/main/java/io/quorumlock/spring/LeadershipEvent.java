package io.quorumlock.spring;

import java.util.OptionalLong;
import org.springframework.context.ApplicationEvent;

/**
 * A change of this instance's part in the election of {@code quorumlock.leader.election}: {@link
 * LeaderElectedEvent} when it comes to lead, {@link LeaderRevokedEvent} when its term ends. Both are
 * published on the election's own thread, before any other instance can be elected: an
 * {@code @EventListener} for them runs there, and should return soon. The source is the {@link
 * QuorumlockLeadership} bean.
 */
public abstract class LeadershipEvent extends ApplicationEvent {
    private static final long serialVersionUID = 1L;

    private final String election;
    private final String holder;
    private final boolean fenced;
    private final long fencingToken;

    LeadershipEvent(QuorumlockLeadership source, OptionalLong fencingToken) {
        super(source);
        this.election = source.election();
        this.holder = source.holder();
        this.fenced = fencingToken.isPresent();
        this.fencingToken = fencingToken.orElse(0);
    }

    /** The election's name ({@code quorumlock.leader.election}): the resource its leaders lock. */
    public String election() {
        return election;
    }

    /** This instance, as the lock names it to the servers ({@code pid@host}). */
    public String holder() {
        return holder;
    }

    /**
     * The term's fencing token on a fenced backend (ZooKeeper, etcd, a database), larger than every
     * earlier term's of this election; empty on Redis, whose leases carry none.
     */
    public OptionalLong fencingToken() {
        return fenced ? OptionalLong.of(fencingToken) : OptionalLong.empty();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + election + ", holder " + holder
                + (fenced ? ", fencing token " + fencingToken : "") + "]";
    }
}
