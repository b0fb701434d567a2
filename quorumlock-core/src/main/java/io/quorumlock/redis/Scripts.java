package io.quorumlock.redis;

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
     * As {@link #DELETE_IF_EQUALS}, for the release of a lease: once the key is deleted, tells the
     * waiters on the resource's {@link #RELEASED} channel. The message is a digest of the token, so
     * that a waiter counts one release once however many nodes tell it, and the number of clients
     * that listen, so that each knows how many it competes with; where nobody listens, which is the
     * usual release, no message is made. Returns 1 plus that number (0 if the key was not ours).
     * Publishing goes by {@code pcall}: a user without the right to publish (Redis 7 ACL users have
     * no channels by default) still releases, and its waiters try again at the end of the TTL or of
     * their recheck.
     */
    static final Script RELEASE = new Script(
            "the release script",
            "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
                    + "  redis.call('del', KEYS[1])\n"
                    + "  local channel = '" + RELEASED + "' .. KEYS[1]\n"
                    + "  local listening = redis.pcall('pubsub', 'numsub', channel)\n"
                    + "  if type(listening) ~= 'table' then\n" // NUMSUB refused: tell whoever may listen
                    + "    redis.pcall('publish', channel, redis.sha1hex(ARGV[1]) .. ' 0')\n"
                    + "    return 1\n"
                    + "  end\n"
                    + "  local count = tonumber(listening[2]) or 0\n"
                    + "  if count > 0 then\n" // nobody listens, most of the time: no digest, no message
                    + "    redis.pcall('publish', channel, redis.sha1hex(ARGV[1]) .. ' ' .. count)\n"
                    + "  end\n"
                    + "  return 1 + count\n"
                    + "else\n"
                    + "  return 0\n"
                    + "end");

    /** KEYS[1] = lock key, ARGV[1] = our token, ARGV[2] = new TTL in ms. Returns 1 if extended. */
    static final Script EXTEND_IF_EQUALS = new Script(
            "the extension script",
            "if redis.call('get', KEYS[1]) == ARGV[1] then\n" // the key still holds our token
                    + "  return redis.call('pexpire', KEYS[1], ARGV[2])\n" // restart its TTL from now
                    + "else\n"
                    + "  return 0\n" // lost it: an extension must not resurrect another owner's key
                    + "end");

    /** Loaded on every new connection, in this order. */
    static final List<Script> ALL = List.of(DELETE_IF_EQUALS, RELEASE, EXTEND_IF_EQUALS);

    private Scripts() {}
}
