package io.quorumlock.redis.client;

import java.nio.charset.StandardCharsets;

/**
 * Redis Cluster's hash slots, as the cluster specification defines them: a key's slot is the
 * CRC16 (XMODEM) of its hash tag, modulo 16384. The hash tag is what lies between the first
 * {@code '{'} and the first {@code '}'} after it, if that is not empty; else the whole key.
 */
public final class HashSlots {

    /** How many slots a cluster has. */
    public static final int COUNT = 16384;

    private static final int[] TABLE = new int[256];

    static {
        for (int i = 0; i < 256; i++) {
            int crc = i << 8;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
            }
            TABLE[i] = crc & 0xffff;
        }
    }

    private HashSlots() {}

    /**
     * The slot of {@code key}, as the server hashes its UTF-8 bytes. The braces are ASCII, which no
     * byte of a multi-byte UTF-8 character equals: the tag found in the text is the one the server
     * finds in the bytes.
     */
    public static int of(String key) {
        byte[] bytes = hashed(key).getBytes(StandardCharsets.UTF_8);
        return crc16(bytes, 0, bytes.length) & (COUNT - 1);
    }

    /** What the server hashes of {@code key}: its hash tag, or else the whole key. */
    private static String hashed(String key) {
        int open = key.indexOf('{');
        int close = open < 0 ? -1 : key.indexOf('}', open + 1);
        return close > open + 1 ? key.substring(open + 1, close) : key;
    }

    /** CRC16-XMODEM of {@code bytes[start, end)}. */
    static int crc16(byte[] bytes, int start, int end) {
        int crc = 0;
        for (int i = start; i < end; i++) {
            crc = ((crc << 8) ^ TABLE[((crc >>> 8) ^ bytes[i]) & 0xff]) & 0xffff;
        }
        return crc;
    }

    /**
     * Whether the lock's companion keys of {@code key} (its waiters' line, {@code
     * quorumlock:line:} and the key with braces around it unless it has a hash tag) fall in the
     * key's own slot, as a cluster node's scripts need: always, unless the key has no hash tag
     * and holds a {@code '}'}.
     */
    public static boolean companionsShareSlot(String key) {
        return hasTag(key) || key.indexOf('}') < 0;
    }

    /** Whether {@code key} has a non-empty hash tag. */
    public static boolean hasTag(String key) {
        return hashed(key).length() < key.length();
    }
}
