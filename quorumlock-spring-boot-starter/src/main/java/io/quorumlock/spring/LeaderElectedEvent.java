package io.quorumlock.spring;

import java.util.OptionalLong;

/**
 * This instance leads the election: published when its term begins, before {@link
 * QuorumlockLeadership#awaitLeadership} returns it. {@link QuorumlockLeadership#isLeader()} is true
 * while the listener runs, unless the term has already ended.
 */
public class LeaderElectedEvent extends LeadershipEvent {
    private static final long serialVersionUID = 1L;

    LeaderElectedEvent(QuorumlockLeadership source, OptionalLong fencingToken) {
        super(source, fencingToken);
    }
}
