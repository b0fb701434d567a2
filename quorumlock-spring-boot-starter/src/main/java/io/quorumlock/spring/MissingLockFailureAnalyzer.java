package io.quorumlock.spring;

import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.InjectionPoint;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.UnsatisfiedDependencyException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * A start that stopped because something needs a lock the context does not have: says why it has
 * none (no backend configured, a DataSource without {@code quorumlock.jdbc.*}, a Redis lock where a
 * fenced one is asked for, another backend's type) and what to set, in place of Boot's "required
 * a bean ... that could not be found".
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
final class MissingLockFailureAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException> {

    private static final ResolvableType LEASES =
            ResolvableType.forClassWithGenerics(DistributedLock.class, Lease.class);

    private static final String BACKENDS =
            "quorumlock.redis.nodes, quorumlock.zookeeper.connect-string or quorumlock.etcd.endpoints";

    private final BeanFactory beans;
    private final Environment environment;

    MissingLockFailureAnalyzer(BeanFactory beans, Environment environment) {
        this.beans = beans;
        this.environment = environment;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
        ResolvableType wanted = cause.getResolvableType();
        Class<?> type = wanted == null ? null : wanted.resolve();
        if (type == null) {
            return null;
        }
        String needs = needer(rootFailure) + " needs a " + shown(wanted) + ", and ";
        if (type == QuorumlockLeadership.class) {
            return new FailureAnalysis(
                    needs + "quorumlock.leader.election is not set.",
                    "Set quorumlock.leader.election to the election's name (and configure a backend).",
                    cause);
        }
        if (!DistributedLock.class.isAssignableFrom(type)) {
            return null;
        }
        Optional<Backend> chosen;
        try {
            chosen = OnBackend.chosen(environment, getClass().getClassLoader());
        } catch (QuorumlockPropertyException e) {
            return null; // the configuration's own error is the one to report
        }
        if (chosen.isEmpty()) {
            boolean dataSource = beans instanceof ListableBeanFactory listable
                    && listable.getBeanNamesForType(DataSource.class, true, false).length > 0;
            return dataSource
                    ? new FailureAnalysis(
                            needs + "no quorumlock backend is configured, though the context has a DataSource.",
                            "Set quorumlock.jdbc.enabled=true to lock in that database (with quorumlock-jdbc), or"
                                    + " configure another backend: " + BACKENDS + ".",
                            cause)
                    : new FailureAnalysis(
                            needs + "no quorumlock backend is configured.",
                            "Configure one: " + BACKENDS + ", or quorumlock.jdbc.enabled=true with a DataSource"
                                    + " (spring.datasource.url).",
                            cause);
        }
        Backend backend = chosen.get();
        Class<?> lockType =
                ClassUtils.resolveClassName(backend.lockClass, getClass().getClassLoader());
        if (wanted.isAssignableFrom(lockType) || (backend != Backend.REDIS && wanted.isAssignableFrom(LEASES))) {
            return null; // a type the lock has: it is missing for another reason, which Boot tells
        }
        String has = needs + "the lock is a " + lockType.getSimpleName() + " (" + backend.property + ")";
        if (backend == Backend.REDIS) {
            return new FailureAnalysis(
                    has + ", whose leases carry no fencing token.",
                    "Inject DistributedLock<Lease> or Redlock, or configure a fenced backend (ZooKeeper, etcd or the"
                            + " database) for fencing tokens.",
                    cause);
        }
        return new FailureAnalysis(
                has + ".",
                "Inject DistributedLock<Lease>, DistributedLock<FencedLease> or " + lockType.getSimpleName() + ".",
                cause);
    }

    /** The class whose injection point was not satisfied, or "the application". */
    private static String needer(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof UnsatisfiedDependencyException unsatisfied) {
                InjectionPoint point = unsatisfied.getInjectionPoint();
                if (point != null && point.getMember() != null) {
                    return point.getMember().getDeclaringClass().getName();
                }
            }
        }
        return "the application";
    }

    /** A type as code writes it: {@code DistributedLock<Lease>}. */
    private static String shown(ResolvableType type) {
        return type.toString().replaceAll("\\b[a-z][\\w]*(\\.[a-z][\\w]*)*\\.(?=[A-Z])", "");
    }
}
