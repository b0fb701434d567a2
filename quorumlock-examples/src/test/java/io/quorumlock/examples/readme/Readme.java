package io.quorumlock.examples.readme;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The project's README.md as the tests read it: its fenced code blocks, with their line numbers. */
record Readme(Path path, List<Block> blocks) {

    /** A fenced block: its language (the word after the opening fence), first line and text. */
    record Block(String language, int line, String text) {

        private static final Pattern CLASS =
                Pattern.compile("^(?:public\\s+)?(?:final\\s+)?class\\s+(\\w+)", Pattern.MULTILINE);

        /** The name of the block's top-level class; fails if the block is not a whole compilation unit. */
        String className() {
            Matcher m = CLASS.matcher(text);
            if (!m.find()) {
                throw new AssertionError("the java block at README.md line " + line
                        + " is not a whole class: give it its imports and a class, so that users can paste it");
            }
            return m.group(1);
        }

        @Override
        public String toString() {
            return language + " block at README.md line " + line;
        }
    }

    /** Reads the README of the project whose module is the working directory. */
    static Readme load() {
        Path path = Path.of("..", "README.md").toAbsolutePath().normalize();
        try {
            return parse(path, Files.readAllLines(path));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path, e);
        }
    }

    static Readme parse(Path path, List<String> lines) {
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
            blocks.add(new Block(language, first, text.toString()));
        }
        return new Readme(path, List.copyOf(blocks));
    }

    List<Block> blocks(String language) {
        return blocks.stream().filter(b -> b.language().equals(language)).toList();
    }

    /** The one java block that declares {@code className}. */
    Block java(String className) {
        List<Block> found = blocks("java").stream()
                .filter(b -> b.className().equals(className))
                .toList();
        if (found.size() != 1) {
            throw new AssertionError(
                    "README.md should have exactly one java block with class " + className + ", has " + found.size());
        }
        return found.get(0);
    }
}
