package io.quorumlock.etcd;

import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;
import io.quorumlock.QuorumlockException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.Ticker;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requests of one lock to etcd, each bounded by the request timeout, and what their failures
 * mean: a gRPC status or a jetcd error turned into a {@link ServerAnswer} (unreachable, timed out,
 * error), and whether sending the request again may help.
 */
final class EtcdCalls {
    private final Ticker ticker;

    private static final Logger log = LoggerFactory.getLogger(EtcdLock.class);

    /** How long a repeatable request waits for its answer before it is sent again. */
    private static final Duration RESEND_AFTER = Duration.ofSeconds(1);
    /** The pause before a repeatable request that found etcd unreachable is sent again. */
    private static final Duration RESEND_PAUSE = Duration.ofMillis(100);

    private final String cluster;
    private final Duration requestTimeout;

    /** Requests to {@code cluster} (as answers name it), each given up after {@code requestTimeout}. */
    EtcdCalls(String cluster, Duration requestTimeout, Ticker ticker) {
        this.ticker = ticker;
        this.cluster = cluster;
        this.requestTimeout = requestTimeout;
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    /** Sends a request that must not be repeated (a grant) and waits up to the request timeout. */
    <T> T callOnce(Supplier<CompletableFuture<T>> request, String what) {
        return call(request, what, false, ticker.nanos() + requestTimeout.toNanos());
    }

    /**
     * As {@link #callOnce(Supplier, String)}, and gives up at {@code deadline} (the lock's ticker) if
     * that comes first: the end of an acquire's wait.
     */
    <T> T callOnce(Supplier<CompletableFuture<T>> request, String what, long deadline) {
        return call(request, what, false, deadline);
    }

    /**
     * Sends a request that may be repeated (reads, deletes, revokes, renewals), again every second
     * until the request timeout. A write that a dying leader dropped stays unanswered until etcd's
     * own timeout (about 7 s), while the same request sent again reaches the new leader as soon
     * as there is one.
     */
    <T> T call(Supplier<CompletableFuture<T>> request, String what) {
        return call(request, what, true, ticker.nanos() + requestTimeout.toNanos());
    }

    /**
     * As {@link #call(Supplier, String)}, and gives up at {@code deadline} (the lock's ticker) if that
     * comes first: the end of an acquire's wait.
     */
    <T> T call(Supplier<CompletableFuture<T>> request, String what, long deadline) {
        return call(request, what, true, deadline);
    }

    /**
     * Sends a request that may be repeated (a renewal) and waits up to the request timeout, or
     * {@code deadline} if that comes first. It is sent again only when it failed at once (its member
     * unreachable, its connection broken), never for want of an answer: a late answer still counts.
     */
    <T> T callAwaitingLateAnswers(Supplier<CompletableFuture<T>> request, String what, long deadline) {
        return call(request, what, Long.MAX_VALUE, true, deadline);
    }

    private <T> T call(Supplier<CompletableFuture<T>> request, String what, boolean repeatable, long deadline) {
        long perTryNanos = repeatable ? Math.min(requestTimeout.toNanos(), RESEND_AFTER.toNanos()) : Long.MAX_VALUE;
        return call(request, what, perTryNanos, repeatable, deadline);
    }

    private <T> T call(
            Supplier<CompletableFuture<T>> request, String what, long perTryNanos, boolean repeatable, long deadline) {
        long timeoutAt = ticker.nanos() + requestTimeout.toNanos();
        boolean byTheWait = deadline - timeoutAt < 0;
        long end = byTheWait ? deadline : timeoutAt;
        while (true) {
            CompletableFuture<T> sent = request.get();
            try {
                return sent.get(Math.min(perTryNanos, end - ticker.nanos()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                sent.cancel(false);
                if (end - ticker.nanos() <= 0) {
                    throw new RequestFailed(outcome(
                            ServerAnswer.Kind.TIMED_OUT,
                            "no answer to '" + what + "' within "
                                    + (byTheWait ? "the wait" : requestTimeout.toMillis() + " ms")));
                }
                log.debug("no answer to '{}' yet; sending it again", what);
            } catch (ExecutionException | CompletionException | CancellationException e) {
                ServerAnswer failure = failure(e, what);
                long pause = Math.min(RESEND_PAUSE.toNanos(), end - ticker.nanos());
                if (!repeatable || !isTransient(e) || pause <= 0) {
                    throw new RequestFailed(failure);
                }
                log.debug("'{}' failed, sending it again: {}", what, failure);
                pauseNanos(pause, what);
            } catch (InterruptedException e) {
                sent.cancel(false);
                Thread.currentThread().interrupt();
                throw new QuorumlockException("interrupted while waiting for etcd to " + what, e);
            }
        }
    }

    private static void pauseNanos(long nanos, String what) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while waiting for etcd to " + what, e);
        }
    }

    /** An etcd request that failed or timed out, with its outcome. */
    static final class RequestFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient ServerAnswer outcome;

        RequestFailed(ServerAnswer outcome) {
            super(outcome.toString(), null, false, false);
            this.outcome = outcome;
        }
    }

