package io.quorumlock.spring;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.ClassUtils;

/**
 * The health contributor {@code quorumlock} on Spring Boot 3.5, the same as {@link
 * QuorumlockHealthAutoConfiguration} gives on Boot 4, for every backend. Boot 3.5's Actuator keeps
 * its health types in {@code org.springframework.boot.actuate.health}, which Boot 4 moved: the
 * starter, built on Boot 4, makes 3.5's {@code HealthIndicator} at run time, over the same checks.
 * Off with {@code management.health.quorumlock.enabled=false} (or {@code
 * management.health.defaults.enabled=false}), as Boot's own contributors.
 */
@AutoConfiguration(after = {QuorumlockAutoConfiguration.class, QuorumlockLeaderAutoConfiguration.class})
@ConditionalOnClass(name = QuorumlockBoot3HealthAutoConfiguration.INDICATOR)
@Conditional({QuorumlockBoot3HealthAutoConfiguration.Enabled.class, LockHealth.OnLock.class})
@Import(QuorumlockBoot3HealthAutoConfiguration.Registrar.class)
public class QuorumlockBoot3HealthAutoConfiguration {

    /** Boot 3.5's health indicator, absent from Boot 4. */
    static final String INDICATOR = "org.springframework.boot.actuate.health.HealthIndicator";

    private static final String HEALTH = "org.springframework.boot.actuate.health.Health";

    /** Boot's rule for a contributor: its own property, else the defaults' one, else on. */
    static final class Enabled extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            String defaults = context.getEnvironment().getProperty("management.health.defaults.enabled", "true");
            boolean enabled = Boolean.parseBoolean(
                    context.getEnvironment().getProperty("management.health.quorumlock.enabled", defaults));
            return enabled
                    ? ConditionOutcome.match("the quorumlock health contributor is enabled")
                    : ConditionOutcome.noMatch("management.health.quorumlock.enabled or its default is false");
        }
    }

    /** Registers the contributor as a bean of 3.5's {@code HealthIndicator} type, unless the application has its own. */
    static final class Registrar implements ImportBeanDefinitionRegistrar, BeanFactoryAware {

        private ListableBeanFactory beans;

        @Override
        public void setBeanFactory(BeanFactory beanFactory) {
            this.beans = (ListableBeanFactory) beanFactory;
        }

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            if (registry.containsBeanDefinition(LockHealth.BEAN)) {
                return;
            }
            ClassLoader loader = QuorumlockBoot3HealthAutoConfiguration.class.getClassLoader();
            Class<?> indicator = ClassUtils.resolveClassName(INDICATOR, loader);
            RootBeanDefinition definition = new RootBeanDefinition(indicator);
            definition.setInstanceSupplier(() -> indicator(indicator, LockHealth.of(beans)));
            registry.registerBeanDefinition(LockHealth.BEAN, definition);
        }
    }

    /** A 3.5 {@code HealthIndicator} whose {@code health()} is {@code lock}'s report as a 3.5 {@code Health}. */
    static Object indicator(Class<?> indicator, Supplier<LockHealth.Report> lock) {
        ClassLoader loader = indicator.getClassLoader();
        Method up;
        Method down;
        Method withDetails;
        Method build;
        try {
            Class<?> health = ClassUtils.forName(HEALTH, loader);
            up = health.getMethod("up");
            down = health.getMethod("down");
            withDetails = up.getReturnType().getMethod("withDetails", Map.class);
            build = up.getReturnType().getMethod("build");
        } catch (ClassNotFoundException | NoSuchMethodException e) {
            throw new IllegalStateException("Spring Boot 3.5's Health is not as the starter knows it: " + e, e);
        }
        InvocationHandler handler = (proxy, method, args) -> switch (method.getName()) {
            case "health" -> {
                LockHealth.Report report = lock.get();
                try {
                    Object builder = (report.up() ? up : down).invoke(null);
                    withDetails.invoke(builder, report.details());
                    yield build.invoke(builder);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            }
            case "toString" -> "quorumlock health";
            case "hashCode" -> System.identityHashCode(proxy);
            case "equals" -> proxy == args[0];
            default -> InvocationHandler.invokeDefault(proxy, method, args);
        };
        return Proxy.newProxyInstance(loader, new Class<?>[] {indicator}, handler);
    }
}
