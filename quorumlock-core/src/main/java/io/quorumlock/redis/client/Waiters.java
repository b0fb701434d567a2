package io.quorumlock.redis.client;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The callers waiting on one lane, oldest first, each with what it waits for. A caller's entry is
 * its thread's own, reused from one wait to the next, so that a wait allocates nothing.
 */
final class Waiters {

    private static final ThreadLocal<Waiter> OWN = ThreadLocal.withInitial(Waiter::new);

    /** One waiting caller. */
    static final class Waiter {
        private final Thread thread = Thread.currentThread();
        private BooleanSupplier done;
        private Waiter previous;
        private Waiter next;
        private boolean waiting;
    }

    /** Guarded by this, as are the entries' links. */
    private Waiter first;

    private Waiter last;

    /** Adds the calling thread, which waits until {@code done}; returns its entry, for {@link #remove}. */
    Waiter add(BooleanSupplier done) {
        Waiter me = OWN.get();
        if (me.waiting) {
            me = new Waiter(); // a thread waiting on two lanes at once: not the lock's way, but not refused
        }
        me.done = done;
        me.waiting = true;
        synchronized (this) {
            me.previous = last;
            if (last == null) {
                first = me;
            } else {
                last.next = me;
            }
            last = me;
        }
        return me;
    }

    synchronized void remove(Waiter me) {
        if (me.previous == null) {
            first = me.next;
        } else {
            me.previous.next = me.next;
        }
        if (me.next == null) {
            last = me.previous;
        } else {
            me.next.previous = me.previous;
        }
        me.previous = null;
        me.next = null;
        me.done = null;
        me.waiting = false;
    }

    /** Wakes the waiting callers, but {@code poller} (null for none), whose waits are done. */
    synchronized void wakeDone(Waiter poller) {
        for (Waiter waiter = first; waiter != null; waiter = waiter.next) {
            if (waiter != poller && waiter.done.getAsBoolean()) {
                LockSupport.unpark(waiter.thread);
            }
        }
    }

    /** Wakes the caller waiting longest, if any. */
    void wakeFirst() {
        Thread next;
        synchronized (this) {
            next = first == null ? null : first.thread;
        }
        if (next != null) {
            LockSupport.unpark(next);
        }
    }
}
