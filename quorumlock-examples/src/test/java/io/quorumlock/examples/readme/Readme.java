package io.quorumlock.examples.readme;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The project's documentation as the tests read it: README.md and every page of docs/, each with its
 * fenced code blocks and their line numbers.
 */
record Readme(Path root, List<Page> pages) {

    /** The page that every other one is reached from. */
    static final String README = "README.md";

    /** A page: its name relative to the project's root (such as {@code docs/redis.md}), its lines and blocks. */
    record Page(String name, Path path, List<String> lines, List<Block> blocks) {

        /** {@code [text](target)} and {@code ![alt](target)}, with an optional title after the target. */
        private static final Pattern LINK = Pattern.compile("\\]\\((<[^>]*>|[^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

        private static final Pattern CODE_SPAN = Pattern.compile("`+[^`]*`+");

        List<Block> blocks(String language) {
            return blocks.stream().filter(b -> b.language().equals(language)).toList();
        }

        /** The page's links, outside code blocks and code spans, each with its line. */
        List<Link> links() {
            List<Link> links = new ArrayList<>();
            boolean inBlock = false;
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (line.startsWith("```")) {
                    inBlock = !inBlock;
                    continue;
                }
                if (inBlock) {
                    continue;
                }
                Matcher m = LINK.matcher(CODE_SPAN.matcher(line).replaceAll("code"));
                while (m.find()) {
                    String target = m.group(1);
                    if (target.startsWith("<")) {
                        target = target.substring(1, target.length() - 1);
                    }
                    links.add(new Link(name, i + 1, target));
                }
            }
            return links;
        }

        /** The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces as dashes. */
        Set<String> anchors() {
            Set<String> anchors = new LinkedHashSet<>();
            Map<String, Integer> seen = new HashMap<>();
            boolean inBlock = false;
            for (String line : lines) {
                if (line.startsWith("```")) {
                    inBlock = !inBlock;
                    continue;
                }
                if (inBlock || !line.startsWith("#")) {
                    continue;
                }
                String slug = line.replaceFirst("^#+\\s*", "")
                        .toLowerCase(Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{N} _-]", "")
                        .replace(' ', '-');
                int n = seen.merge(slug, 1, Integer::sum);
                anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
            }
            return anchors;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** A link on a page: the page, its line and its target as written. */
    record Link(String page, int line, String target) {

        /** A link to another site (with a scheme, such as https:) or a mail address. */
        boolean external() {
            return target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*");
        }

        @Override
        public String toString() {
            return page + " line " + line + ": " + target;
        }
    }

    /** A fenced block: the page it is on, its language (the word after the opening fence), first line and text. */
    record Block(String page, String language, int line, String text) {

        private static final Pattern CLASS =
                Pattern.compile("^(?:public\\s+)?(?:final\\s+)?class\\s+(\\w+)", Pattern.MULTILINE);

        /** The name of the block's top-level class; fails if the block is not a whole compilation unit. */
        String className() {
            Matcher m = CLASS.matcher(text);
            if (!m.find()) {
                throw new AssertionError("the java block at " + where()
                        + " is not a whole class: give it its imports and a class, so that users can paste it");
            }
            return m.group(1);
        }

        /** Where the block's first line is, such as {@code docs/redis.md line 42}. */
        String where() {
            return where(0);
        }

        /** Where the block's line {@code offset} (0 for its first) is on its page. */
        String where(long offset) {
            return page + " line " + (line + offset);
        }

        @Override
        public String toString() {
            return language + " block at " + where();
        }
    }

    /** Reads the documentation of the project whose module is the working directory. */
    static Readme load() {
        return load(Path.of("..").toAbsolutePath().normalize());
    }

    /** Reads README.md and docs/*.md under {@code root}. */
    static Readme load(Path root) {
        List<Page> pages = new ArrayList<>();
        pages.add(read(root, README));
        Path docs = root.resolve("docs");
        if (Files.isDirectory(docs)) {
            try (Stream<Path> files = Files.list(docs)) {
                files.filter(f -> f.getFileName().toString().endsWith(".md"))
                        .sorted()
                        .forEach(f -> pages.add(read(root, "docs/" + f.getFileName())));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list " + docs, e);
            }
        }
        return new Readme(root, List.copyOf(pages));
    }

    private static Page read(Path root, String name) {
        Path path = root.resolve(name);
        try {
            return parse(name, path, Files.readAllLines(path));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path, e);
        }
    }

    static Page parse(String name, Path path, List<String> lines) {
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (!line.startsWith("```") || line.length() == 3) {
                continue;
            }
            String language = line.substring(3).trim();
            StringBuilder text = new StringBuilder();
            int first = i + 2;
            for (i++; i < lines.size() && !lines.get(i).startsWith("```"); i++) {
                text.append(lines.get(i)).append('\n');
            }
            blocks.add(new Block(name, language, first, text.toString()));
        }
        return new Page(name, path, List.copyOf(lines), List.copyOf(blocks));
    }

    /** The page named {@code name}, such as {@code README.md} or {@code docs/redis.md}. */
    Page page(String name) {
        return pages.stream()
                .filter(p -> p.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no page " + name + " among " + pages));
    }

    /** README.md itself. */
    Page readme() {
        return page(README);
    }

    /** The blocks of {@code language} on every page, README.md's first. */
    List<Block> blocks(String language) {
        return pages.stream().flatMap(p -> p.blocks(language).stream()).toList();
    }

    /** The one java block, on whichever page, that declares {@code className}. */
    Block java(String className) {
        List<Block> found = blocks("java").stream()
                .filter(b -> b.className().equals(className))
                .toList();
        if (found.size() != 1) {
            throw new AssertionError("README.md and docs/*.md should have exactly one java block with class "
                    + className + ", have " + found.size() + (found.isEmpty() ? "" : ": " + found));
        }
        return found.get(0);
    }
}
