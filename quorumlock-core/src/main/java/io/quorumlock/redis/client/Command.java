package io.quorumlock.redis.client;

import java.nio.charset.StandardCharsets;

/**
 * One Redis command as the client sends it: {@code SET key value NX PX millis}, a script by
 * {@code EVALSHA} with one key and one or two arguments, {@code GET}, {@code PTTL}, {@code TYPE}, {@code INFO},
 * {@code CONFIG GET}, or, on a connection of {@link Subscriptions}, {@code SUBSCRIBE} and {@code
 * UNSUBSCRIBE} of one channel (the key). What a reply to it means is the sender's business; the client checks only that the reply
 * has a shape a Redis server answers the command with.
 *
 * @param millis the {@code PX} of a SET, or a script's second argument; -1 for none
 * @param script the script of a {@link Kind#SCRIPT}, else null
 */
public record Command(Kind kind, String key, String value, long millis, Script script) {

    /** The commands the client sends. */
    public enum Kind {
        /** {@code SET key value NX PX millis}. */
        SET_IF_ABSENT,
        /** {@code EVALSHA sha 1 key value [millis]}, or {@code EVAL} with the script's text. */
        SCRIPT,
        GET,
        PTTL,
        /** {@code TYPE key}: what kind of value a key holds, such as {@code string} or {@code hash}. */
        TYPE,
        INFO,
        CONFIG_GET,
        SUBSCRIBE,
        UNSUBSCRIBE,
        /** {@code WAIT replicas millis}: how many replicas acknowledged this connection's writes (the key). */
        WAIT,
        /** {@code ROLE}: master or replica, and a master's connected replicas. */
        ROLE,
        /** {@code CLUSTER NODES}: a cluster member's view of the cluster, one line per node. */
        CLUSTER_NODES,
        /** {@code ASKING}: the next command may use a slot this cluster node is importing. */
        ASKING
    }

    private static final Command ASKING_COMMAND = new Command(Kind.ASKING, "", null, -1, null);

    public static Command setIfAbsent(String key, String value, long millis) {
        return new Command(Kind.SET_IF_ABSENT, key, value, millis, null);
    }

    /** {@code script} with {@code key} and the argument {@code value}. */
    public static Command script(Script script, String key, String value) {
        return new Command(Kind.SCRIPT, key, value, -1, script);
    }

    /** {@code script} with {@code key} and the arguments {@code value} and {@code millis}. */
    public static Command script(Script script, String key, String value, long millis) {
        return new Command(Kind.SCRIPT, key, value, millis, script);
    }

    public static Command get(String key) {
        return new Command(Kind.GET, key, null, -1, null);
    }

    public static Command pttl(String key) {
        return new Command(Kind.PTTL, key, null, -1, null);
    }

    static Command subscribe(String channel) {
        return new Command(Kind.SUBSCRIBE, channel, null, -1, null);
    }

    static Command unsubscribe(String channel) {
        return new Command(Kind.UNSUBSCRIBE, channel, null, -1, null);
    }

    public static Command type(String key) {
        return new Command(Kind.TYPE, key, null, -1, null);
    }

    public static Command info(String section) {
        return new Command(Kind.INFO, section, null, -1, null);
    }

    /** {@code WAIT replicas millis}: the replicas are the key, as a number. */
    public static Command waitForReplicas(int replicas, long millis) {
        return new Command(Kind.WAIT, Integer.toString(replicas), null, millis, null);
    }

    /** {@code ROLE}: its answer also tells the link how many replicas the node has now. */
    /** How many replicas a master's answer to {@link #role} lists connected; 0 for a replica, a refusal or another shape. */
    public static int replicasListed(Reply role) {
        return SetUp.replicas(role);
    }

    /** Whether an answer to {@link #role} says the node is a master. */
    public static boolean saysMaster(Reply role) {
        return SetUp.isMaster(role);
    }

    public static Command role() {
        return new Command(Kind.ROLE, "", null, -1, null);
    }

    /** {@code CLUSTER NODES}. */
    public static Command clusterNodes() {
        return new Command(Kind.CLUSTER_NODES, "", null, -1, null);
    }

    /** {@code ASKING}. */
    static Command asking() {
        return ASKING_COMMAND;
    }

    public static Command configGet(String pattern) {
        return new Command(Kind.CONFIG_GET, pattern, null, -1, null);
    }

    /**
     * {@code text} as a node reads it, and sends it back (in a message's channel name): its UTF-8
     * bytes, decoded. The same string unless it holds a lone surrogate (such as U+D800 alone),
     * which UTF-8 cannot encode and which goes out as {@code '?'}: such a name and the name with
     * {@code '?'} in its place are one key and one channel on the nodes.
     */
    public static String asSent(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (Character.isSurrogate(text.charAt(i))) {
                return new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
            }
        }
        return text;
    }

    /**
     * How long a node may hold the reply back on purpose: a {@code WAIT}'s timeout, and the 100 ms
     * at most in which a server (at its default {@code hz 10}) notices that the timeout has passed.
     * The node is not silent meanwhile. 0 for any other command.
     */
    long blocksNanos() {
        return kind == Kind.WAIT ? (millis + 100) * 1_000_000 : 0;
    }

    /** Whether the reply tells how many replicas the node has ({@code ROLE}, {@code WAIT}): for its {@link Locator}. */
    public boolean aboutReplicas() {
        return kind == Kind.ROLE || kind == Kind.WAIT;
    }

    /** The command as an operator knows it, for messages. */
    public String name() {
        return switch (kind) {
            case SET_IF_ABSENT -> "SET";
            case SCRIPT -> script.description() + " (EVALSHA)";
            case GET -> "GET";
            case PTTL -> "PTTL";
            case TYPE -> "TYPE";
            case INFO -> "INFO";
            case CONFIG_GET -> "CONFIG GET";
            case SUBSCRIBE -> "SUBSCRIBE";
            case UNSUBSCRIBE -> "UNSUBSCRIBE";
            case WAIT -> "WAIT";
            case ROLE -> "ROLE";
            case CLUSTER_NODES -> "CLUSTER NODES";
            case ASKING -> "ASKING";
        };
    }

    /**
     * Whether {@code reply} has a shape a Redis server answers this command with. Any other shape
     * means the peer is no Redis server, or its stream is out of step: a protocol error.
     */
    public boolean fits(Reply reply) {
        if (reply instanceof Reply.Error || reply instanceof Reply.Failure) {
            return true;
        }
        return switch (kind) {
            case SET_IF_ABSENT -> reply.equals(Reply.Simple.OK) || reply == Reply.Nil.NIL;
            case SCRIPT -> reply instanceof Reply.Int;
            case GET -> reply instanceof Reply.Bulk || reply == Reply.Nil.NIL;
            case PTTL, WAIT -> reply instanceof Reply.Int;
            case TYPE, ASKING -> reply instanceof Reply.Simple;
            case INFO, CLUSTER_NODES -> reply instanceof Reply.Bulk;
            case CONFIG_GET, SUBSCRIBE, UNSUBSCRIBE, ROLE -> reply instanceof Reply.Array;
        };
    }
}
