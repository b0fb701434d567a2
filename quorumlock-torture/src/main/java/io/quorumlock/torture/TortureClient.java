package io.quorumlock.torture;

import io.quorumlock.DistributedLock;
import io.quorumlock.DistributedReadWriteLock;
import io.quorumlock.DistributedSemaphore;
import io.quorumlock.FencedLease;
import io.quorumlock.LeaderElection;
import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.jdbc.JdbcFence;
import io.quorumlock.jdbc.StaleTokenException;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.torture.Event.Kind;
import io.quorumlock.torture.Event.Op;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One torture client: acquire the lock, read-modify-write the shared record (decrement it by
 * one), release; again until told to stop. A leader strategy's client campaigns instead, and
 * read-modify-writes while it leads. Every step goes into the client's history. Commands
 * from the harness arrive on another thread through {@link #command}: {@code pause MILLIS
 * DEADLINE CLAIM} and {@code expire DEADLINE CLAIM} go to every client of a strategy and strike
 * the first one to reach a write (between its read and its write, the worst moment) before the
 * wall-clock deadline: that client claims the fault by creating the file CLAIM, which only one
 * can. {@code stop} ends the loop after the current operation.
 */
final class TortureClient {

    /** What a client needs to know; passed to a client process as its arguments. */
    record Config(
            Strategy strategy, int index, String endpoints, String jdbcUrl, long ttlMillis, long seed, Path history) {

        String id() {
            return "client-" + index;
        }

        String resource() {
            return "torture-" + strategy.option();
        }

        List<String> toArgs() {
            return List.of(
                    strategy.option(),
                    Integer.toString(index),
                    endpoints.isEmpty() ? "-" : endpoints,
                    jdbcUrl,
                    Long.toString(ttlMillis),
                    Long.toString(seed),
                    history.toString());
        }

        static Config parse(String[] args) {
            if (args.length != 7) {
                throw new IllegalArgumentException(
                        "usage: STRATEGY INDEX ENDPOINTS JDBC_URL TTL_MILLIS SEED HISTORY_FILE, got " + List.of(args));
            }
            return new Config(
                    Strategy.byOption(args[0]),
                    Integer.parseInt(args[1]),
                    args[2].equals("-") ? "" : args[2],
                    args[3],
                    Long.parseLong(args[4]),
                    Long.parseLong(args[5]),
                    Path.of(args[6]));
        }
    }

    /** Freezes the client for a while: a real SIGSTOP of its process, or a sleep of its thread. */
    interface Pauser {
        void pause(long millis) throws Exception;
    }

    /** The shortest work between the read and the write; the longest is five times that. */
    static final long WORK_MILLIS = 50;

    /** How many readers a read-write strategy's lock admits at once. */
    private static final int READERS = 2;

    /** How long one acquire may wait for the lock. */
    static final Duration MAX_WAIT = Duration.ofSeconds(1);
    /** How long a client may take to be granted its own lock once before the run, on an idle machine. */
    static final Duration WARM_UP_WITHIN = Duration.ofSeconds(60);

    private final Config config;
    private final History history;
    private final Pauser pauser;
    private final SplittableRandom random;
    private final AtomicReference<FencedLease> held = new AtomicReference<>();
    private volatile boolean stopped;
    /** A fault asked for, to strike at the next write: a pause (with its length) or an expiry. */
    private record Strike(String kind, long millis, long deadline, Path claim) {}

    private volatile Strike asked;

    private ClientLock lock;
    private Connection db;
    /** A semaphore strategy's semaphore over the lock; null for a lock. */
    private DistributedSemaphore<? extends Lease> semaphore;
    /** A read-write strategy's read-write lock over the lock; null for a lock. */
    private DistributedReadWriteLock<? extends Lease> readWrite;
    /** The record of the permit held now, a semaphore strategy's; empty otherwise. */
    private volatile String permitRecord = "";

    TortureClient(Config config, History history, Pauser pauser) {
        this.config = config;
        this.history = history;
        this.pauser = pauser;
        this.random = new SplittableRandom(config.seed() * 31 + config.index());
    }

