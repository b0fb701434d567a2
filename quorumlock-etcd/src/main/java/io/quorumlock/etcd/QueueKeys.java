package io.quorumlock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;

/** The keys of a lock's queue in etcd, named as etcd's own lock names them, and the reads of the queue. */
final class QueueKeys {

    private QueueKeys() {}

    /** The lock key of lease {@code leaseId} under lock {@code name}. */
    static ByteSequence lockKey(ByteSequence name, long leaseId) {
        return ByteSequence.from(
                name.toString(StandardCharsets.UTF_8) + "/" + Long.toHexString(leaseId), StandardCharsets.UTF_8);
    }

    /** The prefix of every key of lock {@code name}'s queue. */
    static ByteSequence prefix(ByteSequence name) {
        return ByteSequence.from(name.toString(StandardCharsets.UTF_8) + "/", StandardCharsets.UTF_8);
    }

    /** How many keys the queue under a prefix holds, without reading them. */
    static GetOption count() {
        return GetOption.builder().isPrefix(true).withCountOnly(true).build();
    }

    /** The first key of the queue under a prefix, by create revision: the holder's. */
    static GetOption first() {
        return GetOption.builder()
                .isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.ASCEND)
                .withLimit(1)
                .build();
    }
}
