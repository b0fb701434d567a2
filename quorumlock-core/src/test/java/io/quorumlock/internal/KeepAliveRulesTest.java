package io.quorumlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.LeaseLostException;
import io.quorumlock.RecordingListener;
import io.quorumlock.internal.KeepAlive.Result;
import io.quorumlock.internal.LeaseCore.State;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lease engine's rules, on fake time: what every backend's lease does between its rounds. */
@Timeout(10)
class KeepAliveRulesTest {

    private static final long MS = 1_000_000L;
    private static final long TTL = 3_000 * MS;
    private static final long ROUND = 100 * MS;

    private final FakeTicker ticker = new FakeTicker();
    private final FakeTimers timers = new FakeTimers(ticker);
    private final RecordingListener listener = new RecordingListener();
    private final Script driver = new Script();

    /** A backend whose rounds answer what the test scripts, each taking {@link #roundTook}. */
    private final class Script implements KeepAlive.Driver {
        final Deque<Result> answers = new ArrayDeque<>();
        final List<Long> sentAt = new ArrayList<>();
        final List<Long> ttls = new ArrayList<>();
        Result otherwise = Result.RENEWED;
        long roundTook = MS;
        int lostCalls;

        @Override
        public Result renew(long ttlNanos) {
            sentAt.add(ticker.nanos());
            ttls.add(ttlNanos);
            ticker.advance(roundTook);
            return answers.isEmpty() ? otherwise : answers.poll();
        }

        @Override
        public LeaseLostException evidence(String why) {
            return new LeaseLostException("r", why + " (token 7)", null);
        }

        @Override
        public void onLost() {
            lostCalls++;
        }
    }

    /** A lease granted {@code grantedAfter} into an attempt that started now, kept alive. */
    private LeaseCore grantedAfter(long grantedAfter, KeepAlive[] keepAlive) {
        long start = ticker.nanos();
        ticker.advance(grantedAfter);
        long end = LeaseTimes.endAfter(start, TTL);
        LeaseCore core =
                new LeaseCore("r", ticker, LockEvents.of("test", listener), State.VALID, end, end - ticker.nanos());
        keepAlive[0] = new KeepAlive(core, driver, timers, TTL, ROUND);
        keepAlive[0].start(TTL);
        return core;
    }

    @Test
    void renewalsComeEveryThirdOfTheTtlCountedFromTheEnd() {
        KeepAlive[] keepAlive = new KeepAlive[1];
        LeaseCore core = grantedAfter(0, keepAlive);
        long granted = ticker.nanos();

        timers.advance(10_000 * MS);

        assertThat(core.isValid()).isTrue();
        assertThat(driver.sentAt).hasSizeBetween(9, 11);
        long first = driver.sentAt.get(0) - granted;
        assertThat(first).isBetween(TTL / 3 - 40 * MS, TTL / 3);
        for (int i = 1; i < driver.sentAt.size(); i++) {
            assertThat(driver.sentAt.get(i) - driver.sentAt.get(i - 1)).isBetween(TTL / 3 - 40 * MS, TTL / 3 + 40 * MS);
        }
        assertThat(core.inDoubt()).isNotDone();
    }

    @Test
    void aLeaseGrantedLateInItsTtlRenewsAtOnceAndIsNeitherDoubtedNorLost() {
        KeepAlive[] keepAlive = new KeepAlive[1];
        LeaseCore core = grantedAfter(2_200 * MS, keepAlive); // a slow connection: 0.77 s of 3 s left
        long granted = ticker.nanos();

        timers.advance(0);
        assertThat(driver.sentAt).hasSize(1);
        assertThat(driver.sentAt.get(0)).isEqualTo(granted);
        assertThat(core.remaining().toNanos()).isGreaterThan(TTL - 100 * MS);

        timers.advance(5_000 * MS);
        assertThat(core.isValid()).isTrue();
        assertThat(core.inDoubt()).isNotDone();
        assertThat(core.lost()).isNotDone();
    }

    @Test
    void aLeaseGrantedLateWhoseRenewalGoesUnansweredIsDoubtedHalfwayToItsEnd() {
        KeepAlive[] keepAlive = new KeepAlive[1];
        driver.otherwise = Result.notSent("connection refused");
        LeaseCore core = grantedAfter(2_000 * MS, keepAlive); // 0.97 s left
        long end = core.endNanos();
        long granted = ticker.nanos();

        timers.advance((end - granted) / 2 - 5 * MS);
        assertThat(core.inDoubt()).isNotDone();
        timers.advance(10 * MS);
        assertThat(core.inDoubt()).isDone();
        assertThat(core.lost()).isNotDone();
    }

