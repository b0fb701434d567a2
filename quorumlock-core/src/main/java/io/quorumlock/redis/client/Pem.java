package io.quorumlock.redis.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads PEM files: certificates (a CA bundle, a certificate chain) and unencrypted PKCS#8 private
 * keys, RSA or EC. Errors name the setting, the file and the formats accepted; they never quote a
 * key.
 */
final class Pem {

    /** Files larger than this are no PEM bundle anyone means to give. */
    private static final long MAX_FILE_BYTES = 4 << 20;

    private static final Pattern BLOCK =
            Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]*?)-----END \\1-----", Pattern.DOTALL);

    private static final String KEY_FORMATS =
            "accepted: an unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----), RSA or EC";

    private Pem() {}

    /**
     * The certificates in {@code file}, in order.
     *
     * @throws IllegalArgumentException if it cannot be read or holds none
     */
    static List<X509Certificate> certificates(Path file, String setting) {
        String text = read(file, setting);
        List<X509Certificate> certificates = new ArrayList<>();
        Matcher block = BLOCK.matcher(text);
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            while (block.find()) {
                if (block.group(1).equals("CERTIFICATE")) {
                    byte[] der = decode(block.group(2), file, setting);
                    certificates.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der)));
                }
            }
        } catch (CertificateException e) {
            throw new IllegalArgumentException(
                    setting + ": " + file + " holds a certificate that does not parse (" + e.getMessage()
                            + "): give PEM certificates (-----BEGIN CERTIFICATE-----)",
                    e);
        }
        if (certificates.isEmpty()) {
            throw new IllegalArgumentException(setting + ": " + file
                    + " holds no certificate: give PEM certificates (-----BEGIN CERTIFICATE-----)");
        }
        return certificates;
    }

    /**
     * The private key in {@code file}.
     *
     * @throws IllegalArgumentException if it cannot be read or is not an unencrypted PKCS#8 RSA or EC key
     */
    static PrivateKey privateKey(Path file, String setting) {
        String text = read(file, setting);
        Matcher block = BLOCK.matcher(text);
        while (block.find()) {
            String type = block.group(1);
            switch (type) {
                case "PRIVATE KEY" -> {
                    return pkcs8(decode(block.group(2), file, setting), file, setting);
                }
                case "RSA PRIVATE KEY", "EC PRIVATE KEY" ->
                    throw new IllegalArgumentException(setting + ": " + file
                            + " holds a " + type.substring(0, type.indexOf(' ')) + " key in the older form (-----BEGIN "
                            + type + "-----); " + KEY_FORMATS + "; convert it with: openssl pkcs8 -topk8 -nocrypt -in "
                            + file.getFileName() + " -out key.pk8.pem");
                case "ENCRYPTED PRIVATE KEY" ->
                    throw new IllegalArgumentException(setting + ": " + file
                            + " holds an encrypted key, and no key password is taken; " + KEY_FORMATS
                            + "; decrypt it into a file only this user can read: openssl pkcs8 -topk8 -nocrypt -in "
                            + file.getFileName() + " -out key.pk8.pem");
                default -> {} // a certificate beside the key, parameters: skipped
            }
        }
        throw new IllegalArgumentException(setting + ": " + file + " holds no private key; " + KEY_FORMATS);
    }

    private static PrivateKey pkcs8(byte[] der, Path file, String setting) {
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
        for (String algorithm : List.of("RSA", "EC", "RSASSA-PSS")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException notThisOne) {
                // try the next algorithm
            }
        }
        throw new IllegalArgumentException(setting + ": " + file
                + " holds a PKCS#8 key that is neither RSA nor EC, or is damaged; " + KEY_FORMATS);
    }

    private static byte[] decode(String base64, Path file, String setting) {
        try {
            return Base64.getMimeDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(setting + ": " + file + " holds a PEM block that is not valid base64");
        }
    }

    private static String read(Path file, String setting) {
        try {
            if (Files.size(file) > MAX_FILE_BYTES) {
                throw new IllegalArgumentException(
                        setting + ": " + file + " is larger than " + (MAX_FILE_BYTES >> 20) + " MiB: give a PEM file");
            }
            return Files.readString(file, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    setting + ": cannot read " + file + " (" + e.getClass().getSimpleName()
                            + "): give a readable PEM file",
                    e);
        }
    }
}
