package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.Lease;
import io.quorumlock.QuorumlockException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The fence's settings and preconditions; its behaviour on real databases is in {@link JdbcFenceIT}. */
class JdbcFenceTest {

    @Test
    void defaultsAndDdl() {
        JdbcFence fence = JdbcFence.builder().build();
        assertThat(fence.table()).isEqualTo("quorumlock_fence");
        assertThat(fence.maxResourceLength()).isEqualTo(255);
        assertThat(fence.ddl())
                .isEqualTo("CREATE TABLE IF NOT EXISTS quorumlock_fence"
                        + " (resource VARCHAR(255) PRIMARY KEY, token BIGINT NOT NULL)");
        assertThat(fence).hasToString("JdbcFence[quorumlock_fence]");
    }

    @Test
    void tableAndResourceLengthAreConfigurable() {
        JdbcFence fence =
                JdbcFence.builder().table("locks.Fence_2").maxResourceLength(64).build();
        assertThat(fence.ddl())
                .isEqualTo("CREATE TABLE IF NOT EXISTS locks.Fence_2 (resource VARCHAR(64) PRIMARY KEY,"
                        + " token BIGINT NOT NULL)");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "1fence",
                "fence; DROP TABLE accounts",
                "fence--",
                "\"fence\"",
                "a.b.c",
                "fence table",
                ".fence",
                "schema.",
                "f012345678901234567890123456789012345678901234567890123456789012" // 64 characters
            })
    void aTableThatIsNotAnIdentifierIsRefusedByName(String table) {
        JdbcFenceBuilder builder = JdbcFence.builder().table(table);
        assertThatThrownBy(builder::build)
                .isInstanceOfSatisfying(
                        IllegalSettingException.class,
                        e -> assertThat(e.setting()).isEqualTo("table"))
                .hasMessageStartingWith("table must be a SQL identifier")
                .hasMessageContaining("was '" + table + "'");
    }

    @Test
    void resourceLengthOutOfRangeIsRefusedByName() {
        assertThatThrownBy(() -> JdbcFence.builder().maxResourceLength(0).build())
                .isInstanceOfSatisfying(
                        IllegalSettingException.class,
                        e -> assertThat(e.setting()).isEqualTo("maxResourceLength"))
                .hasMessage("maxResourceLength must be from 1 to 10000 characters, was 0");
        assertThatThrownBy(() -> JdbcFence.builder().maxResourceLength(10_001).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("was 10001");
        assertThatThrownBy(() -> JdbcFence.builder().table(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void noMethodTakesAPlainLease() {
        // A TTL lease has no token: only a FencedLease or an explicitly named raw token is accepted.
        assertThat(Arrays.stream(JdbcFence.class.getMethods())
                        .filter(method -> Modifier.isPublic(method.getModifiers()))
                        .map(Method::getParameterTypes)
                        .flatMap(Arrays::stream))
                .doesNotContain(Lease.class);
    }

    @Test
    void refusesAConnectionInAutoCommitModeAndBadResourceNames() throws Exception {
        JdbcFence fence = JdbcFence.builder().maxResourceLength(8).build();
        try (Connection connection = DriverManager.getConnection("jdbc:h2:mem:")) {
            fence.createTable(connection);
            assertThatThrownBy(() -> fence.check(connection, new TestLease("r", 1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("auto-commit mode")
                    .hasMessageContaining("setAutoCommit(false)");

            connection.setAutoCommit(false);
            assertThatThrownBy(() -> fence.checkRawToken(connection, "", 1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("resource must not be empty");
            assertThatThrownBy(() -> fence.checkRawToken(connection, "123456789", 1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("resource must be at most maxResourceLength (8) characters, was 9");
            assertThatThrownBy(() -> fence.check(connection, null)).isInstanceOf(NullPointerException.class);
            assertThat(fence.newestToken(connection, "r")).isEmpty();
        }
    }

    @Test
    void staleTokenExceptionCarriesTheEvidence() {
        StaleTokenException stale = new StaleTokenException("inventory:SKU-42", 33, 34);
        assertThat(stale).isInstanceOf(QuorumlockException.class);
        assertThat(stale.resource()).isEqualTo("inventory:SKU-42");
        assertThat(stale.staleToken()).isEqualTo(33);
        assertThat(stale.newestToken()).isEqualTo(34);
        assertThat(stale)
                .hasMessage("fencing token 33 for 'inventory:SKU-42' is stale: the fence has already seen token 34,"
                        + " so a newer lease holder wrote since this lease was granted; roll back");
    }
}
