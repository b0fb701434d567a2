package io.quorumlock.examples.readme;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README is a door and docs/ the rooms behind it: the README stays short, keeps the set-up
 * commands that users and CI run, and every relative link of every page leads somewhere.
 * (ReadmeIT compiles and runs the pages' code.)
 */
class ReadmeDocsTest {

    private static final int MAX_README_LINES = 300;

    private static final Readme DOCS = Readme.load();

    @Test
    void theReadmeIsAtMost300Lines() {
        assertThat(DOCS.readme().lines())
                .as("README.md: the whole manual belongs in docs/, the README links to it")
                .hasSizeLessThanOrEqualTo(MAX_README_LINES);
    }

    @Test
    void theReadmeKeepsTheTwoSetUpCommandsAsTheyAre() {
        assertThat(DOCS.readme().blocks("sh"))
                .as("README.md's Set up block")
                .anySatisfy(sh -> assertThat(sh.text())
                        .isEqualTo("./quorumlock demo      # sells stock under a Redlock while a node freezes and"
                                + " another dies, then plays the GC pause and a failover\n"
                                + "mvn -B verify          # the tests: unit tests, then integration tests on real"
                                + " Redis, ZooKeeper, etcd, PostgreSQL and H2\n"));
    }

    @Test
    void thereAreDocsPagesBesideTheReadme() {
        assertThat(DOCS.pages()).as("README.md and docs/*.md").hasSizeGreaterThan(1);
        assertThat(DOCS.pages().get(0).name()).isEqualTo("README.md");
    }

    @Test
    void everyRelativeLinkLeadsToAFileAndEveryAnchorToAHeading() {
        assertThat(brokenLinks(DOCS))
                .as("relative links in README.md and docs/*.md")
                .isEmpty();
    }

    @Test
    void aLinkToAMissingFileOrHeadingIsFound(@TempDir Path root) throws Exception {
        Files.createDirectories(root.resolve("docs"));
        Files.writeString(
                root.resolve("README.md"),
                "# Title\n\nSee [redis](docs/redis.md#tls), [gone](docs/gone.md), [web](https://example.com).\n"
                        + "```sh\n[not a link](nowhere.md)\n```\n");
        Files.writeString(
                root.resolve("docs/redis.md"),
                "# Redis (`core`)\n\n## TLS\n\n[back](../README.md#title), [self](#redis-core), [no](#nothing)\n"
                        + "![chart](chart.svg)\n");

        assertThat(brokenLinks(Readme.load(root)))
                .containsExactly(
                        "README.md line 3: docs/gone.md: no such file",
                        "docs/redis.md line 5: #nothing: no heading 'nothing' in docs/redis.md",
                        "docs/redis.md line 6: chart.svg: no such file");
    }

    @Test
    void everyJavaBlockIsAWholeClassOfItsOwnName() {
        Map<String, List<String>> byClass = new HashMap<>();
        for (Readme.Block block : DOCS.blocks("java")) {
            byClass.computeIfAbsent(block.className(), c -> new ArrayList<>()).add(block.where());
        }
        assertThat(byClass)
                .as("java blocks that declare the same class (they are compiled together)")
                .allSatisfy((name, places) -> assertThat(places).as(name).hasSize(1));
    }

    @Test
    void aBlockThatDoesNotCompileIsNamedByPageAndLine(@TempDir Path classes) {
        Readme.Block broken =
                new Readme.Block("docs/redis.md", "java", 40, "public class Broken {\n\n    int units = \"two\";\n}\n");
        assertThatThrownBy(() -> SnippetCompiler.compile(List.of(broken), classes))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("docs/redis.md line 42: incompatible types");
    }

    /** Each link that leads nowhere, as {@code page line N: target: why}. */
    private static List<String> brokenLinks(Readme docs) {
        List<String> broken = new ArrayList<>();
        for (Readme.Page page : docs.pages()) {
            for (Readme.Link link : page.links()) {
                if (link.external()) {
                    continue;
                }
                String target = link.target();
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                String anchor = hash < 0 ? null : target.substring(hash + 1);
                Path resolved = file.isEmpty()
                        ? page.path()
                        : page.path().getParent().resolve(file).normalize();
                if (!Files.exists(resolved)) {
                    broken.add(link + ": no such file");
                    continue;
                }
                if (anchor == null || !resolved.getFileName().toString().endsWith(".md")) {
                    continue;
                }
                String name = docs.root().relativize(resolved).toString().replace('\\', '/');
                Readme.Page linked = name.equals(page.name())
                        ? page
                        : docs.pages().stream()
                                .filter(p -> p.name().equals(name))
                                .findFirst()
                                .orElse(null);
                if (linked == null) {
                    broken.add(link + ": links to " + name + ", which is neither README.md nor in docs/");
                } else if (!linked.anchors().contains(anchor)) {
                    broken.add(link + ": no heading '" + anchor + "' in " + name);
                }
            }
        }
        return broken;
    }
}
