package io.quorumlock.spring.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import io.quorumlock.redis.Redlock;
import io.quorumlock.spring.QuorumlockAutoConfiguration;
import io.quorumlock.spring.integration.QuorumlockLockRegistry;
import io.quorumlock.testkit.RedisServersExtension;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * {@code QuorumlockLockRegistry} as an application's bean over the starter's lock, on the Spring
 * Integration that this app's Boot brings: 7.x under Boot 4, where its locks are Spring
 * Integration's {@code DistributedLock} too (a TTL per call), and 6.5 under Boot 3.5 (this test
 * also runs in quorumlock-spring-boot3-app), which has no such interface and where the locks work
 * as {@code Lock}s. The interface is reached by name, since this code compiles against both.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LockRegistryIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(1);

    @Configuration(proxyBeanMethods = false)
    static class Registry {
        @Bean
        QuorumlockLockRegistry<Lease> lockRegistry(DistributedLock<Lease> lock) {
            return new QuorumlockLockRegistry<>(lock, "app:", Duration.ofSeconds(10));
        }
    }

    @Test
    void theRegistrysLocksWorkOnThisSpringIntegrationAndAreItsDistributedLockWhereItHasOne() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(QuorumlockAutoConfiguration.class))
                .withUserConfiguration(Registry.class)
                .withPropertyValues("quorumlock.redis.nodes=" + redis.uris().get(0))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    QuorumlockLockRegistry<?> registry = context.getBean(QuorumlockLockRegistry.class);
                    assertThat(context.getBean(LockRegistry.class))
                            .as("Spring Integration's LockRegistry")
                            .isSameAs(registry);
                    Lock lock = registry.obtain("report");
                    try (Redlock other =
                            Redlock.builder().node(redis.uris().get(0)).build()) {
                        Class<?> distributed = distributedLock();
                        String version = LockRegistry.class.getPackage().getImplementationVersion();
                        if (distributed == null) {
                            assertThat(version)
                                    .as("Spring Integration without DistributedLock")
                                    .startsWith("6.");
                            lock.lock();
                        } else {
                            assertThat(lock).isInstanceOf(distributed);
                            Method lockForTtl = distributed.getMethod("lock", Duration.class);
                            lockForTtl.invoke(lock, Duration.ofSeconds(20));
                        }
                        try {
                            assertThat(other.tryAcquire("app:report", Duration.ofSeconds(5)))
                                    .as("held for another client")
                                    .isEmpty();
                        } finally {
                            lock.unlock();
                        }
                        assertThat(other.tryAcquire("app:report", Duration.ofSeconds(5)))
                                .as("free once unlocked")
                                .isPresent();
                    }
                });
    }

    /** Spring Integration 7's {@code DistributedLock}, or null where this Spring Integration has none. */
    private static Class<?> distributedLock() {
        try {
            return Class.forName("org.springframework.integration.support.locks.DistributedLock");
        } catch (ClassNotFoundException e) {
            return null;
        }
    }
}
