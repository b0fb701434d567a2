package io.quorumlock.internal;

import java.util.concurrent.atomic.AtomicLong;

/** A monotonic clock that moves only when told to. */
public final class FakeTicker implements Ticker {
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

    @Override
    public long nanos() {
        return nanos.get();
    }

    public void advance(long delta) {
        nanos.addAndGet(delta);
    }
}
