package io.quorumlock.redis.client;

import io.quorumlock.internal.Ticker;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

/**
 * One node's socket address, resolved off the callers' path. An IP literal needs no lookup. A host
 * name is looked up on the transport's lookup thread, first when the lock is built, then again in
 * the background once the last answer is 30 s old (the old one serving meanwhile); a caller waits
 * for a lookup only while none has answered yet, and at most until its deadline. It also keeps
 * how many replicas the node lists in {@code ROLE}, for the {@code WAIT} of the single-node lock.
 */
final class Resolver implements Locator {

    static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** A failed lookup is not tried again sooner than this: a missing name costs no lookup per round. */
    static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final Pattern IP_LITERAL = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}|.*:.*");

    private final String host;
    private final int port;
    private final Ticker ticker;
    private final ExecutorService lookups;
    private final InetSocketAddress literal;
    private final Lookup lookup;

    /** The system's name service, or a test's. */
    @FunctionalInterface
    interface Lookup {
        InetAddress byName(String host) throws UnknownHostException;
    }

    private Result last;
    private long lastAt;
    private CompletableFuture<Result> inFlight;
    /** The replicas the node's last ROLE listed, on any connection to it; -1 before the first. */
    private volatile int replicas = -1;

    /** {@code lookups} may be null when {@code host} is an IP literal. */
    Resolver(String host, int port, Ticker ticker, ExecutorService lookups) {
        this(host, port, ticker, lookups, InetAddress::getByName);
    }

    Resolver(String host, int port, Ticker ticker, ExecutorService lookups, Lookup lookup) {
        this.lookup = lookup;
        this.host = host;
        this.port = port;
        this.ticker = ticker;
        this.lookups = lookups;
        this.literal = isLiteral(host) ? new InetSocketAddress(host, port) : null;
        if (literal == null) {
            start();
        }
    }

    static boolean isLiteral(String host) {
        return IP_LITERAL.matcher(host).matches();
    }

    /** The address, waiting for a first lookup until {@code deadlineNanos}. */
    @Override
    public Result address(long deadlineNanos) {
        if (literal != null) {
            return new Result(literal, host, null);
        }
        CompletableFuture<Result> waitFor;
        synchronized (this) {
            boolean failed = last != null && last.address() == null;
            if (last != null && inFlight == null && ticker.nanos() - lastAt > (failed ? RETRY_NANOS : REFRESH_NANOS)) {
                start();
            }
            if (last != null && !failed || inFlight == null) {
                return last; // the last answer serves while a refresh runs; a recent failure stands
            }
            waitFor = inFlight;
        }
        try {
            return waitFor.get(Math.max(0, deadlineNanos - ticker.nanos()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return new Result(
                    null, host, "host name " + host + " not resolved within the node timeout (lookup goes on)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(null, host, "interrupted while resolving " + host);
        } catch (ExecutionException e) {
            return new Result(null, host, "cannot resolve " + host + ": " + e.getCause());
        }
    }

    /**
     * Starts a lookup. Its answer is stored before its future completes: a caller that waited for
     * the future and asks again at once finds the answer stored and no lookup in flight.
     */
    private synchronized void start() {
        inFlight = CompletableFuture.supplyAsync(
                () -> {
                    Result result;
                    try {
                        result = lookUp();
                    } catch (RuntimeException | Error e) {
                        result = new Result(null, host, "cannot resolve " + host + ": " + e);
                    }
                    synchronized (this) { // after start() assigned inFlight, which holds this lock
                        last = result;
                        lastAt = ticker.nanos();
                        inFlight = null;
                    }
                    return result;
                },
                lookups);
    }

    private Result lookUp() {
        try {
            return new Result(new InetSocketAddress(lookup.byName(host), port), host, null);
        } catch (UnknownHostException e) {
            return new Result(null, host, "unknown host " + host);
        } catch (RuntimeException e) {
            return new Result(null, host, "cannot resolve " + host + ": " + e.getMessage());
        }
    }

    @Override
    public boolean countsReplicas() {
        return true;
    }

    /** The replicas the node's last {@code ROLE} listed: a master's, connected to it then. */
    @Override
    public int replicasUp() {
        return replicas;
    }

    /**
     * Counts the replicas a {@code ROLE} lists; a {@code WAIT} that fewer acknowledged than asked
     * may mean a replica is gone: the count is not known until the node's next {@code ROLE}, asked
     * before the next request (a grant meanwhile counts them once its write is answered).
     */
    @Override
    public boolean replied(Command command, Reply reply) {
        if (command.kind() == Command.Kind.ROLE) {
            replicas = SetUp.replicas(reply);
        } else if (command.kind() == Command.Kind.WAIT
                && reply instanceof Reply.Int acknowledged
                && acknowledged.value() < Long.parseLong(command.key())) {
            replicas = -1; // not known until the ROLE asked before the next request answers
            return true;
        }
        return false;
    }
}
