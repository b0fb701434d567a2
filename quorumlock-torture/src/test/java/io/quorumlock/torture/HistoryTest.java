package io.quorumlock.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.torture.Event.Kind;
import io.quorumlock.torture.Event.Op;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HistoryTest {

    @TempDir
    Path dir;

    @Test
    void eventsRoundTripThroughTheFile() {
        List<Event> events = List.of(
                Event.state(Kind.INITIAL, 100, 1, 1_700_000_000_000L),
                Event.of("c1", Kind.INVOKE, Op.ACQUIRE, 5, 1_700_000_000_001L),
                Event.of("c1", Kind.OK, Op.ACQUIRE, 9_000_000, 1_700_000_000_010L)
                        .withLease("a1b2-c3", 9_800),
                Event.of("c2", Kind.OK, Op.ACQUIRE, -42, 1_700_000_000_011L)
                        .withFencingToken(Long.MAX_VALUE)
                        .withValidity(4_000),
                Event.of("c1", Kind.OK, Op.WRITE, 10, 1_700_000_000_012L)
                        .withWrite(100, 99)
                        .withAccepted(false),
                Event.of("c1", Kind.INFO, Op.LEASE_LOST, 11, 1_700_000_000_013L)
                        .withLabel("session expired: \"zk\"\n\ttab \\ é \u0001"),
                Event.fault("freeze redis-3", true, 12, 1_700_000_000_014L),
                Event.fault("freeze redis-3", false, 13, 1_700_000_000_015L),
                Event.state(Kind.FINAL, 99, 14, 1_700_000_000_016L));
        Path file = dir.resolve("c1.jsonl");
        try (History history = History.open(file)) {
            events.forEach(history::append);
        }

        assertThat(History.read(file)).containsExactlyElementsOf(events);
    }

    @Test
    void linesAreFlatJsonWithoutAbsentFields() throws Exception {
        Path file = dir.resolve("h.jsonl");
        try (History history = History.open(file)) {
            history.append(Event.of("c1", Kind.INVOKE, Op.ACQUIRE, 5, 7));
        }

        assertThat(Files.readString(file).strip())
                .isEqualTo("{\"client\":\"c1\",\"kind\":\"INVOKE\",\"op\":\"ACQUIRE\",\"nanos\":5,\"wall\":7}");
    }

    @Test
    void appendsToAnExistingFile() {
        Path file = dir.resolve("h.jsonl");
        try (History history = History.open(file)) {
            history.append(Event.of("c1", Kind.INVOKE, Op.ACQUIRE, 1, 1));
        }
        try (History history = History.open(file)) {
            history.append(Event.of("c1", Kind.OK, Op.ACQUIRE, 2, 2));
        }

        assertThat(History.read(file)).extracting(Event::kind).containsExactly(Kind.INVOKE, Kind.OK);
    }

    @Test
    void aTruncatedLastLineIsSkippedButABadLineElsewhereIsAnError() throws Exception {
        Path truncated = dir.resolve("killed.jsonl");
        Files.writeString(
                truncated, History.toJson(Event.of("c1", Kind.INVOKE, Op.WRITE, 1, 1)) + "\n{\"client\":\"c1\",\"ki");
        assertThat(History.read(truncated)).hasSize(1);

        Path broken = dir.resolve("broken.jsonl");
        Files.writeString(broken, "{\"client\":\"c1\"}\n" + History.toJson(Event.of("c1", Kind.OK, Op.WRITE, 1, 1)));
        assertThatThrownBy(() -> History.read(broken))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("broken.jsonl:1")
                .hasMessageContaining("missing field \"kind\"");
    }

    @Test
    void readAllMergesClientFilesByWallTime() {
        Path a = dir.resolve("c1.jsonl");
        Path b = dir.resolve("c2.jsonl");
        try (History h1 = History.open(a);
                History h2 = History.open(b)) {
            h1.append(Events.invoke("c1", Op.ACQUIRE, 1));
            h1.append(Events.ok("c1", Op.ACQUIRE, 5));
            h2.append(Events.invoke("c2", Op.ACQUIRE, 2));
            h2.append(Events.ok("c2", Op.ACQUIRE, 5));
        }

        assertThat(History.readAll(List.of(a, b)))
                .extracting(e -> e.client() + "@" + e.wallMillis())
                .containsExactly("c1@1", "c2@2", "c1@5", "c2@5");
    }

    @Test
    void flatJsonParsesSpacesNegativesAndNulls() {
        Map<String, Object> fields = FlatJson.parse(" { \"a\" : -12 , \"b\":null,\"c\":true, \"d\":\"\\u00e9\\/\" } ");

        assertThat(fields).containsEntry("a", -12L).containsEntry("b", null).containsEntry("c", true);
        assertThat(fields.get("d")).isEqualTo("é/");
        assertThat(FlatJson.parse("{}")).isEmpty();
        assertThatThrownBy(() -> FlatJson.parse("{\"a\":{}}")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FlatJson.parse("{\"a\":1} x")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void faultKindIsTheFirstWordOfTheLabel() {
        assertThat(Event.fault("freeze redis-3", true, 0, 0).faultKind()).isEqualTo("freeze");
        assertThat(Event.fault("restart", true, 0, 0).faultKind()).isEqualTo("restart");
        assertThatThrownBy(() -> Event.state(Kind.OK, 1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
