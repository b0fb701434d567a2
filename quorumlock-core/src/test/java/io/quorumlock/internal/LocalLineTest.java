package io.quorumlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The queue of waiting threads of one lock: pure logic, no database. */
class LocalLineTest {

    private final LocalLine waiters = new LocalLine();

    @Test
    void aReleaseWakesTheFirstWaiterOfItsResourceOnly() throws Exception {
        LocalLine.Waiter first = waiters.join("r");
        LocalLine.Waiter second = waiters.join("r");
        LocalLine.Waiter other = waiters.join("other");

        waiters.wake("r");
        waiters.wake("r"); // a second release before the first waiter woke is one wake-up

        assertThat(first.await(0)).isTrue();
        assertThat(first.await(0)).isFalse();
        assertThat(second.await(0)).isFalse();
        assertThat(other.await(0)).isFalse();
        assertThat(waiters.waiting("r")).isEqualTo(2);
    }

    @Test
    void aWaiterThatLeavesWithoutUsingItsWakeUpPassesItOn() throws Exception {
        LocalLine.Waiter first = waiters.join("r");
        LocalLine.Waiter second = waiters.join("r");
        LocalLine.Waiter third = waiters.join("r");

        waiters.wake("r");
        first.close(); // gave up (its wait ran out) before it used the wake-up

        assertThat(second.await(0)).isTrue();
        second.granted();
        second.close(); // left with the lock: nothing to pass on
        assertThat(third.await(0)).isFalse();
        assertThat(waiters.waiting("r")).isEqualTo(1);
        third.close();
        assertThat(waiters.isEmpty()).isTrue();
    }

    @Test
    void aWaiterThatUsedItsWakeUpPassesNothingOn() throws Exception {
        LocalLine.Waiter first = waiters.join("r");
        LocalLine.Waiter second = waiters.join("r");

        waiters.wake("r");
        assertThat(first.await(0)).isTrue(); // tried, and found the lock taken by another client
        first.close();

        assertThat(second.await(0)).isFalse();
    }

    @Test
    void wakeAllWakesTheFirstWaiterOfEveryResource() throws Exception {
        LocalLine.Waiter r = waiters.join("r");
        LocalLine.Waiter behindR = waiters.join("r");
        LocalLine.Waiter s = waiters.join("s");

        waiters.wakeAll();

        assertThat(r.await(0)).isTrue();
        assertThat(s.await(0)).isTrue();
        assertThat(behindR.await(0)).isFalse();
    }

    @Test
    void aWakeUpForAResourceNobodyWaitsForIsDropped() throws Exception {
        waiters.wake("r");
        LocalLine.Waiter late = waiters.join("r");
        assertThat(late.await(0)).isFalse();
        late.close();
        late.close(); // idempotent
        assertThat(waiters.isEmpty()).isTrue();
    }
}
