package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The holder's name beside each token: what is stored, and what a refusal may show of a key's value. */
class HolderTest {

    private static final String TOKEN = "0123456789abcdef0123456789abcdef";

    private static Reply bulk(String text) {
        return new Reply.Bulk(text);
    }

    @Test
    void theDefaultIsPidAtHost() {
        assertThat(Holder.defaultName()).startsWith(ProcessHandle.current().pid() + "@");
        assertThat(Holder.problem(Holder.defaultName())).isNull();
    }

    /**
     * The host name comes from a /proc file, which some JDKs read short with Files.readString (a
     * size of 0, then one read); the whole first line must come back, so the default name is not a
     * truncated host. Checked on a /proc file that is read short that way on our machines.
     */
    @Test
    void aProcFileIsReadWhole() throws Exception {
        java.nio.file.Path file = java.nio.file.Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isReadable(file), "Linux only");
        assertThat(Holder.firstLine(file))
                .isEqualTo(java.nio.file.Files.readAllLines(file).get(0).trim())
                .contains("\t");
    }

    @Test
    void namesMustBeShortPrintableAscii() {
        assertThat(Holder.problem("billing-worker-1")).isNull();
        assertThat(Holder.problem("")).contains("1 to 64 characters");
        assertThat(Holder.problem("x".repeat(65))).contains("1 to 64 characters", "was 65");
        assertThat(Holder.problem("bad\nname")).contains("printable ASCII");
        assertThat(Holder.problem(null)).contains("was null");
    }

    @Test
    void onlyAValueWrittenByALeaseWithAHolderNamesOne() {
        assertThat(Holder.of(bulk(TOKEN + " 4242@web-1"))).isEqualTo("4242@web-1");
        assertThat(Holder.of(bulk(TOKEN))).as("a bare token names nobody").isNull();
        assertThat(Holder.of(bulk("someone else's value with spaces"))).isNull();
        assertThat(Holder.of(bulk("g123456789abcdef0123456789abcdef 4242@web-1")))
                .isNull();
        assertThat(Holder.of(bulk(TOKEN + " " + "x".repeat(65)))).isNull();
        assertThat(Holder.of(bulk(TOKEN + " a\u0007b"))).isNull();
        assertThat(Holder.of(Reply.Nil.NIL)).isNull();
        assertThat(Holder.of(new Reply.Int(42))).isNull();
    }
}