    /**
     * Connects to the database, opens the lock and takes a lock of this client's own once (a slow
     * step for some backends); call before the run starts. The run starts with connections open
     * and the client libraries loaded: a cold JVM's first request is not one of the faults under
     * test, and the first faults strike at once.
     */
    void open() throws SQLException {
        db = DriverManager.getConnection(config.jdbcUrl());
        lock = ClientLock.open(config.strategy(), config.endpoints(), config.ttlMillis());
        lock.warmUp(config.resource() + "-warm-up-" + config.id(), TestTime.scaledByLoad(WARM_UP_WITHIN));
        if (config.strategy().permits() > 0) {
            semaphore = DistributedSemaphore.of(
                    lock.lock(), config.resource(), config.strategy().permits());
        }
        if (config.strategy().readWrite()) {
            readWrite = DistributedReadWriteLock.of(lock.lock(), config.resource(), READERS);
        }
    }

    /** Handles one command line from the harness. */
    void command(String line) throws Exception {
        String[] words = line.trim().split("\\s+");
        switch (words[0]) {
            case "pause" ->
                asked = new Strike("pause", Long.parseLong(words[1]), Long.parseLong(words[2]), Path.of(words[3]));
            case "expire" -> asked = new Strike("expire", 0, Long.parseLong(words[1]), Path.of(words[2]));
            case "stop" -> stopped = true;
            default -> throw new IllegalArgumentException("unknown command: " + line);
        }
    }

    boolean isStopped() {
        return stopped;
    }

    /** Expires this client's session if it holds a fenced lease now. */
    void expireIfHolding() throws Exception {
        FencedLease lease = held.get();
        if (lease != null) {
            record(Event.fault("expire " + config.id(), true, System.nanoTime(), System.currentTimeMillis()));
            lock.expire(lease);
            record(Event.fault("expire " + config.id(), false, System.nanoTime(), System.currentTimeMillis()));
        }
    }

    /** Loops until stopped, then closes the lock. */
    void run() throws SQLException {
        try (Connection connection = db) {
            JdbcFence fence = JdbcFence.builder().build();
            if (config.strategy().leader()) {
                campaign(lock.lock(), connection, fence);
            }
            while (!stopped) {
                if (config.strategy() == Strategy.OPTIMISTIC) {
                    write(connection, fence, null);
                } else if (readWrite != null && random.nextBoolean()) {
                    lockedRead(connection, fence);
                } else {
                    lockedWrite(connection, fence);
                }
            }
        } finally {
            lock.close();
        }
    }

    private void lockedWrite(Connection db, JdbcFence fence) {
        record(event(Kind.INVOKE, Op.ACQUIRE));
        Lease lease;
        try {
            Duration ttl = Duration.ofMillis(config.ttlMillis());
            lease = semaphore != null
                    ? semaphore.acquire(ttl, MAX_WAIT)
                    : readWrite != null
                            ? readWrite.acquireWrite(ttl, MAX_WAIT)
                            : lock.lock().acquire(config.resource(), ttl, MAX_WAIT);
        } catch (LockUnavailableException e) {
            record(event(Kind.FAIL, Op.ACQUIRE).withLabel(firstLine(e)));
            return;
        } catch (RuntimeException e) {
            record(event(Kind.INFO, Op.ACQUIRE).withLabel(firstLine(e)));
            sleep(100);
            return;
        }
        if (semaphore != null) {
            permitRecord = name() + "#" + semaphore.permitOf(lease); // this cycle's events are its permit's
        }
        Event granted = event(Kind.OK, Op.ACQUIRE).withValidity(lease.validity().toMillis());
        FencedLease fenced = lease instanceof FencedLease f ? f : null;
        if (fenced != null) {
            granted = granted.withFencingToken(fenced.fencingToken());
            held.set(fenced);
            fenced.lost().thenAccept(lost -> {
                if (held.get() == fenced) {
                    record(event(Kind.INFO, Op.LEASE_LOST).withLabel(firstLine(lost)));
                }
            });
        }
        record(granted);
        try {
            // A strategy without the fence writes plainly, as the Redis locks do; its grants still
            // carry their tokens in the history, so that the checker shows stale writes accepted.
            write(db, fence, config.strategy().fenced() ? fenced : null);
        } finally {
            held.set(null);
            record(event(Kind.INVOKE, Op.RELEASE));
            try {
                lease.close();
                record(event(Kind.OK, Op.RELEASE));
            } catch (RuntimeException e) {
                record(event(Kind.INFO, Op.RELEASE).withLabel(firstLine(e)));
            }
            permitRecord = "";
        }
    }

