package io.quorumlock.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One row of the results: a library measured in one case. Absent figures are {@code null} (not
 * measured), and a case that did not run carries why in {@code skipped} or {@code error}.
 *
 * @param caseId the case: {@code single-node}, {@code five-nodes}, {@code five-nodes-one-frozen}, {@code contention}
 * @param library {@code raw-jedis}, {@code quorumlock}, {@code redisson}, {@code sequential-redlock}, {@code redisson-redlock}
 * @param nodes how many nodes the lock used
 * @param threads how many threads (one client each, in the contention case) ran cycles
 * @param opsPerSecond lock cycles per second (wins per second under contention)
 * @param p50Micros median cycle time
 * @param p99Micros 99th percentile of the cycle time
 * @param allocBytesPerOp bytes allocated per cycle, by every thread of the JVM (JMH's gc profiler)
 * @param extra further figures by name (acquire percentiles, failures, fairness, ...), in order
 * @param skipped why the case was not run, or null
 * @param error why the case failed, or null
 */
record CaseResult(
        String caseId,
        String library,
        int nodes,
        int threads,
        Double opsPerSecond,
        Double p50Micros,
        Double p99Micros,
        Double allocBytesPerOp,
        Map<String, Object> extra,
        String skipped,
        String error) {

    CaseResult {
        extra = new LinkedHashMap<>(extra);
    }

    static CaseResult skipped(String caseId, String library, int nodes, int threads, String why) {
        return new CaseResult(caseId, library, nodes, threads, null, null, null, null, Map.of(), why, null);
    }

    static CaseResult failed(String caseId, String library, int nodes, int threads, String why) {
        return new CaseResult(caseId, library, nodes, threads, null, null, null, null, Map.of(), null, why);
    }

    boolean is(String caseId, String library) {
        return this.caseId.equals(caseId) && this.library.equals(library);
    }

    /** A figure from {@link #extra()} as a number, or null. */
    Double number(String name) {
        return extra.get(name) instanceof Number n ? n.doubleValue() : null;
    }
}
