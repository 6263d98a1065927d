package io.nereid.nativebackend.cuda;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.ChosenLogprobs;
import io.nereid.engine.backend.KvCacheSpec;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.backend.TokenChoice;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.ModelConfig;
import io.nereid.engine.model.TensorSource;
import io.nereid.kvcache.BlockCopy;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The llama / qwen2 / qwen3 forward pass on one CUDA device, over the engine's paged KV cache: the same
 * steps as the CPU backend (embedding, per layer RMSNorm, Q/K/V (+ bias), Q/K norm, RoPE, K/V into the
 * sequence's blocks, causal GQA attention over its block table, output projection, residual, RMSNorm,
 * SwiGLU, down projection, residual; then the output norm and the logits of the rows asked for only).
 *
 * <p>Weights are uploaded once in their GGUF formats ({@link WeightFormat}); decode multiplies with the
 * dequantizing GEMV kernels, prefill of {@value #CUBLAS_MIN_TOKENS} tokens or more with cuBLAS (F16 / BF16
 * weights as they are, quantized ones dequantized to F16 into a scratch matrix first). The KV cache is
 * F16 or BF16, two arrays (K, V) of {@code layers x blocks x kvHeads x blockSize x headDim}. Everything runs on the
 * default stream of the device's primary context, synchronised at the end of each step; engine thread only.
 *
 * <p>Batch invariance ({@code --deterministic}, {@link BackendConfig#batchInvariant}): every kernel but
 * cuBLAS computes a token's values in an order fixed by the token alone (a GEMV warp per row and token
 * with its lanes over the row's groups, RMSNorm over a fixed block, attention over 32-position chunks
 * of the token's own positions), so with cuBLAS left out a token's logits are the same bits alone,
 * batched, in a chunked prefill or after a prefix-cache hit; prefill then runs on the GEMV kernels
 * (they read the weights once per {@value LaunchGeometry#GEMV_TOKENS} tokens instead of once), and
 * attention is never split in parts (how a split groups a token's sums would depend on the step).
 */
final class CudaBackend implements Backend {

    static final int CUBLAS_MIN_TOKENS = 32;
    /** Device memory left free beyond the weights, the activations and the KV cache (cuBLAS workspace, fragmentation). */
    static final long RESERVE_BYTES = 512L << 20;
    /** Doubles per row of sample_rows' choices: temperature, number, top-k, top-p, min-p. */
    private static final int CHOICE_DOUBLES = 5;
    /** Words per row of row_logprobs' records: the logprob, the rank, 20 ids, 20 logprobs. */
    private static final int LOGPROB_WORDS = 42;

    /** Most bytes of rows one download stages in page-locked memory (by default). */
    static final long STAGING_ROWS_BYTES = 64L << 20;

    private record Matrix(long ptr, WeightFormat format, int rows, int cols, long rowBytes) {
    }

    private record Layer(long attnNorm, Matrix wq, Matrix wk, Matrix wv, Matrix wo, long bq, long bk, long bv, long qNorm,
            long kNorm, long ffnNorm, Matrix gate, Matrix up, Matrix down) {
    }

    private final CudaDriver driver;
    private final int device;
    private final MemorySegment context;
    private final KernelModule kernels;
    private final Cublas cublas;                 // null: GEMV kernels only (no cuBLAS, or batch invariance asked)
    private final boolean batchInvariant;
    private final KvPrecision kvPrecision;        // F16 or BF16
    private long stagingRowsBytes = STAGING_ROWS_BYTES;
    private final ModelConfig c;
    private final Arena arena = Arena.ofShared();
    private final KernelArgs args = new KernelArgs(arena);
    private final List<Long> allocations = new ArrayList<>();
    private final Matrix embedding;
    private final Layer[] layers;
    private final long outputNorm;
    private final Matrix output;
    private final long invFreq;                  // double (ropeDim / 2)
    private final String deviceName;
    private final long weightBytes;

    private int blockSize;
    private int numBlocks;
    private int maxPositions;
    private long kCache;
    private long vCache;
    private long layerElems;

    private int capacity;                        // tokens the activation buffers hold
    private long x, xb, q, k, v, att, gate, up, halfIn;
    private long dTokens, dSeq, dPos, dRows, dIds, dChoice;
    private final Growing tables = new Growing();        // the step's block tables
    private final Growing logits = new Growing();        // the logit rows asked for
    private final Growing dequantScratch = new Growing(); // a quantized matrix as F16 for cuBLAS
    private final Growing attentionParts = new Growing();   // a split attention's parts: ATTN_PARTS_BYTES
    private final Growing logprobRecords = new Growing();   // row_logprobs' records
    private int attentionPartition = LaunchGeometry.ATTN_PARTITION;
    private MemorySegment host = MemorySegment.NULL;   // page-locked staging for uploads and downloads

    CudaBackend(BackendConfig config, CudaDriver driver, int device) {
        this.driver = driver;
        this.device = device;
        this.c = config.model().config();
        if (config.kvPrecision() == KvPrecision.F32) {
            throw new IllegalArgumentException("the CUDA backend keeps the KV cache in f16 or bf16, not f32");
        }
        this.kvPrecision = config.kvPrecision();
        if (c.architecture() != Architecture.LLAMA && c.architecture() != Architecture.QWEN2
                && c.architecture() != Architecture.QWEN3) {
            throw new IllegalArgumentException("the CUDA backend runs llama, qwen2 and qwen3, not " + c.architecture());
        }
        LaunchGeometry.attention(c.heads(), 1, c.headDim());   // refuses head sizes the kernel cannot take
        this.context = driver.retainPrimaryContext(device);
        driver.makeCurrent(context);
        this.deviceName = driver.deviceName(device);
        int major = driver.attribute(device, CudaDriver.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        int minor = driver.attribute(device, CudaDriver.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        KernelModule module = null;
        Cublas blas = null;
        try {
            module = KernelModule.load(driver, major, minor);
            blas = config.batchInvariant() ? null : openCublas();
            TensorSource t = config.model().tensors();
            long before = driver.memoryInfo()[0];
            embedding = matrix(t, "token_embd.weight", c.vocabSize(), c.dim());
            layers = new Layer[c.layers()];
            for (int i = 0; i < c.layers(); i++) {
                String p = "blk." + i + ".";
                boolean bias = c.architecture().qkvBias();
                boolean qk = c.architecture().qkNorm();
                layers[i] = new Layer(vector(t, p + "attn_norm.weight", c.dim()),
                        matrix(t, p + "attn_q.weight", c.qDim(), c.dim()), matrix(t, p + "attn_k.weight", c.kvDim(), c.dim()),
                        matrix(t, p + "attn_v.weight", c.kvDim(), c.dim()),
                        matrix(t, p + "attn_output.weight", c.dim(), c.qDim()),
                        bias ? vector(t, p + "attn_q.bias", c.qDim()) : 0, bias ? vector(t, p + "attn_k.bias", c.kvDim()) : 0,
                        bias ? vector(t, p + "attn_v.bias", c.kvDim()) : 0,
                        qk ? vector(t, p + "attn_q_norm.weight", c.headDim()) : 0,
                        qk ? vector(t, p + "attn_k_norm.weight", c.headDim()) : 0,
                        vector(t, p + "ffn_norm.weight", c.dim()), matrix(t, p + "ffn_gate.weight", c.ffnDim(), c.dim()),
                        matrix(t, p + "ffn_up.weight", c.ffnDim(), c.dim()),
                        matrix(t, p + "ffn_down.weight", c.dim(), c.ffnDim()));
            }
            outputNorm = vector(t, "output_norm.weight", c.dim());
            output = t.find("output.weight").isPresent() ? matrix(t, "output.weight", c.vocabSize(), c.dim()) : embedding;
            invFreq = upload(ropeFrequencies(t));
            weightBytes = before - driver.memoryInfo()[0];
        } catch (RuntimeException e) {
            if (blas != null) {
                blas.close();
            }
            freeAll();
            if (module != null) {
                module.close();
            }
            driver.releasePrimaryContext(device);
            throw e;
        }
        this.kernels = module;
        this.cublas = blas;
        this.batchInvariant = config.batchInvariant();
    }

    private static Cublas openCublas() {
        try {
            return Cublas.open();
        } catch (CudaException e) {
            System.err.println("nereid cuda: " + e.getMessage() + "; prefill uses the GEMV kernels");
            return null;
        }
    }

    /** Splits attention every {@code positions} positions (tests: parts on short sequences); a multiple of 128. */
    void limitAttentionPartition(int positions) {
        LaunchGeometry.attentionPartition(1, 1, 1, 8, positions, 0);   // refuses what the kernel cannot take
        attentionPartition = positions;
    }

    /** Downloads rows through at most {@code bytes} of staging at a time (tests: several chunks on a small model). */
    void limitStaging(long bytes) {
        stagingRowsBytes = bytes;
    }

    /** One line for the log: the device, how the kernels came, cuBLAS or not, the weights' footprint. */
    String describe() {
        return deviceName + ", kernels " + kernels.origin + ", " + (batchInvariant ? "batch-invariant (GEMV kernels only)"
                : cublas == null ? "no cuBLAS" : "cuBLAS " + cublas.library)
                + ", weights " + (weightBytes >> 20) + " MiB, driver " + driver.library;
    }

    @Override
    public int vocabSize() {
        return c.vocabSize();
    }

    @Override
    public KvCacheSpec kvCacheSpec(int blockSize) {
        long bytesPerBlock = 2L * 2 * c.layers() * c.kvHeads() * blockSize * c.headDim();
        driver.makeCurrent(context);
        long free = driver.memoryInfo()[0] - RESERVE_BYTES - activationBytes(1024)
                - (batchInvariant ? 0 : LaunchGeometry.ATTN_PARTS_BYTES);   // split attention's scratch
        return new KvCacheSpec(blockSize, kvPrecision, bytesPerBlock,
                (int) Math.min(Integer.MAX_VALUE, Math.max(0, free / bytesPerBlock)));
    }

    @Override
    public void allocate(int numBlocks, int blockSize, int maxPositions) {
        if (kCache != 0) {
            throw new IllegalStateException("the KV cache is already allocated");
        }
        driver.makeCurrent(context);
        this.numBlocks = numBlocks;
        this.blockSize = blockSize;
        this.maxPositions = maxPositions;
        this.layerElems = (long) numBlocks * c.kvHeads() * blockSize * c.headDim();
        long bytes = 2 * layerElems * c.layers();
        if (bytes > driver.memoryInfo()[0] - RESERVE_BYTES) {
            throw new IllegalArgumentException("a KV cache of " + numBlocks + " blocks (" + (bytes >> 20)
                    + " MiB per K and V) does not fit in the device's free memory (" + (driver.memoryInfo()[0] >> 20) + " MiB)");
        }
        kCache = alloc(bytes);
        vCache = alloc(bytes);
        driver.zero(kCache, bytes);
        driver.zero(vCache, bytes);
    }

    @Override
    public void copy(List<BlockCopy> copies) {
        if (copies.isEmpty()) {
            return;
        }
        driver.makeCurrent(context);
        int n = copies.size();
        ensureCapacity(Math.max(capacity, 2 * n));
        int[] ids = new int[2 * n];
        for (int i = 0; i < n; i++) {
            ids[i] = copies.get(i).source();
            ids[n + i] = copies.get(i).target();
        }
        uploadInts(dRows, ids);
        launch("copy_blocks", LaunchGeometry.perRow(n), args.reset().ptr(kCache).ptr(vCache).ptr(dRows).ptr(dRows + 4L * n)
                .i32(c.layers()).i64(layerElems).i32(c.kvHeads() * blockSize * c.headDim()));
    }

    @Override
    public StepOutput forward(Step step) {
        if (kCache == 0) {
            throw new IllegalStateException("forward before allocate");
        }
        driver.makeCurrent(context);
        StepLayout layout = StepLayout.of(step, c.vocabSize(), blockSize, maxPositions, numBlocks);
        int n = layout.size();
        ensureCapacity(n);
        uploadInts(dTokens, layout.tokens());
        uploadInts(dSeq, layout.seqOf());
        uploadInts(dPos, layout.posOf());
        long dTables = tables.atLeast(4L * layout.tables().length, 2 * tables.bytes);
        uploadInts(dTables, layout.tables());

        int dim = c.dim();
        // long contexts: attention split in parts, merged by attention_reduce (not with --deterministic, where a
        // token's sums must not depend on what else the step holds)
        int partition = batchInvariant ? 0 : LaunchGeometry.attentionPartition(layout.positions(), n, c.heads(), c.headDim(),
                attentionPartition, LaunchGeometry.ATTN_PARTS_BYTES);
        int parts = partition == 0 ? 1 : LaunchGeometry.ceil(layout.positions(), partition);
        long partAcc = att;   // with one part unused, but a kernel argument must be a device pointer
        long partMax = att;
        long partSum = att;
        if (parts > 1) {
            long dParts = attentionParts.atLeast(LaunchGeometry.ATTN_PARTS_BYTES, 0);   // reserved in kvCacheSpec
            long cells = (long) n * c.heads() * parts;
            partAcc = dParts;
            partMax = dParts + 4 * cells * c.headDim();
            partSum = partMax + 4 * cells;
        }
        launch(embedding.format().embed(), LaunchGeometry.perRow(n),
                args.reset().ptr(embedding.ptr()).i64(embedding.rowBytes()).ptr(dTokens).ptr(x).i32(dim));
        for (int l = 0; l < c.layers(); l++) {
            Layer w = layers[l];
            rmsNorm(xb, x, w.attnNorm(), dim, n);
            qkv(w, xb, n);
            if (w.bq() != 0) {
                addBias(q, w.bq(), c.qDim(), n);
                addBias(k, w.bk(), c.kvDim(), n);
                addBias(v, w.bv(), c.kvDim(), n);
            }
            if (w.qNorm() != 0) {
                rmsNorm(q, q, w.qNorm(), c.headDim(), n * c.heads());
                rmsNorm(k, k, w.kNorm(), c.headDim(), n * c.kvHeads());
            }
            long kl = kCache + 2 * layerElems * l;
            long vl = vCache + 2 * layerElems * l;
            launch("rope_kv_write", LaunchGeometry.perRow(n), args.reset().ptr(q).ptr(k).ptr(v).ptr(kl).ptr(vl).ptr(dTables)
                    .i32(layout.maxBlocks()).ptr(dSeq).ptr(dPos).ptr(invFreq).i32(c.heads()).i32(c.kvHeads())
                    .i32(c.headDim()).i32(c.ropeDim()).i32(c.neoxRope() ? 1 : 0).i32(blockSize)
                    .i32(kvPrecision == KvPrecision.BF16 ? 1 : 0));
            launch("attention", LaunchGeometry.attention(c.heads(), n, c.headDim(), parts), args.reset().ptr(att).ptr(q)
                    .ptr(kl).ptr(vl).ptr(dTables).i32(layout.maxBlocks()).ptr(dSeq).ptr(dPos).i32(c.heads()).i32(c.kvHeads())
                    .i32(c.headDim()).i32(blockSize).f32((float) (1.0 / Math.sqrt(c.headDim())))
                    .i32(kvPrecision == KvPrecision.BF16 ? 1 : 0).i32(partition).ptr(partAcc).ptr(partMax)
                    .ptr(partSum));
            if (parts > 1) {
                launch("attention_reduce", new LaunchGeometry(c.heads(), n, 128), args.reset().ptr(att).ptr(partAcc)
                        .ptr(partMax).ptr(partSum).i32(c.heads()).i32(c.headDim()).i32(parts));
            }
            matmul(w.wo(), att, x, n, true);   // the residual add in the product's epilogue
            rmsNorm(xb, x, w.ffnNorm(), dim, n);
            swiglu(w.gate(), w.up(), xb, gate, n);
            matmul(w.down(), gate, x, n, true);
        }
        float[][] logitRows = new float[step.slices().size()][];
        int[][] chosen = new int[step.slices().size()][];
        ChosenLogprobs[][] logprobs = new ChosenLogprobs[step.slices().size()][];
        int rows = layout.logitRows().length;
        if (rows > 0) {
            gatherNormed(layout.logitRows(), xb);
            long dLogits = logits.atLeast(4L * rows * c.vocabSize(), 0);
            matmul(output, xb, dLogits, rows);
            // the rows that go back first (one run), then the rows whose tokens are chosen here: their ids only
            logitRows = downloadRows(dLogits, c.vocabSize(), step.slices().stream()
                    .mapToInt(s -> s.choice() != null ? 0 : s.logitRows()).toArray());
            long chosenAt = dLogits + 4L * c.vocabSize() * (rows - layout.chosenRows());
            chosen = choose(step, chosenAt, layout.chosenRows(), logprobs);
            declined(step, chosen, logprobs, logitRows, chosenAt);
        }
        float[][] hidden = new float[step.slices().size()][];
        if (layout.hiddenRows().length > 0) {
            gatherNormed(layout.hiddenRows(), xb);
            hidden = downloadRows(xb, dim, step.slices().stream().mapToInt(s -> s.hidden() ? s.tokens().length : 0).toArray());
        }
        driver.synchronize();
        return new StepOutput(logitRows, c.vocabSize(), hidden, layout.hiddenRows().length > 0 ? dim : 0, chosen, logprobs);
    }

    /**
     * The tokens chosen on the device from the {@code count} logit rows at {@code rows}, as each slice's
     * {@link TokenChoice} says ({@code sample_rows}), handed out to those slices in order (null for the
     * others): 4 bytes a row come back instead of the vocabulary's floats. Slices whose choice asks for logprobs
     * get them in {@code logprobs} ({@code row_logprobs}: 168 bytes a row).
     */
    private int[][] choose(Step step, long rows, int count, ChosenLogprobs[][] logprobs) {
        int[][] out = new int[step.slices().size()][];
        if (count == 0) {
            return out;
        }
        MemorySegment s = staging(Math.max(8L * CHOICE_DOUBLES * count, 4L * LOGPROB_WORDS * count));
        int row = 0;
        boolean anyLogprobs = false;
        int[] tops = new int[count];
        for (Slice slice : step.slices()) {
            TokenChoice ch = slice.choice();
            for (int r = 0; ch != null && r < slice.logitRows(); r++, row++) {
                double[] params = {ch.temperature(), ch.uniform(), ch.topK(), ch.topP(), ch.minP()};
                MemorySegment.copy(params, 0, s, ValueLayout.JAVA_DOUBLE, 8L * CHOICE_DOUBLES * row, CHOICE_DOUBLES);
                tops[row] = ch.topLogprobs();
                anyLogprobs |= ch.logprobs();
            }
        }
        driver.copyToDevice(dChoice, s, 8L * CHOICE_DOUBLES * count);
        launch("sample_rows", LaunchGeometry.perRow(count), args.reset().ptr(dIds)
                .ptr(rows).ptr(dChoice).i32(c.vocabSize()));
        long dLogprobs = 0;
        if (anyLogprobs) {
            uploadInts(dRows, tops);
            dLogprobs = logprobRecords.atLeast(4L * LOGPROB_WORDS * count, 8L * LOGPROB_WORDS * count);
            launch("row_logprobs", LaunchGeometry.perRow(count), args.reset().ptr(dIds).ptr(dLogprobs).ptr(rows)
                    .ptr(dRows).i32(c.vocabSize()));
        }
        driver.copyToHost(s, dIds, 4L * count);
        int[] ids = s.asSlice(0, 4L * count).toArray(ValueLayout.JAVA_INT);
        int[] records = new int[0];
        if (anyLogprobs) {
            driver.copyToHost(s, dLogprobs, 4L * LOGPROB_WORDS * count);
            records = s.asSlice(0, 4L * LOGPROB_WORDS * count).toArray(ValueLayout.JAVA_INT);
        }
        int at = 0;
        for (int i = 0; i < out.length; i++) {
            Slice slice = step.slices().get(i);
            TokenChoice ch = slice.choice();
            if (ch != null) {
                out[i] = java.util.Arrays.copyOfRange(ids, at, at + slice.logitRows());
                if (ch.logprobs()) {
                    logprobs[i] = new ChosenLogprobs[slice.logitRows()];
                    for (int r = 0; r < slice.logitRows(); r++) {
                        logprobs[i][r] = out[i][r] < 0 ? null
                                : logprobRecord(records, at + r, Math.min(ch.topLogprobs(), c.vocabSize()));
                    }
                }
                at += slice.logitRows();
            }
        }
        return out;
    }

    /** Row {@code row}'s record of {@code row_logprobs}: the logprob, the rank, then 20 ids and 20 logprobs. */
    private static ChosenLogprobs logprobRecord(int[] records, int row, int top) {
        int o = LOGPROB_WORDS * row;
        int[] ids = new int[top];
        float[] values = new float[top];
        for (int r = 0; r < top; r++) {
            ids[r] = records[o + 2 + r];
            values[r] = Float.intBitsToFloat(records[o + 22 + r]);
        }
        return new ChosenLogprobs(Float.intBitsToFloat(records[o]), records[o + 1], ids, values);
    }

    /**
     * The rows the device declined (id -1: a top-p or min-p cut wider than {@code sample_rows}' 256 ranks, or
     * logprobs of a row with a NaN or an infinite largest logit) go back as their rows, for the engine to choose on the
     * host with the same number: their {@code chosen} and {@code logprobs} entries become null and their row is
     * downloaded from the chosen rows at {@code rows}.
     */
    private void declined(Step step, int[][] chosen, ChosenLogprobs[][] logprobs, float[][] logitRows, long rows) {
        int at = 0;
        for (int i = 0; i < chosen.length; i++) {
            if (chosen[i] == null) {
                continue;
            }
            for (int r = 0; r < chosen[i].length; r++) {
                if (chosen[i][r] < 0) {
                    int n = chosen[i].length;   // every row of the slice: its logits come back whole
                    logitRows[i] = downloadRows(rows + 4L * c.vocabSize() * at, c.vocabSize(), new int[] {n})[0];
                    chosen[i] = null;
                    logprobs[i] = null;
                    break;
                }
            }
            at += step.slices().get(i).logitRows();
        }
    }

    /** xb[0..rows) = outputNorm(x[rows[i]]). */
    private void gatherNormed(int[] rowIds, long into) {
        uploadInts(dRows, rowIds);
        launch("gather_rows", LaunchGeometry.perRow(rowIds.length), args.reset().ptr(into).ptr(x).ptr(dRows).i32(c.dim()));
        rmsNorm(into, into, outputNorm, c.dim(), rowIds.length);
    }

    private void matmul(Matrix w, long in, long out, int tokens) {
        matmul(w, in, out, tokens, false);
    }

    /** Whether a product of {@code tokens} tokens with {@code w} runs on cuBLAS (else on the GEMV kernels). */
    private boolean usesCublas(Matrix w, int tokens) {
        return cublas != null && tokens >= CUBLAS_MIN_TOKENS && w.format() != WeightFormat.F32;
    }

    /** q, k, v = in · wqᵀ, wkᵀ, wvᵀ: on the GEMV path one launch for the three (when they share a format), else three products. */
    private void qkv(Layer w, long in, int tokens) {
        Matrix wq = w.wq();
        Matrix wk = w.wk();
        Matrix wv = w.wv();
        if (usesCublas(wq, tokens) || wq.format() != wk.format() || wq.format() != wv.format()
                || wq.rowBytes() != wk.rowBytes() || wq.rowBytes() != wv.rowBytes()) {
            matmul(wq, in, q, tokens);
            matmul(wk, in, k, tokens);
            matmul(wv, in, v, tokens);
            return;
        }
        gemvChunks(tokens, (t0, nt) -> launch(wq.format().qkv(wq.cols()), LaunchGeometry.gemv(wq.rows() + 2 * wk.rows(), nt),
                args.reset().ptr(wq.ptr()).ptr(wk.ptr()).ptr(wv.ptr()).i64(wq.rowBytes()).ptr(in + 4L * t0 * wq.cols())
                        .ptr(q + 4L * t0 * wq.rows()).ptr(k + 4L * t0 * wk.rows()).ptr(v + 4L * t0 * wv.rows())
                        .i32(wq.rows()).i32(wk.rows()).i32(wq.cols()).i32(nt)));
    }

    /**
     * out = silu(in · gateᵀ) * (in · upᵀ): on the GEMV path one launch for both matrices (when they share a
     * format), else the two products and silu_mul.
     */
    private void swiglu(Matrix gateW, Matrix upW, long in, long out, int tokens) {
        if (usesCublas(gateW, tokens) || gateW.format() != upW.format() || gateW.rowBytes() != upW.rowBytes()) {
            matmul(gateW, in, out, tokens);
            matmul(upW, in, up, tokens);
            launch("silu_mul", LaunchGeometry.elementwise((long) tokens * c.ffnDim()),
                    args.reset().ptr(out).ptr(up).i64((long) tokens * c.ffnDim()));
            return;
        }
        gemvChunks(tokens, (t0, nt) -> launch(gateW.format().swiglu(gateW.cols()), LaunchGeometry.gemv(gateW.rows(), nt),
                args.reset().ptr(gateW.ptr()).ptr(upW.ptr()).i64(gateW.rowBytes()).ptr(in + 4L * t0 * gateW.cols())
                        .ptr(out + 4L * t0 * gateW.rows()).i32(gateW.rows()).i32(gateW.cols()).i32(nt)));
    }

    /** Runs {@code launch} over the tokens in pieces the grid's y limit allows (65,535 blocks of GEMV_TOKENS). */
    private static void gemvChunks(int tokens, java.util.function.BiConsumer<Integer, Integer> launch) {
        int most = 65_535 * LaunchGeometry.GEMV_TOKENS;
        for (int t0 = 0; t0 < tokens; t0 += most) {
            launch.accept(t0, Math.min(tokens - t0, most));
        }
    }

    /** out = in · wᵀ, or (accumulate) out += in · wᵀ. */
    private void matmul(Matrix w, long in, long out, int tokens, boolean accumulate) {
        if (usesCublas(w, tokens)) {
            boolean bf16 = w.format() == WeightFormat.BF16;
            long weights = w.ptr();
            if (!w.format().cublasNative()) {
                weights = dequantScratch.atLeast(2L * w.rows() * w.cols(), 0);
                launch(w.format().dequant(), LaunchGeometry.dequant(w.rows(), w.cols()), args.reset().ptr(w.ptr())
                        .i64(w.rowBytes()).ptr(weights).i32(w.rows()).i32(w.cols()).i32(0));
            }
            launch("to_half", LaunchGeometry.elementwise((long) tokens * w.cols()),
                    args.reset().ptr(halfIn).ptr(in).i64((long) tokens * w.cols()).i32(bf16 ? 1 : 0));
            cublas.gemm(weights, halfIn, out, w.rows(), w.cols(), tokens, bf16 ? Cublas.CUDA_R_16BF : Cublas.CUDA_R_16F,
                    accumulate);
            return;
        }
        gemvChunks(tokens, (t0, nt) -> launch(w.format().gemv(w.cols()), LaunchGeometry.gemv(w.rows(), nt), args.reset()
                .ptr(w.ptr()).i64(w.rowBytes()).ptr(in + 4L * t0 * w.cols()).ptr(out + 4L * t0 * w.rows()).i32(w.rows())
                .i32(w.cols()).i32(nt).i32(accumulate ? 1 : 0)));
    }

    private void rmsNorm(long out, long in, long weight, int n, int rows) {
        launch("rms_norm", LaunchGeometry.perRow(rows), args.reset().ptr(out).ptr(in).ptr(weight).i32(n).f32(c.rmsEps()));
    }

    private void addBias(long y, long bias, int width, int n) {
        launch("add_bias", LaunchGeometry.elementwise((long) width * n), args.reset().ptr(y).ptr(bias).i32(width).i32(n));
    }

    private void launch(String kernel, LaunchGeometry g, KernelArgs a) {
        driver.launch(kernels.function(kernel), g.gridX(), g.gridY(), g.gridZ(), g.blockX(), 1, 1, 0, a.pointers());
    }

    /** Bytes of the activation buffers for {@code tokens} tokens. */
    private long activationBytes(int tokens) {
        long floats = (long) tokens * (2L * c.dim() + 2L * c.qDim() + 2L * c.kvDim() + 2L * c.ffnDim());
        long halves = (long) tokens * Math.max(Math.max(c.dim(), c.qDim()), c.ffnDim());
        return 4 * floats + 2 * halves + 16L * tokens;
    }

    private void ensureCapacity(int tokens) {
        if (tokens <= capacity) {
            return;
        }
        int cap = Math.max(tokens, Math.max(16, 2 * capacity));
        capacity = 0;   // until every buffer is allocated again: a failed allocation leaves nothing freed in use
        for (long p : new long[] {x, xb, q, k, v, att, gate, up, halfIn, dTokens, dSeq, dPos, dRows, dIds, dChoice}) {
            release(p);
        }
        x = xb = q = k = v = att = gate = up = halfIn = dTokens = dSeq = dPos = dRows = dIds = dChoice = 0;
        long t = cap;
        x = alloc(4 * t * c.dim());
        xb = alloc(4 * t * c.dim());
        q = alloc(4 * t * c.qDim());
        k = alloc(4 * t * c.kvDim());
        v = alloc(4 * t * c.kvDim());
        att = alloc(4 * t * c.qDim());
        gate = alloc(4 * t * c.ffnDim());
        up = alloc(4 * t * c.ffnDim());
        halfIn = alloc(2 * t * Math.max(Math.max(c.dim(), c.qDim()), c.ffnDim()));
        dTokens = alloc(4 * t);
        dSeq = alloc(4 * t);
        dPos = alloc(4 * t);
        dRows = alloc(4 * t);
        dIds = alloc(4 * t);
        dChoice = alloc(8L * CHOICE_DOUBLES * t);
        capacity = cap;
    }

    /**
     * A device buffer that grows when a step needs more (its contents are not kept); none until first asked.
     * Growing releases the old one and clears pointer and size before allocating, so a failed allocation
     * leaves nothing freed in use.
     */
    private final class Growing {
        long ptr;
        long bytes;

        /** The buffer, of at least {@code need} bytes: {@code max(need, grow)} when it has to grow. */
        long atLeast(long need, long grow) {
            if (need > bytes) {
                long size = Math.max(need, grow);
                release(ptr);
                ptr = 0;
                bytes = 0;
                ptr = alloc(size);
                bytes = size;
            }
            return ptr;
        }
    }

    /** Frees a buffer this backend allocated (0, or one already released: nothing). */
    private void release(long p) {
        if (p != 0 && allocations.remove(p)) {   // removed first: a free that throws is never tried twice
            driver.free(p);
        }
    }

    private long alloc(long bytes) {
        long p = driver.alloc(bytes);
        allocations.add(p);
        return p;
    }

    private MemorySegment staging(long bytes) {
        if (host.byteSize() < bytes) {
            long size = Math.max(bytes, 2 * host.byteSize());
            driver.freeHost(host);
            host = MemorySegment.NULL;
            host = driver.allocHost(size);
        }
        return host;
    }

    private void uploadInts(long dst, int[] values) {
        MemorySegment s = staging(4L * values.length);
        MemorySegment.copy(values, 0, s, ValueLayout.JAVA_INT, 0, values.length);
        driver.copyToDevice(dst, s, 4L * values.length);
    }

    /**
     * Downloads consecutive rows of {@code width} floats from {@code src}: slice i gets the next {@code counts[i]}
     * (null for 0), copied straight out of the staging buffer (at batch 64 a step's logits are 33 MB on a
     * 128K vocabulary: one copy on the host, not two), at most {@link #STAGING_ROWS_BYTES} at a time, so a step
     * that asks for every prompt position's logits does not leave a gigabyte of host memory locked.
     */
    private float[][] downloadRows(long src, int width, int[] counts) {
        float[][] out = new float[counts.length][];
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] > 0) {
                if ((long) counts[i] * width > Integer.MAX_VALUE - 8) {
                    throw new IllegalArgumentException(counts[i] + " rows of " + width + " values for one sequence:"
                            + " more than one array holds");
                }
                out[i] = new float[counts[i] * width];
            }
        }
        int total = java.util.Arrays.stream(counts).sum();
        int chunkRows = (int) Math.max(1, Math.min(total, stagingRowsBytes / (4L * width)));
        MemorySegment s = staging(4L * width * chunkRows);
        int slice = 0;
        int rowInSlice = 0;
        for (int row = 0; row < total; ) {
            int n = Math.min(chunkRows, total - row);
            driver.copyToHost(s, src + 4L * width * row, 4L * width * n);
            for (int r = 0; r < n; r++) {
                while (counts[slice] == rowInSlice) {
                    slice++;
                    rowInSlice = 0;
                }
                MemorySegment.copy(s, ValueLayout.JAVA_FLOAT, 4L * width * r, out[slice], rowInSlice * width, width);
                rowInSlice++;
            }
            row += n;
        }
        return out;
    }

    private long upload(MemorySegment data) {
        long p = alloc(data.byteSize());
        if (data.isNative()) {
            driver.copyToDevice(p, data, data.byteSize());
        } else {   // a tensor a source built on the heap: through a native copy (downcalls take native memory only)
            try (Arena a = Arena.ofConfined()) {
                MemorySegment copy = a.allocate(data.byteSize(), 16);
                copy.copyFrom(data);
                driver.copyToDevice(p, copy, data.byteSize());
            }
        }
        return p;
    }

    private long upload(double[] values) {
        MemorySegment s = arena.allocate(8L * values.length, 8);
        MemorySegment.copy(values, 0, s, ValueLayout.JAVA_DOUBLE, 0, values.length);
        return upload(s);
    }

    private Matrix matrix(TensorSource t, String name, int rows, int cols) {
        TensorSource.Tensor tensor = t.find(name).orElseThrow(() ->
                new IllegalArgumentException(t.describe(name) + ": missing"));
        long[] d = tensor.dims();
        if (d.length != 2 || d[0] != cols || d[1] != rows) {
            throw new IllegalArgumentException(t.describe(name) + " has shape " + tensor.shown() + ", expected "
                    + t.shape(new long[] {cols, rows}));
        }
        WeightFormat f = WeightFormat.of(tensor.type()).orElseThrow(() -> new IllegalArgumentException(t.describe(name)
                + " is " + tensor.type() + "; the CUDA backend's kernels read " + WeightFormat.supported()));
        long rowBytes;
        try {
            rowBytes = f.rowBytes(cols);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(t.describe(name) + ": " + e.getMessage());
        }
        return new Matrix(upload(tensor.data().asSlice(0, rowBytes * rows)), f, rows, cols, rowBytes);
    }

    private long vector(TensorSource t, String name, int n) {
        float[] values = HostTensors.floats(t, name, n);
        MemorySegment s = arena.allocate(4L * n, 4);
        MemorySegment.copy(values, 0, s, ValueLayout.JAVA_FLOAT, 0, n);
        return upload(s);
    }

    private double[] ropeFrequencies(TensorSource t) {
        double[] f = new double[c.ropeDim() / 2];
        for (int i = 0; i < f.length; i++) {
            f[i] = c.ropeScaling().scale(Math.pow(c.ropeTheta(), -2.0 * i / c.ropeDim()));
        }
        if (t.find("rope_freqs.weight").isPresent()) {
            float[] factors = HostTensors.floats(t, "rope_freqs.weight", f.length);
            for (int i = 0; i < f.length; i++) {
                f[i] /= factors[i];
            }
        }
        return f;
    }

    private void freeAll() {
        for (long p : allocations) {
            try {
                driver.free(p);
            } catch (CudaException ignored) {
                // freeing after a failure: the context goes with the process
            }
        }
        allocations.clear();
    }

    @Override
    public void close() {
        try {
            driver.makeCurrent(context);
            if (cublas != null) {
                cublas.close();
            }
            freeAll();
            kernels.close();
            MemorySegment h = host;
            host = MemorySegment.NULL;
            driver.freeHost(h);
        } finally {   // after a sticky device error the frees fail: the context still goes
            arena.close();
            driver.releasePrimaryContext(device);
        }
    }
}
