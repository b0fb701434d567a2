package io.quorumlock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LeaseLostException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.CoreLease;
import io.quorumlock.internal.KeepAlive;
import io.quorumlock.internal.LeaseCore;
import io.quorumlock.internal.LeaseTimes;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One grant of an {@link EtcdLock}: an etcd lease, and the lock key tied to it, kept alive by the
 * lease engine ({@link KeepAlive}) from its grant on, while its lock is waited for and once it is
 * handed out: one keep-alive request to etcd is one renewal, sent when two thirds of the TTL are
 * left.
 *
 * <p>Time: the lease is known to live at least until its end on the lock's monotonic clock. The
 * grant, each renewal and {@link #extend} are counted from when their request was sent, no later
 * than when etcd applied it, however late the answer comes, less the drift allowance (1% of the
 * TTL + 2 ms). etcd renews a lease with the TTL it was granted with, so a request whose answer was
 * lost can only have lengthened the lease in etcd: the lease's end does not move for it.
 */
final class EtcdLease extends CoreLease implements FencedLease, KeepAlive.Driver {

    private static final Logger log = LoggerFactory.getLogger(EtcdLease.class);
    /** How soon a revoke that failed is sent again. */
    private static final long RECOVERY_RETRY_MILLIS = 250;
    /** What etcd says of a lease it no longer knows (jetcd turns a keep-alive answer with TTL 0 into it). */
    private static final String NOT_FOUND = "requested lease not found";

    private final EtcdLock lock;
    private final KeepAlive keepAlive;
    private final String resource;
    private final long leaseId;
    private final long ttlSeconds;
    private final long ttlNanos;
    /**
     * Completes when the requests of a release or abandon are over: until then the lock follows the
     * lease, so that {@link EtcdLock#close()} waits for them before it closes its client.
     */
    private final CompletableFuture<Void> cleanedUp = new CompletableFuture<>();
    /** The keep-alive request of the round under way, cancelled by a release. */
    private volatile CompletableFuture<?> renewing;

    // Guarded by this.
    private ByteSequence key;
    private long token;

    EtcdLease(EtcdLock lock, String resource, long leaseId, long ttlSeconds, long grantSent, long granted) {
        // PENDING while the lock is being waited for or checked, VALID once handed out; never SUSPENDED.
        super(pending(lock, resource, LeaseTimes.endAfter(grantSent, TimeUnit.SECONDS.toNanos(ttlSeconds)), granted));
        this.lock = lock;
        this.resource = resource;
        this.leaseId = leaseId;
        this.ttlSeconds = ttlSeconds;
        this.ttlNanos = TimeUnit.SECONDS.toNanos(ttlSeconds);
        this.keepAlive = new KeepAlive(
                core, this, lock.timers(), ttlNanos, lock.requestTimeout().toNanos());
    }

    private static LeaseCore pending(EtcdLock lock, String resource, long end, long granted) {
        return new LeaseCore(resource, lock.ticker(), lock.events(), LeaseCore.State.PENDING, end, end - granted);
    }

    @Override
    public synchronized long fencingToken() {
        return token;
    }

    /**
     * Renews the etcd lease at once with one keep-alive request (the lease renews itself anyway
     * when two thirds of its TTL are left). etcd cannot change a lease's TTL: the lease is renewed
     * for the TTL it was granted with, which must be at least {@code ttl}.
     *
     * @return true if etcd renewed the lease; false if the lease is lost or etcd did not answer in
     *     time (the lease then keeps its earlier validity)
     * @throws IllegalArgumentException if {@code ttl} is not positive or longer than the lease's
     *     TTL
     * @throws IllegalStateException if the lease was released
     */
    @Override
    public boolean extend(Duration ttl) {
        long seconds = EtcdLock.ttlSeconds(ttl);
        if (seconds > ttlSeconds) {
            throw new IllegalSettingException(
                    "ttl",
                    "cannot extend the lease on '" + resource + "' to " + ttl.toMillis()
                            + " ms: etcd cannot lengthen a lease's TTL (" + ttlSeconds
                            + " s); acquire the lock with a longer ttl");
        }
        checkNotReleased();
        return core.state() == LeaseCore.State.VALID && keepAlive.extend(ttlNanos);
    }

    /**
     * Releases the lock: stops the keep-alive and revokes the etcd lease, which deletes the lock key
     * tied to it (the next waiter gets the lock at once), in one request bounded by the lock's
     * request timeout. If a request fails, the lease runs out by itself within its TTL, since nobody
     * keeps it alive any more. Idempotent.
     */
    @Override
    public void release() {
        release(null);
    }

    /**
     * As {@link #release()}, with every request given up at {@code deadline} (the lock's ticker) if
     * not answered by then: {@link EtcdLock#close()} releases all its leases within one request
     * timeout, also when etcd is silent.
     */
    void releaseBy(long deadline) {
        release(deadline);
    }

    private void release(Long deadline) {
        LeaseCore.State before = core.release();
        if (before == LeaseCore.State.RELEASED) {
            if (deadline != null) {
                awaitCleanUp(deadline); // by close(): another thread's requests may be under way
            }
            return;
        }
        stopRenewals();
        try {
            // The revoke deletes the lock key with the lease (the key was checked to be tied to
            // it), and so lets the next waiter in.
            finish(() -> lock.client().getLeaseClient().revoke(leaseId), "revoke the lease", deadline);
        } finally {
            cleanedUp();
        }
        log.debug(
                "released '{}' (token {}, key {}, lease {})",
                resource,
                fencingToken(),
                keyText(),
                Long.toHexString(leaseId));
        core.released(before);
    }

    @Override
    public synchronized String toString() {
        return "EtcdLease['" + resource + "', token " + token + ", lease " + Long.toHexString(leaseId) + ", "
                + core.state().name().toLowerCase(Locale.ROOT) + "]";
    }

    // ---- for EtcdLock ----------------------------------------------------------------------------

    long leaseId() {
        return leaseId;
    }

    long ttlSeconds() {
        return ttlSeconds;
    }

    /** Why the lease could not be handed out. */
    String lossMessage() {
        LeaseLostException loss = core.lost().getNow(null);
        return loss != null ? loss.getMessage() : "its validity ran out (etcd lease " + Long.toHexString(leaseId) + ")";
    }

    /** Keeps the lease alive from now on, renewing it at once if less than two thirds of its TTL are left. */
    void startKeepAlive() {
        keepAlive.start(ttlNanos);
    }

    /**
     * Hands the lease out at {@code now} with its lock key and token, valid until the end the
     * grant and the renewals answered since give. False if the lease was lost, or that end passed
     * (etcd may have expired the lease, with its key).
     */
    synchronized boolean hold(ByteSequence lockKey, long fencingToken, long now) {
        if (core.state() != LeaseCore.State.PENDING) {
            return false;
        }
        key = lockKey;
        token = fencingToken;
        return core.hold(core.endNanos(), now);
    }

    /**
     * Gives up a lease that is not handed out: stops the keep-alive and revokes it (deleting its
     * lock key), waiting for etcd's answer until {@code end} (the lock's ticker) at most. Without an
     * answer by then, the revoke goes on in the background: so a key that etcd would grant to
     * nobody goes as soon as etcd is reached again, not only when the lease runs out.
     */
    void abandon(long end) {
        if (core.release() == LeaseCore.State.RELEASED) {
            return;
        }
        stopRenewals();
        try {
            revoke(end);
        } finally {
            cleanedUp();
        }
    }

    /**
     * Ends the lease as lost because its lock is being closed: {@link #lost()} completes on the
     * closing thread (so work under {@code withLock} is interrupted before the release lets another
     * holder in), not on the lock's threads, which the close stops.
     */
    void loseOnClose() {
        keepAlive.lose("the EtcdLock was closed while the lease was held", true);
    }

    // ---- its rounds, for the engine --------------------------------------------------------------

    /**
     * One keep-alive request, sent again only if it failed at once, answered within the request
     * timeout and before the lease's end (past which the answer no longer matters).
     */
    @Override
    public KeepAlive.Result renew(long ttlNanos) {
        LeaseKeepAliveResponse answer;
        try {
            answer = lock.calls().callAwaitingLateAnswers(this::keepAliveOnce, "renew the lease", core.endNanos());
        } catch (EtcdCalls.RequestFailed e) {
            ServerAnswer outcome = e.outcome;
            if (outcome.detail().contains(NOT_FOUND)) {
                return KeepAlive.Result.gone("etcd no longer knows the lease (revoked or expired)");
            }
            log.debug("could not renew the lease on '{}': {}", resource, outcome);
            // Told apart for the evidence only: whatever reached etcd renewed the lease to its own TTL.
            return outcome.kind() == ServerAnswer.Kind.UNREACHABLE
                    ? KeepAlive.Result.notSent(outcome.toString())
                    : KeepAlive.Result.unknown(outcome.toString());
        }
        return answer.getTTL() > 0
                ? KeepAlive.Result.RENEWED
                : KeepAlive.Result.gone("etcd no longer knows the lease (revoked or expired)");
    }

    private CompletableFuture<LeaseKeepAliveResponse> keepAliveOnce() {
        CompletableFuture<LeaseKeepAliveResponse> sent =
                lock.client().getLeaseClient().keepAliveOnce(leaseId);
        renewing = sent;
        return sent;
    }

    @Override
    public synchronized LeaseLostException evidence(String why) {
        String held = core.state().held() ? ", token " + token : "";
        return new LeaseLostException(resource, why + " (etcd lease " + Long.toHexString(leaseId) + held + ")", null);
    }

    // ---- clean-up ----------------------------------------------------------------------------------

    /** Stops the renewals, cancelling the request of one under way, so that it ends at once. */
    private void stopRenewals() {
        CompletableFuture<?> request = renewing;
        if (request != null) {
            request.cancel(false);
        }
        keepAlive.stop();
    }

    private synchronized String keyText() {
        return key == null ? null : key.toString(StandardCharsets.UTF_8);
    }

    private void revoke(long end) {
        if (Thread.currentThread().isInterrupted()) {
            revokeInBackground(core.nowNanos() + ttlNanos);
            return;
        }
        try {
            lock.calls().call(() -> lock.client().getLeaseClient().revoke(leaseId), "revoke the lease", end);
        } catch (EtcdCalls.RequestFailed e) {
            if (!e.outcome.detail().contains(NOT_FOUND)) {
                log.debug(
                        "could not revoke lease {} of a failed attempt on '{}' yet ({}): revoking it in the"
                                + " background",
                        Long.toHexString(leaseId),
                        resource,
                        e.outcome);
                revokeInBackground(core.nowNanos() + ttlNanos);
            }
        } catch (RuntimeException e) {
            log.warn("could not revoke the lease of a failed attempt on '{}': {}", resource, e.toString());
        }
    }

    private void cleanedUp() {
        lock.forget(this);
        cleanedUp.complete(null);
    }

    /** Waits until another thread's release or abandon of this lease is over, or {@code deadline}. */
    private void awaitCleanUp(long deadline) {
        try {
            cleanedUp.get(Math.max(0, deadline - core.nowNanos()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            log.debug("the release of lease {} of '{}' is still under way", Long.toHexString(leaseId), resource);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Sends the revoke again every request timeout, without blocking a thread, until etcd answers,
     * the lock is closed, or {@code until}: by then etcd has expired the lease, no longer kept alive.
     */
    private void revokeInBackground(long until) {
        CompletableFuture<?> sent;
        try {
            sent = lock.client().getLeaseClient().revoke(leaseId);
        } catch (RuntimeException closed) {
            log.debug(
                    "lease {} of '{}' runs out by itself: {}", Long.toHexString(leaseId), resource, closed.toString());
            return;
        }
        sent.orTimeout(lock.requestTimeout().toNanos(), TimeUnit.NANOSECONDS).whenComplete((revoked, error) -> {
            if (error == null || String.valueOf(error.getMessage()).contains(NOT_FOUND)) {
                log.debug("revoked lease {} of a failed attempt on '{}'", Long.toHexString(leaseId), resource);
                return;
            }
            long pause = TimeUnit.MILLISECONDS.toNanos(RECOVERY_RETRY_MILLIS);
            if (until - core.nowNanos() - pause <= 0) {
                log.debug("lease {} of '{}' has run out by itself", Long.toHexString(leaseId), resource);
                return;
            }
            try {
                lock.timers().schedule(() -> revokeInBackground(until), pause);
            } catch (RejectedExecutionException closing) {
                log.debug(
                        "lease {} of '{}' runs out by itself: the lock was closed",
                        Long.toHexString(leaseId),
                        resource);
            }
        });
    }

    /**
     * Waits for a clean-up request up to the request timeout, or {@code deadline} if not null;
     * failures are logged, not thrown.
     */
    private <T> void finish(Supplier<CompletableFuture<T>> request, String what, Long deadline) {
        if (Thread.currentThread().isInterrupted()) {
            request.get(); // sent once, not waited for
            return;
        }
        try {
            if (deadline == null) {
                lock.calls().call(request, what);
            } else {
                lock.calls().call(request, what, deadline);
            }
        } catch (EtcdCalls.RequestFailed e) {
            if (e.outcome.detail().contains(NOT_FOUND)) {
                log.debug("lease {} of '{}' was already gone", Long.toHexString(leaseId), resource);
            } else {
                log.warn(
                        "could not {} for '{}' (lease {}); the lease runs out within {} s: {}",
                        what,
                        resource,
                        Long.toHexString(leaseId),
                        ttlSeconds,
                        e.outcome);
            }
        } catch (RuntimeException e) {
            log.warn("could not {} for '{}': {}", what, resource, e.toString());
        }
    }
}
