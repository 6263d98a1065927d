package io.nereid.engine.cpu;

import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.cpu.kernel.KernelSupport;
import io.nereid.engine.model.ModelConfig;
import io.nereid.kvcache.BlockCopy;

/**
 * The K/V tensors of the paged cache for the CPU backend, one K and one V array per layer with
 * layout {@code [kvHead][block][slot][headDim]} (blocks as {@code KvCacheManager} numbers them): element
 * {@code ((head * numBlocks + block) * blockSize + slot) * headDim + d}. Each KV head's blocks lie
 * side by side, so a sequence whose blocks are consecutive (as a fresh cache hands them out) has
 * each head's rows in one run of memory, which attention reads front to back: the layout
 * {@code [block][kvHead][slot][headDim]} made each block of a head a 2 KB run 24 KB from the next
 * (110M, 12 heads of 64), which the hardware prefetchers do not follow: attention over 12 layers of
 * 2,000 positions read the cache at ~7 GB/s on one thread (30.5-39.3 ns a position and head, against
 * 15.6-20.6 head by head and ~15 with the cache in L3), and 110M Q4_0 decoded at 2,000 tokens of
 * context ({@code bin/nereid bench-model -d 2000}) at 82.9-95.9 tok/s against 123.8-152.8 head by head.
 * The F16 vector kernels read a block whose successor lies below it back to front (in runs of up to
 * {@link KernelSupport#QUERIES_ROWS} rows, so at the default block size of 16 the whole block), so a
 * sequence whose blocks run downwards (a freed sequence's full blocks, as the pool's queue hands them
 * back) streams as well; blocks in no order stream as the previous layout did
 * ({@code bench/kernels/AttentionProbe.java}). The F32 cache and the scalar kernels read front to back.
 * Elements are F32 or F16
 * ({@link KvPrecision}, fixed at construction); callers write and attend in F32 and never see
 * which. The block manager decides which blocks a sequence uses; this class only stores them.
 *
 * <p>F16 lives in on-heap {@code short[]}, like F32 in {@code float[]}: the same indexing, bounds
 * checks, {@link System#arraycopy} block copies and Vector API array loads, and no off-heap
 * lifetime to close. The price is the same 2^31-element limit per layer array, which at F16 is
 * half the bytes F32 reaches.
 *
 * <p>Not thread-safe for writes: the forward pass writes disjoint slots, then attention reads
 * concurrently from the kernel pool; copies run before a step.
 */
public final class KvStorage {

    private final KvPrecision precision;
    private final int numBlocks;
    private final int blockSize;
    private final int kvHeads;
    private final int headDim;
    private final int layers;
    private final long elementsPerLayer;
    private final Planes planes;

    /** The K and V arrays of every layer, in one element type. */
    private sealed interface Planes {
        /** Layer {@code layer}'s K ({@code v == false}) or V array, for {@link System#arraycopy}. */
        Object array(int layer, boolean v);
    }

    /** (layers) [kvHead][block][slot][headDim] each. */
    private record F32Planes(float[][] keys, float[][] values) implements Planes {
        @Override
        public Object array(int layer, boolean v) {
            return v ? values[layer] : keys[layer];
        }
    }

    /** (layers) [kvHead][block][slot][headDim] each, binary16 bits. */
    private record F16Planes(short[][] keys, short[][] values) implements Planes {
        @Override
        public Object array(int layer, boolean v) {
            return v ? values[layer] : keys[layer];
        }
    }

    /** An F32 cache. */
    public KvStorage(ModelConfig config, int numBlocks, int blockSize) {
        this(config, numBlocks, blockSize, KvPrecision.F32);
    }

    public KvStorage(ModelConfig config, int numBlocks, int blockSize, KvPrecision precision) {
        this.precision = precision;
        this.numBlocks = numBlocks;
        this.blockSize = blockSize;
        this.kvHeads = config.kvHeads();
        this.headDim = config.headDim();
        this.layers = config.layers();
        this.elementsPerLayer = (long) numBlocks * kvHeads * blockSize * headDim;
        if (elementsPerLayer > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("KV cache of " + numBlocks + " blocks is too large for one array per layer");
        }
        int n = (int) elementsPerLayer;
        this.planes = switch (precision) {
            case F32 -> new F32Planes(new float[layers][n], new float[layers][n]);
            case F16 -> new F16Planes(new short[layers][n], new short[layers][n]);
            case BF16 -> throw new IllegalArgumentException("the CPU backend keeps the KV cache in f16 or f32, not bf16"
                    + " (bf16 is the CUDA backend's)");
        };
    }

    public KvPrecision precision() {
        return precision;
    }

