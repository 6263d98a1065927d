package io.nereid.kvcache;

import static io.nereid.kvcache.BlockTableTest.range;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PrefixCacheTest {

    private static final int BS = 16;
    private final KvCacheManager kv = new KvCacheManager(new KvCacheConfig(11, BS, 0, 99));
    private final BlockPool pool = kv.pool();

    private BlockTable computed(int[] tokens, long extraKey) {
        BlockTable t = kv.newTable(extraKey);
        t.append(tokens);
        return t;
    }

    @Test
    void aRepeatedPromptHitsEveryFullBlockButTheOneHoldingItsLastToken() {
        int[] prompt = range(0, 3 * BS + 5);
        BlockTable first = computed(prompt, 0);
        PrefixMatch match = kv.longestCachedPrefix(prompt, 0);
        assertEquals(3 * BS, match.numTokens());
        for (int i = 0; i < 3; i++) {
            assertEquals(first.blockId(i), match.blockId(i));
        }
    }

    @Test
    void aBlockAlignedPromptLeavesItsWholeLastBlockToCompute() {
        int[] prompt = range(0, 2 * BS);
        computed(prompt, 0);
        assertEquals(BS, kv.longestCachedPrefix(prompt, 0).numTokens());
        assertEquals(0, kv.longestCachedPrefix(range(0, BS), 0).numTokens());
        assertEquals(0, kv.longestCachedPrefix(new int[0], 0).numTokens());
        assertEquals(BS, kv.longestCachedPrefix(range(0, BS + 1), 0).numTokens());
    }

    @Test
    void theWalkStopsAtTheFirstMissEvenIfLaterBlocksAreCached() {
        int[] prompt = range(0, 4 * BS);
        computed(prompt, 0);
        int[] edited = prompt.clone();
        edited[BS + 3] = -1; // second block differs
        PrefixMatch match = kv.longestCachedPrefix(edited, 0);
        assertEquals(BS, match.numTokens());
    }

    @Test
    void theExtraKeySeparatesModelsAndAdapters() {
        int[] prompt = range(0, 2 * BS + 1);
        computed(prompt, BlockHasher.extraKeyOf("adapter-a"));
        assertEquals(0, kv.longestCachedPrefix(prompt, BlockHasher.extraKeyOf("adapter-b")).numTokens());
        assertEquals(2 * BS, kv.longestCachedPrefix(prompt, BlockHasher.extraKeyOf("adapter-a")).numTokens());
    }

    @Test
    void aHitSharesTheCachedBlocksAndTheRestIsAppended() {
        int[] prompt = range(0, 2 * BS + 4);
        BlockTable first = computed(prompt, 0);
        PrefixMatch match = kv.longestCachedPrefix(prompt, 0);
        assertEquals(1, kv.blocksToAdmit(match, prompt.length), "only the partial block is new");
        BlockTable second = kv.newTable(0, match, prompt);
        assertEquals(2 * BS, second.length());
        second.append(prompt, match.numTokens(), prompt.length - match.numTokens());
        assertArrayEquals(prompt, second.tokens());
        assertEquals(first.blockId(0), second.blockId(0));
        assertEquals(first.blockId(1), second.blockId(1));
        assertEquals(2, pool.refCount(first.blockId(0)));
        assertTrue(first.blockId(2) != second.blockId(2), "partial blocks are never shared by a hit");
    }

    @Test
    void freedBlocksStayCachedUntilEvictedAndAHitRevivesThem() {
        int[] prompt = range(0, 3 * BS + 1);
        BlockTable first = computed(prompt, 0);
        int[] ids = first.blockIds();
        first.free();
        assertEquals(3, kv.evictableBlocks());
        PrefixMatch match = kv.longestCachedPrefix(prompt, 0);
        assertEquals(3 * BS, match.numTokens());
        assertEquals(4, kv.blocksToAdmit(match, prompt.length), "3 revived + 1 new");
        BlockTable again = kv.newTable(0, match, prompt);
        assertEquals(ids[0], again.blockId(0));
        assertEquals(0, kv.evictableBlocks());
        assertEquals(1, pool.refCount(ids[2]));
    }

    @Test
    void evictionTakesTheLeastRecentlyFreedChainTailFirst() {
        int[] a = range(0, 3 * BS);
        int[] b = range(1000, 3 * BS);
        computed(a, 0).free();
        computed(b, 0).free();
        // 10 usable; 6 cached free. Allocating 5 takes the 4 uncached then evicts a's tail block.
        BlockTable filler = kv.newTable(0);
        filler.append(range(5000, 5 * BS));
        assertEquals(1, kv.stats().evictions());
        int[] aLonger = Arrays.copyOf(a, 3 * BS + 1);
        assertEquals(2 * BS, kv.longestCachedPrefix(aLonger, 0).numTokens(), "a lost its last block only");
        int[] bLonger = Arrays.copyOf(b, 3 * BS + 1);
        assertEquals(3 * BS, kv.longestCachedPrefix(bLonger, 0).numTokens(), "b was freed later: intact");
    }

    @Test
    void aMatchWhoseBlockWasEvictedCannotBeAdopted() {
        int[] prompt = range(0, BS + 1);
        computed(prompt, 0).free();
        PrefixMatch match = kv.longestCachedPrefix(prompt, 0);
        assertEquals(BS, match.numTokens());
        kv.newTable(0).append(range(7000, 10 * BS)); // takes every block, evicting the match
        var e = assertThrows(IllegalStateException.class, () -> kv.newTable(0, match, prompt));
        assertTrue(e.getMessage().contains("stale prefix match"), e.getMessage());
    }

    @Test
    void anIdenticalBlockComputedTwiceIsCachedOnceAndBothCopiesStayCorrect() {
        int[] prompt = range(0, BS);
        BlockTable first = computed(prompt, 0);
        BlockTable second = computed(prompt, 0);
        assertTrue(pool.isCached(first.blockId(0)));
        int duplicate = second.blockId(0);
        assertTrue(!pool.isCached(duplicate));
        second.free();
        assertEquals(0, kv.evictableBlocks(), "the duplicate is worthless once freed");
        assertEquals(duplicate, pool.freeQueue()[0], "so it is reused first");
        assertEquals(first.blockId(0), kv.longestCachedPrefix(range(0, BS + 1), 0).blockId(0));
    }

    @Test
    void statsCountQueriedAndHitTokens() {
        int[] prompt = range(0, 2 * BS + 8);
        kv.longestCachedPrefix(prompt, 0);
        computed(prompt, 0);
        kv.longestCachedPrefix(prompt, 0);
        KvCacheStats stats = kv.stats();
        assertEquals(2, stats.prefixQueries());
        assertEquals(2L * prompt.length, stats.prefixQueryTokens());
        assertEquals(2 * BS, stats.prefixHitTokens());
        assertEquals((double) (2 * BS) / (2 * prompt.length), stats.prefixHitRate(), 1e-12);
    }

    @Test
    void admissionKeepsTheWatermarkForRunningSequences() {
        KvCacheManager wm = new KvCacheManager(new KvCacheConfig(101, BS, 0.1, 1));
        assertEquals(10, wm.watermarkBlocks());
        assertTrue(wm.canAdmit(90));
        assertTrue(!wm.canAdmit(91));
        BlockTable running = wm.newTable(0);
        running.append(range(0, 90 * BS));
        assertTrue(!wm.canAdmit(1), "a new prompt may not eat the watermark");
        assertTrue(wm.canAppend(running, 10 * BS), "a running sequence may");
        assertTrue(!wm.canAppend(running, 10 * BS + 1));
    }

    @Test
    void resetPrefixCacheMakesEveryLookupMiss() {
        int[] prompt = range(0, 2 * BS + 1);
        computed(prompt, 0);
        kv.resetPrefixCache();
        assertEquals(0, kv.longestCachedPrefix(prompt, 0).numTokens());
    }
}
