package io.nereid.kvcache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class BlockTableTest {

    private static final int BS = 8;
    private final KvCacheManager kv = new KvCacheManager(new KvCacheConfig(9, BS, 0, 1));
    private final BlockPool pool = kv.pool();

    static int[] range(int from, int count) {
        int[] t = new int[count];
        for (int i = 0; i < count; i++) {
            t[i] = from + i;
        }
        return t;
    }

    @Test
    void appendAllocatesANewBlockOnlyAtEachBoundary() {
        BlockTable t = kv.newTable(0);
        assertEquals(0, t.numBlocks());
        t.append(1);
        assertEquals(1, t.numBlocks());
        t.append(range(2, BS - 1));
        assertEquals(1, t.numBlocks(), "exactly one full block");
        t.append(100);
        assertEquals(2, t.numBlocks());
        assertEquals(BS + 1, t.length());
        assertEquals(6, pool.freeBlocks());
    }

    @Test
    void theBlocksOneAppendOpensAreInAscendingOrderAfterAFreedSequenceCameBackLastFirst() {
        BlockTable first = kv.newTable(0);
        first.append(range(0, pool.freeBlocks() * BS));   // every block, each full and cached
        first.free();   // tail first: the pool's queue now holds them last block first
        BlockTable next = kv.newTable(0);
        next.append(range(1000, 4 * BS));
        int[] ids = next.blockIds();
        for (int i = 1; i < ids.length; i++) {
            assertTrue(ids[i] > ids[i - 1], java.util.Arrays.toString(ids));
        }
    }

    @Test
    void slotsMapPositionsIntoTheirPhysicalBlocks() {
        BlockTable t = kv.newTable(0);
        t.append(range(0, 2 * BS + 3));
        for (int p = 0; p < t.length(); p++) {
            assertEquals(t.blockId(p / BS) * BS + p % BS, t.slot(p));
            assertEquals(p, t.token(p));
        }
        assertThrows(IndexOutOfBoundsException.class, () -> t.slot(t.length()));
        assertThrows(IndexOutOfBoundsException.class, () -> t.blockId(3));
    }

    @Test
    void appendThatDoesNotFitThrowsAndChangesNothing() {
        BlockTable t = kv.newTable(0);
        t.append(range(0, 3));
        int[] before = t.blockIds();
        var e = assertThrows(NoFreeBlocksException.class, () -> t.append(range(0, 9 * BS)));
        assertEquals(9, e.needed());
        assertEquals(7, e.free());
        assertArrayEquals(before, t.blockIds());
        assertEquals(3, t.length());
        assertEquals(7, pool.freeBlocks());
    }

    @Test
    void blocksNeededCountsBoundariesAndACopyOfASharedPartialBlock() {
        BlockTable t = kv.newTable(0);
        assertEquals(0, t.blocksNeededToAppend(0));
        assertEquals(1, t.blocksNeededToAppend(1));
        assertEquals(2, t.blocksNeededToAppend(BS + 1));
        t.append(range(0, 3));
        assertEquals(0, t.blocksNeededToAppend(BS - 3));
        assertEquals(1, t.blocksNeededToAppend(BS - 2));
        BlockTable child = t.fork();
        assertEquals(1, t.blocksNeededToAppend(1), "shared partial block must be copied");
        assertEquals(1, child.blocksNeededToAppend(1));
        assertTrue(kv.canAppend(t, 1));
    }

    @Test
    void truncateReleasesBlocksPastTheNewLengthTailFirst() {
        BlockTable t = kv.newTable(0);
        t.append(range(0, 3 * BS + 2));
        int[] ids = t.blockIds();
        t.truncate(BS + 1);
        assertEquals(BS + 1, t.length());
        assertEquals(2, t.numBlocks());
        assertArrayEquals(new int[] {ids[0], ids[1]}, t.blockIds());
        // Released: the partial tail (uncached, to the head) then block 2 (cached, to the tail).
        int[] queue = pool.freeQueue();
        assertEquals(ids[3], queue[0]);
        assertEquals(ids[2], queue[queue.length - 1]);
        t.truncate(0);
        assertEquals(0, t.numBlocks());
        assertThrows(IllegalArgumentException.class, () -> t.truncate(1));
        assertThrows(IllegalArgumentException.class, () -> t.truncate(-1));
    }

    @Test
    void truncateThenAppendRewritesTheKeptBlockAndDropsItsStaleCacheEntry() {
        BlockTable t = kv.newTable(0);
        t.append(range(0, 2 * BS));
        int second = t.blockId(1);
        assertTrue(pool.isCached(second));
        t.truncate(BS + 2);
        assertTrue(pool.isCached(second), "contents unchanged until written");
        t.append(999);
        assertEquals(second, t.blockId(1), "owned alone: written in place");
        assertTrue(!pool.isCached(second), "its old full-block contents are gone");
        assertTrue(kv.drainCopies().isEmpty());
    }

    @Test
    void forkSharesAllBlocksAndCopiesTheSharedPartialBlockOnFirstWrite() {
        BlockTable parent = kv.newTable(0);
        parent.append(range(0, BS + 3));
        int full = parent.blockId(0);
        int partial = parent.blockId(1);
        BlockTable child = parent.fork();
        assertArrayEquals(parent.blockIds(), child.blockIds());
        assertArrayEquals(parent.tokens(), child.tokens());
        assertEquals(2, pool.refCount(full));
        assertEquals(2, pool.refCount(partial));

        child.append(42);
        int copy = child.blockId(1);
        assertNotEquals(partial, copy);
        assertEquals(full, child.blockId(0), "full blocks stay shared");
        assertEquals(List.of(new BlockCopy(partial, copy, 3)), kv.drainCopies());
        assertEquals(1, pool.refCount(partial));
        assertEquals(1, pool.refCount(copy));

        parent.append(43);
        assertEquals(partial, parent.blockId(1), "now sole owner: no second copy");
        assertTrue(kv.drainCopies().isEmpty());
        assertEquals(BS + 4, parent.length());
        assertEquals(42, child.token(BS + 3));
        assertEquals(43, parent.token(BS + 3));
    }

    @Test
    void forkOnABlockBoundaryNeedsNoCopy() {
        BlockTable parent = kv.newTable(0);
        parent.append(range(0, BS));
        BlockTable child = parent.fork();
        child.append(1);
        parent.append(2);
        assertTrue(kv.drainCopies().isEmpty());
        assertEquals(parent.blockId(0), child.blockId(0));
        assertNotEquals(parent.blockId(1), child.blockId(1));
    }

    @Test
    void freeReleasesEveryBlockTailFirstAndIsIdempotent() {
        BlockTable t = kv.newTable(0);
        t.append(range(0, 3 * BS));
        int[] ids = t.blockIds();
        t.free();
        t.free();
        assertTrue(t.isFreed());
        assertEquals(8, pool.freeBlocks());
        int[] queue = pool.freeQueue();
        // All three are cached; released last-first, so the chain tail is evicted first.
        assertArrayEquals(new int[] {ids[2], ids[1], ids[0]},
                new int[] {queue[5], queue[6], queue[7]});
        assertThrows(IllegalStateException.class, () -> t.append(1));
        assertThrows(IllegalStateException.class, t::fork);
        assertThrows(IllegalStateException.class, () -> t.truncate(0));
    }

    @Test
    void aForkOutlivesItsParent() {
        BlockTable parent = kv.newTable(0);
        parent.append(range(0, 2 * BS + 1));
        BlockTable child = parent.fork();
        parent.free();
        assertEquals(3, child.numBlocks());
        for (int id : child.blockIds()) {
            assertEquals(1, pool.refCount(id));
        }
        child.append(5);
        assertTrue(kv.drainCopies().isEmpty(), "sole owner after the parent is gone");
    }
}
