package io.quorumlock.redis;

import java.io.IOException;
import java.io.OutputStream;

/** Writes to both streams: a test's output stays visible while it is captured. */
final class Tee extends OutputStream {
    private final OutputStream first;
    private final OutputStream second;

    Tee(OutputStream first, OutputStream second) {
        this.first = first;
        this.second = second;
    }

    @Override
    public synchronized void write(int b) throws IOException {
        first.write(b);
        second.write(b);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
        first.write(b, off, len);
        second.write(b, off, len);
    }
}
