package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The order of the lock nodes, without a server. */
class LockQueueTest {

    private static final String A = "_c_0b1e2f0a-0000-4000-8000-000000000001-lock-0000000007";
    private static final String B = "_c_ffffffff-0000-4000-8000-000000000002-lock-0000000003";
    private static final String C = "_c_00000000-0000-4000-8000-000000000003-lock-0000000012";

    @Test
    void sequenceIsTheSuffixAfterTheLockPrefix() {
        assertThat(LockQueue.LOCK.sequence(A)).isEqualTo(7);
        assertThat(LockQueue.LOCK.sequence("lock-0000000000")).isZero();
        assertThat(LockQueue.LOCK.sequence("lock-")).isEqualTo(-1);
        assertThat(LockQueue.LOCK.sequence("lock-00x1")).isEqualTo(-1);
        assertThat(LockQueue.LOCK.sequence("lease-0000000001")).isEqualTo(-1);
        assertThat(LockQueue.LOCK.sequence("lock--2147483648"))
                .as("an overflowed counter")
                .isEqualTo(-1);
    }

    @Test
    void orderedBySequenceNotByNameAndForeignChildrenIgnored() {
        assertThat(LockQueue.LOCK.order(List.of(C, A, "not-a-lock-node", B))).containsExactly(B, A, C);
    }

    @Test
    void theLowestHoldsAndEveryOtherWaitsForItsPredecessor() {
        List<String> children = List.of(A, C, B);
        LockQueue.Place holder = LockQueue.LOCK.place(children, B);
        assertThat(holder.present()).isTrue();
        assertThat(holder.first()).isTrue();
        assertThatThrownBy(holder::predecessor).isInstanceOf(IllegalStateException.class);

        LockQueue.Place last = LockQueue.LOCK.place(children, C);
        assertThat(last.first()).isFalse();
        assertThat(last.holder()).isEqualTo(B);
        assertThat(last.predecessor()).as("not the holder: no herd").isEqualTo(A);
    }

    @Test
    void aMissingNodeIsNotPresent() {
        LockQueue.Place gone = LockQueue.LOCK.place(List.of(A, C), B);
        assertThat(gone.present()).isFalse();
        assertThat(gone.first()).isFalse();
        assertThat(LockQueue.LOCK.place(List.of(), B).holder()).isNull();
    }
}
