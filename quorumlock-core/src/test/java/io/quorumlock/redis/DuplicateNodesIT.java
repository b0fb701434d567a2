package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.NodeOutcome.Vote;
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
                        .nodeTimeout(TestTime.scaled(Duration.ofMillis(200)))
                        .build()) {
            redlock.tryAcquire("warm", TTL).orElseThrow().release(); // every connection open
            // The alias answers late: the grant is decided by the two servers without its nil,
            // which comes only once the extension has been sent.
            alias.holdReplies(2);
            RedlockLease lease = (RedlockLease) redlock.tryAcquire("twice", TTL).orElseThrow();
            redis.get(1).stop();
            // The extension goes behind the alias's unanswered SET, and the server holds the token:
            // both entries of the one server say yes, and only one of them may count.
            Rounds.Outcome extension = redlock.extend(lease, TTL);
            assertThat(extension.held()).as(extension.outcomes().toString()).isFalse();
            assertThat(extension.votes()).as(extension.outcomes().toString()).isEqualTo(1);
            assertThat(extension.outcomes())
                    .filteredOn(o -> o.vote() == Vote.EXCLUDED)
                    .singleElement()
                    .satisfies(o -> assertThat(o.detail())
                            .contains("the same server as", "(the same run_id): its vote counts once"));
            assertThat(redlock.checkNodes().toString()).contains("same server");
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
