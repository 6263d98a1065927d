package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.cpu.kernel.PanelDot;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.mmap.HugePages;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Objects;

/**
 * A 2-D weight tensor in one ggml format, read in place from its segment (usually a slice of a
 * mapped GGUF file): {@code rows} rows of {@code cols} weights, GGUF dims {@code [cols, rows]}
 * ({@code ne0 = cols} is contiguous). Row {@code r} starts at byte
 * {@code r * cols / blockSize * bytesPerBlock}.
 *
 * <p>The products follow ggml's {@code mul_mat} convention: a linear layer {@code y = W·x} with
 * {@code W} of {@code rows = out_features} and {@code cols = in_features}.
 *
 * <p>A format whose kernel asks for it ({@link RowKernel#bind}) is repacked once, here: with the
 * vector kernels ({@link RepackedKernel}) Q4_K into {@link Q4_KPacked}'s layout (0.75 bytes a
 * weight), Q5_K into {@link Q5_KPacked}'s and Q6_K into {@link Q6_KPacked}'s (1.25), off-heap and
 * freed with the matrix, which decode to the same bits far faster. Q8_0, Q4_0, Q4_K, Q5_K and Q6_K matrices
 * also get an {@link Interleaved} copy (rows side by side in the lanes) for the matmuls of a few
 * tokens in the faster order ({@link #interleavedTokens}), and F16 / BF16 matrices a {@link HalfColumns}
 * copy (column order) for the matmuls of up to {@link HalfColumns#MAX_TOKENS} tokens in that order, unless {@value #INTERLEAVED_PROPERTY}
 * is {@code false}.
 *
 * <p>Thread-safety: immutable; every method may be called concurrently, on disjoint output
 * ranges for {@link #matmul}. Lifecycle: valid as long as the segment is (a closed GGUF file
 * makes every method throw {@link IllegalStateException}; a repacked matrix computes from its copy).
 */
public final class WeightMatrix {

    /**
     * Below this many tokens a matmul dots each row in place with each token (four at a time with
     * {@link RowKernel#dot4Tokens}); from it on, rows are decoded once into scratch for all
     * tokens and multiplied in 4 x 4 tiles, which spends fewer operations per product once the
     * decoding is shared by enough tokens. Measured at 2048 x 5632, one thread, four tokens: in
     * place 39.5 against 27.8 GFLOP/s for Q4_K, but 29.9 against 36.2 for Q8_0 and 22.1 against
     * 25.8 for F16; at six tokens the tiles win for all three.
     */
    static final int FEW_TOKENS = 5;

    /**
     * Rows a matmul of three tokens in the faster order hands the kernel at a time
     * ({@link RowKernel#dotFastRows3Tokens}), which may run two tokens and then the third over
     * them: small enough to stay in L1 or L2 for the third.
     */
    static final int FAST_RUN = 16;

    /**
     * From this many tokens on, a matmul in the faster order multiplies decoded rows with the
     * activations transposed ({@link PanelDot}) instead of {@link FloatDot#dot4x4} tiles. Measured
     * (1024 x 4096, one thread, 512-bit): 8 tokens 1.26 against 1.75 ms for the panels (whose
     * lanes are half padding), 12 about even, 16 tokens 2.05 against 1.83, 64 tokens 6.6 against
     * 4.5-5.0, 512 tokens 78-82 against 40-45.
     */
    static final int PANEL_TOKENS = 16;

    /**
     * Below this many tokens a matmul in the faster order takes the {@link Interleaved} copy, so
     * that each token gets its lone bits (a speculative verification scores its drafts as plain
     * decoding would); from it on, the tiles or panels. Since two to fifteen tokens take the float
     * lanes' passes ({@link InterleavedPasses}), every format runs up to the panels: one thread,
     * 2048 x 768 (Q6_K 4096 x 768), us for 8 / 12 / 15 tokens against the integer kernels (or Q4_K /
     * Q5_K's tiles from 8) of the build before (AMD EPYC, 2026-12-06, two alternations): Q4_0 170 / 256 /
     * 304 against 254 / 393 / 524, Q8_0 175 / 249 / 287 against 302 / 440 / 593, Q4_K 246 / 364 / 411
     * against 292 / 390 / 531, Q5_K 255 / 389 / 447 against 280 / 376 / 483, Q6_K 691 / 762 / 900
     * against 855 / 1,312 / 1,572; the panels' 16 tokens 410-454 (Q6_K 845-891).
     */
    static int interleavedTokens(GgmlType type) {
        return PANEL_TOKENS;
    }

