package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The pins of resources to lanes count rounds as a map would, through growth and removals that wrap around. */
@Timeout(10)
class PinsTest {

    @Test
    void aResourceKeepsItsLaneUntilItsLastRoundEnds() {
        Pins<String> pins = new Pins<>();
        pins.pin("r", "lane 1");
        pins.pin("r", "lane 2"); // a second round while the first is under way: the first one's lane
        assertThat(pins.lane("r")).isEqualTo("lane 1");
        pins.unpin("r");
        assertThat(pins.lane("r")).isEqualTo("lane 1");
        pins.unpin("r");
        assertThat(pins.lane("r")).isNull();
        pins.unpin("r"); // none under way: nothing to count
        assertThat(pins.size()).isZero();
    }

    @Test
    void countsAsAMapDoes() {
        Random random = new Random(42);
        Pins<Integer> pins = new Pins<>();
        Map<String, Integer> lanes = new HashMap<>();
        Map<String, Integer> rounds = new HashMap<>();
        for (int step = 0; step < 200_000; step++) {
            // Few distinct names, many colliding hashes ("Aa" and "BB" hash alike), so that runs wrap.
            String resource = (random.nextBoolean() ? "Aa" : "BB") + random.nextInt(40);
            if (random.nextInt(3) > 0 || !rounds.containsKey(resource)) {
                pins.pin(resource, step);
                lanes.putIfAbsent(resource, step);
                rounds.merge(resource, 1, Integer::sum);
            } else {
                pins.unpin(resource);
                if (rounds.merge(resource, -1, Integer::sum) == 0) {
                    rounds.remove(resource);
                    lanes.remove(resource);
                }
            }
            if (step % 1000 == 0) {
                for (int i = 0; i < 40; i++) {
                    for (String prefix : new String[] {"Aa", "BB"}) {
                        assertThat(pins.lane(prefix + i)).isEqualTo(lanes.get(prefix + i));
                    }
                }
                assertThat(pins.size()).isEqualTo(lanes.size());
            }
            if (step % 50_000 == 0) { // all rounds end now and then: the table empties after growing
                for (String left : rounds.keySet()) {
                    for (int i = rounds.get(left); i > 0; i--) {
                        pins.unpin(left);
                    }
                }
                rounds.clear();
                lanes.clear();
                assertThat(pins.size()).isZero();
            }
        }
    }
}
