package io.quorumlock.testkit;

/** A server could not start on the port it was asked to listen on: another process holds it. */
public final class PortInUseException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final int port;

    PortInUseException(String host, int port) {
        super("port " + port + " of " + host + " is in use by another process");
        this.port = port;
    }

    /** {@return the port that is taken} */
    public int port() {
        return port;
    }
}
