package io.quorumlock.redis.client;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script that the client runs by {@code EVALSHA}, with its text for {@code SCRIPT LOAD} and
 * for {@code EVAL} once a node has lost it from its cache. The scripts run here answer with an
 * integer.
 */
public final class Script {

    private final String description;
    private final String source;
    private final String sha1;
    private final byte[] sourceBytes;
    private final byte[] sha1Bytes;

    /** {@code description} names the script in messages, such as {@code the release script}. */
    public Script(String description, String source) {
        this.description = description;
        this.source = source;
        this.sha1 = sha1(source);
        this.sourceBytes = source.getBytes(StandardCharsets.UTF_8);
        this.sha1Bytes = sha1.getBytes(StandardCharsets.UTF_8);
    }

    public String description() {
        return description;
    }

    public String source() {
        return source;
    }

    /** The SHA-1 of the text, as EVALSHA and SCRIPT LOAD have it. */
    public String sha1() {
        return sha1;
    }

    byte[] sourceBytes() {
        return sourceBytes;
    }

    byte[] sha1Bytes() {
        return sha1Bytes;
    }

    private static String sha1(String script) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            return HexFormat.of().formatHex(digest.digest(script.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is missing from this JVM", e);
        }
    }

    @Override
    public String toString() {
        return description;
    }
}
