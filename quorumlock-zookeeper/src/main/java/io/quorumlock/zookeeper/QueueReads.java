package io.quorumlock.zookeeper;

import io.quorumlock.LockHolder;
import io.quorumlock.QuorumlockException;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.Holders;
import io.quorumlock.zookeeper.ZooKeeperCalls.NoAnswer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;

/**
 * The reads of a queue that take no lock: who holds it, and which nodes wait in it. Each waits for
 * a connection up to the connect timeout, reads after a {@code sync} (so that the server this
 * client is connected to has caught up with the leader), and waits for each answer up to the
 * connect timeout and the {@linkplain AcquireLoop#overrun overrun}, whatever the ensemble does.
 */
final class QueueReads {

    private final ZooKeeperLock lock;
    private final CuratorFramework client;
    private final ConnectionWatch connection;
    private final ZooKeeperCalls calls;

    QueueReads(ZooKeeperLock lock, CuratorFramework client, ConnectionWatch connection) {
        this.lock = lock;
        this.client = client;
        this.connection = connection;
        this.calls = new ZooKeeperCalls(lock.ticker());
    }

    /**
     * Who holds the lock on {@code dir} now: the first lock node of its queue, its data as the
     * holder's name and its czxid as the token; waits for a connection up to the connect timeout,
     * and for each answer up to it and the {@linkplain AcquireLoop#overrun overrun}. A holder that goes between the listing and the read of
     * its node is passed over for the next in line.
     *
     * @throws QuorumlockException if the ensemble could not tell in time, or refused
     */
    Optional<LockHolder> holder(String resource, String dir) {
        return holders(resource, dir, LockQueue.LOCK).stream().findFirst();
    }

    /**
     * Who holds in the queue {@code dir} of the shape {@code shape} now, first holder first: as
     * {@link #holder}, for each of the shape's holders. A node that goes between the listing and
     * the read of its data is left out, and the next in line read in its place.
     *
     * @throws QuorumlockException if the ensemble could not tell in time, or refused
     */
    List<LockHolder> holders(String resource, String dir, LockQueue shape) {
        return read(resource, dir, (queue, end) -> {
            List<LockHolder> holders = new ArrayList<>();
            for (String node : shape.order(queue)) {
                if (holders.size() == shape.holders()) {
                    break;
                }
                String path = ZKPaths.makePath(dir, node);
                CuratorEvent read;
                try {
                    read = calls.answer(
                            calls.send(cb -> client.getData().inBackground(cb).forPath(path)), end, "read the holder");
                } catch (KeeperException.NoNodeException gone) {
                    continue; // released between the two reads: the next in line, if any, holds
                }
                String name = Holders.read(read.getData()).orElse("");
                holders.add(new LockHolder(name, OptionalLong.of(read.getStat().getCzxid())));
            }
            return List.copyOf(holders);
        });
    }

    /**
     * The nodes of the shape in the queue {@code dir} now, holding or waiting, in order; read
     * after a {@code sync}, with {@link #holder}'s bounds.
     *
     * @throws QuorumlockException if the ensemble could not tell in time, or refused
     */
    List<String> nodes(String resource, String dir, LockQueue shape) {
        return read(resource, dir, (queue, end) -> shape.order(queue));
    }

    /** What a reading does with the children of the queue. */
    private interface Reading<T> {
        T read(List<String> queue, long end) throws Exception;
    }

    /**
     * Waits for a connection up to the connect timeout, syncs and lists the queue {@code dir}
     * (empty if it is not there), and hands the listing to {@code reading}; each answer is waited
     * for up to the connect timeout and the overrun, and every failure is a {@link
     * QuorumlockException} naming the resource.
     */
    private <T> T read(String resource, String dir, Reading<T> reading) {
        lock.checkOpen();
        long deadline = lock.ticker().nanos() + lock.connectTimeout().toNanos();
        long end = deadline + AcquireLoop.overrun(lock.connectTimeout()).toNanos();
        String failed = "could not tell who holds '" + resource + "' on " + lock.ensemble() + ": ";
        try {
            if (!connection.awaitConnected(deadline)) {
                throw new QuorumlockException(failed + "no connection to the ensemble within the connect timeout");
            }
            calls.answer(calls.send(cb -> client.sync().inBackground(cb).forPath(dir)), end, "sync");
            List<String> queue;
            try {
                queue = calls.answer(
                                calls.send(cb ->
                                        client.getChildren().inBackground(cb).forPath(dir)),
                                end,
                                "list the queue")
                        .getChildren();
            } catch (KeeperException.NoNodeException noQueue) {
                queue = List.of(); // nobody ever queued, or the container was removed once empty
            }
            return reading.read(queue, end);
        } catch (NoAnswer e) {
            throw new QuorumlockException(failed + "no answer to '" + e.getMessage() + "' within the connect timeout");
        } catch (KeeperException e) {
            throw new QuorumlockException(failed + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while reading who holds '" + resource + "'", e);
        } catch (IllegalStateException e) {
            lock.checkOpen();
            throw new QuorumlockException(failed + e.getMessage(), e);
        } catch (QuorumlockException e) {
            throw e;
        } catch (Exception e) {
            throw new QuorumlockException(failed + e, e);
        }
    }
}
