package io.quorumlock.examples

import io.quorumlock.Lease
import io.quorumlock.redis.Redlock
import io.quorumlock.testkit.RedisServersExtension
import io.quorumlock.testkit.TestTime
import java.time.Duration
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.future.await
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * The asynchronous acquire from Kotlin coroutines, as a Kotlin service awaits it: `acquireAsync(...).await()`
 * suspends the coroutine, not a thread; a cancelled coroutine and a `withTimeoutOrNull` cancel the acquire,
 * which leaves no lease behind, on a real redis-server.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AsyncFromKotlinIT {

    companion object {
        @JvmField
        @RegisterExtension
        val redis: RedisServersExtension = RedisServersExtension.nodes(1)

        val TTL: Duration = Duration.ofSeconds(10)
        val WAIT: Duration = TestTime.scaled(Duration.ofSeconds(30))
    }

    private lateinit var holder: Redlock
    private lateinit var waiter: Redlock

    @BeforeEach
    fun start() {
        holder = Redlock.builder().node(redis.uris()[0]).restartGuard(false).build()
        waiter = Redlock.builder().node(redis.uris()[0]).restartGuard(false).build()
    }

    @AfterEach
    fun stop() {
        waiter.close()
        holder.close()
    }

    @Test
    fun awaitSuspendsUntilTheHolderReleasesAndThenHoldsTheLease() = runBlocking {
        val held = holder.acquire("kotlin:stock", TTL, Duration.ZERO)
        // One thread runs both coroutines: the waiting one suspends in await, so this one goes on.
        val waiting = async { waiter.acquireAsync("kotlin:stock", TTL, WAIT).await() }
        yield()
        assertThat(waiting.isCompleted).`as`("the acquire while the holder holds").isFalse()
        held.release()
        val lease: Lease = waiting.await()
        assertThat(lease.isValid).isTrue()
        assertThat(holder.tryAcquire("kotlin:stock", TTL)).`as`("the resource while the waiter holds").isEmpty
        lease.release()
    }

    @Test
    fun aCancelledCoroutineGivesTheAcquireUpAndLeavesNoLease() = runBlocking {
        val held = holder.acquire("kotlin:report", TTL, Duration.ZERO)
        val future = waiter.acquireAsync("kotlin:report", TTL, WAIT)
        val job = launch { future.await() }
        yield()
        job.cancelAndJoin()
        assertThat(future).`as`("the acquire, cancelled with its coroutine").isCancelled
        held.release()
        awaitFree("kotlin:report")
    }

    @Test
    fun withTimeoutOrNullEndsTheWaitAndLeavesNoLease() = runBlocking {
        val held = holder.acquire("kotlin:export", TTL, Duration.ZERO)
        val lease = withTimeoutOrNull(200) { waiter.acquireAsync("kotlin:export", TTL, WAIT).await() }
        assertThat(lease).`as`("the lease within 200 ms while the holder holds").isNull()
        held.release()
        awaitFree("kotlin:export")
    }

    /** Waits until the holder is granted the resource at once (and releases it): no lease is left on it. */
    private fun awaitFree(resource: String) {
        TestTime.await(
            TestTime.scaled(Duration.ofSeconds(10)),
            { holder.tryAcquire(resource, TTL).map { it.release(); true }.orElse(false) },
            "$resource free of the cancelled acquire",
        )
    }
}
