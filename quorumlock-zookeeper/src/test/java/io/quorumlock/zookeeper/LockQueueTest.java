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

    private static final String R1 = "_c_1-__READ__0000000001";
    private static final String W2 = "_c_2-__WRIT__0000000002";
    private static final String R3 = "_c_3-__READ__0000000003";
    private static final String W4 = "_c_4-__WRIT__0000000004";

    @Test
    void aReaderHoldsWhenNoWriterIsAheadAndWaitsForTheNearestWriterAhead() {
        List<String> children = List.of(W4, R3, R1, W2);
        assertThat(LockQueue.READER.place(children, R1).first()).isTrue();
        LockQueue.Place behind = LockQueue.READER.place(children, R3);
        assertThat(behind.first()).as("a writer is ahead").isFalse();
        assertThat(behind.predecessor()).as("the nearest writer ahead").isEqualTo(W2);
        assertThat(LockQueue.READER.place(List.of(R1, R3), R3).first())
                .as("readers share")
                .isTrue();
    }

    @Test
    void aWriterHoldsOnlyFirstOfAllAndWaitsForTheNodeJustAhead() {
        List<String> children = List.of(W4, R3, R1, W2);
        assertThat(LockQueue.WRITER.place(children, W2).predecessor()).isEqualTo(R1);
        assertThat(LockQueue.WRITER.place(children, W4).predecessor()).isEqualTo(R3);
        assertThat(LockQueue.WRITER.place(List.of(W2, R3), W2).first()).isTrue();
    }

    @Test
    void aReaderBesideAWriterTakesItsSequenceAndStandsAheadOfThoseBehind() {
        LockQueue beside = LockQueue.READER.beside(W2);
        assertThat(beside.nodeName()).isEqualTo("__READ__0000000002");
        String stepDown = "_c_5-__READ__0000000002";
        assertThat(beside.place(List.of(W2, stepDown, W4), stepDown).first())
                .as("its own writer does not count against it")
                .isTrue();
        assertThat(LockQueue.WRITER.place(List.of(stepDown, W4), W4).predecessor())
                .as("the writer behind waits for it")
                .isEqualTo(stepDown);
        assertThat(LockQueue.READER.nodeName()).isEqualTo("__READ__");
    }

    @Test
    void aLeaseHoldsAmongTheFirstNAndCountsOnlyLeaseNodes() {
        LockQueue leases = LockQueue.leases(2);
        List<String> children = List.of("_c_1-lease-0000000001", "_c_2-lease-0000000002", "_c_3-lease-0000000003", A);
        assertThat(leases.place(children, "_c_2-lease-0000000002").first()).isTrue();
        LockQueue.Place third = leases.place(children, "_c_3-lease-0000000003");
        assertThat(third.first()).isFalse();
        assertThat(third.queue()).as("a lock node is not a lease").hasSize(3);
    }
}
