package io.quorumlock;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * No permit of a {@link DistributedSemaphore} could be acquired within the allowed wait. Carries
 * what each permit's lock said last: who held it, or why it could not be granted.
 */
public class PermitUnavailableException extends LockUnavailableException {
    private static final long serialVersionUID = 1L;

    private final int permits;
    private final boolean busy;
    private final transient Map<String, String> answers;

    /**
     * The semaphore {@code name} of {@code permits} permits granted none within {@code waited};
     * {@code answers} holds, by the permit's resource, in the permits' order, what its lock said
     * last; {@code busy} if every permit was held by another owner.
     */
    public PermitUnavailableException(
            String name, int permits, Duration waited, int attempts, Map<String, String> answers, boolean busy) {
        super(message(name, permits, waited, attempts, answers), name, attempts);
        this.permits = permits;
        this.busy = busy;
        this.answers = Collections.unmodifiableMap(new LinkedHashMap<>(answers));
    }

    private static String message(
            String name, int permits, Duration waited, int attempts, Map<String, String> answers) {
        return String.format(
                        "could not acquire a permit of '%s' (%d permit%s) within %d ms (%d attempt%s): ",
                        name, permits, permits == 1 ? "" : "s", waited.toMillis(), attempts, attempts == 1 ? "" : "s")
                + answers.entrySet().stream()
                        .map(answer -> answer.getKey() + " " + answer.getValue())
                        .collect(Collectors.joining("; "));
    }

    /** How many permits the semaphore has. */
    public int permits() {
        return permits;
    }

    /**
     * What each permit's lock said last, by the permit's resource, in the permits' order: {@code
     * held by ...}, or why it could not be granted. Empty once deserialized.
     */
    public Map<String, String> answers() {
        return answers == null ? Map.of() : answers;
    }

    /**
     * Whether every permit was held by another owner, rather than some permit's lock service being
     * unable to grant it: a wait for a release may then end in a permit.
     */
    @Override
    public boolean busy() {
        return busy;
    }
}
