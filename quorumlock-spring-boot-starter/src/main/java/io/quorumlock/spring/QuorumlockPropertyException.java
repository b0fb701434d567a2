package io.quorumlock.spring;

/**
 * A {@code quorumlock.*} property that cannot be used, or a database that the database lock cannot
 * use as configured, in one line that names the property and the remedy and shows no secret. Boot reports it as the whole reason the application failed to
 * start ({@link QuorumlockFailureAnalyzer}), without a stack trace.
 */
final class QuorumlockPropertyException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    QuorumlockPropertyException(String message) {
        super(message);
    }

    QuorumlockPropertyException(String message, Throwable cause) {
        super(message, cause);
    }
}
