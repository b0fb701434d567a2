package io.quorumlock;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * Who holds a resource now, as {@link DistributedLock#holder(String)} read it from the lock's
 * servers.
 *
 * @param name the holder name the owning lock was built with ({@code holder(...)} of each
 *     backend's builder, by default the owner's {@code pid@host}): the name a refusal shows as
 *     {@code holder ...}. Never a secret. Empty if the lock is held by an owner whose stored name
 *     is not a holder's name, such as another program's key or lock node, or a Redis key of
 *     another type than quorumlock's string (another library's lock, such as a hash)
 * @param fencingToken the fencing token of the current grant on the fenced backends (ZooKeeper,
 *     etcd, JDBC): the same as the holder's {@link FencedLease#fencingToken()}; empty on Redis,
 *     whose leases carry none
 */
public record LockHolder(String name, OptionalLong fencingToken) {

    public LockHolder {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(fencingToken, "fencingToken");
    }

    @Override
    public String toString() {
        String shown = name.isEmpty() ? "an unnamed holder" : name;
        return fencingToken.isPresent() ? shown + " (fencing token " + fencingToken.getAsLong() + ")" : shown;
    }
}
