package io.nereid.engine.model;

import io.nereid.kvcache.BlockCopy;

/**
 * The K/V tensors of the paged cache for the CPU backend, F32, one K and one V array per layer
 * with layout {@code [block][kvHead][slot][headDim]} (see {@code KvCacheManager}): element
 * {@code ((block * kvHeads + head) * blockSize + slot) * headDim + d}. The block manager decides
 * which blocks a sequence uses; this class only stores them. Not thread-safe for writes:
 * the forward pass writes disjoint slots from the kernel pool, copies run before a step.
 */
public final class KvStorage {

    private final int numBlocks;
    private final int blockSize;
    private final int kvHeads;
    private final int headDim;
    private final float[][] keys;     // (layers) [block][kvHead][slot][headDim]
    private final float[][] values;

    public KvStorage(ModelConfig config, int numBlocks, int blockSize) {
        this.numBlocks = numBlocks;
        this.blockSize = blockSize;
        this.kvHeads = config.kvHeads();
        this.headDim = config.headDim();
        long perLayer = (long) numBlocks * kvHeads * blockSize * headDim;
        if (perLayer > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("KV cache of " + numBlocks + " blocks is too large for one array per layer");
        }
        this.keys = new float[config.layers()][(int) perLayer];
        this.values = new float[config.layers()][(int) perLayer];
    }

    public int numBlocks() {
        return numBlocks;
    }

    public int blockSize() {
        return blockSize;
    }

    float[] keys(int layer) {
        return keys[layer];
    }

    float[] values(int layer) {
        return values[layer];
    }

    /** Offset of (block, head, slot, 0). */
    int offset(int block, int head, int slot) {
        return ((block * kvHeads + head) * blockSize + slot) * headDim;
    }

    /** Bytes held: 2 (K, V) x layers x blocks x heads x slots x headDim x 4. */
    public long bytes() {
        return 2L * keys.length * keys[0].length * Float.BYTES;
    }

    /** Runs a copy-on-write copy from the block manager: the first slots of a block, every layer and head. */
    public void copy(BlockCopy c) {
        for (int layer = 0; layer < keys.length; layer++) {
            for (int h = 0; h < kvHeads; h++) {
                int from = offset(c.source(), h, 0);
                int to = offset(c.target(), h, 0);
                System.arraycopy(keys[layer], from, keys[layer], to, c.numSlots() * headDim);
                System.arraycopy(values[layer], from, values[layer], to, c.numSlots() * headDim);
            }
        }
    }
}
