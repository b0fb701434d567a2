package io.quorumlock.redis.client;

import java.util.Arrays;

/**
 * The requests one connection owes replies to, oldest first: each one's command and handler, when
 * it was sent, whether it went with its script's text, and, for a set-up command, its step (the
 * command and handler are null then). A ring of parallel arrays, so that a request costs no
 * allocation; it grows as a pipeline deepens. Used under the link's lock only.
 */
final class Owed {

    private Command[] commands = new Command[8];
    private Transport.ReplyHandler[] handlers = new Transport.ReplyHandler[8];
    private long[] sentAt = new long[8];
    private boolean[] withScript = new boolean[8];
    private SetUp[] setUps = new SetUp[8];
    private int head;
    private int size;

    void add(Command command, Transport.ReplyHandler handler, long sentNanos, boolean script, SetUp setUp) {
        if (size == commands.length) {
            grow();
        }
        int at = (head + size) & (commands.length - 1);
        commands[at] = command;
        handlers[at] = handler;
        sentAt[at] = sentNanos;
        withScript[at] = script;
        setUps[at] = setUp;
        size++;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The oldest request's command; null for a set-up step. Only while not empty, as the other getters. */
    Command command() {
        return commands[head];
    }

    Transport.ReplyHandler handler() {
        return handlers[head];
    }

    long sentAt() {
        return sentAt[head];
    }

    boolean withScript() {
        return withScript[head];
    }

    SetUp setUp() {
        return setUps[head];
    }

    /** For a message: {@code ": no reply to <the oldest command>"}, or nothing if none is owed. */
    String firstOwed() {
        if (isEmpty()) {
            return "";
        }
        return ": no reply to "
                + (setUp() != null ? setUp().command() : command().name());
    }

    /** Drops the oldest request. */
    void remove() {
        commands[head] = null;
        handlers[head] = null;
        setUps[head] = null;
        head = (head + 1) & (commands.length - 1);
        size--;
    }

    /** Hands every request over to a new queue and empties this one: for failing them all, which may send anew. */
    Owed drain() {
        Owed all = new Owed();
        while (size > 0) {
            all.add(command(), handler(), sentAt(), withScript(), setUp());
            remove();
        }
        head = 0;
        return all;
    }

    private void grow() {
        int length = commands.length;
        commands = unrolled(commands, new Command[length * 2]);
        handlers = unrolled(handlers, new Transport.ReplyHandler[length * 2]);
        setUps = unrolled(setUps, new SetUp[length * 2]);
        long[] times = new long[length * 2];
        boolean[] scripts = new boolean[length * 2];
        for (int i = 0; i < size; i++) {
            times[i] = sentAt[(head + i) & (length - 1)];
            scripts[i] = withScript[(head + i) & (length - 1)];
        }
        sentAt = times;
        withScript = scripts;
        head = 0;
    }

    private <T> T[] unrolled(T[] from, T[] to) {
        int first = Math.min(size, from.length - head);
        System.arraycopy(from, head, to, 0, first);
        System.arraycopy(from, 0, to, first, size - first);
        Arrays.fill(from, null);
        return to;
    }
}
