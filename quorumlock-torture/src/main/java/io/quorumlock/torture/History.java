package io.quorumlock.torture;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A history file: events appended as JSON lines, one flat object per line, flushed at once so a
 * process killed mid-run leaves every event it recorded. Each client process writes its own file
 * (concurrent appends from several processes to one file may interleave); {@link #readAll} merges
 * them. Appending is thread-safe, for clients run as threads.
 *
 * <p>A line looks like {@code {"client":"c1","kind":"OK","op":"ACQUIRE","nanos":12,"wall":1700,
 * "fence":7,"validityMs":9800}}; absent optional fields are left out.
 */
public final class History implements AutoCloseable {

    private final Path file;
    private final BufferedWriter out;

    private History(Path file, BufferedWriter out) {
        this.file = file;
        this.out = out;
    }

    /** Opens the file for appending, creating it (but not its directory) if needed. */
    public static History open(Path file) {
        try {
            return new History(
                    file,
                    Files.newBufferedWriter(
                            file, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open history " + file, e);
        }
    }

    /** The file this history appends to. */
    public Path file() {
        return file;
    }

    /** Appends one event and flushes it to the file. */
    public synchronized void append(Event event) {
        try {
            out.write(toJson(event));
            out.newLine();
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to history " + file, e);
        }
    }

    /** Closes the file. */
    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close history " + file, e);
        }
    }

    /**
     * Reads the events of one file in file order. Blank lines are skipped; a truncated last line
     * (a process killed while writing it) is skipped too.
     *
     * @throws IllegalArgumentException if any other line is not a valid event, naming the line
     */
    public static List<Event> read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read history " + file, e);
        }
        List<Event> events = new ArrayList<>(lines.size());
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank()) {
                continue;
            }
            try {
                events.add(fromJson(line));
            } catch (RuntimeException e) {
                if (i == lines.size() - 1 && !line.strip().endsWith("}")) {
                    break;
                }
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": " + e.getMessage(), e);
            }
        }
        return events;
    }

    /**
     * Reads several files (one per client) and merges them by wall time; events with the same wall
     * time keep their file order, and files are taken in the order given.
     */
    public static List<Event> readAll(Collection<Path> files) {
        List<Event> events = new ArrayList<>();
        for (Path file : files) {
            events.addAll(read(file));
        }
        events.sort(Comparator.comparingLong(Event::wallMillis));
        return events;
    }

    static String toJson(Event e) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("client", e.client());
        fields.put("kind", e.kind().name());
        fields.put("op", e.op().name());
        fields.put("nanos", e.monotonicNanos());
        fields.put("wall", e.wallMillis());
        if (!e.leaseToken().isEmpty()) {
            fields.put("lease", e.leaseToken());
        }
        e.fencingToken().ifPresent(t -> fields.put("fence", t));
        if (e.validityMillis() != 0) {
            fields.put("validityMs", e.validityMillis());
        }
        e.read().ifPresent(v -> fields.put("read", v));
        e.written().ifPresent(v -> fields.put("written", v));
        e.accepted().ifPresent(a -> fields.put("accepted", a));
        if (!e.label().isEmpty()) {
            fields.put("label", e.label());
        }
        if (!e.record().isEmpty()) {
            fields.put("record", e.record());
        }
        return FlatJson.write(fields);
    }

    static Event fromJson(String line) {
        Map<String, Object> f = FlatJson.parse(line);
        return new Event(
                (String) required(f, "client"),
                Event.Kind.valueOf((String) required(f, "kind")),
                Event.Op.valueOf((String) required(f, "op")),
                (Long) required(f, "nanos"),
                (Long) required(f, "wall"),
                (String) f.getOrDefault("lease", ""),
                optionalLong(f, "fence"),
                (Long) f.getOrDefault("validityMs", 0L),
                optionalLong(f, "read"),
                optionalLong(f, "written"),
                Optional.ofNullable((Boolean) f.get("accepted")),
                (String) f.getOrDefault("label", ""),
                (String) f.getOrDefault("record", ""));
    }

    private static Object required(Map<String, Object> fields, String key) {
        Object value = fields.get(key);
        if (value == null) {
            throw new IllegalArgumentException("missing field \"" + key + "\"");
        }
        return value;
    }

    private static OptionalLong optionalLong(Map<String, Object> fields, String key) {
        Object value = fields.get(key);
        return value == null ? OptionalLong.empty() : OptionalLong.of((Long) value);
    }
}
