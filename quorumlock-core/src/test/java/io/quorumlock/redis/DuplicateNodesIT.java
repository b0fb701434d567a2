package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One server listed twice gets one vote: by its address at build(), by its run_id at first contact. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DuplicateNodesIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(2);

    private static final Duration TTL = Duration.ofSeconds(10);

    @Test
    void aNameAndAnAddressOfTheSameServerAreRefusedAtBuild() {
        int port = redis.get(0).port();
        assertThatThrownBy(() -> Redlock.builder()
                        .node("redis://localhost:" + port)
                        .node("redis://127.0.0.1:" + port)
                        .node(redis.get(1).uri())
                        .build()
                        .close())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redis://localhost:" + port)
                .hasMessageContaining("redis://127.0.0.1:" + port)
                .hasMessageContaining("the same server");
    }

    @Test
    void anAliasThatAnswersWithTheSameRunIdVotesOnce() {
        try (Forwarder alias = new Forwarder(redis.get(0).port());
                Redlock redlock = Redlock.builder()
                        .node(redis.get(0).uri())
                        .node(alias.uri())
                        .node(redis.get(1).uri())
                        .restartGuard(false)
                        // Long enough for the alias's held replies to come back within the extension
                        // on a loaded machine: a reply later than this counts as a timeout, not a vote.
                        .nodeTimeout(TestTime.scaled(Duration.ofSeconds(1)))
                        .build()) {
            long sets = callsOnNode0("set");
            long scripts = callsOnNode0("evalsha") + callsOnNode0("eval");
            redlock.tryAcquire("warm", TTL).orElseThrow().release(); // every connection open
            // The release returns at a majority, and the hold below counts the client's writes on
            // the alias: every request of the warm-up must have gone through it first. Node 0 gets
            // both SETs, and one delete (the entry whose SET lost never held the key).
            TestTime.await(
                    Duration.ofSeconds(5),
                    () -> callsOnNode0("set") >= sets + 2
                            && callsOnNode0("evalsha") + callsOnNode0("eval") >= scripts + 1,
                    "the warm-up's SETs and delete on node 0");
            // The alias answers late: the grant is decided by the two servers without its nil,
            // which comes only once the extension has been sent.
            alias.holdReplies(2);
            RedlockLease lease = (RedlockLease) redlock.tryAcquire("twice", TTL).orElseThrow();
            redis.get(1).stop();
            // The extension goes behind the alias's unanswered SET, and the server holds the token:
            // both entries of the one server say yes, and only one of them may count.
            Rounds.Outcome extension = redlock.rounds().extend(lease, TTL);
            assertThat(extension.held()).as(extension.answers().toString()).isFalse();
            assertThat(extension.votes()).as(extension.answers().toString()).isEqualTo(1);
            assertThat(extension.answers())
                    .filteredOn(o -> o.kind() == ServerAnswer.Kind.EXCLUDED)
                    .singleElement()
                    .satisfies(o -> assertThat(o.detail())
                            .contains("the same server as", "(the same run_id): its vote counts once"));
            assertThat(redlock.checkNodes().toString()).contains("same server");
        }
    }

    /** How many times node 0 has run {@code command}, as its INFO commandstats counts. */
    private static long callsOnNode0(String command) {
        try (redis.clients.jedis.Jedis jedis = redis.get(0).connect(Duration.ofSeconds(2))) {
            return jedis.info("commandstats")
                    .lines()
                    .filter(line -> line.startsWith("cmdstat_" + command + ":"))
                    .mapToLong(line -> Long.parseLong(line.replaceAll("^[^:]*:calls=([0-9]+),.*", "$1")))
                    .sum();
        }
    }

    @Test
    void distinctServersAreNotDuplicates() {
        try (Redlock redlock = Redlock.builder()
                .nodes(redis.uris())
                .node("redis://localhost:1")
                .restartGuard(false)
                .build()) {
            redlock.tryAcquire("distinct", TTL).orElseThrow().release();
        }
    }
}
