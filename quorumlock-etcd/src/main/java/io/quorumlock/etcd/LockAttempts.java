package io.quorumlock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.quorumlock.FencedLease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockHolder;
import io.quorumlock.QuorumlockException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.AcquireLoop.Attempt;
import io.quorumlock.internal.AsyncAcquireLoop;
import io.quorumlock.internal.Holders;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt to take a resource's lock: grant an etcd lease and keep it alive, then join etcd's
 * lock queue with one transaction, as etcd's own lock does it (the key {@code name/<lease in hex>}
 * put under the lease unless it exists, and the queue's keys counted in the same revision: all of
 * them are ahead). A free lock is then held, with the key's create revision seen in that
 * transaction. A waiter with a few keys ahead watches them go ({@link QueueWatch}) and holds the
 * lock when the last of them is deleted, with no further request; a longer queue, a watch that
 * cannot tell, or a join sent again waits in etcd's lock service, and its grant is checked with a
 * read of the key. Every request is bounded by the attempt's end, whatever etcd does. Any failure
 * revokes the lease, which also deletes a lock key that may have been created for it: at once if
 * etcd answers before the end, else in the background, until etcd answers or the lease, no longer
 * kept alive, has run out by itself.
 */
final class LockAttempts {

    private static final Logger log = LoggerFactory.getLogger(EtcdLock.class);

    /**
     * The most keys ahead a waiter watches go. Every waiter watching a queue hears every deletion
     * in it, so a longer queue waits in etcd's lock service instead, where each waiter watches only
     * the key just ahead of its own.
     */
    static final long MOST_AHEAD_WATCHED = 8;

    private final EtcdLock lock;
    private final Client client;
    private final EtcdCalls calls;
    /** The least time a free lock is given to be granted. */
    private final long leastLockWaitNanos;
    /** The value of this lock's keys: who holds them, as refused contenders are told. */
    private final ByteSequence holder;

    LockAttempts(EtcdLock lock, Client client, EtcdCalls calls, long leastLockWaitNanos, ByteSequence holder) {
        this.lock = lock;
        this.client = client;
        this.calls = calls;
        this.leastLockWaitNanos = leastLockWaitNanos;
        this.holder = holder;
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
        EtcdLease[] lease = new EtcdLease[1];
        Attempt<FencedLease> outcome;
        try {
            outcome = begin(resource, ttlSeconds, lockWaitNanos, waitEnd, end, lease)
                    .await(resource);
        } catch (RuntimeException | Error e) {
            abandon(lease[0], end);
            throw e;
        }
        return ended(lease[0], outcome, end);
    }

    /**
     * As {@link #attempt(String, long, long, long, long)}, holding no thread while it waits for the
     * holders ahead: called on an {@linkplain io.quorumlock.internal.AsyncThreads#attempts() attempt
     * thread}, it sends its requests there, and goes on there once the wait is over (see {@link
     * AttemptStep#withoutThread}). Once {@code acquire} is done (given up), the wait ends at once and
     * the attempt is refused, its lease revoked.
     *
     * @return the outcome, or a future failed as the attempt throws
     */
    CompletableFuture<Attempt<FencedLease>> attemptWithoutThread(
            String resource,
            long ttlSeconds,
            long lockWaitNanos,
            long waitEnd,
            long end,
            AsyncAcquireLoop.AcquireEnd acquire) {
        EtcdLease[] lease = new EtcdLease[1];
        CompletableFuture<Attempt<FencedLease>> outcome = new CompletableFuture<>();
        try {
            begin(resource, ttlSeconds, lockWaitNanos, waitEnd, end, lease)
                    .withoutThread(acquire, refused(ServerAnswer.Kind.ERROR, "the acquire was given up"))
                    .whenComplete((attempt, failure) -> {
                        try {
                            if (failure != null) {
                                abandon(lease[0], end);
                                outcome.completeExceptionally(failure);
                            } else {
                                outcome.complete(ended(lease[0], attempt, end));
                            }
                        } catch (RuntimeException | Error e) {
                            outcome.completeExceptionally(e);
                        }
                    });
        } catch (RuntimeException | Error e) {
            abandon(lease[0], end);
            outcome.completeExceptionally(e);
        }
        return outcome;
    }

