/**
 * Real {@code redis-server} processes for tests, with the faults a distributed lock must survive.
 *
 * <p>{@link io.quorumlock.testkit.RedisServer} runs one node on a free loopback port in its own
 * temporary directory and can kill it, freeze it, restart it with or without persistence and shift
 * its wall clock. {@link io.quorumlock.testkit.RedisServers} runs several independent nodes, and
 * {@link io.quorumlock.testkit.RedisServersExtension} ties them to a JUnit 5 test class. {@link
 * io.quorumlock.testkit.TestTime} scales every time bound for slow machines.
 *
 * <p>Environment:
 *
 * <ul>
 *   <li>{@code QUORUMLOCK_REDIS_SERVER}: the {@code redis-server} binary to run. Without it, the
 *       one on the {@code PATH} is used, else (Linux x86-64 only) the one shipped in the {@code
 *       embedded-redis} artifact.
 *   <li>{@code QUORUMLOCK_CACHE}: where the extracted binary and the clock-shift library are kept;
 *       {@code ~/.cache/quorumlock} by default.
 *   <li>System property {@code quorumlock.test.timeScale}: multiplies every time bound.
 * </ul>
 */
package io.quorumlock.testkit;
