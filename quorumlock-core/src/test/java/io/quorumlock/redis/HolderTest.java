package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.redis.client.Reply;
import org.junit.jupiter.api.Test;

/** The holder's name beside each token: what a refusal may show of a key's value. */
class HolderTest {

    private static final String TOKEN = "0123456789abcdef0123456789abcdef";

    private static Reply bulk(String text) {
        return new Reply.Bulk(text);
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