    /** What a failed request {@code what} says of etcd: unreachable, or an error. */
    ServerAnswer failure(Throwable e, String what) {
        Throwable cause = unwrap(e);
        boolean unreachable = grpcCode(cause) == Status.Code.UNAVAILABLE;
        return outcome(
                unreachable ? ServerAnswer.Kind.UNREACHABLE : ServerAnswer.Kind.ERROR,
                "'" + what + "' failed: " + describe(cause));
    }

    /**
     * A failure in words, without the client's class names: the gRPC status (or jetcd's error
     * code) and its description, then the first cause's own words where they add what happened (a
     * refused connection, a certificate not trusted), such as {@code UNAVAILABLE: io exception
     * (Connection refused: /127.0.0.1:2379)}.
     */
    static String describe(Throwable failure) {
        ErrorCode code = errorCode(failure);
        Status status = Status.fromThrowable(failure);
        String said = code != null ? code.name() : status.getCode().name();
        String description = code != null ? failure.getMessage() : status.getDescription();
        if (tlsFailure(failure)) {
            description = "TLS handshake failed";
        } else if (description != null) {
            description = description.lines().findFirst().orElse(""); // not the channel's pipeline that follows
        }
        if (description != null && !description.isBlank() && !description.equals(said)) {
            said += ": " + description;
        }
        if (status.getCode() == Status.Code.UNKNOWN && code == null && failure.getMessage() != null) {
            said = failure.getMessage(); // not from gRPC: its own words
        }
        String root = null;
        for (Throwable cause = failure.getCause();
                cause != null && cause != cause.getCause();
                cause = cause.getCause()) {
            if (cause.getMessage() != null && !cause.getMessage().isBlank()) {
                root = cause.getMessage(); // the innermost says what happened, the outer ones wrap it
            }
        }
        if (root != null && !said.contains(root)) {
            said += " (" + withoutClassNames(root) + ")";
        }
        return withoutClassNames(said);
    }

    /** Whether a failure came from the TLS handshake. */
    private static boolean tlsFailure(Throwable failure) {
        for (Throwable cause = failure; cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            if (cause instanceof javax.net.ssl.SSLException
                    || cause instanceof java.security.cert.CertificateException) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code text} without the Java class names that some messages quote, such as the {@code
     * sun.security.provider.certpath.SunCertPathBuilderException: } inside a TLS failure's.
     */
    private static String withoutClassNames(String text) {
        return text.replaceAll("\\b(?:[a-z][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9_$]*(?:Exception|Error)\\b:?\\s*", "");
    }

    /**
     * Whether a failed request may succeed when sent again: the member was unreachable, or the
     * connection to it broke (a killed member shows as UNKNOWN "channel closed").
     */
    private static boolean isTransient(Throwable e) {
        if (unwrap(e) instanceof CancellationException) {
            return false; // given up on purpose (the lock was closed), not by the network
        }
        if (unwrap(e) instanceof RejectedExecutionException) {
            return false; // the client was closed: it sends nothing any more
        }
        Status.Code code = grpcCode(unwrap(e));
        return code == Status.Code.UNAVAILABLE
                || code == Status.Code.UNKNOWN
                || code == Status.Code.DEADLINE_EXCEEDED
                || code == Status.Code.ABORTED;
    }

    private static Throwable unwrap(Throwable e) {
        Throwable cause = e;
        while ((cause instanceof ExecutionException || cause instanceof CompletionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    private static ErrorCode errorCode(Throwable cause) {
        return cause instanceof EtcdException etcd ? etcd.getErrorCode() : null;
    }

    /** The gRPC status code of a failure, from jetcd's exception or gRPC's own. */
    private static Status.Code grpcCode(Throwable cause) {
        ErrorCode code = errorCode(cause);
        if (code != null) {
            return Status.Code.valueOf(code.name());
        }
        return Status.fromThrowable(cause).getCode();
    }

    /** An answer of the cluster. */
    ServerAnswer outcome(ServerAnswer.Kind vote, String detail) {
        return new ServerAnswer(cluster, vote, detail);
    }
}
