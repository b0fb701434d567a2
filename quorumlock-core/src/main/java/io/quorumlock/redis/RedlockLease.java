package io.quorumlock.redis;

import io.quorumlock.LeaseLostException;
import io.quorumlock.internal.CoreLease;
import io.quorumlock.internal.KeepAlive;
import io.quorumlock.internal.LeaseCore;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;

/**
 * A lease granted by {@link Redlock}: its token, and each node's answer to the grant. Its rounds and
 * its clock are those of the lock's {@link Rounds}.
 */
final class RedlockLease extends CoreLease implements KeepAlive.Driver {

    /** The rounds of the lock that granted it: its extensions, its release and its events. */
    private final Rounds lock;

    private final String token;
    /** The round that granted it: each node's answer to the grant, which its later rounds follow. */
    private final Round grant;
    /** The id its acquire had in the resource's line of waiters ({@link Scripts#LINE}); 0 if none. */
    private final long waiter;
    /** The TTL of the grant: what its renewals ask for until told otherwise. */
    private final long ttlNanos;
    /**
     * Its rounds one at a time, and its renewals once kept alive: made at its first extension or
     * keep-alive, since most leases are released without either. Set once.
     */
    private volatile KeepAlive keepAlive;

    private static final VarHandle KEEP_ALIVE;

    static {
        try {
            KEEP_ALIVE = MethodHandles.lookup().findVarHandle(RedlockLease.class, "keepAlive", KeepAlive.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    RedlockLease(
            Rounds lock,
            String resource,
            String token,
            Round grant,
            long waiter,
            long ttlNanos,
            long validityNanos,
            long validUntilNanos) {
        super(new LeaseCore(
                resource, lock.ticker(), lock.events(), LeaseCore.State.VALID, validUntilNanos, validityNanos));
        this.lock = lock;
        this.waiter = waiter;
        this.token = token;
        this.grant = grant;
        this.ttlNanos = ttlNanos;
    }

    /** Its lease engine, made at the first call. */
    private KeepAlive keepAlive() {
        KeepAlive made = keepAlive;
        if (made == null) {
            made = new KeepAlive(core, this, lock.timers(), ttlNanos, lock.roundNanos());
            KeepAlive earlier = (KeepAlive) KEEP_ALIVE.compareAndExchange(this, null, made);
            made = earlier != null ? earlier : made;
        }
        return made;
    }

    /**
     * False, with nothing sent, once the lease is lost or its validity ran out: it stays over. Waits
     * for an extension round of this lease under way (its keep-alive's, another thread's) to end.
     * Its PEXPIRE may run on any node, answered in time or not, so the lease ends no later than the
     * round's start plus its TTL less the drift; a round that held sets exactly that end, and the
     * keep-alive, if any, renews to {@code ttl} from then on.
     */
    @Override
    public boolean extend(Duration ttl) {
        lock.checkTtl(ttl);
        checkNotReleased();
        return keepAlive().extend(ttl.toNanos());
    }

    @Override
    public void release() {
        boolean beforeClose = lock.releases.enter(); // if so, close() waits for the deletes to go out
        try {
            LeaseCore.State before = core.release();
            if (before == LeaseCore.State.RELEASED) {
                return;
            }
            // An extension round under way ends before the deletes go out. Without an engine yet,
            // none can be: one made after the release above finds the lease released and sends nothing.
            KeepAlive made = keepAlive;
            if (made != null) {
                made.stop();
                lock.keptAlive.remove(this); // without an engine, never added: keepAlive() removes it if need be
            }
            lock.release(this, beforeClose);
            core.released(before);
        } finally {
            if (beforeClose) {
                lock.releases.exit();
            }
        }
    }

    boolean grantedBy(Rounds other) {
        return lock == other;
    }

    /** Keeps this lease alive, renewing to {@code ttl}, until it is released or lost. */
    void keepAlive(Duration ttl) {
        checkNotReleased();
        lock.keptAlive.add(this);
        KeepAlive engine = keepAlive();
        engine.start(ttl.toNanos());
        if (isReleased()) {
            engine.stop(); // released while it started: release() may not have seen it, nor removed it
            lock.keptAlive.remove(this);
        }
    }

    /** Whether {@link #keepAlive} was called. */
    boolean keptAlive() {
        KeepAlive made = keepAlive;
        return made != null && made.started();
    }

    /** Ends the lease as lost because its lock is closing, telling it on this thread. */
    void loseOnClose() {
        keepAlive().loseOnClose();
    }

    /** One extension round, as the keep-alive runs it. */
    @Override
    public KeepAlive.Result renew(long ttlNanos) {
        Rounds.Outcome outcome = lock.extend(this, Duration.ofNanos(ttlNanos));
        if (outcome.held()) {
            return KeepAlive.Result.RENEWED;
        }
        int nodes = outcome.answers().size();
        return KeepAlive.Result.unknown(
                outcome.votes() >= QuorumMath.quorum(nodes)
                        ? "the extension ended after its validity had run out: " + outcome.answers()
                        : "extension got " + outcome.votes() + " of " + nodes + " votes in time: " + outcome.answers());
    }

    @Override
    public long endAfter(long sentNanos, long ttlNanos) {
        return lock.extensionEndNanos(sentNanos, Duration.ofNanos(ttlNanos));
    }

    @Override
    public LeaseLostException evidence(String why) {
        return new LeaseLostException(core.resource(), why, null);
    }

    @Override
    public void onLost() {
        lock.keptAlive.remove(this);
    }

    /** The end once an extension round under way has ended. */
    long endAfterRounds() {
        KeepAlive made = keepAlive;
        return made != null ? made.endAfterRounds() : core.endNanos();
    }

    long validUntilNanos() {
        return core.endNanos();
    }

    String token() {
        return token;
    }

    Round grant() {
        return grant;
    }

    long waiter() {
        return waiter;
    }

    @Override
    public String toString() {
        return "Lease[" + core.resource() + ", token " + token.substring(0, 8) + "..., remaining "
                + remaining().toMillis() + " ms]";
    }
}
