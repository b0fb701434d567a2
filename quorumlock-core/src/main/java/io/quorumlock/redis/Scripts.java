package io.quorumlock.redis;

import io.quorumlock.redis.client.HashSlots;
import io.quorumlock.redis.client.Script;
import java.util.List;

/** The Lua scripts that make ownership checks atomic on a node. */
final class Scripts {

    /** KEYS[1] = lock key, ARGV[1] = our token. Deletes only our own key; returns 1 if deleted. */
    static final Script DELETE_IF_EQUALS = new Script(
            "the release script",
            "if redis.call('get', KEYS[1]) == ARGV[1] then\n" // the key still holds our token
                    + "  return redis.call('del', KEYS[1])\n" // so it is ours to delete
                    + "else\n"
                    + "  return 0\n" // gone, expired, or another owner's: leave it
                    + "end");

    /** The channel of a resource's releases: {@code quorumlock:released:} and the lock key. */
    static final String RELEASED = "quorumlock:released:";

    /**
     * The line of a resource's waiters on a node, in the order they joined it: a sorted set named
     * {@code quorumlock:line:} and the lock key {@linkplain #slotted in its hash slot}, of waiter
     * ids (see {@link #JOIN}).
     */
    static final String LINE = "quorumlock:line:";

    /**
     * Whether a waiter in a line still waits: {@code quorumlock:waiting:}, the lock key {@linkplain
     * #slotted in its hash slot}, {@code :} and its id, a key set for a while by each {@link
     * #JOIN}. A waiter whose key ran out (its client died, or gave up without leaving) is dropped
     * from the line by the next release.
     */
    static final String WAITING = "quorumlock:waiting:";

    /**
     * The lock key as the names of its line and waiters hold it, so that they hash to the key's
     * own slot on a Redis Cluster node, whose scripts may touch one slot only: the key itself if it
     * has a hash tag, else the key in braces ({@code {lock:sku:42}}). Sets Lua's {@code k}, a local
     * declared before.
     */
    private static final String SLOTTED_K = "k = KEYS[1]\n"
            + "local open = string.find(k, '{', 1, true)\n"
            + "local close = open and string.find(k, '}', open + 1, true)\n"
            + "if not (close and close > open + 1) then k = '{' .. k .. '}' end\n";

    /** {@link #SLOTTED_K} with its local. */
    private static final String SLOTTED = "local k\n" + SLOTTED_K;

    /** The key as the line's names hold it: what {@link #SLOTTED} makes of it. */
    static String slotted(String key) {
        return HashSlots.hasTag(key) ? key : "{" + key + "}";
    }

    /** The name of the line of {@code key}'s waiters. */
    static String line(String key) {
        return LINE + slotted(key);
    }

    /** The name of the key that says the waiter {@code id} of {@code key} still waits. */
    static String waiting(String key, String id) {
        return WAITING + slotted(key) + ":" + id;
    }

    /**
     * KEYS[1] = lock key, ARGV[1] = a waiter's id, ARGV[2] = how long its place is kept, in ms.
     * Puts the waiter in the resource's {@link #LINE}, or keeps its place if it is in it, and
     * keeps it waiting for ARGV[2]. The id is also its place: it tells when the waiter came by its
     * host's clock ({@link NodeLine#newId}), so that every node puts the waiters in one order, whatever
     * order their joins reach it in; but no earlier than a second before now by the node's clock,
     * so that a host whose clock is behind goes ahead of the waiters of the last second only.
     * Returns its place, 0 for the first.
     */
    static final Script JOIN = new Script(
            "the line's join script",
            SLOTTED
                    + "local line = '" + LINE + "' .. k\n"
                    + "local now = redis.call('time')\n"
                    + "local earliest = ((tonumber(now[1]) - 1) * 1000000 + tonumber(now[2])) * 1024\n"
                    + "local place = ARGV[1]\n"
                    + "if tonumber(place) < earliest then place = string.format('%.0f', earliest) end\n"
                    + "redis.call('zadd', line, 'nx', place, ARGV[1])\n"
                    + "redis.call('pexpire', line, ARGV[2])\n"
                    + "redis.call('set', '" + WAITING + "' .. k .. ':' .. ARGV[1], '1', 'px', ARGV[2])\n"
                    + "return redis.call('zrank', line, ARGV[1])");

    /**
     * KEYS[1] = lock key, ARGV[1] = a waiter's id. How long the waiter's place is still kept, in
     * ms ({@code PTTL} of its waiting key): negative once it left, released or was not heard of
     * for {@link NodeLine#PLACE_MILLIS}.
     */
    static final Script WAITS = new Script(
            "the line's wait check", SLOTTED + "return redis.call('pttl', '" + WAITING + "' .. k .. ':' .. ARGV[1])");

