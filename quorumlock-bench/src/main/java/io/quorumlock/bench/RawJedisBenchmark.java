package io.quorumlock.bench;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.IterationParams;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.params.SetParams;

/**
 * The limit for a single-node lock: one Jedis connection, {@code SET key token NX PX ttl}, then the
 * compare-and-delete script by {@code EVALSHA} (loaded once). Two round trips and nothing else.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Thread)
public class RawJedisBenchmark {

    /** The node URIs, separated by spaces; the first one is used. */
    @Param("")
    public String nodes;

    /** Where to write the trial's own figures (failures, errors); empty for nowhere. */
    @Param("")
    public String sideFile;

    private Trial trial;
    private Jedis jedis;
    private String sha;
    private String key;
    private final SetParams setParams = SetParams.setParams().nx().px(Trial.TTL.toMillis());

    @Setup(Level.Trial)
    public void setUp() {
        trial = new Trial(nodes, 1, "", sideFile, "raw-jedis");
        key = trial.key();
        jedis = Clients.jedis(trial.uris().get(0));
        sha = jedis.scriptLoad(SequentialRedlock.UNLOCK_SCRIPT);
    }

    @Setup(Level.Iteration)
    public void iteration(IterationParams params) {
        trial.iteration(params);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        jedis.close();
        trial.finish();
    }

    /** One lock cycle: take the key with a fresh token, delete it if it still holds that token. */
    @Benchmark
    public boolean cycle() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String token = Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong());
        try {
            if (!"OK".equals(jedis.set(key, token, setParams))) {
                trial.failure();
                return false;
            }
            return Long.valueOf(1).equals(jedis.evalsha(sha, 1, key, token));
        } catch (JedisException e) {
            trial.error(e);
            return false;
        }
    }
}