    public int numBlocks() {
        return numBlocks;
    }

    public int blockSize() {
        return blockSize;
    }

    /** Offset of (block, head, slot, 0). */
    int offset(int block, int head, int slot) {
        return ((head * numBlocks + block) * blockSize + slot) * headDim;
    }

    /** Elements between a KV head's consecutive blocks: the kernels' {@code blockStride}. */
    private int blockStride() {
        return blockSize * headDim;
    }

    /**
     * Stores one token's K and V row of one head: {@code headDim} floats from {@code keys[from]}
     * and {@code values[from]} into (block, head, slot), rounded to nearest even for F16.
     */
    void write(int layer, int block, int head, int slot, float[] keys, float[] values, int from) {
        int to = offset(block, head, slot);
        switch (planes) {
            case F32Planes p -> {
                System.arraycopy(keys, from, p.keys()[layer], to, headDim);
                System.arraycopy(values, from, p.values()[layer], to, headDim);
            }
            case F16Planes p -> {
                short[] kc = p.keys()[layer];
                short[] vc = p.values()[layer];
                for (int d = 0; d < headDim; d++) {
                    kc[to + d] = Float.floatToFloat16(keys[from + d]);
                    vc[to + d] = Float.floatToFloat16(values[from + d]);
                }
            }
        }
    }

    /**
     * {@link KernelSupport#attention} (or its F16 twin) of several query heads over
     * {@code kvHead} of one sequence with {@code blockTable}, in {@code layer} (see
     * {@link KernelSupport#attentionF16Queries}): query {@code i} at {@code q[qOffs[i]]} over the
     * first {@code counts[i]} positions into {@code out[outOffs[i]]}, each with the bits of its
     * own call. Safe to call concurrently once the step's writes are done.
     */
    void attentionQueries(KernelSupport k, int layer, float[] q, int[] qOffs, int[] counts, int queries,
            int[] blockTable, int kvHead, float scale, float[] scores, int scoresStride, float[] row, float[] out,
            int[] outOffs) {
        switch (planes) {
            case F32Planes p -> {
                for (int i = 0; i < queries; i++) {
                    k.attention(q, qOffs[i], p.keys()[layer], p.values()[layer], blockTable, counts[i], blockSize,
                            offset(0, kvHead, 0), blockStride(), headDim, scale, scores, out, outOffs[i]);
                }
            }
            case F16Planes p -> k.attentionF16Queries(q, qOffs, counts, queries, p.keys()[layer], p.values()[layer],
                    blockTable, blockSize, offset(0, kvHead, 0), blockStride(), headDim, scale, scores, scoresStride, row, out, outOffs);
        }
    }

    /**
     * {@link #attentionQueries} in the faster order for many queries of one sequence
     * ({@link KernelSupport#attentionF16Panels}; an F32 cache attends query by query as there).
     */
    void attentionPanels(KernelSupport k, int layer, float[] q, int[] qOffs, int[] counts, int queries,
            int[] blockTable, int kvHead, float scale, float[] scores, int scoresStride, float[] work, float[] out,
            int[] outOffs) {
        switch (planes) {
            case F32Planes p -> attentionQueries(k, layer, q, qOffs, counts, queries, blockTable, kvHead, scale, scores,
                    scoresStride, work, out, outOffs);
            case F16Planes p -> k.attentionF16Panels(q, qOffs, counts, queries, p.keys()[layer], p.values()[layer],
                    blockTable, blockSize, offset(0, kvHead, 0), blockStride(), headDim, scale, scores, scoresStride, work, out, outOffs);
        }
    }

    /** Bytes held: 2 (K, V) x layers x blocks x heads x slots x headDim x element bytes. */
    public long bytes() {
        return 2L * layers * elementsPerLayer * precision.bytes();
    }

    /** Bytes one block of {@code blockSize} positions takes for {@code config}: K and V, every layer and KV head. */
    static long bytesPerBlock(ModelConfig config, int blockSize, KvPrecision precision) {
        return 2L * config.layers() * config.kvHeads() * blockSize * config.headDim() * precision.bytes();
    }

    /** Runs a copy-on-write copy from the block manager: the first slots of a block, every layer and head. */
    public void copy(BlockCopy c) {
        int length = c.numSlots() * headDim;
        for (int layer = 0; layer < layers; layer++) {
            for (int h = 0; h < kvHeads; h++) {
                int from = offset(c.source(), h, 0);
                int to = offset(c.target(), h, 0);
                for (boolean v : new boolean[] {false, true}) {
                    Object a = planes.array(layer, v);   // float[] or short[]: arraycopy takes either
                    System.arraycopy(a, from, a, to, length);
                }
            }
        }
    }
}
