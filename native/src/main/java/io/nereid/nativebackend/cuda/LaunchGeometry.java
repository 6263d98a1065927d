package io.nereid.nativebackend.cuda;

/**
 * Grid and block sizes of every kernel in {@code kernels.cu}; the constants match its {@code #define}s
 * ({@link KernelSource} checks that they do).
 */
record LaunchGeometry(int gridX, int gridY, int gridZ, int blockX) {

    static final int GEMV_WARPS = 4;
    static final int GEMV_TOKENS = 8;
    static final int ATTN_WARPS = 4;
    static final int MAX_HEAD_DIM = 256;
    static final int THREADS = 256;

    /** Positions an attention block takes when a token's context is split (vLLM's paged attention v2: 512). */
    static final int ATTN_PARTITION = 512;
    /** Most device memory the parts of a split attention take (reserved beside the KV cache). */
    static final long ATTN_PARTS_BYTES = 64L << 20;

    LaunchGeometry {
        if (gridX < 1 || gridY < 1 || gridY > 65_535 || gridZ < 1 || gridZ > 65_535 || blockX < 1 || blockX > 1024) {
            throw new IllegalArgumentException("launch geometry out of range: grid " + gridX + " x " + gridY + " x " + gridZ
                    + ", block " + blockX);
        }
    }

    LaunchGeometry(int gridX, int gridY, int blockX) {
        this(gridX, gridY, 1, blockX);
    }

    /** A warp per row, {@link #GEMV_TOKENS} tokens per block. */
    static LaunchGeometry gemv(int rows, int tokens) {
        return new LaunchGeometry(ceil(rows, GEMV_WARPS), ceil(tokens, GEMV_TOKENS), GEMV_WARPS * 32);
    }

    /** One block per (head, token). */
    static LaunchGeometry attention(int heads, int tokens, int headDim) {
        return attention(heads, tokens, headDim, 1);
    }

    /** One block per (head, token, part of the context). */
    static LaunchGeometry attention(int heads, int tokens, int headDim, int parts) {
        if (headDim < 8 || headDim > MAX_HEAD_DIM || headDim % 8 != 0) {
            throw new IllegalArgumentException("head dimension " + headDim + ": the CUDA attention kernel takes multiples"
                    + " of 8 up to " + MAX_HEAD_DIM + " (it reads K rows 16 bytes at a time)");
        }
        return new LaunchGeometry(heads, tokens, parts, ATTN_WARPS * 32);
    }

    /**
     * Positions per part of a step's attention, or 0 for no split: none when the farthest of the step's
     * {@code positions} fits one part of {@code partition}, or when not even two parts' scratch
     * ({@code tokens x heads x parts x (headDim + 2)} floats: a prefill of many tokens) fits
     * {@code budgetBytes}; else the smallest multiple of {@code partition} whose parts fit it (a very long
     * context takes longer parts, not more scratch).
     */
    static int attentionPartition(int positions, int tokens, int heads, int headDim, int partition, long budgetBytes) {
        if (partition < ATTN_WARPS * 32 || partition % (ATTN_WARPS * 32) != 0) {
            throw new IllegalArgumentException("attention partition " + partition + ": a multiple of " + ATTN_WARPS * 32);
        }
        if (positions <= partition) {
            return 0;
        }
        long maxParts = Math.min(65_535, budgetBytes / (4L * tokens * heads * (headDim + 2)));
        if (maxParts < 2) {
            return 0;
        }
        long least = (positions + maxParts - 1) / maxParts;                 // positions per part at least
        long p = Math.max(partition, (least + partition - 1) / partition * partition);
        return p >= positions ? 0 : (int) p;
    }

    /** One thread per element. */
    static LaunchGeometry elementwise(long n) {
        long blocks = (n + THREADS - 1) / THREADS;
        if (blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(n + " elements: too many for one launch");
        }
        return new LaunchGeometry((int) Math.max(1, blocks), 1, THREADS);
    }

    /** One block per row (norms, gathers, per-token kernels). */
    static LaunchGeometry perRow(int rows) {
        return new LaunchGeometry(rows, 1, THREADS);
    }

    /** {@code dequant_*}: a thread per 32-value group. */
    static LaunchGeometry dequant(int rows, int cols) {
        return elementwise((long) rows * (cols / 32));
    }

    static int ceil(int a, int b) {
        return (a + b - 1) / b;
    }
}
