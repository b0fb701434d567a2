package io.quorumlock.cli.run;

import io.quorumlock.DistributedLock;
import io.quorumlock.DistributedSemaphore;
import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.PermitUnavailableException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.cli.DurationConverter;
import io.quorumlock.cli.Formats;
import io.quorumlock.cli.Main;
import io.quorumlock.cli.Signals;
import io.quorumlock.cli.Text;
import io.quorumlock.cli.Verbosity;
import io.quorumlock.cli.lock.LockOptions;
import io.quorumlock.cli.lock.LockOptions.Kind;
import io.quorumlock.cli.lock.LockOptions.LockService;
import io.quorumlock.cli.lock.NodeProblems;
import io.quorumlock.redis.NodeCheck;
import io.quorumlock.redis.NodeCheckReport;
import io.quorumlock.redis.Redlock;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.IModelTransformer;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code quorumlock run [options] -- COMMAND [ARGS...]}: runs a command while holding a lock, so
 * that it runs at most once at a time across machines (a cron job on several hosts). The lease is
 * kept alive while the command runs and released when it exits; run exits with the command's exit
 * code, or with {@value #NOT_ACQUIRED} when the lock is busy, {@value #UNAVAILABLE} when the lock
 * service could not be reached, {@value #RESTART_GUARD} when Redis's restart guard kept the votes
 * out, and {@value #LEASE_LOST} when the lease was lost while the command ran.
 */
@Command(
        name = "run",
        sortOptions = false,
        modelTransformer = RunCommand.CommandStartsAtFirstPositional.class,
        customSynopsis = {
            "quorumlock run (--redis=URI[,URI...] | --zookeeper=CONNECT_STRING |",
            "                      --etcd=ENDPOINTS | --jdbc=JDBC_URL | --config=FILE)",
            "                      --resource=NAME",
            "                      [--ttl=TIME] [--wait=TIME] [--grace=TIME]",
            "                      [--on-lost=ACTION] [--connect-timeout=TIME] [-v]",
            "                      [--] COMMAND [ARG...]"
        },
        description = {
            "Runs a command while holding a lock, so that it runs at most once at a time across machines.",
            "",
            "Runs COMMAND while holding a lock on --resource, so that it runs at most once at a time across machines"
                    + " (a cron job installed on several hosts).",
            "",
            "Takes the lock (waiting up to --wait), runs the command with run's stdin, stdout and stderr, keeps the"
                    + " lease alive while it runs (Redis: an extension about every ttl/3; ZooKeeper: the session;"
                    + " etcd: the lease's keep-alive; a database: a renewal every ttl/3), releases it when the command exits, and exits with the"
                    + " command's exit code. If the lock is busy, the command does not run: one line on stderr says"
                    + " who holds it, and the exit code is 75. If the lock service cannot be reached (no quorum of"
                    + " the Redis nodes answered, the ZooKeeper ensemble, etcd cluster or database is down or"
                    + " silent), the command does not run either: the line names what did not answer, and the exit"
                    + " code is 69. With --wait 0, a ZooKeeper ensemble, etcd cluster or database that is down or"
                    + " silent is reported within --connect-timeout (2s by default; 5s for a database). Redis nodes"
                    + " that (re)started less than --ttl ago do not vote yet (the restart guard: they may have lost a"
                    + " holder's key): when that, not a holder, refuses the lock, the line says for how long, and the"
                    + " exit code is 73.",
            "",
            "If the lease is lost while the command runs (another holder may then start), the command and what it"
                    + " started get SIGTERM, and SIGKILL after --grace; run exits with 76. SIGINT and SIGTERM sent to"
                    + " run are passed on to the command, and the lock is released once it has exited. SIGKILL of run"
                    + " itself cannot be handled: the command goes on, and the lease ends when its TTL runs out.",
            ""
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0-255:the command's exit code; 128+N when signal N ended it, as shells report it",
            "1:a configuration error the lock service reported (a wrong, missing or unneeded password, a database"
                    + " that does not exist, a replica or a Redis Cluster member listed as a node, missing"
                    + " permissions), or run itself failed",
            "2:usage error (nothing was started)",
            "69:the lock service could not be reached: no quorum of it answered (down, refusing connections,"
                    + " silent) (EX_UNAVAILABLE); the command did not run",
            "73:nobody holds the lock, but the restart guard kept the votes of Redis nodes that (re)started less"
                    + " than --ttl ago out for longer than --wait (EX_CANTCREAT: the lock cannot be created yet); the"
                    + " command did not run",
            "75:the lock is held by another owner (with --permits, every permit is): not acquired within --wait"
                    + " (EX_TEMPFAIL); the command did not run",
            "76:the lease was lost while the command ran and it was stopped (--on-lost=terminate)",
            "126, 127:the command could not be run, or was not found"
        },
        footerHeading = "%nThe command's environment gets:%n",
        footer = {
            "  " + RunCommand.RESOURCE_ENV + "       the --resource name",
            "  " + RunCommand.VALID_UNTIL_ENV + "    when the lease ends unless extended, in ISO-8601",
            "                            UTC, such as 2026-05-01T02:00:29.950Z",
            "  " + RunCommand.FENCING_TOKEN_ENV + "  ZooKeeper, etcd and --jdbc: the lease's fencing token,",
            "                            larger than any earlier holder's; pass it to the",
            "                            storage with each write",
            "  " + RunCommand.PERMIT_ENV + "         with --permits N, the permit held, 1 to N:",
            "                            the lock on NAME#PERMIT, whose token the fencing",
            "                            token is",
            "",
            "run reads " + LockOptions.PASSWORD_ENV + " (the Redis password for URIs without",
            "one) and " + LockOptions.JDBC_PASSWORD_ENV + " (the database password of --jdbc), and",
            "passes neither on to the command.",
            "",
            "In a crontab on every host, with the nodes in ~/.config/quorumlock/config:",
            "  0 2 * * * quorumlock run --resource nightly-report -- /opt/bin/report",
            ""
        })
public final class RunCommand implements Callable<Integer> {

    /** The exit code when the lock was held by another owner throughout --wait: EX_TEMPFAIL of sysexits.h. */
    public static final int NOT_ACQUIRED = 75;
    /**
     * The exit code when nobody holds the lock but the restart guard kept the votes of Redis nodes
     * that (re)started less than --ttl ago out for longer than --wait: EX_CANTCREAT of sysexits.h, the
     * lock cannot be created yet. Not 75, a held lock's, nor 69, a service that cannot be reached:
     * a cron host tells "the nodes just restarted" from both; of the sysexits codes that are left,
     * the others name a broken set-up (usage, data, input, user, host, software, OS, I/O,
     * permission, configuration).
     */
    public static final int RESTART_GUARD = 73;
    /**
     * The exit code when the lock was not acquired because the lock service could not be reached
     * (no quorum of it answered): EX_UNAVAILABLE of sysexits.h.
     */
    public static final int UNAVAILABLE = 69;
    /** The exit code when the lease was lost while the command ran, and the command was stopped. */
    public static final int LEASE_LOST = 76;
    /** The exit code when the command exists but could not be run, as shells use it. */
    public static final int CANNOT_EXECUTE = 126;
    /** The exit code when the command was not found, as shells use it. */
    public static final int NOT_FOUND = 127;

    /** The resource name, in the command's environment. */
    public static final String RESOURCE_ENV = "QUORUMLOCK_RESOURCE";
    /** When the lease ends as granted, in the command's environment. */
    public static final String VALID_UNTIL_ENV = "QUORUMLOCK_VALID_UNTIL";
    /** The fencing token of a ZooKeeper, etcd or database lease, in the command's environment. */
    public static final String FENCING_TOKEN_ENV = "QUORUMLOCK_FENCING_TOKEN";
    /** With --permits, the permit held (1 to N), in the command's environment. */
    public static final String PERMIT_ENV = "QUORUMLOCK_PERMIT";

    /** The lease's values, which the command's environment gets once it is granted. */
    private static final List<String> LEASE_ENV = List.of(VALID_UNTIL_ENV, FENCING_TOKEN_ENV, PERMIT_ENV);

    /** etcd leases are whole seconds. */
    private static final Duration ETCD_MIN_TTL = Duration.ofSeconds(1);

    /**
     * The loggers whose lines say what run reports itself in one line: a lost lease, a node that
     * refused the connection, a node's configuration error and an even number of nodes (Redlock),
     * and the ZooKeeper client's stack traces when the ensemble is unreachable.
     */
    private static final String[] REPORTED_BY_RUN = {
        "io.quorumlock.internal.KeepAlive",
        "io.quorumlock.redis.client.RespLink",
        "io.quorumlock.redis.Redlock",
        "io.quorumlock.etcd.EtcdLease",
        "io.quorumlock.jdbc.JdbcLease",
        "org.apache.curator",
        "org.apache.zookeeper"
    };

    @Spec
    private CommandSpec spec;

    @Mixin
    private LockOptions lockOptions;

    private String resource;
    private Duration ttl;
    private Duration wait;
    private int permits = 1;
    /** With --permits, the semaphore the lease is a permit of; null without. */
    private DistributedSemaphore<? extends Lease> semaphore;
    /** Null until set: {@link #DEFAULT_GRACE}, or half the notice of loss if that is shorter. */
    private Duration grace;

    private static final Duration DEFAULT_GRACE = Duration.ofSeconds(10);

    /** How long run waits for a ZooKeeper ensemble or an etcd cluster to answer, unless --connect-timeout says. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);

    /** Null unless set: then {@link #DEFAULT_CONNECT_TIMEOUT}, or --ttl with ZooKeeper if that is shorter. */
    private Duration connectTimeout;

    @Option(
            names = "--on-lost",
            paramLabel = "ACTION",
            defaultValue = "terminate",
            order = 15,
            converter = OnLost.Converter.class,
            completionCandidates = OnLost.Choices.class,
            description = "When the lease is lost while the command runs: terminate (SIGTERM, then SIGKILL after"
                    + " --grace; exit code 76) or continue (one line on stderr; the command goes on, and its exit"
                    + " code is run's). Default: ${DEFAULT-VALUE}.")
    private OnLost onLost;

    @Mixin
    private Verbosity verbosity;

    @Parameters(
            paramLabel = "COMMAND",
            arity = "0..*",
            description = "The command and its arguments. Everything from the first argument that is not an option"
                    + " on is the command's; write -- before it to be explicit.")
    private List<String> command = new ArrayList<>();

    /** The command's start, parked while run waits; empty until then, or where it cannot be. */
    private CompletableFuture<Optional<ParkedStart>> parked = CompletableFuture.completedFuture(Optional.empty());

    @Option(
            names = "--resource",
            paramLabel = "NAME",
            order = 11,
            description = "The lock's name, the same on every host that must not run the command at once,"
                    + " such as nightly-report. Required.")
    void setResource(String resource) {
        require(!resource.isBlank(), "--resource must not be empty: name the lock, such as --resource nightly-report");
        this.resource = resource;
    }

    @Option(
            names = "--ttl",
            paramLabel = "TIME",
            defaultValue = "30s",
            order = 12,
            converter = DurationConverter.class,
            description = "How long the lease lasts unless extended: the longest the lock stays taken after run dies"
                    + " without releasing it. Redis: longer than 150 ms (a node may stay silent for up to 500 ms, or"
                    + " a quarter of the TTL, before it counts as a no); etcd: at least 1s (whole seconds, rounded"
                    + " up); ZooKeeper: the session timeout, which keeps the lease, and which the ensemble must grant"
                    + " (by default 2 to 20 x its tickTime). Default: ${DEFAULT-VALUE}.")
    void setTtl(Duration ttl) {
        require(isPositive(ttl), "--ttl must be positive, was " + Formats.duration(ttl) + ": such as --ttl 30s");
        this.ttl = ttl;
    }

    @Option(
            names = "--wait",
            paramLabel = "TIME",
            defaultValue = "0s",
            order = 13,
            converter = DurationConverter.class,
            description = "How long to wait for a busy lock before giving up with exit code 75 (or for a lock"
                    + " service that cannot be reached, before 69; for the restart guard, before 73). While it"
                    + " waits, the command's start is"
                    + " prepared: a /bin/sh, parked until the lock is granted, then replaced by the command."
                    + " Default: ${DEFAULT-VALUE}, give up at once, as a cron job wants.")
    void setWait(Duration wait) {
        this.wait = notNegative("--wait", wait, "0s gives up at once");
    }

    @Option(
            names = "--grace",
            paramLabel = "TIME",
            order = 14,
            converter = DurationConverter.class,
            description = "After a lost lease, how long the command has between SIGTERM and SIGKILL; it must end"
                    + " before another host can be granted the lock, so it must be shorter than the notice of loss"
                    + " (Redis: a tenth of --ttl; ZooKeeper and etcd: a third). Default: 10s, or half the notice"
                    + " if that is shorter.")
    void setGrace(Duration grace) {
        this.grace = notNegative("--grace", grace, "0s sends SIGKILL at once");
    }

    @Option(
            names = "--permits",
            paramLabel = "N",
            order = 17,
            description = "At most N commands run at once under --resource, across hosts: each holds one of N"
                    + " permits, each permit a lock of its own (NAME#1 to NAME#N), with its own fencing token where the"
                    + " lock service gives one; the command gets the permit's number in " + PERMIT_ENV + ". All hosts"
                    + " must give the same N. 1 to " + DistributedSemaphore.MAX_PERMITS + ". Default: 1, the lock on"
                    + " NAME itself.")
    void setPermits(int permits) {
        LockOptions.permitsError(permits).ifPresent(error -> {
            throw usage(error);
        });
        this.permits = permits;
    }

    @Option(
            names = "--connect-timeout",
            paramLabel = "TIME",
            order = 16,
            converter = DurationConverter.class,
            description = "ZooKeeper, etcd and --jdbc: how long to wait for the lock service to answer before it"
                    + " counts as unreachable (exit code 69): how long run waits for the first ZooKeeper connection"
                    + " (at most --ttl), how long the etcd client tries to reach a member, or the connect and"
                    + " statement timeout of the database. With --wait 0, run reports a service that is down within"
                    + " it; with --wait, within it and --wait. Raise it for a service that is slow to answer. Redis"
                    + " rounds give a silent node up to 500 ms instead (see --ttl). Default: 2s, or --ttl if shorter"
                    + " (ZooKeeper); 5s for a database.")
    void setConnectTimeout(Duration connectTimeout) {
        require(
                isPositive(connectTimeout),
                "--connect-timeout must be positive, was " + Formats.duration(connectTimeout)
                        + ": such as --connect-timeout 2s");
        this.connectTimeout = connectTimeout;
    }

    @Override
    public Integer call() throws Exception {
        if (command.isEmpty()) {
            throw usage("no command to run: give it after the options, such as quorumlock run --redis"
                    + " redis://10.0.0.1:6379 --resource nightly-report -- /usr/local/bin/nightly-report");
        }
        if (resource == null) {
            throw usage("--resource is missing: name the lock, such as --resource nightly-report");
        }
        LockService backend;
        try {
            backend = lockOptions.backend();
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage(), e);
        }
        if (backend.kind() == Kind.ETCD && ttl.compareTo(ETCD_MIN_TTL) < 0) {
            throw usage("--ttl must be at least 1s with etcd, whose leases are whole seconds; was "
                    + Formats.duration(ttl));
        }
        Duration timeout = connectTimeout(backend.kind());
        quietLinesRunReportsItself();
        warnOfAnEvenNumberOfNodes(backend);
        try (DistributedLock<? extends Lease> lock = open(backend, timeout)) {
            // The checks need the session timeout the ZooKeeper ensemble grants: an ensemble not
            // reached within the connect timeout is refused without a second wait, or waited for
            // in what is left of --wait, and the checks come once a lease was granted after all.
            long connecting = System.nanoTime();
            boolean reached = !(lock instanceof ZooKeeperLock zooKeeper) || connected(zooKeeper, timeout);
            Duration left = reached ? wait : wait.minusNanos(System.nanoTime() - connecting);
            if (reached) {
                checkSettings(lock);
            }
            // What check finds on the Redis nodes, read beside the attempt: a Redis Cluster member
            // grants the lock as a master would, and which nodes did not answer a lock granted by a
            // bare quorum.
            CompletableFuture<NodeCheckReport> inspection = lock instanceof Redlock redlock
                    ? CompletableFuture.supplyAsync(redlock::checkNodes)
                    : CompletableFuture.completedFuture(null);
            NodeProblems problems = lockOptions.nodeProblems(backend);
            Lease lease;
            if (!wait.isZero()) {
                park();
            }
            try {
                lease = reached || left.compareTo(Duration.ZERO) > 0 ? acquire(lock, left) : unreached(lock, timeout);
            } catch (PermitUnavailableException e) {
                report(Refusal.permits(e, wait));
                return e.busy() ? NOT_ACQUIRED : UNAVAILABLE;
            } catch (LockUnavailableException e) {
                Optional<Duration> guard = e.restartGuard();
                if (guard.isPresent()) {
                    report(Refusal.restartGuard(e, guard.get(), wait, ttl));
                    return RESTART_GUARD;
                }
                boolean busy = e.busy();
                report(Refusal.line(e, wait, busy || backend.kind() == Kind.REDIS ? null : timeout));
                return busy ? NOT_ACQUIRED : UNAVAILABLE;
            } catch (LockConfigurationException e) {
                if (backend.kind() == Kind.JDBC) {
                    ServerAnswer answer = e.lastAttempt().get(0);
                    report(answer.server() + ": " + LockOptions.forCommandLine(answer.detail()));
                    return Main.FAILURE;
                }
                if (backend.kind() != Kind.REDIS) {
                    throw e;
                }
                // One line per node, naming the setting to change, rather than the node's error text each time.
                problems.lines(e.lastAttempt()).forEach(this::report);
                return Main.FAILURE;
            } catch (IllegalArgumentException e) {
                throw usage(e.getMessage(), e); // a resource name the backend cannot take
            }
            // Kept alive from the grant on: the checks below and the command's start may take
            // longer than the TTL on a loaded machine, and the lease must not run out meanwhile.
            CompletableFuture<LeaseLostException> lost = keepAlive(lock, lease);
            if (lock instanceof Redlock redlock && refusedAfterCheck(inspection, redlock, problems)) {
                releaseQuietly(lease);
                return Main.FAILURE;
            }
            if (!reached) {
                try {
                    checkSettings(lock);
                } catch (ParameterException e) {
                    releaseQuietly(lease);
                    throw e;
                }
            }
            return runUnder(lease, lost);
        } finally {
            unpark();
        }
    }

    /**
     * Judges what check found on the nodes, once the lock is granted: refuses, with one line per
     * node and check's own words, the Redis Cluster members (a cluster of one node that serves
     * every slot grants a lock as a master would); warns, in one line, when nodes did not answer and
     * the others are few, and of each node that refused with a configuration error. A check that
     * has not ended within a third of the TTL is left out.
     *
     * @return true if the command must not run
     */
    private boolean refusedAfterCheck(
            CompletableFuture<NodeCheckReport> inspection, Redlock redlock, NodeProblems problems)
            throws InterruptedException {
        NodeCheckReport found;
        try {
            found = inspection.get(ttl.dividedBy(3).toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            return false;
        }
        List<String> clusterMembers = new ArrayList<>();
        List<String> silent = new ArrayList<>();
        List<String> misconfigured = new ArrayList<>();
        for (int i = 0; i < found.nodes().size(); i++) {
            NodeCheck node = found.nodes().get(i);
            for (String finding : node.findings()) {
                if (finding.startsWith(NodeProblems.CLUSTER_MEMBER)) {
                    clusterMembers.add(node.node() + " " + finding);
                }
            }
            if (!node.role().equals("unknown") || node.findings().isEmpty()) {
                continue;
            }
            String finding = node.findings().get(0);
            Optional<String> misconfiguration = NodeProblems.misconfiguration(finding);
            if (misconfiguration.isPresent()) {
                misconfigured.add(node.node() + " " + problems.reason(i, misconfiguration.get()));
            } else if (finding.startsWith(ServerAnswer.Kind.UNREACHABLE.description() + " (")
                    || finding.startsWith(ServerAnswer.Kind.TIMED_OUT.description() + " (")) {
                silent.add(node.node() + " (" + finding.substring(0, finding.indexOf(" (")) + ")");
            }
        }
        if (!clusterMembers.isEmpty()) {
            clusterMembers.forEach(this::report);
            return true;
        }
        misconfigured.forEach(line -> report("warning: " + line));
        // A lock that its only node granted is no bare quorum: that node answered the grant, whatever
        // the check beside the attempt found before it (a master that Sentinel was failing over).
        if (!silent.isEmpty() && found.nodes().size() > 1) {
            int nodes = found.nodes().size();
            int voting = nodes - silent.size() - misconfigured.size();
            int spare = voting - redlock.quorum();
            report("warning: lock '" + resource + "' "
                    + (spare <= 0
                            ? "granted by " + voting + " of " + nodes + " nodes, the bare quorum"
                            : "granted with " + voting + " of " + nodes + " nodes answering")
                    + ": no answer from " + String.join(", ", silent) + "; with "
                    + (spare <= 0 ? "one more node" : (spare + 1) + " more nodes") + " down no host gets the lock");
        }
        return false;
    }

    /** Redlock's own warning of an even number of nodes, which run prints as its own line (-v: the log's). */
    private void warnOfAnEvenNumberOfNodes(LockService backend) {
        int nodes = backend.endpoints().size();
        if (backend.kind() == Kind.REDIS && nodes > 1 && nodes % 2 == 0 && !Verbosity.isVerbose()) {
            report("warning: " + nodes + " nodes tolerate no more failures than " + (nodes - 1) + " do (a quorum of "
                    + (nodes / 2 + 1) + " is needed): use an odd number of nodes");
        }
    }

    /**
     * How long to wait for the ZooKeeper ensemble or the etcd cluster: --connect-timeout, by default
     * {@link #DEFAULT_CONNECT_TIMEOUT} (with ZooKeeper at most --ttl, the session timeout, which a
     * connection timeout must not exceed); null for Redis, whose rounds wait for a silent node the node timeout.
     */
    private Duration connectTimeout(Kind kind) {
        if (kind == Kind.JDBC) {
            return connectTimeout != null ? connectTimeout : LockOptions.JDBC_REQUEST_TIMEOUT;
        }
        if (kind == Kind.REDIS) {
            if (connectTimeout != null) {
                throw usage("--connect-timeout is for ZooKeeper, etcd and --jdbc: Redis rounds give a silent node up to"
                        + " 500 ms"
                        + " (a quarter of --ttl if less), and a node that is down counts as a no at once");
            }
            return null;
        }
        if (kind == Kind.ZOOKEEPER && connectTimeout != null && connectTimeout.compareTo(ttl) > 0) {
            throw usage("--connect-timeout " + option(connectTimeout) + " is longer than --ttl " + option(ttl)
                    + ", the ZooKeeper session timeout: the session would be lost before such a connection is"
                    + " given up; use --connect-timeout " + option(ttl) + " or less, or a longer --ttl");
        }
        Duration timeout = connectTimeout != null ? connectTimeout : DEFAULT_CONNECT_TIMEOUT;
        return kind == Kind.ZOOKEEPER && timeout.compareTo(ttl) > 0 ? ttl : timeout;
    }

    /**
     * Whether the ZooKeeper client connected within {@code timeout}. The lock's own connection
     * timeout stays longer (5 s by default, see {@link LockOptions.LockService#open(Duration, Duration)}):
     * a --wait 0 attempt's requests are given that much on a connection that is up.
     */
    private static boolean connected(ZooKeeperLock lock, Duration timeout) throws InterruptedException {
        CompletableFuture<Optional<Duration>> session = CompletableFuture.supplyAsync(lock::sessionTimeout);
        try {
            return session.get(timeout.toNanos(), TimeUnit.NANOSECONDS).isPresent();
        } catch (TimeoutException e) {
            return false; // the wait goes on in the background until the lock is closed
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException failure ? failure : new IllegalStateException(e.getCause());
        }
    }

    /** The lock on --resource, or with --permits a permit of it: waits up to {@code maxWait}. */
    private Lease acquire(DistributedLock<? extends Lease> lock, Duration maxWait) {
        if (permits == 1) {
            return lock.acquire(resource, ttl, maxWait);
        }
        DistributedSemaphore<? extends Lease> permit = DistributedSemaphore.of(lock, resource, permits);
        semaphore = permit;
        return permit.acquire(ttl, maxWait);
    }

    /**
     * The refusal of a --wait 0 run whose ZooKeeper ensemble was not reached within the connect
     * timeout: that wait was the attempt's, and the lock's own attempt would wait for the
     * connection once more, up to its longer connection timeout.
     *
     * @throws LockUnavailableException always: the ensemble is unreachable
     */
    private Lease unreached(DistributedLock<? extends Lease> lock, Duration timeout) {
        ServerAnswer answer = new ServerAnswer(
                ((ZooKeeperLock) lock).ensemble(),
                ServerAnswer.Kind.UNREACHABLE,
                "no connection to the ensemble within the connect timeout");
        throw new LockUnavailableException(resource, timeout, 1, answer, Optional.empty());
    }

    /** The settings that depend on the lock: the ZooKeeper session timeout, the Redis TTL floor, the grace. */
    private void checkSettings(DistributedLock<? extends Lease> lock) {
        if (lock instanceof ZooKeeperLock zooKeeper) {
            checkSessionTimeout(zooKeeper);
        }
        if (lock instanceof Redlock redlock) {
            Duration floor = redlock.ttlFloor();
            if (ttl.compareTo(floor) <= 0) {
                throw usage("--ttl must be longer than " + Formats.duration(floor) + " with Redis (3 x the node"
                        + " timeout: a grant and an extension must fit in it), was " + Formats.duration(ttl));
            }
        }
        grace = checkGrace(lock);
    }

    /**
     * The grace after a lost lease, which must end before another host can be granted the lock: the
     * loss is signalled with a notice of a tenth of the TTL with Redis (the keep-alive gives up with
     * that much validity left), a third with ZooKeeper (SUSPENDED comes two thirds into the session
     * timeout) and etcd (no renewal for two thirds of the TTL).
     */
    private Duration checkGrace(DistributedLock<? extends Lease> lock) {
        Duration notice = lock.lossNotice(ttl);
        if (grace == null) {
            Duration half = notice.dividedBy(2);
            return half.compareTo(DEFAULT_GRACE) < 0 ? half : DEFAULT_GRACE;
        }
        if (grace.compareTo(notice) >= 0) {
            throw usage("--grace " + Formats.duration(grace) + " is not shorter than the notice of a lost lease"
                    + " with --ttl " + Formats.duration(ttl) + " (" + Formats.duration(notice)
                    + "): the command could still run when another host gets the lock; use --grace "
                    + Formats.duration(notice.dividedBy(2)) + " or a longer --ttl");
        }
        return grace;
    }

    /** Opens the lock; a bad address is a usage error. No connection is made yet for Redis. */
    private DistributedLock<? extends Lease> open(LockService backend, Duration timeout) {
        try {
            return backend.open(ttl, timeout);
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage(), e);
        }
    }

    /**
     * The ZooKeeper session, which keeps the lease, was asked for a timeout of --ttl: refuses a
     * --ttl that the ensemble bounded to another value. Waits for the first connection (up to the
     * connection timeout), so that the one attempt of --wait 0 meets a connected client.
     */
    private void checkSessionTimeout(ZooKeeperLock lock) {
        Duration granted = lock.sessionTimeout().orElse(ttl);
        int longer = ttl.compareTo(granted);
        if (longer != 0) {
            String bound = longer > 0 ? "maxSessionTimeout" : "minSessionTimeout";
            throw usage("--ttl " + option(ttl) + " is " + (longer > 0 ? "longer" : "shorter")
                    + " than this ZooKeeper ensemble allows: it granted a session timeout of " + option(granted)
                    + ", its " + bound + " (by default " + (longer > 0 ? "20" : "2") + " x tickTime); use --ttl "
                    + option(granted) + (longer > 0 ? " or less, or raise " : " or more, or lower ") + bound
                    + " on the servers");
        }
    }

    /** A duration as an option value: 30s, 1500ms. */
    static String option(Duration duration) {
        return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + "s" : duration.toMillis() + "ms";
    }

    /** Runs the command under the lease, releases the lease, and returns run's exit code. */
    /**
     * The notice of the lease's loss: a fenced lease's doubt (its backend keeps it), or a Redis
     * lease's keep-alive, started here; the first extension is due when two thirds of the TTL are
     * left, and a loss is told however late it is watched.
     */
    private CompletableFuture<LeaseLostException> keepAlive(DistributedLock<? extends Lease> lock, Lease lease) {
        try {
            return lease instanceof FencedLease fenced ? fenced.inDoubt() : ((Redlock) lock).keepAlive(lease, ttl);
        } catch (RuntimeException e) {
            releaseQuietly(lease);
            throw e;
        }
    }

    private int runUnder(Lease lease, CompletableFuture<LeaseLostException> lost) throws InterruptedException {
        if (lost.isDone()) {
            // Lost during the checks: the command is not started without the lock.
            report(lost.join().getMessage() + "; the command was not started");
            return LEASE_LOST;
        }
        // The handlers go in before the child starts: a SIGTERM just after the start would
        // otherwise end the JVM (exit 143) instead of reaching the command.
        Forwarding forwarding = new Forwarding();
        Thread lastResort = new Thread(() -> stopAndRelease(forwarding.child(), lease), "quorumlock-run-exit");
        Runtime.getRuntime().addShutdownHook(lastResort);
        try {
            try (Signals signals = Signals.install(forwarding::signal)) {
                Child child;
                try {
                    child = startParked(lease).orElse(null);
                    if (child == null) {
                        child = Child.start(command, environment(lease));
                    }
                } catch (IOException e) {
                    return cannotRun(e);
                }
                forwarding.started(child);
                return new Supervision(child, lease, onLost, grace, this::report).awaitExit(lost);
            }
        } finally {
            releaseQuietly(lease);
            try {
                Runtime.getRuntime().removeShutdownHook(lastResort);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs, or has run: it finds the lease released
            }
        }
    }

    /**
     * The child, once started, for the signals and the shutdown hook: SIGINT and SIGTERM go to it,
     * one that comes before it has started once it has.
     */
    private static final class Forwarding {
        private Child child;
        private String pending;

        synchronized void signal(String name) {
            if (child != null) {
                child.forward(name);
            } else if (pending == null) {
                pending = name;
            }
        }

        synchronized Child child() {
            return child;
        }

        synchronized void started(Child started) {
            child = started;
            if (pending != null) {
                started.forward(pending);
            }
        }
    }

    /**
     * While the lock may be busy, parks the command's start in the background (see {@link
     * ParkedStart}) and prepares the rest of it (the time format), so that a waiter starts its
     * command soon after the lock is handed to it.
     */
    private void park() {
        Map<String, String> environment = environment();
        parked = CompletableFuture.supplyAsync(
                () -> {
                    Instant.now().truncatedTo(ChronoUnit.MILLIS).toString(); // the lease's end, formatted once
                    return ParkedStart.park(command, environment, LEASE_ENV);
                },
                task -> {
                    Thread thread = new Thread(task, "quorumlock-run-park");
                    thread.setDaemon(true);
                    thread.start();
                });
    }

    /** Starts the parked command under {@code lease}: empty if there is none ready, or it is gone. */
    private Optional<Child> startParked(Lease lease) {
        Optional<ParkedStart> ready = parked.getNow(Optional.empty());
        return ready.isEmpty() ? Optional.empty() : ready.get().start(leaseValues(lease));
    }

    /**
     * Ends the parked start, once it is ready, unless it became the command. Waits for it a little:
     * a shell started as run exits could wait for run's pipe forever.
     */
    private void unpark() {
        try {
            parked.get(10, TimeUnit.SECONDS).ifPresent(ParkedStart::close);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            parked.thenAccept(ready -> ready.ifPresent(ParkedStart::close));
        } catch (ExecutionException | TimeoutException e) {
            parked.thenAccept(ready -> ready.ifPresent(ParkedStart::close));
        }
    }

    /** What the command's environment gets, and loses (null values), whatever the lease. */
    private Map<String, String> environment() {
        Map<String, String> env = new HashMap<>();
        env.put(LockOptions.PASSWORD_ENV, null); // the lock's secrets, not the command's
        env.put(LockOptions.JDBC_PASSWORD_ENV, null);
        env.put(RESOURCE_ENV, resource);
        return env;
    }

    /** What the command's environment gets, and loses (null values), under {@code lease}. */
    private Map<String, String> environment(Lease lease) {
        Map<String, String> env = environment();
        env.put(VALID_UNTIL_ENV, validUntil(lease));
        env.put(FENCING_TOKEN_ENV, token(lease).orElse(null));
        env.put(PERMIT_ENV, semaphore == null ? null : Integer.toString(semaphore.permitOf(lease)));
        return env;
    }

    /** The values of {@link #LEASE_ENV} under {@code lease}, empty for those it has not. */
    private List<String> leaseValues(Lease lease) {
        Map<String, String> env = environment(lease);
        return LEASE_ENV.stream()
                .map(variable -> Objects.requireNonNullElse(env.get(variable), ""))
                .toList();
    }

    private static String validUntil(Lease lease) {
        return Instant.now()
                .plus(lease.remaining())
                .truncatedTo(ChronoUnit.MILLIS)
                .toString();
    }

    private static Optional<String> token(Lease lease) {
        return lease instanceof FencedLease fenced
                ? Optional.of(Long.toString(fenced.fencingToken()))
                : Optional.empty();
    }

    /** The command could not be started: one line, and the shell's exit code for it. */
    private int cannotRun(IOException e) {
        // "Cannot run program "x": error=2, No such file or directory"
        Matcher errno = Pattern.compile("error=(\\d+), (.*)").matcher(String.valueOf(e.getMessage()));
        boolean found = errno.find();
        report("cannot run " + command.get(0) + ": " + (found ? errno.group(2) : e.getMessage()));
        return found && errno.group(1).equals("2") ? NOT_FOUND : CANNOT_EXECUTE;
    }

    /** The shutdown hook: run is ending before the command did (SIGHUP, an error): stop it, then release. */
    private void stopAndRelease(Child child, Lease lease) {
        if (child != null && child.isAlive()) {
            child.terminate();
            try {
                child.awaitTerminatedOrKill(System.nanoTime() + grace.toNanos());
            } catch (InterruptedException e) {
                child.kill();
            }
        }
        releaseQuietly(lease);
    }

    private static void releaseQuietly(Lease lease) {
        try {
            lease.release();
        } catch (RuntimeException e) {
            // The lease ends with its TTL; the library logged what went wrong.
        }
    }

    /**
     * Turns off the library's log lines that say what run reports itself in one line (a lost lease,
     * a node refusing the connection, which the refusal's evidence names), unless -v asks for more.
     * Takes effect because these loggers are made only once the lock is opened.
     */
    private static void quietLinesRunReportsItself() {
        if (Verbosity.isVerbose()) {
            return;
        }
        for (String logger : REPORTED_BY_RUN) {
            String property = "org.slf4j.simpleLogger.log." + logger;
            if (System.getProperty(property) == null) {
                System.setProperty(property, "off");
            }
        }
    }

    /** One line on stderr, as {@code quorumlock run: ...}. */
    private void report(String line) {
        PrintWriter err = spec.commandLine().getErr();
        err.println(spec.qualifiedName() + ": " + Text.plain(line));
        err.flush();
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    private ParameterException usage(String message, Exception cause) {
        return new ParameterException(spec.commandLine(), message, cause);
    }

    private void require(boolean valid, String message) {
        if (!valid) {
            throw usage(message);
        }
    }

    private Duration notNegative(String option, Duration value, String remedy) {
        require(!value.isNegative(), option + " must not be negative, was " + Formats.duration(value) + ": " + remedy);
        return value;
    }

    private static boolean isPositive(Duration duration) {
        return !duration.isNegative() && !duration.isZero();
    }

    /**
     * Everything from the first positional argument on is the command's, options included: {@code
     * quorumlock run --resource r sh -c 'exit 7'} runs {@code sh -c 'exit 7'}.
     */
    static final class CommandStartsAtFirstPositional implements IModelTransformer {
        @Override
        public CommandSpec transform(CommandSpec commandSpec) {
            commandSpec.parser().stopAtPositional(true);
            return commandSpec;
        }
    }
}
