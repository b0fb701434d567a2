package io.quorumlock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** What a lock's queue looks like in etcd, for the tests: its keys, and the member's watches. */
final class EtcdQueueState {

    private EtcdQueueState() {}

    /** The lock keys of {@code resource} under the default key prefix, holder first, read by {@code admin}. */
    static List<KeyValue> lockKeys(Client admin, String resource) {
        ByteSequence prefix =
                ByteSequence.from("/quorumlock/locks/" + EtcdLock.escape(resource) + "/", StandardCharsets.UTF_8);
        try {
            return admin.getKVClient()
                    .get(
                            prefix,
                            GetOption.builder()
                                    .isPrefix(true)
                                    .withSortField(GetOption.SortTarget.CREATE)
                                    .withSortOrder(GetOption.SortOrder.ASCEND)
                                    .build())
                    .get(5, TimeUnit.SECONDS)
                    .getKvs();
        } catch (Exception e) {
            throw new AssertionError("cannot read the lock keys of " + resource, e);
        }
    }

    /** How many watches the member at {@code endpoint} serves now, from its metrics. */
    static long watchers(String endpoint) {
        return gauge(endpoint, "etcd_debugging_mvcc_watcher_total");
    }

    /** How many watch streams (each holding the member's resources until it ends) it serves now. */
    static long watchStreams(String endpoint) {
        return gauge(endpoint, "etcd_debugging_mvcc_watch_stream_total");
    }

    private static long gauge(String endpoint, String name) {
        try {
            HttpResponse<String> metrics = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(endpoint + "/metrics"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            return metrics.body()
                    .lines()
                    .filter(line -> line.startsWith(name + " "))
                    .mapToLong(line -> (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1)))
                    .findFirst()
                    .orElseThrow();
        } catch (Exception e) {
            throw new IllegalStateException("could not read etcd's metrics", e);
        }
    }
}
