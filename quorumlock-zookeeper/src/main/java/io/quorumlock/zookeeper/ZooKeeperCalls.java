package io.quorumlock.zookeeper;

import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.Ticker;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

/**
 * The requests of one lock to the ensemble, and what their failures mean: each request is sent in
 * the background and its answer waited for until an end on the lock's ticker at most, whatever the
 * ensemble does (a silent connection would hold a synchronous call for most of the session timeout
 * and Curator's retries); a refusal comes back as the ensemble's {@link KeeperException}, and
 * {@link #retryable} tells whether another attempt may overcome it.
 */
final class ZooKeeperCalls {

    private final Ticker ticker;

    /** Requests whose ends count on {@code ticker}, the lock's clock. */
    ZooKeeperCalls(Ticker ticker) {
        this.ticker = ticker;
    }

    /** Sends a request in the background; the future completes with Curator's answer. */
    CompletableFuture<CuratorEvent> send(Request request) throws Exception {
        CompletableFuture<CuratorEvent> answered = new CompletableFuture<>();
        request.send((curator, event) -> answered.complete(event));
        return answered;
    }

    /**
     * Waits for the answer to a request until {@code end} (the lock's ticker).
     *
     * @throws NoAnswer if none came by then
     * @throws KeeperException if the ensemble refused the request
     */
    CuratorEvent answer(CompletableFuture<CuratorEvent> answered, long end, String what)
            throws InterruptedException, KeeperException, NoAnswer {
        CuratorEvent event;
        try {
            event = answered.get(Math.max(0, end - ticker.nanos()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new NoAnswer(what);
        } catch (ExecutionException e) {
            throw new IllegalStateException("the answer to '" + what + "' failed", e.getCause()); // never completed so
        }
        KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
        if (code != KeeperException.Code.OK) {
            throw KeeperException.create(code, event.getPath());
        }
        return event;
    }

    /** A Curator request, sent in the background with the callback given. */
    @FunctionalInterface
    interface Request {
        void send(BackgroundCallback callback) throws Exception;
    }

    /** No answer to a request came by its end. */
    static final class NoAnswer extends Exception {
        private static final long serialVersionUID = 1L;

        NoAnswer(String what) {
            super(what, null, false, false);
        }
    }

    /**
     * Whether another attempt may overcome the ensemble's refusal {@code code}: a lost or timed-out
     * connection, an expired or moved session, a server in read-only mode, or a node that was gone
     * (such as the queue's container, which ZooKeeper deletes once it empties).
     */
    /**
     * What a retryable failure tells of the ensemble: a connection that broke under the request is
     * unreachable, one ZooKeeper gave up waiting for timed out, the others an error.
     */
    static ServerAnswer.Kind kindOf(KeeperException.Code code) {
        return switch (code) {
            case CONNECTIONLOSS -> ServerAnswer.Kind.UNREACHABLE;
            case OPERATIONTIMEOUT -> ServerAnswer.Kind.TIMED_OUT;
            default -> ServerAnswer.Kind.ERROR;
        };
    }

    static boolean retryable(KeeperException.Code code) {
        return switch (code) {
            case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONEXPIRED, SESSIONMOVED, NONODE, NOTREADONLY -> true;
            default -> false;
        };
    }
}
