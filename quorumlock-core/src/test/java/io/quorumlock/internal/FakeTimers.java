package io.quorumlock.internal;

import java.util.PriorityQueue;
import java.util.concurrent.RejectedExecutionException;

/**
 * Timers on a {@link FakeTicker}: scheduled tasks run only when the test moves the time with {@link
 * #advance}, in the order they are due, the ticker set to each one's time; rounds run inline, at
 * once; notices run inline too, and are counted.
 */
public final class FakeTimers implements Timers {

    private record Task(long due, long order, Runnable run, boolean[] cancelled) {}

    private final FakeTicker ticker;
    private final PriorityQueue<Task> tasks =
            new PriorityQueue<>((a, b) -> a.due != b.due ? Long.compare(a.due, b.due) : Long.compare(a.order, b.order));
    private long order;
    private boolean closed;
    /** How many notices were handed to {@link #tell}. */
    public int told;

    public FakeTimers(FakeTicker ticker) {
        this.ticker = ticker;
    }

    @Override
    public synchronized Scheduled schedule(Runnable task, long delayNanos) {
        if (closed) {
            throw new RejectedExecutionException("closed");
        }
        boolean[] cancelled = new boolean[1];
        tasks.add(new Task(ticker.nanos() + Math.max(0, delayNanos), order++, task, cancelled));
        return () -> cancelled[0] = true;
    }

    @Override
    public void execute(Runnable round) {
        if (closed) {
            throw new RejectedExecutionException("closed");
        }
        round.run();
    }

    @Override
    public void tell(Runnable notice) {
        told++;
        notice.run();
    }

    @Override
    public synchronized void close() {
        closed = true;
        tasks.clear();
    }

    /** Moves the time on by {@code nanos}, running every task due by then in order. */
    public void advance(long nanos) {
        long target = ticker.nanos() + nanos;
        while (true) {
            Task task;
            synchronized (this) {
                task = tasks.peek();
                if (task == null || task.due - target > 0) {
                    break;
                }
                tasks.poll();
            }
            if (task.due - ticker.nanos() > 0) {
                ticker.advance(task.due - ticker.nanos());
            }
            if (!task.cancelled[0]) {
                task.run.run();
            }
        }
        if (target - ticker.nanos() > 0) {
            ticker.advance(target - ticker.nanos());
        }
    }

    /** How many tasks wait, cancelled ones left out. */
    public synchronized long pending() {
        return tasks.stream().filter(t -> !t.cancelled[0]).count();
    }
}
