package io.quorumlock.testkit;

import java.math.BigInteger;
import java.security.KeyPair;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** Issues X.509 certificates with Bouncy Castle, for {@link TlsMaterial}; loaded only once it is known to be there. */
final class Certificates {

    private static final SecureRandom RANDOM = new SecureRandom();

    private Certificates() {}

    /** A self-signed CA certificate. */
    static X509Certificate ca(String name, KeyPair keys, Duration validity) throws Exception {
        X500Name subject = new X500Name("CN=" + name);
        X509v3CertificateBuilder builder = builder(subject, subject, keys.getPublic(), validity);
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        return sign(builder, keys);
    }

    /**
     * A certificate issued by the CA: for a server with {@code names} (IP addresses or DNS names)
     * as its subject alternative names, or for a client if {@code names} is empty.
     */
    static X509Certificate leaf(
            String commonName, List<String> names, PublicKey key, X509Certificate ca, KeyPair caKeys, Duration validity)
            throws Exception {
        X500Name issuer = X500Name.getInstance(ca.getSubjectX500Principal().getEncoded());
        X509v3CertificateBuilder builder = builder(issuer, new X500Name("CN=" + commonName), key, validity);
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        builder.addExtension(
                Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
        if (names.isEmpty()) {
            builder.addExtension(
                    Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth));
        } else {
            builder.addExtension(
                    Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
            GeneralName[] alternatives = names.stream()
                    .map(n -> new GeneralName(
                            n.chars().allMatch(c -> c == '.' || Character.isDigit(c)) || n.contains(":")
                                    ? GeneralName.iPAddress
                                    : GeneralName.dNSName,
                            n))
                    .toArray(GeneralName[]::new);
            builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(alternatives));
        }
        return sign(builder, caKeys);
    }

    private static X509v3CertificateBuilder builder(
            X500Name issuer, X500Name subject, PublicKey key, Duration validity) {
        Instant now = Instant.now();
        return new JcaX509v3CertificateBuilder(
                issuer,
                new BigInteger(64, RANDOM).add(BigInteger.ONE),
                Date.from(now.minus(Duration.ofMinutes(5))), // a little slack for clocks
                Date.from(now.plus(validity)),
                subject,
                key);
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, KeyPair signer) throws Exception {
        String algorithm = signer.getPrivate().getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
        ContentSigner contentSigner = new JcaContentSignerBuilder(algorithm).build(signer.getPrivate());
        return new JcaX509CertificateConverter().getCertificate(builder.build(contentSigner));
    }
}
