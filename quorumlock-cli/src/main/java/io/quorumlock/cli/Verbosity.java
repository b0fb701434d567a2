package io.quorumlock.cli;

import picocli.CommandLine.Option;

/**
 * The {@code -v} option, mixed into every command: how much the libraries log to stderr. Warnings
 * only by default (see {@code simplelogger.properties}); {@code -v} adds info, {@code -vv} debug.
 * It takes effect only when given before anything has logged, which is the case on the command
 * line.
 */
public final class Verbosity {

    private static final String LEVEL_PROPERTY = "org.slf4j.simpleLogger.defaultLogLevel";
    private static volatile boolean verbose;

    /**
     * Silences java.util.logging, which gRPC (etcd's client) logs to, in its own format with class
     * names; -v gives its console back.
     */
    static void quietJavaLogging() {
        java.util.logging.LogManager.getLogManager().reset();
    }

    /** Whether {@code -v} was given: failures are then shown with their stack trace. */
    public static boolean isVerbose() {
        return verbose;
    }

    @Option(
            names = {"-v", "--verbose"},
            order = 90,
            description = "Log more to stderr: -v info, -vv debug (default: warnings only).")
    void setVerbose(boolean[] flags) {
        if (flags.length > 0) {
            verbose = true;
            System.setProperty(LEVEL_PROPERTY, flags.length > 1 ? "debug" : "info");
            // Where each line comes from, and java.util.logging's console, for the one who asked.
            System.setProperty("org.slf4j.simpleLogger.showShortLogName", "true");
            System.setProperty("org.slf4j.simpleLogger.warnLevelString", "WARN");
            System.setProperty("org.slf4j.simpleLogger.errorLevelString", "ERROR");
            java.util.logging.Logger.getLogger("").addHandler(new java.util.logging.ConsoleHandler());
        }
    }
}