    /** Bytes of transposed tokens the groups that share a decoded row may take ({@link #multiplyPanels}). */
    static final long PANEL_L2_BYTES = 1 << 20;

    private final GgmlType type;
    private final int rows;
    private final int cols;
    private final MemorySegment data;
    private final RowKernel kernel;
    /** What {@code kernel} reads ({@link RowKernel#bind}): {@code data}, or a repacked copy of it. */
    private final MemorySegment kernelData;
    private final long kernelRowBytes;
    /**
     * The first {@code rows / GROUP} groups of rows interleaved for the matmuls of fewer than
     * {@link #interleavedTokens} tokens in the faster order ({@link Interleaved}), or null: a
     * format without that layout, the scalar kernels, or {@value #INTERLEAVED_PROPERTY} {@code false}.
     */
    private final MemorySegment interleaved;

    /**
     * An F16 or BF16 matrix's {@link HalfColumns} copy for the matmuls of up to {@link HalfColumns#MAX_TOKENS}
     * tokens in the faster order (the panels, in the same order, take more), or null: another
     * format, the scalar kernels, or {@value #INTERLEAVED_PROPERTY} {@code false}.
     */
    private final MemorySegment columns;

    /**
     * System property: {@code false} leaves the {@link Interleaved} and {@link HalfColumns} copies out
     * (less memory: 1.13, 0.63, 0.59, 1.09, 1.08 and 2 bytes a weight for Q8_0, Q4_0, Q4_K, Q5_K, Q6_K
     * and F16 / BF16 matrices; slower decode; F16 / BF16 then copied at load as the file has them, as below).
     */
    public static final String INTERLEAVED_PROPERTY = "nereid.kernels.interleaved";

    private static final boolean INTERLEAVE = !"false".equals(System.getProperty(INTERLEAVED_PROPERTY));

    /**
     * System property: {@code false} leaves the weights that a decode reads as the file has them
     * (F32; F16 / BF16 without their column copy; a format's matrix with no interleaved or repacked
     * copy) in the file mapping.
     * By default they are copied at load into anonymous huge-page memory ({@link HugePages#copyOf}).
     * 1.1B F16 decode after a prompt, 2 threads, alternated: 8.32 / 8.41 tok/s from the mapping,
     * 9.18 / 9.28 from the copy. (Earlier the same day {@code bench/kernels/StreamProbe.java} read
     * that file's mapping at 10.5 GB/s on one thread and 15.5 on two against 15.5 and 30.5 for a
     * copy, and later at the copy's speed: how fast a mapping streams depended on the state of its
     * page-cache pages, which a copy made at load leaves behind.) The copy is resident memory the
     * size of those weights; the file's pages are dropped from this process.
     */
    public static final String COPY_PROPERTY = "nereid.weights.copy";

    private static final boolean COPY = !"false".equals(System.getProperty(COPY_PROPERTY));

    private WeightMatrix(GgmlType type, int rows, int cols, MemorySegment data, RowKernel kernel, boolean lookupOnly) {
        this.type = type;
        this.rows = rows;
        this.cols = cols;
        long blocks = (long) rows * cols / type.blockSize();
        RowKernel.Bound bound = kernel.bind(data, blocks);
        boolean interleave = INTERLEAVE && !lookupOnly && kernel != RowKernels.scalar(type) && Interleaved.supports(type)
                && rows >= Interleaved.GROUP;
        // null too for an F16 matrix with an infinity or a NaN, which the copy's kernel cannot widen
        MemorySegment columnCopy = INTERLEAVE && !lookupOnly && kernel != RowKernels.scalar(type)
                && HalfColumns.supports(type) ? HalfColumns.pack(type, data, rows, cols) : null;
        if (COPY && !lookupOnly && !interleave && columnCopy == null && data.isMapped() && bound.data() == data) {
            data = HugePages.copyOf(data);
            bound = kernel.bind(data, blocks);
        } else if (data.isMapped()) {
            // the same bytes and lifetime as a plain native segment: the kernels then see one segment class.
            // With copies (native) and file mappings both reaching F16Vector::widen, its profile went
            // bimorphic in a prompt and 1.1B F16 decode after it ran at 7.1 instead of 9.2 tok/s
            data = data.reinterpret(data.byteSize());
            bound = kernel.bind(data, blocks);
        }
        this.data = data;
        this.kernel = bound.kernel();
        this.kernelData = bound.data();
        this.kernelRowBytes = (long) cols / type.blockSize() * bound.bytesPerBlock();
        this.interleaved = interleave ? Interleaved.pack(type, data, rows, cols) : null;
        this.columns = columnCopy;
    }

