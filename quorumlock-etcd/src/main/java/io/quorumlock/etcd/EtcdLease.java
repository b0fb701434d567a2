package io.quorumlock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LeaseLostException;
import io.quorumlock.internal.LeaseCore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One grant of an {@link EtcdLock}: an etcd lease kept alive by one keep-alive request every third
 * of its TTL, and the lock key tied to it.
 *
 * <p>Time: the lease is known to live at least until its end on the lock's monotonic
 * clock. Every renewal is counted from when its request was sent, which is no later than when etcd
 * applied it: the grant, each keep-alive request and {@link #extend} give a lower bound (send time + TTL), however late their answer comes. Every bound also leaves an
 * allowance for the rate difference between etcd's clock and ours (1% of the TTL + 2 ms, as
 * Redlock does).
 */
final class EtcdLease implements FencedLease {

    private static final Logger log = LoggerFactory.getLogger(EtcdLease.class);
    /** How soon a keep-alive request that failed is sent again. */
    private static final long RECOVERY_RETRY_MILLIS = 250;

    private final EtcdLock lock;
    /** PENDING while the lock is being waited for or checked, VALID once handed out; never SUSPENDED. */
    private final LeaseCore core;

    private final String resource;
    private final long leaseId;
    private final long ttlSeconds;
    private final long ttlNanos;
    private final long driftNanos;
    /**
     * Completes when the requests of a release or abandon are over: until then the lock follows the
     * lease, so that {@link EtcdLock#close()} waits for them before it closes its client.
     */
    private final CompletableFuture<Void> cleanedUp = new CompletableFuture<>();
    /** Fires two thirds of the TTL after the last renewal. */
    private ScheduledFuture<?> doubt;

    // Guarded by this.
    private ByteSequence key;
    private long token;
    /** Sends a keep-alive request every third of the TTL. */
    private ScheduledFuture<?> renewals;

    private ScheduledFuture<?> deadline;
    /** When a renewal's answer last came, by the keep-alive or {@link #extend}. */
    private long lastRenewedNanos;
    /** A keep-alive request failed: another one is sent shortly, without waiting for the next third. */
    private boolean retryPending;

    private LeaseLostException loss;

    EtcdLease(EtcdLock lock, String resource, long leaseId, long ttlSeconds, long grantSent, long granted) {
        this.lock = lock;
        this.resource = resource;
        this.leaseId = leaseId;
        this.ttlSeconds = ttlSeconds;
        this.ttlNanos = TimeUnit.SECONDS.toNanos(ttlSeconds);
        this.driftNanos = LeaseCore.driftNanos(ttlNanos);
        long end = grantSent + ttlNanos - driftNanos;
        this.core = new LeaseCore(resource, lock.ticker(), lock.events(), LeaseCore.State.PENDING, end, end - granted);
        this.lastRenewedNanos = granted;
    }

    @Override
    public String resource() {
        return resource;
    }

    @Override
    public synchronized long fencingToken() {
        return token;
    }

    @Override
    public CompletableFuture<LeaseLostException> lost() {
        return core.lost();
    }

    /**
     * Completes when no renewal has come for two thirds of the lease's TTL (etcd may then expire
     * the lease in the third that is left, and grant the lock to another client), or at the loss.
     * The lease may still be renewed after that; work that must not outlive it ({@code withLock},
     * {@code quorumlock run}) stops here.
     */
    @Override
    public CompletableFuture<LeaseLostException> inDoubt() {
        return core.inDoubt();
    }

    /**
     * How long the lease was known to live when it was handed out or last renewed: its TTL less the
     * time the request took and the drift allowance.
     */
    @Override
    public Duration validity() {
        return core.validity();
    }

    @Override
    public Duration remaining() {
        return core.remaining();
    }

    @Override
    public boolean isValid() {
        return core.isValid();
    }

