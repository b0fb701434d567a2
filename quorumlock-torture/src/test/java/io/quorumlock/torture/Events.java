package io.quorumlock.torture;

import io.quorumlock.torture.Event.Kind;
import io.quorumlock.torture.Event.Op;

/** Short factories for hand-made histories: times are wall milliseconds, nanos follow them. */
final class Events {

    private Events() {}

    static Event invoke(String client, Op op, long wall) {
        return Event.of(client, Kind.INVOKE, op, wall * 1_000_000, wall);
    }

    static Event ok(String client, Op op, long wall) {
        return Event.of(client, Kind.OK, op, wall * 1_000_000, wall);
    }

    static Event grant(String client, long wall, long fence) {
        return ok(client, Op.ACQUIRE, wall).withFencingToken(fence).withValidity(1000);
    }

    static Event write(String client, long wall, long read, long written) {
        return invoke(client, Op.WRITE, wall).withWrite(read, written);
    }

    static Event accepted(String client, long wall) {
        return ok(client, Op.WRITE, wall).withAccepted(true);
    }

    static Event rejected(String client, long wall) {
        return Event.of(client, Kind.FAIL, Op.WRITE, wall * 1_000_000, wall).withAccepted(false);
    }

    static Event release(String client, long wall) {
        return invoke(client, Op.RELEASE, wall);
    }

    static Event lost(String client, long wall) {
        return Event.of(client, Kind.INFO, Op.LEASE_LOST, wall * 1_000_000, wall);
    }
}