    /**
     * A matrix over {@code data}, not copied.
     *
     * @param dims GGUF order, {@code [cols, rows]}; {@code [cols]} is one row, and trailing
     *     dimensions of 1 are allowed
     * @param data exactly {@code type.byteSize(dims)} bytes, native or backed by a {@code byte[]}
     *     (the Vector API reads only those heap segments)
     * @throws UnsupportedWeightTypeException naming {@code type} if it has no kernels
     * @throws IllegalArgumentException if the dims are not 2-D, do not fit an int, have a row
     *     length that is not a multiple of the block size, or do not match the data size
     */
    public static WeightMatrix of(GgmlType type, long[] dims, MemorySegment data) {
        return of(type, dims, data, kernelOf(type, dims));
    }

    /** The kernels in use for {@code type}. */
    private static RowKernel kernelOf(GgmlType type, long[] dims) {
        Objects.requireNonNull(type, "type");
        RowKernel kernel = RowKernels.get(type);
        if (kernel == null) {
            throw new UnsupportedWeightTypeException(type, "weight matrix " + Arrays.toString(dims));
        }
        return kernel;
    }

    /**
     * {@link #of(GgmlType, long[], MemorySegment)} for a matrix whose rows are looked up and not
     * multiplied (an embedding not tied to the output): without the {@link Interleaved} copy
     * decode would never read. Its matmuls work, on the row kernels.
     */
    public static WeightMatrix forLookup(GgmlType type, long[] dims, MemorySegment data) {
        return of(type, dims, data, kernelOf(type, dims), true);
    }

    /** With a given kernel: tests compare the scalar and vector kernels through this. */
    static WeightMatrix of(GgmlType type, long[] dims, MemorySegment data, RowKernel kernel) {
        return of(type, dims, data, kernel, false);
    }

    private static WeightMatrix of(GgmlType type, long[] dims, MemorySegment data, RowKernel kernel,
            boolean lookupOnly) {
        Objects.requireNonNull(data, "data");
        String what = type + " weight matrix " + Arrays.toString(dims);
        if (dims.length < 1 || dims.length > 4) {
            throw new IllegalArgumentException(what + ": expected dims [cols, rows]");
        }
        for (int i = 2; i < dims.length; i++) {
            if (dims[i] != 1) {
                throw new IllegalArgumentException(what + ": expected a 2-D tensor, dimension " + i + " is " + dims[i]);
            }
        }
        long cols = dims[0];
        long rows = dims.length > 1 ? dims[1] : 1;
        if (cols < 1 || rows < 1 || cols > Integer.MAX_VALUE - 8 || rows > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(what + ": rows and cols must be in 1.." + (Integer.MAX_VALUE - 8));
        }
        if (cols % type.blockSize() != 0) {
            throw new IllegalArgumentException(what + ": row length " + cols + " is not a multiple of the block size "
                    + type.blockSize());
        }
        long expected = type.byteSize(dims);
        if (data.byteSize() != expected) {
            throw new IllegalArgumentException(what + " takes " + expected + " bytes, data has " + data.byteSize());
        }
        if (data.heapBase().filter(base -> !(base instanceof byte[])).isPresent()) {
            throw new IllegalArgumentException(what + ": a heap segment must be backed by a byte[], not "
                    + data.heapBase().get().getClass().getSimpleName());
        }
        return new WeightMatrix(type, (int) rows, (int) cols, data, kernel, lookupOnly);
    }

    public GgmlType type() {
        return type;
    }

    /** Output features: the number of rows ({@code ne1}). */
    public int rows() {
        return rows;
    }

    /** Input features: the length of a row ({@code ne0}). */
    public int cols() {
        return cols;
    }

    /** The weights' bytes as the format stores them ({@code type.byteSize(dims)}). */
    MemorySegment data() {
        return data;
    }

