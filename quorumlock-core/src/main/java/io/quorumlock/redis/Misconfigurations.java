package io.quorumlock.redis;

import io.quorumlock.ServerAnswer;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs each node's configuration error once, when it is first seen (also in a reply that comes
 * after its round was decided), and again only when it changes: not on every retry.
 */
final class Misconfigurations {

    private static final Logger log = LoggerFactory.getLogger(Redlock.class);

    private final AtomicReferenceArray<String> logged;
    private final java.util.concurrent.atomic.AtomicInteger warnings = new java.util.concurrent.atomic.AtomicInteger();

    Misconfigurations(int nodes) {
        this.logged = new AtomicReferenceArray<>(nodes);
    }

    /** Records that {@code node} refused with {@code outcome}, and logs it unless it was the last one logged. */
    void seen(int node, ServerAnswer outcome) {
        if (!outcome.detail().equals(logged.getAndSet(node, outcome.detail()))) {
            warnings.incrementAndGet();
            log.warn("node {} refused with a configuration error: {}", outcome.server(), outcome.detail());
        }
    }

    /** How many warnings were logged so far. */
    int warnings() {
        return warnings.get();
    }
}
