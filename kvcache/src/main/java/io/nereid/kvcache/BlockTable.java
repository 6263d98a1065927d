package io.nereid.kvcache;

import java.util.Arrays;

/**
 * One sequence's map from logical blocks to physical blocks, and the token ids it holds.
 * Token {@code p} of the sequence lives in slot {@code p % blockSize} of physical block
 * {@code blockId(p / blockSize)}. Blocks are allocated lazily: a table of {@code n} tokens owns
 * exactly {@code ceil(n / blockSize)} blocks.
 *
 * <p>Writing rules, applied whenever tokens are appended into an existing partial block:
 * <ul>
 *   <li>shared with another table (reference count &gt; 1): copy-on-write — a fresh block is
 *       allocated and a {@link BlockCopy} queued on the manager for the backend;</li>
 *   <li>owned alone but registered in the prefix cache (possible after {@link #truncate}): it is
 *       unregistered first, since its slots are about to change.</li>
 * </ul>
 * Every block that becomes full is offered to the prefix cache.
 *
 * <p>Lifecycle: created by {@link KvCacheManager}; {@link #free()} returns its blocks, tail first,
 * after which only {@code free()} (a no-op) and {@link #isFreed()} may be called.
 * <b>Not thread-safe</b>: engine thread only.
 */
public final class BlockTable {

    private final KvCacheManager manager;
    private final BlockPool pool;
    private final int blockSize;
    private final long extraKey;

    private int[] blocks;     // (capacity >= numBlocks) physical block ids
    private long[] hashes;    // (capacity) chain hash of each full logical block
    private int numBlocks;
    private int[] tokens;     // (capacity >= length) token ids
    private int length;
    private boolean freed;
    /** Blocks {@link #append(int[], int, int)} took for the blocks it opens, in ascending order, or null. */
    private int[] opening;
    private int openingAt;

    BlockTable(KvCacheManager manager, long extraKey) {
        this.manager = manager;
        this.pool = manager.pool();
        this.blockSize = pool.blockSize();
        this.extraKey = extraKey;
        this.blocks = new int[4];
        this.hashes = new long[4];
        this.tokens = new int[4 * blockSize];
    }

    private BlockTable(BlockTable parent) {
        this.manager = parent.manager;
        this.pool = parent.pool;
        this.blockSize = parent.blockSize;
        this.extraKey = parent.extraKey;
        this.blocks = parent.blocks.clone();
        this.hashes = parent.hashes.clone();
        this.numBlocks = parent.numBlocks;
        this.tokens = parent.tokens.clone();
        this.length = parent.length;
    }

    /** Tokens held (computed or scheduled). */
    public int length() {
        return length;
    }

    public int numBlocks() {
        return numBlocks;
    }

    public long extraKey() {
        return extraKey;
    }

    public boolean isFreed() {
        return freed;
    }

    /** Physical id of logical block {@code logicalBlock}. */
    public int blockId(int logicalBlock) {
        checkLive();
        if (logicalBlock < 0 || logicalBlock >= numBlocks) {
            throw new IndexOutOfBoundsException("logical block " + logicalBlock + " of " + numBlocks);
        }
        return blocks[logicalBlock];
    }

    /** Physical ids of all blocks in logical order (a copy). */
    public int[] blockIds() {
        checkLive();
        return Arrays.copyOf(blocks, numBlocks);
    }

    /** Flat slot index {@code blockId * blockSize + position % blockSize} of a token position. */
    public int slot(int position) {
        if (position < 0 || position >= length) {
            throw new IndexOutOfBoundsException("position " + position + " of " + length);
        }
        return blocks[position / blockSize] * blockSize + position % blockSize;
    }

    public int token(int position) {
        if (position < 0 || position >= length) {
            throw new IndexOutOfBoundsException("position " + position + " of " + length);
        }
        return tokens[position];
    }

    /** The token ids held (a copy). */
    public int[] tokens() {
        return Arrays.copyOf(tokens, length);
    }

    /**
     * Blocks that appending {@code count} tokens would take from the free pool: new blocks past
     * the boundary plus one if the partial last block is shared and must be copied.
     */
    public int blocksNeededToAppend(int count) {
        checkLive();
        if (count < 0) {
            throw new IllegalArgumentException("count must be >= 0, got " + count);
        }
        if (count == 0) {
            return 0;
        }
        int needed = ceilDiv(length + count) - numBlocks;
        if (length % blockSize != 0 && pool.refCount(blocks[numBlocks - 1]) > 1) {
            needed++;
        }
        return needed;
    }

    /** Appends one token; see {@link #append(int[], int, int)}. */
    public void append(int token) {
        checkLive();
        ensureFree(blocksNeededToAppend(1));
        appendUnchecked(token);
    }

    /** Appends all of {@code src}; see {@link #append(int[], int, int)}. */
    public void append(int[] src) {
        append(src, 0, src.length);
    }

