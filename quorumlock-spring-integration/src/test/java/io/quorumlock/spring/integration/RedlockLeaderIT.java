package io.quorumlock.spring.integration;

import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServersExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link LeaderHandOff} on Redlock over three real redis-server nodes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedlockLeaderIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    @Test
    void oneLeaderOfTwoContextsAndTheOtherTakesOverWhenItsContextCloses() {
        LeaderHandOff.run(() -> Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false) // nodes started for the test
                .build());
    }
}
