package io.quorumlock.internal;

import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads of one lock, beside its {@link Ticker}: a timer that only decides (it never blocks),
 * workers for the rounds that wait on a server, and the threads that tell notices of loss and
 * doubt, where a caller's callbacks run and may block. Tests give a lock fake timers that run on a
 * fake ticker.
 */
public interface Timers extends AutoCloseable {

    /** A task scheduled on the timer. */
    interface Scheduled {
        void cancel();
    }

    /**
     * Runs {@code task} on the timer after {@code delayNanos}; the task must not block.
     *
     * @throws RejectedExecutionException once closed
     */
    Scheduled schedule(Runnable task, long delayNanos);

    /**
     * Runs {@code round}, which may wait on a server, on a worker.
     *
     * @throws RejectedExecutionException once closed
     */
    void execute(Runnable round);

    /** Runs {@code notice} on a thread of its own kind, never the timer's nor a worker's; inline once closed. */
    void tell(Runnable notice);

    /**
     * Stops the timer, whose tasks not yet run are dropped; the rounds already handed to the
     * workers still run, and no new ones are taken. Idempotent.
     */
    @Override
    void close();

    /**
     * Daemon threads named {@code quorumlock-<name>-...}: one timer, at most {@code workers}
     * workers (started on demand, ended after 30 s idle), and notice threads as many as notices
     * run at once (also ended when idle).
     */
    static Timers threads(String name, int workers) {
        return new ThreadTimers(name, workers);
    }

    /** {@link #threads} with their executors. */
    final class ThreadTimers implements Timers {
        private final ScheduledThreadPoolExecutor timer;
        private final ThreadPoolExecutor workers;
        private final ThreadPoolExecutor notices;

        private ThreadTimers(String name, int workers) {
            this.timer = new ScheduledThreadPoolExecutor(1, daemon("quorumlock-" + name + "-timer"));
            this.timer.setRemoveOnCancelPolicy(true);
            this.workers = new ThreadPoolExecutor(
                    workers,
                    workers,
                    30,
                    TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(),
                    daemon("quorumlock-" + name + "-worker"));
            this.workers.allowCoreThreadTimeOut(true);
            this.notices = new ThreadPoolExecutor(
                    0,
                    Integer.MAX_VALUE,
                    30,
                    TimeUnit.SECONDS,
                    new SynchronousQueue<>(),
                    daemon("quorumlock-" + name + "-notice"));
        }

        private static ThreadFactory daemon(String name) {
            AtomicInteger count = new AtomicInteger();
            return task -> {
                Thread thread = new Thread(task, name + "-" + count.incrementAndGet());
                thread.setDaemon(true);
                return thread;
            };
        }

        @Override
        public Scheduled schedule(Runnable task, long delayNanos) {
            Future<?> future = timer.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
            return () -> future.cancel(false);
        }

        @Override
        public void execute(Runnable round) {
            workers.execute(round);
        }

        @Override
        public void tell(Runnable notice) {
            try {
                notices.execute(notice);
            } catch (RejectedExecutionException closed) {
                notice.run();
            }
        }

        @Override
        public void close() {
            timer.shutdownNow();
            workers.shutdown();
            notices.shutdown();
        }
    }
}