    /**
     * Bytes of the copies the kernels compute from, off-heap and on top of the data: the repacked
     * one ({@link RowKernel#bind}), the {@link Interleaved} one and the {@link HalfColumns} one; 0
     * when they read the data in place.
     */
    public long copyBytes() {
        return (kernelData != data ? kernelData.byteSize() : 0) + (interleaved != null ? interleaved.byteSize() : 0)
                + (columns != null ? columns.byteSize() : 0);
    }

    /**
     * The rows a thread's share of a matmul of {@code tokens} in that order should start and end on:
     * where the matmul takes the {@link HalfColumns} copy, its blocks of {@code 2L} rows (a block
     * a range cuts is computed whole by each thread that cuts it); where it takes the
     * {@link Interleaved} copy, its groups (a cut group is computed whole by each thread that cuts
     * it); else four (the panels and tiles, whose rows the threads share finely).
     */
    public int rowAlignment(int tokens, boolean batchInvariant) {
        if (batchInvariant || kernel == RowKernels.scalar(type)) {
            return 4;
        }
        if (columnsTake(tokens)) {
            return HalfColumns.ROWS;
        }
        return interleaved != null && tokens < interleavedTokens(type) ? Interleaved.GROUP : 4;
    }

    /** Which kernels compute with this matrix, for logs: {@code "Q4_0, vector (512-bit)"}. */
    public String kernelDescription() {
        return type + ", " + (kernel == RowKernels.scalar(type) ? "scalar" : Kernels.description());
    }

    /** {@code sum(W[row][i] * x[xOff + i])} for {@code i < cols}. */
    public float dot(int row, float[] x, int xOff) {
        Objects.checkIndex(row, rows);
        Objects.checkFromIndexSize(xOff, cols, x.length);
        return kernel.dot(kernelData, row * kernelRowBytes, x, xOff, cols);
    }

    /** Row {@code r} decoded to floats: {@code cols} values. */
    public float[] dequantizeRow(int r) {
        float[] row = new float[cols];
        getRowInto(r, row, 0);
        return row;
    }

    /** Decodes row {@code r} into {@code dst[off, off + cols)}: an embedding lookup. */
    public void getRowInto(int r, float[] dst, int off) {
        Objects.checkIndex(r, rows);
        Objects.checkFromIndexSize(off, cols, dst.length);
        kernel.dequantize(kernelData, r * kernelRowBytes, dst, off, cols);
    }

    /** {@link #matmul(MatmulInput, float[], int, int)} over every row. */
    public void matmul(float[] x, int tokens, float[] out) {
        matmul(x, tokens, out, 0, rows);
    }

    /** {@link #matmul(MatmulInput, float[], int, int)} of {@code tokens} vectors in {@code x}. */
    public void matmul(float[] x, int tokens, float[] out, int rowStart, int rowEnd) {
        if (tokens < 0) {
            throw new IllegalArgumentException("tokens " + tokens + " < 0");
        }
        matmul(MatmulInput.of(x, tokens, cols), out, rowStart, rowEnd);
    }

    /** {@link #matmul(MatmulInput, float[], int, int, float[])} with scratch of its own. */
    public void matmul(MatmulInput input, float[] out, int rowStart, int rowEnd) {
        matmul(input, out, rowStart, rowEnd, null);
    }

    /** {@link #matmul(MatmulInput, float[], int, int, float[], boolean)}, batch invariant. */
    public void matmul(MatmulInput input, float[] out, int rowStart, int rowEnd, float[] scratch) {
        matmul(input, out, rowStart, rowEnd, scratch, true);
    }

    /**
     * The floats of scratch {@link #matmul(MatmulInput, float[], int, int, float[])} needs: four
     * decoded rows and a tile's accumulators.
     */
    public int scratchSize() {
        return scratchSize(cols);
    }

    /**
     * Before {@link #matmul(MatmulInput, float[], int, int, float[], boolean)} of {@code input} in
     * that order: the input's form for this matrix (and its transposed layout, where the panels
     * will read it) computed by {@code ranges} on all the caller's threads
     * ({@link MatmulInput#prepare}). Does nothing below {@value #PANEL_TOKENS} tokens, where the
     * first thread's conversion is short.
     */
    public void prepare(MatmulInput input, boolean batchInvariant, MatmulInput.Ranges ranges) {
        if (input.tokens() >= PANEL_TOKENS) {
            input.prepare(type, panels(input.tokens(), batchInvariant) ? PanelDot.lanes() : 0, ranges);
        }
    }

