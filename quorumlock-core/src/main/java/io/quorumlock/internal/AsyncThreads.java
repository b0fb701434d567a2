package io.quorumlock.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that this process's asynchronous acquires share: a few that make the attempts (a
 * round to the servers each, never a wait for a holder), and a timer that ends their pauses. None
 * is left while nothing is asked.
 */
public final class AsyncThreads {

    private static final int ATTEMPT_THREADS = 8;

    private static final ThreadPoolExecutor ATTEMPTS = newAttempts();

    private static final ScheduledThreadPoolExecutor TIMER = newTimer();

    private AsyncThreads() {}

    /**
     * The threads of the attempts: at most {@value #ATTEMPT_THREADS}, the tasks queued behind each
     * other when more are asked at once. A task may wait on a server, never for a holder.
     */
    public static Executor attempts() {
        return ATTEMPTS;
    }

    /** One thread whose tasks only decide and hand work on, never block. */
    public static ScheduledExecutorService timer() {
        return TIMER;
    }

    private static ThreadPoolExecutor newAttempts() {
        AtomicInteger count = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                ATTEMPT_THREADS, ATTEMPT_THREADS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), task -> {
                    Thread thread = new Thread(task, "quorumlock-async-attempt-" + count.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    private static ScheduledThreadPoolExecutor newTimer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "quorumlock-async-timer");
            thread.setDaemon(true);
            return thread;
        });
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }
}
