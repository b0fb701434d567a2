package io.quorumlock.cli.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

class LockOptionsTest {

    @Command(name = "t")
    static final class WithLock implements Runnable {
        @Mixin
        LockOptions lock;

        @Override
        public void run() {}
    }

    private static LockOptions parse(String... args) {
        WithLock command = new WithLock();
        new CommandLine(command).parseArgs(args);
        return command.lock;
    }

    @Test
    void aSentinelAddressKeepsTheCommasBetweenItsSentinels() {
        assertThat(parse("--redis", "redis-sentinel://u:p,#w@h1:26379,h2,h3:26380/2#mymaster")
                        .backend()
                        .endpoints())
                .containsExactly("redis-sentinel://u:p,#w@h1:26379,h2,h3:26380/2#mymaster");
        assertThat(LockOptions.redisNodes(List.of("redis://a:1", "rediss-sentinel://s1", "s2#m", "redis//b:2")))
                .containsExactly("redis://a:1", "rediss-sentinel://s1,s2#m", "redis//b:2");
        assertThat(LockOptions.redisNodes(List.of("redis-sentinel://s1", "s2")))
                .as("no #master: one address, refused as such")
                .containsExactly("redis-sentinel://s1,s2");
    }

    @Test
    void aClusterAddressKeepsTheCommasBetweenItsSeeds() {
        assertThat(parse("--redis", "redis-cluster://u:p,w@h1:7000,h2:7001,h3")
                        .backend()
                        .endpoints())
                .containsExactly("redis-cluster://u:p,w@h1:7000,h2:7001,h3");
        assertThat(LockOptions.redisNodes(List.of("rediss-cluster://h1", "h2", "redis://b:2", "c:3")))
                .as("up to the next address with a scheme")
                .containsExactly("rediss-cluster://h1,h2", "redis://b:2", "c:3");
    }

    @Test
    void theCommandLineNamesTheBackend() {
        LockOptions.LockService redis =
                parse("--redis", "redis://a:1, redis://b:2").backend();
        assertThat(redis.kind()).isEqualTo(LockOptions.Kind.REDIS);
        assertThat(redis.endpoints()).containsExactly("redis://a:1", "redis://b:2");
        assertThat(parse("--zookeeper", "zk1:2181,zk2:2181").backend().endpoints())
                .containsExactly("zk1:2181,zk2:2181");
        assertThat(parse("--etcd", "http://e1:2379,http://e2:2379").backend().fenced())
                .isTrue();
    }

    @Test
    void oneBackendOnly(@TempDir Path dir) throws IOException {
        Path empty = Files.writeString(dir.resolve("config"), "");
        assertThatThrownBy(
                        () -> parse("--redis", "redis://a:1", "--etcd", "http://e:2379", "--config", empty.toString())
                                .backend())
                .hasMessage("name one backend only, not both --redis and --etcd");
        assertThatThrownBy(() -> parse("--config", empty.toString()).backend())
                .hasMessageContaining("--redis URI")
                .hasMessageContaining(empty.toString());
    }

    @Test
    void theConfigFileCanNameTheNodesAndThePassword(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(
                dir.resolve("config"),
                "redis = redis://10.0.0.1:6379, redis://10.0.0.2:6379\nredis.password = s3cret\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        LockOptions.LockService backend = parse("--config", file.toString()).backend();
        assertThat(backend.kind()).isEqualTo(LockOptions.Kind.REDIS);
        assertThat(backend.endpoints()).containsExactly("redis://10.0.0.1:6379", "redis://10.0.0.2:6379");
        if (System.getenv(LockOptions.PASSWORD_ENV) == null) {
            assertThat(backend.password()).isEqualTo(Optional.of("s3cret"));
        }
        assertThat(ConfigFile.read(file).exposesPassword()).isFalse();
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        assertThat(ConfigFile.read(file).exposesPassword()).isTrue();

        // The command line wins over the file's nodes, and keeps its password.
        LockOptions.LockService explicit =
                parse("--config", file.toString(), "--redis", "redis://c:3").backend();
        assertThat(explicit.endpoints()).isEqualTo(List.of("redis://c:3"));
    }

    @Test
    void anUnknownSettingOrAMissingFileIsNamed(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("config"), "redis.pasword = typo\n");
        assertThatThrownBy(() -> ConfigFile.read(file))
                .hasMessageContaining("unknown setting 'redis.pasword'")
                .hasMessageContaining(file.toString());
        assertThatThrownBy(() -> ConfigFile.read(dir.resolve("missing"))).hasMessageContaining("--config: cannot read");
    }

    @Test
    void aJdbcUrlTheCommandLineCannotServeIsRefusedAsAUrlListingTheOnesItCan(@TempDir Path dir) throws IOException {
        assertThatThrownBy(() -> parse("--jdbc", "jdbc:postgres://db:5432/app?password=s3cret")
                        .backend())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--jdbc jdbc:postgres://db:5432/app?***: not a database URL this command"
                        + " serves; give jdbc:postgresql://HOST[:PORT]/DATABASE (PostgreSQL) or"
                        + " jdbc:mariadb://HOST[:PORT]/DATABASE (MariaDB)")
                .hasMessageEndingWith("for PostgreSQL write jdbc:postgresql://")
                .hasMessageNotContaining("s3cret")
                .hasMessageNotContaining("class path");
        assertThatThrownBy(() -> parse("--jdbc", "jdbc:mysql://db:3306/app").backend())
                .hasMessageContaining("MySQL is not served")
                .hasMessageContaining("jdbc:mariadb://");
        assertThatThrownBy(() -> parse("--jdbc", "db:5432/app").backend()).hasMessageEndingWith("begins with jdbc:");
        Path file = Files.writeString(dir.resolve("config"), "jdbc = jdbc:sqlserver://db:1433;databaseName=app\n");
        assertThatThrownBy(() -> parse("--config", file.toString()).backend())
                .hasMessageStartingWith(
                        "jdbc in " + file + " jdbc:sqlserver://db:1433;databaseName=app: not a database URL");
        assertThat(parse("--jdbc", "jdbc:mariadb://db:3306/app").backend().kind())
                .isEqualTo(LockOptions.Kind.JDBC);
    }

    @Test
    void theTlsFilesServeEtcdMembersOverHttps(@TempDir Path dir) throws IOException {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "");
        Path empty = Files.writeString(dir.resolve("config"), "");
        LockOptions.LockService etcd = parse(
                        "--etcd", "https://e1:2379", "--tls-ca", ca.toString(), "--config", empty.toString())
                .backend();
        assertThat(etcd.tls().ca()).contains(ca);
        assertThatThrownBy(
                        () -> parse("--etcd", "http://e1:2379", "--tls-ca", ca.toString(), "--config", empty.toString())
                                .backend())
                .hasMessage("--tls-ca, --tls-cert and --tls-key (etcd.tls.*) are for TLS members: write them as"
                        + " https://host:port");
        assertThatThrownBy(
                        () -> parse("--zookeeper", "zk:2181", "--tls-ca", ca.toString(), "--config", empty.toString())
                                .backend())
                .hasMessageContaining("are for Redis nodes (rediss://) and etcd members (https://)");
        Path file = Files.writeString(
                dir.resolve("etcd-config"), "etcd = https://e1:2379,https://e2:2379\netcd.tls.ca = " + ca + "\n");
        assertThat(parse("--config", file.toString()).backend().tls().ca()).contains(ca);
    }
}
