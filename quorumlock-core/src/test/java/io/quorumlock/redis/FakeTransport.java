package io.quorumlock.redis;

import io.quorumlock.internal.Ticker;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.NodeStart;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.Transport;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * A transport over in-memory nodes: each node answers on a thread of its own, in the order the
 * requests were sent, as one pipelined connection does; a frozen node holds up only its own.
 */
final class FakeTransport implements Transport, Transport.Lane {

    private final List<FakeNode> nodes;
    private final List<String> names;
    private final ExecutorService[] workers;
    /**
     * Per node, guarded by {@link #replies}: whether it is answering a request now (its latency
     * passing on a fake clock, which jumps at once: the caller waiting on the fake clock must not
     * read that jump as the node's silence, as a scheduler's delay of the answering thread under
     * load would make it).
     */
    private final boolean[] answering;
    /**
     * Per node, guarded by {@link #replies}: requests sent whose worker has not begun to handle
     * them. The node has not seen them yet: a wait that ends meanwhile would read the scheduler's
     * delay of the worker (a busy machine) as the node's silence.
     */
    private final int[] queued;
    /** How long a wait goes on in real time past its deadline while a node has not seen a request. */
    private static final long SCHEDULER_GRACE_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** Per node: when each request still owed was sent, and when the node last answered. */
    private final ConcurrentLinkedQueue<Long>[] owed;

    private final long[] lastReply;
    private final Object replies = new Object();
    private final Ticker ticker;
    /** Runs on the calling thread before each round borrows its lane: a test's hook into a round. */
    volatile Runnable beforeBorrow = () -> {};

    /** Deadlines come on {@code ticker}; the wait for them is real time, as far from now as they are. */
    FakeTransport(List<FakeNode> nodes, List<String> names, Ticker ticker) {
        this.nodes = nodes;
        this.names = names;
        this.ticker = ticker;
        this.workers = new ExecutorService[nodes.size()];
        @SuppressWarnings("unchecked")
        ConcurrentLinkedQueue<Long>[] queues = new ConcurrentLinkedQueue[nodes.size()];
        this.owed = queues;
        this.lastReply = new long[nodes.size()];
        this.answering = new boolean[nodes.size()];
        this.queued = new int[nodes.size()];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = Executors.newSingleThreadExecutor();
            owed[i] = new ConcurrentLinkedQueue<>();
            lastReply[i] = Long.MIN_VALUE;
        }
    }

    @Override
    public Lane borrow(String resource, Lane follows) {
        beforeBorrow.run();
        return this;
    }

    @Override
    public void giveBack(Lane lane, String resource) {}

    @Override
    public NodeStart nodeStart(int node) {
        return NodeStart.at(nodes.get(node).startedNanos);
    }

    /** Its nodes answer each request on their own threads: no order to keep across nodes. */
    @Override
    public Sends sends() {
        return () -> {};
    }

    @Override
    public Link link(int node) {
        return new Link() {
            @Override
            public String node() {
                return names.get(node);
            }

            @Override
            public int index() {
                return node;
            }

            @Override
            public void sendBehind(Command command, ReplyHandler handler) {
                send(command, handler);
            }

            @Override
            public boolean connecting() {
                return nodes.get(node).connecting;
            }

            @Override
            public long silentSince() {
                Long oldest = owed[node].peek();
                synchronized (replies) {
                    if (answering[node]) {
                        return ticker.nanos(); // its latency is passing on the fake clock: not silent
                    }
                    return oldest == null ? Long.MAX_VALUE : Math.max(oldest, lastReply[node]);
                }
            }

            @Override
            public void send(Command command, ReplyHandler handler) {
                Link link = this;
                owed[node].add(ticker.nanos());
                synchronized (replies) {
                    queued[node]++;
                }
                workers[node].execute(() -> {
                    synchronized (replies) {
                        queued[node]--;
                    }
                    Reply reply = nodes.get(node).handle(command, () -> {
                        synchronized (replies) {
                            answering[node] = true;
                        }
                    });
                    synchronized (replies) {
                        answering[node] = false;
                        owed[node].poll();
                        lastReply[node] = ticker.nanos();
                    }
                    handler.onReply(command, reply, link);
                    synchronized (replies) {
                        replies.notifyAll();
                    }
                });
            }
        };
    }

    @Override
    public boolean await(BooleanSupplier done, LongSupplier deadlineNanos) throws InterruptedException {
        // The fake ticker may stand still: wait in real time, as far from now as the deadline is.
        long deadline = deadlineNanos.getAsLong();
        long realDeadline = System.nanoTime() + (deadline - ticker.nanos());
        long graceEnd = realDeadline + SCHEDULER_GRACE_NANOS;
        synchronized (replies) {
            while (!done.getAsBoolean()) {
                long left = realDeadline - System.nanoTime();
                if (left <= 0 && unseen() && ticker.nanos() - deadline < 0 && graceEnd - System.nanoTime() > 0) {
                    left = TimeUnit.MILLISECONDS.toNanos(1); // a worker not yet run: no node was silent
                    realDeadline = System.nanoTime() + left;
                }
                if (left <= 0) {
                    long next = deadlineNanos.getAsLong(); // asked again once passed: it may move on
                    if (next <= deadline) {
                        return false;
                    }
                    realDeadline += next - deadline;
                    deadline = next;
                    continue;
                }
                TimeUnit.NANOSECONDS.timedWait(replies, left);
            }
            return true;
        }
    }

    /** Under {@link #replies}: whether some node has a request its worker has not begun. */
    private boolean unseen() {
        for (int count : queued) {
            if (count > 0) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        for (ExecutorService worker : workers) {
            worker.shutdownNow();
        }
    }
}
