package io.quorumlock.cli.run;

import io.quorumlock.LockUnavailableException;
import io.quorumlock.PermitUnavailableException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.cli.Formats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The one line {@code run} prints when the lock was not acquired: the last attempt's evidence,
 * the nodes grouped by their answer, such as {@code held by another owner: redis://10.0.0.1:6379,
 * redis://10.0.0.2:6379; unreachable: redis://10.0.0.3:6379 (connection refused)}. A refusal that
 * is not for a holder ({@link LockUnavailableException#busy()}) says first that the lock service is
 * unreachable (or unavailable, when it answered but could not grant the lock); one by the restart
 * guard says so, and for how long.
 */
final class Refusal {

    private Refusal() {}

    /**
     * Why the lock was not acquired, such as {@code lock 'job' not acquired (one attempt, --wait 0;
     * 1 of 3 votes, 2 needed): held by another owner: redis://10.0.0.2:6379; timed out:
     * redis://10.0.0.3:6379 (no reply within 50 ms)}, or {@code lock 'job' not acquired: the lock
     * service is unreachable (one attempt, --wait 0; 0 of 3 votes, 2 needed): unreachable: ...}.
     *
     * @param connectTimeout the --connect-timeout the service was waited for, to name when it was
     *     not reached; null to name none
     */
    static String line(LockUnavailableException e, Duration wait, Duration connectTimeout) {
        List<ServerAnswer> answers = e.lastAttempt();
        String tries = tries(e, wait);
        String votes = votes(e);
        String service = "";
        if (!e.busy()) {
            boolean silent = answers.stream()
                    .anyMatch(
                            o -> o.kind() == ServerAnswer.Kind.UNREACHABLE || o.kind() == ServerAnswer.Kind.TIMED_OUT);
            service = ": the lock service is " + (silent ? "unreachable" : "unavailable");
            if (connectTimeout != null) {
                tries += "; --connect-timeout " + Formats.duration(connectTimeout);
            }
        }
        return "lock '" + e.resource() + "' not acquired" + service + " (" + tries + votes + "): " + evidence(answers);
    }

    /**
     * Why no permit was acquired, such as {@code no permit of 'backups' acquired (3 permits; one
     * attempt each, --wait 0): backups#1 held by host-a (pid 12); backups#2 held by ...}, or {@code
     * no permit of 'backups' acquired: the lock service is unavailable (...)} where some permit's
     * lock could not be granted for another reason than a holder.
     */
    static String permits(PermitUnavailableException e, Duration wait) {
        String tries = wait.isZero()
                ? "one attempt each, --wait 0"
                : "within --wait " + Formats.duration(wait) + ", " + e.attempts() + " attempts";
        return "no permit of '" + e.resource() + "' acquired" + (e.busy() ? "" : ": the lock service is unavailable")
                + " (" + e.permits() + " permits; " + tries + "): "
                + e.answers().entrySet().stream()
                        .map(answer -> answer.getKey() + " " + answer.getValue())
                        .collect(Collectors.joining("; "))
                        .replace('\n', ' ');
    }

    /**
     * Why the restart guard refused the lock, such as {@code lock 'job' not acquired: no node names
     * a holder, but the restart guard keeps the votes of nodes that (re)started less than --ttl 30s
     * ago out for 27 s more (one attempt, --wait 0; 0 of 3 votes, 2 needed): excluded: ...; wait for
     * them with --wait 28s, or run the nodes with appendfsync always, whose votes count at once}.
     *
     * @param keptOut how long the guard keeps the votes out, from {@link LockUnavailableException#restartGuard()}
     * @param ttl --ttl: this process's longest TTL asked for, which the nodes must have been up for
     */
    static String restartGuard(LockUnavailableException e, Duration keptOut, Duration wait, Duration ttl) {
        long seconds = (keptOut.toNanos() + 999_999_999) / 1_000_000_000; // rounded up
        return "lock '" + e.resource() + "' not acquired: no node names a holder, but the restart guard keeps the"
                + " votes of nodes that (re)started less than --ttl " + RunCommand.option(ttl) + " ago out for "
                + seconds + " s more (" + tries(e, wait) + votes(e) + "): " + evidence(e.lastAttempt())
                + "; wait for them with --wait " + (seconds + 1) + "s, or run the nodes with appendfsync always, whose"
                + " votes count at once";
    }

    private static String tries(LockUnavailableException e, Duration wait) {
        return wait.isZero() && e.attempts() == 1
                ? "one attempt, --wait 0"
                : "within --wait " + Formats.duration(wait) + ", " + e.attempts()
                        + (e.attempts() == 1 ? " attempt" : " attempts");
    }

    private static String votes(LockUnavailableException e) {
        boolean oneAuthority = e.lastAttempt().size() == 1 && e.quorum() == 1; // one node, or a consensus service
        return oneAuthority
                ? ""
                : "; " + e.votes() + " of " + e.lastAttempt().size() + " votes, " + e.quorum() + " needed";
    }

    /** The nodes that did not say yes, grouped by answer in the order the answers first appear. */
    private static String evidence(List<ServerAnswer> answers) {
        Map<ServerAnswer.Kind, List<ServerAnswer>> byVote = new LinkedHashMap<>();
        for (ServerAnswer outcome : answers) {
            if (outcome.kind() != ServerAnswer.Kind.GRANTED) {
                byVote.computeIfAbsent(outcome.kind(), v -> new ArrayList<>()).add(outcome);
            }
        }
        if (byVote.isEmpty()) {
            return "the votes came too late: no validity was left";
        }
        return byVote.entrySet().stream()
                .map(group -> group.getKey().description() + ": "
                        + group.getValue().stream()
                                .map(o -> o.detail().isEmpty() ? o.server() : o.server() + " (" + o.detail() + ")")
                                .collect(Collectors.joining(", ")))
                .collect(Collectors.joining("; "))
                .replace('\n', ' ');
    }
}
