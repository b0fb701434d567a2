package io.quorumlock.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.ServerWait;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class ProgressLineTest {

    private final StringWriter screen = new StringWriter();

    @Test
    void onATerminalTheStatusRewritesItselfAndStepsAsideForLines() {
        ProgressLine progress = new ProgressLine(new PrintWriter(screen), true);

        progress.status("1 s  10 done");
        progress.status("2 s  9");
        progress.println("fault!");
        progress.status("3 s");
        progress.clear();

        assertThat(screen.toString())
                .isEqualTo("\r1 s  10 done" + "\r2 s  9" + " ".repeat(6) // padded over the longer status
                        + "\r" + " ".repeat(6) + "\r" + "fault!" + System.lineSeparator()
                        + "\r3 s" + "\r   \r");
    }

    @Test
    void whenPipedOnlyTheLinesArePrinted() {
        ProgressLine progress = new ProgressLine(new PrintWriter(screen), false);

        progress.status("1 s");
        progress.println("fault!");
        progress.status("2 s");
        progress.clear();

        assertThat(screen.toString()).isEqualTo("fault!" + System.lineSeparator());
    }

    @Test
    void asTheTestKitsListenerAServerWaitIsTheStatusAndASlowOneALineThatStaysWhenPiped() {
        ServerWait.Listener progress = new ProgressLine(new PrintWriter(screen), false);

        progress.status(
                "waiting for etcd member member-2 at http://127.0.0.1:21824 to be healthy: 1.0 s (at most 45 s)");
        progress.line("etcd member member-2 at http://127.0.0.1:21824 not healthy after 5.0 s; waiting up to 45 s"
                + " (load 1 per processor)");

        assertThat(screen.toString())
                .isEqualTo("etcd member member-2 at http://127.0.0.1:21824 not healthy after 5.0 s; waiting up to 45 s"
                        + " (load 1 per processor)" + System.lineSeparator());
    }
}
