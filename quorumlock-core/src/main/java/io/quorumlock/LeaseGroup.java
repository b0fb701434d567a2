package io.quorumlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Leases taken together that stand as one lease on {@code resource}: valid while every one of them
 * is, released together, last taken first released. A group whose first lease carries a fencing
 * token is a {@link FencedLease} with that token ({@link #of}).
 */
class LeaseGroup implements Lease {

    private final String resource;
    final List<Lease> leases;

    private LeaseGroup(String resource, List<? extends Lease> leases) {
        this.resource = Objects.requireNonNull(resource, "resource");
        this.leases = List.copyOf(leases);
        if (this.leases.isEmpty()) {
            throw new IllegalArgumentException("a group of no leases");
        }
    }

    /** The group of {@code leases} on {@code resource}, fenced by its first lease's token if it has one. */
    static LeaseGroup of(String resource, List<? extends Lease> leases) {
        return leases.get(0) instanceof FencedLease first
                ? new Fenced(resource, leases, first.fencingToken())
                : new LeaseGroup(resource, leases);
    }

    /**
     * The group of {@code leases} on {@code resource}, fenced by {@code token}: a token of {@code
     * resource}'s sequence that a lease released at once was granted (a reader's, newer than every
     * writer's before it).
     */
    static LeaseGroup fencedBy(String resource, List<? extends Lease> leases, long token) {
        return new Fenced(resource, leases, token);
    }

    @Override
    public String resource() {
        return resource;
    }

    @Override
    public Duration validity() {
        return least(Lease::validity);
    }

    @Override
    public Duration remaining() {
        return least(Lease::remaining);
    }

    private Duration least(Function<Lease, Duration> of) {
        Duration least = null;
        for (Lease lease : leases) {
            Duration each = of.apply(lease);
            least = least == null || each.compareTo(least) < 0 ? each : least;
        }
        return least;
    }

    @Override
    public boolean isValid() {
        return leases.stream().allMatch(Lease::isValid);
    }

    /** Extends every lease of the group: true if each one was extended. */
    @Override
    public boolean extend(Duration ttl) {
        boolean all = true;
        for (Lease lease : leases) {
            all &= lease.extend(ttl);
        }
        return all;
    }

    /** Releases every lease, last taken first; the first failure is thrown once all were tried. */
    @Override
    public void release() {
        RuntimeException failed = null;
        for (int i = leases.size() - 1; i >= 0; i--) {
            try {
                leases.get(i).release();
            } catch (RuntimeException e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** Completes with the first of {@code futures} to complete. */
    static CompletableFuture<LeaseLostException> first(List<CompletableFuture<LeaseLostException>> futures) {
        CompletableFuture<LeaseLostException> first = new CompletableFuture<>();
        for (CompletableFuture<LeaseLostException> future : futures) {
            future.whenComplete((lost, failure) -> {
                if (failure != null) {
                    first.completeExceptionally(failure);
                } else {
                    first.complete(lost);
                }
            });
        }
        return first;
    }

    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        leases.forEach(lease -> parts.add(lease.resource()));
        return "LeaseGroup[" + resource + ": " + String.join(", ", parts) + (isValid() ? "" : ", not valid") + "]";
    }

    /** A group with a fencing token. */
    private static final class Fenced extends LeaseGroup implements FencedLease {
        private final long token;
        private final CompletableFuture<LeaseLostException> lost;
        private final CompletableFuture<LeaseLostException> inDoubt;

        private Fenced(String resource, List<? extends Lease> leases, long token) {
            super(resource, leases);
            this.token = token;
            List<CompletableFuture<LeaseLostException>> losses = new ArrayList<>();
            List<CompletableFuture<LeaseLostException>> doubts = new ArrayList<>();
            for (Lease lease : this.leases) {
                if (lease instanceof FencedLease fenced) {
                    losses.add(fenced.lost());
                    doubts.add(fenced.inDoubt());
                }
            }
            this.lost = first(losses);
            this.inDoubt = first(doubts);
        }

        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public CompletableFuture<LeaseLostException> lost() {
            return lost;
        }

        @Override
        public CompletableFuture<LeaseLostException> inDoubt() {
            return inDoubt;
        }
    }
}
