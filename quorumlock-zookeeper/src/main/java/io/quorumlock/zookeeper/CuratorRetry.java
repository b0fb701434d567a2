package io.quorumlock.zookeeper;

import io.quorumlock.RetryPolicy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.RetrySleeper;

/**
 * Curator's retry policy for the client the lock builds itself: the lock's {@link RetryPolicy}
 * backoff, for at most the connect timeout. Each try already waits up to the connect
 * timeout for a connection, so one operation takes at most about twice the connect timeout in
 * the background; an attempt waits for it only until its own end, and {@code acquire} then decides
 * itself whether its wait allows another attempt. Deletes are not lost by giving up early: Curator
 * finishes guaranteed deletes, and deletes the nodes of failed protected creates, in the background.
 */
final class CuratorRetry implements org.apache.curator.RetryPolicy {

    private final RetryPolicy policy;
    private final long limitMillis;

    CuratorRetry(RetryPolicy policy, Duration limit) {
        this.policy = policy;
        this.limitMillis = limit.toMillis();
    }

    @Override
    public boolean allowRetry(int retryCount, long elapsedTimeMs, RetrySleeper sleeper) {
        Duration delay = policy.delayAfter(retryCount + 1);
        if (elapsedTimeMs + delay.toMillis() > limitMillis) {
            return false;
        }
        try {
            sleeper.sleepFor(delay.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
