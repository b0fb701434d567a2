package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.api.Event;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.watch.WatchResponse;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** How a waiter counts the keys ahead of its own down from the queue's deletions (the real watch: EtcdQueueWatchIT). */
class QueueWatchTest {

    private static final String OURS = "/locks/r/ours";
    /** Our key's create revision. */
    private static final long CREATED = 100;

    @Test
    void theLastDeletionAheadGrantsAtItsRevision() {
        QueueWatch watch = new QueueWatch(key(OURS), CREATED, 2);
        watch.onNext(response(deleted("/locks/r/a", 90, 101)));
        assertThat(watch.granted()).isNotDone();
        watch.onNext(response(deleted("/locks/r/b", 95, 105), deleted(OURS, CREATED, 106)));
        assertThat(watch.granted()).isCompletedWithValue(105L);
    }

    @Test
    void deletionsOfKeysBehindOursDoNotCount() {
        QueueWatch watch = new QueueWatch(key(OURS), CREATED, 1);
        watch.onNext(response(deleted("/locks/r/c", 102, 103), deleted("/locks/r/d", 104, 105)));
        assertThat(watch.granted()).isNotDone();
        watch.onNext(response(deleted("/locks/r/a", 99, 107)));
        assertThat(watch.granted()).isCompletedWithValue(107L);
    }

    @Test
    void theDeletionOfOurKeyEndsTheWait() {
        QueueWatch watch = new QueueWatch(key(OURS), CREATED, 1);
        watch.onNext(response(deleted(OURS, CREATED, 104), deleted("/locks/r/a", 99, 105)));
        assertFailed(watch.granted(), QueueWatch.KeyGone.class, "was deleted at revision 104");
    }

    @Test
    void aDeletionWithoutItsKeyLeavesTheWatchUnsure() {
        QueueWatch watch = new QueueWatch(key(OURS), CREATED, 1);
        Event bare = Event.newBuilder()
                .setType(Event.EventType.DELETE)
                .setKv(KeyValue.newBuilder().setKey(bytes("/locks/r/a")).setModRevision(104))
                .build();
        watch.onNext(response(bare));
        assertFailed(watch.granted(), QueueWatch.Unsure.class, "without its key");
    }

    @Test
    void anErrorOrTheEndOfTheWatchLeavesItUnsure() {
        QueueWatch failed = new QueueWatch(key(OURS), CREATED, 1);
        failed.onError(Status.UNAVAILABLE.withDescription("no leader").asRuntimeException());
        assertFailed(failed.granted(), QueueWatch.Unsure.class, "UNAVAILABLE: no leader");

        QueueWatch ended = new QueueWatch(key(OURS), CREATED, 1);
        ended.onCompleted();
        assertFailed(ended.granted(), QueueWatch.Unsure.class, "the watch ended");
    }

    @Test
    void aWatchCancelledBeforeEtcdCreatedItIsClosedOnceCreated() {
        QueueWatch watch = new QueueWatch(key(OURS), CREATED, 1);
        Closes watcher = new Closes();
        watch.cancel(watcher);
        assertThat(watcher.closed).isZero();
        watch.onNext(new WatchResponse(io.etcd.jetcd.api.WatchResponse.newBuilder()
                .setCreated(true)
                .setWatchId(7)
                .build()));
        assertThat(watcher.closed).isOne();

        QueueWatch created = new QueueWatch(key(OURS), CREATED, 1);
        created.onNext(new WatchResponse(io.etcd.jetcd.api.WatchResponse.newBuilder()
                .setCreated(true)
                .setWatchId(8)
                .build()));
        Closes now = new Closes();
        created.cancel(now);
        assertThat(now.closed).isOne();
    }

    /** A watcher that counts its closes. */
    private static final class Closes implements io.etcd.jetcd.Watch.Watcher {
        int closed;

        @Override
        public void close() {
            closed++;
        }

        @Override
        public boolean isClosed() {
            return closed > 0;
        }

        @Override
        public void requestProgress() {}
    }

    private static void assertFailed(CompletableFuture<Long> granted, Class<?> type, String message) {
        assertThat(granted).isCompletedExceptionally();
        assertThat(granted.handle((revision, failure) -> failure).join())
                .isInstanceOf(type)
                .hasMessageContaining(message);
    }

    private static Event deleted(String key, long createRevision, long revision) {
        return Event.newBuilder()
                .setType(Event.EventType.DELETE)
                .setKv(KeyValue.newBuilder().setKey(bytes(key)).setModRevision(revision))
                .setPrevKv(KeyValue.newBuilder()
                        .setKey(bytes(key))
                        .setCreateRevision(createRevision)
                        .setModRevision(createRevision))
                .build();
    }

    private static WatchResponse response(Event... events) {
        io.etcd.jetcd.api.WatchResponse.Builder response = io.etcd.jetcd.api.WatchResponse.newBuilder();
        for (Event event : events) {
            response.addEvents(event);
        }
        return new WatchResponse(response.build());
    }

    private static ByteSequence key(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    private static ByteString bytes(String text) {
        return ByteString.copyFromUtf8(text);
    }
}
