package io.quorumlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.RetryPolicy;
import java.time.Duration;
import java.util.OptionalInt;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/** Each check returns a usable value and refuses the others naming the setting, its value and the remedy. */
class SettingsTest {

    private static IllegalSettingException refusal(ThrowingCallable check) {
        IllegalSettingException e = catchThrowableOfType(IllegalSettingException.class, check);
        assertThat(e).as("refused").isNotNull();
        return e;
    }

    @Test
    void aRefusalNamesTheSettingAndWhetherAnEntry() {
        IllegalSettingException whole = new IllegalSettingException("nodeTimeout", "m");
        assertThat(whole.setting()).isEqualTo("nodeTimeout");
        assertThat(whole.index()).isEmpty();
        assertThat(whole).isInstanceOf(IllegalArgumentException.class).hasMessage("m");
        assertThat(new IllegalSettingException("nodes", 1, "m").index()).isEqualTo(OptionalInt.of(1));
        assertThat(new IllegalSettingException("nodes", -1, "m", null).index()).isEmpty();
    }

    @Test
    void durations() {
        Duration second = Duration.ofSeconds(1);
        assertThat(Settings.positive("requestTimeout", second)).isSameAs(second);
        assertThat(refusal(() -> Settings.positive("requestTimeout", Duration.ZERO, " (the default is 5 s)")))
                .hasMessage("requestTimeout must be positive, was 0 ms (the default is 5 s)")
                .extracting(IllegalSettingException::setting)
                .isEqualTo("requestTimeout");
        assertThat(refusal(() -> Settings.positive("nodeTimeout", null)))
                .hasMessage("nodeTimeout must be positive, was null");
        assertThat(refusal(() -> Settings.positive("x", Duration.ofMillis(-5))))
                .hasMessage("x must be positive, was -5 ms");

        assertThat(Settings.notNegative("maxWait", Duration.ZERO)).isZero();
        assertThat(refusal(() -> Settings.notNegative("maxWait", Duration.ofMillis(-1))))
                .hasMessage("maxWait must not be negative, was -1 ms");

        assertThat(Settings.atMost("sessionTimeout", second, second)).isSameAs(second);
        assertThat(refusal(() -> Settings.atMost("sessionTimeout", Duration.ofMillis(1001), second)))
                .hasMessage("sessionTimeout must be at most 1000 ms, was 1001 ms");
    }

    @Test
    void numbersTextsAndObjects() {
        assertThat(Settings.atLeast("maxConnectionsPerNode", 1, 1)).isEqualTo(1);
        assertThat(refusal(() -> Settings.atLeast("maxConnectionsPerNode", 0, 1)))
                .hasMessage("maxConnectionsPerNode must be at least 1, was 0");
        assertThat(Settings.notEmpty("keyPrefix", " ", "give one")).isEqualTo(" ");
        assertThat(refusal(() -> Settings.notEmpty("keyPrefix", "", "give one")))
                .hasMessage("keyPrefix must not be empty: give one");
        assertThat(refusal(() -> Settings.notEmpty("keyPrefix", null, "give one")))
                .hasMessage("keyPrefix must not be empty: give one");
        assertThat(refusal(() -> Settings.retry(null)))
                .hasMessage("retry must not be null: use RetryPolicy.DEFAULT or RetryPolicy.jitteredBackoff");
        assertThat(Settings.retry(RetryPolicy.DEFAULT)).isSameAs(RetryPolicy.DEFAULT);
        assertThat(refusal(() -> Settings.listener(null)).setting()).isEqualTo("listener");
    }

    @Test
    void requireArgumentFormatsInTheRootLocale() {
        Settings.requireArgument(true, "x", "never %s", "formatted");
        assertThat(refusal(() -> Settings.requireArgument(false, "clockDriftFactor", "was %s, %d ms", 0.7, 1234567L)))
                .hasMessage("was 0.7, 1234567 ms")
                .extracting(IllegalSettingException::setting)
                .isEqualTo("clockDriftFactor");
    }

    @Test
    void aParserRefusalBecomesTheEntrysWithItsMessageAndCause() {
        IllegalArgumentException parser = new IllegalArgumentException("invalid node URI 'x'");
        IllegalSettingException e = refusal(() -> Settings.parse("nodes", 2, () -> {
            throw parser;
        }));
        assertThat(e).hasMessage("invalid node URI 'x'").hasCause(parser);
        assertThat(e.setting()).isEqualTo("nodes");
        assertThat(e.index()).isEqualTo(OptionalInt.of(2));
        IllegalSettingException named = new IllegalSettingException("tlsCaBundle", "m");
        assertThat(refusal(() -> Settings.parse("nodes", 0, () -> {
                    throw named;
                })))
                .isSameAs(named);
        assertThat(Settings.parse("nodes", 0, () -> "parsed")).isEqualTo("parsed");
    }

    @Test
    void theArgumentsOfACall() {
        assertThat(refusal(() -> Settings.resource("", "stock:sku-42")))
                .hasMessage("resource must not be empty: name the thing to lock, e.g. \"stock:sku-42\"");
        assertThat(refusal(() -> Settings.resource(null, "a")).setting()).isEqualTo("resource");
        assertThat(Settings.resource(" ", "a")).isEqualTo(" ");
        assertThat(refusal(() -> Settings.ttl(Duration.ZERO, " (only checked)")))
                .hasMessage("ttl must be positive, was 0 ms (only checked)");
        assertThatNullPointerException()
                .isThrownBy(() -> Settings.ttl(null, ""))
                .withMessage("ttl");
        assertThat(refusal(() -> Settings.maxWait(Duration.ofMillis(-2))))
                .hasMessage("maxWait must not be negative, was -2 ms");
        assertThatNullPointerException()
                .isThrownBy(() -> Settings.maxWait(null))
                .withMessage("maxWait");
    }
}