    /** Whether a matmul of {@code tokens} in this order takes {@link #multiplyPanels}. */
    private boolean panels(int tokens, boolean batchInvariant) {
        return kernel != RowKernels.scalar(type) && !batchInvariant && tokens >= PANEL_TOKENS
                && !columnsTake(tokens);
    }

    /** Whether a matmul of {@code tokens} in the faster order (not batch invariant) takes the {@link HalfColumns} copy. */
    private boolean columnsTake(int tokens) {
        return columns != null && tokens <= HalfColumns.MAX_TOKENS;
    }

    /** {@link #scratchSize()} of a matrix with rows of {@code cols}. */
    public static int scratchSize(int cols) {
        return PanelDot.ROWS * cols + Math.max(FloatDot.TILE_LANES, PanelDot.SHARED_GROUPS * PanelDot.CHUNK_SUMS);
    }

    /**
     * {@code out[t * rows + r] = W[r] · x[t * cols, (t + 1) * cols)} for every token
     * {@code t < tokens} and row {@code r} in {@code [rowStart, rowEnd)}; other elements of
     * {@code out} are left as they are, so threads may fill disjoint row ranges of one output.
     *
     * <p>Shapes: {@code x} is {@code (tokens, cols)}, {@code out} is {@code (tokens, rows)},
     * row-major; {@code out} may be longer. The weights multiply the input in the form llama.cpp
     * gives it for this format ({@link MatmulInput}: Q8_0 blocks for Q8_0 and Q4_0, Q8_K for the
     * K-quants, F16 or BF16 rounding for those).
     *
     * <p>Each weight row is read from memory once for all tokens: four rows at a time are decoded
     * once into {@code scratch}, which stays in L1 or L2, and dotted with every four tokens in one
     * {@link FloatDot#dot4x4} tile, so the decoding and the memory traffic are paid once per step
     * and each load in the inner loop serves four multiply-adds. With fewer than
     * {@value #FEW_TOKENS} tokens (one, or a decode step of a few sequences), each row is decoded
     * in registers and dotted in place with up to four tokens ({@link RowKernel#dot},
     * {@link RowKernel#dot4Tokens}), one row after another: the order the rows lie in memory, which
     * streams from DRAM faster than four rows side by side (Q8_0 decode of the 110M model: 143
     * against 88 tok/s), and no decoded copy to write and read back. Without
     * {@code batchInvariant}, from {@value #PANEL_TOKENS} tokens on, the decoded rows multiply the
     * activations transposed instead ({@link PanelDot}: six rows against up to {@code 4 L} tokens
     * per call, no lane sums), about twice the tiles' rate at 512 tokens.
     *
     * <p><b>Batch invariance.</b> With {@code batchInvariant}, both ways compute each product in
     * the same order (see {@link F32Vector}), so {@code out[t * rows + r]} depends only on row
     * {@code r} and token {@code t}: not on how many tokens share the call, nor on {@code rowStart}
     * and {@code rowEnd}. That order is one dependent FMA chain per product, which a tile of four
     * tokens keeps four of in flight but a lone token only one: its dot waits on the FMA latency
     * (Q8_0 at 8 lanes: 832 against 500 us with four chains, see bench/MEASUREMENTS.md). So without
     * {@code batchInvariant}, the products of fewer than four tokens use
     * {@link RowKernel#dotFast} (several chains, each format's own order): faster alone, but not
     * the bits a tile gives the same token. Where the matrix has an {@link Interleaved} copy (Q8_0,
     * Q4_0, Q4_K, Q5_K, Q6_K), fewer than {@link #interleavedTokens} take it instead (up to 15):
     * integer sums on the input's Q8 quants (one token on 16-bit lanes, more on float lanes,
     * {@link InterleavedPasses}), each token the same bits alone or with the others.
     * F16 and BF16 take their {@link HalfColumns} copy for up to {@link HalfColumns#MAX_TOKENS} tokens:
     * one FMA chain per (row, token) over the columns, the panels' order, so any token count gives a
     * token the same bits; batch invariant (or without the copy: an embedding's matrix, or
     * {@value #INTERLEAVED_PROPERTY} {@code false}) one kernel of {@code dot}'s order
     * ({@link RowKernel#dotsTokens}). The scalar kernels always decode and use {@link F32Format}'s
     * sums, which keeps the promise either way.
     *
     * @param scratch at least {@link #scratchSize()} floats;
     *     null to allocate them
     * @param batchInvariant one order for every number of tokens (above)
     * @throws IllegalArgumentException if the input's vectors are not {@code cols} long
     */
    public void matmul(MatmulInput input, float[] out, int rowStart, int rowEnd, float[] scratch,
            boolean batchInvariant) {
        if (input.cols() != cols) {
            throw new IllegalArgumentException("input vectors of " + input.cols() + " for " + this);
        }
        int tokens = input.tokens();
        Objects.checkFromToIndex(rowStart, rowEnd, rows);
        Objects.checkFromIndexSize(0, Math.multiplyExact(tokens, rows), out.length);
        if (tokens == 0 || rowStart == rowEnd) {
            return;
        }
        boolean scalar = kernel == RowKernels.scalar(type);
        if (interleaved != null && !batchInvariant && tokens < interleavedTokens(type)) {
            // the copy's rows; any after its last whole group take the row kernels below
            rowStart = Math.max(rowStart, multiplyInterleaved(input, out, rowStart, rowEnd, scratch));
            if (rowStart >= rowEnd) {
                return;
            }
            if (tokens >= 4) { // in pairs: each token the bits of dotFast, as alone (not dot4Tokens' nor a tile's)
                float[] x = input.values(MatmulInput.Form.of(type));
                int t = 0;
                for (; t + 2 <= tokens; t += 2) {
                    kernel.dotFastRows2Tokens(kernelData, rowStart * kernelRowBytes, kernelRowBytes, rowEnd - rowStart,
                            x, t * cols, cols, cols, out, t * rows + rowStart, rows, scratch);
                }
                if (t < tokens) {
                    kernel.dotFastRows(kernelData, rowStart * kernelRowBytes, kernelRowBytes, rowEnd - rowStart, x,
                            t * cols, cols, out, t * rows + rowStart, scratch);
                }
                return;
            }
        }
        if (columns != null && !batchInvariant) {
            // F16 / BF16: one FMA chain per (row, token) over the columns in order, the panels' order, for any token count
            if (columnsTake(tokens)) {
                HalfColumns.multiply(type, columns, rows, cols, input.values(MatmulInput.Form.of(type)), tokens,
                        rowStart, rowEnd, out, rows);
            } else {
                multiplyPanels(input, out, rowStart, rowEnd, scratch);
            }
            return;
        }
        float[] x = input.values(MatmulInput.Form.of(type));
        if (!scalar && kernel.dotsTokens() && tokens < PANEL_TOKENS) {
            // one order for any number of tokens (dot's), each weight decoded once for all of them
            kernel.dotTokens(kernelData, rowStart * kernelRowBytes, kernelRowBytes, rowEnd - rowStart, x, 0, cols,
                    tokens, cols, out, rowStart, rows);
            return;
        }
        if (!scalar && !batchInvariant && tokens < 4) {
            // two or three tokens at once (each weight decoded once for all, where the kernel can);
            // a kernel that runs a third token alone gets runs of rows that stay in cache for it
            int run = tokens < 3 ? rowEnd - rowStart : FAST_RUN;
            for (int r0 = rowStart; r0 < rowEnd; r0 += run) {
                int n = Math.min(run, rowEnd - r0);
                long at = r0 * kernelRowBytes;
                switch (tokens) {
                    case 1 -> kernel.dotFastRows(kernelData, at, kernelRowBytes, n, x, 0, cols, out, r0, scratch);
                    case 2 -> kernel.dotFastRows2Tokens(kernelData, at, kernelRowBytes, n, x, 0, cols, cols, out, r0,
                            rows, scratch);
                    default -> kernel.dotFastRows3Tokens(kernelData, at, kernelRowBytes, n, x, 0, cols, cols, out, r0,
                            rows, scratch);
                }
            }
            return;
        }
        if (panels(tokens, batchInvariant)) {
            multiplyPanels(input, out, rowStart, rowEnd, scratch);
            return;
        }
        if (tokens < FEW_TOKENS && !scalar) {
            float[] four = scratch != null && scratch.length >= 8 ? scratch : new float[8];
            int r = rowStart;
            if (tokens == 4) {
                for (; r + 2 <= rowEnd; r += 2) { // two rows at a time share the four inputs' loads
                    kernel.dot4Tokens2Rows(kernelData, r * kernelRowBytes, kernelRowBytes, x, 0, cols, cols, four, 0);
                    for (int k = 0; k < 4; k++) {
                        out[k * rows + r] = four[k];
                        out[k * rows + r + 1] = four[4 + k];
                    }
                }
            }
            for (; r < rowEnd; r++) {
                int t = 0;
                for (; t + 4 <= tokens; t += 4) {
                    kernel.dot4Tokens(kernelData, r * kernelRowBytes, x, t * cols, cols, cols, four, 0);
                    for (int k = 0; k < 4; k++) {
                        out[(t + k) * rows + r] = four[k];
                    }
                }
                for (; t < tokens; t++) {
                    out[t * rows + r] = kernel.dot(kernelData, r * kernelRowBytes, x, t * cols, cols);
                }
            }
            return;
        }
        FloatDot floatDot = scalar ? F32Format.INSTANCE : RowKernels.floatDot();
        float[] decoded = scratch != null && scratch.length >= scratchSize() ? scratch : new float[scratchSize()];
        for (int r0 = rowStart; r0 < rowEnd; r0 += 4) {
            int n = Math.min(4, rowEnd - r0);
            for (int j = 0; j < n; j++) {
                kernel.dequantize(kernelData, (r0 + j) * kernelRowBytes, decoded, j * cols, cols);
            }
            multiplyDecoded(floatDot, decoded, n, x, tokens, out, r0);
        }
    }

