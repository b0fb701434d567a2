package io.quorumlock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * One library's cycles on one thread, on a client of its own, counted in turns with the other
 * libraries of its case ({@link #inTurns}): the cycles/s, p50 and p99 of its row. The first
 * cycle, which connects the client, is not counted.
 */
final class CountedCycles implements AutoCloseable {

    private static final int MAX_SAMPLES = 200_000;

    /** One cycle of a library: true if it got what it asked for (the lock, a permit). */
    interface Client extends AutoCloseable {
        boolean cycle();

        @Override
        void close();
    }

    private final String caseId;
    private final String name;
    private final int nodes;
    private final Map<String, Object> extra;
    private final long[] samples = new long[MAX_SAMPLES];
    private Client client;
    private String error;
    private int count;
    private long counted;
    private long nanos;
    private long failures;
    private long errors;
    private String firstError;

    /** Makes the client and runs its first cycle, neither counted; {@code extra} goes into the row. */
    CountedCycles(String caseId, String name, int nodes, Supplier<Client> client, Map<String, Object> extra) {
        this.caseId = caseId;
        this.name = name;
        this.nodes = nodes;
        this.extra = new LinkedHashMap<>(extra);
        try {
            this.client = client.get();
            if (!this.client.cycle()) {
                error = "the first cycle did not get what it asked for, though it was free";
            }
        } catch (RuntimeException e) {
            error = ConsensusLocks.firstLine(e);
        }
    }

    String name() {
        return name;
    }

    /**
     * Warms {@code cycles} up in {@code warmups} turns of {@code warmup} each, then counts them in
     * {@code turns} turns that share {@code time}, A B, B A, ...: what the machine does meanwhile
     * falls on all alike.
     */
    static void inTurns(
            String caseId,
            List<CountedCycles> cycles,
            int warmups,
            Duration warmup,
            Duration time,
            int turns,
            Progress progress) {
        for (int w = 0; w < warmups; w++) {
            for (CountedCycles c : cycles) {
                progress.status(caseId + " / " + c.name + ": warm-up");
                c.run(warmup, false);
            }
        }
        Duration turn = time.dividedBy(turns);
        for (int t = 0; t < turns; t++) {
            List<CountedCycles> order = new ArrayList<>(cycles);
            if (t % 2 == 1) {
                Collections.reverse(order);
            }
            for (CountedCycles c : order) {
                progress.status(caseId + " / " + c.name);
                c.run(turn, true);
            }
        }
    }

    /** Cycles for {@code time}; counted or not. */
    void run(Duration time, boolean count) {
        if (error != null) {
            return;
        }
        long end = System.nanoTime() + time.toNanos();
        for (long now = System.nanoTime(); now - end < 0; now = System.nanoTime()) {
            boolean got;
            try {
                got = client.cycle();
            } catch (RuntimeException e) {
                if (count && errors++ == 0) {
                    firstError = e.toString();
                }
                got = false;
            }
            long took = System.nanoTime() - now;
            if (!count) {
                continue;
            }
            nanos += took;
            if (!got) {
                failures++;
                continue;
            }
            counted++;
            if (this.count < MAX_SAMPLES) {
                samples[this.count++] = took;
            }
        }
    }

    CaseResult result() {
        if (error != null) {
            return CaseResult.failed(caseId, name, nodes, 1, error);
        }
        long[] sorted = Arrays.copyOf(samples, count);
        Arrays.sort(sorted);
        Map<String, Object> row = new LinkedHashMap<>(extra);
        row.put("failures", failures);
        row.put("errors", errors);
        if (firstError != null) {
            row.put("first_error", firstError);
        }
        return new CaseResult(
                caseId,
                name,
                nodes,
                1,
                nanos == 0 ? null : counted / (nanos / 1e9),
                ManyCallers.percentile(sorted, 0.50),
                ManyCallers.percentile(sorted, 0.99),
                null,
                row,
                null,
                null);
    }

    @Override
    public void close() {
        if (client != null) {
            client.close();
            client = null;
        }
    }
}
