package io.nereid.kvcache;

import java.util.Arrays;

/**
 * A fixed pool of KV-cache blocks: reference counts, an LRU queue of free blocks, and the
 * prefix-cache index of full blocks by content hash. Deals in block ids only; the K/V tensors
 * live in the backend (see {@link KvCacheManager} for the CPU layout).
 *
 * <h2>Free queue</h2>
 * A block is free exactly when its reference count is 0. Free blocks form one doubly linked list
 * (O(1) push, pop and unlink from the middle):
 * <pre>
 *   head (reused first)                                           tail (reused last)
 *   [uncached free blocks ...][cached blocks, least recently freed ... most recently freed]
 * </pre>
 * A freed block that holds no cached prefix goes to the head, since its contents are worthless;
 * a cached block goes to the tail and keeps its contents until allocation reaches it (lazy
 * eviction). A cache hit on a free cached block unlinks it from the queue.
 *
 * <h2>Prefix index</h2>
 * A full block is registered under {@code hash(parentHash, extraKey, tokens)}; the pool keeps its
 * tokens, parent hash and extra key and compares them on every hit, so a hash collision is a miss,
 * never a wrong hit. At most one block is registered per hash: a second block with the same
 * contents stays private to its sequence.
 *
 * <p>Block 0 is the reserved null block: never allocated, never freed, never cached; block
 * tables of backends that pad use it as filler.
 *
 * <p><b>Not thread-safe.</b> Owned by the engine thread, like everything in this package.
 */
public final class BlockPool {

    /** The reserved null block id. */
    public static final int NULL_BLOCK = 0;

    private static final int NIL = -1;

    private final int numBlocks;
    private final int blockSize;
    private final BlockHasher hasher;

    private final int[] refCount;            // (numBlocks) owners per block; the null block is pinned at 1
    private final int[] prev;                // (numBlocks) free-queue links, NIL at the ends
    private final int[] next;
    private int head = NIL;
    private int tail = NIL;
    private int freeCount;

    private final boolean[] cached;          // (numBlocks) registered in the prefix index
    private final long[] hashOf;             // (numBlocks) valid where cached
    private final long[] parentHashOf;
    private final long[] extraKeyOf;
    private final int[] tokensOf;            // (numBlocks, blockSize) token ids of cached blocks
    private final LongIntHashMap index;
    private int cachedFreeCount;

    private long prefixQueries;
    private long prefixQueryTokens;
    private long prefixHitTokens;
    private long evictions;

    public BlockPool(KvCacheConfig config) {
        this.numBlocks = config.numBlocks();
        this.blockSize = config.blockSize();
        this.hasher = new BlockHasher(config.hashSeed());
        this.refCount = new int[numBlocks];
        this.prev = new int[numBlocks];
        this.next = new int[numBlocks];
        this.cached = new boolean[numBlocks];
        this.hashOf = new long[numBlocks];
        this.parentHashOf = new long[numBlocks];
        this.extraKeyOf = new long[numBlocks];
        this.tokensOf = new int[Math.multiplyExact(numBlocks, blockSize)];
        this.index = new LongIntHashMap(numBlocks);
        refCount[NULL_BLOCK] = 1;
        Arrays.fill(prev, NIL);
        Arrays.fill(next, NIL);
        for (int id = 1; id < numBlocks; id++) {
            pushTail(id);
        }
    }

    public int blockSize() {
        return blockSize;
    }

    /** Usable blocks (the null block excluded). */
    public int usableBlocks() {
        return numBlocks - 1;
    }

    /** Unreferenced blocks, cached or not: how many {@link #allocate()} can hand out now. */
    public int freeBlocks() {
        return freeCount;
    }

    /** Unreferenced blocks that still hold a cached prefix and would be evicted to make room. */
    public int evictableBlocks() {
        return cachedFreeCount;
    }

    public int refCount(int block) {
        checkId(block);
        return refCount[block];
    }

    /** Whether {@code block} is registered in the prefix index. */
    public boolean isCached(int block) {
        checkId(block);
        return cached[block];
    }

    BlockHasher hasher() {
        return hasher;
    }

    /** Whether {@code block} is still cached under {@code hash}; see {@link PrefixMatch}. */
    boolean isCachedAs(int block, long hash) {
        return cached[block] && hashOf[block] == hash;
    }

    /**
     * Takes the least recently used free block, evicting its cached contents if any, and returns
     * it with reference count 1.
     *
     * @throws NoFreeBlocksException if no block is free
     */
    public int allocate() {
        if (freeCount == 0) {
            throw new NoFreeBlocksException(1, 0);
        }
        int block = head;
        unlink(block);
        if (cached[block]) {
            cachedFreeCount--;
            uncache(block);
            evictions++;
        }
        refCount[block] = 1;
        return block;
    }

    /** Adds an owner; a free block leaves the free queue with its contents intact. */
    public void retain(int block) {
        checkUsable(block);
        if (refCount[block] == 0) {
            unlink(block);
            if (cached[block]) {
                cachedFreeCount--;
            }
        }
        refCount[block]++;
    }

