package io.quorumlock.spring.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;

/**
 * The java blocks of one page of docs/, each a class as a user pastes it, compiled against this
 * application's class path (the starter, Boot, the backends), for the tests to run in a real
 * application context.
 */
final class DocsPage {

    private static final Pattern BLOCK = Pattern.compile("(?ms)^```java\\n(.*?)^```");

    private static final Pattern CLASS = Pattern.compile("(?m)^public class (\\w+)");

    private final URLClassLoader loader;
    private final Map<String, String> sources;

    private DocsPage(URLClassLoader loader, Map<String, String> sources) {
        this.loader = loader;
        this.sources = sources;
    }

    /** Compiles every java block of {@code page} (such as {@code docs/spring-boot.md}) into {@code classes}. */
    static DocsPage compile(String page, Path classes) throws IOException {
        Path file = Path.of("..", page).toAbsolutePath().normalize();
        Map<String, String> sources = new LinkedHashMap<>();
        Matcher block = BLOCK.matcher(Files.readString(file));
        while (block.find()) {
            Matcher name = CLASS.matcher(block.group(1));
            assertThat(name.find())
                    .as("a java block of " + page + " declares a public class")
                    .isTrue();
            sources.put(name.group(1), block.group(1));
        }
        return new DocsPage(compile(page, sources, classes), sources);
    }

    /**
     * The page with each key of {@code swaps} (an address, a setting) replaced by its value in every
     * block, compiled into {@code classes}.
     */
    DocsPage swapped(String page, Map<String, String> swaps, Path classes) throws IOException {
        Map<String, String> swapped = new LinkedHashMap<>();
        sources.forEach((name, text) -> {
            for (Map.Entry<String, String> swap : swaps.entrySet()) {
                text = text.replace(swap.getKey(), swap.getValue());
            }
            swapped.put(name, text);
        });
        return new DocsPage(compile(page, swapped, classes), swapped);
    }

    /** The page's class {@code name}. */
    Class<?> type(String name) {
        assertThat(sources).as("the classes of the page").containsKey(name);
        try {
            return Class.forName(name, true, loader);
        } catch (ClassNotFoundException e) {
            throw new AssertionError(name + " was compiled but cannot be loaded", e);
        }
    }

    /** The source of the page's class {@code name}. */
    String source(String name) {
        return sources.get(name);
    }

    /** The loader of the page's classes, a child of this test's. */
    ClassLoader loader() {
        return loader;
    }

    private static URLClassLoader compile(String page, Map<String, String> sources, Path classes) throws IOException {
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        List<JavaFileObject> units = sources.entrySet().stream()
                .map(e -> (JavaFileObject)
                        new SimpleJavaFileObject(
                                URI.create("string:///" + e.getKey() + ".java"), JavaFileObject.Kind.SOURCE) {
                            @Override
                            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                                return e.getValue();
                            }
                        })
                .toList();
        Files.createDirectories(classes);
        // javac follows the Class-Path of a manifest-only jar, as failsafe may start the JVM with one. The
        // blocks' warnings are the readme tests' (quorumlock-examples) to refuse.
        List<String> options =
                List.of("-d", classes.toString(), "-classpath", System.getProperty("java.class.path"), "-proc:none");
        boolean compiled = ToolProvider.getSystemJavaCompiler()
                .getTask(null, null, diagnostics, options, null, units)
                .call();
        assertThat(compiled)
                .as(page + "'s java blocks compile: " + diagnostics.getDiagnostics())
                .isTrue();
        return new URLClassLoader(new java.net.URL[] {classes.toUri().toURL()}, DocsPage.class.getClassLoader());
    }
}
