package io.quorumlock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.quorumlock.FencedLease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.spi.AcquireLoop.Attempt;
import io.quorumlock.spi.Holders;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt to take a resource's lock: grant an etcd lease and keep it alive, wait in etcd's
 * lock queue, then check that the lock key exists under that lease and that the lease is alive.
 * Every request is bounded by the attempt's end, whatever etcd does. Any failure revokes the
 * lease, which also deletes a lock key that may have been created for it: at once if etcd answers
 * before the end, else in the background, until etcd answers or the lease, no longer kept alive,
 * has run out by itself.
 */
final class LockAttempts {

    private static final Logger log = LoggerFactory.getLogger(EtcdLock.class);

    private final EtcdLock lock;
    private final Client client;
    private final EtcdCalls calls;
    /** The least time a free lock is given to be granted. */
    private final long leastLockWaitNanos;

    LockAttempts(EtcdLock lock, Client client, EtcdCalls calls, long leastLockWaitNanos) {
        this.lock = lock;
        this.client = client;
        this.calls = calls;
        this.leastLockWaitNanos = leastLockWaitNanos;
    }

    /**
     * Makes one attempt that ends by {@code end} (the lock's ticker), whatever etcd does: grants a
     * lease by {@code waitEnd}, waits in etcd's queue for the holders ahead up to {@code
     * lockWaitNanos} from the lock request and no longer than {@code waitEnd}, yet gives a free
     * lock the least lock wait (within {@code end}); reads and checks by {@code end}.
     * A wait that ran out is final; other failures may be retried.
     *
     * @throws IllegalStateException if the lock was closed
     * @throws QuorumlockException if the thread was interrupted (the interrupt flag stays set)
     */
    Attempt<FencedLease> attempt(String resource, long ttlSeconds, long lockWaitNanos, long waitEnd, long end) {
        lock.requireOpen();
        long grantSent = lock.ticker().nanos();
        LeaseGrantResponse grant;
        try {
            grant = calls.callOnce(
                    () -> lock.cancelledOnClose(client.getLeaseClient().grant(ttlSeconds)), "grant a lease", waitEnd);
        } catch (EtcdCalls.RequestFailed e) {
            lock.requireOpen();
            return Attempt.refused(e.outcome, true);
        }
        long granted = lock.ticker().nanos();
        EtcdLease lease = new EtcdLease(lock, resource, grant.getID(), grant.getTTL(), grantSent, granted);
        lock.follow(lease);
        if (lock.isClosed()) {
            // Closed since the grant: close() may not have seen this lease and may close the client
            // under our requests, so no lock key is made for it and its revoke is not waited for
            // (the lease alone blocks nobody, and runs out by itself).
            lease.abandon(lock.ticker().nanos());
            lock.requireOpen();
        }
        boolean handedOut = false;
        try {
            lease.startKeepAlive();
            long now = lock.ticker().nanos();
            long lockWait = Math.min(lockWaitNanos, waitEnd - now);
            lockWait = Math.max(lockWait, Math.min(leastLockWaitNanos, end - now));
            Attempt<FencedLease> attempt = lockAndCheck(lease, lock.lockName(resource), Math.max(0, lockWait), end);
            handedOut = attempt.lease().isPresent();
            if (!handedOut) {
                lock.requireOpen(); // the lock was closed during the attempt: no retry
            }
            return attempt;
        } finally {
            if (!handedOut) {
                lease.abandon(end);
            }
        }
    }

    private Attempt<FencedLease> lockAndCheck(EtcdLease lease, ByteSequence name, long lockWaitNanos, long end) {
        String resource = lease.resource();
        CompletableFuture<LockResponse> lockCall =
                lock.cancelledOnClose(client.getLockClient().lock(name, lease.leaseId()));
        LockResponse locked;
        try {
            // Stop waiting at once if the lease is lost meanwhile: the lock would come with a dead lease.
            CompletableFuture.anyOf(lockCall, lease.lost()).get(lockWaitNanos, TimeUnit.NANOSECONDS);
            if (!lockCall.isDone()) {
                lockCall.cancel(false);
                LeaseLostException loss = lease.lost().join();
                return refused(ServerAnswer.Kind.ERROR, "lost the lease while waiting: " + loss.getMessage());
            }
            locked = lockCall.join();
        } catch (TimeoutException e) {
            lockCall.cancel(false);
            return holder(name, lease, lockWaitNanos, end);
        } catch (ExecutionException | CompletionException | CancellationException e) {
            return Attempt.refused(calls.failure(e, "lock"), true);
        } catch (InterruptedException e) {
            lockCall.cancel(false);
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while acquiring '" + resource + "'", e);
        }

        return check(lease, locked.getKey(), end);
    }

