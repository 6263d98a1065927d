package io.nereid.kvcache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Model-based test: thousands of random allocate / append / fork / truncate / free / prefix
 * lookup / adopt operations, each followed by a full check against a simple reference model:
 * the tokens each live sequence should hold, and a simulated backend that stores one token id
 * per K/V slot and executes the manager's copy-on-write copies. Every step checks that no block
 * is leaked or owned twice, that reference counts equal owners, that every sequence reads back
 * its own tokens through its block table (so no shared block was ever written), that every
 * cached block holds the tokens it is registered with, and that every prefix hit returns blocks
 * whose contents equal the prompt's.
 */
class KvCacheModelTest {

    private static final int STEPS = 4_000;
    private static final int VOCAB = 4; // tiny, so that unrelated prompts share blocks too

    private KvCacheManager kv;
    private BlockPool pool;
    private int bs;
    private int[][] storage;                                        // (numBlocks, blockSize) simulated K/V
    private final Map<BlockTable, List<Integer>> live = new LinkedHashMap<>();
    private final List<int[]> history = new ArrayList<>();         // prompts seen, to build shared prefixes
    private Random random;
    private long hits;
    private long copies;

    @ParameterizedTest(name = "seed {0}, {1} blocks of {2}")
    @CsvSource({"1, 24, 8", "2, 40, 8", "3, 64, 16", "4, 25, 16", "5, 130, 32", "6, 33, 64", "7, 12, 8"})
    @Timeout(60)
    void randomOperationsKeepEveryInvariant(long seed, int numBlocks, int blockSize) {
        random = new Random(seed);
        kv = new KvCacheManager(new KvCacheConfig(numBlocks, blockSize, 0.05, seed));
        pool = kv.pool();
        bs = blockSize;
        storage = new int[numBlocks][bs];
        for (int[] block : storage) {
            Arrays.fill(block, -1);
        }
        for (int step = 0; step < STEPS; step++) {
            int op = random.nextInt(100);
            try {
                if (op < 20 || live.isEmpty()) {
                    newSequence();
                } else if (op < 50) {
                    appendToRandom();
                } else if (op < 60) {
                    forkRandom();
                } else if (op < 72) {
                    truncateRandom();
                } else if (op < 85) {
                    freeRandom();
                } else if (op < 99) {
                    lookupOnly();
                } else {
                    kv.resetPrefixCache();
                }
                checkInvariants();
            } catch (AssertionError e) {
                throw new AssertionError("seed " + seed + ", step " + step + ", op " + op + ": " + e.getMessage(), e);
            }
        }
        for (BlockTable t : new ArrayList<>(live.keySet())) {
            t.free();
            live.remove(t);
        }
        checkInvariants();
        assertEquals(numBlocks - 1, pool.freeBlocks(), "everything free at the end");
        assertEquals(0, kv.stats().usedBlocks());
        assertTrue(hits > 0, "the workload must exercise prefix hits");
        assertTrue(copies > 0, "the workload must exercise copy-on-write");
    }

    private int[] randomPrompt() {
        int[] suffix = randomTokens(1 + random.nextInt(3 * bs));
        if (history.isEmpty() || random.nextInt(4) == 0) {
            return suffix;
        }
        int[] base = history.get(random.nextInt(history.size()));
        int keep = random.nextInt(base.length + 1);
        int[] prompt = Arrays.copyOf(base, keep + suffix.length);
        System.arraycopy(suffix, 0, prompt, keep, suffix.length);
        return prompt;
    }

