package io.quorumlock.redis;

/** A monotonic clock in nanoseconds; injected so that time arithmetic can be tested with a fake. */
@FunctionalInterface
interface Ticker {
    Ticker SYSTEM = System::nanoTime;

    long nanos();
}
