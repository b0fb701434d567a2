package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.internal.FakeTicker;
import io.quorumlock.internal.Ticker;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Host names are looked up off the callers' path, and a caller waits at most until its deadline. */
@Timeout(10)
class ResolverTest {

    private static final long MS = 1_000_000;

    private final ExecutorService lookups = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        lookups.shutdownNow();
    }

    @Test
    void anIpLiteralNeedsNoLookup() {
        Resolver resolver = new Resolver("127.0.0.1", 6379, Ticker.SYSTEM, null, host -> {
            throw new AssertionError("looked up " + host);
        });
        assertThat(resolver.address(0).address().getPort()).isEqualTo(6379);
        assertThat(Resolver.isLiteral("::1")).isTrue();
        assertThat(Resolver.isLiteral("redis-1.internal")).isFalse();
    }

    @Test
    void aSlowLookupCostsACallerNoMoreThanItsDeadlineAndServesTheNextOne() throws Exception {
        CountDownLatch answer = new CountDownLatch(1);
        Resolver resolver = new Resolver("redis-1.internal", 6379, Ticker.SYSTEM, lookups, host -> {
            try {
                answer.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return InetAddress.getLoopbackAddress();
        });
        long start = System.nanoTime();
        Locator.Result first = resolver.address(System.nanoTime() + 50 * MS);
        long took = System.nanoTime() - start;
        assertThat(first.address()).isNull();
        assertThat(first.failure())
                .isEqualTo("host name redis-1.internal not resolved within the node timeout" + " (lookup goes on)");
        assertThat(took).isBetween(40 * MS, 1000 * MS);

        answer.countDown();
        Locator.Result second = resolver.address(System.nanoTime() + 1000 * MS);
        assertThat(second.address().getAddress()).isEqualTo(InetAddress.getLoopbackAddress());
    }

    @Test
    void anUnknownHostIsNotLookedUpAgainOnEveryRound() {
        AtomicInteger lookupsMade = new AtomicInteger();
        FakeTicker ticker = new FakeTicker();
        Resolver resolver = new Resolver("gone.internal", 6379, ticker, lookups, host -> {
            lookupsMade.incrementAndGet();
            throw new UnknownHostException(host);
        });
        assertThat(resolver.address(ticker.nanos() + 1000 * MS).failure()).isEqualTo("unknown host gone.internal");
        for (int i = 0; i < 10; i++) {
            assertThat(resolver.address(ticker.nanos() + 1000 * MS).failure()).isEqualTo("unknown host gone.internal");
        }
        assertThat(lookupsMade).hasValue(1);
        ticker.advance(Resolver.RETRY_NANOS + 1);
        resolver.address(ticker.nanos() + 1000 * MS);
        assertThat(lookupsMade).hasValue(2);
    }

    @Test
    void anOldAnswerServesWhileARefreshRuns() throws Exception {
        FakeTicker ticker = new FakeTicker();
        CountDownLatch refresh = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        Resolver resolver = new Resolver("redis-1.internal", 6379, ticker, lookups, host -> {
            if (calls.incrementAndGet() == 2) {
                try {
                    refresh.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return InetAddress.getLoopbackAddress();
        });
        assertThat(resolver.address(ticker.nanos() + 1000 * MS).address()).isNotNull();
        ticker.advance(Resolver.REFRESH_NANOS + 1);
        assertThat(resolver.address(ticker.nanos()).address())
                .as("at once, from the old answer")
                .isNotNull();
        refresh.countDown();
        lookups.shutdown();
        assertThat(lookups.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        assertThat(calls).hasValue(2);
    }
}
