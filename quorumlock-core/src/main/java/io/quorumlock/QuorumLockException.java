package io.quorumlock;

/** The root of the unchecked exceptions thrown by quorumlock. */
public class QuorumLockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public QuorumLockException(String message) {
        super(message);
    }

    public QuorumLockException(String message, Throwable cause) {
        super(message, cause);
    }
}
