package io.quorumlock.torture;

import static io.quorumlock.torture.Events.accepted;
import static io.quorumlock.torture.Events.grant;
import static io.quorumlock.torture.Events.invoke;
import static io.quorumlock.torture.Events.release;
import static io.quorumlock.torture.Events.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.quorumlock.testkit.Processes;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.torture.Event.Op;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The report as a browser shows it: rendered by headless Chromium ({@link Screenshot}), its DOM
 * holds the lanes, bars, overlaps and fault marks, and its screenshot shows the bars in their
 * colours. Skipped without Chromium, unless {@code QUORUMLOCK_CHROMIUM} is set (CI): then a missing
 * binary fails. The renders are kept in {@code target/report-render/} for a look.
 */
class ReportRenderIT {

    private static final Logger log = LoggerFactory.getLogger(ReportRenderIT.class);

    /** A render's bound (about 1 s each here, several on a loaded machine), scaled as the test kit's. */
    private static final Duration TIMEOUT = Duration.ofMillis(
            Math.round(20_000 * Double.parseDouble(System.getProperty("quorumlock.test.timeScale", "1"))));

    private static final int WIDTH = 1100;
    private static final int HEIGHT = 900;
    private static final int RED = 0xd62728;
    private static final int BLUE = 0x4c78a8;

    /**
     * Redlock: c2 pauses past its lease while redis-3 is frozen, c3 takes the lock meanwhile and
     * both write (one overlapping pair); later redis-1 is killed. Five bars, fencing tokens 11-15.
     */
    private static final List<Event> REDLOCK = List.of(
            invoke("c1", Op.ACQUIRE, 1_000),
            grant("c1", 1_002, 11),
            write("c1", 1_010, 10, 9),
            accepted("c1", 1_012),
            release("c1", 1_100),
            invoke("c2", Op.ACQUIRE, 1_120),
            Event.fault("freeze redis-3", true, 0, 1_150),
            grant("c2", 1_160, 12),
            invoke("c3", Op.ACQUIRE, 1_200),
            grant("c3", 1_300, 13),
            write("c3", 1_310, 9, 8),
            accepted("c3", 1_312),
            Event.fault("freeze redis-3", false, 0, 1_330),
            release("c3", 1_350),
            write("c2", 1_390, 9, 8),
            accepted("c2", 1_392),
            release("c2", 1_400),
            invoke("c1", Op.ACQUIRE, 1_450),
            Event.fault("kill redis-1", true, 0, 1_500),
            grant("c1", 1_520, 14),
            write("c1", 1_530, 8, 7),
            accepted("c1", 1_532),
            release("c1", 1_600),
            invoke("c3", Op.ACQUIRE, 1_620),
            grant("c3", 1_650, 15),
            Event.fault("kill redis-1", false, 0, 1_700),
            release("c3", 1_750));

    /** ZooKeeper: three clients in turn, no fault, fencing tokens 1-3. */
    private static final List<Event> ZOOKEEPER = List.of(
            invoke("c1", Op.ACQUIRE, 1_000),
            grant("c1", 1_001, 1),
            write("c1", 1_010, 3, 2),
            accepted("c1", 1_011),
            release("c1", 1_050),
            invoke("c2", Op.ACQUIRE, 1_020),
            grant("c2", 1_060, 2),
            write("c2", 1_070, 2, 1),
            accepted("c2", 1_071),
            release("c2", 1_120),
            invoke("c3", Op.ACQUIRE, 1_030),
            grant("c3", 1_130, 3),
            write("c3", 1_140, 1, 0),
            accepted("c3", 1_141),
            release("c3", 1_200));

    private static final Path OUT = Path.of("target", "report-render");

    private static Path report;

    @BeforeAll
    static void writeTheReport() throws Exception {
        Files.createDirectories(OUT);
        report = OUT.resolve("report.html");
        Report.write(report, List.of(new Report.Run("redlock", REDLOCK), new Report.Run("zookeeper", ZOOKEEPER)));
    }

    @BeforeEach
    void needsChromium() {
        String configured = System.getenv(Screenshot.CHROMIUM_ENV);
        boolean required = configured != null && !configured.isBlank();
        assumeTrue(
                required || Screenshot.chromium().isPresent(),
                () -> "report rendering skipped: no Chromium found: " + Screenshot.INSTALL_HINT);
    }

