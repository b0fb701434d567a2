package io.quorumlock.jdbc;

import io.quorumlock.FencedLease;
import io.quorumlock.LeaseLostException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A fenced lease with a given token, as a consensus lock would grant it; it never runs out. Shared
 * with other modules' tests through this module's test jar.
 */
public record TestLease(String resource, long fencingToken) implements FencedLease {

    @Override
    public Duration validity() {
        return Duration.ofMinutes(1);
    }

    @Override
    public Duration remaining() {
        return validity();
    }

    @Override
    public boolean isValid() {
        return true;
    }

    @Override
    public boolean extend(Duration ttl) {
        return true;
    }

    @Override
    public void release() {}

    @Override
    public CompletableFuture<LeaseLostException> lost() {
        return new CompletableFuture<>();
    }
}
