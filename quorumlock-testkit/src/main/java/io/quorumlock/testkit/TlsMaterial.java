package io.quorumlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A throwaway CA and the certificates for TLS tests, generated when created (nothing to commit):
 * a server certificate for the given names and a client certificate, each with its key, all as
 * PEM files in a temporary directory that {@link #close()} deletes. Keys are unencrypted PKCS#8:
 * the server's EC P-256, the client's RSA 2048. Valid for a day.
 *
 * <pre>{@code
 * try (TlsMaterial tls = TlsMaterial.generate();
 *         RedisServer node = RedisServer.startTls(tls, false)) {
 *     Redlock lock = Redlock.builder().node(node.uri()).tlsCaBundle(tls.caCertificate()).build();
 * }
 * }</pre>
 *
 * <p>Needs Bouncy Castle ({@code org.bouncycastle:bcpkix-jdk18on}, test scope), an optional
 * dependency of the kit. Generation takes well under a second.
 */
public final class TlsMaterial implements AutoCloseable {

    private static final Duration VALIDITY = Duration.ofDays(1);

    private final Path dir;
    private final String caName;
    private final KeyStore trust;
    private final KeyStore client;
    private final char[] storePassword = UUID.randomUUID().toString().toCharArray();

    private TlsMaterial(Path dir, String caName, KeyStore trust, KeyStore client) {
        this.dir = dir;
        this.caName = caName;
        this.trust = trust;
        this.client = client;
    }

    /**
     * A CA, a server certificate for {@code 127.0.0.1} and {@code localhost}, and a client certificate.
     *
     * @throws IllegalStateException if Bouncy Castle is not on the class path, naming the dependency to add
     */
    public static TlsMaterial generate() {
        return generate("127.0.0.1", "localhost");
    }

    /**
     * A CA, a server certificate for {@code serverNames} (IP addresses or DNS names: its subject
     * alternative names; a certificate for another name than the one connected to makes a
     * hostname mismatch), and a client certificate.
     *
     * @throws IllegalStateException if Bouncy Castle is not on the class path, naming the dependency to add
     */
    public static TlsMaterial generate(String... serverNames) {
        if (serverNames.length == 0) {
            throw new IllegalArgumentException("give at least one server name, such as 127.0.0.1");
        }
        requireBouncyCastle();
        Path dir = null;
        try {
            dir = Files.createTempDirectory("quorumlock-tls-");
            String caName = "quorumlock test CA " + UUID.randomUUID().toString().substring(0, 8);
            KeyPair caKeys = ec();
            X509Certificate ca = Certificates.ca(caName, caKeys, VALIDITY);
            KeyPair serverKeys = ec();
            X509Certificate server = Certificates.leaf(
                    serverNames[0], List.of(serverNames), serverKeys.getPublic(), ca, caKeys, VALIDITY);
            KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
            rsa.initialize(2048);
            KeyPair clientKeys = rsa.generateKeyPair();
            X509Certificate clientCert = Certificates.leaf(
                    "quorumlock test client", List.of(), clientKeys.getPublic(), ca, caKeys, VALIDITY);
            write(dir.resolve("ca.pem"), pem("CERTIFICATE", ca.getEncoded()), false);
            write(dir.resolve("server.pem"), pem("CERTIFICATE", server.getEncoded()), false);
            write(
                    dir.resolve("server.key"),
                    pem("PRIVATE KEY", serverKeys.getPrivate().getEncoded()),
                    true);
            write(dir.resolve("client.pem"), pem("CERTIFICATE", clientCert.getEncoded()), false);
            write(
                    dir.resolve("client.key"),
                    pem("PRIVATE KEY", clientKeys.getPrivate().getEncoded()),
                    true);
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", ca);
            KeyStore client = KeyStore.getInstance("PKCS12");
            client.load(null, null);
            TlsMaterial material = new TlsMaterial(dir, caName, trust, client);
            client.setKeyEntry(
                    "client", clientKeys.getPrivate(), material.storePassword, new X509Certificate[] {clientCert});
            return material;
        } catch (IOException e) {
            deleteIfMade(dir);
            throw new UncheckedIOException("cannot write the TLS material", e);
        } catch (Exception e) {
            deleteIfMade(dir);
            throw new IllegalStateException("cannot generate the TLS material: " + e, e);
        }
    }

    /** {@return the directory that holds the PEM files} */
    public Path dir() {
        return dir;
    }

    /** {@return the CA's common name, such as {@code quorumlock test CA 1a2b3c4d}: unique to this material} */
    public String caName() {
        return caName;
    }

    /** {@return the CA certificate (PEM): the bundle a client trusts, and the node checks client certificates by} */
    public Path caCertificate() {
        return dir.resolve("ca.pem");
    }

    /** {@return the server certificate (PEM), for the names given to {@link #generate(String...)}} */
    public Path serverCertificate() {
        return dir.resolve("server.pem");
    }

    /** {@return the server's private key (PKCS#8 PEM, EC P-256, readable by the owner only)} */
    public Path serverKey() {
        return dir.resolve("server.key");
    }

    /** {@return the client certificate (PEM), issued by the CA, for mutual TLS} */
    public Path clientCertificate() {
        return dir.resolve("client.pem");
    }

    /** {@return the client's private key (PKCS#8 PEM, RSA 2048, readable by the owner only)} */
    public Path clientKey() {
        return dir.resolve("client.key");
    }

    /**
     * A client context that trusts the CA and presents the client certificate, without checking
     * host names itself (that is up to the client using it).
     */
    public SSLContext clientContext() {
        try {
            TrustManagerFactory trustFactory =
                    TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trustFactory.init(trust);
            KeyManagerFactory keyFactory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keyFactory.init(client, storePassword);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyFactory.getKeyManagers(), trustFactory.getTrustManagers(), null);
            return context;
        } catch (Exception e) {
            throw new IllegalStateException("cannot build a TLS context from the material: " + e, e);
        }
    }

    /** Deletes the files. Idempotent. */
    @Override
    public void close() {
        Processes.deleteTree(dir);
    }

    @Override
    public String toString() {
        return "TlsMaterial[" + caName + ", " + dir + "]";
    }

    private static void deleteIfMade(Path dir) {
        if (dir != null) {
            Processes.deleteTree(dir);
        }
    }

    private static KeyPair ec() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        return generator.generateKeyPair();
    }

    private static String pem(String type, byte[] der) {
        String body = Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der);
        return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
    }

    private static void write(Path file, String text, boolean secret) throws IOException {
        Files.createFile(file);
        if (secret && file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        }
        Files.writeString(file, text, StandardCharsets.US_ASCII);
    }

    private static void requireBouncyCastle() {
        try {
            Class.forName(
                    "org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder",
                    false,
                    TlsMaterial.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(
                    "TlsMaterial needs Bouncy Castle on the class path: add the dependency"
                            + " org.bouncycastle:bcpkix-jdk18on:" + KitVersions.of("bouncycastle", "1.87")
                            + " (test scope); quorumlock-testkit leaves it optional",
                    e);
        }
    }
}
