package io.quorumlock;

import io.quorumlock.internal.AsyncThreads;
import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.CriticalSections;
import io.quorumlock.internal.LateGrants;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.WaitsWithoutThread;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A semaphore of N permits across processes, on any lock of this library: at most N holders at
 * once, each holding a permit for a TTL, kept alive, lost with a notice and released once, as a
 * lease of the lock is.
 *
 * <pre>{@code
 * DistributedSemaphore<FencedLease> backups = DistributedSemaphore.of(lock, "backups", 3);
 * try (FencedLease permit = backups.acquire(Duration.ofMinutes(5), Duration.ofMinutes(1))) {
 *     ... // at most 3 of these run at once, fleet-wide
 * }
 * }</pre>
 *
 * <p>Permit {@code i} (1 to N) is the lock on the resource {@code name#i}: a permit is the lock's
 * lease on it, so it is exactly as safe as the lock. On a fenced backend (ZooKeeper, etcd, a
 * database) each permit carries the fencing token of its own resource: a storage-side fence that
 * checks the permit's resource and token ({@code JdbcFence.check(tx, permit)}) refuses the late
 * write of a holder paused past its permit while the N current holders write. On Redis a permit has
 * no token: N + 1 holders for a moment are unlikely but not excluded (a pause past the TTL).
 *
 * <p>A permit counted by majority vote over Redlock's nodes would not be safe (5 nodes and 3
 * permits: each node admits 3 holders and each grant needs 3 nodes, so up to 5 grants); N locks of
 * one holder each are.
 *
 * <p>An acquire tries the permits in turn, from a random one, and takes the first free. While all
 * are held, it waits for the release of one of them as the lock's waiters do (woken by the release
 * on every backend): on a lock that waits with no thread (Redlock) on every permit at once, taking
 * the first granted and giving the other waits up; on the others one permit at a time, trying them
 * all again at least once a second. A permit's waiters are served in order on the backends that
 * queue them (Redis, ZooKeeper, etcd); across permits there is no order.
 *
 * @param <L> the kind of lease the lock grants
 */
public final class DistributedSemaphore<L extends Lease> {

    /** The most permits a semaphore may have: an acquire may try each of them. */
    public static final int MAX_PERMITS = 64;

    private static final long FIRST_WAIT_NANOS = Duration.ofMillis(50).toNanos();
    private static final long LONGEST_WAIT_NANOS = Duration.ofSeconds(1).toNanos();

    private final DistributedLock<L> lock;
    private final String name;
    private final int permits;
    private final Ticker ticker;

    private DistributedSemaphore(DistributedLock<L> lock, String name, int permits) {
        this.lock = Objects.requireNonNull(lock, "lock");
        this.name = Settings.resource(name, "backups");
        Settings.requireArgument(
                permits >= 1 && permits <= MAX_PERMITS,
                "permits",
                "permits must be 1 to %d (an acquire may try each permit), was %d",
                MAX_PERMITS,
                permits);
        this.permits = permits;
        this.ticker = Clocked.of(lock);
    }

    /**
     * The semaphore {@code name} of {@code permits} permits on {@code lock}: every process that
     * makes one of the same name and number on the same backend shares its permits. The lock stays
     * the caller's to close.
     *
     * @throws IllegalSettingException if {@code permits} is not 1 to {@value #MAX_PERMITS} or the
     *     name is empty
     */
    public static <L extends Lease> DistributedSemaphore<L> of(DistributedLock<L> lock, String name, int permits) {
        return new DistributedSemaphore<>(lock, name, permits);
    }

    /** The semaphore's name. */
    public String name() {
        return name;
    }

    /** How many permits it has. */
    public int permits() {
        return permits;
    }

    /** The resource of permit {@code number} (1 to {@link #permits()}): {@code name#number}. */
    public String permit(int number) {
        if (number < 1 || number > permits) {
            throw new IllegalArgumentException("permit must be 1 to " + permits + ", was " + number);
        }
        return name + "#" + number;
    }

    /**
     * The number (1 to {@link #permits()}) of the permit that {@code lease} holds.
     *
     * @throws IllegalArgumentException if the lease is not a permit of this semaphore
     */
    public int permitOf(Lease lease) {
        String resource = Objects.requireNonNull(lease, "lease").resource();
        String prefix = name + "#";
        if (resource.startsWith(prefix)) {
            try {
                int number = Integer.parseInt(resource.substring(prefix.length()));
                if (number >= 1 && number <= permits) {
                    return number;
                }
            } catch (NumberFormatException notOurs) {
                // falls through
            }
        }
        throw new IllegalArgumentException("the lease on '" + resource + "' is no permit of " + this);
    }

