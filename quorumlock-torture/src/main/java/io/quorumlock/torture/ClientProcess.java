package io.quorumlock.torture;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The main class of a client process. Prints {@value #READY} once its lock is open, starts on
 * {@code go}, takes commands line by line from standard input, and stops when told to or when
 * standard input closes (the harness is gone). A pause is a SIGSTOP of the process by itself;
 * the harness sends SIGCONT when the pause is over.
 */
public final class ClientProcess {

    static final String READY = "ready";

    private static final Logger log = LoggerFactory.getLogger(ClientProcess.class);

    private ClientProcess() {}

    public static void main(String[] args) throws Exception {
        TortureClient.Config config = TortureClient.Config.parse(args);
        int status = 0;
        try (History history = History.open(config.history())) {
            TortureClient client = new TortureClient(config, history, millis -> stopSelf());
            client.open();
            System.out.println(READY);
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String first = in.readLine();
            if (first != null && first.equals("go")) {
                Thread commands = new Thread(() -> readCommands(in, client), "torture-commands");
                commands.setDaemon(true);
                commands.start();
                client.run();
            }
        } catch (Exception e) {
            log.error("{} of {} failed", config.id(), config.strategy().option(), e);
            status = 1;
        }
        // Curator and jetcd leave non-daemon threads behind.
        System.exit(status);
    }

    private static void readCommands(BufferedReader in, TortureClient client) {
        try {
            for (String line; (line = in.readLine()) != null; ) {
                try {
                    client.command(line);
                } catch (Exception e) {
                    log.error("command '{}' failed", line, e);
                }
            }
        } catch (IOException e) {
            // the harness is gone
        }
        try {
            client.command("stop");
        } catch (Exception e) {
            log.error("stop failed", e);
        }
    }

    /** SIGSTOP to this process; returns once the harness has sent SIGCONT. */
    private static void stopSelf() throws IOException, InterruptedException {
        new ProcessBuilder(
                        "kill",
                        "-s",
                        "STOP",
                        Long.toString(ProcessHandle.current().pid()))
                .inheritIO()
                .start()
                .waitFor();
    }
}