    /**
     * Reads the record twice under a read lease, a moment apart (a pause may strike between): a
     * write accepted in between, while the lease was valid, is a torn read.
     */
    private void lockedRead(Connection db, JdbcFence fence) {
        record(event(Kind.INVOKE, Op.READ));
        Lease lease;
        try {
            lease = readWrite.acquireRead(Duration.ofMillis(config.ttlMillis()), MAX_WAIT);
        } catch (LockUnavailableException e) {
            record(event(Kind.FAIL, Op.READ).withLabel(firstLine(e)));
            return;
        } catch (RuntimeException e) {
            record(event(Kind.INFO, Op.READ).withLabel(firstLine(e)));
            sleep(100);
            return;
        }
        try {
            // The first read raises the fence to the read lease's token: a writer paused past its
            // lease, whose token is older, is refused from then on.
            long first =
                    lease instanceof FencedLease fenced && config.strategy().fenced()
                            ? raised(db, fence, fenced)
                            : SharedRecord.read(db, name()).value();
            strikePoint();
            sleep(WORK_MILLIS + random.nextInt((int) WORK_MILLIS * 4));
            long second = SharedRecord.read(db, name()).value();
            record(event(Kind.OK, Op.READ).withWrite(first, second).withAccepted(lease.isValid()));
        } catch (SQLException | RuntimeException e) {
            record(event(Kind.INFO, Op.READ).withLabel(firstLine(e)));
        } finally {
            try {
                lease.release();
            } catch (RuntimeException e) {
                // the read is recorded; the lease ends with its TTL
            }
        }
    }

    /**
     * Campaigns until stopped, as one candidate of a {@link LeaderElection}: a term is recorded as a
     * grant (its token the term's) and its end as a release, or a loss; the leader writes with its
     * term's token until the term ends.
     */
    private <L extends Lease> void campaign(DistributedLock<L> candidate, Connection db, JdbcFence fence) {
        record(event(Kind.INVOKE, Op.ACQUIRE));
        LeaderElection.Listener<L> told = new LeaderElection.Listener<>() {
            @Override
            public void elected(LeaderElection.Term<? extends L> term) {
                Event granted = event(Kind.OK, Op.ACQUIRE)
                        .withValidity(term.lease().validity().toMillis());
                if (term.lease() instanceof FencedLease fenced) {
                    held.set(fenced);
                    granted = granted.withFencingToken(fenced.fencingToken());
                }
                record(granted);
            }

            @Override
            public void revoked(LeaderElection.Term<? extends L> term, Optional<LeaseLostException> cause) {
                held.set(null);
                cause.ifPresent(lost -> record(event(Kind.INFO, Op.LEASE_LOST).withLabel(firstLine(lost))));
                record(event(Kind.INVOKE, Op.RELEASE));
                record(event(Kind.OK, Op.RELEASE));
                record(event(Kind.INVOKE, Op.ACQUIRE)); // campaigning again
            }
        };
        try (LeaderElection<L> election = LeaderElection.builder(candidate, config.resource())
                .ttl(Duration.ofMillis(config.ttlMillis()))
                .listener(told)
                .work(term -> {
                    FencedLease fenced = term.lease() instanceof FencedLease f ? f : null;
                    // Writes until the term ends or the run does; a write under way when the term
                    // ends goes on (a pause swallows the interrupt), and the fence judges it.
                    while (!stopped
                            && term.isCurrent()
                            && !Thread.currentThread().isInterrupted()) {
                        write(db, fence, fenced);
                    }
                })
                .start()) {
            while (!stopped) {
                sleep(50);
            }
        }
    }

