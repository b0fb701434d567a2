package io.quorumlock.redis.client;

import java.util.ArrayList;
import java.util.List;

/**
 * What a new connection sends before any request: AUTH and SELECT, which the node must accept
 * before a request may go; the connection's names for operators ({@code CLIENT LIST}) and the
 * scripts to load, pipelined with the requests and their errors ignored (a refused load makes
 * EVALSHA fall back to EVAL); and how a refusal of the set-up reads.
 *
 * @param command the command as an operator knows it, for messages
 * @param expected what a Redis server answers it with
 * @param holdsRequests whether requests are held back until it is answered
 * @param required whether an error fails the connection
 * @param words the command's words
 */
record SetUp(String command, Reply expected, boolean holdsRequests, boolean required, String... words) {

    /** The library's version, for CLIENT SETINFO; null when not run from its jar. */
    private static final String VERSION = SetUp.class.getPackage().getImplementationVersion();

    /** The set-up of a connection to {@code address}, in the order it is sent. */
    static List<SetUp> of(NodeAddress address, List<Script> scripts) {
        List<SetUp> steps = new ArrayList<>();
        if (address.password().isPresent()) {
            String password = address.password().get();
            steps.add(
                    address.user().isPresent()
                            ? new SetUp(
                                    "AUTH",
                                    Reply.Simple.OK,
                                    true,
                                    true,
                                    "AUTH",
                                    address.user().get(),
                                    password)
                            : new SetUp("AUTH", Reply.Simple.OK, true, true, "AUTH", password));
        }
        if (address.database() != 0) {
            steps.add(new SetUp("SELECT", Reply.Simple.OK, true, true, "SELECT", Integer.toString(address.database())));
        }
        if (address.sentinels().isPresent()) {
            // The node a sentinel named may be a replica by now: no request goes to one. A user
            // that may not run ROLE is served all the same (a replica refuses a write as READONLY).
            steps.add(new SetUp("ROLE", null, true, false, "ROLE"));
        }
        steps.add(new SetUp("CLIENT SETNAME", Reply.Simple.OK, false, false, "CLIENT", "SETNAME", "quorumlock"));
        steps.add(new SetUp(
                "CLIENT SETINFO", Reply.Simple.OK, false, false, "CLIENT", "SETINFO", "LIB-NAME", "quorumlock"));
        if (VERSION != null) {
            steps.add(new SetUp(
                    "CLIENT SETINFO", Reply.Simple.OK, false, false, "CLIENT", "SETINFO", "LIB-VER", VERSION));
        }
        for (Script script : scripts) {
            steps.add(new SetUp(
                    "SCRIPT LOAD", new Reply.Bulk(script.sha1()), false, false, "SCRIPT", "LOAD", script.source()));
        }
        return steps;
    }

    /** Whether this is the check that a node the sentinels named is the master. */
    boolean role() {
        return command.equals("ROLE");
    }

    /** Whether {@code reply} to ROLE says master. */
    static boolean isMaster(Reply reply) {
        return role(reply).equals("master");
    }

    /** What {@code reply} to ROLE says the node is ({@code master}, {@code slave}, ...), or its shape. */
    static String role(Reply reply) {
        return reply instanceof Reply.Array array
                        && !array.items().isEmpty()
                        && array.items().get(0) instanceof Reply.Bulk kind
                ? kind.text()
                : Reply.shape(reply);
    }

    /** The node the sentinels named, {@code at}, answered ROLE as a replica: asked again. */
    static Reply.Failure notTheMaster(Locator.Result at, Reply role) {
        return new Reply.Failure(
                Reply.Kind.NOT_SENT,
                "not sent: " + at.host() + ":" + at.address().getPort() + " is not the master (ROLE: "
                        + NodeErrors.shortened(role(role)) + "); asking the sentinels again");
    }

    /** How many replicas a master's {@code reply} to ROLE lists connected; 0 for a replica or another shape. */
    static int replicas(Reply reply) {
        return isMaster(reply)
                        && reply instanceof Reply.Array array
                        && array.items().size() >= 3
                        && array.items().get(2) instanceof Reply.Array listed
                ? listed.items().size()
                : 0;
    }

    /**
     * Sent with the set-up, as requests: their replies come before any request's, so the node's
     * start and whether it fsyncs every write are known before the first reply to a request on the
     * connection. A node that refuses INFO or CONFIG (renamed or denied) still serves the lock. One
     * CONFIG GET for both settings: Redis 6 takes one pattern only.
     */
    static final List<Command> PROBES = List.of(Command.info("server"), Command.configGet("append*"));

    /**
     * The failure that every request held back gets when AUTH or SELECT is refused with {@code
     * error}: a configuration error with its remedy, or a refusal. The password never goes into it,
     * though a server may echo what it was sent.
     */
    static Reply.Failure refused(NodeAddress address, String error) {
        String text = address.password().map(p -> error.replace(p, "***")).orElse(error);
        String misconfiguration = NodeErrors.misconfiguration(text);
        return misconfiguration != null
                ? new Reply.Failure(Reply.Kind.MISCONFIGURED, "not sent: " + misconfiguration)
                : new Reply.Failure(
                        Reply.Kind.NOT_SENT,
                        "not sent: the node refused the connection set-up: " + NodeErrors.shortened(text));
    }
}
