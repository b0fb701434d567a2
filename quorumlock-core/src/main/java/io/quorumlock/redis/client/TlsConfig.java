package io.quorumlock.redis.client;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.internal.Settings;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * How the client speaks TLS: the context its engines come from, and whether they check the
 * node's name. Server certificates are verified against the JDK trust store or a PEM CA bundle,
 * with hostname verification ({@code HTTPS} endpoint identification) and SNI. When the context is
 * ours, its trust manager explains a refusal: untrusted (whose certificate) or another name.
 */
public final class TlsConfig {

    private final SSLContext context;
    private final boolean verifyHostname;
    /** Whether a client certificate was configured; null if unknown (a context given by the user). */
    private final Boolean clientCertificate;

    private TlsConfig(SSLContext context, boolean verifyHostname, Boolean clientCertificate) {
        this.context = context;
        this.verifyHostname = verifyHostname;
        this.clientCertificate = clientCertificate;
    }

    /** Engines from a context the user built; its trust decides, with hostname verification on. */
    public static TlsConfig of(SSLContext context) {
        return new TlsConfig(context, true, null);
    }

    /**
     * Trusts the CAs in {@code caBundle}, or the JDK trust store if null; presents the client
     * certificate in {@code certificate} with its key in {@code key} if they are not null.
     *
     * @throws IllegalSettingException naming the setting and the file that is wrong
     */
    public static TlsConfig fromPem(Path caBundle, Path certificate, Path key) {
        X509ExtendedTrustManager trust;
        try {
            trust = new ExplainingTrustManager(caBundle == null ? defaultTrust() : bundleTrust(caBundle));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot set up the TLS trust store: " + e.getMessage(), e);
        }
        return new TlsConfig(context(keyManagers(certificate, key), trust), true, certificate != null);
    }

    /** Accepts every certificate and name: for {@code insecureTrustAllCertificates()} only. */
    public static TlsConfig trustingAll(Path certificate, Path key) {
        return new TlsConfig(context(keyManagers(certificate, key), new TrustingAll()), false, certificate != null);
    }

    /** A client engine for one node, with SNI for a host name and hostname verification unless insecure. */
    SSLEngine engine(String host, int port) {
        SSLEngine engine = context.createSSLEngine(host, port);
        engine.setUseClientMode(true);
        SSLParameters parameters = engine.getSSLParameters();
        if (verifyHostname) {
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
        }
        if (!isIpLiteral(host)) {
            parameters.setServerNames(List.of(new SNIHostName(host)));
        }
        engine.setSSLParameters(parameters);
        return engine;
    }

    /**
     * A blocking client socket over {@code plain}, connected to {@code host}, with the engines'
     * SNI and hostname verification; its handshake is done before it is returned, and a failed one
     * reads as a node's does ({@link TlsErrors}).
     */
    SSLSocket socket(Socket plain, String host, int port) throws IOException {
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(plain, host, port, true);
        socket.setUseClientMode(true);
        socket.setSSLParameters(engine(host, port).getSSLParameters());
        try {
            socket.startHandshake();
        } catch (javax.net.ssl.SSLException e) {
            socket.close();
            // As a node's handshake reads: an untrusted certificate names its subject and issuer.
            throw TlsErrors.handshakeFailed(e, -1, this);
        }
        return socket;
    }

    /** Whether a client certificate is presented: true, false, or null if unknown. */
    Boolean clientCertificate() {
        return clientCertificate;
    }

    private static boolean isIpLiteral(String host) {
        return host.indexOf(':') >= 0 || host.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'));
    }

