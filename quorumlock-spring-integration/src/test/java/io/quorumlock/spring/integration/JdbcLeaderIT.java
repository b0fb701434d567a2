package io.quorumlock.spring.integration;

import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.testkit.PostgresServerExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link LeaderHandOff} on the fenced {@code JdbcLock}, on a real PostgreSQL server. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class JdbcLeaderIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @Test
    void oneLeaderOfTwoContextsAndTheOtherTakesOverWhenItsContextCloses() {
        LeaderHandOff.run(() -> {
            JdbcLock lock = JdbcLock.builder()
                    .url(postgres.jdbcUrl())
                    .user(postgres.user())
                    .table("leader_locks")
                    .build();
            lock.createTable();
            return lock;
        });
    }
}