    @Test
    void theRenderedDomHasTheLanesBarsOverlapsAndFaultMarks() {
        long start = System.nanoTime();
        String dom = Screenshot.dom(report, TIMEOUT);
        log.info("DOM of {} in {} ms", report, (System.nanoTime() - start) / 1_000_000);

        assertThat(dom).contains("<table class=\"summary\">");
        assertThat(count(dom, "<tr class=\"strategy\">")).isEqualTo(2);
        List<String> timelines = timelines(dom);
        assertThat(timelines).hasSize(2);

        Timeline redlock = new Timeline(timelines.get(0));
        assertThat(redlock.lanes.keySet()).containsExactly("c1", "c2", "c3");
        assertThat(redlock.all("rect", "lease")).hasSize(5);
        List<Map<String, String>> overlaps = redlock.all("rect", "overlap");
        assertThat(overlaps).hasSize(2).allSatisfy(bar -> assertThat(bar).containsEntry("fill", "#d62728"));
        assertThat(overlaps.stream().map(bar -> bar.get("client"))).containsExactlyInAnyOrder("c2", "c3");
        assertThat(redlock.all("line", "fault-start")).hasSize(2);
        assertThat(redlock.all("line", "fault-end")).hasSize(2);
        assertThat(redlock.all("text", "fault-label").stream().map(label -> label.get("text")))
                .containsExactly("freeze redis-3", "kill redis-1");
        assertThat(redlock.all("rect", "lease").stream().map(bar -> bar.get("title")))
                .allSatisfy(title -> assertThat(title).matches("c\\d fencing token 1[1-5], .*"));
        redlock.barsAreInTheirLanes();

        Timeline zookeeper = new Timeline(timelines.get(1));
        assertThat(zookeeper.lanes.keySet()).containsExactly("c1", "c2", "c3");
        assertThat(zookeeper.all("rect", "lease"))
                .hasSize(3)
                .allSatisfy(bar -> assertThat(bar).containsEntry("fill", "#4c78a8"));
        assertThat(zookeeper.all("rect", "overlap")).isEmpty();
        assertThat(zookeeper.all("line", "fault")).isEmpty();
        zookeeper.barsAreInTheirLanes();
    }