    /** Drops an owner; at zero the block becomes free (cached: LRU tail; uncached: head). */
    public void release(int block) {
        checkUsable(block);
        if (refCount[block] <= 0) {
            throw new IllegalStateException("block " + block + " released while free");
        }
        if (--refCount[block] == 0) {
            if (cached[block]) {
                pushTail(block);
                cachedFreeCount++;
            } else {
                pushHead(block);
            }
        }
    }

    /**
     * Registers a full, owned block under its content hash unless another block already holds
     * that hash. Returns whether {@code block} is now cached.
     */
    boolean register(int block, long hash, long parentHash, long extraKey, int[] tokens, int offset) {
        checkUsable(block);
        if (cached[block]) {
            throw new IllegalStateException("block " + block + " is already cached");
        }
        if (index.get(hash) != 0) {
            return false;
        }
        index.putNew(hash, block);
        cached[block] = true;
        hashOf[block] = hash;
        parentHashOf[block] = parentHash;
        extraKeyOf[block] = extraKey;
        System.arraycopy(tokens, offset, tokensOf, block * blockSize, blockSize);
        return true;
    }

    /**
     * The cached block holding exactly these contents, or {@link #NULL_BLOCK}. Compares the
     * stored tokens, parent hash and extra key, so a hash collision is reported as a miss.
     */
    int lookup(long hash, long parentHash, long extraKey, int[] tokens, int offset) {
        int block = index.get(hash);
        if (block == NULL_BLOCK
                || parentHashOf[block] != parentHash
                || extraKeyOf[block] != extraKey
                || !Arrays.equals(tokensOf, block * blockSize, (block + 1) * blockSize,
                        tokens, offset, offset + blockSize)) {
            return NULL_BLOCK;
        }
        return block;
    }

    /** Removes an owned block from the prefix index before its slots are overwritten. */
    void uncacheForWrite(int block) {
        checkUsable(block);
        if (refCount[block] == 0) {
            throw new IllegalStateException("block " + block + " written while free");
        }
        if (cached[block]) {
            uncache(block);
        }
    }

    void recordQuery(int queriedTokens, int hitTokens) {
        prefixQueries++;
        prefixQueryTokens += queriedTokens;
        prefixHitTokens += hitTokens;
    }

    /**
     * Forgets every cached prefix (e.g. after a failed forward pass left K/V undefined, or when
     * weights change). Blocks in use stay allocated; free blocks become plain free blocks.
     */
    public void resetPrefixCache() {
        for (int block = 1; block < numBlocks; block++) {
            if (cached[block]) {
                if (refCount[block] == 0) {
                    // Worthless now: move to the head so it is reused first.
                    unlink(block);
                    pushHead(block);
                }
                cached[block] = false;
            }
        }
        index.clear();
        cachedFreeCount = 0;
    }

    public KvCacheStats stats() {
        return new KvCacheStats(usableBlocks(), usableBlocks() - freeCount, cachedFreeCount,
                prefixQueries, prefixQueryTokens, prefixHitTokens, evictions);
    }

    /** The tokens a cached block was registered with (a copy); for tests and diagnostics. */
    int[] cachedTokens(int block) {
        checkUsable(block);
        if (!cached[block]) {
            throw new IllegalStateException("block " + block + " is not cached");
        }
        return Arrays.copyOfRange(tokensOf, block * blockSize, (block + 1) * blockSize);
    }

    /** Free block ids from head (reused first) to tail; for tests and diagnostics. */
    int[] freeQueue() {
        int[] ids = new int[freeCount];
        int i = 0;
        for (int b = head; b != NIL; b = next[b]) {
            ids[i++] = b;
        }
        return ids;
    }

    private void uncache(int block) {
        index.remove(hashOf[block], block);
        cached[block] = false;
    }

    private void pushHead(int block) {
        prev[block] = NIL;
        next[block] = head;
        if (head != NIL) {
            prev[head] = block;
        } else {
            tail = block;
        }
        head = block;
        freeCount++;
    }

    private void pushTail(int block) {
        next[block] = NIL;
        prev[block] = tail;
        if (tail != NIL) {
            next[tail] = block;
        } else {
            head = block;
        }
        tail = block;
        freeCount++;
    }

    private void unlink(int block) {
        int p = prev[block];
        int n = next[block];
        if (p != NIL) {
            next[p] = n;
        } else {
            head = n;
        }
        if (n != NIL) {
            prev[n] = p;
        } else {
            tail = p;
        }
        prev[block] = NIL;
        next[block] = NIL;
        freeCount--;
    }

    private void checkId(int block) {
        if (block < 0 || block >= numBlocks) {
            throw new IllegalArgumentException("no block " + block + " in a pool of " + numBlocks);
        }
    }

    private void checkUsable(int block) {
        checkId(block);
        if (block == NULL_BLOCK) {
            throw new IllegalArgumentException("the null block cannot be used");
        }
    }
}
