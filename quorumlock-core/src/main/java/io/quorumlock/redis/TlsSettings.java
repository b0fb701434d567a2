package io.quorumlock.redis;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.internal.Settings;
import io.quorumlock.redis.client.NodeAddress;
import io.quorumlock.redis.client.TlsConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The TLS settings of a {@link RedlockBuilder}: checked against each other and the nodes, and made a {@link TlsConfig}. */
final class TlsSettings {

    private static final Logger log = LoggerFactory.getLogger(Redlock.class);

    SSLContext context;
    Path caBundle;
    Path certificate;
    Path key;
    boolean clientCertificateSet;
    boolean insecureTrustAll;

    TlsConfig config() {
        if (context != null) {
            return TlsConfig.of(context);
        }
        if (insecureTrustAll) {
            log.warn("insecureTrustAllCertificates(): the certificates of the rediss:// nodes are not verified, so"
                    + " anyone on the network path can pose as a node and grant locks; give the nodes' CA with"
                    + " tlsCaBundle instead");
            return TlsConfig.trustingAll(certificate, key);
        }
        return TlsConfig.fromPem(caBundle, certificate, key);
    }

    /** The TLS settings agree with each other and with the nodes. */
    void validate(List<NodeAddress> addresses) {
        List<String> set = new ArrayList<>();
        List<String> settings = new ArrayList<>(); // as the builder's methods are named
        if (context != null) {
            set.add("tls(SSLContext)");
            settings.add("tls");
        }
        if (caBundle != null) {
            set.add("tlsCaBundle");
            settings.add("tlsCaBundle");
        }
        if (clientCertificateSet) {
            set.add("tlsClientCertificate");
            settings.add("tlsClientCertificate");
        }
        if (insecureTrustAll) {
            set.add("insecureTrustAllCertificates()");
            settings.add("insecureTrustAllCertificates");
        }
        if (set.isEmpty()) {
            return;
        }
        Settings.requireArgument(
                addresses.stream().anyMatch(NodeAddress::tls),
                settings.get(0),
                "%s set, but no node is rediss://: write the nodes as rediss://host:port to connect with TLS",
                String.join(" and ", set));
        Settings.requireArgument(
                context == null || set.size() == 1,
                "tls",
                "%s set: give the trust and the client key in the SSLContext, or drop tls(SSLContext)",
                String.join(" and ", set));
        Settings.requireArgument(
                !insecureTrustAll || caBundle == null,
                "insecureTrustAllCertificates",
                "insecureTrustAllCertificates() and tlsCaBundle set: drop"
                        + " insecureTrustAllCertificates() to verify the nodes against the bundle");
        if (clientCertificateSet && (certificate == null || key == null)) {
            throw new IllegalSettingException(
                    "tlsClientCertificate",
                    certificate == null ? 0 : 1,
                    "tlsClientCertificate needs both files, was certificate " + certificate + " and key " + key
                            + ": give the PEM certificate and its PKCS#8 key");
        }
    }
}
