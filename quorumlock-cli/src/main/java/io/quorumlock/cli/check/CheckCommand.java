package io.quorumlock.cli.check;

import io.quorumlock.DistributedLock;
import io.quorumlock.DistributedSemaphore;
import io.quorumlock.LockHolder;
import io.quorumlock.QuorumlockException;
import io.quorumlock.cli.Main;
import io.quorumlock.cli.Text;
import io.quorumlock.cli.Verbosity;
import io.quorumlock.cli.lock.LockOptions;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.redis.NodeCheckReport;
import io.quorumlock.redis.Redlock;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code quorumlock check}: {@link Redlock#checkNodes()} on the Redis nodes named as for {@code
 * run}, printed as a table with each finding's remedy below it. Exits with 1 when a node has an
 * error, 0 otherwise (warnings included).
 */
@Command(
        name = "check",
        sortOptions = false,
        description = {
            "Checks Redis nodes against Redlock's assumptions, or the database of --jdbc, and says how to fix what it"
                    + " finds.",
            "",
            "Per node: its role (a replica or a Redis Cluster member is an error), its run_id (the same server listed"
                    + " under two names is an error), its persistence (none, or an fsync policy other than always,"
                    + " is a warning: a restart loses keys) and its connected replicas (a warning). A node that does"
                    + " not answer within the lock's node timeout (50 ms) is an error. The password comes from the URI, "
                    + LockOptions.PASSWORD_ENV + " or the config file, and is never printed.",
            "",
            "The restart guard is a client's own state (it depends on the TTLs that client has asked for), so this"
                    + " check shows no node kept out by it: a service sees that with checkNodes() on its own Redlock.",
            "",
            "With --jdbc: the lock's table and its token sequence, the privileges the lock needs, and the database's"
                    + " clock against this host's (the lock counts expiry by the database's clock alone).",
            "",
            "With --resource NAME: who holds the lock on NAME now, with its fencing token where there is one; with"
                    + " --permits N too, who holds each permit of run --permits N, the locks NAME#1 to NAME#N.",
            "",
            "Exit code 0 when no node has an error (warnings are printed), 1 when one has, 2 for a usage error.",
            ""
        })
public final class CheckCommand implements Callable<Integer> {

    /** How long check gives the database to answer all its reads. */
    private static final Duration DATABASE_TIMEOUT = Duration.ofSeconds(5);

    @Spec
    private CommandSpec spec;

    @Mixin
    private LockOptions lock;

    @Mixin
    private Verbosity verbosity;

    @Option(
            names = "--create-table",
            description = "With --jdbc: create the lock's table and its token sequence first, if they do not exist.")
    private boolean createTable;

    @Option(
            names = "--resource",
            paramLabel = "NAME",
            description = "Also show who holds the lock on NAME (with --permits, each of its permits).")
    private String resource;

    @Option(
            names = "--permits",
            paramLabel = "N",
            description = "With --resource: show the holder of each permit of run --permits N, NAME#1 to NAME#N.")
    private Integer permits;

    @Override
    public Integer call() {
        NodeCheckReport report;
        int quorum;
        LockOptions.LockService backend = backend();
        if (backend.kind() == LockOptions.Kind.JDBC) {
            return checkDatabase(backend);
        }
        if (createTable) {
            throw new ParameterException(spec.commandLine(), "--create-table is for --jdbc");
        }
        PrintWriter out = spec.commandLine().getOut();
        try (Redlock redlock = open(backend)) {
            // A configuration error, such as a password for a node that has none, names the setting to change.
            report = lock.nodeProblems(backend).rewrite(redlock.checkNodes());
            quorum = redlock.quorum();
            NodeCheckTable.lines(report, quorum).forEach(out::println);
            if (!report.hasErrors()) {
                holders(redlock, out);
            }
        }
        out.flush();
        return report.hasErrors() ? Main.FAILURE : 0;
    }

    /** The Redis nodes named; a usage error for anything else. */
    private LockOptions.LockService backend() {
        LockOptions.LockService backend;
        try {
            backend = lock.backend();
        } catch (IllegalArgumentException e) {
            // No backend or several, a TLS file that cannot be read: the command line is wrong.
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        if (backend.kind() != LockOptions.Kind.REDIS && backend.kind() != LockOptions.Kind.JDBC) {
            throw new ParameterException(
                    spec.commandLine(),
                    "check inspects Redis nodes or a database, not --"
                            + backend.kind().name().toLowerCase(Locale.ROOT)
                            + ": name them with --redis URI[,URI...] or --jdbc JDBC_URL (or in the config file)");
        }
        return backend;
    }

    /**
     * The database of --jdbc: the lock's table, sequence and privileges, and its clock against this
     * host's, in one row; an error names its remedy.
     */
    private int checkDatabase(LockOptions.LockService backend) {
        PrintWriter out = spec.commandLine().getOut();
        try (JdbcLock jdbc = (JdbcLock) backend.open()) {
            if (createTable) {
                jdbc.createTable();
            }
            JdbcLock.DatabaseCheck check = jdbc.check(DATABASE_TIMEOUT);
            long offset = check.clockOffset().toMillis();
            Text.table(List.of(
                            new String[] {"database", "dialect", "clock offset", "round trip", "verdict"},
                            new String[] {
                                check.database(),
                                check.dialect().name().toLowerCase(Locale.ROOT),
                                (offset >= 0 ? "+" : "") + offset + " ms",
                                check.roundTrip().toMillis() + " ms",
                                "ok"
                            }))
                    .forEach(out::println);
            out.println();
            out.println("the table, its sequence and the privileges to read, update and draw tokens are in place;"
                    + " leases expire by the database's clock, whatever this host's says");
            holders(jdbc, out);
            out.flush();
            return 0;
        } catch (QuorumlockException e) {
            out.println("ERROR " + LockOptions.forCommandLine(e.getMessage()));
            out.flush();
            return Main.FAILURE;
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }

    /** With --resource: a table of who holds the lock, or each permit, as the lock service tells now. */
    private void holders(DistributedLock<?> service, PrintWriter out) {
        if (resource == null) {
            if (permits != null) {
                throw new ParameterException(spec.commandLine(), "--permits is for --resource: name the resource too");
            }
            return;
        }
        List<String> resources = new ArrayList<>();
        if (permits == null) {
            resources.add(resource);
        } else {
            LockOptions.permitsError(permits).ifPresent(error -> {
                throw new ParameterException(spec.commandLine(), error);
            });
            DistributedSemaphore<?> semaphore = DistributedSemaphore.of(service, resource, permits);
            for (int permit = 1; permit <= permits; permit++) {
                resources.add(semaphore.permit(permit));
            }
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"resource", "holder", "fencing token"});
        for (String name : resources) {
            Optional<LockHolder> holder = service.holder(name);
            rows.add(new String[] {
                name,
                holder.map(h -> h.name().isEmpty() ? "(unnamed)" : h.name()).orElse("free"),
                holder.flatMap(h -> h.fencingToken().isPresent()
                                ? Optional.of(Long.toString(h.fencingToken().getAsLong()))
                                : Optional.empty())
                        .orElse("-")
            });
        }
        out.println();
        Text.table(rows).forEach(out::println);
    }

    /** A Redlock over the nodes named, with the settings {@code run} uses. */
    private Redlock open(LockOptions.LockService backend) {
        try {
            return (Redlock) backend.open();
        } catch (IllegalArgumentException e) {
            // A bad URI, a node listed twice, no backend or several: the command line is wrong.
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }
}
