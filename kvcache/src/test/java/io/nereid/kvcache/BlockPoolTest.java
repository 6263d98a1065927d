package io.nereid.kvcache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BlockPoolTest {

    private final BlockPool pool = new BlockPool(new KvCacheConfig(6, 8, 0, 1));

    @Test
    void allocatesEveryUsableBlockOnceAndNeverTheNullBlock() {
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 5; i++) {
            int block = pool.allocate();
            assertNotEquals(BlockPool.NULL_BLOCK, block);
            assertTrue(seen.add(block), "block " + block + " handed out twice");
            assertEquals(1, pool.refCount(block));
        }
        assertEquals(0, pool.freeBlocks());
        var e = assertThrows(NoFreeBlocksException.class, pool::allocate);
        assertEquals(1, e.needed());
        assertEquals(0, e.free());
    }

    @Test
    void referenceCountsFreeABlockOnlyWhenTheLastOwnerReleases() {
        int block = pool.allocate();
        pool.retain(block);
        assertEquals(2, pool.refCount(block));
        pool.release(block);
        assertEquals(4, pool.freeBlocks());
        pool.release(block);
        assertEquals(0, pool.refCount(block));
        assertEquals(5, pool.freeBlocks());
        assertThrows(IllegalStateException.class, () -> pool.release(block));
    }

    @Test
    void theNullBlockCannotBeRetainedReleasedOrCached() {
        assertThrows(IllegalArgumentException.class, () -> pool.retain(BlockPool.NULL_BLOCK));
        assertThrows(IllegalArgumentException.class, () -> pool.release(BlockPool.NULL_BLOCK));
        assertThrows(IllegalArgumentException.class,
                () -> pool.register(BlockPool.NULL_BLOCK, 1, 2, 3, new int[8], 0));
        assertThrows(IllegalArgumentException.class, () -> pool.refCount(6));
        assertThrows(IllegalArgumentException.class, () -> pool.refCount(-1));
    }

    @Test
    void uncachedBlocksAreReusedBeforeCachedOnesAndCachedOnesInLruOrder() {
        int a = pool.allocate();
        int b = pool.allocate();
        int c = pool.allocate();
        pool.register(a, 100, 0, 0, new int[8], 0);
        pool.register(b, 200, 0, 0, new int[8], 0);
        pool.release(a);          // cached -> tail
        pool.release(c);          // uncached -> head
        pool.release(b);          // cached -> tail, after a
        int[] queue = pool.freeQueue();
        assertEquals(c, queue[0]);
        assertEquals(a, queue[queue.length - 2]);
        assertEquals(b, queue[queue.length - 1]);
        assertEquals(2, pool.evictableBlocks());

        // Drain the uncached blocks; the next allocation evicts a (least recently freed) first.
        while (pool.freeBlocks() > 2) {
            pool.allocate();
        }
        assertEquals(a, pool.allocate());
        assertFalse(pool.isCached(a));
        assertEquals(1, pool.stats().evictions());
        assertTrue(pool.isCached(b));
        assertEquals(1, pool.evictableBlocks());
    }

    @Test
    void retainingAFreeCachedBlockTakesItOutOfTheFreeQueueWithItsContents() {
        int a = pool.allocate();
        pool.register(a, 100, 0, 0, new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 0);
        pool.release(a);
        assertEquals(5, pool.freeBlocks());
        pool.retain(a);
        assertEquals(4, pool.freeBlocks());
        assertEquals(0, pool.evictableBlocks());
        assertTrue(pool.isCached(a));
        assertArrayEquals(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, pool.cachedTokens(a));
        for (int block : pool.freeQueue()) {
            assertNotEquals(a, block);
        }
    }

    @Test
    void onlyOneBlockIsRegisteredPerHash() {
        int a = pool.allocate();
        int b = pool.allocate();
        assertTrue(pool.register(a, 7, 0, 0, new int[8], 0));
        assertFalse(pool.register(b, 7, 0, 0, new int[8], 0));
        assertFalse(pool.isCached(b));
    }

    @Test
    void lookupComparesContentsSoAHashCollisionIsAMiss() {
        int a = pool.allocate();
        int[] stored = {1, 2, 3, 4, 5, 6, 7, 8};
        pool.register(a, 42, 9, 3, stored, 0);
        assertEquals(a, pool.lookup(42, 9, 3, stored.clone(), 0));
        int[] other = stored.clone();
        other[5] = 99;
        assertEquals(BlockPool.NULL_BLOCK, pool.lookup(42, 9, 3, other, 0), "same hash, other tokens");
        assertEquals(BlockPool.NULL_BLOCK, pool.lookup(42, 8, 3, stored, 0), "same hash, other parent");
        assertEquals(BlockPool.NULL_BLOCK, pool.lookup(42, 9, 4, stored, 0), "same hash, other extra key");
        assertEquals(BlockPool.NULL_BLOCK, pool.lookup(43, 9, 3, stored, 0), "other hash");
    }

    @Test
    void resetForgetsCachedBlocksAndMakesFreeOnesReusableFirst() {
        int a = pool.allocate();
        int b = pool.allocate();
        pool.register(a, 1, 0, 0, new int[8], 0);
        pool.register(b, 2, 0, 0, new int[8], 0);
        pool.release(a);
        pool.resetPrefixCache();
        assertFalse(pool.isCached(a));
        assertFalse(pool.isCached(b));
        assertEquals(0, pool.evictableBlocks());
        assertEquals(a, pool.freeQueue()[0]);
        assertEquals(BlockPool.NULL_BLOCK, pool.lookup(1, 0, 0, new int[8], 0));
        assertEquals(a, pool.allocate());
        assertEquals(0, pool.stats().evictions(), "dropping by reset is not an eviction");
    }

    @Test
    void statsCountUsedAndCachedFreeBlocks() {
        int a = pool.allocate();
        int b = pool.allocate();
        pool.register(b, 5, 0, 0, new int[8], 0);
        pool.release(b);
        KvCacheStats stats = pool.stats();
        assertEquals(5, stats.totalBlocks());
        assertEquals(1, stats.usedBlocks());
        assertEquals(4, stats.freeBlocks());
        assertEquals(1, stats.cachedFreeBlocks());
        assertEquals(0.2, stats.usage(), 1e-12);
        assertEquals(1, pool.refCount(a));
    }
}
