package io.quorumlock.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's {@link LockRegistryLeaderInitiator} over a {@link QuorumlockLockRegistry}
 * in two application contexts of this JVM, each with a lock of its own (two clients, as two
 * instances of an application would have): exactly one leads; closing its context hands the role
 * to the other, in a time that is measured and bounded well below the TTL.
 */
final class LeaderHandOff {

    private static final Logger log = LoggerFactory.getLogger(LeaderHandOff.class);

    /** The leases' TTL: a hand-over that waited for the TTL would fail the bound. */
    static final Duration TTL = Duration.ofSeconds(10);

    private static final Duration HAND_OFF_BOUND = TestTime.scaled(Duration.ofSeconds(3));
    private static final Duration STABLE = TestTime.scaled(Duration.ofSeconds(1));

    /** What each candidate was told, in order, from both contexts. */
    record Event(String candidate, boolean granted, long nanos) {}

    /** The events of both contexts, in order. */
    static final class Events extends ConcurrentLinkedQueue<Event> {
        private static final long serialVersionUID = 1L;
    }

    private LeaderHandOff() {}

    /** One instance of the application: its lock, the registry over it, the initiator and its candidate. */
    @Configuration(proxyBeanMethods = false)
    static class LeaderApp {
        @Bean
        QuorumlockLockRegistry<?> registry(DistributedLock<?> lock) {
            return over(lock);
        }

        private static <L extends Lease> QuorumlockLockRegistry<L> over(DistributedLock<L> lock) {
            return new QuorumlockLockRegistry<>(lock, "leaders:", TTL);
        }

        @Bean
        LockRegistryLeaderInitiator initiator(QuorumlockLockRegistry<?> registry, RecordingCandidate candidate) {
            LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, candidate);
            initiator.setHeartBeatMillis(100);
            initiator.setBusyWaitMillis(50);
            return initiator;
        }

        @Bean
        RecordingCandidate candidate(Environment environment, Events events) {
            return new RecordingCandidate(environment.getRequiredProperty("instance"), events);
        }
    }

    static final class RecordingCandidate extends DefaultCandidate {
        private final Events events;

        RecordingCandidate(String id, Events events) {
            super(id, "billing-scheduler");
            this.events = events;
        }

        @Override
        public void onGranted(Context context) {
            events.add(new Event(getId(), true, System.nanoTime()));
        }

        @Override
        public void onRevoked(Context context) {
            events.add(new Event(getId(), false, System.nanoTime()));
        }
    }

    /**
     * Runs the scenario with locks from {@code locks}, one per context.
     *
     * @return the hand-over time: from the start of the leader's context close to the other's grant
     */
    static Duration run(Supplier<DistributedLock<?>> locks) {
        Events events = new Events();
        AnnotationConfigApplicationContext a = context("a", locks, events);
        AnnotationConfigApplicationContext b = context("b", locks, events);
        try {
            TestTime.await(Duration.ofSeconds(10), () -> leaders(a, b) == 1, "one of the two to lead");
            long stableEnd = System.nanoTime() + STABLE.toNanos();
            while (System.nanoTime() - stableEnd < 0) {
                assertThat(leaders(a, b)).as("leaders at once").isEqualTo(1);
                Thread.onSpinWait();
            }
            assertThat(events).as("grants while both ran").hasSize(1);
            Event first = events.peek();
            assertThat(first.granted()).isTrue();
            AnnotationConfigApplicationContext leader = first.candidate().equals("a") ? a : b;
            AnnotationConfigApplicationContext other = leader == a ? b : a;

            long closing = System.nanoTime();
            leader.close();
            TestTime.await(
                    Duration.ofSeconds(10), () -> initiator(other).getContext().isLeader(), "the hand-over");
            Duration handOff = Duration.ofNanos(System.nanoTime() - closing);
            log.info(
                    "hand-over after the leader's context closed: {} ms (TTL {} ms)",
                    handOff.toMillis(),
                    TTL.toMillis());

            // Spring Integration's initiator unlocks before it tells its candidate revoked: the
            // other may be granted first.
            TestTime.await(Duration.ofSeconds(10), () -> events.size() >= 3, "the old leader's revoked");
            List<Event> all = List.copyOf(events);
            assertThat(all)
                    .extracting(e -> e.candidate() + (e.granted() ? " granted" : " revoked"))
                    .containsExactlyInAnyOrder(
                            first.candidate() + " granted",
                            first.candidate() + " revoked",
                            (leader == a ? "b" : "a") + " granted");
            assertThat(handOff).as("hand-over, well below the TTL of %s", TTL).isLessThan(HAND_OFF_BOUND);
            return handOff;
        } finally {
            a.close();
            b.close();
        }
    }

    private static AnnotationConfigApplicationContext context(
            String instance, Supplier<DistributedLock<?>> locks, Events events) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.getEnvironment()
                .getPropertySources()
                .addFirst(new org.springframework.core.env.MapPropertySource(
                        "test", java.util.Map.of("instance", instance)));
        context.registerBean("lock", DistributedLock.class, locks::get);
        context.registerBean("events", Events.class, () -> events);
        context.register(LeaderApp.class);
        context.refresh();
        return context;
    }

    private static LockRegistryLeaderInitiator initiator(AnnotationConfigApplicationContext context) {
        return context.getBean(LockRegistryLeaderInitiator.class);
    }

    private static int leaders(AnnotationConfigApplicationContext a, AnnotationConfigApplicationContext b) {
        return (initiator(a).getContext().isLeader() ? 1 : 0)
                + (initiator(b).getContext().isLeader() ? 1 : 0);
    }
}
