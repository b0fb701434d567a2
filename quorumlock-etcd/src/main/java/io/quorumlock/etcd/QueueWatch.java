package io.quorumlock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * A waiter's view of its lock's queue, kept from etcd's ordered history without a read: the
 * waiter's key was created at {@code createRevision}, when the queue held {@code ahead} keys before
 * it (counted in the same transaction). The deletions under the queue's prefix from the next
 * revision on, each with its previous key (so its create revision), count the keys ahead down;
 * the key that takes the count to zero was the last one ahead, and the lock is the waiter's at
 * that revision, its key still there (no deletion of it came before). Keys created after the
 * waiter's are behind it and do not count. A deletion of the waiter's own key (its lease expired
 * or was revoked) ends the wait; so does anything the watch cannot vouch for (an error, a
 * cancellation, a deletion without its previous key): then the waiter must find out another way.
 */
final class QueueWatch implements Watch.Listener {

    /** The waiter's key is gone: its wait failed. */
    static final class KeyGone extends RuntimeException {
        private static final long serialVersionUID = 1L;

        KeyGone(String message) {
            super(message, null, false, false);
        }
    }

    /** The watch can no longer tell when the keys ahead are gone. */
    static final class Unsure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Unsure(String message, Throwable cause) {
            super(message, cause, false, false);
        }
    }

    private final ByteSequence key;
    private final long createRevision;
    /** Completes with the revision of the grant, or with {@link KeyGone} or {@link Unsure}. */
    private final CompletableFuture<Long> granted = new CompletableFuture<>();
    /** The keys ahead still there. Guarded by this. */
    private long ahead;
    /** Whether etcd created the watch, or it ended. Guarded by this. */
    private boolean created;

    private boolean ended;
    /** The watch, until {@link #end()} cancels it. */
    private Watch.Watcher watcher;
    /** The watch to cancel once etcd has created it (before, jetcd could only leave it to the member). */
    private Watch.Watcher cancelOnCreated;

    QueueWatch(ByteSequence key, long createRevision, long ahead) {
        if (ahead <= 0) {
            throw new IllegalArgumentException("no key ahead: nothing to wait for");
        }
        this.key = key;
        this.createRevision = createRevision;
        this.ahead = ahead;
    }

    /**
     * The watch of the queue: its deletions only, each with its previous key,
     * from the revision after the waiter's key was created, and only while the member has a
     * leader (one cut off from it ends the watch rather than stay silent).
     */
    private WatchOption option() {
        return WatchOption.builder()
                .isPrefix(true)
                .withRevision(createRevision + 1)
                .withNoPut(true)
                .withPrevKV(true)
                .withRequireLeader(true)
                .withCreateNotify(true)
                .build();
    }

    /**
     * Cancels {@code watcher}, this listener's: now if etcd has created it (or it ended), else as
     * soon as etcd says it has. jetcd ends a watch's stream on close only once the stream is open:
     * a watch closed before would still be created on the member, and stay there, sending the
     * queue's deletions to nobody, for as long as the client lives.
     */
    void cancel(Watch.Watcher watcher) {
        synchronized (this) {
            if (!created && !ended) {
                cancelOnCreated = watcher;
                return;
            }
        }
        watcher.close();
    }

    /** The revision at which the lock became the waiter's; or the failure that ended the wait. */
    CompletableFuture<Long> granted() {
        return granted;
    }

    /**
     * Starts the watch of the queue under {@code prefix} with {@code client}: {@link #granted()}
     * completes with its outcome. {@link #end()} cancels it, whatever happened.
     *
     * @return the outcome to come: the revision of the grant, or {@link KeyGone} or {@link Unsure}
     *     (at once if the watch could not be made)
     */
    CompletableFuture<Long> watch(Client client, ByteSequence prefix) {
        try {
            Watch.Watcher started = client.getWatchClient().watch(prefix, option(), this);
            synchronized (this) {
                watcher = started;
            }
        } catch (RuntimeException e) {
            granted.completeExceptionally(new Unsure("could not watch the queue: " + e.getMessage(), e));
        }
        return granted;
    }

    /**
     * Ends the wait: cancels {@link #granted()} if it is still waiting (the end of the watch then
     * changes nothing), and the watch. Once only; later calls do nothing.
     */
    void end() {
        granted.cancel(false);
        Watch.Watcher started;
        synchronized (this) {
            started = watcher;
            watcher = null;
        }
        if (started != null) {
            cancel(started);
        }
    }

    @Override
    public void onNext(WatchResponse response) {
        Watch.Watcher cancel = null;
        synchronized (this) {
            if (response.isCreatedNotify()) {
                created = true;
                cancel = cancelOnCreated;
                cancelOnCreated = null;
            }
            for (WatchEvent event : response.getEvents()) {
                if (granted.isDone()) {
                    break;
                }
                seen(event);
            }
        }
        if (cancel != null) {
            cancel.close();
        }
    }

    private void seen(WatchEvent event) {
        KeyValue kv = event.getKeyValue();
        if (kv.getKey().equals(key)) {
            granted.completeExceptionally(new KeyGone("the lock key " + key.toString(StandardCharsets.UTF_8)
                    + " was deleted at revision " + kv.getModRevision()
                    + " while waiting (the lease expired or was revoked, or the key was deleted)"));
            return;
        }
        if (event.getEventType() != WatchEvent.EventType.DELETE) {
            return; // another key put: behind ours, or an update that moves nobody
        }
        long createdAt = event.getPrevKV().getCreateRevision();
        if (createdAt == 0) {
            granted.completeExceptionally(
                    new Unsure("a deletion at revision " + kv.getModRevision() + " came without its key", null));
        } else if (createdAt < createRevision && --ahead == 0) {
            granted.complete(kv.getModRevision());
        }
    }

    @Override
    public void onError(Throwable failure) {
        ended(new Unsure("the watch failed: " + EtcdCalls.describe(failure), failure));
    }

    @Override
    public void onCompleted() {
        ended(new Unsure("the watch ended", null));
    }

    /** The watch ended (jetcd would resume it after some errors: a cancel stops that too). */
    private void ended(Unsure why) {
        Watch.Watcher cancel;
        synchronized (this) {
            ended = true;
            cancel = cancelOnCreated;
            cancelOnCreated = null;
        }
        granted.completeExceptionally(why);
        if (cancel != null) {
            cancel.close();
        }
    }
}
