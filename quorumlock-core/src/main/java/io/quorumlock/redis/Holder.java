package io.quorumlock.redis;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Who holds a lease: a short name stored with the key beside the random token ({@code <32 hex
 * digits> <holder>}), so that a refusal can say who holds the lock. It is compared as part of the
 * token, so it needs no trust; it is never a secret. Pure, apart from the default name.
 */
final class Holder {

    static final int MAX_LENGTH = 64;
    private static final int TOKEN_LENGTH = 32;

    private Holder() {}

    /** The process's own name, {@code pid@host}: worked out once per JVM. */
    static String defaultName() {
        return DefaultName.NAME;
    }

    private static final class DefaultName {
        static final String NAME = shortened(ProcessHandle.current().pid() + "@" + host());

        /** The kernel's host name where Linux gives it cheaply, else the JVM's (which costs ~20 ms at start-up). */
        private static String host() {
            try {
                String host = firstLine(Path.of("/proc/sys/kernel/hostname"));
                if (!host.isEmpty()) {
                    return host;
                }
            } catch (IOException | RuntimeException e) {
                // not Linux: ask the JVM
            }
            String name = ManagementFactory.getRuntimeMXBean().getName(); // pid@host
            return name.substring(name.indexOf('@') + 1);
        }

        private static String shortened(String name) {
            String printable = name.replaceAll("[^\\x20-\\x7e]", "?");
            return printable.length() <= MAX_LENGTH ? printable : printable.substring(0, MAX_LENGTH);
        }
    }

    /** The first line of a file, trimmed; read line by line, as /proc files must be (see HolderTest). */
    static String firstLine(Path file) throws IOException {
        try (java.io.BufferedReader reader = Files.newBufferedReader(file)) {
            String line = reader.readLine();
            return line == null ? "" : line.trim();
        }
    }

    /** Why {@code name} cannot be a holder's name, or null if it can. */
    static String problem(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_LENGTH) {
            return "holder must be 1 to " + MAX_LENGTH + " characters, was "
                    + (name == null ? "null" : name.length() + " characters")
                    + ": name this process, such as \"billing-worker-1\" (the default is pid@host)";
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return "holder must be printable ASCII, without control characters: it goes into messages";
            }
        }
        return null;
    }

    /**
     * The holder named by a key's value as a node returned it; null if the value is not a string
     * that quorumlock wrote with a holder (another program's value is not shown: it is not ours).
     */
    static String of(Reply value) {
        if (!(value instanceof Reply.Bulk bulk)
                || bulk.text().length() <= TOKEN_LENGTH + 1
                || bulk.text().length() > TOKEN_LENGTH + 1 + MAX_LENGTH
                || bulk.text().charAt(TOKEN_LENGTH) != ' ') {
            return null;
        }
        String text = bulk.text();
        for (int i = 0; i < TOKEN_LENGTH; i++) {
            if (Character.digit(text.charAt(i), 16) < 0) {
                return null;
            }
        }
        String name = text.substring(TOKEN_LENGTH + 1);
        return problem(name) == null ? name : null;
    }
}
