package io.quorumlock.torture;

import static io.quorumlock.torture.Events.accepted;
import static io.quorumlock.torture.Events.grant;
import static io.quorumlock.torture.Events.invoke;
import static io.quorumlock.torture.Events.release;
import static io.quorumlock.torture.Events.write;
import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.torture.Event.Op;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {

    /** c1 pauses past its lease while c2 takes the lock; both write. A node is frozen meanwhile. */
    private static final List<Event> PAUSED = List.of(
            invoke("c1", Op.ACQUIRE, 1_000),
            grant("c1", 1_002, 7),
            Event.fault("freeze redis-3", true, 0, 1_005),
            invoke("c2", Op.ACQUIRE, 1_010),
            grant("c2", 1_040, 8),
            write("c2", 1_041, 10, 9),
            accepted("c2", 1_042),
            release("c2", 1_043),
            Event.fault("freeze redis-3", false, 0, 1_050),
            write("c1", 1_060, 10, 9),
            accepted("c1", 1_061),
            release("c1", 1_062),
            invoke("c3", Op.ACQUIRE, 1_070),
            grant("c3", 1_071, 9),
            release("c3", 1_072));

    private static final List<Event> CLEAN = List.of(
            invoke("c1", Op.ACQUIRE, 1_000),
            grant("c1", 1_001, 1),
            write("c1", 1_002, 5, 4),
            accepted("c1", 1_003),
            release("c1", 1_004),
            Event.fault("kill redis-1", true, 0, 1_005));

    private static int count(String html, String regex) {
        Matcher m = Pattern.compile(regex).matcher(html);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    @Test
    void theTimelineHasLanesBarsRedOverlapsAndFaultMarks() {
        String html = Report.render(List.of(new Report.Run("redlock <5 nodes>", PAUSED)));

        assertThat(count(html, "<svg class=\"timeline\"")).isEqualTo(1);
        assertThat(count(html, "<g class=\"lane\" data-client=\"c\\d\">")).isEqualTo(3);
        assertThat(count(html, "<rect class=\"lease\"")).isEqualTo(1);
        assertThat(count(html, "<rect class=\"lease overlap\"[^>]*fill=\"#d62728\""))
                .isEqualTo(2);
        assertThat(count(html, "<line class=\"fault fault-start\"")).isEqualTo(1);
        assertThat(count(html, "<line class=\"fault fault-end\"")).isEqualTo(1);
        assertThat(html).contains("<text class=\"fault-label\"").contains(">freeze redis-3</text>");
        assertThat(html).containsPattern("<title>c1 fencing token 7, validity 1000 ms, held 2-62 ms");
        assertThat(html).contains("redlock &lt;5 nodes&gt;").doesNotContain("redlock <5");
        assertThat(html).contains("1 overlapping pairs");
    }

    @Test
    void theSummaryTableHasOneRowPerStrategyWithItsFigures() {
        String html = Report.render(List.of(new Report.Run("redlock", PAUSED), new Report.Run("zookeeper", CLEAN)));

        assertThat(count(html, "<tr class=\"strategy\">")).isEqualTo(2);
        assertThat(count(html, "<svg class=\"timeline\"")).isEqualTo(2);
        assertThat(html.indexOf("<table")).isLessThan(html.indexOf("<svg"));
        // redlock: 3 operations in 72 ms, acquire latencies 2, 30 and 1 ms; one freeze; 1 overlap, 1 stale accepted.
        assertThat(html)
                .containsPattern("<td>redlock</td><td>3</td><td>41\\.7</td><td>2\\.00</td><td>30\\.00</td>"
                        + "<td>freeze 1</td><td class=\"bad\">1</td><td>0</td><td class=\"bad\">1</td><td>0</td>");
        assertThat(html).containsPattern("<td>zookeeper</td><td>1</td>.*<td>kill 1</td><td>0</td>");
        assertThat(html).doesNotContain("src=", "href=", "<link", "@import", "url(");
    }

    @Test
    void theLegendSaysWhatEachKindOfFaultInTheRunsDoes() {
        List<Event> network = List.of(
                invoke("c1", Op.ACQUIRE, 1_000),
                grant("c1", 1_001, 1),
                Event.fault("partition client-2 from redis-1,2,3", true, 0, 1_002),
                Event.fault("partition client-2 from redis-1,2,3", false, 0, 1_003),
                Event.fault("slow +120ms redis-4", true, 0, 1_004),
                release("c1", 1_005));

        String html = Report.render(List.of(new Report.Run("redlock", network), new Report.Run("zookeeper", CLEAN)));

        assertThat(html)
                .contains("<dl class=\"legend\">")
                .contains("<dt>kill</dt><dd>" + FaultKind.KILL.description() + "</dd>")
                .contains("<dt>partition</dt><dd>" + FaultKind.PARTITION.description() + "</dd>")
                .contains("<dt>slow</dt><dd>" + FaultKind.SLOW.description() + "</dd>")
                .doesNotContain("<dt>freeze</dt>");
        assertThat(html.indexOf("<dt>kill</dt>")).isLessThan(html.indexOf("<dt>partition</dt>"));
        assertThat(html.indexOf("</table>")).isLessThan(html.indexOf("<dl class=\"legend\">"));
        assertThat(Report.summarize(network).faultsByKind()).containsOnlyKeys("partition", "slow");
        assertThat(Report.render(List.of(new Report.Run("quiet", List.of(grant("c1", 1, 1))))))
                .doesNotContain("<dl class=\"legend\">");
    }

    @Test
    void summaryPercentilesComeFromMonotonicLatencies() {
        Report.Summary summary = Report.summarize(PAUSED);

        assertThat(summary.operations()).isEqualTo(3);
        assertThat(summary.acquireP50Millis()).isEqualTo(2.0);
        assertThat(summary.acquireP99Millis()).isEqualTo(30.0);
        assertThat(summary.faultsByKind()).containsExactly(java.util.Map.entry("freeze", 1));
    }

    @Test
    void writesTheReportFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("report.html");

        Report.write(file, List.of(new Report.Run("single redis", CLEAN)));

        assertThat(Files.readString(file)).startsWith("<!DOCTYPE html>").endsWith("</html>\n");
    }
}
