package io.quorumlock.bench;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * What the JVMs of one case wrote besides JMH's result ({@link Trial#finish()}), merged: failures
 * and errors summed, acquire latencies pooled and sorted.
 *
 * @param failures cycles in which the lock was not acquired
 * @param errors cycles that threw
 * @param firstError the first error's class and message, or empty
 * @param acquireNanos the acquire latencies of all forks, sorted; empty if not recorded
 */
record SideFigures(long failures, long errors, String firstError, long[] acquireNanos) {

    /** Reads and deletes the files written under {@code prefix}. */
    static SideFigures read(Path prefix) throws IOException {
        String name = prefix.getFileName().toString() + "-";
        List<Path> files;
        try (Stream<Path> all = Files.list(prefix.getParent())) {
            files = all.filter(p -> p.getFileName().toString().startsWith(name))
                    .sorted()
                    .toList();
        }
        long failures = 0;
        long errors = 0;
        String firstError = "";
        long[] acquires = new long[0];
        for (Path file : files) {
            if (file.toString().endsWith(Trial.FIGURES_SUFFIX)) {
                Properties figures = new Properties();
                try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                    figures.load(in);
                }
                failures += Long.parseLong(figures.getProperty("failures", "0"));
                errors += Long.parseLong(figures.getProperty("errors", "0"));
                if (firstError.isEmpty()) {
                    firstError = figures.getProperty("first_error", "");
                }
            } else if (file.toString().endsWith(Trial.ACQUIRE_SUFFIX)) {
                int count = (int) (Files.size(file) / Long.BYTES);
                int from = acquires.length;
                acquires = Arrays.copyOf(acquires, from + count);
                try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file)))) {
                    for (int i = 0; i < count; i++) {
                        acquires[from + i] = in.readLong();
                    }
                }
            }
            Files.deleteIfExists(file);
        }
        Arrays.sort(acquires);
        return new SideFigures(failures, errors, firstError, acquires);
    }
}
