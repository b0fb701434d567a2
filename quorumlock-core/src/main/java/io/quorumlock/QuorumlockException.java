package io.quorumlock;

/** The root of the unchecked exceptions thrown by quorumlock. */
public class QuorumlockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public QuorumlockException(String message) {
        super(message);
    }

    public QuorumlockException(String message, Throwable cause) {
        super(message, cause);
    }
}
