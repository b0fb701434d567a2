package io.quorumlock.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** The Lua scripts that make ownership checks atomic on a node, with their SHA-1 for EVALSHA. */
final class Scripts {

    /** KEYS[1] = lock key, ARGV[1] = our token. Deletes only our own key; returns 1 if deleted. */
    static final String DELETE_IF_EQUALS =
            "if redis.call('get', KEYS[1]) == ARGV[1] then\n" // the key still holds our token
                    + "  return redis.call('del', KEYS[1])\n" // so it is ours to delete
                    + "else\n"
                    + "  return 0\n" // gone, expired, or another owner's: leave it
                    + "end";

    /** KEYS[1] = lock key, ARGV[1] = our token, ARGV[2] = new TTL in ms. Returns 1 if extended. */
    static final String EXTEND_IF_EQUALS =
            "if redis.call('get', KEYS[1]) == ARGV[1] then\n" // the key still holds our token
                    + "  return redis.call('pexpire', KEYS[1], ARGV[2])\n" // restart its TTL from now
                    + "else\n"
                    + "  return 0\n" // lost it: an extension must not resurrect another owner's key
                    + "end";

    static final String DELETE_IF_EQUALS_SHA = sha1(DELETE_IF_EQUALS);
    static final String EXTEND_IF_EQUALS_SHA = sha1(EXTEND_IF_EQUALS);

    private Scripts() {}

    static String sha1(String script) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            return HexFormat.of().formatHex(digest.digest(script.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is missing from this JVM", e);
        }
    }
}
