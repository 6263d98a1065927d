package io.nereid.kvcache;

/**
 * Open-addressing map from a 64-bit block hash to a block id, sized once for the pool so it
 * never rehashes. Linear probing with backward-shift deletion (no tombstones), so lookups stay
 * short however many evictions happen. Value 0 marks an empty slot: block 0 is the null block
 * and is never cached. Keys are already uniformly mixed (SipHash), so their low bits index.
 * Not thread-safe.
 */
final class LongIntHashMap {

    private final long[] keys;
    private final int[] values;
    private final int mask;
    private int size;

    /** @param maxEntries the most entries ever held; capacity is the next power of two >= 2x. */
    LongIntHashMap(int maxEntries) {
        int capacity = Integer.highestOneBit(Math.max(2, maxEntries) * 2 - 1) << 1;
        keys = new long[capacity];
        values = new int[capacity];
        mask = capacity - 1;
    }

    int size() {
        return size;
    }

    /** The value for {@code key}, or 0 if absent. */
    int get(long key) {
        for (int i = index(key); ; i = (i + 1) & mask) {
            int v = values[i];
            if (v == 0 || keys[i] == key) {
                return v;
            }
        }
    }

    /** Inserts a key that must be absent; {@code value} must be positive. */
    void putNew(long key, int value) {
        assert value > 0 && get(key) == 0;
        int i = index(key);
        while (values[i] != 0) {
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = value;
        size++;
    }

    /** Removes {@code key} if it maps to {@code value}; returns whether it did. */
    boolean remove(long key, int value) {
        int i = index(key);
        while (values[i] != 0) {
            if (keys[i] == key) {
                if (values[i] != value) {
                    return false;
                }
                shiftBack(i);
                size--;
                return true;
            }
            i = (i + 1) & mask;
        }
        return false;
    }

    void clear() {
        java.util.Arrays.fill(values, 0);
        size = 0;
    }

    /** Closes the gap at {@code hole} by moving back later entries of the same probe run. */
    private void shiftBack(int hole) {
        int i = hole;
        while (true) {
            i = (i + 1) & mask;
            if (values[i] == 0) {
                break;
            }
            int home = index(keys[i]);
            // Move entry i into the hole unless its home lies cyclically in (hole, i].
            boolean homeBetween = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
            if (!homeBetween) {
                keys[hole] = keys[i];
                values[hole] = values[i];
                hole = i;
            }
        }
        values[hole] = 0;
    }

    private int index(long key) {
        return (int) (key ^ (key >>> 32)) & mask;
    }
}
