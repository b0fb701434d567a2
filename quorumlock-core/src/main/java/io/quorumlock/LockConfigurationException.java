package io.quorumlock;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The lock could not be acquired and at least one node refused for a reason that only a change of
 * configuration fixes (see {@link ServerAnswer.Kind#MISCONFIGURED}): a wrong password, a replica
 * listed as a node. Unlike {@link LockUnavailableException} this is not a busy lock, and waiting
 * does not help, so {@code acquire} does not retry it. The message names each such node and its
 * remedy; {@link #lastAttempt()} has every node's answer.
 */
public class LockConfigurationException extends QuorumlockException {
    private static final long serialVersionUID = 1L;

    private final String resource;
    private final int attempts;
    private final transient List<ServerAnswer> lastAttempt;

    public LockConfigurationException(String resource, int attempts, List<ServerAnswer> lastAttempt) {
        super(message(resource, lastAttempt));
        this.resource = resource;
        this.attempts = attempts;
        this.lastAttempt = List.copyOf(lastAttempt);
    }

    private static String message(String resource, List<ServerAnswer> answers) {
        List<ServerAnswer> wrong = answers.stream()
                .filter(o -> o.kind() == ServerAnswer.Kind.MISCONFIGURED)
                .toList();
        return String.format(
                "could not acquire '%s': %d of %d node%s refused with a configuration error: %s",
                resource,
                wrong.size(),
                answers.size(),
                answers.size() == 1 ? "" : "s",
                wrong.stream().map(o -> o.server() + " (" + o.detail() + ")").collect(Collectors.joining("; ")));
    }

    /** The resource that could not be locked. */
    public String resource() {
        return resource;
    }

    /** How many attempts were made: the first one with a configuration error was the last. */
    public int attempts() {
        return attempts;
    }

    /** What each node answered on the last attempt, in the order the nodes were configured. */
    public List<ServerAnswer> lastAttempt() {
        return lastAttempt;
    }
}