    /**
     * The attempt up to its wait: grants a lease (kept in {@code granted}) and keeps it alive, and
     * joins the queue; its outcome, or the wait for the holders ahead.
     */
    private AttemptStep begin(
            String resource, long ttlSeconds, long lockWaitNanos, long waitEnd, long end, EtcdLease[] granted) {
        lock.requireOpen();
        // The lease's validity counts from before this request: etcd cannot have granted it earlier.
        long grantSent = lock.ticker().nanos();
        LeaseGrantResponse grant;
        try {
            grant = calls.callOnce(
                    () -> lock.cancelledOnClose(client.getLeaseClient().grant(ttlSeconds)), "grant a lease", waitEnd);
        } catch (EtcdCalls.RequestFailed e) {
            lock.requireOpen();
            return AttemptStep.done(Attempt.refused(e.outcome, true));
        }
        long grantedAt = lock.ticker().nanos();
        EtcdLease lease = new EtcdLease(lock, resource, grant.getID(), grant.getTTL(), grantSent, grantedAt);
        lock.follow(lease);
        if (lock.isClosed()) {
            // Closed since the grant: close() may not have seen this lease and may close the client
            // under our requests, so no lock key is made for it and its revoke is not waited for
            // (the lease alone blocks nobody, and runs out by itself).
            lease.abandon(lock.ticker().nanos());
            lock.requireOpen();
        }
        granted[0] = lease;
        lease.startKeepAlive();
        return lockAndCheck(lease, lock.lockName(resource), lockWaitNanos, waitEnd, end);
    }

    /**
     * The attempt came to {@code outcome}: unless it holds the lock, its lease (if one was granted)
     * is abandoned, which deletes its key.
     *
     * @throws IllegalStateException if the lock was closed during the attempt: no retry
     */
    private Attempt<FencedLease> ended(EtcdLease lease, Attempt<FencedLease> outcome, long end) {
        if (outcome.lease().isEmpty()) {
            abandon(lease, end);
            lock.requireOpen();
        }
        return outcome;
    }

    /** Revokes {@code lease}, if one was granted, by {@code end} (in the background after that). */
    private static void abandon(EtcdLease lease, long end) {
        if (lease != null) {
            lease.abandon(end);
        }
    }

    /** Joins the queue: the lock held, refused, or a wait for the holders ahead. */
    private AttemptStep lockAndCheck(EtcdLease lease, ByteSequence name, long lockWaitNanos, long waitEnd, long end) {
        ByteSequence key = QueueKeys.lockKey(name, lease.leaseId());
        // Joins the queue as etcd's lock does, in one transaction: the put fails if etcd no longer
        // knows the lease (it expired or was revoked since the grant); the keys of the queue are
        // counted in the same revision (all of them ahead of ours), and if the key was there
        // already, it is read back with the first of the queue.
        TxnResponse joined;
        try {
            joined = calls.call(
                    () -> lock.cancelledOnClose(client.getKVClient()
                            .txn()
                            .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                            .Then(
                                    Op.put(
                                            key,
                                            holder,
                                            PutOption.builder()
                                                    .withLeaseId(lease.leaseId())
                                                    .build()),
                                    Op.get(QueueKeys.prefix(name), QueueKeys.count()))
                            .Else(Op.get(key, GetOption.DEFAULT), Op.get(QueueKeys.prefix(name), QueueKeys.first()))
                            .commit()),
                    "join the lock's queue",
                    end);
        } catch (EtcdCalls.RequestFailed e) {
            return AttemptStep.done(Attempt.refused(e.outcome, true));
        }
        List<GetResponse> reads = joined.getGetResponses();
        if (joined.isSucceeded()) {
            // Every other key of the queue was there before ours: all of them are ahead of it.
            long createRevision = joined.getHeader().getRevision();
            long ahead = reads.get(0).getCount() - 1;
            if (ahead <= 0) {
                return AttemptStep.done(hold(lease, key, createRevision));
            }
            if (ahead <= MOST_AHEAD_WATCHED) {
                return watchQueue(lease, name, key, createRevision, ahead, lockWaitNanos, waitEnd, end);
            }
            // A long queue: what is left of the wait goes to etcd's lock service.
            return waitInLockService(lease, name, key, createRevision, lockWait(lockWaitNanos, waitEnd, end), end);
        }
        // The key was there already (a request sent again after its first was applied).
        KeyValue kv = reads.get(0).getKvs().get(0);
        if (kv.getLease() != lease.leaseId()) {
            return AttemptStep.done(notOurs(key.toString(StandardCharsets.UTF_8), kv, lease));
        }
        long createRevision = kv.getCreateRevision();
        List<KeyValue> first = reads.get(1).getKvs();
        if (!first.isEmpty() && first.get(0).getCreateRevision() == createRevision) {
            return AttemptStep.done(hold(lease, key, createRevision));
        }
        return waitInLockService(lease, name, key, createRevision, lockWait(lockWaitNanos, waitEnd, end), end);
    }

