package io.quorumlock.internal;

import java.io.BufferedReader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Who holds a lock, as every backend stores it beside the lock (with a Redis key's token, as a
 * ZooKeeper lock node's data) so that a refusal can name the holder, and the other names a server
 * sends for a refusal (a lock node, a key). What a server sends is untrusted: another program may
 * have written it. A holder is shown only if it is a holder's name (1 to {@value #MAX_LENGTH}
 * printable ASCII characters); any other name goes into a message cut to {@value #MAX_SHOWN}
 * characters, with every character outside printable ASCII shown as {@code ?}.
 */
public final class Holders {

    /** The longest holder name. */
    public static final int MAX_LENGTH = 64;
    /** The longest server-sent name a message shows whole. */
    public static final int MAX_SHOWN = 160;

    private Holders() {}

    /** The process's own name, {@code pid@host} (made printable and cut to 64 characters): worked out once per JVM. */
    public static String defaultName() {
        return DefaultName.NAME;
    }

    private static final class DefaultName {
        static final String NAME = printable(ProcessHandle.current().pid() + "@" + host(), MAX_LENGTH);

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
    }

    /** The first line of a file, trimmed; read line by line, as /proc files must be (see HoldersTest). */
    static String firstLine(Path file) throws IOException {
        try (BufferedReader reader = Files.newBufferedReader(file)) {
            String line = reader.readLine();
            return line == null ? "" : line.trim();
        }
    }

    /**
     * What a refusal's evidence says of the holder {@code who} that a server named: {@code holder
     * who}, and where it is {@code own}, the refused lock's own holder name, that this process (or
     * another named the same) holds the lock under another lease, with {@link #OWN_LEASE}.
     */
    public static String named(String who, String own) {
        return who.equals(own) ? "holder " + who + ", " + OWN_LEASE : "holder " + who;
    }

    /**
     * How {@link #named} marks the lock's own holder; a {@code LockUnavailableException} whose
     * evidence has it says that leases are not reentrant, and what is.
     */
    public static final String OWN_LEASE = "this lock's own holder name: held by this process under another lease";

    /** Why {@code name} cannot be a holder's name, if it cannot. */
    public static Optional<String> problem(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_LENGTH) {
            return Optional.of("holder must be 1 to " + MAX_LENGTH + " characters, was "
                    + (name == null ? "null" : name.length() + " characters")
                    + ": name this process, such as \"billing-worker-1\" (the default is pid@host)");
        }
        for (int i = 0; i < name.length(); i++) {
            if (!isPrintable(name.charAt(i))) {
                return Optional.of("holder must be printable ASCII, without control characters: it goes into messages");
            }
        }
        return Optional.empty();
    }

    /** The holder that {@code data}, as a server sent it, names: only if it is a holder's name in UTF-8. */
    public static Optional<String> read(byte[] data) {
        if (data == null || data.length == 0 || data.length > MAX_LENGTH) {
            return Optional.empty();
        }
        String name = new String(data, StandardCharsets.UTF_8);
        return problem(name).isEmpty() ? Optional.of(name) : Optional.empty();
    }

    /**
     * {@code name}, as a server sent it, fit for a message: characters outside printable ASCII as
     * {@code ?}, and past {@value #MAX_SHOWN} characters cut, saying how long it was.
     */
    public static String shown(String name) {
        if (name == null) {
            return "null";
        }
        if (name.length() <= MAX_SHOWN) {
            return printable(name, MAX_SHOWN);
        }
        return printable(name, MAX_SHOWN) + "... (" + name.length() + " characters)";
    }

    private static String printable(String text, int max) {
        int length = Math.min(text.length(), max);
        StringBuilder shown = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            char c = text.charAt(i);
            shown.append(isPrintable(c) ? c : '?');
        }
        return shown.toString();
    }

    private static boolean isPrintable(char c) {
        return c >= 0x20 && c <= 0x7e;
    }
}
