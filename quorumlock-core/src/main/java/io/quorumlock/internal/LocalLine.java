package io.quorumlock.internal;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The threads of one lock that wait for a held resource, in the order they came: a release of the
 * resource wakes the first of them only, so that one thread of this process tries at a time and
 * the others keep their turn. A thread that leaves without the lock after being woken passes the
 * wake-up on to the next. Knows no server and no clock.
 */
public final class LocalLine {

    private final Map<String, ArrayDeque<Waiter>> queues = new HashMap<>();
    /**
     * How many releases were heard, by the hash of their resource: a waiter that compares the
     * count from before its attempt with the count after learns of a release that came before it
     * joined its queue, which no wake-up reaches.
     */
    private final AtomicLongArray heard = new AtomicLongArray(256);
    /**
     * How many threads wait, written under this object's lock and read without it by {@link #wake}:
     * a wake-up that comes before a thread has joined finds no one, read 0 or not.
     */
    private volatile int waiting;

    /** Puts the calling thread at the end of {@code resource}'s queue. */
    public synchronized Waiter join(String resource) {
        Waiter waiter = new Waiter(resource);
        waiting++;
        queues.computeIfAbsent(resource, r -> new ArrayDeque<>()).addLast(waiter);
        return waiter;
    }

    /** Wakes the first waiter of {@code resource}, if there is one. */
    public void wake(String resource) {
        heard.incrementAndGet(stripe(resource));
        if (waiting == 0) {
            return; // every release calls this: no lock taken while nobody waits
        }
        wakeFirst(resource);
    }

    private synchronized void wakeFirst(String resource) {
        ArrayDeque<Waiter> queue = queues.get(resource);
        if (queue != null) {
            queue.getFirst().signal();
        }
    }

    /**
     * How many releases of {@code resource} (and of the resources that share its count) were heard
     * so far: a different number later means one was heard in between.
     */
    public long releasesHeard(String resource) {
        return heard.get(stripe(resource));
    }

    private int stripe(String resource) {
        return resource.hashCode() & (heard.length() - 1);
    }

    /** Wakes the first waiter of every resource: a release may have gone unheard. */
    public synchronized void wakeAll() {
        queues.values().forEach(queue -> queue.getFirst().signal());
    }

    /** Wakes every waiter of every resource: the lock is closed, and each waiter's next attempt ends its wait. */
    public synchronized void wakeEvery() {
        queues.values().forEach(queue -> queue.forEach(Waiter::signal));
    }

    /** How many threads wait for {@code resource}. */
    public synchronized int waiting(String resource) {
        ArrayDeque<Waiter> queue = queues.get(resource);
        return queue == null ? 0 : queue.size();
    }

    /** Whether no thread waits. */
    public synchronized boolean isEmpty() {
        return queues.isEmpty();
    }

    private synchronized boolean isFirst(Waiter waiter) {
        ArrayDeque<Waiter> queue = queues.get(waiter.resource);
        return queue != null && queue.getFirst() == waiter;
    }

    private synchronized void leave(Waiter waiter, boolean granted) {
        ArrayDeque<Waiter> queue = queues.get(waiter.resource);
        if (queue == null || !queue.remove(waiter)) {
            return;
        }
        waiting--;
        if (queue.isEmpty()) {
            queues.remove(waiter.resource);
        } else if (!granted && waiter.signal.availablePermits() > 0) {
            queue.getFirst().signal(); // a wake-up it did not use is the next one's
        }
    }

    /** One waiting thread's place in its resource's queue. */
    public final class Waiter implements AutoCloseable {
        private final String resource;
        private final Semaphore signal = new Semaphore(0);
        private boolean granted;
        /** What a wake-up runs, for a waiter that waits with no thread; null if none is to run. */
        private Runnable onWake;

        private Waiter(String resource) {
            this.resource = resource;
        }

        private void signal() {
            if (signal.availablePermits() == 0) {
                signal.release();
            }
            Runnable hook = onWake;
            onWake = null;
            if (hook != null) {
                hook.run();
            }
        }

        /**
         * For a waiter that waits with no thread: runs {@code hook} once when a wake-up comes, at
         * once if one came already, and takes the place of a hook not yet run. The hook runs
         * under this line's lock: it hands its work to an executor and returns.
         */
        public void onWake(Runnable hook) {
            synchronized (LocalLine.this) {
                if (signal.availablePermits() == 0) {
                    onWake = hook;
                    return;
                }
                onWake = null;
            }
            hook.run();
        }

        /**
         * Waits up to {@code nanos} for a wake-up.
         *
         * @return true if woken, false if the time passed
         * @throws InterruptedException if the thread is interrupted while waiting
         */
        public boolean await(long nanos) throws InterruptedException {
            if (signal.tryAcquire(Math.max(0, nanos), TimeUnit.NANOSECONDS)) {
                signal.drainPermits();
                return true;
            }
            return false;
        }

        /**
         * Gives back a wake-up taken with {@link #takeWake} and not used (the wait was given up
         * before its next attempt): {@link #close} passes it on to the next waiter.
         */
        public void giveBackWake() {
            synchronized (LocalLine.this) {
                if (signal.availablePermits() == 0) {
                    signal.release();
                }
            }
        }

        /** Takes a wake-up that came, without waiting: whether one had. */
        public boolean takeWake() {
            return signal.drainPermits() > 0;
        }

        /** Whether this waiter is the first in its resource's queue: its turn to try. */
        public boolean first() {
            return isFirst(this);
        }

        /** The wait ended with the lock: no wake-up is passed on. */
        public void granted() {
            granted = true;
        }

        /** Leaves the queue; a wake-up not used is passed on unless the wait ended with the lock. */
        @Override
        public void close() {
            leave(this, granted);
        }
    }
}
