package io.quorumlock;

import io.quorumlock.internal.AsyncThreads;
import io.quorumlock.internal.LateGrants;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The asynchronous acquires of this process: a future per acquire. The acquires of one resource of
 * one lock object form a line in the order they were made, served one at a time: the first takes
 * the lease, woken by the release as any waiter of the lock is, then the next. A lock that waits
 * with no thread (Redlock) serves its lines with futures only; the others with one thread per line
 * while it has waiters (a virtual thread on Java 24 and later, so that no platform thread waits). A
 * waiter whose {@code maxWait} passes while others of this process are ahead of it ends then,
 * refused; a cancelled one leaves the line, and a lease granted to it after the cancel is released.
 */
final class AsyncAcquires {

    private static final Logger log = LoggerFactory.getLogger(AsyncAcquires.class);

    /** The lines with waiters, by lock object (by identity) and resource. */
    private static final Map<Key, Line<?>> LINES = new ConcurrentHashMap<>();

    /**
     * The threads of the lines of locks that wait on a thread, and those that complete the futures
     * (where the caller's callbacks run); none while idle.
     */
    private static final Executor THREADS = threads();

    private AsyncAcquires() {}

    /**
     * A new virtual thread per line on Java 24 and later, where a virtual thread blocked in a lock's
     * wait (a monitor's included, JEP 491) leaves its carrier free: then a waiting line holds no
     * platform thread. Before 24 a monitor wait pins the carrier, so the lines are platform threads.
     */
    private static Executor threads() {
        ThreadFactory virtual = Runtime.version().feature() >= 24 ? virtualThreads("quorumlock-async-") : null;
        if (virtual != null) {
            return task -> virtual.newThread(task).start();
        }
        AtomicInteger count = new AtomicInteger();
        ThreadPoolExecutor pool =
                new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), task -> {
                    Thread thread = new Thread(task, "quorumlock-async-" + count.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        return pool;
    }

    /** Java 21's {@code Thread.ofVirtual().name(prefix, 1).factory()}, reached by reflection from Java 17's API. */
    private static ThreadFactory virtualThreads(String prefix) {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Class<?> ofVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
            builder = ofVirtual.getMethod("name", String.class, long.class).invoke(builder, prefix, 1L);
            return (ThreadFactory) Class.forName("java.lang.Thread$Builder")
                    .getMethod("factory")
                    .invoke(builder);
        } catch (ReflectiveOperationException | RuntimeException e) {
            log.debug(
                    "no virtual threads for the asynchronous acquires ({}): platform threads serve them", e.toString());
            return null;
        }
    }

    /** Takes a lease within {@code maxWait}, the wait it is given; throws as the lock's {@code acquire} does. */
    @FunctionalInterface
    interface Acquire<L> {
        L acquire(Duration maxWait);
    }

    /**
     * Takes a lease within {@code maxWait} with no thread waiting: a future that completes as the
     * lock's {@code acquire} returns or throws, and whose cancel gives the wait up.
     */
    @FunctionalInterface
    interface FutureAcquire<L> {
        CompletableFuture<L> acquire(Duration maxWait);
    }

    /**
     * An acquire of {@code resource} on {@code owner}, the lock, that joins the line of this
     * process's asynchronous acquires of it: of the lock itself, or of a {@code kind} of primitive
     * over it (a semaphore's permits, a read-write lock's readers or writers).
     *
     * @param release how a lease granted after its future was cancelled is given back
     */
    static <L> CompletableFuture<L> acquire(
            Object owner,
            String kind,
            String resource,
            Duration maxWait,
            Ticker ticker,
            Acquire<L> acquire,
            Consumer<? super L> release) {
        Objects.requireNonNull(acquire, "acquire");
        return withoutThread(
                owner, kind, resource, maxWait, ticker, wait -> onThread(acquire, wait, release, resource), release);
    }

