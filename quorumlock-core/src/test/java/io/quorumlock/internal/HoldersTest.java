package io.quorumlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The holder's name every backend stores, and what a message shows of the names a server sends. */
class HoldersTest {

    @Test
    void theDefaultIsPidAtHost() {
        assertThat(Holders.defaultName()).startsWith(ProcessHandle.current().pid() + "@");
        assertThat(Holders.problem(Holders.defaultName())).isEmpty();
    }

    /**
     * The host name comes from a /proc file, which some JDKs read short with Files.readString (a
     * size of 0, then one read); the whole first line must come back, so the default name is not a
     * truncated host. Checked on a /proc file that is read short that way on our machines.
     */
    @Test
    void aProcFileIsReadWhole() throws Exception {
        Path file = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        Assumptions.assumeTrue(Files.isReadable(file), "Linux only");
        assertThat(Holders.firstLine(file))
                .isEqualTo(Files.readAllLines(file).get(0).trim())
                .contains("\t");
    }

    @Test
    void namesMustBeShortPrintableAscii() {
        assertThat(Holders.problem("billing-worker-1")).isEmpty();
        assertThat(Holders.problem("")).get().asString().contains("1 to 64 characters");
        assertThat(Holders.problem("x".repeat(65))).get().asString().contains("1 to 64 characters", "was 65");
        assertThat(Holders.problem("bad\nname")).get().asString().contains("printable ASCII");
        assertThat(Holders.problem(null)).get().asString().contains("was null");
    }

    @Test
    void onlyDataThatIsAHolderNameNamesOne() {
        assertThat(Holders.read("4242@web-1".getBytes(StandardCharsets.UTF_8))).contains("4242@web-1");
        assertThat(Holders.read(new byte[0])).isEmpty();
        assertThat(Holders.read(null)).isEmpty();
        assertThat(Holders.read("x".repeat(65).getBytes(StandardCharsets.UTF_8)))
                .isEmpty();
        assertThat(Holders.read("web-1\n\u001b[2J".getBytes(StandardCharsets.UTF_8)))
                .isEmpty();
        assertThat(Holders.read("caf\u00e9".getBytes(StandardCharsets.UTF_8))).isEmpty();
        assertThat(Holders.read(new byte[] {(byte) 0xff, (byte) 0xfe})).isEmpty();
    }

    @Test
    void aNameAServerSentIsShownPrintableAndCut() {
        assertThat(Holders.shown("_c_1234-lock-0000000001")).isEqualTo("_c_1234-lock-0000000001");
        assertThat(Holders.shown("a\nb\u001b[2Jc\u00e9")).isEqualTo("a?b?[2Jc?");
        String long_ = "k".repeat(100_000);
        assertThat(Holders.shown(long_))
                .startsWith("k".repeat(Holders.MAX_SHOWN) + "...")
                .endsWith("(100000 characters)")
                .hasSizeLessThan(Holders.MAX_SHOWN + 40);
        assertThat(Holders.shown("k".repeat(Holders.MAX_SHOWN))).hasSize(Holders.MAX_SHOWN);
        assertThat(Holders.shown(null)).isEqualTo("null");
    }
}