    private static SSLContext context(KeyManager[] keys, TrustManager trust) {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys, new TrustManager[] {trust}, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    private static X509ExtendedTrustManager defaultTrust() throws GeneralSecurityException {
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init((KeyStore) null);
        return x509(factory.getTrustManagers());
    }

    private static X509ExtendedTrustManager bundleTrust(Path caBundle) throws GeneralSecurityException {
        List<X509Certificate> cas = Settings.parse("tlsCaBundle", -1, () -> Pem.certificates(caBundle, "tlsCaBundle"));
        KeyStore store = emptyStore();
        for (int i = 0; i < cas.size(); i++) {
            store.setCertificateEntry("ca-" + i, cas.get(i));
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        return x509(factory.getTrustManagers());
    }

    private static KeyManager[] keyManagers(Path certificate, Path key) {
        if (certificate == null) {
            return null;
        }
        List<X509Certificate> chain = Settings.parse(
                "tlsClientCertificate", 0, () -> Pem.certificates(certificate, "tlsClientCertificate (certificate)"));
        PrivateKey privateKey =
                Settings.parse("tlsClientCertificate", 1, () -> Pem.privateKey(key, "tlsClientCertificate (key)"));
        checkPair(chain.get(0), privateKey, certificate, key);
        try {
            // A password of the in-memory store only, never written anywhere.
            byte[] random = new byte[16];
            new SecureRandom().nextBytes(random);
            char[] password = HexFormat.of().formatHex(random).toCharArray();
            KeyStore store = emptyStore();
            store.setKeyEntry("client", privateKey, password, chain.toArray(new X509Certificate[0]));
            KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            factory.init(store, password);
            return factory.getKeyManagers();
        } catch (GeneralSecurityException e) {
            throw new IllegalSettingException(
                    "tlsClientCertificate",
                    "tlsClientCertificate: cannot use the certificate " + certificate + " with the key " + key + " ("
                            + e.getClass().getSimpleName() + ")");
        }
    }

    /** The key must be the certificate's: signs a test text with it and verifies it with the certificate. */
    private static void checkPair(X509Certificate certificate, PrivateKey key, Path certFile, Path keyFile) {
        String algorithm = switch (key.getAlgorithm()) {
            case "EC" -> "SHA256withECDSA";
            case "RSASSA-PSS" -> "RSASSA-PSS";
            default -> "SHA256withRSA";
        };
        boolean matches;
        try {
            byte[] text = "quorumlock".getBytes(StandardCharsets.US_ASCII);
            Signature signer = Signature.getInstance(algorithm);
            if (algorithm.equals("RSASSA-PSS")) {
                signer.setParameter(new java.security.spec.PSSParameterSpec(
                        "SHA-256", "MGF1", java.security.spec.MGF1ParameterSpec.SHA256, 32, 1));
            }
            signer.initSign(key);
            signer.update(text);
            byte[] signature = signer.sign();
            signer.initVerify(certificate.getPublicKey());
            signer.update(text);
            matches = signer.verify(signature);
        } catch (GeneralSecurityException e) {
            matches = false;
        }
        if (!matches) {
            throw new IllegalSettingException(
                    "tlsClientCertificate",
                    "tlsClientCertificate: the key in " + keyFile
                            + " is not the key of the certificate in " + certFile + " (subject "
                            + certificate.getSubjectX500Principal().getName()
                            + "): give the key the certificate was issued for");
        }
    }

    private static KeyStore emptyStore() throws GeneralSecurityException {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            return store;
        } catch (java.io.IOException e) {
            throw new GeneralSecurityException(e);
        }
    }

    private static X509ExtendedTrustManager x509(TrustManager[] managers) throws GeneralSecurityException {
        for (TrustManager manager : managers) {
            if (manager instanceof X509ExtendedTrustManager x509) {
                return x509;
            }
        }
        throw new GeneralSecurityException("no X.509 trust manager");
    }

    /** A certificate the trust manager refused, said in one line for the node's evidence. */
    static final class Refusal extends CertificateException {
        private static final long serialVersionUID = 1L;

        Refusal(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Delegates, and on a refusal tells an untrusted certificate from one for another name. */
    private static final class ExplainingTrustManager extends X509ExtendedTrustManager {
        private final X509ExtendedTrustManager delegate;

        ExplainingTrustManager(X509ExtendedTrustManager delegate) {
            this.delegate = delegate;
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            try {
                delegate.checkServerTrusted(chain, authType, engine);
            } catch (CertificateException e) {
                throw explain(chain, authType, engine.getPeerHost(), e);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            try {
                delegate.checkServerTrusted(chain, authType, socket);
            } catch (CertificateException e) {
                // A sentinel's, asked on a blocking socket: explained as a node's is.
                String host = socket instanceof javax.net.ssl.SSLSocket ssl && ssl.getHandshakeSession() != null
                        ? ssl.getHandshakeSession().getPeerHost()
                        : String.valueOf(socket.getInetAddress());
                throw explain(chain, authType, host, e);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            delegate.checkServerTrusted(chain, authType);
        }

        private CertificateException explain(X509Certificate[] chain, String authType, String host, Exception e) {
            X509Certificate leaf = chain[0];
            String whose = "subject " + leaf.getSubjectX500Principal().getName() + ", issuer "
                    + leaf.getIssuerX500Principal().getName();
            if (hasCause(e, java.security.cert.CertificateExpiredException.class)) {
                return new Refusal(
                        "TLS: the node's certificate has expired (" + whose + ", not after "
                                + leaf.getNotAfter().toInstant() + "): renew it",
                        e);
            }
            if (hasCause(e, java.security.cert.CertificateNotYetValidException.class)) {
                return new Refusal(
                        "TLS: the node's certificate is not valid yet (" + whose + ", not before "
                                + leaf.getNotBefore().toInstant() + "): check the clocks",
                        e);
            }
            try {
                delegate.checkServerTrusted(chain, authType); // the chain alone, without the name
            } catch (CertificateException untrusted) {
                return new Refusal(
                        "TLS: untrusted certificate (" + whose
                                + "): trust the CA that issued it (tlsCaBundle, or --tls-ca in the CLI)",
                        e);
            }
            return new Refusal(
                    "TLS: hostname mismatch: the node's certificate (" + whose + ") is for " + names(leaf) + ", not "
                            + host + ": connect by one of its names, or have it issued for " + host,
                    e);
        }

        private static String names(X509Certificate certificate) {
            List<String> names = new ArrayList<>();
            try {
                Collection<List<?>> alternatives = certificate.getSubjectAlternativeNames();
                if (alternatives != null) {
                    for (List<?> name : alternatives) {
                        int type = (Integer) name.get(0);
                        if (type == 2) {
                            names.add("DNS:" + name.get(1));
                        } else if (type == 7) {
                            names.add("IP:" + name.get(1));
                        }
                    }
                }
            } catch (CertificateException e) {
                // no names readable: said below
            }
            return names.isEmpty() ? "no subject alternative name" : String.join(", ", names);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            delegate.checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            delegate.checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            delegate.checkClientTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return delegate.getAcceptedIssuers();
        }
    }

    static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /** Trusts every certificate. */
    private static final class TrustingAll extends X509ExtendedTrustManager implements X509TrustManager {
        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {}

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            throw new CertificateException("a client does not check clients");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            throw new CertificateException("a client does not check clients");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("a client does not check clients");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
