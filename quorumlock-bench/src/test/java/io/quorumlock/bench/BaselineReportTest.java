package io.quorumlock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reading of another build's results (untrusted: bounded, strict, printed without control
 * characters) and the comparison of the rounds: medians, ratios paired by round, what is missing.
 */
class BaselineReportTest {

    @TempDir
    Path dir;

    @Test
    void readsTheRowsOfAResultsFile() throws IOException {
        Path file = write("{\"mode\": \"quick\", \"cases\": [\n"
                + "  {\"case\": \"single-node\", \"library\": \"quorumlock\", \"ops_per_s\": 1.5e4,"
                + " \"alloc_bytes_per_op\": 1402, \"p50_us\": null},\n"
                + "  {\"case\": \"postgresql-cycle\", \"library\": \"quorumlock\", \"ops_per_s\": null,"
                + " \"skipped\": \"no PostgreSQL \\u00e0 \\\"here\\\"\"},\n"
                + "  {\"case\": \"five-nodes\", \"library\": \"quorumlock\", \"error\": \"boom\\u001b[31m\"}]}");

        List<BaselineReport.Measured> rows = BaselineReport.read(file, "the old build's, round 1");

        assertThat(rows)
                .containsExactly(
                        new BaselineReport.Measured("single-node", "quorumlock", 15_000.0, 1402.0, null, null),
                        new BaselineReport.Measured(
                                "postgresql-cycle", "quorumlock", null, null, "no PostgreSQL à \"here\"", null),
                        new BaselineReport.Measured("five-nodes", "quorumlock", null, null, null, "boom?[31m"));
    }

    @Test
    void malformedResultsAreRefusedNamingTheFile() throws IOException {
        for (String text : List.of(
                "{\"cases\": [",
                "{\"cases\": [] } trailing",
                "{\"cases\": {}}",
                "[1, 2]",
                "{\"cases\": [{\"case\": 1, \"library\": \"x\"}]}",
                "{\"cases\": [{\"case\": \"a\", \"library\": \"x\", \"ops_per_s\": \"fast\"}]}",
                "{\"cases\": [{\"case\": \"a\", \"library\": \"x\", \"ops_per_s\": -1}]}",
                "{\"cases\": [{\"case\": \"a\", \"library\": \"x\", \"ops_per_s\": 01}]}",
                "{\"cases\": [\"\\x\"]}",
                "[".repeat(Json.MAX_DEPTH + 2))) {
            Path file = write(text);
            assertThatThrownBy(() -> BaselineReport.read(file, "the new build's, round 2"))
                    .as(text)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith(file + " (the new build's, round 2): not a bench's results: ");
        }
        Path latin1 = dir.resolve("latin1.json");
        Files.write(latin1, new byte[] {'{', '"', (byte) 0xe9, '"', ':', '1', '}'});
        assertThatThrownBy(() -> BaselineReport.read(latin1, "the old build's, round 1"))
                .hasMessageContaining("not UTF-8");
        Path large = dir.resolve("large.json");
        Files.write(large, new byte[(int) BaselineReport.MAX_RESULTS_BYTES + 1]);
        assertThatThrownBy(() -> BaselineReport.read(large, "the old build's, round 1"))
                .hasMessageContaining("more than the " + BaselineReport.MAX_RESULTS_BYTES + " a bench writes");
    }

    @Test
    void mediansAndTheRatiosOfEachRound() {
        BaselineReport report = new BaselineReport(3);
        double[] fresh = {110, 90, 100};
        double[] old = {100, 100, 50};
        for (int round = 1; round <= 3; round++) {
            report.add(round, true, List.of(row("five-nodes", fresh[round - 1], 2_000.0)));
            report.add(round, false, List.of(row("five-nodes", old[round - 1], 1_000.0)));
        }

        Map<?, ?> row = (Map<?, ?>) report.json().get(0);

        assertThat(row.get("new_ops_per_s")).isEqualTo(100.0);
        assertThat(row.get("old_ops_per_s")).isEqualTo(100.0);
        // 1.1, 0.9 and 2 paired by round: the median is 1.1, not the ratio of the medians (1)
        assertThat((Double) row.get("ratio")).isCloseTo(1.1, org.assertj.core.data.Offset.offset(1e-9));
        assertThat((Double) row.get("ratio_min")).isCloseTo(0.9, org.assertj.core.data.Offset.offset(1e-9));
        assertThat((Double) row.get("ratio_max")).isEqualTo(2.0);
        assertThat(row.get("alloc_ratio")).isEqualTo(2.0);
        assertThat(report.complete()).isTrue();
        assertThat(report.table().get(1))
                .matches("five-nodes +quorumlock +100 +100 +1\\.10 +0\\.90-2\\.00 +2,000 +1,000 +2\\.00");
    }

    @Test
    void aRowOfOneBuildOnlyIsToldAndAnErrorIsAFailure() {
        BaselineReport report = new BaselineReport(1);
        report.add(1, true, List.of(row("single-node", 10.0, null), row("five-nodes-tls", 5.0, null)));
        report.add(1, false, List.of(row("single-node", 10.0, null)));

        assertThat(report.complete()).as("a row the old build does not have").isTrue();
        assertThat(String.join("\n", report.table())).contains("not in the old build");

        BaselineReport failed = new BaselineReport(1);
        failed.add(1, true, List.of(row("single-node", 10.0, null)));
        failed.add(
                1, false, List.of(new BaselineReport.Measured("single-node", "quorumlock", null, null, null, "boom")));

        assertThat(failed.complete()).isFalse();
        assertThat(String.join("\n", failed.table())).contains("ERROR old round 1: boom");
    }

    @Test
    void theMedianOfWhatIsThere() {
        assertThat(BaselineReport.median(Arrays.asList(3.0, null, 1.0, 2.0))).isEqualTo(2.0);
        assertThat(BaselineReport.median(List.of(4.0, 1.0))).isEqualTo(2.5);
        assertThat(BaselineReport.median(Arrays.asList((Double) null))).isNull();
    }

    private static BaselineReport.Measured row(String caseId, double ops, Double alloc) {
        return new BaselineReport.Measured(caseId, "quorumlock", ops, alloc, null, null);
    }

    private Path write(String text) throws IOException {
        return Files.writeString(Files.createTempFile(dir, "bench-results", ".json"), text);
    }
}