    private int[] randomTokens(int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = random.nextInt(VOCAB);
        }
        return t;
    }

    private void newSequence() {
        int[] prompt = randomPrompt();
        long extraKey = random.nextInt(5) == 0 ? 1 : 0;
        PrefixMatch match = lookupAndCheck(prompt, extraKey);
        int firstChunk = match.numTokens() + random.nextInt(prompt.length - match.numTokens() + 1);
        int predicted = kv.blocksToAdmit(match, firstChunk);
        if (!kv.canAdmit(predicted)) {
            return;
        }
        int freeBefore = pool.freeBlocks();
        BlockTable t = kv.newTable(extraKey, match, prompt);
        hits += match.numTokens();
        live.put(t, new ArrayList<>());
        record(t, prompt, 0, match.numTokens(), false);
        appendChecked(t, prompt, match.numTokens(), firstChunk - match.numTokens());
        assertEquals(freeBefore - predicted, pool.freeBlocks(), "blocksToAdmit predicted the blocks taken");
        history.add(prompt);
        if (history.size() > 50) {
            history.remove(0);
        }
    }

    private void appendToRandom() {
        BlockTable t = randomLive();
        int[] tokens = random.nextBoolean() ? randomTokens(1) : randomTokens(1 + random.nextInt(2 * bs));
        appendChecked(t, tokens, 0, tokens.length);
    }

    /** Appends if it fits; otherwise checks the typed failure changed nothing. */
    private void appendChecked(BlockTable t, int[] src, int offset, int count) {
        int needed = t.blocksNeededToAppend(count);
        if (needed > pool.freeBlocks()) {
            int[] before = t.blockIds();
            int freeBefore = pool.freeBlocks();
            assertTrue(!kv.canAppend(t, count));
            assertThrows(NoFreeBlocksException.class, () -> t.append(src, offset, count));
            assertArrayEquals(before, t.blockIds());
            assertEquals(freeBefore, pool.freeBlocks());
            return;
        }
        int freeBefore = pool.freeBlocks();
        int oldLength = t.length();
        t.append(src, offset, count);
        assertEquals(freeBefore - needed, pool.freeBlocks(), "blocksNeededToAppend was exact");
        // The backend runs the queued copies before writing this step's K/V.
        for (BlockCopy c : kv.drainCopies()) {
            copies++;
            System.arraycopy(storage[c.source()], 0, storage[c.target()], 0, c.numSlots());
        }
        record(t, src, offset, count, true);
        assertEquals(oldLength + count, t.length());
    }

    private void record(BlockTable t, int[] src, int offset, int count, boolean write) {
        List<Integer> expected = live.get(t);
        for (int i = 0; i < count; i++) {
            int position = expected.size();
            expected.add(src[offset + i]);
            if (write) {
                storage[t.blockId(position / bs)][position % bs] = src[offset + i];
            }
        }
    }

    private void forkRandom() {
        BlockTable parent = randomLive();
        BlockTable child = parent.fork();
        live.put(child, new ArrayList<>(live.get(parent)));
    }

    private void truncateRandom() {
        BlockTable t = randomLive();
        int newLength = random.nextInt(t.length() + 1);
        t.truncate(newLength);
        live.get(t).subList(newLength, live.get(t).size()).clear();
    }

    private void freeRandom() {
        BlockTable t = randomLive();
        t.free();
        live.remove(t);
    }

    private void lookupOnly() {
        lookupAndCheck(randomPrompt(), random.nextInt(5) == 0 ? 1 : 0);
    }

    private PrefixMatch lookupAndCheck(int[] prompt, long extraKey) {
        PrefixMatch match = kv.longestCachedPrefix(prompt, extraKey);
        assertEquals(0, match.numTokens() % bs, "block-aligned");
        assertTrue(match.numTokens() < Math.max(1, prompt.length), "leaves at least one token");
        for (int i = 0; i < match.numBlocks(); i++) {
            int block = match.blockId(i);
            assertTrue(pool.isCached(block), "hit on an uncached block " + block);
            assertArrayEquals(Arrays.copyOfRange(prompt, i * bs, (i + 1) * bs), storage[block],
                    "hit block " + block + " holds other tokens than the prompt");
        }
        return match;
    }

    private BlockTable randomLive() {
        int index = random.nextInt(live.size());
        for (BlockTable t : live.keySet()) {
            if (index-- == 0) {
                return t;
            }
        }
        throw new IllegalStateException();
    }

    private void checkInvariants() {
        int numBlocks = storage.length;
        int[] owners = new int[numBlocks];
        for (Map.Entry<BlockTable, List<Integer>> e : live.entrySet()) {
            BlockTable t = e.getKey();
            List<Integer> expected = e.getValue();
            assertEquals(expected.size(), t.length());
            assertEquals((t.length() + bs - 1) / bs, t.numBlocks(), "blocks = ceil(length / blockSize)");
            for (int i = 0; i < t.numBlocks(); i++) {
                int block = t.blockId(i);
                if (block == BlockPool.NULL_BLOCK) {
                    fail("a table holds the null block");
                }
                owners[block]++;
            }
            for (int p = 0; p < expected.size(); p++) {
                assertEquals((int) expected.get(p), t.token(p));
                assertEquals((int) expected.get(p), storage[t.blockId(p / bs)][p % bs],
                        "position " + p + " reads another sequence's K/V");
            }
        }
        boolean[] inQueue = new boolean[numBlocks];
        for (int block : pool.freeQueue()) {
            assertTrue(block != BlockPool.NULL_BLOCK && !inQueue[block], "free queue holds " + block + " twice or null");
            inQueue[block] = true;
        }
        int used = 0;
        int cachedFree = 0;
        for (int block = 1; block < numBlocks; block++) {
            assertEquals(owners[block], pool.refCount(block), "ref count of block " + block);
            assertEquals(owners[block] == 0, inQueue[block], "block " + block + " is free iff unowned");
            used += owners[block] > 0 ? 1 : 0;
            if (pool.isCached(block)) {
                cachedFree += owners[block] == 0 ? 1 : 0;
                assertArrayEquals(pool.cachedTokens(block), storage[block],
                        "cached block " + block + " no longer holds its registered tokens");
            }
        }
        KvCacheStats stats = kv.stats();
        assertEquals(used, stats.usedBlocks());
        assertEquals(cachedFree, stats.cachedFreeBlocks());
        assertEquals(numBlocks - 1 - used, pool.freeBlocks());
        assertTrue(kv.drainCopies().isEmpty(), "every copy was consumed");
    }
}
