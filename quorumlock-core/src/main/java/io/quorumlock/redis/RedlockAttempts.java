package io.quorumlock.redis;

import io.quorumlock.Lease;
import io.quorumlock.QuorumlockException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.Holders;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The attempts of a {@link Redlock}: one attempt (a new token, the grant round on {@link Rounds},
 * the lease if a quorum said yes), and the holders read for the evidence of a refusal.
 */
final class RedlockAttempts {

    private static final Logger log = LoggerFactory.getLogger(Redlock.class);

    private final Rounds rounds;
    /** How many nodes vote. */
    private final int nodes;
    /** Who holds the leases of this lock: stored beside each token, so that refusals can name it. */
    private final String holder;

    private final SecureRandom random = new SecureRandom();
    /**
     * Random bytes for the tokens, drawn from {@link #random} for {@value #TOKENS_PER_DRAW} tokens
     * at once (a draw allocates, a token need not); each byte is used once. Guarded by itself.
     */
    private final byte[] pool = new byte[TOKEN_BYTES * TOKENS_PER_DRAW];

    private int drawn = pool.length;
    /** A token's text: its hex digits, rewritten for each token, then a space and the holder. Guarded by {@link #pool}. */
    private final byte[] text;

    private static final int TOKEN_BYTES = 16;
    private static final int TOKENS_PER_DRAW = 32;
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.ISO_8859_1);

    RedlockAttempts(Rounds rounds, int nodes, String holder) {
        this.rounds = rounds;
        this.nodes = nodes;
        this.holder = holder;
        // A holder is printable ASCII (see Holders): one byte a character.
        byte[] suffix = (" " + holder).getBytes(StandardCharsets.ISO_8859_1);
        this.text = Arrays.copyOf(new byte[2 * TOKEN_BYTES], 2 * TOKEN_BYTES + suffix.length);
        System.arraycopy(suffix, 0, text, 2 * TOKEN_BYTES, suffix.length);
    }

    /** The result of one attempt: the lease if granted, and the evidence either way. */
    record Attempt(Optional<Lease> lease, Rounds.Outcome outcome) {

        int votes() {
            return outcome.votes();
        }

        List<ServerAnswer> answers() {
            return outcome.answers();
        }

        boolean misconfigured() {
            return !outcome.held() && outcome.misconfigured();
        }
    }

    /** One attempt, by a waiter with this id in the resource's line ({@link Scripts#LINE}), or 0. */
    Attempt attempt(String resource, Duration ttl, long waiter) {
        String token = newToken(); // compared whole: the holder is part of the token
        Rounds.Outcome outcome = rounds.grant(resource, token, ttl.toMillis());
        if (outcome.interrupted()) {
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while acquiring '" + resource + "'");
        }
        if (outcome.held()) {
            if (log.isDebugEnabled()) { // the hot path: no boxing, no substring unless asked for
                log.debug(
                        "acquired '{}' with {} of {} votes, validity {} ms, token {}...",
                        resource,
                        outcome.votes(),
                        nodes,
                        outcome.validityNanos() / 1_000_000,
                        token.substring(0, 8));
            }
            RedlockLease lease = new RedlockLease(
                    rounds,
                    resource,
                    token,
                    outcome.round(),
                    waiter,
                    ttl.toMillis() * 1_000_000,
                    outcome.validityNanos(),
                    outcome.validUntilNanos());
            return new Attempt(Optional.of(lease), outcome);
        }
        if (log.isDebugEnabled()) {
            log.debug(
                    "could not acquire '{}': {} of {} votes, {} needed, validity {} ms; {}",
                    resource,
                    outcome.votes(),
                    nodes,
                    QuorumMath.quorum(nodes),
                    outcome.validityNanos() / 1_000_000,
                    outcome.answers());
        }
        return new Attempt(Optional.empty(), outcome);
    }

    /**
     * The answers, with the holder read from each node that said {@code held by another owner}
     * (the holder then, not necessarily at the vote), or, where the key is not a string, its type
     * ({@link Holder#otherLibrary}): for the evidence of a refusal, off the hot path.
     */
    List<ServerAnswer> withHolders(String resource, List<ServerAnswer> answers) {
        int[] held = java.util.stream.IntStream.range(0, answers.size())
                .filter(i -> answers.get(i).kind() == ServerAnswer.Kind.HELD_BY_OTHER)
                .toArray();
        if (held.length == 0 || Thread.currentThread().isInterrupted()) {
            return answers;
        }
        Reply[] values = rounds.queries.query(resource, held, Command.get(resource));
        int[] otherType = java.util.stream.IntStream.range(0, held.length)
                .filter(i -> Holder.otherType(values[i]))
                .map(i -> held[i])
                .toArray();
        Reply[] types =
                otherType.length == 0 ? values : rounds.queries.query(resource, otherType, Command.type(resource));
        List<ServerAnswer> named = new ArrayList<>(answers);
        for (int i = 0, typed = 0; i < held.length; i++) {
            String who = Holder.of(values[i]);
            String detail = who != null
                    ? Holders.named(who, holder)
                    : Holder.otherType(values[i]) ? Holder.otherLibrary(resource, types[typed++]) : null;
            if (detail != null) {
                ServerAnswer o = answers.get(held[i]);
                named.set(held[i], new ServerAnswer(o.server(), o.kind(), detail));
            }
        }
        return named;
    }

    /** A new token: {@value #TOKEN_BYTES} random bytes in lower-case hex, a space, and the holder. */
    private String newToken() {
        synchronized (pool) {
            if (drawn == pool.length) {
                random.nextBytes(pool);
                drawn = 0;
            }
            for (int i = 0; i < TOKEN_BYTES; i++) {
                int b = pool[drawn++] & 0xff;
                text[2 * i] = HEX[b >>> 4];
                text[2 * i + 1] = HEX[b & 0xf];
            }
            return new String(text, StandardCharsets.ISO_8859_1);
        }
    }
}
