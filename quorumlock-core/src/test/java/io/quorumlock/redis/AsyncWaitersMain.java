package io.quorumlock.redis;

import io.quorumlock.Lease;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The child JVM of {@link AsyncVirtualThreadsIT}, run on a Java 24+ JDK though compiled for 17: one
 * Redlock on one node holds {@code 2 * resources} resources; a platform thread asks for the first
 * half with {@code acquireAsync}, and a virtual thread per resource asks for the second half with
 * {@code acquireAsync(...).get()}. While all wait, it samples the platform threads of the JVM (a
 * waiting line's thread is virtual, so it is not one of them); then it releases every resource and
 * counts the grants. Prints one line, {@code RESULT key=value ...}.
 *
 * <p>Arguments: {@code resources timeoutSeconds nodeUri}.
 */
public final class AsyncWaitersMain {

    private AsyncWaitersMain() {}

    public static void main(String[] args) throws Exception {
        int resources = Integer.parseInt(args[0]);
        Duration timeout = Duration.ofSeconds(Long.parseLong(args[1]));
        Duration ttl = timeout.plusSeconds(60);
        try (Redlock redlock =
                Redlock.builder().node(args[2]).restartGuard(false).build()) {
            List<Lease> held = new ArrayList<>();
            for (int r = 0; r < 2 * resources; r++) {
                held.add(redlock.acquire("waiters:" + r, ttl, timeout));
            }
            int before = ManagementFactory.getThreadMXBean().getThreadCount();

            List<CompletableFuture<Lease>> futures = new ArrayList<>();
            for (int r = 0; r < resources; r++) {
                futures.add(redlock.acquireAsync("waiters:" + r, ttl, timeout));
            }
            ExecutorService virtual = (ExecutorService)
                    Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
            CountDownLatch asked = new CountDownLatch(resources);
            AtomicInteger grantedInVirtual = new AtomicInteger();
            for (int r = resources; r < 2 * resources; r++) {
                String resource = "waiters:" + r;
                virtual.execute(() -> {
                    CompletableFuture<Lease> future = redlock.acquireAsync(resource, ttl, timeout);
                    asked.countDown();
                    try {
                        future.get().release();
                        grantedInVirtual.incrementAndGet();
                    } catch (Exception e) {
                        System.err.println(resource + ": " + e);
                    }
                });
            }
            asked.await(timeout.toSeconds(), TimeUnit.SECONDS);
            // Every line's thread starts and waits for its holder: the most platform threads while they wait.
            int most = before;
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (System.nanoTime() < end) {
                most = Math.max(most, ManagementFactory.getThreadMXBean().getThreadCount());
                Thread.sleep(50);
            }
            long released = System.nanoTime();
            held.forEach(Lease::release);
            int granted = 0;
            for (CompletableFuture<Lease> future : futures) {
                future.get(timeout.toSeconds(), TimeUnit.SECONDS).release();
                granted++;
            }
            virtual.shutdown();
            boolean done = virtual.awaitTermination(timeout.toSeconds(), TimeUnit.SECONDS);
            System.out.println("RESULT java=" + Runtime.version().feature() + " waiters=" + 2 * resources
                    + " platformBefore=" + before + " platformMost=" + most + " granted="
                    + (granted + grantedInVirtual.get()) + " done=" + done + " millisToServeAll="
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released));
        }
    }
}
