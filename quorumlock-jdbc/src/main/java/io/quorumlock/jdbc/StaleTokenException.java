package io.quorumlock.jdbc;

import io.quorumlock.QuorumlockException;

/**
 * The fence refused a write: its fencing token is older than the newest token the fence has
 * already recorded for the resource. Another client was granted the lock after this one, so this
 * writer's lease was lost (its process may have paused past it) and whatever it was about to write
 * may overwrite newer data. Roll the transaction back; do not retry with the same lease.
 */
public class StaleTokenException extends QuorumlockException {
    private static final long serialVersionUID = 1L;

    private final String resource;
    private final long staleToken;
    private final long newestToken;

    public StaleTokenException(String resource, long staleToken, long newestToken) {
        super("fencing token " + staleToken + " for '" + resource + "' is stale: the fence has already seen token "
                + newestToken + ", so a newer lease holder wrote since this lease was granted; roll back");
        this.resource = resource;
        this.staleToken = staleToken;
        this.newestToken = newestToken;
    }

    /** {@return the resource whose fence refused the write} */
    public String resource() {
        return resource;
    }

    /** {@return the refused token: the one this writer presented} */
    public long staleToken() {
        return staleToken;
    }

    /** {@return the newest token the fence had recorded when it refused: always larger than {@link #staleToken()}} */
    public long newestToken() {
        return newestToken;
    }
}
