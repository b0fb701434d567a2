package io.quorumlock.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.quorumlock.LockListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Micrometer meters for the locks of this library: a {@link LockListener} to pass to a lock's
 * builder ({@code listener(metrics)}), and a {@link MeterBinder} to bind to a registry.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th></tr>
 *   <tr><td>{@code quorumlock.acquire}</td><td>timer</td><td>{@code backend}, {@code outcome} =
 *       acquired | busy | unavailable | error</td></tr>
 *   <tr><td>{@code quorumlock.extend}</td><td>timer</td><td>{@code backend}, {@code outcome} =
 *       extended | failed</td></tr>
 *   <tr><td>{@code quorumlock.leases.lost}</td><td>counter</td><td>{@code backend}</td></tr>
 *   <tr><td>{@code quorumlock.leases.held}</td><td>gauge</td><td>{@code backend}</td></tr>
 * </table>
 *
 * <p>{@code backend} is {@code redis}, {@code zookeeper} or {@code etcd}. With {@link
 * Builder#tagResources(boolean) tagResources(true)} the timers and the lost counter also carry a
 * {@code resource} tag: the first {@linkplain Builder#maxTaggedResources(int) 100} resources of a
 * backend each their own, every later one {@code other}. One instance may serve several locks and
 * several registries. The held gauge counts from the first event on, bound or not; the timers and
 * counters record only what happens once a registry is bound.
 */
public final class QuorumlockMetrics implements LockListener, MeterBinder {

    static final String ACQUIRE = "quorumlock.acquire";
    static final String EXTEND = "quorumlock.extend";
    static final String LOST = "quorumlock.leases.lost";
    static final String HELD = "quorumlock.leases.held";

    /** The tag of the resources past {@link Builder#maxTaggedResources(int)}. */
    static final String OTHER = "other";

    private static final Logger log = LoggerFactory.getLogger(QuorumlockMetrics.class);

    private final boolean tagResources;
    private final int maxTaggedResources;
    private final List<Bound> registries = new CopyOnWriteArrayList<>();
    /** Leases held now, per backend. */
    private final Map<String, AtomicLong> held = new ConcurrentHashMap<>();

    /** Meters without a resource tag. */
    public QuorumlockMetrics() {
        this(builder());
    }

    private QuorumlockMetrics(Builder builder) {
        this.tagResources = builder.tagResources;
        this.maxTaggedResources = builder.maxTaggedResources;
    }

    /** Starts the options of the meters. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Bound bound = new Bound(registry);
        registries.add(bound);
        held.keySet().forEach(bound::held);
    }

    @Override
    public void acquired(String backend, String resource, Duration took, int votes, int nodes) {
        held(backend).incrementAndGet();
        acquire(backend, resource, took, "acquired");
    }

    @Override
    public void busy(String backend, String resource, Duration took) {
        acquire(backend, resource, took, "busy");
    }

    @Override
    public void unavailable(String backend, String resource, Duration took) {
        acquire(backend, resource, took, "unavailable");
    }

    @Override
    public void error(String backend, String resource, Duration took, RuntimeException error) {
        acquire(backend, resource, took, "error");
    }

    @Override
    public void extended(String backend, String resource, Duration took, boolean extended) {
        for (Bound bound : registries) {
            bound.meters(backend, resource).extend(extended).record(took);
        }
    }

    /** Counted as a failed extension that took no time: the round threw before it could be timed. */
    @Override
    public void extensionFailed(String backend, String resource, Throwable error) {
        extended(backend, resource, Duration.ZERO, false);
    }

    @Override
    public void lost(String backend, String resource, String reason) {
        held(backend).decrementAndGet();
        for (Bound bound : registries) {
            bound.meters(backend, resource).lost.increment();
        }
    }

    @Override
    public void released(String backend, String resource, Duration heldFor) {
        held(backend).decrementAndGet();
    }

    private void acquire(String backend, String resource, Duration took, String outcome) {
        for (Bound bound : registries) {
            bound.meters(backend, resource).acquire(outcome).record(took);
        }
    }

    private AtomicLong held(String backend) {
        AtomicLong count = held.get(backend);
        if (count != null) {
            return count;
        }
        AtomicLong created = held.computeIfAbsent(backend, b -> new AtomicLong());
        registries.forEach(bound -> bound.held(backend));
        return created;
    }

    @Override
    public String toString() {
        return "QuorumlockMetrics[tagResources " + tagResources
                + (tagResources ? " (at most " + maxTaggedResources + ")" : "") + ", " + registries.size()
                + " registries]";
    }

    /** The meters of one registry. */
    private final class Bound {
        private final MeterRegistry registry;
        /** Per backend, without the resource tag. */
        private final Map<String, Meters> byBackend = new ConcurrentHashMap<>();
        /** Per backend and resource, with {@code tagResources}. */
        private final Map<String, Map<String, Meters>> byResource = new ConcurrentHashMap<>();

        Bound(MeterRegistry registry) {
            this.registry = registry;
        }

        void held(String backend) {
            Gauge.builder(HELD, QuorumlockMetrics.this.held.get(backend), AtomicLong::get)
                    .description("Leases held now")
                    .tag("backend", backend)
                    .register(registry);
        }

        Meters meters(String backend, String resource) {
            if (tagResources) {
                Map<String, Meters> tagged = byResource.computeIfAbsent(backend, b -> new ConcurrentHashMap<>());
                Meters meters = tagged.get(resource);
                return meters != null ? meters : tagged(tagged, backend, resource);
            }
            Meters meters = byBackend.get(backend);
            return meters != null
                    ? meters
                    : byBackend.computeIfAbsent(backend, b -> new Meters(registry, Tags.of("backend", b)));
        }

        /**
         * The meters of a resource not tagged yet: its own while fewer than maxTaggedResources have
         * theirs (the {@code other} tag's among them), else {@code other}'s, said once per backend.
         */
        private Meters tagged(Map<String, Meters> tagged, String backend, String resource) {
            synchronized (tagged) {
                Meters meters = tagged.get(resource);
                if (meters != null) {
                    return meters;
                }
                boolean full = tagged.size() - (tagged.containsKey(OTHER) ? 1 : 0) >= maxTaggedResources;
                String tag = full ? OTHER : resource;
                if (full && !tagged.containsKey(OTHER)) {
                    log.warn(
                            "quorumlock meters: more than {} {} resources to tag; the others are tagged resource={}:"
                                    + " raise maxTaggedResources, or tag no resources (tagResources(false)) if their names"
                                    + " are not a small, fixed set",
                            maxTaggedResources,
                            backend,
                            OTHER);
                }
                return tagged.computeIfAbsent(
                        tag, t -> new Meters(registry, Tags.of("backend", backend, "resource", t)));
            }
        }
    }

    /** The meters of one backend (and resource), registered once: Micrometer hands back the same. */
    private static final class Meters {
        private final Timer acquired;
        private final Timer busy;
        private final Timer unavailable;
        private final Timer error;
        private final Timer extended;
        private final Timer extendFailed;
        private final Counter lost;

        Meters(MeterRegistry registry, Tags tags) {
            acquired = acquireTimer(registry, tags, "acquired");
            busy = acquireTimer(registry, tags, "busy");
            unavailable = acquireTimer(registry, tags, "unavailable");
            error = acquireTimer(registry, tags, "error");
            extended = extendTimer(registry, tags, "extended");
            extendFailed = extendTimer(registry, tags, "failed");
            lost = Counter.builder(LOST)
                    .description("Leases lost before their release")
                    .tags(tags)
                    .register(registry);
        }

        Timer acquire(String outcome) {
            return switch (outcome) {
                case "acquired" -> acquired;
                case "busy" -> busy;
                case "unavailable" -> unavailable;
                default -> error;
            };
        }

        Timer extend(boolean held) {
            return held ? extended : extendFailed;
        }

        private static Timer acquireTimer(MeterRegistry registry, Tags tags, String outcome) {
            return timer(registry, ACQUIRE, "Acquires of a lock, by how they ended", tags, outcome);
        }

        private static Timer extendTimer(MeterRegistry registry, Tags tags, String outcome) {
            return timer(registry, EXTEND, "Extension rounds of a lease, by how they ended", tags, outcome);
        }

        private static Timer timer(MeterRegistry registry, String name, String description, Tags tags, String outcome) {
            return Timer.builder(name)
                    .description(description)
                    .tags(tags)
                    .tag("outcome", outcome)
                    .register(registry);
        }
    }

    /** Options of the meters. */
    public static final class Builder {
        private boolean tagResources;
        private int maxTaggedResources = 100;

        private Builder() {}

        /**
         * Whether the timers and the lost counter carry the resource's name as a {@code resource}
         * tag. Each resource then makes meters of its own (up to {@link #maxTaggedResources(int)}),
         * so only for a small, fixed set of resources. The default is off.
         */
        public Builder tagResources(boolean tag) {
            this.tagResources = tag;
            return this;
        }

        /**
         * With {@link #tagResources(boolean) tagResources(true)}, how many resources of a backend
         * get a tag of their own: the first {@code max} seen; every later one is tagged {@code
         * other} (and a warning says so once), so that resource names that keep changing (an order
         * id in the name) cannot grow the meters without end. The default is 100.
         *
         * @throws IllegalArgumentException if {@code max} is less than 1
         */
        public Builder maxTaggedResources(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("maxTaggedResources must be at least 1, was " + max
                        + ": to tag no resource, use tagResources(false)");
            }
            this.maxTaggedResources = max;
            return this;
        }

        /** The meters with these options. */
        public QuorumlockMetrics build() {
            return new QuorumlockMetrics(this);
        }
    }
}
