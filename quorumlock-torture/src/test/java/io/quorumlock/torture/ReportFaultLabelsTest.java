package io.quorumlock.torture;

import static io.quorumlock.torture.Events.grant;
import static io.quorumlock.torture.Events.invoke;
import static io.quorumlock.torture.Events.release;
import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.torture.Event.Op;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The fault labels of a timeline do not run into each other nor out of the SVG. */
class ReportFaultLabelsTest {

    private static final Pattern LABEL = Pattern.compile(
            "<text class=\"fault-label\" x=\"([\\d.]+)\" y=\"(\\d+)\" fill=\"#ff7f0e\"( text-anchor=\"end\")?>");
    private static final Pattern LANE =
            Pattern.compile("<g class=\"lane\" data-client=\"c1\"><text x=\"4\" y=\"(\\d+)\"");

    /** c1 holds the lock from 1000 to 2000 ms; faults start at the given times. */
    private static String timeline(long... faultStarts) {
        List<Event> events = new ArrayList<>(List.of(invoke("c1", Op.ACQUIRE, 1_000), grant("c1", 1_000, 1)));
        for (long at : faultStarts) {
            events.add(Event.fault("freeze redis-" + at, true, 0, at));
        }
        events.add(release("c1", 2_000));
        return Report.render(List.of(new Report.Run("redlock", events)));
    }

    private static List<String[]> labels(String html) {
        Matcher m = LABEL.matcher(html);
        List<String[]> labels = new ArrayList<>();
        while (m.find()) {
            labels.add(new String[] {m.group(1), m.group(2), m.group(3) == null ? "start" : "end"});
        }
        return labels;
    }

    private static int laneTextY(String html) {
        Matcher m = LANE.matcher(html);
        assertThat(m.find()).isTrue();
        return Integer.parseInt(m.group(1));
    }

    @Test
    void labelsFarApartShareARow() {
        String html = timeline(1_100, 1_500);

        assertThat(labels(html)).extracting(l -> l[1]).containsExactly("14", "14");
        assertThat(laneTextY(html)).isEqualTo(47);
    }

    @Test
    void labelsThatWouldOverlapGoOnRowsAboveAndTheLanesMoveDown() {
        String html = timeline(1_100, 1_110, 1_120);

        assertThat(labels(html)).extracting(l -> l[1]).containsExactly("40", "27", "14");
        assertThat(laneTextY(html)).isEqualTo(47 + 2 * 13);
        assertThat(html)
                .contains("<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\""
                        + (30 + 2 * 13 + 26 + 10) + "\"");
    }

    @Test
    void aLabelNearTheRightEdgeEndsAtItsMark() {
        String html = timeline(1_100, 1_990);

        assertThat(labels(html)).extracting(l -> l[2]).containsExactly("start", "end");
        assertThat(labels(html).get(1)[0]).isEqualTo("929.5"); // the mark at 931.5, minus 2
    }

    @Test
    void beyondFourRowsALabelIsLeftToTheMarksTitle() {
        String html = timeline(1_100, 1_101, 1_102, 1_103, 1_104, 1_105);

        assertThat(labels(html)).hasSize(4);
        assertThat(html).contains("<title>freeze redis-1105 at 105 ms</title>");
        assertThat(html.split("<line class=\"fault fault-start\"", -1)).hasSize(7);
    }
}
