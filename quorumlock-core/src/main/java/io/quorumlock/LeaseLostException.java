package io.quorumlock;

/**
 * The lease ran out or could not be extended while the protected work was running, so another
 * holder may have entered the critical section at the same time. The work's own result, if any,
 * must not be trusted as exclusive.
 */
public class LeaseLostException extends QuorumlockException {
    private static final long serialVersionUID = 1L;

    private final String resource;

    public LeaseLostException(String resource, String message, Throwable cause) {
        super("lease on '" + resource + "' lost: " + message, cause);
        this.resource = resource;
    }

    /** The resource whose lease was lost. */
    public String resource() {
        return resource;
    }
}