    @Test
    void aLeaseNotYetHandedOutIsKeptAliveUntilItIsAndAfter() {
        long end = LeaseTimes.endAfter(ticker.nanos(), TTL);
        LeaseCore core = new LeaseCore("r", ticker, LockEvents.of("test", listener), State.PENDING, end, TTL);
        new KeepAlive(core, driver, timers, TTL, ROUND).start(TTL);

        timers.advance(3 * TTL); // its lock waited for, longer than the TTL
        assertThat(core.state()).isEqualTo(State.PENDING);
        assertThat(driver.sentAt).hasSizeGreaterThanOrEqualTo(8);
        assertThat(core.hold(core.endNanos(), ticker.nanos())).isTrue();

        timers.advance(3 * TTL);
        assertThat(core.isValid()).isTrue();
        assertThat(core.inDoubt()).isNotDone();
        assertThat(driver.sentAt).hasSizeGreaterThanOrEqualTo(17);
    }

    @Test
    void aLeaseNotYetHandedOutWhoseHoldIsGoneIsLostWithoutTellingTheListener() {
        long end = LeaseTimes.endAfter(ticker.nanos(), TTL);
        LeaseCore core = new LeaseCore("r", ticker, LockEvents.of("test", listener), State.PENDING, end, TTL);
        driver.answers.add(Result.gone("revoked"));
        new KeepAlive(core, driver, timers, TTL, ROUND).start(TTL);

        timers.advance(TTL);

        assertThat(core.state()).isEqualTo(State.LOST);
        assertThat(core.lost().join().getMessage()).contains("revoked");
        assertThat(listener.names()).noneMatch(n -> n.startsWith("lost"));
    }

    @Test
    void aFailedExtensionThatSentNothingChangesNothing() {
        KeepAlive[] keepAlive = new KeepAlive[1];
        LeaseCore core = grantedAfter(0, keepAlive);
        long end = core.endNanos();
        driver.answers.add(Result.notSent("no connection within the request timeout"));

        assertThat(keepAlive[0].extend(TTL / 10)).isFalse();

        assertThat(core.endNanos()).isEqualTo(end);
        timers.advance(20_000 * MS);
        assertThat(core.isValid()).isTrue();
        assertThat(core.lost()).isNotDone();
    }

    @Test
    void anExtensionOfUnknownEffectShortensTheLeaseAndTheRenewalsFollowTheShortenedEnd() {
        long ttl = 30_000 * MS;
        LeaseCore core = new LeaseCore(
                "r",
                ticker,
                LockEvents.of("test", listener),
                State.VALID,
                LeaseTimes.endAfter(ticker.nanos(), ttl),
                ttl);
        KeepAlive keepAlive = new KeepAlive(core, driver, timers, ttl, ROUND);
        keepAlive.start(ttl);
        long sent = ticker.nanos();
        driver.answers.add(Result.unknown("no answer within the request timeout"));

        assertThat(keepAlive.extend(3_000 * MS)).isFalse();

        assertThat(core.endNanos()).isLessThanOrEqualTo(LeaseTimes.endAfter(sent, 3_000 * MS));
        timers.advance(60_000 * MS);
        assertThat(core.lost()).isNotDone();
        assertThat(core.isValid()).isTrue();
        // Renewals ask for the lease's own TTL, but count with the shorter one: that request may still run.
        assertThat(driver.ttls.subList(1, driver.ttls.size())).containsOnly(ttl);
        assertThat(core.remaining().toNanos()).isLessThanOrEqualTo(3_000 * MS);
    }

    @Test
    void unansweredRenewalsDoubtAtAThirdLeftAndLoseWithTheLossNoticeLeft() {
        KeepAlive[] keepAlive = new KeepAlive[1];
        LeaseCore core = grantedAfter(0, keepAlive);
        long end = core.endNanos();
        driver.otherwise = Result.notSent("connection refused");
        List<String> order = new ArrayList<>();
        core.inDoubt().thenRun(() -> order.add("doubt at " + (core.endNanos() - ticker.nanos()) / MS));
        core.lost().thenRun(() -> order.add("lost"));

        timers.advance(TTL);

        assertThat(core.state()).isEqualTo(State.LOST);
        assertThat(order).hasSize(2).last().isEqualTo("lost");
        long doubtLeft = Long.parseLong(order.get(0).substring("doubt at ".length()));
        assertThat(doubtLeft).isBetween(TTL / 3 / MS - 60, TTL / 3 / MS);
        assertThat(core.lost().join().getMessage())
                .contains("connection refused")
                .contains("rounds in a row")
                .contains("token 7");
        assertThat(driver.sentAt.get(driver.sentAt.size() - 1))
                .isLessThanOrEqualTo(end - LeaseTimes.lossNoticeNanos(TTL) - ROUND);
        assertThat(driver.lostCalls).isEqualTo(1);
        assertThat(listener.names()).filteredOn(n -> n.startsWith("lost")).hasSize(1);
    }