    /** Reads the record, works a little, writes it back decremented by one. */
    private void write(Connection db, JdbcFence fence, FencedLease lease) {
        Event invoke = event(Kind.INVOKE, Op.WRITE);
        record(lease == null ? invoke : invoke.withFencingToken(lease.fencingToken()));
        try {
            // A fenced read-modify-write fences its read too: a newer holder's read then makes the
            // fence refuse an older holder's write, even one that comes before the newer write.
            String written = permitRecord.isEmpty() ? name() : permitRecord;
            SharedRecord.Read read = inTransaction(db, fence, lease, () -> SharedRecord.read(db, written));
            strikePoint();
            sleep(WORK_MILLIS + random.nextInt((int) WORK_MILLIS * 4));
            long expected = config.strategy() == Strategy.OPTIMISTIC ? read.version() : -1;
            boolean accepted =
                    inTransaction(db, fence, lease, () -> SharedRecord.write(db, written, read.value() - 1, expected));
            Event ok = event(Kind.OK, Op.WRITE)
                    .withWrite(read.value(), read.value() - 1)
                    .withAccepted(accepted);
            record(config.strategy() == Strategy.OPTIMISTIC ? ok.withFencingToken(read.version()) : ok);
        } catch (StaleTokenException e) {
            record(event(Kind.OK, Op.WRITE).withAccepted(false).withLabel(firstLine(e)));
        } catch (SQLException | RuntimeException e) {
            record(event(Kind.INFO, Op.WRITE).withLabel(firstLine(e)));
        }
    }

    /** Reads the record in one transaction that first raises the fence to {@code lease}'s token. */
    private long raised(Connection db, JdbcFence fence, FencedLease lease) throws SQLException {
        db.setAutoCommit(false);
        try {
            fence.raise(db, lease);
            long value = SharedRecord.read(db, name()).value();
            db.commit();
            return value;
        } catch (SQLException | RuntimeException e) {
            db.rollback();
            throw e;
        } finally {
            db.setAutoCommit(true);
        }
    }

    private interface Sql<T> {
        T run() throws SQLException;
    }

    /** Runs {@code work} in one transaction behind the fence, or plainly when there is no lease to check. */
    private static <T> T inTransaction(Connection db, JdbcFence fence, FencedLease lease, Sql<T> work)
            throws SQLException {
        if (lease == null) {
            return work.run();
        }
        db.setAutoCommit(false);
        try {
            fence.check(db, lease);
            T result = work.run();
            db.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            db.rollback();
            throw e;
        } finally {
            db.setAutoCommit(true);
        }
    }

    /** Strikes with the fault the harness asked for, if any and still due: between the read and the write. */
    private void strikePoint() {
        Strike strike = asked;
        if (strike == null) {
            return;
        }
        asked = null;
        if (System.currentTimeMillis() > strike.deadline() || !claim(strike.claim())) {
            return;
        }
        try {
            if (strike.kind().equals("expire")) {
                expireIfHolding();
                return;
            }
            String label = "pause " + config.id();
            record(Event.fault(label, true, System.nanoTime(), System.currentTimeMillis()));
            pauser.pause(strike.millis());
            record(Event.fault(label, false, System.nanoTime(), System.currentTimeMillis()));
        } catch (Exception e) {
            record(event(Kind.INFO, Op.WRITE).withLabel(strike.kind() + " failed: " + firstLine(e)));
        }
    }

    private static boolean claim(Path file) {
        try {
            Files.createFile(file);
            return true;
        } catch (FileAlreadyExistsException e) {
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot claim " + file, e);
        }
    }

    private String name() {
        return config.strategy().option();
    }

    private Event event(Kind kind, Op op) {
        Event event = Event.of(config.id(), kind, op, System.nanoTime(), System.currentTimeMillis());
        String about = permitRecord;
        return about.isEmpty() ? event : event.withRecord(about);
    }

    private void record(Event event) {
        history.append(event);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String firstLine(Throwable e) {
        String message = e.getClass().getSimpleName() + ": " + e.getMessage();
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }
}
