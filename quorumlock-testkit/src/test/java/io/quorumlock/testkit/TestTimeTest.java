package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TestTimeTest {

    private String saved;

    @BeforeEach
    void save() {
        saved = System.getProperty(TestTime.TIME_SCALE_PROPERTY);
    }

    @AfterEach
    void restore() {
        if (saved == null) {
            System.clearProperty(TestTime.TIME_SCALE_PROPERTY);
        } else {
            System.setProperty(TestTime.TIME_SCALE_PROPERTY, saved);
        }
    }

    @Test
    void scaleDefaultsToOne() {
        System.clearProperty(TestTime.TIME_SCALE_PROPERTY);
        assertThat(TestTime.scale()).isEqualTo(1.0);
        assertThat(TestTime.scaled(Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void scaledMultipliesByTheProperty() {
        System.setProperty(TestTime.TIME_SCALE_PROPERTY, "2.5");
        assertThat(TestTime.scaled(Duration.ofMillis(100))).isEqualTo(Duration.ofMillis(250));
    }

    @Test
    void rejectsAScaleThatIsNotPositive() {
        System.setProperty(TestTime.TIME_SCALE_PROPERTY, "0");
        assertThatThrownBy(TestTime::scale)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("quorumlock.test.timeScale");
        System.setProperty(TestTime.TIME_SCALE_PROPERTY, "fast");
        assertThatThrownBy(TestTime::scale).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void awaitReturnsOnceTheConditionHolds() {
        AtomicInteger polls = new AtomicInteger();
        TestTime.await(Duration.ofSeconds(5), () -> polls.incrementAndGet() == 3, "the third poll");
        assertThat(polls).hasValue(3);
    }

    @Test
    void awaitFailsWithWhatItWaitedFor() {
        assertThatThrownBy(() -> TestTime.await(Duration.ofMillis(20), () -> false, "the impossible"))
                .isInstanceOf(AssertionError.class)
                .hasMessage("Timed out after 20 ms waiting for the impossible");
    }
}