    /**
     * The rows of {@code [rowStart, rowEnd)} that the interleaved copy holds, for fewer than
     * {@link #interleavedTokens} tokens: each group computed whole (into scratch where the range
     * cuts it, so that a row's bits do not depend on the range) and its rows in the range written. Returns the copy's
     * row count, where rows not in it begin (a matrix whose rows are not a multiple of
     * {@link Interleaved#GROUP} has some).
     */
    private int multiplyInterleaved(MatmulInput input, float[] out, int rowStart, int rowEnd, float[] scratch) {
        int tokens = input.tokens();
        int group = Interleaved.GROUP;
        int covered = rows / group * group;
        MatmulInput.Quants q = input.quants(MatmulInput.Form.of(type));
        int work = tokens * group; // scratch: a cut group's outputs, then the kernels' work space
        float[] s = scratch != null && scratch.length >= work + Interleaved.WORK ? scratch
                : new float[work + Interleaved.WORK];
        for (int g = rowStart / group; g * group < Math.min(rowEnd, covered); g++) {
            int r0 = g * group;
            if (r0 >= rowStart && r0 + group <= rowEnd) {
                Interleaved.multiply(type, interleaved, cols, g, q, tokens, out, r0, rows, s, work);
                continue;
            }
            Interleaved.multiply(type, interleaved, cols, g, q, tokens, s, 0, group, s, work);
            for (int r = Math.max(r0, rowStart); r < Math.min(r0 + group, rowEnd); r++) {
                for (int t = 0; t < tokens; t++) {
                    out[t * rows + r] = s[t * group + r - r0];
                }
            }
        }
        return covered;
    }

