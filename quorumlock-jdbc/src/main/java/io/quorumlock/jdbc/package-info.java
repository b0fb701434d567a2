/**
 * The storage-side fence for JDBC databases: {@link io.quorumlock.jdbc.JdbcFence} records, in the
 * caller's transaction, the fencing token of the {@link io.quorumlock.FencedLease} under which a
 * write is made, and refuses an older token with {@link io.quorumlock.jdbc.StaleTokenException}.
 * Tested on PostgreSQL and H2.
 */
package io.quorumlock.jdbc;
