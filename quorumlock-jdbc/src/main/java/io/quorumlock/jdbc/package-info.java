/**
 * Correctness on the application's own database. {@link io.quorumlock.jdbc.JdbcLock} is a fenced
 * lock kept in a table, whose expiry the database's clock decides and whose fencing tokens come
 * from a sequence; {@link io.quorumlock.jdbc.JdbcFence} records, in the caller's transaction, the
 * fencing token of the {@link io.quorumlock.FencedLease} under which a write is made, and refuses
 * an older token with {@link io.quorumlock.jdbc.StaleTokenException}. Tested on PostgreSQL, MariaDB
 * and H2.
 */
package io.quorumlock.jdbc;