    /**
     * How long a waiter waits from now: {@code lockWaitNanos} and no later than {@code waitEnd},
     * yet at least the least lock wait within {@code end}.
     */
    private long lockWait(long lockWaitNanos, long waitEnd, long end) {
        long now = lock.ticker().nanos();
        long lockWait = Math.min(lockWaitNanos, waitEnd - now);
        return Math.max(0, Math.max(lockWait, Math.min(leastLockWaitNanos, end - now)));
    }

    /**
     * Waits for the {@code ahead} keys before ours to go, as {@link #lockWait} says, with a watch
     * of the queue ({@link QueueWatch}): the grant needs no request once the last of them is
     * deleted. If the watch could not tell (an error, a member without a leader), what is left of
     * the wait goes to etcd's lock service. The watch is cancelled whatever happens.
     */
    private AttemptStep watchQueue(
            EtcdLease lease,
            ByteSequence name,
            ByteSequence key,
            long createRevision,
            long ahead,
            long lockWaitNanos,
            long waitEnd,
            long end) {
        long lockWait = lockWait(lockWaitNanos, waitEnd, end);
        QueueWatch queue = new QueueWatch(key, createRevision, ahead);
        lock.cancelledOnClose(queue.granted());
        CompletableFuture<Long> granted = queue.watch(client, QueueKeys.prefix(name));
        // Stops waiting at once if the lease is lost meanwhile: the lock would come with a dead lease.
        return AttemptStep.waitFor(CompletableFuture.anyOf(granted, lease.lost()), lockWait, queue::end, timedOut -> {
            queue.end();
            long grantedAt;
            try {
                grantedAt = granted.join();
            } catch (CancellationException e) {
                if (lease.lost().isDone()) {
                    return AttemptStep.done(lostWhileWaiting(lease));
                }
                lock.requireOpen();
                return AttemptStep.done(holder(name, lease, lockWait, end)); // the wait ran out
            } catch (CompletionException e) {
                if (e.getCause() instanceof QueueWatch.KeyGone gone) {
                    return AttemptStep.done(refused(ServerAnswer.Kind.ERROR, gone.getMessage()));
                }
                lock.requireOpen();
                log.debug(
                        "'{}': waiting in etcd's lock service: {}",
                        lease.resource(),
                        e.getCause().getMessage());
                return waitInLockService(lease, name, key, createRevision, lockWait(lockWaitNanos, waitEnd, end), end);
            }
            log.debug("'{}' granted at revision {}, the last key ahead deleted", lease.resource(), grantedAt);
            return AttemptStep.done(hold(lease, key, createRevision));
        });
    }

