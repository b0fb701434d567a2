package io.quorumlock.redis;

import io.quorumlock.NodeOutcome;
import io.quorumlock.NodeOutcome.Vote;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * Sends requests to one node without blocking the caller: a small pool of worker threads of its
 * own (one connection each), so that a frozen node can hold up only its own workers. A request
 * that waited in the queue past the node timeout is not sent at all. With {@code inline} the
 * request runs on the caller's thread, which is all a single-node lock needs.
 */
final class NodeChannel implements AutoCloseable {

    private static final int MAX_QUEUED = 4096;

    private final RedisNode node;
    private final String name;
    private final long timeoutNanos;
    private final ThreadPoolExecutor workers;

    NodeChannel(RedisNode node, String name, long timeoutNanos, int maxWorkers, boolean inline) {
        this.node = node;
        this.name = name;
        this.timeoutNanos = timeoutNanos;
        this.workers = inline ? null : newWorkers(name, maxWorkers);
    }

    String name() {
        return name;
    }

    RedisNode node() {
        return node;
    }

    /** Runs {@code request} on the node within the node timeout; the future never fails. */
    CompletableFuture<NodeOutcome> send(Predicate<RedisNode> request) {
        long deadline = System.nanoTime() + timeoutNanos;
        if (workers == null) {
            return CompletableFuture.completedFuture(run(request, deadline));
        }
        CompletableFuture<NodeOutcome> reply = new CompletableFuture<>();
        try {
            workers.execute(() -> reply.complete(run(request, deadline)));
        } catch (RejectedExecutionException e) {
            reply.complete(outcome(Vote.UNREACHABLE, "not sent: too many requests queued for this node"));
        }
        return reply;
    }

    private NodeOutcome run(Predicate<RedisNode> request, long deadline) {
        if (System.nanoTime() - deadline > 0) {
            return outcome(Vote.UNREACHABLE, "not sent: queued longer than the node timeout");
        }
        try {
            return outcome(request.test(node) ? Vote.YES : Vote.HELD_BY_OTHER, "");
        } catch (RedisNode.NodeFailure e) {
            return outcome(e.vote(), e.getMessage());
        } catch (RuntimeException e) {
            return outcome(Vote.ERROR, e.toString());
        }
    }

    NodeOutcome outcome(Vote vote, String detail) {
        return new NodeOutcome(name, vote, detail);
    }

    /** Stops taking requests, lets queued ones finish (each bounded by the node timeout), closes the node. */
    @Override
    public void close() {
        if (workers != null) {
            workers.shutdown();
            try {
                workers.awaitTermination(2 * timeoutNanos + TimeUnit.MILLISECONDS.toNanos(100), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            workers.shutdownNow();
        }
        node.close();
    }

    private static ThreadPoolExecutor newWorkers(String name, int maxWorkers) {
        AtomicInteger count = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                maxWorkers, maxWorkers, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(MAX_QUEUED), task -> {
                    Thread t = new Thread(
                            task, "quorumlock-" + name.substring("redis://".length()) + "-" + count.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }
}
