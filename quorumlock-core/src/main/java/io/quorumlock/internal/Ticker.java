package io.quorumlock.internal;

/** A monotonic clock in nanoseconds; injected so that time arithmetic can be tested with a fake. */
@FunctionalInterface
public interface Ticker {
    Ticker SYSTEM = System::nanoTime;

    long nanos();
}