    /**
     * Renews the etcd lease at once with one keep-alive request (the lease renews itself anyway
     * every third of its TTL). etcd cannot change a lease's TTL: the lease is renewed for the
     * TTL it was granted with, which must be at least {@code ttl}.
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
        LeaseCore.State state = core.state();
        if (state == LeaseCore.State.RELEASED) {
            throw new IllegalStateException("the lease on '" + resource + "' was released");
        }
        if (state != LeaseCore.State.VALID) {
            return false;
        }
        long sent = core.nowNanos();
        LeaseKeepAliveResponse response;
        try {
            response =
                    lock.calls().call(() -> lock.client().getLeaseClient().keepAliveOnce(leaseId), "renew the lease");
        } catch (EtcdCalls.RequestFailed e) {
            if (e.outcome.detail().contains("requested lease not found")) {
                markLost("etcd no longer knows the lease (revoked or expired)", null);
            }
            log.debug("could not extend the lease on '{}': {}", resource, e.outcome);
            lock.events().extended(resource, core.nowNanos() - sent, false);
            return false;
        }
        long received = core.nowNanos();
        boolean held;
        synchronized (this) {
            held = renewed(sent, response.getTTL(), received) && core.state() == LeaseCore.State.VALID;
        }
        lock.events().extended(resource, received - sent, held);
        return held;
    }

    /**
     * Releases the lock: stops the keep-alive and revokes the etcd lease, which deletes the lock key
     * tied to it (the next waiter gets the lock at once), in one request bounded by the lock's
     * request timeout. If a
     * request fails, the lease runs out by itself within its TTL, since nobody keeps it alive any
     * more. Idempotent.
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
        ByteSequence lockKey;
        LeaseCore.State before;
        synchronized (this) {
            before = core.release();
            lockKey = key;
            if (before != LeaseCore.State.RELEASED) {
                stopKeepingAlive();
            }
        }
        if (before == LeaseCore.State.RELEASED) {
            if (deadline != null) {
                awaitCleanUp(deadline); // by close(): another thread's requests may be under way
            }
            return;
        }
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
                token,
                lockKey == null ? null : lockKey.toString(StandardCharsets.UTF_8),
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

    synchronized String lossMessage() {
        return loss == null ? "(not lost)" : loss.getMessage();
    }

    /**
     * Starts renewing the lease with one keep-alive request every third of its TTL, and the timers
     * that notice when the renewals stop.
     */
    synchronized void startKeepAlive() {
        if (!live()) {
            return;
        }
        if (deadline == null) {
            scheduleDeadline();
        }
        if (doubt == null) {
            scheduleDoubt();
        }
        if (renewals == null) {
            long every = ttlNanos / 3;
            try {
                renewals = lock.scheduler().scheduleWithFixedDelay(this::renew, every, every, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closing) {
                renewals = null;
            }
        }
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
        synchronized (this) {
            if (core.release() == LeaseCore.State.RELEASED) {
                return;
            }
            stopKeepingAlive();
        }
        try {
            revoke(end);
        } finally {
            cleanedUp();
        }
    }

    private void revoke(long end) {
        if (Thread.currentThread().isInterrupted()) {
            revokeInBackground(core.nowNanos() + ttlNanos);
            return;
        }
        try {
            lock.calls().call(() -> lock.client().getLeaseClient().revoke(leaseId), "revoke the lease", end);
        } catch (EtcdCalls.RequestFailed e) {
            if (!e.outcome.detail().contains("requested lease not found")) {
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
            if (error == null || String.valueOf(error.getMessage()).contains("requested lease not found")) {
                log.debug("revoked lease {} of a failed attempt on '{}'", Long.toHexString(leaseId), resource);
                return;
            }
            long pause = TimeUnit.MILLISECONDS.toNanos(RECOVERY_RETRY_MILLIS);
            if (until - core.nowNanos() - pause <= 0) {
                log.debug("lease {} of '{}' has run out by itself", Long.toHexString(leaseId), resource);
                return;
            }
            try {
                lock.scheduler().schedule(() -> revokeInBackground(until), pause, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closing) {
                log.debug(
                        "lease {} of '{}' runs out by itself: the lock was closed",
                        Long.toHexString(leaseId),
                        resource);
            }
        });
    }

    // ---- keep-alive ------------------------------------------------------------------------------

    /**
     * Sends one keep-alive request, without blocking the lock's timer. Its renewal is counted from
     * now, its send time: etcd cannot have applied it earlier, however late the answer comes.
     * Requests are not waited for before the next is sent, so a slow answer delays no renewal.
     */
    private void renew() {
        if (!live()) {
            return;
        }
        long sent = core.nowNanos();
        CompletableFuture<LeaseKeepAliveResponse> answer;
        try {
            // The client's balancer sends it to a member that answers.
            answer = lock.client().getLeaseClient().keepAliveOnce(leaseId);
        } catch (RuntimeException e) {
            renewalFailed(e);
            return;
        }
        // Handled on the thread that completes it: short, and never blocking.
        answer.orTimeout(lock.requestTimeout().toNanos(), TimeUnit.NANOSECONDS)
                .whenComplete((alive, failure) -> answered(sent, alive, failure));
    }

    private void answered(long sent, LeaseKeepAliveResponse alive, Throwable failure) {
        if (failure instanceof java.util.concurrent.CompletionException wrapped && wrapped.getCause() != null) {
            failure = wrapped.getCause();
        }
        // jetcd turns a keep-alive answer with TTL 0 into a NOT_FOUND error.
        if ((failure instanceof EtcdException etcd && etcd.getErrorCode() == ErrorCode.NOT_FOUND)
                || (failure == null && alive.getTTL() <= 0)) {
            markLost("etcd no longer knows the lease (revoked or expired)", failure);
            return;
        }
        if (failure != null) {
            renewalFailed(failure);
            return;
        }
        synchronized (this) {
            renewed(sent, alive.getTTL(), core.nowNanos()); // counted from before the request
        }
    }

    /**
     * A keep-alive request failed (its member died, a network blip): the lease lives on in the
     * cluster while a quorum does, so another request goes shortly. The deadline timer ends the
     * lease if no renewal comes within its validity.
     */
    private void renewalFailed(Throwable failure) {
        synchronized (this) {
            if (!live() || retryPending) {
                return;
            }
            retryPending = true;
        }
        log.debug("could not renew the lease on '{}': {}; trying again", resource, failure.toString());
        try {
            lock.scheduler().schedule(this::retry, RECOVERY_RETRY_MILLIS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            markLost("the keep-alive failed while the lock was closing", null);
        }
    }

    private void retry() {
        synchronized (this) {
            retryPending = false;
        }
        renew();
    }

    /** Records a renewal known to have started no earlier than {@code renewedAt}; false if the lease is over. */
    private boolean renewed(long renewedAt, long ttlSecondsNow, long received) {
        long end = renewedAt + TimeUnit.SECONDS.toNanos(ttlSecondsNow) - driftNanos;
        if (!core.extendTo(end, end - received)) {
            return false;
        }
        lastRenewedNanos = received;
        scheduleDoubt();
        scheduleDeadline();
        return true;
    }

    /** Whether the lease is PENDING or VALID: renewed, and its timers running. */
    private boolean live() {
        LeaseCore.State state = core.state();
        return state == LeaseCore.State.PENDING || state == LeaseCore.State.VALID;
    }

    /** Marks the lease lost unless it is already over, when nothing can be trusted about it any more. */
    private void markLost(String why, Throwable cause) {
        markLost(why, cause, false);
    }

    /**
     * Ends the lease as lost because its lock is being closed: {@link #lost()} completes on the
     * closing thread (so work under {@code withLock} is interrupted before the release lets another
     * holder in), not on the lock's timer, which the close stops.
     */
    void loseOnClose() {
        markLost("the EtcdLock was closed while the lease was held", null, true);
    }

    private void markLost(String why, Throwable cause, boolean inline) {
        Runnable[] tell = new Runnable[1];
        synchronized (this) {
            if (!live()) {
                return;
            }
            boolean wasHeld = core.state() == LeaseCore.State.VALID;
            LeaseLostException exception = new LeaseLostException(
                    resource,
                    why + " (etcd lease " + Long.toHexString(leaseId) + (wasHeld ? ", token " + token : "") + ")",
                    cause);
            if (!core.lose(exception, task -> tell[0] = task)) {
                return;
            }
            loss = exception;
            stopKeepingAlive();
            if (wasHeld) {
                log.warn("{}", exception.getMessage());
            } else {
                log.debug("{} while acquiring", exception.getMessage());
            }
        }
        if (inline) {
            tell[0].run();
            return;
        }
        // Completed off jetcd's threads: whatever waits on lost() must not stall the client.
        try {
            lock.scheduler().execute(tell[0]);
        } catch (RejectedExecutionException closing) {
            tell[0].run();
        }
    }

    /** (Re)arms the timer that puts the lease in doubt two thirds of its TTL after the last renewal. */
    private void scheduleDoubt() {
        if (doubt != null) {
            doubt.cancel(false);
        }
        long delay = Math.max(0, lastRenewedNanos + doubtAfterNanos() - core.nowNanos());
        try {
            doubt = lock.scheduler().schedule(this::checkDoubt, delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            doubt = null;
        }
    }

    private long doubtAfterNanos() {
        return doubtAfterNanos(ttlSeconds);
    }

    /** How long a lease of {@code ttlSeconds} may go without a renewal before it is in doubt: two thirds of it. */
    static long doubtAfterNanos(long ttlSeconds) {
        return TimeUnit.SECONDS.toNanos(ttlSeconds) * 2 / 3;
    }

    private void checkDoubt() {
        long silent;
        synchronized (this) {
            silent = core.nowNanos() - lastRenewedNanos;
            if (core.state() != LeaseCore.State.VALID || silent < doubtAfterNanos()) {
                return;
            }
        }
        core.doubt(new LeaseLostException(
                resource,
                "no keep-alive answer for " + silent / 1_000_000 + " ms, two thirds of the lease's TTL: etcd may"
                        + " expire it in the third that is left (etcd lease " + Long.toHexString(leaseId) + ", token "
                        + token + ")",
                null));
    }

    /** (Re)arms the timer that marks the lease lost when its validity runs out without a renewal. */
    private void scheduleDeadline() {
        if (deadline != null) {
            deadline.cancel(false);
        }
        long delay = Math.max(0, core.endNanos() - core.nowNanos());
        try {
            deadline = lock.scheduler().schedule(this::checkDeadline, delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            deadline = null;
        }
    }

    private void checkDeadline() {
        synchronized (this) {
            if (!live()) {
                return;
            }
            if (core.endNanos() - core.nowNanos() > 0) {
                scheduleDeadline(); // renewed meanwhile
                return;
            }
        }
        markLost("no keep-alive answer came within the lease's TTL: its validity ran out", null);
    }

    private void stopKeepingAlive() {
        if (renewals != null) {
            renewals.cancel(false);
            renewals = null;
        }
        if (deadline != null) {
            deadline.cancel(false);
            deadline = null;
        }
        if (doubt != null) {
            doubt.cancel(false);
            doubt = null;
        }
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
            if (e.outcome.detail().contains("requested lease not found")) {
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
