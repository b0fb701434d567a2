package io.quorumlock.redis;

import io.quorumlock.internal.FakeTicker;
import io.quorumlock.internal.Ticker;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory node with fault switches, for fast tests of the algorithm. Keys expire by the clock
 * it is given, which must be the clients' clock: the shared fake ticker, or the system clock for
 * tests of the watchdog, whose schedule runs in real time. {@link #freeze()} makes requests block
 * until {@link #thaw()}, after which they are applied and answered late, as a SIGSTOP'd Redis does.
 */
final class FakeNode {

    record Entry(String token, long expiresAt) {}

    /** What a node was asked to do. */
    enum Verb {
        SET_IF_ABSENT,
        DELETE_IF_EQUALS,
        EXTEND_IF_EQUALS,
        GET,
        OTHER
    }

    private final Ticker ticker;
    final Map<String, Entry> keys = new ConcurrentHashMap<>();
    final AtomicInteger calls = new AtomicInteger();
    /** Every request handled, in the order the node handled it. */
    final List<Verb> handled = new CopyOnWriteArrayList<>();

    volatile boolean down;
    volatile long latencyNanos;
    /** Whether its connection counts as being opened (a TLS handshake, say) while it has not answered. */
    volatile boolean connecting;
    /** When the node started, on the fake ticker: a day before it was made, unless {@link #restart()}ed. */
    volatile long startedNanos;

    private volatile CountDownLatch frozen = new CountDownLatch(0);

    FakeNode(Ticker ticker) {
        this.ticker = ticker;
        this.startedNanos = ticker.nanos() - TimeUnit.DAYS.toNanos(1);
    }

    /** A restart without persistence: every key lost, started now. */
    void restart() {
        keys.clear();
        startedNanos = ticker.nanos();
    }

    void freeze() {
        frozen = new CountDownLatch(1);
    }

    void thaw() {
        frozen.countDown();
    }

    Optional<String> tokenOf(String key) {
        Entry e = keys.get(key);
        return e == null || e.expiresAt() <= ticker.nanos() ? Optional.empty() : Optional.of(e.token());
    }

    /** Answers a request as Redis would: a RESP value, or a failure for a down or frozen node. */
    Reply handle(Command request) {
        return handle(request, () -> {});
    }

    /**
     * As {@link #handle(Command)}; {@code answering} runs once the node is not frozen, before its
     * latency passes on the fake clock: from then on the node counts as answering, not silent.
     */
    synchronized Reply handle(Command request, Runnable answering) {
        calls.incrementAndGet();
        Verb verb = verb(request);
        handled.add(verb);
        if (down) {
            return new Reply.Failure(Reply.Kind.NOT_SENT, "could not connect: connection refused");
        }
        try {
            if (!frozen.await(10, TimeUnit.SECONDS)) {
                return new Reply.Failure(Reply.Kind.TIMED_OUT, "frozen");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Reply.Failure(Reply.Kind.BROKEN, "interrupted");
        }
        answering.run();
        if (ticker instanceof FakeTicker fake) {
            fake.advance(latencyNanos);
        } else if (latencyNanos > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(latencyNanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Reply.Failure(Reply.Kind.BROKEN, "interrupted");
            }
        }
        String key = request.key();
        boolean ours = tokenOf(key).filter(t -> t.equals(request.value())).isPresent();
        switch (verb) {
            case SET_IF_ABSENT:
                if (tokenOf(key).isPresent()) {
                    return Reply.Nil.NIL;
                }
                keys.put(key, new Entry(request.value(), expiry(request)));
                return Reply.Simple.OK;
            case DELETE_IF_EQUALS:
                if (ours) {
                    keys.remove(key);
                }
                return ours ? Reply.Int.ONE : Reply.Int.ZERO;
            case EXTEND_IF_EQUALS:
                if (ours) {
                    keys.put(key, new Entry(request.value(), expiry(request)));
                }
                return ours ? Reply.Int.ONE : Reply.Int.ZERO;
            case GET:
                return tokenOf(key).<Reply>map(Reply.Bulk::new).orElse(Reply.Nil.NIL);
            default:
                return new Reply.Error("ERR unknown command");
        }
    }

    private long expiry(Command request) {
        return ticker.nanos() + TimeUnit.MILLISECONDS.toNanos(request.millis());
    }

    private static Verb verb(Command command) {
        return switch (command.kind()) {
            case SET_IF_ABSENT -> Verb.SET_IF_ABSENT;
            case SCRIPT ->
                command.script() == Scripts.DELETE_IF_EQUALS || command.script() == Scripts.RELEASE
                        ? Verb.DELETE_IF_EQUALS // the release's message is not modelled: no subscriptions here
                        : command.script() == Scripts.EXTEND_IF_EQUALS ? Verb.EXTEND_IF_EQUALS : Verb.OTHER;
            case GET -> Verb.GET;
            default -> Verb.OTHER;
        };
    }
}
