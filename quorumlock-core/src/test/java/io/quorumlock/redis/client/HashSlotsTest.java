package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The cluster specification's examples; HashSlotsIT compares many more keys with a server's CLUSTER KEYSLOT. */
class HashSlotsTest {

    @Test
    void theCrcIsXmodem() {
        byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
        assertThat(HashSlots.crc16(check, 0, check.length)).isEqualTo(0x31C3);
    }

    @ParameterizedTest
    @CsvSource({
        "foo, 12182",
        "somekey, 11058",
        "'{user1000}.following', 3443",
        "'{user1000}.followers', 3443",
        "user1000, 3443",
        // An empty tag: the whole key is hashed. Only the first '{' and the first '}' after it count.
        "'foo{}{bar}', 8363",
        "'foo{{bar}}zap', 4015",
        "'foo{bar}{zap}', 5061",
        "bar, 5061",
    })
    void slotsAsTheSpecificationHashesThem(String key, int slot) {
        assertThat(HashSlots.of(key)).isEqualTo(slot);
    }

    @Test
    void aKeysCompanionsShareItsSlotUnlessItHoldsAClosingBraceWithoutATag() {
        assertThat(HashSlots.companionsShareSlot("lock:sku:42")).isTrue();
        assertThat(HashSlots.companionsShareSlot("lock:{sku}:42")).isTrue();
        assertThat(HashSlots.companionsShareSlot("a{b")).isTrue();
        assertThat(HashSlots.companionsShareSlot("a}b")).isFalse();
        assertThat(HashSlots.companionsShareSlot("a{}b")).isFalse();
        // what the scripts make of them: braces around a key without a tag, the key as it is with one
        assertThat(HashSlots.of("quorumlock:line:{lock:sku:42}")).isEqualTo(HashSlots.of("lock:sku:42"));
        assertThat(HashSlots.of("quorumlock:line:lock:{sku}:42")).isEqualTo(HashSlots.of("lock:{sku}:42"));
        assertThat(HashSlots.of("quorumlock:waiting:{a{b}:7")).isEqualTo(HashSlots.of("a{b"));
    }
}
