package io.quorumlock.testkit;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/** A {@link ServerWait.Listener} that keeps what it is told; {@code onLine} runs after each line. */
final class WaitRecorder implements ServerWait.Listener {

    final List<String> statuses = new CopyOnWriteArrayList<>();
    final List<String> lines = new CopyOnWriteArrayList<>();
    private final Consumer<String> onLine;

    WaitRecorder() {
        this(line -> {});
    }

    WaitRecorder(Consumer<String> onLine) {
        this.onLine = onLine;
    }

    @Override
    public void status(String text) {
        statuses.add(text);
    }

    @Override
    public void line(String text) {
        lines.add(text);
        onLine.accept(text);
    }
}
