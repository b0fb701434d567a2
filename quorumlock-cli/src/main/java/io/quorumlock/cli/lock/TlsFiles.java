package io.quorumlock.cli.lock;

import io.quorumlock.etcd.EtcdLockBuilder;
import io.quorumlock.redis.RedlockBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The TLS files of the {@code rediss://} nodes or the {@code https://} etcd members: each from the
 * command line ({@code --tls-ca}, {@code --tls-cert}, {@code --tls-key}), else from the config
 * file ({@code redis.tls.*} or {@code etcd.tls.*}).
 *
 * @param ca the CA bundle; empty for the JDK trust store
 * @param certificate the client certificate
 * @param key its private key
 */
public record TlsFiles(Optional<Path> ca, Optional<Path> certificate, Optional<Path> key) {

    /** No TLS files: the servers' certificates are checked against the JDK trust store. */
    public static final TlsFiles NONE = new TlsFiles(Optional.empty(), Optional.empty(), Optional.empty());

    /**
     * The files for the backend whose config file keys begin with {@code prefix} ({@code redis} or
     * {@code etcd}): each option given, else the file's key.
     *
     * @throws IllegalArgumentException if a file cannot be read, or only one of the certificate and its key is given
     */
    static TlsFiles of(Path caOption, Path certOption, Path keyOption, ConfigFile file, String prefix) {
        TlsFiles tls = new TlsFiles(
                file(caOption, file, prefix + ".tls.ca", "--tls-ca"),
                file(certOption, file, prefix + ".tls.cert", "--tls-cert"),
                file(keyOption, file, prefix + ".tls.key", "--tls-key"));
        if (tls.certificate().isPresent() != tls.key().isPresent()) {
            throw new IllegalArgumentException("--tls-cert and --tls-key (" + prefix + ".tls.cert, " + prefix
                    + ".tls.key) go together: give the client certificate and its key");
        }
        return tls;
    }

    private static Optional<Path> file(Path option, ConfigFile file, String key, String name) {
        Optional<Path> path = Optional.ofNullable(option).or(() -> file.get(key).map(Path::of));
        if (path.isPresent() && !Files.isReadable(path.get())) {
            throw new IllegalArgumentException(
                    name + " (" + key + "): cannot read " + path.get() + ": give a readable PEM file");
        }
        return path;
    }

    /** Whether any file is given. */
    public boolean any() {
        return ca.isPresent() || certificate.isPresent() || key.isPresent();
    }

    /** Gives the files to {@code builder}. */
    public RedlockBuilder configure(RedlockBuilder builder) {
        ca.ifPresent(builder::tlsCaBundle);
        certificate.ifPresent(cert -> builder.tlsClientCertificate(cert, key.orElseThrow()));
        return builder;
    }

    /** Gives the files to {@code builder}. */
    public EtcdLockBuilder configure(EtcdLockBuilder builder) {
        ca.ifPresent(builder::tlsCaBundle);
        certificate.ifPresent(cert -> builder.tlsClientCertificate(cert, key.orElseThrow()));
        return builder;
    }
}