    @Test
    void theScreenshotShowsTheBarsInTheirColours() throws Exception {
        Path png = OUT.resolve("report-" + WIDTH + "x" + HEIGHT + ".png");
        long start = System.nanoTime();
        Screenshot.png(report, png, WIDTH, HEIGHT, TIMEOUT);
        log.info("{} in {} ms", png, (System.nanoTime() - start) / 1_000_000);

        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image).as("a PNG ImageIO decodes").isNotNull();
        assertThat(image.getWidth()).isEqualTo(WIDTH);
        assertThat(image.getHeight()).isEqualTo(HEIGHT);
        Map<Integer, Integer> colours = histogram(image);
        int white = colours.getOrDefault(0xffffff, 0);
        assertThat(WIDTH * HEIGHT - white).as("pixels not white").isGreaterThan(WIDTH * HEIGHT / 100);
        assertThat(colours).as("distinct colours").hasSizeGreaterThan(20);
        // The red bars of c2 and c3, 240 and 50 ms of the 750 ms timeline (850 px): about 272 and 57 px, 14 high.
        assertThat(near(colours, RED)).as("overlap red pixels").isBetween(14 * 300, 14 * 350);
        // Three blue bars in the first timeline and three in the second, about 1075 px in all.
        assertThat(near(colours, BLUE)).as("lease blue pixels").isBetween(14 * 1000, 14 * 1150);
        // The fault marks are 1 px lines and small text: their pixels are orange blended with white.
        long orange = colours.entrySet().stream()
                .filter(e -> orangeOnWhite(e.getKey()))
                .mapToLong(Map.Entry::getValue)
                .sum();
        assertThat(orange).as("fault orange pixels").isGreaterThan(200);
    }

    @Test
    void theFittedScreenshotIsAsTallAsTheReport() throws Exception {
        Path png = OUT.resolve("report.png");
        long start = System.nanoTime();
        Screenshot.png(report, png, WIDTH, TIMEOUT);
        log.info("{} in {} ms", png, (System.nanoTime() - start) / 1_000_000);

        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image.getWidth()).isEqualTo(WIDTH);
        // The table, two headings and two timelines of three lanes: more than 400 px, less than a screen.
        assertThat(image.getHeight()).isBetween(400, HEIGHT);
        assertThat(near(histogram(image), RED)).isBetween(14 * 300, 14 * 350);
    }

    @Test
    void aRenderThatHangsIsKilledWithEveryProcessItStarted(@TempDir Path dir) throws Exception {
        Path hang = dir.resolve("hang.html");
        Files.writeString(hang, "<!DOCTYPE html><html><body><script>while (true) {}</script></body></html>");
        Set<Path> before = chromiumDirs();

        assertThatThrownBy(() -> Screenshot.dom(hang, Duration.ofSeconds(2)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("did not render")
                .hasMessageContaining("killed");

        // SIGKILLed processes take a moment to go, and init reaps the orphaned zombies late.
        TestTime.await(
                Duration.ofSeconds(5),
                () -> ProcessHandle.current().descendants().noneMatch(Processes::isRunning),
                "the killed Chromium processes to be gone");
        assertThat(ProcessHandle.allProcesses()
                        .filter(Processes::isRunning)
                        .filter(p -> p.info().commandLine().orElse("").contains("quorumlock-chromium-")))
                .as("Chromium processes left")
                .isEmpty();
        assertThat(chromiumDirs()).as("temporary directories left").isSubsetOf(before);
    }

    private static Set<Path> chromiumDirs() throws Exception {
        try (Stream<Path> files = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return files.filter(p -> p.getFileName().toString().startsWith("quorumlock-chromium-"))
                    .collect(Collectors.toSet());
        }
    }

    private static Map<Integer, Integer> histogram(BufferedImage image) {
        Map<Integer, Integer> colours = new LinkedHashMap<>();
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                colours.merge(image.getRGB(x, y) & 0xffffff, 1, Integer::sum);
            }
        }
        return colours;
    }

    /** Pixels within 6 of {@code rgb} on each channel: the fill, whatever the colour management. */
    private static int near(Map<Integer, Integer> colours, int rgb) {
        return colours.entrySet().stream()
                .filter(e -> channelsWithin(e.getKey(), rgb, 6))
                .mapToInt(Map.Entry::getValue)
                .sum();
    }

    /** Orange ({@code #ff7f0e}) alone or antialiased over white: full red, more green than blue. */
    private static boolean orangeOnWhite(int rgb) {
        int r = (rgb >> 16) & 0xff;
        int g = (rgb >> 8) & 0xff;
        int b = rgb & 0xff;
        return r >= 240 && g >= 120 && g - b >= 30;
    }

    private static boolean channelsWithin(int a, int b, int tolerance) {
        for (int shift = 0; shift <= 16; shift += 8) {
            if (Math.abs(((a >> shift) & 0xff) - ((b >> shift) & 0xff)) > tolerance) {
                return false;
            }
        }
        return true;
    }

    private static int count(String text, String literal) {
        return text.split(Pattern.quote(literal), -1).length - 1;
    }

    private static List<String> timelines(String dom) {
        Matcher m = Pattern.compile("<svg class=\"timeline\".*?</svg>", Pattern.DOTALL)
                .matcher(dom);
        List<String> svgs = new ArrayList<>();
        while (m.find()) {
            svgs.add(m.group());
        }
        return svgs;
    }

    /** The elements of one serialized timeline SVG, by the classes and attributes Report gives them. */
    private static final class Timeline {

        private static final Pattern ELEMENT = Pattern.compile(
                "<(g|rect|line|text)\\s([^>]*)>(?:([^<]*)</text>|<title>([^<]*)</title>)?", Pattern.DOTALL);
        private static final Pattern ATTRIBUTE = Pattern.compile("([\\w-]+)=\"([^\"]*)\"");

        final List<Map<String, String>> elements = new ArrayList<>();
        /** Lane client to the y of its line. */
        final Map<String, Double> lanes = new LinkedHashMap<>();

        final double width;

        Timeline(String svg) {
            Matcher open = Pattern.compile("<svg ([^>]*)>").matcher(svg);
            assertThat(open.find()).isTrue();
            width = Double.parseDouble(attributes(open.group(1)).get("width"));
            Matcher m = ELEMENT.matcher(svg);
            String lane = null;
            while (m.find()) {
                Map<String, String> element = attributes(m.group(2));
                element.put("tag", m.group(1));
                if (m.group(3) != null) {
                    element.put("text", m.group(3));
                }
                if (m.group(4) != null) {
                    element.put("title", m.group(4));
                    element.put("client", m.group(4).split(" ")[0]);
                }
                if (m.group(1).equals("g") && element.getOrDefault("class", "").equals("lane")) {
                    lane = element.get("data-client");
                } else if (m.group(1).equals("line") && lane != null) {
                    lanes.put(lane, Double.parseDouble(element.get("y1")));
                    lane = null;
                }
                elements.add(element);
            }
        }

        List<Map<String, String>> all(String tag, String cssClass) {
            return elements.stream()
                    .filter(e -> e.get("tag").equals(tag))
                    .filter(e -> List.of(e.getOrDefault("class", "").split(" ")).contains(cssClass))
                    .toList();
        }

        /** Every bar is centred on its client's lane line and inside the SVG. */
        void barsAreInTheirLanes() {
            assertThat(all("rect", "lease")).isNotEmpty().allSatisfy(bar -> {
                double y = Double.parseDouble(bar.get("y"));
                double h = Double.parseDouble(bar.get("height"));
                double x = Double.parseDouble(bar.get("x"));
                double w = Double.parseDouble(bar.get("width"));
                assertThat(lanes).containsKey(bar.get("client"));
                assertThat(y + h / 2).as("centre of %s", bar).isCloseTo(lanes.get(bar.get("client")), within());
                assertThat(x).as("left of %s", bar).isGreaterThan(0);
                assertThat(x + w).as("right of %s", bar).isLessThanOrEqualTo(width);
            });
        }

        private static org.assertj.core.data.Offset<Double> within() {
            return org.assertj.core.data.Offset.offset(1.0);
        }

        private static Map<String, String> attributes(String text) {
            Map<String, String> attributes = new LinkedHashMap<>();
            Matcher m = ATTRIBUTE.matcher(text);
            while (m.find()) {
                attributes.put(m.group(1), m.group(2));
            }
            return attributes;
        }
    }
}
