package io.quorumlock.redis;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The child JVM of {@link VirtualThreadsIT}, run on a Java 21+ JDK though compiled for 17: one
 * Redlock shared by {@code threads} virtual threads, thread {@code i} locking resource {@code i %
 * resources} {@code sections} times (once through {@code withLock}, then with acquire and release).
 * Each resource counts who is inside (never more than one) and, without atomics, its sections (as
 * many as were run, if no section overlapped another). Prints one line, {@code RESULT key=value
 * ...}, and exits 0 if every thread finished in time.
 *
 * <p>Arguments: {@code threads resources sections timeoutSeconds nodeUri...}.
 */
public final class VirtualThreadsMain {

    private VirtualThreadsMain() {}

    /** Blocks a virtual thread inside a class initializer, which still pins its carrier. */
    static final class PinsItsCarrier {
        static {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        static void touch() {}
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int resources = Integer.parseInt(args[1]);
        int sections = Integer.parseInt(args[2]);
        long timeoutNanos = TimeUnit.SECONDS.toNanos(Long.parseLong(args[3]));
        List<String> nodes = Arrays.asList(args).subList(4, args.length);

        // Index resources is the warm-up's resource.
        AtomicInteger[] inside = new AtomicInteger[resources + 1];
        Arrays.setAll(inside, r -> new AtomicInteger());
        int[] counted = new int[resources + 1]; // plain ints: only an exclusive section keeps them right
        AtomicInteger[] run = new AtomicInteger[resources + 1];
        Arrays.setAll(run, r -> new AtomicInteger());
        AtomicInteger maxInside = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        AtomicInteger failures = new AtomicInteger();
        AtomicReference<String> firstFailure = new AtomicReference<>();
        Set<String> carriers = ConcurrentHashMap.newKeySet();
        // Longer than the whole run: 10,000 runnable virtual threads on two carriers, beside other
        // work, can keep a holder off the CPU for more than 10 s between its grant and its section,
        // a pause that no TTL-based lock survives. Exclusivity is checked here, not that timing.
        Duration ttl = Duration.ofSeconds(120);
        // Several threads contend for each resource: a thread may wait long, but gives up before the deadline.
        Duration maxWait = Duration.ofNanos(timeoutNanos / 4 * 3);

        long start = System.nanoTime();
        long warmUpId = -1;
        try (Redlock redlock = Redlock.builder()
                .nodes(nodes)
                .restartGuard(false)
                // Nine waiters per resource retrying every 10-200 ms kept two loaded cores so
                // busy that holders waited seconds for a carrier: waiters back off up to 1 s.
                .retry(io.quorumlock.RetryPolicy.jitteredBackoff(Duration.ofMillis(20), Duration.ofSeconds(1)))
                .build()) {
            ExecutorService executor = (ExecutorService)
                    Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
            for (int i = -1; i < threads; i++) {
                int r = i < 0 ? resources : i % resources;
                String resource = "vthreads:" + r;
                Runnable section = () -> {
                    int now = inside[r].incrementAndGet();
                    maxInside.accumulateAndGet(now, Math::max);
                    String me =
                            Thread.currentThread().toString(); // VirtualThread[#21]/runnable@ForkJoinPool-1-worker-1
                    carriers.add(me.substring(me.indexOf('@') + 1));
                    int before = counted[r];
                    Thread.yield(); // lets another thread in, were the lock not exclusive
                    counted[r] = before + 1;
                    run[r].incrementAndGet();
                    inside[r].decrementAndGet();
                };
                Runnable work = () -> {
                    try {
                        redlock.withLock(resource, ttl, maxWait, section::run);
                        for (int s = 1; s < sections; s++) {
                            Lease lease = redlock.acquire(resource, ttl, maxWait);
                            try {
                                section.run();
                            } finally {
                                lease.release();
                            }
                        }
                        if (r < resources) {
                            finished.incrementAndGet();
                        }
                    } catch (RuntimeException e) { // LockUnavailableException or a lease lost
                        failures.incrementAndGet();
                        firstFailure.compareAndSet(null, e.toString());
                    }
                };
                if (i < 0) {
                    Runnable contended = work;
                    work = () -> {
                        // A refused try and a refused wait, as under contention (a nil reply, a retry).
                        Lease held = redlock.acquire(resource, ttl, maxWait);
                        try {
                            if (redlock.tryAcquire(resource, ttl).isPresent()) {
                                throw new IllegalStateException("the held " + resource + " was granted again");
                            }
                            redlock.acquire(resource, ttl, Duration.ofMillis(30));
                            throw new IllegalStateException("the held " + resource + " was granted again");
                        } catch (LockUnavailableException expected) {
                            // refused, as it should be
                        } finally {
                            held.release();
                        }
                        contended.run();
                        // A virtual thread that parks in a selector starts the JDK's poller; a round
                        // whose replies are in before it selects does not.
                        try (Selector idle = Selector.open()) {
                            idle.select(1);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    };
                    // Alone, first: the first use loads and initializes the classes of the lock and
                    // of the JDK's NIO (its virtual-thread poller too), and a virtual thread that
                    // waits for a class another thread initializes pins its carrier. The recording
                    // tells the warm-up's pins by its thread's id (JFR records no virtual thread's name).
                    work.run();
                    Thread warmUp = (Thread) Thread.class
                            .getMethod("startVirtualThread", Runnable.class)
                            .invoke(null, work);
                    warmUp.join();
                    warmUpId = warmUp.getId();
                    carriers.clear();
                    start = System.nanoTime();
                } else {
                    executor.execute(work);
                }
            }
            executor.shutdown();
            boolean done = executor.awaitTermination(timeoutNanos - (System.nanoTime() - start), TimeUnit.NANOSECONDS);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            int sectionsRun = Arrays.stream(run, 0, resources)
                    .mapToInt(AtomicInteger::get)
                    .sum();
            int lost = 0;
            for (int r = 0; r <= resources; r++) {
                lost += Math.abs(run[r].get() - counted[r]);
            }
            if (done) {
                // The recording's own check: one pinned carrier on purpose, after the run.
                Thread pin = (Thread) Thread.class
                        .getMethod("startVirtualThread", Runnable.class)
                        .invoke(null, (Runnable) PinsItsCarrier::touch);
                pin.join(TimeUnit.SECONDS.toMillis(5));
            }
            report(
                    "threads=" + threads + " resources=" + resources + " sections=" + sectionsRun + " finished="
                            + finished.get() + " failures=" + failures.get() + " maxInside=" + maxInside.get()
                            + " lost=" + lost + " carriers=" + carriers.size() + " millis=" + millis + " done="
                            + done + " warmUpThread=" + warmUpId,
                    firstFailure.get(),
                    done,
                    millis);
        }
        System.exit(0);
    }

    /**
     * Prints the {@code RESULT} line and the first failure, if any; exits with 2 if the threads
     * were not {@code done} after {@code millis}.
     */
    static void report(String result, String firstFailure, boolean done, long millis) {
        System.out.println("RESULT " + result);
        if (firstFailure != null) {
            System.err.println("first failure: " + firstFailure);
        }
        System.out.flush();
        if (!done) {
            System.err.println("threads still running after " + millis + " ms");
            System.exit(2);
        }
    }
}
