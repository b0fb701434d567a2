package io.quorumlock.internal;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leases granted to acquires that were given up meanwhile (cancelled, or ended another way): each
 * is released at once, and a release that fails is logged, since no caller is left to tell.
 */
public final class LateGrants {

    private static final Logger log = LoggerFactory.getLogger(LateGrants.class);

    private LateGrants() {}

    /** Completes {@code result} with {@code lease}, or releases the lease if {@code result} is done already. */
    public static <L> void complete(
            CompletableFuture<? super L> result, L lease, Consumer<? super L> release, String resource) {
        if (!result.complete(lease)) {
            release(release, lease, resource);
        }
    }

    /** Releases {@code lease}, a grant no caller takes, logging a failure. */
    public static <L> void release(Consumer<? super L> release, L lease, String resource) {
        try {
            release.accept(lease);
        } catch (RuntimeException e) {
            log.warn(
                    "could not release a lease on '{}' granted after its acquire was given up: {}",
                    resource,
                    e.toString());
        }
    }
}
