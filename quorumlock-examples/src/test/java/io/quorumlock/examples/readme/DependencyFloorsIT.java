package io.quorumlock.examples.readme;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user's build gets no dependency below the floors this build enforces for known
 * vulnerabilities (Netty, ZooKeeper): a consumer project of every library module, through the BOM,
 * runs the root pom's own enforcer rule, and so does one of {@code quorumlock-zookeeper} without
 * the BOM. The consumer resolves from a local repository of its own: this checkout's poms, as
 * {@code mvn install} would put them there, and everything else from the local repository this
 * build used (as a file repository: no network), so nothing is installed into it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DependencyFloorsIT {

    private static final Path ROOT = Path.of(System.getProperty("basedir", System.getProperty("user.dir")), "..")
            .toAbsolutePath()
            .normalize();

    /** The modules a user depends on: those of the BOM. */
    private static final List<String> LIBRARY = List.of(
            "quorumlock-core",
            "quorumlock-zookeeper",
            "quorumlock-etcd",
            "quorumlock-jdbc",
            "quorumlock-micrometer",
            "quorumlock-shedlock",
            "quorumlock-spring-boot-starter",
            "quorumlock-testkit");

    @TempDir
    static Path work;

    private static Path repository;
    private static Path settings;
    private static String version;

    @BeforeAll
    static void aLocalRepositoryWithThisCheckoutsPoms() throws IOException {
        String root = Files.readString(ROOT.resolve("pom.xml"));
        version = group(root, "<artifactId>quorumlock-parent</artifactId>\\s*<version>([^<]+)</version>");
        repository = Files.createDirectories(work.resolve("repository"));
        install("quorumlock-parent", ROOT.resolve("pom.xml"));
        install("quorumlock-bom", ROOT.resolve("quorumlock-bom/pom.xml"));
        for (String module : LIBRARY) {
            install(module, ROOT.resolve(module).resolve("pom.xml"));
        }
        Path used = Path.of(System.getProperty("user.home"), ".m2", "repository");
        settings = Files.writeString(work.resolve("settings.xml"), """
                <settings>
                  <mirrors>
                    <mirror>
                      <id>this-build</id>
                      <mirrorOf>*</mirrorOf>
                      <url>%s</url>
                    </mirror>
                  </mirrors>
                </settings>
                """.formatted(used.toUri()));
    }

    /** Puts a pom where {@code mvn install} would, with no jar: resolving a tree needs the poms only. */
    private static void install(String artifactId, Path pom) throws IOException {
        Path dir = Files.createDirectories(
                repository.resolve("io/quorumlock").resolve(artifactId).resolve(version));
        Files.copy(pom, dir.resolve(artifactId + "-" + version + ".pom"));
    }

    @Test
    void aConsumerOfEveryModuleThroughTheBomPassesTheFloorsOfThisBuild() throws Exception {
        String dependencies =
                LIBRARY.stream().map(module -> dependency(module, null)).collect(Collectors.joining("\n"));
        String output = enforce("through-the-bom", """
                <dependencyManagement>
                  <dependencies>
                    <dependency>
                      <groupId>io.quorumlock</groupId>
                      <artifactId>quorumlock-bom</artifactId>
                      <version>%s</version>
                      <type>pom</type>
                      <scope>import</scope>
                    </dependency>
                  </dependencies>
                </dependencyManagement>
                <dependencies>
                %s
                </dependencies>
                """.formatted(version, dependencies));
        assertThat(output).doesNotContain("BUILD FAILURE");
    }

    @Test
    void theBomManagesNettyAndZooKeeperAtTheVersionsOfThisBuild() throws IOException {
        String root = Files.readString(ROOT.resolve("pom.xml"));
        String bom = Files.readString(ROOT.resolve("quorumlock-bom/pom.xml"));
        for (String property : List.of("netty.version", "zookeeper.version")) {
            String tag = "<" + property + ">([^<]+)</" + property + ">";
            assertThat(group(bom, tag))
                    .as(property + " in quorumlock-bom/pom.xml")
                    .isEqualTo(group(root, tag));
        }
    }

    private static String dependency(String artifactId, String version) {
        return "<dependency><groupId>io.quorumlock</groupId><artifactId>" + artifactId + "</artifactId>"
                + (version == null ? "" : "<version>" + version + "</version>") + "</dependency>";
    }

    /**
     * Without the BOM, the consumer's own build manages nothing: Maven takes the nearest version, and
     * the enforcer's rule, which also looks at the versions that lost, would flag Curator's. What
     * counts is what the consumer resolves: {@code mvn dependency:tree}, checked against the floors
     * of the root pom's rule.
     */
    @Test
    void aConsumerOfQuorumlockZookeeperWithoutTheBomResolvesNothingBelowTheFloors() throws Exception {
        String root = Files.readString(ROOT.resolve("pom.xml"));
        String nettyFloor = group(root, "<exclude>io\\.netty:\\*:\\[,([^)]+)\\)</exclude>");
        String zooKeeperFloor = group(root, "<exclude>org\\.apache\\.zookeeper:zookeeper:\\[,([^)]+)\\)</exclude>");
        String plugin =
                group(root, "(?s)<artifactId>maven-dependency-plugin</artifactId>\\s*<version>([^<]+)</version>");
        Path tree = work.resolve("zookeeper-alone-tree.txt");
        mvn(
                "zookeeper-alone",
                "<dependencies>\n" + dependency("quorumlock-zookeeper", version) + "\n</dependencies>",
                "",
                "org.apache.maven.plugins:maven-dependency-plugin:" + plugin + ":tree",
                "-DoutputFile=" + tree);
        List<String> resolved = Files.readAllLines(tree);
        List<String> zooKeeper = versions(resolved, "org\\.apache\\.zookeeper:zookeeper:jar:([^:]+)");
        List<String> netty = versions(resolved, "io\\.netty:netty-[a-z0-9-]+:jar:(?:[a-z0-9_-]+:)?(4\\.[^:]+)");
        assertThat(zooKeeper)
                .as("ZooKeeper in%n%s", String.join("\n", resolved))
                .isNotEmpty();
        assertThat(netty).as("Netty in%n%s", String.join("\n", resolved)).isNotEmpty();
        assertThat(zooKeeper)
                .allSatisfy(v -> assertThat(atLeast(v, zooKeeperFloor))
                        .as("ZooKeeper " + v + " >= " + zooKeeperFloor)
                        .isTrue());
        assertThat(netty)
                .allSatisfy(v -> assertThat(atLeast(v, nettyFloor))
                        .as("Netty " + v + " >= " + nettyFloor)
                        .isTrue());
    }

    private static List<String> versions(List<String> tree, String regex) {
        Pattern pattern = Pattern.compile(regex);
        return tree.stream()
                .map(pattern::matcher)
                .filter(Matcher::find)
                .map(m -> m.group(1))
                .toList();
    }

    /** Whether version {@code v} is at least {@code floor}, by their numeric parts: 4.1.130.Final >= 4.1.125.Final. */
    private static boolean atLeast(String v, String floor) {
        String[] a = v.split("[.-]");
        String[] b = floor.split("[.-]");
        for (int i = 0; i < Math.min(a.length, b.length); i++) {
            if (!a[i].matches("\\d+") || !b[i].matches("\\d+")) {
                break;
            }
            int c = Integer.compare(Integer.parseInt(a[i]), Integer.parseInt(b[i]));
            if (c != 0) {
                return c > 0;
            }
        }
        return true;
    }

    /**
     * Runs {@code mvn validate} on a consumer with {@code body} and the root pom's enforcer rules,
     * and returns its output; fails with it when the build fails.
     */
    private static String enforce(String name, String body) throws Exception {
        String root = Files.readString(ROOT.resolve("pom.xml"));
        String rules = group(root, "(?s)<id>banned-dependencies</id>.*?(<rules>.*?</rules>)");
        String enforcer =
                group(root, "(?s)<artifactId>maven-enforcer-plugin</artifactId>\\s*<version>([^<]+)</version>");
        String build = """
                <build>
                  <plugins>
                    <plugin>
                      <groupId>org.apache.maven.plugins</groupId>
                      <artifactId>maven-enforcer-plugin</artifactId>
                      <version>%s</version>
                      <executions>
                        <execution>
                          <id>floors</id>
                          <phase>validate</phase>
                          <goals><goal>enforce</goal></goals>
                          <configuration>%s</configuration>
                        </execution>
                      </executions>
                    </plugin>
                  </plugins>
                </build>
                """.formatted(enforcer, rules);
        return mvn(name, body, build, "validate");
    }

    /** Runs mvn with {@code args} on a consumer of {@code body} and {@code build}; returns its output, fails with it. */
    private static String mvn(String name, String body, String build, String... args) throws Exception {
        Path project = Files.createDirectories(work.resolve(name));
        Files.writeString(project.resolve("pom.xml"), """
                <project xmlns="http://maven.apache.org/POM/4.0.0">
                  <modelVersion>4.0.0</modelVersion>
                  <groupId>com.example</groupId>
                  <artifactId>%s</artifactId>
                  <version>1</version>
                  %s
                  %s
                </project>
                """.formatted(name, body, build));
        List<String> command =
                new ArrayList<>(List.of("mvn", "-B", "-s", settings.toString(), "-Dmaven.repo.local=" + repository));
        command.addAll(List.of(args));
        Path log = project.resolve("mvn.log");
        Process mvn = new ProcessBuilder(command)
                .directory(project.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        String what = "mvn " + String.join(" ", args) + " of the consumer " + name;
        try {
            if (!mvn.waitFor(100, TimeUnit.SECONDS)) {
                fail(what + " took more than 100 s:\n" + Files.readString(log));
            }
        } finally {
            mvn.destroyForcibly();
        }
        String output = Files.readString(log);
        assertThat(mvn.exitValue()).as("%s:%n%s", what, output).isZero();
        return output;
    }

    private static String group(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        if (!m.find()) {
            throw new AssertionError("no " + regex);
        }
        return m.group(1);
    }
}
