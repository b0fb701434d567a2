package io.quorumlock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LeasedSection;
import io.quorumlock.LockHolder;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.AsyncAcquireLoop;
import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.CriticalSections;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import io.quorumlock.internal.WaitsWithoutThread;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fenced lock on etcd v3: a correctness lock whose leases carry a fencing token.
 *
 * <p>An acquisition grants an etcd lease with the TTL (in whole seconds, rounded up), keeps it
 * alive from then on, and takes etcd's own lock (queued in the order the waiters came, as etcd's
 * {@code Lock} service and its other clients queue them) under the name {@code keyPrefix +
 * resource}: one transaction puts the lock key under the lease and counts the keys of the queue,
 * so a free lock costs no further request. A waiter with a few keys ahead watches them go and holds
 * the lock when the last of them is deleted, with no further request (a deletion of its own key,
 * its lease expired or revoked, refuses it at once); behind a longer queue it waits in etcd's
 * {@code Lock} service, and its key is read back before the lock is handed out (etcd's lock service
 * answers a waiter whose lease expired or was revoked meanwhile). The {@linkplain
 * FencedLease#fencingToken() fencing token} is the create revision of the holder's lock key: etcd
 * orders all writes in one sequence, so every later holder's key was created later and carries a
 * larger token, across clients, member failures and leader changes. A lease etcd no longer knows
 * cannot put the key at all. The lease's validity counts from the send of the grant, and from each
 * renewal's send after that.
 *
 * <p>The lease is renewed by one keep-alive request when two thirds of its TTL are left (every
 * third of the TTL while etcd answers, at once if the grant's answer came late), each counted from
 * when it was sent (no later than when etcd applied it), so that a lease never believes it has
 * more time left than etcd gives it, however late the answers come. It is in doubt once a third
 * of its TTL is left with a renewal unanswered. A lease is lost when etcd says so (the lease was
 * revoked or expired), when no renewal can be answered in time any more, or when none was
 * answered within its validity. The loss is reported as it happens: {@link FencedLease#lost()}
 * completes, {@link FencedLease#isValid()} turns false, and {@link #withLock} interrupts its
 * work. A lost lease is never trusted again; acquire a new one. Hand the token to the storage with
 * every write, so a holder that was paused past its lease is refused there.
 *
 * <pre>{@code
 * try (EtcdLock lock = EtcdLock.builder()
 *         .endpoints("http://10.0.0.1:2379", "http://10.0.0.2:2379", "http://10.0.0.3:2379")
 *         .build()) {
 *     try (FencedLease lease = lock.acquire("stock:sku-42", Duration.ofSeconds(10), Duration.ofSeconds(5))) {
 *         inventory.reserve("sku-42", 1, lease.fencingToken()); // the storage refuses older tokens
 *     }
 * }
 * }</pre>
 *
 * <p>Instances are thread-safe; share one per etcd cluster and close it on shutdown, which
 * releases the leases it still holds.
 */
public final class EtcdLock implements DistributedLock<FencedLease>, Clocked, WaitsWithoutThread<FencedLease> {

    private static final Logger log = LoggerFactory.getLogger(EtcdLock.class);

    /** etcd's own limit on a lease's TTL. */
    static final long MAX_TTL_SECONDS = 9_000_000_000L;

    private static final AtomicInteger instances = new AtomicInteger();
    /** At most this many renewals wait on etcd at once. */
    private static final int RENEWAL_WORKERS = 4;

    private final Client client;
    private final boolean ownsClient;
    private final String cluster;
    private final String keyPrefix;
    private final RetryPolicy retry;
    private final Duration tryAcquireWait;
    private final EtcdCalls calls;
    private final LockAttempts attempts;
    /** How long past its wait an attempt may end: see {@link AcquireLoop#overrun}. */
    private final long overrunNanos;

    /** The threads of the leases' renewals and notices. */
    private final Timers timers;

    private final Set<EtcdLease> leases = ConcurrentHashMap.newKeySet();
    /** The requests of acquires in flight, cancelled on close: a closed client may never answer them. */
    private final Set<CompletableFuture<?>> requests = ConcurrentHashMap.newKeySet();

    private final AtomicBoolean closed = new AtomicBoolean();
    private final LockEvents events;
    /** The one clock of the lock, its calls and its leases. */
    private final Ticker ticker;

    EtcdLock(EtcdLockBuilder builder, Client client, boolean ownsClient, String cluster) {
        this.ticker = builder.ticker;
        this.events = LockEvents.of("etcd", builder.listener);
        this.client = client;
        this.ownsClient = ownsClient;
        this.cluster = cluster;
        this.keyPrefix = builder.keyPrefix;
        this.retry = builder.retry;
        this.tryAcquireWait = builder.tryAcquireWait;
        this.calls = new EtcdCalls(cluster, builder.requestTimeout, ticker);
        this.attempts = new LockAttempts(
                this,
                client,
                calls,
                tryAcquireWait.toNanos(),
                ByteSequence.from(builder.holder, StandardCharsets.UTF_8));
        this.overrunNanos = AcquireLoop.overrun(builder.requestTimeout).toNanos();
        this.timers = builder.timers != null
                ? builder.timers
                : Timers.threads("etcd-" + instances.incrementAndGet(), RENEWAL_WORKERS);
    }

    /** Starts the configuration of a lock. */
    public static EtcdLockBuilder builder() {
        return new EtcdLockBuilder();
    }

    /**
     * Makes one attempt to lock {@code resource} for {@code ttl}: if the lock is held, it waits at
     * most {@linkplain EtcdLockBuilder#tryAcquireWait(Duration) tryAcquireWait} (100 ms by default)
     * for it to be released. It returns within the request timeout, plus tryAcquireWait, plus the
     * {@linkplain AcquireLoop#overrun overrun} of a twentieth of the request timeout (at least 100
     * ms), whatever etcd does: 5.35 s with the defaults.
     *
     * @return the lease, or empty if another client held the lock throughout (the attempt then
     *     revoked its own etcd lease, so it leaves nothing behind)
     * @throws LockUnavailableException if etcd could not be reached, did not answer in time or
     *     refused, with its answer as evidence (the attempt's own etcd lease, if it got one, is
     *     revoked, or ends within its TTL)
     * @throws IllegalArgumentException if the resource is empty or the TTL not positive
     * @throws IllegalStateException if this lock was closed
     * @throws QuorumlockException if the thread was interrupted (the interrupt flag stays set)
     */
    @Override
    public Optional<FencedLease> tryAcquire(String resource, Duration ttl) {
        checkResource(resource);
        long ttlSeconds = ttlSeconds(ttl);
        return AcquireLoop.once(resource, ticker, events, () -> once(resource, ttlSeconds));
    }

    /** One attempt as {@link #tryAcquire} makes it. */
    private AcquireLoop.Attempt<FencedLease> once(String resource, long ttlSeconds) {
        return new Bounds(true)
                .attempt(
                        1,
                        0,
                        (lockWait, waitEnd, end) -> attempts.attempt(resource, ttlSeconds, lockWait, waitEnd, end));
    }

    /** One attempt within the bounds that {@link Bounds} gives it. */
    @FunctionalInterface
    private interface Bounded<R> {
        R attempt(long lockWaitNanos, long waitEnd, long end);
    }

    /**
     * The bounds of the attempts of one acquire, blocking or not. One attempt ({@code once}) is
     * tryAcquire's: a request timeout for the grant, tryAcquireWait for the lock. Otherwise the
     * first attempt sets the end of the wait for all: what is left of {@code maxWait}, yet at least
     * tryAcquireWait, so that a free lock is given that long to be granted however short the wait;
     * each attempt waits for the lock until then. Every attempt's requests end by the end of the
     * wait and the overrun. The attempts of one acquire are made one after the other.
     */
    private final class Bounds {
        private final boolean once;
        private long waitEnd;

        Bounds(boolean once) {
            this.once = once;
        }

        <R> R attempt(int number, long remainingNanos, Bounded<R> attempt) {
            long now = ticker.nanos();
            if (once) {
                long onceEnd = now + calls.requestTimeout().toNanos() + tryAcquireWait.toNanos();
                return attempt.attempt(tryAcquireWait.toNanos(), onceEnd, onceEnd + overrunNanos);
            }
            if (number == 1) {
                waitEnd = now + Math.max(remainingNanos, tryAcquireWait.toNanos());
            }
            return attempt.attempt(Math.max(0, waitEnd - now), waitEnd, waitEnd + overrunNanos);
        }
    }

    /**
     * Locks {@code resource} for {@code ttl}, waiting up to {@code maxWait} in etcd's queue for the
     * holders before it. A failed attempt (etcd unreachable, the lease lost while waiting) is
     * retried after the {@linkplain EtcdLockBuilder#retry(RetryPolicy) retry} delay while {@code
     * maxWait} allows. A free lock is given at least {@linkplain
     * EtcdLockBuilder#tryAcquireWait(Duration) tryAcquireWait} to be granted, so a {@code maxWait}
     * of zero acts as {@link #tryAcquire} that throws, bounded as {@code tryAcquire} is. Otherwise
     * the call returns within {@code maxWait} (at least tryAcquireWait) and the {@linkplain
     * AcquireLoop#overrun overrun}, the larger of 100 ms and a twentieth of the {@linkplain
     * EtcdLockBuilder#requestTimeout request timeout} (250 ms by default), whatever etcd does:
     * every request is bounded by what is left of the wait, and the overrun pays for the requests
     * that end an attempt whose wait ran out (reading who holds the lock, checking a grant that
     * came at the last moment). If etcd gave no answer within the wait, the exception says so.
     *
     * @throws LockUnavailableException if the lock was not acquired in time, with the holder's key,
     *     create revision and lease as evidence when one was seen; the attempt revoked its own etcd
     *     lease, so it leaves nothing behind (if etcd did not answer in time, the revoke goes on in
     *     the background, and the lease, no longer kept alive, ends within its TTL in any case)
     * @throws IllegalArgumentException if the resource is empty, the TTL not positive or {@code
     *     maxWait} negative
     * @throws IllegalStateException if this lock was closed
     * @throws QuorumlockException if the thread was interrupted (the interrupt flag stays set)
     */
    @Override
    public FencedLease acquire(String resource, Duration ttl, Duration maxWait) {
        checkResource(resource);
        long ttlSeconds = ttlSeconds(ttl);
        Bounds bounds = new Bounds(Settings.maxWait(maxWait).isZero());
        return AcquireLoop.acquire(
                resource,
                maxWait,
                retry,
                ticker,
                events,
                (number, remainingNanos) -> bounds.attempt(
                        number,
                        remainingNanos,
                        (lockWait, waitEnd, end) -> attempts.attempt(resource, ttlSeconds, lockWait, waitEnd, end)));
    }

    /**
     * As {@link #acquire}, holding no thread while it waits: the attempts send their requests on
     * the threads that the asynchronous acquires of this process share, and a wait in etcd's queue
     * ends at a watch's event, etcd's answer to the lock call, the lease's loss, or a timer.
     * Cancelling the future gives the wait up at once (the watch or the lock call is cancelled, the
     * attempt's lease revoked, so its key is deleted); a lease granted after the cancel is
     * released. Closing the lock ends it with an {@link IllegalStateException}. {@link
     * #acquireAsync} takes its leases with this.
     *
     * @throws IllegalArgumentException if the resource is empty, the TTL not positive or {@code
     *     maxWait} negative
     * @throws IllegalStateException if this lock was closed
     */
    @Override
    public CompletableFuture<FencedLease> acquireWithoutThread(String resource, Duration ttl, Duration maxWait) {
        checkResource(resource);
        long ttlSeconds = ttlSeconds(ttl);
        Bounds bounds = new Bounds(Settings.maxWait(maxWait).isZero());
        requireOpen();
        return AsyncAcquireLoop.acquireAsyncBy(
                resource,
                maxWait,
                retry,
                ticker,
                events,
                (number, remainingNanos, acquire) -> bounds.attempt(
                        number,
                        remainingNanos,
                        (lockWait, waitEnd, end) ->
                                attempts.attemptWithoutThread(resource, ttlSeconds, lockWait, waitEnd, end, acquire)),
                FencedLease::release);
    }

    /**
     * Runs {@code work} while holding the lock, and releases it afterwards. The lease is kept alive
     * all along, so the work may take longer than the TTL. If the lease is lost meanwhile, the
     * thread running the work is interrupted, and the call ends with a {@link LeaseLostException}
     * whatever the work returned, because another holder may have entered the critical section.
     *
     * @throws LockUnavailableException if the lock could not be acquired within {@code maxWait}
     * @throws LeaseLostException if the lease was lost while the work ran (the work's own exception,
     *     if any, is suppressed in it)
     * @throws X what the work throws, when the lease held throughout
     */
    @Override
    public <T, X extends Exception> T withLease(
            String resource, Duration ttl, Duration maxWait, LeasedSection<FencedLease, T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        FencedLease lease = acquire(resource, ttl, maxWait);
        return CriticalSections.run(lease, () -> work.run(lease));
    }

    /**
     * A third of the lease's TTL (in whole seconds): a lease is {@linkplain FencedLease#inDoubt() in
     * doubt} once a third of its TTL is left with a renewal unanswered, and etcd expires it at its
     * end.
     */
    @Override
    public Duration lossNotice(Duration ttl) {
        return Duration.ofNanos(LeaseTimes.doubtNoticeNanos(TimeUnit.SECONDS.toNanos(ttlSeconds(ttl))));
    }

    /**
     * Who holds {@code resource} now: the lock key with the lowest create revision under the
     * resource's lock name, the one etcd's lock service grants, read with one linearizable read
     * (which needs a quorum of members and a leader) within the {@linkplain
     * EtcdLockBuilder#requestTimeout request timeout}. The name is the key's value, as the holder's
     * lock wrote it ({@link EtcdLockBuilder#holder(String)}); the token is the key's create
     * revision, the fencing token of the holder's lease. Empty if no key is queued: free, released,
     * or the holder's etcd lease expired. A contender whose key was put a moment ago and is first
     * in line counts as the holder: the lock is its to take.
     *
     * @throws QuorumlockException naming the cluster and what failed, if etcd did not answer in
     *     time or refused the read
     * @throws IllegalArgumentException if the resource is empty
     * @throws IllegalStateException if this lock was closed
     */
    @Override
    public Optional<LockHolder> holder(String resource) {
        checkResource(resource);
        requireOpen();
        return attempts.holder(resource, lockName(resource));
    }

    /**
     * Reads the cluster's current revision with a linearizable read (which needs a quorum of
     * members and a leader), for at most {@code timeout}: for health checks.
     *
     * @return the cluster's revision
     * @throws QuorumlockException naming the cluster and what failed, if no answer came within
     *     {@code timeout} or the read was refused
     * @throws IllegalArgumentException if the timeout is not positive
     * @throws IllegalStateException if this lock was closed
     */
    public long checkCluster(Duration timeout) {
        Settings.positive("timeout", Objects.requireNonNull(timeout, "timeout"));
        requireOpen();
        CompletableFuture<GetResponse> sent = client.getKVClient()
                .get(
                        lockName(""),
                        GetOption.builder().isPrefix(true).withCountOnly(true).build());
        try {
            return sent.get(timeout.toNanos(), TimeUnit.NANOSECONDS).getHeader().getRevision();
        } catch (TimeoutException e) {
            sent.cancel(false);
            throw new QuorumlockException(
                    cluster + ": no answer to a linearizable read within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            throw new QuorumlockException(cluster + ": " + calls.failure(e, "read the revision"), e.getCause());
        } catch (InterruptedException e) {
            sent.cancel(false);
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while reading the revision of " + cluster, e);
        }
    }

    /**
     * Ends every lease this lock still holds as lost ({@link FencedLease#lost()} completes, so work
     * under {@code withLock} is interrupted and ends in a {@link LeaseLostException}), releases them
     * (all within one request timeout: a lease whose
     * release etcd did not answer by then runs out within its TTL, no longer kept alive; releases
     * already under way in other threads are waited for as long, so the client is not closed under
     * them), ends the acquires still waiting with an {@link IllegalStateException} (their leases
     * revoked with the others, so they leave no key), stops its threads and, if the lock built
     * its own client, closes it. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<EtcdLease> open = List.copyOf(leases);
        for (EtcdLease lease : open) {
            lease.loseOnClose(); // work under the lease stops before its release lets another holder in
        }
        long deadline = ticker.nanos() + calls.requestTimeout().toNanos();
        for (EtcdLease lease : open) {
            lease.releaseBy(deadline); // all within one request timeout: etcd may be silent
        }
        for (CompletableFuture<?> request : List.copyOf(requests)) {
            request.cancel(false); // ends the acquires waiting for them
        }
        timers.close();
        if (ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "EtcdLock[" + cluster + ", keyPrefix " + keyPrefix + "]";
    }

    // ---- for EtcdLease ---------------------------------------------------------------------------

    Client client() {
        return client;
    }

    /** The lock's clock: every validity and deadline of the lock counts on it. */
    @Override
    public Ticker ticker() {
        return ticker;
    }

    LockEvents events() {
        return events;
    }

    Timers timers() {
        return timers;
    }

    Duration requestTimeout() {
        return calls.requestTimeout();
    }

    EtcdCalls calls() {
        return calls;
    }

    /**
     * {@code request}, an acquire's, cancelled when this lock is closed (at once if it already is):
     * the acquire waiting for it then ends, and a closed lock grants nothing.
     */
    <T> CompletableFuture<T> cancelledOnClose(CompletableFuture<T> request) {
        requests.add(request);
        request.whenComplete((answer, failure) -> requests.remove(request));
        if (closed.get()) {
            request.cancel(false);
        }
        return request;
    }

    /** From now on, {@code lease} is released when this lock is closed. */
    void follow(EtcdLease lease) {
        leases.add(lease);
    }

    void forget(EtcdLease lease) {
        leases.remove(lease);
    }

    // ---- names and arguments ---------------------------------------------------------------------

    /**
     * The etcd lock name of a resource: the prefix and the resource, with '%' and '/' escaped, so
     * that the keys of one resource never fall in the range of another (etcd's lock waits on every
     * key under {@code name + "/"}).
     */
    ByteSequence lockName(String resource) {
        return ByteSequence.from(keyPrefix + escape(resource), StandardCharsets.UTF_8);
    }

    static String escape(String resource) {
        return resource.replace("%", "%25").replace("/", "%2F");
    }

    private static void checkResource(String resource) {
        Settings.resource(resource, "stock:sku-42");
    }

    /** The etcd TTL for a lease: whole seconds, rounded up. */
    static long ttlSeconds(Duration ttl) {
        Settings.ttl(ttl, "");
        long seconds = ttl.getSeconds() + (ttl.getNano() > 0 ? 1 : 0);
        if (seconds > MAX_TTL_SECONDS) {
            throw new IllegalSettingException(
                    "ttl",
                    "ttl must be at most " + MAX_TTL_SECONDS + " s (etcd's limit), was " + ttl.getSeconds() + " s");
        }
        return seconds;
    }

    boolean isClosed() {
        return closed.get();
    }

    void requireOpen() {
        if (closed.get()) {
            throw new IllegalStateException("this EtcdLock is closed");
        }
    }
}