    /**
     * The faster order's product of many tokens ({@link PanelDot}): for each group of up to
     * {@code 4 L} transposed tokens (which stays in L2; up to four groups where they fit in
     * {@value #PANEL_L2_BYTES} bytes), six rows at a time decoded into scratch and multiplied with
     * the whole group (each of the groups); the sums of {@link PanelDot#CHUNK} rows are collected
     * in scratch and then written token by token, each token's outputs side by side (written as
     * they came, a row at a time, they went back to every token's line six times, and rows of
     * 4 KB put all those lines in one L1 set). One vector of tokens in a quantized form (a decode step of
     * up to {@code L} sequences) takes {@link PanelDot#multiplyPairs}, two columns to a vector: 110M decode
     * at 16 sequences, 2 threads, alternated with the single-column kernel, Q4_0 483 -> 573 tok/s, Q4_K_M
     * 459 -> 536, Q8_0 530 -> 568 (1.1B Q4_K_M 79 -> 81: there the rows' decoding weighs more).
     */
    private void multiplyPanels(MatmulInput input, float[] out, int rowStart, int rowEnd, float[] scratch) {
        int tokens = input.tokens();
        int lanes = PanelDot.lanes();
        float[] xt = input.transposed(MatmulInput.Form.of(type), lanes);
        int padded = MatmulInput.paddedTokens(tokens, lanes);
        int group = PanelDot.MAX_VECTORS * lanes;
        // groups that share each decoded row: as many as keep their transposed tokens within ~1 MB (L2)
        // (1.1B Q4_K_M pp512 1.02-1.05x against one group per decode; decoding is ~6 % of a 110M pp512)
        int shared = Math.clamp(PANEL_L2_BYTES / (4L * group * cols), 1, PanelDot.SHARED_GROUPS);
        float[] s = scratch != null && scratch.length >= scratchSize() ? scratch : new float[scratchSize()];
        int sums = PanelDot.ROWS * cols;
        // one vector of tokens (a decode step of up to L sequences) of a quantized form: the columns in pairs
        // (the bits of such a step differ from a lone token's already: few tokens take the integer kernels)
        boolean pairs = MatmulInput.paired(MatmulInput.Form.of(type), tokens, lanes);
        for (int s0 = 0; s0 < padded; s0 += shared * group) {
            int s1 = Math.min(padded, s0 + shared * group);
            for (int c0 = rowStart; c0 < rowEnd; c0 += PanelDot.CHUNK) {
                int c1 = Math.min(rowEnd, c0 + PanelDot.CHUNK);
                for (int r0 = c0; r0 < c1; r0 += PanelDot.ROWS) {
                    int n = Math.min(PanelDot.ROWS, c1 - r0);
                    for (int j = 0; j < n; j++) {
                        kernel.dequantize(kernelData, (r0 + j) * kernelRowBytes, s, j * cols, cols);
                    }
                    if (pairs) {
                        PanelDot.multiplyPairs(s, 0, cols, cols, n, xt, 0, s, sums + (r0 - c0) * lanes);
                        continue;
                    }
                    for (int g0 = s0; g0 < s1; g0 += group) {
                        int tg = Math.min(group, s1 - g0);
                        PanelDot.multiply(tg / lanes, s, 0, cols, cols, n, xt, g0 * cols, s,
                                sums + (g0 - s0) * PanelDot.CHUNK + (r0 - c0) * tg);
                    }
                }
                for (int g0 = s0; g0 < s1; g0 += group) {
                    int tg = Math.min(group, s1 - g0);
                    int at = sums + (g0 - s0) * PanelDot.CHUNK;
                    for (int t = 0, nTokens = Math.min(tg, tokens - g0); t < nTokens; t++) {
                        int o = (g0 + t) * rows + c0;
                        for (int r = 0; r < c1 - c0; r++) {
                            out[o + r] = s[at + r * tg + t];
                        }
                    }
                }
            }
        }
    }

