package io.quorumlock.testkit;

import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What the kit's database extensions share: one server for a test class (the outermost one, so
 * that nested classes share it), started by the first test that asks for it, skipped with the
 * reason where it cannot run here, closed after all the tests of the class.
 */
abstract class ServerPerClass<S extends AutoCloseable> implements BeforeAllCallback, AfterAllCallback {

    private final BooleanSupplier available;
    private final Supplier<Optional<String>> unavailableReason;
    private final Supplier<S> start;
    private S server;
    private String owner;

    ServerPerClass(BooleanSupplier available, Supplier<Optional<String>> unavailableReason, Supplier<S> start) {
        this.available = available;
        this.unavailableReason = unavailableReason;
        this.start = start;
    }

    /**
     * {@return the running server, started on the first call}
     *
     * @throws org.opentest4j.TestAbortedException if the server cannot run here: the test is
     *     skipped with the reason
     * @throws IllegalStateException if the server does not start
     */
    public synchronized S server() {
        Assumptions.assumeTrue(
                available.getAsBoolean(), () -> unavailableReason.get().orElse(""));
        if (server == null) {
            server = start.get();
        }
        return server;
    }

    /** Remembers the outermost class, so that nested classes share its server. */
    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (owner == null) {
            owner = context.getUniqueId();
        }
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) throws Exception {
        if (!context.getUniqueId().equals(owner)) {
            return;
        }
        owner = null;
        if (server != null) {
            try {
                server.close();
            } finally {
                server = null;
            }
        }
    }
}
