package io.quorumlock.spring;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.BindResult;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

/**
 * Matches when the properties choose one backend: the only one configured, or {@code
 * quorumlock.primary}. The database is configured by {@code quorumlock.jdbc.enabled=true} or by any
 * other {@code quorumlock.jdbc.*} property (unless {@code enabled} is false). A configuration that
 * cannot choose (two backends and no primary, a primary that is not configured, a backend whose
 * module is missing) fails the start with the remedy.
 */
abstract class OnBackend extends SpringBootCondition {

    /** The properties of the database lock beside {@code quorumlock.jdbc.enabled}: any of them turns it on. */
    static final List<String> JDBC_PROPERTIES =
            List.of("quorumlock.jdbc.create-table", "quorumlock.jdbc.table", "quorumlock.jdbc.request-timeout");

    private final Backend backend;

    OnBackend(Backend backend) {
        this.backend = backend;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        Optional<Backend> chosen = chosen(context.getEnvironment(), context.getClassLoader());
        return chosen.filter(backend::equals).isPresent()
                ? ConditionOutcome.match("quorumlock backend " + backend.key() + " chosen by " + backend.property)
                : ConditionOutcome.noMatch("quorumlock backend " + backend.key() + " not chosen");
    }

    /** The backend the properties choose, if any. */
    static Optional<Backend> chosen(Environment environment, ClassLoader loader) {
        Binder binder = Binder.get(environment);
        Map<Backend, String> setBy = new EnumMap<>(Backend.class);
        for (Backend backend : Backend.values()) {
            configured(binder, backend).ifPresent(property -> setBy.put(backend, property));
        }
        List<Backend> configured = List.copyOf(setBy.keySet());
        Backend primary = binder.bind("quorumlock.primary", Backend.class).orElse(null);
        Backend chosen;
        if (primary != null) {
            if (!configured.contains(primary)) {
                throw new QuorumlockPropertyException("quorumlock.primary is " + primary.key() + ", but "
                        + primary.property + " is not set: set it, or set quorumlock.primary to a configured backend"
                        + (configured.isEmpty() ? "" : " (" + keys(configured) + ")"));
            }
            chosen = primary;
        } else if (configured.size() > 1) {
            List<String> properties = List.copyOf(setBy.values());
            throw new QuorumlockPropertyException(and(properties) + (properties.size() == 2 ? " are both" : " are all")
                    + " set, and one lock is made: set"
                    + " quorumlock.primary to " + keys(configured) + " to choose it, or remove the others");
        } else if (configured.size() == 1) {
            chosen = configured.get(0);
        } else {
            return Optional.empty();
        }
        if (!ClassUtils.isPresent(chosen.lockClass, loader)) {
            throw new QuorumlockPropertyException(setBy.get(chosen) + " is set, but " + chosen.lockClass
                    + " is not on the class path: add the dependency " + chosen.artifact);
        }
        return Optional.of(chosen);
    }

    /**
     * The property that configures {@code backend}, if one does. The database's is {@code
     * quorumlock.jdbc.enabled=true}, or any other {@code quorumlock.jdbc.*} property while {@code
     * enabled} is not set: {@code enabled=false} keeps it off.
     */
    static Optional<String> configured(Binder binder, Backend backend) {
        if (backend == Backend.JDBC) {
            BindResult<Boolean> enabled = binder.bind(backend.property, Boolean.class);
            if (enabled.isBound()) {
                return enabled.get() ? Optional.of(backend.property + "=true") : Optional.empty();
            }
            return JDBC_PROPERTIES.stream()
                    .filter(property -> binder.bind(property, String.class).isBound())
                    .findFirst();
        }
        if (backend == Backend.REDIS
                && binder.bind("quorumlock.redis.sentinel.master", String.class)
                        .map(s -> !s.isBlank())
                        .orElse(false)) {
            return Optional.of("quorumlock.redis.sentinel.master");
        }
        if (backend == Backend.REDIS
                && binder.bind("quorumlock.redis.cluster.nodes", Bindable.listOf(String.class))
                        .map(l -> !l.isEmpty())
                        .orElse(false)) {
            return Optional.of("quorumlock.redis.cluster.nodes");
        }
        boolean set = backend == Backend.ZOOKEEPER
                ? binder.bind(backend.property, String.class)
                        .map(s -> !s.isBlank())
                        .orElse(false)
                : binder.bind(backend.property, Bindable.listOf(String.class))
                        .map(l -> !l.isEmpty())
                        .orElse(false);
        return set ? Optional.of(backend.property) : Optional.empty();
    }

    private static String keys(List<Backend> backends) {
        return String.join(" or ", backends.stream().map(Backend::key).toList());
    }

    private static String and(List<String> names) {
        List<String> all = new ArrayList<>(names);
        String last = all.remove(all.size() - 1);
        return String.join(", ", all) + " and " + last;
    }

    static final class Redis extends OnBackend {
        Redis() {
            super(Backend.REDIS);
        }
    }

    static final class ZooKeeper extends OnBackend {
        ZooKeeper() {
            super(Backend.ZOOKEEPER);
        }
    }

    static final class Etcd extends OnBackend {
        Etcd() {
            super(Backend.ETCD);
        }
    }

    static final class Jdbc extends OnBackend {
        Jdbc() {
            super(Backend.JDBC);
        }
    }
}
