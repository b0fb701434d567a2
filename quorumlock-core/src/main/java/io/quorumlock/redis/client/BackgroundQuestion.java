package io.quorumlock.redis.client;

import io.quorumlock.internal.Ticker;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * A question asked off the callers' path, one at a time (the sentinels for their master, a
 * cluster for its layout): at once when made, again every {@code period} while nothing else asked
 * it meanwhile, and on demand ({@link #current}) no sooner than {@code gap} after the last. Each
 * answer, or what asking threw, goes to {@code answered} before the question counts as ended, so
 * that a caller never finds neither the answer nor a question under way.
 */
final class BackgroundQuestion<T> {

    private final ScheduledExecutorService asks;
    private final Ticker ticker;
    private final long periodNanos;
    private final long gapNanos;
    private final Supplier<T> ask;
    private final BiConsumer<T, Throwable> answered;
    private final ScheduledFuture<?> refresh;

    /** Guarded by this, as is {@link #askedAt}. */
    private CompletableFuture<T> inFlight;
    /** When the question under way or the last one started. */
    private long askedAt;

    BackgroundQuestion(
            ScheduledExecutorService asks,
            Ticker ticker,
            long periodNanos,
            long gapNanos,
            Supplier<T> ask,
            BiConsumer<T, Throwable> answered) {
        this.asks = asks;
        this.ticker = ticker;
        this.periodNanos = periodNanos;
        this.gapNanos = gapNanos;
        this.ask = ask;
        this.answered = answered;
        synchronized (this) {
            start();
        }
        this.refresh = asks.scheduleWithFixedDelay(this::refresh, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * The question under way, or one started now if the last began at least the gap ago; null if
     * neither (a recent answer stands, or the asking thread is shut down).
     */
    synchronized CompletableFuture<T> current() {
        if (inFlight == null && ticker.nanos() - askedAt >= gapNanos) {
            start();
        }
        return inFlight;
    }

    /** Stops the periodic questions. */
    void close() {
        refresh.cancel(false);
    }

    private synchronized void refresh() {
        if (inFlight == null && ticker.nanos() - askedAt >= periodNanos / 2) {
            start();
        }
    }

    /** Under this object's lock. */
    private void start() {
        askedAt = ticker.nanos();
        CompletableFuture<T> question;
        try {
            question = CompletableFuture.supplyAsync(ask, asks);
        } catch (RejectedExecutionException e) {
            return; // the lock is closing
        }
        inFlight = question;
        question.whenComplete((answer, thrown) -> {
            answered.accept(answer, thrown);
            synchronized (this) {
                if (inFlight == question) {
                    inFlight = null;
                }
            }
        });
    }
}