    /**
     * Waits in etcd's lock service up to {@code lockWait}, then reads the key back to check the
     * grant ({@link #checkGrant}): for a long queue, a join sent again, or a watch that could not tell.
     */
    private AttemptStep waitInLockService(
            EtcdLease lease, ByteSequence name, ByteSequence key, long createRevision, long lockWait, long end) {
        CompletableFuture<LockResponse> lockCall =
                lock.cancelledOnClose(client.getLockClient().lock(name, lease.leaseId()));
        // The grant's check goes out as soon as etcd answers, from the thread that hears it, rather
        // than after the waiter has been woken.
        CompletableFuture<GetResponse> readBack = lockCall.thenCompose(granted -> readBack(key));
        // Wakes once the grant's check is answered; stops waiting at once if the lease is lost
        // meanwhile: the lock would come with a dead lease.
        CompletableFuture<?> wake = CompletableFuture.anyOf(readBack, lease.lost());
        return AttemptStep.waitFor(wake, lockWait, () -> lockCall.cancel(false), timedOut -> {
            if (!lockCall.isDone()) {
                lockCall.cancel(false);
                // the wait ran out, or the lease was lost (the only other way to wake before a grant)
                return AttemptStep.done(timedOut ? holder(name, lease, lockWait, end) : lostWhileWaiting(lease));
            } // else granted, and if the wait ran out, its check still under way: checkGrant waits for it until the end
            LockResponse locked;
            try {
                locked = lockCall.join();
            } catch (CompletionException | CancellationException e) {
                return AttemptStep.done(Attempt.refused(calls.failure(e, "lock"), true));
            }
            return AttemptStep.done(
                    checkGrant(lease, key, createRevision, locked.getHeader().getRevision(), readBack, end));
        });
    }

    private Attempt<FencedLease> lostWhileWaiting(EtcdLease lease) {
        LeaseLostException loss = lease.lost().join();
        return refused(ServerAnswer.Kind.ERROR, "lost the lease while waiting: " + loss.getMessage());
    }

    /**
     * Checks a grant that came after a wait, by {@code end}: etcd's lock service answers once the
     * keys ahead are gone, even when the lease expired or was revoked meanwhile (which deleted our
     * key too), so the key is read back and must still be the one the queue was joined with. The
     * read is served by the member that answers (no quorum round), and counts only if that member
     * has applied the grant's revision {@code grantedAt}: the key then existed when the lock was
     * granted. A member behind it is passed over for a linearizable read.
     */
    private Attempt<FencedLease> checkGrant(
            EtcdLease lease,
            ByteSequence key,
            long createRevision,
            long grantedAt,
            CompletableFuture<GetResponse> sent,
            long end) {
        GetResponse got;
        AtomicReference<CompletableFuture<GetResponse>> first = new AtomicReference<>(sent);
        try {
            got = calls.call(
                    () -> {
                        CompletableFuture<GetResponse> already = first.getAndSet(null);
                        return already != null ? already : readBack(key); // sent again: a new read
                    },
                    "read the lock key back",
                    end);
            if (got.getHeader().getRevision() < grantedAt) {
                got = calls.call(
                        () -> lock.cancelledOnClose(client.getKVClient().get(key)), "read the lock key back", end);
            }
        } catch (EtcdCalls.RequestFailed e) {
            return Attempt.refused(e.outcome, true);
        }
        String keyText = key.toString(StandardCharsets.UTF_8);
        if (got.getKvs().isEmpty()) {
            return refused(
                    ServerAnswer.Kind.ERROR,
                    "etcd granted the lock, but its key " + keyText
                            + " was gone when read back (the lease expired or was revoked while waiting)");
        }
        KeyValue kv = got.getKvs().get(0);
        if (kv.getLease() != lease.leaseId()) {
            return notOurs(keyText, kv, lease);
        }
        if (kv.getCreateRevision() != createRevision) {
            return refused(
                    ServerAnswer.Kind.ERROR,
                    "etcd granted the lock, but its key " + keyText + " was made again while waiting (create"
                            + " revision " + kv.getCreateRevision() + ", not " + createRevision + ")");
        }
        return hold(lease, key, createRevision);
    }

    /** A read of {@code key} served by the member that answers, without a quorum round. */
    private CompletableFuture<GetResponse> readBack(ByteSequence key) {
        return lock.cancelledOnClose(client.getKVClient()
                .get(key, GetOption.builder().withSerializable(true).build()));
    }