    /**
     * Appends {@code count} token ids, allocating blocks at boundaries (the blocks one call opens are
     * taken together and used in ascending order of their ids). Atomic: if the pool cannot
     * supply {@link #blocksNeededToAppend(int)} blocks, throws {@link NoFreeBlocksException} and
     * changes nothing.
     *
     * <p>The caller appends tokens when it schedules them for a forward pass; full blocks become
     * visible to prefix lookups at once. That is safe because the backend writes all K/V of a
     * layer before any attention of that layer, so a request that hits a block in the same step
     * reads it after it is written.
     */
    public void append(int[] src, int offset, int count) {
        checkLive();
        java.util.Objects.checkFromIndexSize(offset, count, src.length);
        ensureFree(blocksNeededToAppend(count));
        int opens = ceilDiv(length + count) - numBlocks;
        if (opens > 1) {
            // the blocks taken at once and used in ascending order: the pool's queue hands back a freed
            // sequence's full (cached) blocks last first, and the CPU backend's attention reads each KV head's
            // rows of consecutive blocks as one run of memory (KvStorage), which it streams fastest upwards
            opening = new int[opens];
            for (int i = 0; i < opens; i++) {
                opening[i] = pool.allocate();
            }
            Arrays.sort(opening);
            openingAt = 0;
        }
        try {
            for (int i = 0; i < count; i++) {
                appendUnchecked(src[offset + i]);
            }
        } finally {
            if (opening != null) {
                while (openingAt < opening.length) {   // only after a failure part way: none left unowned
                    pool.release(opening[openingAt++]);
                }
                opening = null;
            }
        }
    }

    /**
     * Shortens the sequence to {@code newLength} tokens (speculative-decoding rollback,
     * recompute from a point), releasing blocks past it tail first. A kept partial block keeps
     * its contents; it is copied or unregistered only when next written.
     */
    public void truncate(int newLength) {
        checkLive();
        if (newLength < 0 || newLength > length) {
            throw new IllegalArgumentException("cannot truncate " + length + " tokens to " + newLength);
        }
        int keepBlocks = ceilDiv(newLength);
        while (numBlocks > keepBlocks) {
            pool.release(blocks[--numBlocks]);
        }
        length = newLength;
    }

    /**
     * A new table holding the same tokens and sharing every block (reference counts + 1), for
     * n &gt; 1 choices or beam candidates. The shared partial last block is copied by whichever
     * table writes it first.
     */
    public BlockTable fork() {
        checkLive();
        for (int i = 0; i < numBlocks; i++) {
            pool.retain(blocks[i]);
        }
        return new BlockTable(this);
    }

    /** Releases every block, last block first so that chain tails are evicted before heads. Idempotent. */
    public void free() {
        if (freed) {
            return;
        }
        while (numBlocks > 0) {
            pool.release(blocks[--numBlocks]);
        }
        length = 0;
        freed = true;
    }

    /** Takes over a prefix match: its blocks gain this table as an owner. */
    void adopt(PrefixMatch match, int[] prompt) {
        for (int i = 0; i < match.numBlocks(); i++) {
            pool.retain(match.blockId(i));
        }
        ensureBlockCapacity(match.numBlocks());
        ensureTokenCapacity(match.numTokens());
        for (int i = 0; i < match.numBlocks(); i++) {
            blocks[i] = match.blockId(i);
            hashes[i] = match.hash(i);
        }
        numBlocks = match.numBlocks();
        System.arraycopy(prompt, 0, tokens, 0, match.numTokens());
        length = match.numTokens();
    }

    private void appendUnchecked(int token) {
        int offsetInBlock = length % blockSize;
        if (offsetInBlock == 0) {
            ensureBlockCapacity(numBlocks + 1);
            blocks[numBlocks++] = opening != null ? opening[openingAt++] : pool.allocate();
        } else {
            prepareForWrite(numBlocks - 1, offsetInBlock);
        }
        ensureTokenCapacity(length + 1);
        tokens[length++] = token;
        if (length % blockSize == 0) {
            int logical = numBlocks - 1;
            long parent = logical == 0 ? BlockHasher.ROOT : hashes[logical - 1];
            int start = logical * blockSize;
            long hash = pool.hasher().hash(parent, extraKey, tokens, start, blockSize);
            hashes[logical] = hash;
            pool.register(blocks[logical], hash, parent, extraKey, tokens, start);
        }
    }

    /** Makes the partial block {@code logical} (holding {@code filled} tokens) private and writable. */
    private void prepareForWrite(int logical, int filled) {
        int block = blocks[logical];
        if (pool.refCount(block) > 1) {
            int copy = pool.allocate();
            manager.queueCopy(new BlockCopy(block, copy, filled));
            pool.release(block);
            blocks[logical] = copy;
        } else {
            pool.uncacheForWrite(block);
        }
    }

    private void ensureFree(int needed) {
        if (needed > pool.freeBlocks()) {
            throw new NoFreeBlocksException(needed, pool.freeBlocks());
        }
    }

    private void ensureBlockCapacity(int n) {
        if (n > blocks.length) {
            int capacity = Math.max(n, blocks.length * 2);
            blocks = Arrays.copyOf(blocks, capacity);
            hashes = Arrays.copyOf(hashes, capacity);
        }
    }

    private void ensureTokenCapacity(int n) {
        if (n > tokens.length) {
            tokens = Arrays.copyOf(tokens, Math.max(n, tokens.length * 2));
        }
    }

    private int ceilDiv(int tokenCount) {
        return (tokenCount + blockSize - 1) / blockSize;
    }

    private void checkLive() {
        if (freed) {
            throw new IllegalStateException("block table used after free()");
        }
    }
}