    /** {@code out[t * rows + r0 + j] = decoded row j · x token t} for {@code j < n <= 4}, every token. */
    private void multiplyDecoded(FloatDot floatDot, float[] decoded, int n, float[] x, int tokens, float[] out, int r0) {
        int t = 0;
        if (n == 4) {
            for (; t + 4 <= tokens; t += 4) { // four tokens against the four rows
                floatDot.dot4x4(decoded, 0, cols, x, t * cols, cols, cols, out, t * rows + r0, rows, decoded, 4 * cols);
            }
            for (; t < tokens; t++) { // one token against the four rows: dot4 with the roles swapped
                floatDot.dot4(x, t * cols, decoded, 0, cols, cols, out, t * rows + r0, 1);
            }
            return;
        }
        for (int j = 0; j < n; j++) { // the last rows of a range, one at a time
            for (t = 0; t + 4 <= tokens; t += 4) {
                floatDot.dot4(decoded, j * cols, x, t * cols, cols, cols, out, t * rows + r0 + j, rows);
            }
            for (; t < tokens; t++) {
                out[t * rows + r0 + j] = floatDot.dot(decoded, j * cols, x, t * cols, cols);
            }
        }
    }

    @Override
    public String toString() {
        return "WeightMatrix[" + type + " " + rows + "x" + cols + "]";
    }
}