    /** KEYS[1] = lock key, ARGV[1] = a waiter's id. Takes the waiter out of the line; returns 1 if it was in it. */
    static final Script LEAVE = new Script(
            "the line's leave script",
            SLOTTED + "redis.call('del', '" + WAITING + "' .. k .. ':' .. ARGV[1])\n" + "return redis.call('zrem', '"
                    + LINE + "' .. k, ARGV[1])");

    /**
     * As {@link #DELETE_IF_EQUALS}, for the release of a lease: once the key is deleted, tells the
     * waiters on the resource's {@link #RELEASED} channel. The message is a digest of the token, so
     * that a waiter counts one release once however many nodes tell it, the number of clients
     * that listen, so that each knows how many it competes with, and the id of the first waiter
     * still waiting in the resource's {@link #LINE}, if any, whose turn it is; where nobody listens,
     * which is the usual release, no message is made. ARGV[2], if given, is the id the lease's
     * waiter had in the line: it leaves it first, also where the key is no longer its own (a
     * winner stays in the line until its release, which takes it out on every node it goes to;
     * {@link NodeLine#leave} takes it out on the others). Returns 1 plus the number of listeners (0 if the key
     * was not ours). Publishing and the line go by {@code pcall}: a user without the right to
     * publish (Redis 7 ACL users have no channels by default), or to the line's keys, still
     * releases, and its waiters try again at the end of the TTL or of their recheck.
     */
    static final Script RELEASE = new Script(
            "the release script",
            "local k\n" // the key as the line's names hold it, made when needed: most releases need none
                    + "if ARGV[2] then\n" // the lease's waiter leaves the line, the key ours or not
                    + SLOTTED_K
                    + "  redis.pcall('zrem', '" + LINE + "' .. k, ARGV[2])\n"
                    + "  redis.pcall('del', '" + WAITING + "' .. k .. ':' .. ARGV[2])\n"
                    + "end\n"
                    + "if redis.call('get', KEYS[1]) ~= ARGV[1] then\n"
                    + "  return 0\n"
                    + "end\n"
                    + "redis.call('del', KEYS[1])\n"
                    + "local channel = '" + RELEASED + "' .. KEYS[1]\n"
                    + "local listening = redis.pcall('pubsub', 'numsub', channel)\n"
                    + "if type(listening) ~= 'table' then\n" // NUMSUB refused: tell whoever may listen
                    + "  redis.pcall('publish', channel, redis.sha1hex(ARGV[1]) .. ' 0')\n"
                    + "  return 1\n"
                    + "end\n"
                    + "local count = tonumber(listening[2]) or 0\n"
                    + "if count == 0 then\n" // nobody listens, most of the time: no digest, no message
                    + "  return 1\n"
                    + "end\n"
                    + "if not k then\n"
                    + SLOTTED_K
                    + "end\n"
                    + "local line = '" + LINE + "' .. k\n"
                    + "local waiting = '" + WAITING + "' .. k .. ':'\n"
                    + "local turn = ''\n"
                    + "for i = 1, 64 do\n" // the first who still waits; those gone leave the line
                    + "  local first = redis.pcall('zrange', line, 0, 0)\n"
                    + "  if type(first) ~= 'table' or #first == 0 then break end\n"
                    + "  if redis.pcall('exists', waiting .. first[1]) == 1 then\n"
                    + "    turn = ' ' .. first[1]\n"
                    + "    break\n"
                    + "  end\n"
                    + "  redis.pcall('zrem', line, first[1])\n"
                    + "end\n"
                    + "redis.pcall('publish', channel, redis.sha1hex(ARGV[1]) .. ' ' .. count .. turn)\n"
                    + "return 1 + count");

    /** KEYS[1] = lock key, ARGV[1] = our token, ARGV[2] = new TTL in ms. Returns 1 if extended. */
    static final Script EXTEND_IF_EQUALS = new Script(
            "the extension script",
            "if redis.call('get', KEYS[1]) == ARGV[1] then\n" // the key still holds our token
                    + "  return redis.call('pexpire', KEYS[1], ARGV[2])\n" // restart its TTL from now
                    + "else\n"
                    + "  return 0\n" // lost it: an extension must not resurrect another owner's key
                    + "end");

    /**
     * Loaded on every new connection, in this order. {@link #LEAVE} is, since a release sends it
     * without waiting for its reply (to the nodes that refused the grant), and a node that lacks a
     * script is sent its text only once the lane reads the node's refusal. {@link #JOIN}, sent by
     * waiters only and waited for, is not: a node that lacks it is sent its text.
     */
    static final List<Script> ALL = List.of(DELETE_IF_EQUALS, RELEASE, EXTEND_IF_EQUALS, LEAVE);

    private Scripts() {}
}
