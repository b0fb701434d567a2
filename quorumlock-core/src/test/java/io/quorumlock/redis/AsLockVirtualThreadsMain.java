package io.quorumlock.redis;

import io.quorumlock.DistributedReentrantLock;
import io.quorumlock.Lease;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The child JVM of {@link AsLockVirtualThreadsIT}, run on a Java 21+ JDK though compiled for 17: two
 * Redlocks (two clients, as two processes would be), each with one {@code asLock} adapter per
 * resource, shared by {@code threads} virtual threads; thread {@code i} uses client {@code i % 2}
 * and resource {@code i % resources}, and holds it {@code sections} times, each time taking it
 * once more inside (reentrant), half of them through {@code lockInterruptibly} and {@code tryLock}
 * with a wait. Each resource counts who is inside (never more than one) and, without atomics, its
 * sections. Prints {@code RESULT key=value ...} and exits 0 if every thread finished in time.
 *
 * <p>Arguments: {@code threads resources sections timeoutSeconds nodeUri...}.
 */
public final class AsLockVirtualThreadsMain {

    private AsLockVirtualThreadsMain() {}

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int resources = Integer.parseInt(args[1]);
        int sections = Integer.parseInt(args[2]);
        long timeoutNanos = TimeUnit.SECONDS.toNanos(Long.parseLong(args[3]));
        List<String> nodes = Arrays.asList(args).subList(4, args.length);

        AtomicInteger[] inside = new AtomicInteger[resources];
        Arrays.setAll(inside, r -> new AtomicInteger());
        int[] counted = new int[resources]; // plain ints: only exclusive sections keep them right
        AtomicInteger run = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        AtomicInteger failures = new AtomicInteger();
        AtomicReference<String> firstFailure = new AtomicReference<>();
        // Longer than the run: a holder may wait seconds for a carrier among thousands of threads.
        Duration ttl = Duration.ofSeconds(120);
        long start = System.nanoTime();
        try (Redlock a = client(nodes);
                Redlock b = client(nodes)) {
            @SuppressWarnings("unchecked")
            DistributedReentrantLock<Lease>[][] locks = new DistributedReentrantLock[2][resources];
            for (int r = 0; r < resources; r++) {
                locks[0][r] = a.asLock("vthreads:adapter:" + r, ttl);
                locks[1][r] = b.asLock("vthreads:adapter:" + r, ttl);
            }
            ExecutorService executor = (ExecutorService)
                    Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
            for (int i = 0; i < threads; i++) {
                int r = i % resources;
                DistributedReentrantLock<Lease> lock = locks[i % 2][r];
                boolean interruptibly = (i / 2) % 2 == 0;
                executor.execute(() -> {
                    try {
                        for (int s = 0; s < sections; s++) {
                            if (interruptibly) {
                                lock.lockInterruptibly();
                            } else if (!lock.tryLock(timeoutNanos, TimeUnit.NANOSECONDS)) {
                                throw new IllegalStateException("tryLock timed out");
                            }
                            try {
                                lock.lock(); // again, inside: reentrant
                                try {
                                    int now = inside[r].incrementAndGet();
                                    maxInside.accumulateAndGet(now, Math::max);
                                    int before = counted[r];
                                    Thread.yield(); // lets another thread in, were the lock not exclusive
                                    counted[r] = before + 1;
                                    run.incrementAndGet();
                                    inside[r].decrementAndGet();
                                } finally {
                                    lock.unlock();
                                }
                            } finally {
                                lock.unlock();
                            }
                        }
                        finished.incrementAndGet();
                    } catch (Exception e) {
                        failures.incrementAndGet();
                        firstFailure.compareAndSet(null, e.toString());
                    }
                });
            }
            executor.shutdown();
            boolean done = executor.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            int lost = run.get() - Arrays.stream(counted).sum();
            VirtualThreadsMain.report(
                    "threads=" + threads + " resources=" + resources + " sections=" + run.get() + " finished="
                            + finished.get() + " failures=" + failures.get() + " maxInside=" + maxInside.get()
                            + " lost=" + lost + " millis=" + millis + " done=" + done,
                    firstFailure.get(),
                    done,
                    millis);
        }
        System.exit(0);
    }

    private static Redlock client(List<String> nodes) {
        return Redlock.builder()
                .nodes(nodes)
                .restartGuard(false)
                .retry(io.quorumlock.RetryPolicy.jitteredBackoff(Duration.ofMillis(5), Duration.ofMillis(200)))
                .build();
    }
}
