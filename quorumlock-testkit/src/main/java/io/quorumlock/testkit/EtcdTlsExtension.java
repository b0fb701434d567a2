package io.quorumlock.testkit;

/**
 * A JUnit 5 extension for TLS tests against etcd: for a test class, one {@link TlsMaterial} and two
 * members that serve TLS with it, the second requiring a client certificate; started by the first
 * test that asks, skipped (with the reason) where there is no etcd binary, closed after the class.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final EtcdTlsExtension etcd = new EtcdTlsExtension();
 *
 * EtcdLock.builder().endpoints(etcd.server().tls().endpoint())
 *         .tlsCaBundle(etcd.server().material().caCertificate()).build();
 * }</pre>
 */
public final class EtcdTlsExtension extends ServerPerClass<EtcdTlsExtension.Members> {

    public EtcdTlsExtension() {
        super(EtcdCluster::available, EtcdCluster::unavailableReason, Members::start);
    }

    /**
     * The certificates and the members made with them.
     *
     * @param material the CA, the server's certificate (127.0.0.1, localhost) and a client certificate
     * @param tls a member that serves TLS
     * @param mutual a member that serves TLS and requires a client certificate issued by the CA
     */
    public record Members(TlsMaterial material, EtcdTlsServer tls, EtcdTlsServer mutual) implements AutoCloseable {

        static Members start() {
            TlsMaterial material = TlsMaterial.generate();
            EtcdTlsServer tls = null;
            try {
                tls = EtcdTlsServer.start(material, false);
                return new Members(material, tls, EtcdTlsServer.start(material, true));
            } catch (RuntimeException e) {
                if (tls != null) {
                    tls.close();
                }
                material.close();
                throw e;
            }
        }

        @Override
        public void close() {
            try {
                mutual.close();
                tls.close();
            } finally {
                material.close();
            }
        }
    }
}
