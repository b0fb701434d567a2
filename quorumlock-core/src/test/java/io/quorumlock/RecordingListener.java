package io.quorumlock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records every event as {@code backend event resource [detail]}, and each event's duration. */
public final class RecordingListener implements LockListener {

    /** One event heard. */
    public record Event(String backend, String name, String resource, Duration duration, String detail) {
        @Override
        public String toString() {
            return name + " " + resource + (detail.isEmpty() ? "" : " " + detail);
        }
    }

    private final List<Event> events = new CopyOnWriteArrayList<>();

    public List<Event> events() {
        return List.copyOf(events);
    }

    /** The events as {@code name resource [detail]}, in order. */
    public List<String> names() {
        return events.stream().map(Event::toString).toList();
    }

    private void add(String backend, String name, String resource, Duration duration, String detail) {
        events.add(new Event(backend, name, resource, duration, detail));
    }

    @Override
    public void acquired(String backend, String resource, Duration took, int votes, int nodes) {
        add(backend, "acquired", resource, took, votes + "/" + nodes);
    }

    @Override
    public void busy(String backend, String resource, Duration took) {
        add(backend, "busy", resource, took, "");
    }

    @Override
    public void unavailable(String backend, String resource, Duration took) {
        add(backend, "unavailable", resource, took, "");
    }

    @Override
    public void error(String backend, String resource, Duration took, RuntimeException error) {
        add(backend, "error", resource, took, error.getClass().getSimpleName());
    }

    @Override
    public void extended(String backend, String resource, Duration took, boolean held) {
        add(backend, "extended", resource, took, held ? "held" : "not held");
    }

    @Override
    public void extensionFailed(String backend, String resource, Throwable error) {
        add(
                backend,
                "extensionFailed",
                resource,
                Duration.ZERO,
                error.getClass().getSimpleName());
    }

    @Override
    public void lost(String backend, String resource, String reason) {
        add(backend, "lost", resource, Duration.ZERO, "");
    }

    @Override
    public void released(String backend, String resource, Duration held) {
        add(backend, "released", resource, held, "");
    }
}
