package io.quorumlock.spring.app;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import io.quorumlock.redis.Redlock;
import io.quorumlock.spring.QuorumlockAutoConfiguration;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * A {@code @Scheduled} job that every instance runs and one must win, as the Spring Boot notes
 * write it, on an instance that keeps losing to another one over three real redis-server nodes:
 * it logs nothing above DEBUG, and runs once the other instance lets go.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ScheduledJobIT {

    private static final Duration TTL = Duration.ofSeconds(10);

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    /** The job of the notes. */
    static class NightlyReport {
        final DistributedLock<Lease> lock;
        final AtomicInteger ticks = new AtomicInteger();
        final AtomicInteger sent = new AtomicInteger();

        NightlyReport(DistributedLock<Lease> lock) {
            this.lock = lock;
        }

        @Scheduled(fixedDelay = 100)
        void run() {
            try {
                lock.tryWithLock("nightly-report", Duration.ofMinutes(5), this::send);
            } finally {
                ticks.incrementAndGet();
            }
        }

        void send() {
            sent.incrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class Jobs {
        @Bean
        NightlyReport nightlyReport(DistributedLock<Lease> lock) {
            return new NightlyReport(lock);
        }
    }

    @Test
    void theLosingInstanceLogsNothingAboveDebugAndRunsTheJobOnceTheOtherLetsGo() {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        Logger quorumlock = (Logger) LoggerFactory.getLogger("io.quorumlock");
        Level level = quorumlock.getLevel();
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        try (Redlock other = Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false)
                .nodeTimeout(Duration.ofMillis(200))
                .build()) {
            Lease winner = other.acquire("nightly-report", TTL, Duration.ofSeconds(5));
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(QuorumlockAutoConfiguration.class))
                    .withUserConfiguration(Jobs.class)
                    .withPropertyValues(
                            "quorumlock.redis.nodes=" + String.join(",", redis.uris()),
                            "quorumlock.redis.restart-guard=false",
                            "quorumlock.redis.node-timeout=200ms")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        NightlyReport job = context.getBean(NightlyReport.class);
                        quorumlock.setLevel(Level.DEBUG);
                        root.addAppender(logged);
                        int from = job.ticks.get();
                        TestTime.await(
                                Duration.ofSeconds(20),
                                () -> job.ticks.get() >= from + 5,
                                "five ticks of the job while the other instance holds the lock");
                        root.detachAppender(logged);
                        assertThat(job.sent)
                                .as("runs while the other instance holds the lock")
                                .hasValue(0);
                        List<String> aboveDebug = logged.list.stream()
                                .filter(e -> e.getLevel().isGreaterOrEqual(Level.INFO))
                                .map(e -> e.getLevel() + " " + e.getLoggerName() + " " + e.getFormattedMessage()
                                        + (e.getThrowableProxy() == null
                                                ? ""
                                                : " " + e.getThrowableProxy().getClassName()))
                                .toList();
                        assertThat(aboveDebug).as("lines above DEBUG").isEmpty();
                        assertThat(logged.list)
                                .as("the DEBUG line of a tick the other instance won")
                                .anyMatch(e -> e.getLevel() == Level.DEBUG
                                        && e.getFormattedMessage().contains("nightly-report"));

                        winner.release();
                        TestTime.await(
                                Duration.ofSeconds(20),
                                () -> job.sent.get() > 0,
                                "the job to run once the other instance released the lock");
                    });
        } finally {
            root.detachAppender(logged);
            quorumlock.setLevel(level);
        }
    }
}