    @Test
    void aRenewalThatFindsTheHoldGoneLosesTheLeaseOnceAndTellsItOffTheTimer() {
        KeepAlive[] keepAlive = new KeepAlive[1];
        LeaseCore core = grantedAfter(0, keepAlive);
        driver.answers.add(Result.gone("the row holds another token"));
        int toldBefore = timers.told;

        timers.advance(TTL);

        assertThat(core.state()).isEqualTo(State.LOST);
        assertThat(core.lost().join().getMessage()).contains("the row holds another token");
        assertThat(timers.told - toldBefore).isEqualTo(1);
        assertThat(driver.sentAt).hasSize(1);
        assertThat(timers.pending()).isZero();
        keepAlive[0].lose("again", false);
        assertThat(driver.lostCalls).isEqualTo(1);
    }

    @Test
    void aRoundOfUnknownEffectCapsEveryLaterRenewalAtItsTtl() {
        KeepAlive[] keepAlive = new KeepAlive[1];
        LeaseCore core = grantedAfter(0, keepAlive);
        driver.answers.add(Result.unknown("timed out"));
        keepAlive[0].extend(1_000 * MS);

        assertThat(keepAlive[0].extend(TTL)).isTrue();
        long sent = driver.sentAt.get(1);

        assertThat(core.endNanos()).isEqualTo(LeaseTimes.endAfter(sent, 1_000 * MS));
    }

    @Test
    void aRenewalAnsweredAfterTheEndDoesNotRevive() {
        KeepAlive[] keepAlive = new KeepAlive[1];
        LeaseCore core = grantedAfter(0, keepAlive);
        driver.roundTook = TTL; // the answer comes after the end

        assertThat(keepAlive[0].extend(TTL)).isFalse();
        assertThat(core.isValid()).isFalse();
        timers.advance(0);
        assertThat(core.state()).isEqualTo(State.LOST);
    }

    @Test
    void stopWaitsForTheRoundUnderWayAndNothingRunsAfter() throws Exception {
        try (Timers threads = Timers.threads("test", 2)) {
            CountDownLatch inRound = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            List<String> rounds = new ArrayList<>();
            KeepAlive.Driver slow = new KeepAlive.Driver() {
                @Override
                public Result renew(long ttlNanos) {
                    inRound.countDown();
                    try {
                        finish.await(5, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    synchronized (rounds) {
                        rounds.add(Thread.currentThread().getName());
                    }
                    return Result.RENEWED;
                }

                @Override
                public LeaseLostException evidence(String why) {
                    return new LeaseLostException("r", why, null);
                }
            };
            long ttl = 300 * MS;
            LeaseCore core = dueForRenewal(ttl);
            KeepAlive keepAlive = new KeepAlive(core, slow, threads, ttl, ROUND);
            keepAlive.start(ttl);
            assertThat(inRound.await(5, TimeUnit.SECONDS)).isTrue();

            CompletableFuture<Void> stopped = CompletableFuture.runAsync(keepAlive::stop);
            Thread.sleep(50); // the stop must still wait: the round is blocked
            assertThat(stopped).isNotDone();
            finish.countDown();
            stopped.get(5, TimeUnit.SECONDS);
            synchronized (rounds) {
                assertThat(rounds).hasSize(1).allMatch(name -> name.startsWith("quorumlock-test-worker"));
            }
        }
    }

    @Test
    void theNoticeOfLossRunsOnANoticeThreadNeverTheTimerNorAWorker() throws Exception {
        try (Timers threads = Timers.threads("test", 1)) {
            KeepAlive.Driver gone = new KeepAlive.Driver() {
                @Override
                public Result renew(long ttlNanos) {
                    return Result.gone("taken");
                }

                @Override
                public LeaseLostException evidence(String why) {
                    return new LeaseLostException("r", why, null);
                }
            };
            long ttl = 30 * MS;
            LeaseCore core = dueForRenewal(ttl);
            CompletableFuture<String> toldOn =
                    core.lost().thenApply(loss -> Thread.currentThread().getName());
            new KeepAlive(core, gone, threads, ttl, MS).start(ttl);

            assertThat(toldOn.get(5, TimeUnit.SECONDS)).startsWith("quorumlock-test-notice");
        }
    }

    /**
     * A lease of {@code ttl} on the fake clock, half of it gone: its first renewal is due at once,
     * however long this thread takes to start its keep-alive.
     */
    private LeaseCore dueForRenewal(long ttl) {
        LeaseCore core =
                new LeaseCore("r", ticker, LockEvents.of("test", listener), State.VALID, ticker.nanos() + ttl, ttl);
        ticker.advance(ttl / 2);
        return core;
    }
}
