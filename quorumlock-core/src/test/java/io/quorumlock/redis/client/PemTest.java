package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.TlsMaterial;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.util.Base64;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PEM certificates and PKCS#8 keys, and what the errors say about files that are neither. */
class PemTest {

    private static TlsMaterial material;

    @TempDir
    Path dir;

    @BeforeAll
    static void generate() {
        material = TlsMaterial.generate();
    }

    @AfterAll
    static void delete() {
        material.close();
    }

    private Path file(String name, String text) throws Exception {
        return Files.writeString(dir.resolve(name), text);
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder().encodeToString(der) + "\n-----END " + type
                + "-----\n";
    }

    @Test
    void readsRsaAndEcKeysInPkcs8() throws Exception {
        for (String algorithm : new String[] {"RSA", "EC"}) {
            KeyPairGenerator generator = KeyPairGenerator.getInstance(algorithm);
            PrivateKey key = generator.generateKeyPair().getPrivate();
            Path file = file(algorithm + ".key", "a comment\n" + pem("PRIVATE KEY", key.getEncoded()));
            assertThat(Pem.privateKey(file, "setting").getAlgorithm()).isEqualTo(algorithm);
        }
        assertThat(Pem.privateKey(material.clientKey(), "setting").getAlgorithm())
                .isEqualTo("RSA");
        assertThat(Pem.privateKey(material.serverKey(), "setting").getAlgorithm())
                .isEqualTo("EC");
    }

    @Test
    void readsABundleOfCertificates() throws Exception {
        Path bundle = file(
                "bundle.pem",
                Files.readString(material.caCertificate()) + "text between\n"
                        + Files.readString(material.clientCertificate()));
        assertThat(Pem.certificates(bundle, "tlsCaBundle")).hasSize(2);
    }

    @Test
    void olderKeyFormsAreRefusedWithTheConversion() throws Exception {
        Path rsa = file("rsa.key", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n");
        assertThatThrownBy(() -> Pem.privateKey(rsa, "tlsClientCertificate (key)"))
                .hasMessageContainingAll(
                        "tlsClientCertificate (key): " + rsa,
                        "RSA key in the older form",
                        "accepted: an unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----), RSA or EC",
                        "openssl pkcs8 -topk8 -nocrypt -in rsa.key");
        Path ec = file("ec.key", "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n");
        assertThatThrownBy(() -> Pem.privateKey(ec, "k")).hasMessageContaining("EC key in the older form");
        Path encrypted =
                file("enc.key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n");
        assertThatThrownBy(() -> Pem.privateKey(encrypted, "k")).hasMessageContaining("encrypted key");
    }

    @Test
    void filesThatAreNotPemSaySo() throws Exception {
        Path garbage = file("garbage", "not a key at all");
        assertThatThrownBy(() -> Pem.privateKey(garbage, "k"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holds no private key");
        assertThatThrownBy(() -> Pem.certificates(garbage, "tlsCaBundle"))
                .hasMessageContaining("tlsCaBundle: " + garbage + " holds no certificate");
        Path damaged = file("damaged", pem("PRIVATE KEY", new byte[] {1, 2, 3}));
        assertThatThrownBy(() -> Pem.privateKey(damaged, "k"))
                .hasMessageContaining("neither RSA nor EC, or is damaged");
        Path missing = dir.resolve("missing.pem");
        assertThatThrownBy(() -> Pem.certificates(missing, "tlsCaBundle"))
                .hasMessageContaining("tlsCaBundle: cannot read " + missing + " (NoSuchFileException)");
    }

    @Test
    void errorsNeverQuoteTheKey() throws Exception {
        byte[] der = KeyPairGenerator.getInstance("EC")
                .generateKeyPair()
                .getPrivate()
                .getEncoded();
        String body = Base64.getMimeEncoder().encodeToString(der);
        Path cert = material.clientCertificate();
        Path key = file("other.key", pem("PRIVATE KEY", der));
        assertThatThrownBy(() -> Redlock.builder()
                        .node("rediss://127.0.0.1:1")
                        .tlsClientCertificate(cert, key)
                        .build())
                .hasMessageContaining("is not the key of the certificate")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(body.substring(10, 40)));
    }
}
