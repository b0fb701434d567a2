package io.quorumlock.redis.client;

import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;

/** What a failed TLS connection means, in one line with the remedy, for the node's evidence. */
public final class TlsErrors {

    static final String PLAIN_TEXT = "not TLS: the node answered in plain text; use redis://";
    public static final String CLIENT_CERTIFICATE_REQUIRED =
            "TLS: the node requires a client certificate: give one (tlsClientCertificate, or --tls-cert and --tls-key in the CLI)";

    private static final Pattern ALERT = Pattern.compile("Received fatal alert: (\\w+)");

    private TlsErrors() {}

    /** The handshake failed: a refused certificate, plain text, or an alert from the node. */
    static IOException handshakeFailed(SSLException e, int firstByte, TlsConfig config) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof TlsConfig.Refusal refusal) {
                return misconfigured(refusal.getMessage(), e);
            }
        }
        if (plainText(firstByte)) {
            return misconfigured(PLAIN_TEXT, e);
        }
        IOException alert = alert(e, config);
        if (alert != null) {
            return alert;
        }
        String message = String.valueOf(e.getMessage());
        if (message.contains("PKIX path")) { // a context of the user's: its trust manager does not say whose
            return misconfigured(
                    "TLS: untrusted certificate: trust the CA that issued it in the SSLContext given to tls()", e);
        }
        if (message.contains("No subject alternative") || message.contains("No name matching")) {
            return misconfigured("TLS: hostname mismatch: " + message, e);
        }
        return new IOException("TLS handshake failed: " + message, e);
    }

    /** The node closed the connection before the handshake was done. */
    static IOException closedInHandshake(int firstByte) {
        return plainText(firstByte)
                ? misconfigured(PLAIN_TEXT, null)
                : new IOException(
                        "TLS handshake failed: the node closed the connection (does it serve TLS on this port?)");
    }

    /** After the handshake: an alert the node sent once it had checked our certificate, or a broken record. */
    static IOException afterHandshake(SSLException e, TlsConfig config) {
        IOException alert = alert(e, config);
        return alert != null ? alert : new IOException("TLS: " + e.getMessage(), e);
    }

    private static IOException alert(SSLException e, TlsConfig config) {
        Matcher matcher = ALERT.matcher(String.valueOf(e.getMessage()));
        if (!matcher.find()) {
            return null;
        }
        String alert = matcher.group(1);
        boolean presented = Boolean.TRUE.equals(config.clientCertificate());
        return switch (alert) {
            case "certificate_required" -> misconfigured(CLIENT_CERTIFICATE_REQUIRED, e);
            case "handshake_failure" ->
                presented
                        ? misconfigured(
                                "TLS: the node refused the handshake (handshake_failure): no TLS version or"
                                        + " cipher suite in common",
                                e)
                        : misconfigured(
                                "TLS: the node refused the handshake (handshake_failure): it may require a"
                                        + " client certificate (tlsClientCertificate, or --tls-cert and --tls-key in the CLI)",
                                e);
            case "bad_certificate", "unknown_ca", "certificate_unknown", "unsupported_certificate", "decrypt_error" ->
                presented
                        ? misconfigured(
                                "TLS: the node refused our client certificate (" + alert
                                        + "): it must be issued by a CA the node trusts (its tls-ca-cert-file)",
                                e)
                        : misconfigured(CLIENT_CERTIFICATE_REQUIRED + " (the node sent " + alert + ")", e);
            case "certificate_expired", "certificate_revoked" ->
                misconfigured("TLS: the node refused our client certificate (" + alert + "): renew it", e);
            case "protocol_version", "insufficient_security" ->
                misconfigured("TLS: no TLS version or cipher suite in common with the node (" + alert + ")", e);
            default -> new IOException("TLS: the node sent the alert " + alert, e);
        };
    }

    /** A reply of a plain Redis port: RESP starts with one of {@code +-:$*}, inline text with a letter. */
    private static boolean plainText(int firstByte) {
        return firstByte == '+'
                || firstByte == '-'
                || firstByte == ':'
                || firstByte == '$'
                || firstByte == '*'
                || (firstByte >= 'A' && firstByte <= 'z');
    }

    private static Wire.Failure misconfigured(String message, Throwable cause) {
        return new Wire.Failure(Reply.Kind.MISCONFIGURED, message, cause);
    }
}
