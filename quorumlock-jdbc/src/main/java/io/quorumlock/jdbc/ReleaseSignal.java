package io.quorumlock.jdbc;

/**
 * What tells the waiting threads of a {@link JdbcLock} of a release by any client: on PostgreSQL
 * the {@link PgListener}, on MariaDB the {@link MariaDbWaker}. One connection while threads wait.
 */
interface ReleaseSignal {

    /** Whether it can ever tell of releases: false once the connections proved they cannot. */
    boolean usable();

    /**
     * The number under which releases of {@code resource} are heard now, or 0 while they are not:
     * a waiter whose attempt ran under the same number cannot have missed a release since.
     */
    long listening(String resource);

    /** A thread waits for {@code resource}: starts listening for its releases if not yet. */
    void wanted(String resource);

    /** Stops listening; called once the lock is closed. */
    void close();
}
