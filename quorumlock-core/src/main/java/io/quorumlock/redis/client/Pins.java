package io.quorumlock.redis.client;

/**
 * The lanes of the resources that have rounds under way, and how many: an open-addressing table
 * of parallel arrays, so that pinning a resource costs no allocation. Not thread-safe: {@link
 * NioTransport} uses it under the lock of its lanes.
 *
 * @param <L> a lane
 */
final class Pins<L> {

    private String[] resources = new String[16];
    private Object[] lanes = new Object[16];
    private int[] rounds = new int[16];
    private int size;

    /** The lane of {@code resource}'s rounds under way, or null if none is. */
    @SuppressWarnings("unchecked")
    L lane(String resource) {
        int at = slot(resource);
        return resources[at] == null ? null : (L) lanes[at];
    }

    /** Counts one more round of {@code resource}, on {@code lane} if it has none under way yet. */
    void pin(String resource, L lane) {
        int at = slot(resource);
        if (resources[at] == null) {
            resources[at] = resource;
            lanes[at] = lane;
            size++;
        }
        rounds[at]++;
        if (2 * size > resources.length) {
            grow();
        }
    }

    /** Counts one round of {@code resource} less, forgetting it after its last; nothing if it has none. */
    void unpin(String resource) {
        int at = slot(resource);
        if (resources[at] == null || --rounds[at] > 0) {
            return;
        }
        // Moves back the entries behind the one removed that could no longer be found past its hole.
        int mask = resources.length - 1;
        int hole = at;
        for (int next = (at + 1) & mask; resources[next] != null; next = (next + 1) & mask) {
            int home = home(resources[next]);
            boolean reachable = hole <= next ? hole < home && home <= next : hole < home || home <= next;
            if (!reachable) {
                move(next, hole);
                hole = next;
            }
        }
        resources[hole] = null;
        lanes[hole] = null;
        rounds[hole] = 0;
        size--;
    }

    int size() {
        return size;
    }

    /** Where {@code resource} is, or the free slot where it would go. */
    private int slot(String resource) {
        int mask = resources.length - 1;
        int at = home(resource);
        while (resources[at] != null && !resources[at].equals(resource)) {
            at = (at + 1) & mask;
        }
        return at;
    }

    private int home(String resource) {
        int hash = resource.hashCode();
        return (hash ^ (hash >>> 16)) & (resources.length - 1);
    }

    private void move(int from, int to) {
        resources[to] = resources[from];
        lanes[to] = lanes[from];
        rounds[to] = rounds[from];
    }

    private void grow() {
        String[] oldResources = resources;
        Object[] oldLanes = lanes;
        int[] oldRounds = rounds;
        resources = new String[oldResources.length * 2];
        lanes = new Object[resources.length];
        rounds = new int[resources.length];
        for (int i = 0; i < oldResources.length; i++) {
            if (oldResources[i] != null) {
                int at = slot(oldResources[i]);
                resources[at] = oldResources[i];
                lanes[at] = oldLanes[i];
                rounds[at] = oldRounds[i];
            }
        }
    }
}
