package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ZooKeeperServers where its optional dependency, curator-test, is not on the class path. */
class ZooKeeperServersTest {

    /** Calls {@link ZooKeeperServers#server} as a user's test would; loaded apart from Curator. */
    public static final class Caller implements Function<Path, Object> {
        @Override
        public Object apply(Path dir) {
            try {
                return ZooKeeperServers.server(dir);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void withoutCuratorTestItSaysWhichDependencyToAdd(@TempDir Path dir) throws Exception {
        URL kit = ZooKeeperServers.class.getProtectionDomain().getCodeSource().getLocation();
        URL tests = Caller.class.getProtectionDomain().getCodeSource().getLocation();
        // The kit's and these tests' classes only, above the JDK's: no Curator, no ZooKeeper.
        try (URLClassLoader withoutCurator =
                new URLClassLoader(new URL[] {kit, tests}, ClassLoader.getPlatformClassLoader())) {
            Function<Path, Object> caller = (Function<Path, Object>) withoutCurator
                    .loadClass(Caller.class.getName())
                    .getConstructor()
                    .newInstance();

            assertThatThrownBy(() -> caller.apply(dir))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageMatching("ZooKeeperServers needs curator-test on the class path: add the dependency"
                            + " org\\.apache\\.curator:curator-test:\\d+\\.\\d+\\.\\d+ \\(test scope\\); quorumlock-testkit"
                            + " leaves it optional, so that tests of Redis alone do not get a ZooKeeper server");
        }
    }
}