    private Attempt<FencedLease> notOurs(String keyText, KeyValue kv, EtcdLease lease) {
        return refused(
                ServerAnswer.Kind.ERROR,
                "the lock key " + keyText + " is tied to lease " + Long.toHexString(kv.getLease()) + ", not ours ("
                        + Long.toHexString(lease.leaseId()) + ")");
    }

    /**
     * Hands the lease out with its key and token: valid as long as the grant and the renewals
     * answered since say (each counted from its send), unless it was lost meanwhile.
     */
    private Attempt<FencedLease> hold(EtcdLease lease, ByteSequence key, long createRevision) {
        if (!lease.hold(key, createRevision, lock.ticker().nanos())) {
            return refused(ServerAnswer.Kind.ERROR, "lost the lease before it was handed out: " + lease.lossMessage());
        }
        log.debug(
                "acquired '{}' with token {} (key {}, lease {}, TTL {} s)",
                lease.resource(),
                createRevision,
                key.toString(StandardCharsets.UTF_8),
                Long.toHexString(lease.leaseId()),
                lease.ttlSeconds());
        return Attempt.granted(lease);
    }

    /** A failure that another attempt may overcome. */
    private Attempt<FencedLease> refused(ServerAnswer.Kind vote, String detail) {
        return Attempt.refused(calls.outcome(vote, detail), true);
    }

    /**
     * Who holds lock {@code name} now: the first key of its queue by create revision, with one
     * linearizable read within the request timeout; its value names the holder, its create
     * revision is the token.
     *
     * @throws QuorumlockException if etcd did not answer in time or refused
     */
    Optional<LockHolder> holder(String resource, ByteSequence name) {
        List<KeyValue> kvs;
        try {
            kvs = calls.call(
                            () -> lock.cancelledOnClose(
                                    client.getKVClient().get(QueueKeys.prefix(name), QueueKeys.first())),
                            "find the holder")
                    .getKvs();
        } catch (EtcdCalls.RequestFailed e) {
            lock.requireOpen();
            throw new QuorumlockException("could not tell who holds '" + resource + "': " + e.outcome);
        }
        if (kvs.isEmpty()) {
            return Optional.empty();
        }
        KeyValue kv = kvs.get(0);
        String holderName = Holders.read(kv.getValue().getBytes()).orElse("");
        return Optional.of(new LockHolder(holderName, OptionalLong.of(kv.getCreateRevision())));
    }

    /**
     * The refusal of a wait that ran out, final: who holds the lock now, as etcd knows it (the
     * lease its key is tied to), with the key and its create revision, the holder's token. If the
     * first key is ours, the lock was granted and its answer is late: the grant is checked and counts.
     */
    private Attempt<FencedLease> holder(ByteSequence name, EtcdLease own, long waitedNanos, long end) {
        String waited = "waited " + TimeUnit.NANOSECONDS.toMillis(waitedNanos) + " ms for the holder";
        ByteSequence prefix = QueueKeys.prefix(name);
        GetOption first = QueueKeys.first();
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
                // slow link, or a client whose first requests are slow). A grant this linearizable
                // read shows counts.
                return hold(own, kv.getKey(), kv.getCreateRevision());
            }
            String facts = "key " + Holders.shown(kv.getKey().toString(StandardCharsets.UTF_8)) + ", token "
                    + kv.getCreateRevision();
            String lease = Long.toHexString(kv.getLease());
            Optional<String> named = Holders.read(kv.getValue().getBytes());
            String who = named.map(n -> n + " (lease " + lease + ", ").orElse("lease " + lease + " (");
            return Attempt.heldBy(
                    who + facts + "; " + waited + ")",
                    calls.outcome(
                            ServerAnswer.Kind.HELD_BY_OTHER,
                            named.map(n -> Holders.named(n, holder.toString(StandardCharsets.UTF_8)) + ", ")
                                            .orElse("") + facts + ", lease " + lease + "; " + waited));
        } catch (EtcdCalls.RequestFailed e) {
            // etcd did not say who holds the lock now: a silent cluster, not a known holder.
            return Attempt.refused(
                    calls.outcome(
                            e.outcome.kind(), "not granted; " + waited + "; who holds it now: " + e.outcome.detail()),
                    false);
        }
    }
}
