package io.nereid.engine.structured;

/**
 * Open addressing, long keys to non-negative ints; -1 for absent. Keys are mixed before they are
 * placed, so packed pairs such as {@code a << 32 | b} spread (a {@code HashMap<Long, ...>} hashes
 * them to {@code a ^ b}, and its buckets then turn into trees). Not thread-safe.
 */
final class LongIntMap {
    private long[] keys;
    private int[] values;
    private boolean[] used;
    private int size;

    LongIntMap() {
        this(1024);
    }

    /** @param capacity slots to start with, a power of two (it doubles when half full) */
    LongIntMap(int capacity) {
        keys = new long[capacity];
        values = new int[capacity];
        used = new boolean[capacity];
    }

    int get(long key) {
        int mask = keys.length - 1;
        for (int i = hash(key) & mask; used[i]; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return values[i];
            }
        }
        return -1;
    }

    void put(long key, int value) {
        if (2 * (size + 1) > keys.length) {
            grow();
        }
        int mask = keys.length - 1;
        int i = hash(key) & mask;
        while (used[i] && keys[i] != key) {
            i = (i + 1) & mask;
        }
        if (!used[i]) {
            size++;
        }
        used[i] = true;
        keys[i] = key;
        values[i] = value;
    }

    private void grow() {
        long[] k = keys;
        int[] v = values;
        boolean[] u = used;
        keys = new long[k.length * 2];
        values = new int[k.length * 2];
        used = new boolean[k.length * 2];
        size = 0;
        for (int i = 0; i < k.length; i++) {
            if (u[i]) {
                put(k[i], v[i]);
            }
        }
    }

    private static int hash(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }
}
