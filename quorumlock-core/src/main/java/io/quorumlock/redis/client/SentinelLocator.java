package io.quorumlock.redis.client;

import io.quorumlock.internal.Ticker;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master that Redis Sentinel names, as the Sentinel client protocol has it: the sentinels are
 * asked in turn ({@code SENTINEL get-master-addr-by-name}) until one answers, the one that answered
 * is asked first next time, and they are asked again every {@link #REFRESH_NANOS} in the background
 * and at once when a connection to the master fails or finds a replica. A connection opened to an
 * earlier master is dropped before its next request once the sentinels name another ({@link
 * #moved}); the connection's own set-up asks the node its {@code ROLE} and refuses a replica.
 *
 * <p>What a sentinel sends is untrusted: its replies are read within the reader's bounds and the
 * connect timeout, and anything but a host and a port is that sentinel's error, after which the
 * next one is asked. When no sentinel answers, the master named last goes on serving: a failover
 * needs a majority of the sentinels.
 */
final class SentinelLocator implements Locator {

    private static final Logger log = LoggerFactory.getLogger(SentinelLocator.class);

    /** How often the sentinels are asked while nothing failed. */
    static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** A recheck asked for sooner than this after the last question waits for it. */
    static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9._:\\-\\[\\]%]{1,255}");

    private final NodeAddress group;
    private final NodeAddress.Sentinels sentinels;
    private final TlsConfig tls;
    private final int timeoutMillis;
    private final Ticker ticker;
    private final BackgroundQuestion<Result> question;

    /** The master named last, or why none is known; null before the first answer. */
    private volatile Result last;
    /** The sentinel that named the master last, host:port. */
    private volatile String namedBy;
    /** How many replicas of the master that sentinel counted as up and linked to it. */
    /** -1 until the sentinels were first asked. */
    private volatile int replicasUp = -1;

    /** The sentinel that answered last: asked first. Used on the asking thread only. */
    private int first;

    /**
     * Starts asking the sentinels of {@code group} on {@code asks}, each within {@code
     * timeoutNanos} (connect, set-up and answer).
     */
    SentinelLocator(NodeAddress group, TlsConfig tls, long timeoutNanos, Ticker ticker, ScheduledExecutorService asks) {
        this.group = group;
        this.sentinels = group.sentinels().orElseThrow();
        this.tls = tls;
        this.timeoutMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeoutNanos / 1_000_000));
        this.ticker = ticker;
        this.question = new BackgroundQuestion<>(asks, ticker, REFRESH_NANOS, RECHECK_NANOS, this::ask, this::answered);
    }

    @Override
    public Result address(long deadlineNanos) {
        Result known = last;
        if (known != null && known.address() != null) {
            return known;
        }
        CompletableFuture<Result> waitFor = question.current();
        if (waitFor == null) {
            // A recent failure stands.
            return known != null ? known : new Result(null, null, "the sentinels were not asked: the lock is closing");
        }
        try {
            return waitFor.get(Math.max(0, deadlineNanos - ticker.nanos()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return new Result(
                    null,
                    null,
                    "no sentinel named the master " + sentinels.master()
                            + " within the connect timeout (still asking)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(
                    null, null, "interrupted while asking the sentinels for the master " + sentinels.master());
        } catch (ExecutionException e) {
            return new Result(null, null, "cannot ask the sentinels: " + e.getCause());
        }
    }

    @Override
    public boolean moved(Result connectedTo) {
        Result known = last;
        return known != null
                && known.address() != null
                && connectedTo != null
                && !known.address().equals(connectedTo.address());
    }

    @Override
    public java.util.Optional<String> describe() {
        Result known = last;
        if (known == null || known.address() == null) {
            return java.util.Optional.of(
                    "no master known: " + (known == null ? "the sentinels not asked yet" : known.failure()));
        }
        return java.util.Optional.of(
                "the master " + known.host() + ":" + known.address().getPort() + ", named by the sentinel " + namedBy
                        + " (of " + sentinels.nodes().size() + ")");
    }

    @Override
    public boolean followsFailovers() {
        return true;
    }

    @Override
    public void recheck() {
        question.current();
    }

    @Override
    public void close() {
        question.close();
    }

    /** Takes the sentinels' answer, before the question ends. */
    private void answered(Result result, Throwable failure) {
        Result answer = result != null ? result : new Result(null, null, "cannot ask the sentinels: " + failure);
        Result before;
        synchronized (this) {
            before = last;
            if (answer.address() != null || before == null || before.address() == null) {
                last = answer;
            }
        }
        if (answer.address() == null && before != null && before.address() != null) {
            log.debug("{}: {}; the master named last, {}, goes on serving", group, answer.failure(), before.host());
        } else if (before != null
                && before.address() != null
                && !before.address().equals(answer.address())) {
            log.warn(
                    "{}: the sentinels name a new master, {} (was {}): connections to the old one are dropped",
                    group,
                    answer.host() + ":" + answer.address().getPort(),
                    before.host() + ":" + before.address().getPort());
        }
    }

    /** Asks the sentinels in turn, the one that answered last first; on the asking thread. */
    private Result ask() {
        List<InetSocketAddress> nodes = sentinels.nodes();
        List<String> failures = new ArrayList<>(nodes.size());
        int misconfigured = 0;
        for (int i = 0; i < nodes.size(); i++) {
            int index = (first + i) % nodes.size();
            InetSocketAddress sentinel = nodes.get(index);
            String name = sentinel.getHostString() + ":" + sentinel.getPort();
            try {
                Result master = askOne(sentinel);
                first = index;
                namedBy = name;
                return master;
            } catch (SocketTimeoutException e) {
                failures.add(name + ": no answer within " + timeoutMillis + " ms");
            } catch (IOException | RespReader.ProtocolException e) {
                failures.add(name + ": " + answerProblem(e));
                if (e instanceof Wire.Failure failure && failure.kind() == Reply.Kind.MISCONFIGURED) {
                    misconfigured++;
                }
            }
        }
        // Every sentinel refused for a mistake of the configuration (TLS): waiting does not mend it.
        return new Result(
                null,
                null,
                "no sentinel named the master " + sentinels.master() + ": " + String.join("; ", failures),
                misconfigured == nodes.size() ? Reply.Kind.MISCONFIGURED : Reply.Kind.NOT_SENT);
    }

    private String answerProblem(Exception e) {
        String text = NodeErrors.reason(e);
        return group.password().map(p -> text.replace(p, "***")).orElse(text);
    }

    private Result askOne(InetSocketAddress sentinel) throws IOException, RespReader.ProtocolException {
        try (Asking replies = Asking.open(
                sentinel,
                group,
                tls,
                timeoutMillis,
                new String[] {"SENTINEL", "get-master-addr-by-name", sentinels.master()},
                new String[] {"SENTINEL", "replicas", sentinels.master()})) {
            Result master = master(replies.next());
            int up;
            try {
                up = replicasUp(replies.next());
            } catch (IOException | RespReader.ProtocolException e) {
                up = -1; // the master stands; how many replicas are up is not known: ROLE will say
                log.debug("{}: no count of replicas from {}: {}", group, sentinel, answerProblem(e));
            }
            replicasUp = up;
            return master;
        }
    }

    /** The master in a sentinel's answer, or why it is none. */
    private Result master(Reply reply) throws IOException {
        if (reply == Reply.Nil.NIL) {
            throw new IOException("does not monitor a master named " + sentinels.master());
        }
        if (reply instanceof Reply.Error error) {
            throw new IOException("answered " + NodeErrors.shortened(error.message()));
        }
        if (!(reply instanceof Reply.Array array)
                || array.items().size() != 2
                || !(array.items().get(0) instanceof Reply.Bulk host)
                || !(array.items().get(1) instanceof Reply.Bulk port)) {
            throw new IOException("answered " + Reply.shape(reply) + ", not a host and a port: not a sentinel");
        }
        if (!HOST.matcher(host.text()).matches()) {
            throw new IOException("named a master whose host is not a host name or an address");
        }
        int number;
        try {
            number = Integer.parseInt(port.text());
        } catch (NumberFormatException e) {
            number = -1;
        }
        if (number < 1 || number > 65535) {
            throw new IOException("named a master whose port is not between 1 and 65535");
        }
        InetSocketAddress address = new InetSocketAddress(host.text(), number);
        if (address.isUnresolved()) {
            throw new IOException("named a master at an unknown host, " + host.text());
        }
        return new Result(address, host.text(), null);
    }

    /**
     * How many replicas in a {@code SENTINEL replicas} answer are up and linked to the master: not
     * flagged down or disconnected, and {@code master-link-status ok}. -1 for an answer that is no
     * list (a refusal): not known, so that a grant counts them with the master's {@code ROLE}.
     */
    static int replicasUp(Reply reply) {
        if (!(reply instanceof Reply.Array replicas)) {
            return -1;
        }
        int up = 0;
        for (Reply replica : replicas.items()) {
            if (!(replica instanceof Reply.Array fields)) {
                continue;
            }
            String flags = null;
            String link = null;
            for (int i = 0; i + 1 < fields.items().size(); i += 2) {
                if (fields.items().get(i) instanceof Reply.Bulk name
                        && fields.items().get(i + 1) instanceof Reply.Bulk value) {
                    if (name.text().equals("flags")) {
                        flags = value.text();
                    } else if (name.text().equals("master-link-status")) {
                        link = value.text();
                    }
                }
            }
            if (flags != null
                    && !flags.contains("s_down")
                    && !flags.contains("o_down")
                    && !flags.contains("disconnected")
                    && "ok".equals(link)) {
                up++;
            }
        }
        return up;
    }

    @Override
    public int replicasUp() {
        return replicasUp;
    }
}
