package io.quorumlock.examples.readme;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Compiles the java blocks of README.md and docs/*.md as a user's build would, against the test's
 * classpath, with every warning an error but "try" (a lease held by try-with-resources and never
 * named is the idiom).
 */
final class SnippetCompiler {

    private SnippetCompiler() {}

    /** Compiles {@code blocks} into {@code dir}, failing with javac's messages and the page and line of each. */
    static URLClassLoader compile(List<Readme.Block> blocks, Path dir) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        List<JavaFileObject> sources = new ArrayList<>();
        for (Readme.Block block : blocks) {
            sources.add(new Source(block));
        }
        List<String> options = List.of(
                "-d",
                dir.toString(),
                "-classpath",
                classpath(),
                "-Xlint:all,-processing,-try",
                "-Werror",
                "-proc:none");
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, null, null)) {
            boolean ok = javac.getTask(null, files, diagnostics, options, null, sources)
                    .call();
            if (!ok) {
                StringBuilder why = new StringBuilder("java blocks of README.md and docs/*.md do not compile:");
                for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                    String where = d.getSource() instanceof Source s
                            ? s.block.where(d.getLineNumber() - 1)
                            : "(no block) line " + d.getLineNumber();
                    why.append("\n  ").append(where).append(": ").append(d.getMessage(null));
                }
                throw new AssertionError(why.toString());
            }
        }
        return new URLClassLoader(new URL[] {dir.toUri().toURL()}, SnippetCompiler.class.getClassLoader());
    }

    /**
     * Compiles {@code block} into {@code dir} with each of {@code swaps} made in its text (such as
     * the page's server addresses for the test's), runs its {@code main}, and returns what it
     * printed. Fails if the block does not name each thing to swap.
     */
    static String run(Readme.Block block, Map<String, String> swaps, Path dir) throws Exception {
        String text = block.text();
        for (Map.Entry<String, String> swap : swaps.entrySet()) {
            if (!text.contains(swap.getKey())) {
                throw new AssertionError(block + " does not name " + swap.getKey());
            }
            text = text.replace(swap.getKey(), swap.getValue());
        }
        Readme.Block swapped = new Readme.Block(block.page(), block.language(), block.line(), text);
        try (URLClassLoader own = compile(List.of(swapped), dir)) {
            Method main = load(own, swapped).getMethod("main", String[].class);
            PrintStream stdout = System.out;
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            synchronized (SnippetCompiler.class) {
                System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
                try {
                    main.invoke(null, (Object) new String[0]);
                } finally {
                    System.setOut(stdout);
                }
            }
            return out.toString(StandardCharsets.UTF_8);
        }
    }

    static Class<?> load(ClassLoader loader, Readme.Block block) {
        try {
            return Class.forName(block.className(), true, loader);
        } catch (ClassNotFoundException e) {
            throw new AssertionError(block + " compiled, but its class " + block.className() + " is missing", e);
        }
    }

    /**
     * The test JVM's classpath. Surefire and failsafe may start it with one manifest-only jar whose
     * {@code Class-Path} lists the real entries: those are expanded.
     */
    static String classpath() {
        List<String> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            entries.add(entry);
            if (!entry.endsWith(".jar") || !Files.isRegularFile(Path.of(entry))) {
                continue;
            }
            try (JarFile jar = new JarFile(entry)) {
                Manifest manifest = jar.getManifest();
                String listed =
                        manifest == null ? null : manifest.getMainAttributes().getValue("Class-Path");
                if (listed != null) {
                    for (String url : listed.trim().split("\\s+")) {
                        entries.add(Path.of(URI.create(url).isAbsolute() ? URI.create(url) : toUri(entry, url))
                                .toString());
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the manifest of " + entry, e);
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    private static URI toUri(String jar, String relative) {
        try {
            return new URL(Path.of(jar).toUri().toURL(), relative).toURI();
        } catch (MalformedURLException | java.net.URISyntaxException e) {
            throw new IllegalArgumentException("a Class-Path entry that is no URL: " + relative, e);
        }
    }

    /** A block as a source file named after its class. */
    private static final class Source extends SimpleJavaFileObject {
        final Readme.Block block;

        Source(Readme.Block block) {
            super(URI.create("string:///" + block.className() + Kind.SOURCE.extension), Kind.SOURCE);
            this.block = block;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return block.text();
        }
    }
}
