package io.quorumlock.cli.lock;

import io.quorumlock.ServerAnswer;
import io.quorumlock.redis.NodeCheck;
import io.quorumlock.redis.NodeCheckReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What {@code run} and {@code check} say about a Redis node that refused for a configuration
 * error: one reason per node that names the setting at fault on this command line (the node's URI,
 * {@value LockOptions#PASSWORD_ENV}, {@code redis.password} in the config file) and the remedy,
 * rather than the node's own error text, which the library's log keeps (-v).
 *
 * @param endpoints the Redis URIs as given, in the order of the nodes
 * @param passwordSetting where the password for URIs without one came from, if any: {@value
 *     LockOptions#PASSWORD_ENV} or {@code redis.password in FILE}
 */
public record NodeProblems(List<String> endpoints, Optional<String> passwordSetting) {

    /** How a check finding of a configuration error starts; it ends with {@code )}. */
    private static final String CHECK_PREFIX = ServerAnswer.Kind.MISCONFIGURED.description() + " (";

    /** The finding of {@code check} for a Redis Cluster member, which {@code run} refuses too. */
    public static final String CLUSTER_MEMBER = "is a Redis Cluster member";

    public NodeProblems {
        endpoints = List.copyOf(endpoints);
    }

    /**
     * Why node {@code index} refused, as words that follow its URI: {@code has no password, but
     * QUORUMLOCK_REDIS_PASSWORD gives one: unset QUORUMLOCK_REDIS_PASSWORD, or set a password on the
     * node (requirepass)}; for a configuration error this class does not know, {@code refused with a
     * configuration error: } and the library's evidence.
     *
     * @param detail the evidence of the node's {@link ServerAnswer.Kind#MISCONFIGURED} vote
     */
    public String reason(int index, String detail) {
        boolean inUri = index < endpoints.size() && uriHasPassword(endpoints.get(index));
        String setting = inUri ? "its URI" : passwordSetting.orElse("the password setting");
        if (detail.contains("the node has no password")) {
            String remove = inUri
                    ? "remove the password from its URI"
                    : passwordSetting
                            .map(s -> s.equals(LockOptions.PASSWORD_ENV)
                                    ? "unset " + s
                                    : "remove " + s.replaceFirst(" in ", " from "))
                            .orElse("remove the password");
            return "has no password, but " + setting + " gives one: " + remove
                    + ", or set a password on the node (requirepass)";
        }
        if (detail.contains("WRONGPASS")) {
            return "refused the password that " + setting + " gives (WRONGPASS): check it, and the user in its URI,"
                    + " against the node's requirepass or ACL";
        }
        if (detail.contains("NOAUTH")) {
            return "requires a password and none was given (NOAUTH): set " + LockOptions.PASSWORD_ENV
                    + " or redis.password in the config file, or give it in the node's URI";
        }
        return "refused with a configuration error: " + detail;
    }

    /** The lines {@code run} prints for each node of {@code answers} that refused with a configuration error. */
    public List<String> lines(List<ServerAnswer> answers) {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < answers.size(); i++) {
            ServerAnswer outcome = answers.get(i);
            if (outcome.kind() == ServerAnswer.Kind.MISCONFIGURED) {
                lines.add(outcome.server() + " " + reason(i, outcome.detail()));
            }
        }
        return lines;
    }

    /** {@code report} with each configuration error's finding told as {@link #reason} tells it. */
    public NodeCheckReport rewrite(NodeCheckReport report) {
        List<NodeCheck> nodes = new ArrayList<>();
        for (int i = 0; i < report.nodes().size(); i++) {
            NodeCheck node = report.nodes().get(i);
            int index = i;
            List<String> findings = new ArrayList<>();
            for (String finding : node.findings()) {
                findings.add(misconfiguration(finding)
                        .map(detail -> reason(index, detail))
                        .orElse(finding));
            }
            nodes.add(new NodeCheck(
                    node.node(), node.role(), node.runId(), node.persistence(), node.verdict(), findings));
        }
        return new NodeCheckReport(nodes);
    }

    /** The evidence inside a check finding of a configuration error, if it is one. */
    public static Optional<String> misconfiguration(String finding) {
        return finding.startsWith(CHECK_PREFIX) && finding.endsWith(")")
                ? Optional.of(finding.substring(CHECK_PREFIX.length(), finding.length() - 1))
                : Optional.empty();
    }

    /** Whether a Redis URI carries a password: userinfo without a ':' is all password, else what follows it. */
    static boolean uriHasPassword(String uri) {
        int scheme = uri.indexOf("://");
        String rest = scheme < 0 ? uri : uri.substring(scheme + 3);
        int at = rest.lastIndexOf('@');
        if (at < 0) {
            return false;
        }
        String userInfo = rest.substring(0, at);
        int colon = userInfo.indexOf(':');
        return colon < 0 ? !userInfo.isEmpty() : colon + 1 < userInfo.length();
    }
}