    /**
     * Reads back the lock key etcd gave {@code lease} and asks for the lease's time to live, by
     * {@code end}: the lease is handed out only if the key is still tied to it and it is alive.
     */
    private Attempt<FencedLease> check(EtcdLease lease, ByteSequence key, long end) {
        String resource = lease.resource();
        GetResponse got;
        LeaseTimeToLiveResponse alive;
        long checkSent;
        try {
            got = calls.call(() -> lock.cancelledOnClose(client.getKVClient().get(key)), "read the lock key back", end);
            checkSent = lock.ticker().nanos();
            alive = calls.call(
                    () -> lock.cancelledOnClose(
                            client.getLeaseClient().timeToLive(lease.leaseId(), LeaseOption.DEFAULT)),
                    "ask the lease's time to live",
                    end);
        } catch (EtcdCalls.RequestFailed e) {
            return Attempt.refused(e.outcome, true);
        }
        long checked = lock.ticker().nanos();
        String keyText = key.toString(StandardCharsets.UTF_8);
        if (got.getKvs().isEmpty()) {
            return refused(
                    ServerAnswer.Kind.ERROR,
                    "etcd granted the lock, but its key " + keyText
                            + " was gone when read back (the lease expired while waiting)");
        }
        KeyValue kv = got.getKvs().get(0);
        if (kv.getLease() != lease.leaseId()) {
            return refused(
                    ServerAnswer.Kind.ERROR,
                    "etcd granted the lock, but its key " + keyText + " is tied to lease "
                            + Long.toHexString(kv.getLease()) + ", not ours (" + Long.toHexString(lease.leaseId())
                            + ")");
        }
        if (alive.getTTL() <= 0) {
            return refused(
                    ServerAnswer.Kind.ERROR,
                    "etcd granted the lock, but lease " + Long.toHexString(lease.leaseId())
                            + " had expired (time to live " + alive.getTTL() + ")");
        }
        if (!lease.hold(key, kv.getCreateRevision(), checkSent, checked, alive.getTTL())) {
            return refused(ServerAnswer.Kind.ERROR, "lost the lease before it was handed out: " + lease.lossMessage());
        }
        log.debug(
                "acquired '{}' with token {} (key {}, lease {}, TTL {} s)",
                resource,
                kv.getCreateRevision(),
                keyText,
                Long.toHexString(lease.leaseId()),
                lease.ttlSeconds());
        return Attempt.granted(lease);
    }

    /** A failure that another attempt may overcome. */
    private Attempt<FencedLease> refused(ServerAnswer.Kind vote, String detail) {
        return Attempt.refused(calls.outcome(vote, detail), true);
    }

    /**
     * The refusal of a wait that ran out, final: who holds the lock now, as etcd knows it (the
     * lease its key is tied to), with the key and its create revision, the holder's token. If the
     * first key is ours, the lock was granted and its answer is late: the grant is checked and counts.
     */
    private Attempt<FencedLease> holder(ByteSequence name, EtcdLease own, long waitedNanos, long end) {
        String waited = "waited " + TimeUnit.NANOSECONDS.toMillis(waitedNanos) + " ms for the holder";
        ByteSequence prefix = ByteSequence.from(name.toString(StandardCharsets.UTF_8) + "/", StandardCharsets.UTF_8);
        GetOption first = GetOption.builder()
                .isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.ASCEND)
                .withLimit(1)
                .withKeysOnly(true)
                .build();
        try {
            List<KeyValue> kvs = calls.call(
                            () -> lock.cancelledOnClose(client.getKVClient().get(prefix, first)),
                            "find the holder",
                            end)
                    .getKvs();
            if (kvs.isEmpty()) {
                return Attempt.refused(
                        calls.outcome(ServerAnswer.Kind.TIMED_OUT, "no grant and no holder seen; " + waited), false);
            }
            KeyValue kv = kvs.get(0);
            if (kv.getLease() == own.leaseId()) {
                // Ours is the first key: etcd has granted the lock, its answer is on its way (a
                // slow link, or a client whose first requests are slow). A grant that arrived counts.
                return check(own, kv.getKey(), end);
            }
            String facts = "key " + Holders.shown(kv.getKey().toString(StandardCharsets.UTF_8)) + ", token "
                    + kv.getCreateRevision();
            String lease = Long.toHexString(kv.getLease());
            return Attempt.heldBy(
                    "lease " + lease + " (" + facts + "; " + waited + ")",
                    calls.outcome(ServerAnswer.Kind.HELD_BY_OTHER, facts + ", lease " + lease + "; " + waited));
        } catch (EtcdCalls.RequestFailed e) {
            // etcd did not say who holds the lock now: a silent cluster, not a known holder.
            return Attempt.refused(
                    calls.outcome(
                            e.outcome.kind(), "not granted; " + waited + "; who holds it now: " + e.outcome.detail()),
                    false);
        }
    }
}