    /**
     * Tries each permit once and returns the first granted.
     *
     * @return the permit's lease, or empty if every permit is held by another owner
     * @throws PermitUnavailableException if no permit was granted and some permit's lock could not
     *     say whether it was free (its servers not reached, not answering)
     */
    public Optional<L> tryAcquire(Duration ttl) {
        Settings.ttl(ttl, "");
        long start = ticker.nanos();
        Scan<L> scan = scan(ThreadLocalRandom.current().nextInt(permits), ttl);
        if (scan.lease != null) {
            return Optional.of(scan.lease);
        }
        if (scan.busy) {
            return Optional.empty();
        }
        throw unavailable(scan.answers, start, scan.attempts, false);
    }

    /**
     * Acquires a permit, waiting up to {@code maxWait} for one to be released; a {@code maxWait} of
     * zero tries each permit once.
     *
     * @param ttl how long the permit is held unless extended or kept alive
     * @throws PermitUnavailableException if no permit was granted in time, with what each permit's
     *     lock said last
     * @throws QuorumlockException if the thread was interrupted while waiting (the flag stays set)
     */
    public L acquire(Duration ttl, Duration maxWait) {
        Settings.ttl(ttl, "");
        Wait wait = new Wait(ttl, maxWait);
        L free = wait.scan(); // on this thread: a free permit is taken with no hand-over
        if (free != null) {
            return free;
        }
        if (lock instanceof WaitsWithoutThread<?>) {
            CompletableFuture<L> lease = withoutThread(wait, false);
            try {
                return lease.get();
            } catch (InterruptedException e) {
                if (!lease.cancel(true) && lease.isDone() && !lease.isCompletedExceptionally()) {
                    grant(lease, lease.join()); // granted as the interrupt came: given back
                }
                Thread.currentThread().interrupt();
                throw new QuorumlockException("interrupted while waiting for a permit of '" + name + "'", e);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof RuntimeException failure) {
                    throw failure;
                }
                if (cause instanceof Error error) {
                    throw error;
                }
                throw new QuorumlockException(String.valueOf(cause), cause);
            }
        }
        while (true) {
            String permit = wait.permit();
            try {
                return lock.acquire(permit, ttl, wait.onPermit());
            } catch (LockUnavailableException e) {
                wait.refused(permit, e);
            }
            L lease = wait.scan();
            if (lease != null) {
                return lease;
            }
        }
    }

    /**
     * {@link #acquire}'s asynchronous twin, as {@link DistributedLock#acquireAsync} is the lock's:
     * the asynchronous acquires of this semaphore in this process form one line. On a lock that
     * waits with no thread (Redlock) no thread waits; on the others one thread serves the line.
     * Cancelling the future gives the wait up, and a permit granted after it is released.
     */
    public CompletableFuture<L> acquireAsync(Duration ttl, Duration maxWait) {
        Settings.ttl(ttl, "");
        Settings.maxWait(maxWait);
        String kind = "permits (" + permits + ")";
        if (lock instanceof WaitsWithoutThread<?>) {
            return AsyncAcquires.withoutThread(
                    lock,
                    kind,
                    name,
                    maxWait,
                    ticker,
                    wait -> withoutThread(new Wait(ttl, wait), true),
                    Lease::release);
        }
        return AsyncAcquires.acquire(lock, kind, name, maxWait, ticker, wait -> acquire(ttl, wait), Lease::release);
    }

    /**
     * {@link #acquire} on a lock that waits with no thread: one try of every permit (unless {@code
     * scanFirst} is false: the caller made it), then a wait on
     * every permit at once, each woken by its own release; the first permit granted is the lease,
     * and the other waits are given up (a permit granted to one of them meanwhile is released).
     */
    private CompletableFuture<L> withoutThread(Wait wait, boolean scanFirst) {
        @SuppressWarnings("unchecked")
        WaitsWithoutThread<L> waits = (WaitsWithoutThread<L>) lock;
        Duration ttl = wait.ttl;
        CompletableFuture<L> result = new CompletableFuture<>();
        List<CompletableFuture<L>> onPermits = new CopyOnWriteArrayList<>();
        result.whenComplete((lease, failure) -> onPermits.forEach(other -> other.cancel(true)));
        AsyncThreads.attempts().execute(() -> {
            try {
                L lease = result.isDone() || !scanFirst ? null : wait.scan();
                if (lease != null) {
                    grant(result, lease);
                    return;
                }
                Duration left = wait.onAll();
                for (int number = 1; number <= permits && !result.isDone(); number++) {
                    String permit = permit(number);
                    CompletableFuture<L> onPermit = waits.acquireWithoutThread(permit, ttl, left);
                    onPermits.add(onPermit);
                    onPermit.whenComplete((granted, failure) -> {
                        try {
                            if (granted != null) {
                                grant(result, granted);
                            } else if (!(failure instanceof LockUnavailableException refused)) {
                                result.completeExceptionally(failure); // a cancel, or what the lock throws
                            } else if (wait.refusedOnAll(permit, refused)) {
                                result.completeExceptionally(wait.refusal());
                            }
                        } catch (RuntimeException | Error e) {
                            result.completeExceptionally(e);
                        }
                    });
                }
                if (result.isDone()) {
                    onPermits.forEach(other -> other.cancel(true));
                }
            } catch (RuntimeException | Error e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** {@link #acquire} on a lock that waits with no thread, with no thread waiting: for the read-write lock. */
    CompletableFuture<L> acquireWithoutThread(Duration ttl, Duration maxWait) {
        return withoutThread(new Wait(ttl, maxWait), true);
    }

    /** Completes {@code result} with {@code lease}, or gives the lease back if it is done already. */
    private void grant(CompletableFuture<L> result, L lease) {
        LateGrants.complete(result, lease, Lease::release, name);
    }

    /** {@link #tryAcquire}'s asynchronous twin: one try of each permit, on a thread of this library. */
    public CompletableFuture<Optional<L>> tryAcquireAsync(Duration ttl) {
        Settings.ttl(ttl, "");
        return AsyncAcquires.once(() -> tryAcquire(ttl));
    }

    /**
     * Runs {@code work} under a permit acquired as {@link #acquire} does, kept alive as the lock's
     * {@code withLease} keeps a lease, then releases it. The work is interrupted when the permit's
     * lease is lost (or, fenced, in doubt).
     *
     * @throws LeaseLostException if the permit was lost before the work ended
     * @throws X what the work throws, when the permit held throughout
     */
    public <T, X extends Exception> T withPermit(Duration ttl, Duration maxWait, LeasedSection<L, T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        L lease = acquire(ttl, maxWait);
        CompletableFuture<LeaseLostException> lost;
        try {
            lost = lock.keepAlive(lease, ttl);
        } catch (RuntimeException e) {
            lease.release();
            throw e;
        }
        return CriticalSections.run(lease, lost, () -> work.run(lease));
    }

    /**
     * Keeps a permit alive as the lock's {@link DistributedLock#keepAlive} does, for work that is
     * not a Java call (a child process).
     */
    public CompletableFuture<LeaseLostException> keepAlive(L lease, Duration ttl) {
        permitOf(lease);
        return lock.keepAlive(lease, ttl);
    }

    /** Who holds each held permit, by the permit's resource, as the lock's {@code holder} tells. */
    public Map<String, LockHolder> holders() {
        Map<String, LockHolder> holders = new LinkedHashMap<>();
        for (int number = 1; number <= permits; number++) {
            String permit = permit(number);
            lock.holder(permit).ifPresent(holder -> holders.put(permit, holder));
        }
        return holders;
    }

    @Override
    public String toString() {
        return "DistributedSemaphore[" + name + ", " + permits + " permit" + (permits == 1 ? "" : "s") + "]";
    }

    /** One try of each permit for {@code ttl}, from permit {@code from + 1} on. */
    private Scan<L> scan(int from, Duration ttl) {
        Scan<L> scan = new Scan<>();
        for (int i = 0; i < permits; i++) {
            String permit = permit(1 + (from + i) % permits);
            scan.attempts++;
            try {
                Optional<L> lease = lock.tryAcquire(permit, ttl);
                if (lease.isPresent()) {
                    scan.lease = lease.get();
                    return scan;
                }
                scan.answers.put(permit, "held");
            } catch (LockUnavailableException e) {
                scan.answers.put(permit, answer(e));
                scan.busy &= e.busy();
            }
        }
        return scan;
    }

    /** What a permit's refusal says, without the lock's own first words. */
    private static String answer(LockUnavailableException e) {
        if (e.busy()) {
            return "held";
        }
        String message = String.valueOf(e.getMessage());
        int cut = message.indexOf("): ");
        return cut >= 0 ? message.substring(cut + 3) : message;
    }

    private PermitUnavailableException unavailable(
            Map<String, String> answers, long start, int attempts, boolean busy) {
        Map<String, String> inOrder = new LinkedHashMap<>();
        for (int number = 1; number <= permits; number++) {
            String permit = permit(number);
            String answer = answers.getOrDefault(permit, "not tried");
            if (answer.equals("held")) {
                answer = holder(permit);
            }
            inOrder.put(permit, answer);
        }
        return new PermitUnavailableException(
                name, permits, Duration.ofNanos(ticker.nanos() - start), attempts, inOrder, busy);
    }

    /** {@code held by NAME}, as far as the lock can tell in one more call. */
    private String holder(String permit) {
        try {
            return lock.holder(permit).map(holder -> "held by " + holder).orElse("held");
        } catch (RuntimeException unknown) {
            return "held";
        }
    }

    /**
     * One acquire's wait for a permit: tries every permit, then waits on one of them, woken by its
     * release, for 50 ms at first and twice as long each time up to a second, the permit waited on
     * changing each time, until a try is granted or {@code maxWait} passes.
     */
    private final class Wait {
        private final Duration ttl;
        private final long budget;
        private final long start = ticker.nanos();
        private final int from = ThreadLocalRandom.current().nextInt(permits);
        private int attempts;
        private int round;
        private long wait = FIRST_WAIT_NANOS;
        private Scan<L> scan;
        /** Of a wait on every permit at once: how many of its waits go on, and whether all met a holder. */
        private int onAll;

        private boolean busyOnAll;

        Wait(Duration ttl, Duration maxWait) {
            this.ttl = ttl;
            this.budget = Settings.maxWait(maxWait).toNanos();
        }

        /**
         * Tries every permit: the lease of the first free one, or null.
         *
         * @throws PermitUnavailableException if none was free and the wait has passed
         */
        L scan() {
            scan = DistributedSemaphore.this.scan(from, ttl);
            attempts += scan.attempts;
            if (scan.lease != null) {
                return scan.lease;
            }
            if (left() <= 0) {
                throw DistributedSemaphore.this.unavailable(scan.answers, start, attempts, scan.busy);
            }
            return null;
        }

        private long left() {
            return budget - (ticker.nanos() - start);
        }

        /** The permit to wait on next, woken by its release; the others are looked at again after. */
        String permit() {
            attempts++;
            return DistributedSemaphore.this.permit(1 + (from + round++) % permits);
        }

        /** How long to wait on that permit. */
        Duration onPermit() {
            return Duration.ofNanos(Math.max(0, Math.min(left(), wait)));
        }

        /** Everything that is left of the wait, for a wait on every permit at once. */
        synchronized Duration onAll() {
            onAll = permits;
            busyOnAll = true;
            return Duration.ofNanos(Math.max(0, left()));
        }

        /**
         * The wait on {@code permit} of a wait on all of them ended refused: whether the whole wait
         * is refused, this being the last of them.
         */
        synchronized boolean refusedOnAll(String permit, LockUnavailableException e) {
            scan.answers.put(permit, answer(e));
            attempts += e.attempts();
            busyOnAll &= e.busy();
            scan.busy = busyOnAll; // what the waits met last, not the first tries
            return --onAll == 0;
        }

        /** The refusal of a wait on every permit, with what each said last. */
        synchronized PermitUnavailableException refusal() {
            return DistributedSemaphore.this.unavailable(scan.answers, start, attempts, scan.busy);
        }

        /**
         * The wait on {@code permit} ended refused: the next round comes, twice as long.
         *
         * @throws PermitUnavailableException if the wait has passed
         */
        void refused(String permit, LockUnavailableException e) {
            if (left() <= 0) {
                scan.answers.put(permit, answer(e));
                throw DistributedSemaphore.this.unavailable(scan.answers, start, attempts, scan.busy && e.busy());
            }
            wait = Math.min(LONGEST_WAIT_NANOS, wait * 2);
        }
    }

    /** What one try of every permit came to. */
    private static final class Scan<L> {
        L lease;
        int attempts;
        boolean busy = true;
        final Map<String, String> answers = new LinkedHashMap<>();
    }
}
