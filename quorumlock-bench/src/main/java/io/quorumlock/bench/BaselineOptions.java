package io.quorumlock.bench;

import picocli.CommandLine.Option;

/** The options of {@code bench --baseline}: this build beside an earlier one. */
final class BaselineOptions {

    /** The rounds when {@code --rounds} is not given. */
    static final int ROUNDS = 3;

    /** How long one side's run of one round may take when {@code --child-timeout} is not given. */
    static final int CHILD_TIMEOUT_SECONDS = 30 * 60;

    @Option(
            names = "--baseline",
            order = 4,
            paramLabel = "REV_OR_JAR",
            description = "Compares this build with an earlier one: REV_OR_JAR is the quorumlock-bench.jar of another"
                    + " build, or a git revision of this checkout (built once in a temporary worktree, then kept in"
                    + " target/bench-baselines/). Runs the rows of --only (default: '"
                    + BaselineRun.DEFAULT_ONLY
                    + "') with --quick, this build and the baseline in turn, each in a JVM of its own, --rounds times;"
                    + " prints each row's ops/s and allocation side by side with their ratio (medians, the ratio's"
                    + " spread over the rounds) and writes bench-baseline.json. Exit code 0 when every row was measured,"
                    + " 1 when a side failed, 2 for a usage error.")
    String baseline;

    @Option(
            names = "--rounds",
            order = 5,
            paramLabel = "N",
            description = "With --baseline: how many times each build runs the rows (default: " + ROUNDS + ").")
    Integer rounds;

    @Option(
            names = "--child-timeout",
            hidden = true,
            paramLabel = "SECONDS",
            description = "With --baseline: how long one build's run of one round may take (default: "
                    + CHILD_TIMEOUT_SECONDS + ").")
    Integer childTimeoutSeconds;
}