    /**
     * As {@link #acquire(Object, String, String, Duration, Ticker, Acquire, Consumer)}, for a lock
     * that waits with no thread: the line's turns are taken by the futures {@code acquire} gives,
     * and no thread serves the line while the lease is waited for.
     */
    static <L> CompletableFuture<L> withoutThread(
            Object owner,
            String kind,
            String resource,
            Duration maxWait,
            Ticker ticker,
            FutureAcquire<L> acquire,
            Consumer<? super L> release) {
        Objects.requireNonNull(acquire, "acquire");
        long wait = Settings.maxWait(maxWait).toNanos();
        Waiter<L> waiter = new Waiter<>(ticker.nanos() + Math.min(wait, Long.MAX_VALUE / 4), acquire, release);
        Key key = new Key(owner, kind, resource);
        @SuppressWarnings("unchecked")
        Line<L> line = (Line<L>) LINES.compute(key, (k, existing) -> {
            Line<?> joined = existing != null ? existing : new Line<>(k, ticker);
            joined.join(waiter);
            return joined;
        });
        waiter.future.whenComplete((lease, failure) -> {
            if (failure instanceof CancellationException) {
                line.cancelled(waiter);
            }
        });
        if (wait < Long.MAX_VALUE / 4 && !waiter.future.isDone()) {
            ScheduledFuture<?> end = AsyncThreads.timer()
                    .schedule(
                            () -> line.waitPassed(waiter, resource, Duration.ofNanos(wait)),
                            wait,
                            TimeUnit.NANOSECONDS);
            waiter.future.whenComplete((lease, failure) -> end.cancel(false));
        }
        return waiter.future;
    }

    /**
     * One attempt, on one of the few threads that the attempts share ({@link AsyncThreads#attempts()})
     * (queued behind each other when more are asked at once): {@code tryAcquire}'s asynchronous twin.
     */
    static <T> CompletableFuture<T> once(Supplier<T> attempt) {
        return CompletableFuture.supplyAsync(attempt, AsyncThreads.attempts());
    }

    /** A line's name: the lock object (by identity), what is acquired of it, and the resource. */
    private record Key(Object owner, String kind, String resource) {
        @Override
        public boolean equals(Object other) {
            return other instanceof Key key
                    && key.owner == owner
                    && key.kind.equals(kind)
                    && key.resource.equals(resource);
        }

        @Override
        public int hashCode() {
            return (System.identityHashCode(owner) * 31 + kind.hashCode()) * 31 + resource.hashCode();
        }
    }

    /**
     * A blocking acquire on a thread of its own (virtual on Java 24 and later): a future whose
     * cancel interrupts the thread; a lease granted after the cancel is given back with {@code release}.
     */
    private static <L> CompletableFuture<L> onThread(
            Acquire<L> acquire, Duration maxWait, Consumer<? super L> release, String resource) {
        OnThread<L> future = new OnThread<>();
        THREADS.execute(() -> future.run(acquire, maxWait, release, resource));
        return future;
    }

    /**
     * The future of a blocking acquire on a thread: a cancel interrupts the thread, and the future
     * completes (cancelled) only once the acquire has returned, so that the line serves its next
     * waiter after this acquire, not beside it.
     */
    private static final class OnThread<L> extends CompletableFuture<L> {
        private Thread running;
        private boolean cancelled;
        private boolean ended;

        void run(Acquire<L> acquire, Duration maxWait, Consumer<? super L> release, String resource) {
            synchronized (this) {
                if (cancelled) {
                    super.cancel(false);
                    return;
                }
                running = Thread.currentThread();
            }
            L lease = null;
            Throwable failed = null;
            try {
                lease = acquire.acquire(maxWait);
            } catch (RuntimeException | Error e) { // the waiter's to know
                failed = e;
            } finally {
                synchronized (this) {
                    ended = true;
                    Thread.interrupted(); // a cancel's interrupt was this acquire's, not the thread's next task's
                }
            }
            boolean given;
            synchronized (this) {
                given = cancelled;
            }
            if (given) {
                if (lease != null) {
                    LateGrants.release(release, lease, resource);
                }
                super.cancel(false);
            } else if (failed != null) {
                completeExceptionally(failed);
            } else {
                complete(lease);
            }
        }

        @Override
        public boolean cancel(boolean mayInterrupt) {
            synchronized (this) {
                if (isDone() || cancelled) {
                    return false;
                }
                cancelled = true;
                if (running != null && !ended) {
                    running.interrupt();
                }
            }
            return true;
        }
    }

    private static final class Waiter<L> {
        final CompletableFuture<L> future = new CompletableFuture<>();
        final long deadlineNanos;
        final FutureAcquire<L> acquire;
        final Consumer<? super L> release;

        Waiter(long deadlineNanos, FutureAcquire<L> acquire, Consumer<? super L> release) {
            this.deadlineNanos = deadlineNanos;
            this.acquire = acquire;
            this.release = release;
        }
    }

    /**
     * The waiters of one resource, served one at a time: the acquire of the first runs (a future),
     * and when it ends, the next one's starts.
     */
    private static final class Line<L> {
        private final Key key;
        private final Ticker ticker;
        private final ArrayDeque<Waiter<L>> waiting = new ArrayDeque<>();
        /** The waiter whose acquire runs now, and that acquire; null between two. */
        private Waiter<L> current;

        private CompletableFuture<L> running;
        private boolean served;

