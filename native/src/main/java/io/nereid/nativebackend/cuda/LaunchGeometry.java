package io.nereid.nativebackend.cuda;

/**
 * Grid and block sizes of every kernel in {@code kernels.cu}; the constants match its {@code #define}s
 * ({@link KernelSource} checks that they do).
 */
record LaunchGeometry(int gridX, int gridY, int blockX) {

    static final int GEMV_WARPS = 4;
    static final int GEMV_TOKENS = 8;
    static final int ATTN_WARPS = 4;
    static final int MAX_HEAD_DIM = 256;
    static final int THREADS = 256;

    LaunchGeometry {
        if (gridX < 1 || gridY < 1 || gridY > 65_535 || blockX < 1 || blockX > 1024) {
            throw new IllegalArgumentException("launch geometry out of range: grid " + gridX + " x " + gridY + ", block "
                    + blockX);
        }
    }

    /** A warp per row, {@link #GEMV_TOKENS} tokens per block. */
    static LaunchGeometry gemv(int rows, int tokens) {
        return new LaunchGeometry(ceil(rows, GEMV_WARPS), ceil(tokens, GEMV_TOKENS), GEMV_WARPS * 32);
    }

    /** One block per (head, token). */
    static LaunchGeometry attention(int heads, int tokens, int headDim) {
        if (headDim < 8 || headDim > MAX_HEAD_DIM || headDim % 8 != 0) {
            throw new IllegalArgumentException("head dimension " + headDim + ": the CUDA attention kernel takes multiples"
                    + " of 8 up to " + MAX_HEAD_DIM + " (it reads K rows 16 bytes at a time)");
        }
        return new LaunchGeometry(heads, tokens, ATTN_WARPS * 32);
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