        Line(Key key, Ticker ticker) {
            this.key = key;
            this.ticker = ticker;
        }

        /** Called within {@link #LINES}' compute of the key: starts serving the line if nothing does. */
        @SuppressWarnings("unchecked")
        synchronized void join(Waiter<?> waiter) {
            waiting.add((Waiter<L>) waiter);
            if (!served) {
                served = true;
                AsyncThreads.attempts().execute(this::serveNext);
            }
        }

        /** Starts the acquire of the first waiter not yet done; leaves {@link #LINES} if none is left. */
        private void serveNext() {
            Waiter<L> waiter = next();
            if (waiter == null) {
                return;
            }
            long left = Math.max(0, waiter.deadlineNanos - ticker.nanos());
            CompletableFuture<L> acquire;
            try {
                acquire = waiter.acquire.acquire(Duration.ofNanos(left));
            } catch (RuntimeException | Error e) { // the waiter's to know; the line goes on
                acquire = CompletableFuture.failedFuture(e);
            }
            synchronized (this) {
                running = acquire;
                if (waiter.future.isDone()) {
                    acquire.cancel(true); // cancelled before its acquire started
                }
            }
            acquire.whenCompleteAsync(
                    (lease, failed) -> {
                        synchronized (this) {
                            current = null;
                            running = null;
                        }
                        // The caller's callbacks run on the lines' threads, never on the attempts'.
                        THREADS.execute(() -> {
                            if (lease != null && !waiter.future.complete(lease)) {
                                LateGrants.release(waiter.release, lease, key.resource());
                            } else if (failed != null) {
                                waiter.future.completeExceptionally(
                                        failed instanceof CompletionException && failed.getCause() != null
                                                ? failed.getCause()
                                                : failed);
                            }
                        });
                        serveNext();
                    },
                    AsyncThreads.attempts());
        }

        /** The first waiter not yet done, now the current one; null, ending the line, if none is left. */
        private Waiter<L> next() {
            while (true) {
                synchronized (this) {
                    for (Waiter<L> first = waiting.poll(); first != null; first = waiting.poll()) {
                        if (!first.future.isDone()) {
                            current = first;
                            return first;
                        }
                    }
                }
                // Leaves the map only if no acquire joined meanwhile: the compute and the check are atomic.
                boolean[] ended = {false};
                LINES.computeIfPresent(key, (k, line) -> {
                    synchronized (this) {
                        if (line != this || !waiting.isEmpty()) {
                            return line;
                        }
                        served = false;
                        ended[0] = true;
                        return null;
                    }
                });
                if (ended[0]) {
                    return null;
                }
            }
        }

        /** A cancelled waiter leaves the line; the current one's acquire is cancelled. */
        void cancelled(Waiter<L> waiter) {
            CompletableFuture<L> acquire;
            synchronized (this) {
                if (current != waiter) {
                    waiting.remove(waiter);
                    return;
                }
                acquire = running;
            }
            if (acquire != null) {
                acquire.cancel(true);
            }
        }

        /** A waiter's wait passed while others of this process were ahead of it: it ends, refused. */
        void waitPassed(Waiter<L> waiter, String resource, Duration waited) {
            int ahead;
            synchronized (this) {
                if (waiter.future.isDone() || !waiting.contains(waiter)) {
                    return; // its own acquire ends within its wait, or ended and its result is on its way
                }
                ahead = current != null ? 1 : 0;
                for (Waiter<L> other : waiting) {
                    if (other == waiter) {
                        break;
                    }
                    ahead += other.future.isDone() ? 0 : 1;
                }
                if (ahead == 0) {
                    return; // it is next: its own acquire makes its attempt, within its wait
                }
                waiting.remove(waiter);
            }
            // The caller's callbacks run on the lines' threads, never on the timer.
            QueuedTooLong refused = new QueuedTooLong(resource, waited, ahead);
            THREADS.execute(() -> waiter.future.completeExceptionally(refused));
        }
    }

    /** The refusal of an asynchronous acquire whose wait passed behind others of this process. */
    static final class QueuedTooLong extends LockUnavailableException {
        private static final long serialVersionUID = 1L;

        QueuedTooLong(String resource, Duration waited, int ahead) {
            super(
                    String.format(
                            "could not acquire '%s' within %d ms (0 attempts): %d asynchronous acquire%s of this"
                                    + " process %s ahead of it, served one at a time, the first waiting for the lock",
                            resource, waited.toMillis(), ahead, ahead == 1 ? "" : "s", ahead == 1 ? "was" : "were"),
                    resource,
                    0);
        }

        /** Others held or waited for the lock: a later acquire may be granted. */
        @Override
        public boolean busy() {
            return true;
        }
    }
}
