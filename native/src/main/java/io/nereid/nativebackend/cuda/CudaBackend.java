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
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The llama / qwen2 / qwen3 forward pass on one CUDA device, over the engine's paged KV cache: the same
 * steps as the CPU backend (embedding, per layer RMSNorm, Q/K/V (+ bias), Q/K norm, RoPE, K/V into the
 * sequence's blocks, causal GQA attention over its block table, output projection, residual, RMSNorm,
 * SwiGLU, down projection, residual; then the output norm and the logits of the rows asked for only).
 *
 * <p>Weights are uploaded once in their GGUF formats ({@link WeightFormat}); decode multiplies with the
 * dequantizing GEMV kernels, prefill of more than {@value #GEMV_MAX_TOKENS} tokens with cuBLAS (F16 / BF16
 * weights as they are, quantized ones dequantized to F16 into a scratch matrix first). The KV cache is
 * F16 or BF16, two arrays (K, V) of {@code layers x blocks x kvHeads x blockSize x headDim}. Everything after the
 * weights' upload runs on one non-blocking stream of the device's primary context, in order (other models' work on
 * the default stream, on other engine threads, neither waits for it nor disturbs a capture on it): a step's inputs go up in two async copies from page-locked memory
 * (tokens, sequences, positions and block tables; the rows to gather and the choices), and the step is synchronised
 * when its results come down; engine thread only.
 *
 * <p>CUDA graphs (as vLLM's; off with {@code --enforce-eager}): a step of up to {@value #GRAPH_MAX_TOKENS} tokens runs
 * its layers (the embedding to the last layer's residual: ~8 launches a layer, ~260 for an 8B model) as a graph
 * recorded once per {@link Shape} and replayed with one launch, so the host's launch calls and the device's gaps
 * between kernels are paid once. Its tokens are rounded up to a capture size (1, 2, 4, then multiples of 8; the
 * padding at position -1, skipped by the KV writes and attention) and its reach to a power of two (the block
 * tables' stride and the attention's parts follow), so a batch that changes size or a sequence that grows reuses a
 * few graphs. A shape runs eagerly the first time (which allocates what it needs) and is recorded the next time,
 * when no buffer has moved since; a moved buffer (grown activations, inputs) drops every graph. The logits, the
 * choices and the downloads after the layers run eagerly (a few launches). A failed capture runs its step eagerly;
 * the third turns graphs off with the reason on stderr, and steps run eagerly.
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

    /**
     * Products of more tokens than this run on cuBLAS: a multiple of 8, so that a graph's padding to a capture size
     * (a multiple of 8 past 4) never moves a step from the GEMV kernels to cuBLAS.
     */
    static final int GEMV_MAX_TOKENS = 32;
    /** Device memory left free beyond the weights, the activations and the KV cache (cuBLAS workspace, fragmentation). */
    static final long RESERVE_BYTES = 512L << 20;
    /** Doubles per row of sample_rows' choices: temperature, number, top-k, top-p, min-p. */
    private static final int CHOICE_DOUBLES = 5;
    /** Words per row of row_logprobs' records: the logprob, the rank, 20 ids, 20 logprobs. */
    private static final int LOGPROB_WORDS = 42;

    /** Most tokens of a step that runs as a CUDA graph (vLLM's largest capture size); larger steps run eagerly. */
    static final int GRAPH_MAX_TOKENS = 512;
    /**
     * Failed captures before graphs go off for good: one may be another thread's doing (a device-wide synchronisation
     * while this one records: another model's buffers freed), the same failure three times is this backend's.
     */
    static final int CAPTURE_TRIES = 3;
    /** Executable graphs kept; the least recently used goes first. */
    static final int GRAPH_CACHE = 128;
    /** cuBLAS's workspace: what NVIDIA advises on Hopper (products recorded into a graph must not allocate). */
    static final long BLAS_WORKSPACE_BYTES = 32L << 20;

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
    private long dIds;                           // sample_rows' ids
    // (graphed: a graph's launches may read or write it, so moving it drops the graphs)
    private final Growing stepInputs = new Growing(true);   // tokens, sequences, positions, block tables (Inputs)
    private final Growing stepTail = new Growing(false);    // logit and hidden rows, choices, top counts (Inputs)
    private final Growing copyPairs = new Growing(false);   // copy()'s block ids
    private final Growing logits = new Growing(false);      // the logit rows asked for
    private final Growing dequantScratch = new Growing(true);  // a quantized matrix as F16 for cuBLAS
    private final Growing attentionParts = new Growing(true);  // a split attention's parts: ATTN_PARTS_BYTES
    private final Growing logprobRecords = new Growing(false); // row_logprobs' records
    private int attentionPartition = LaunchGeometry.ATTN_PARTITION;
    private MemorySegment host = MemorySegment.NULL;   // page-locked staging for uploads and downloads
    private boolean uploadPending;               // an async copy from host may not have run yet
    private final MemorySegment stream;          // everything runs on it, in order

    // CUDA graphs: a step's layers (the embedding to the last layer's residual, ~8 launches a layer) recorded once
    // per Shape and replayed with one launch; the inputs they read sit at the addresses they were recorded with
    private String graphsOff;                    // why steps run eagerly (null: graphs on)
    private long epoch;                          // bumped by every allocation and free: a graph records addresses
    private long graphsEpoch;                    // the epoch the cached graphs were recorded in
    private final LinkedHashMap<Shape, MemorySegment> graphs = new LinkedHashMap<>(16, 0.75f, true);
    private final Map<Shape, Long> ranEagerly = new HashMap<>();   // shape -> epoch after its run
    private long graphReplays;
    private long graphCaptures;
    private int failedCaptures;                  // graphs go off at CAPTURE_TRIES
    private Runnable whileCapturing = () -> { };   // tests: something that spoils a capture
    private boolean recordGraphs = true;           // tests: false runs graph-shaped steps eagerly, padding and all

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
        MemorySegment created = MemorySegment.NULL;
        try {
            created = driver.createStream();
            module = KernelModule.load(driver, major, minor);
            blas = config.batchInvariant() ? null : openCublas(created);
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
            // the uploads ran on the default stream, which the backend's own (non-blocking) stream does not wait for
            driver.synchronize(MemorySegment.NULL);
        } catch (RuntimeException e) {   // each step of the cleanup tried, none hiding the cause
            Cublas b = blas;
            KernelModule m = module;
            MemorySegment st = created;
            cleanUp(e, () -> {
                if (b != null) {
                    b.close();
                }
            });
            cleanUp(e, this::freeAll);
            cleanUp(e, () -> {
                if (m != null) {
                    m.close();
                }
            });
            cleanUp(e, () -> {
                if (!st.equals(MemorySegment.NULL)) {
                    driver.destroyStream(st);
                }
            });
            cleanUp(e, () -> driver.releasePrimaryContext(device));
            throw e;
        }
        this.kernels = module;
        this.cublas = blas;
        this.stream = created;
        this.batchInvariant = config.batchInvariant();
        this.graphsOff = config.eager() ? "--enforce-eager" : null;
    }

    /** Runs {@code step} of a failed construction's cleanup; what it throws goes with {@code cause} as suppressed. */
    private static void cleanUp(Throwable cause, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    /**
     * cuBLAS on {@code on} with a workspace of ours, or null (said on stderr: prefill then runs on the GEMV kernels)
     * when the library is missing, lacks a function we bind, or refuses the stream or the workspace.
     */
    private Cublas openCublas(MemorySegment on) {
        Cublas blas = null;
        long workspace = 0;
        try {
            blas = Cublas.open();
            workspace = alloc(BLAS_WORKSPACE_BYTES);
            blas.bind(on, workspace, BLAS_WORKSPACE_BYTES);
            return blas;   // the workspace is freed with the rest
        } catch (CudaException | UnsatisfiedLinkError e) {
            if (blas != null) {
                blas.close();
            }
            if (workspace != 0) {   // nothing queued on the stream yet
                allocations.remove(workspace);
                driver.free(workspace);
            }
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
                + (graphsOff == null ? ", CUDA graphs" : ", eager (" + graphsOff + ")")
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
        long free = driver.memoryInfo()[0] - RESERVE_BYTES - activationBytes(Math.max(1024, GRAPH_MAX_TOKENS))
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
        driver.zeroAsync(kCache, bytes, stream);
        driver.zeroAsync(vCache, bytes, stream);
    }

    @Override
    public void copy(List<BlockCopy> copies) {
        if (copies.isEmpty()) {
            return;
        }
        driver.makeCurrent(context);
        int n = copies.size();
        long pairs = copyPairs.atLeast(8L * n, 16L * n);
        MemorySegment s = uploadStaging(8L * n);
        for (int i = 0; i < n; i++) {
            s.setAtIndex(ValueLayout.JAVA_INT, i, copies.get(i).source());
            s.setAtIndex(ValueLayout.JAVA_INT, n + i, copies.get(i).target());
        }
        driver.copyToDeviceAsync(pairs, s, 8L * n, stream);
        uploadPending = true;
        launch("copy_blocks", LaunchGeometry.perRow(n), args.reset().ptr(kCache).ptr(vCache).ptr(pairs).ptr(pairs + 4L * n)
                .i32(c.layers()).i64(layerElems).i32(c.kvHeads() * blockSize * c.headDim()));
    }

    /**
     * How a step's layers run: over {@code tokens} token rows (a step's tokens, or for a graph that many rounded up
     * to a capture size, the rest padding at position -1, which the kernels skip), block tables {@code stride}
     * blocks apart, attention split in parts of {@code partition} positions ({@code parts} of them; 0 and 1: no
     * split). A graph is recorded per shape: the same shape launches the same kernels with the same arguments.
     */
    record Shape(int tokens, int stride, int partition, int parts) {
    }

    /**
     * The shape of {@code n} token rows reaching {@code positions}, tables {@code stride} apart: a step's own run
     * eagerly, or (from {@link #graphShape}) a graph's rounded one.
     */
    private Shape shapeOf(int n, int positions, int stride) {
        int partition = batchInvariant ? 0 : LaunchGeometry.attentionPartition(positions, n, c.heads(), c.headDim(),
                attentionPartition, LaunchGeometry.ATTN_PARTS_BYTES);
        return new Shape(n, stride, partition, partition == 0 ? 1 : LaunchGeometry.ceil(positions, partition));
    }

    /**
     * The shape of a step of {@code n} tokens reaching {@code positions} as a graph: the tokens rounded up to a
     * capture size ({@link #captureSize}), the positions to a power of two (at least 512, at most the cache's), so
     * that a sequence's growth or a batch's changes in size reuse a few graphs; the parts are those of the rounded
     * reach (a token's part past its position ends at once).
     */
    Shape graphShape(int n, int positions) {
        int reach = Math.min(maxPositions, Math.max(512, Integer.highestOneBit(Math.max(1, positions - 1)) << 1));
        reach = Math.max(reach, positions);
        return shapeOf(captureSize(n), reach, LaunchGeometry.ceil(reach, blockSize));
    }

    /** vLLM's capture sizes: 1, 2, 4, then multiples of 8 up to {@link #GRAPH_MAX_TOKENS}. */
    static int captureSize(int n) {
        if (n < 1 || n > GRAPH_MAX_TOKENS) {
            throw new IllegalArgumentException(n + " tokens: graphs take 1 to " + GRAPH_MAX_TOKENS);
        }
        return n <= 2 ? n : n <= 4 ? 4 : (n + 7) / 8 * 8;
    }

    @Override
    public StepOutput forward(Step step) {
        if (kCache == 0) {
            throw new IllegalStateException("forward before allocate");
        }
        driver.makeCurrent(context);
        StepLayout layout = StepLayout.of(step, c.vocabSize(), blockSize, maxPositions, numBlocks);
        int n = layout.size();
        boolean asGraph = graphsOff == null && n <= GRAPH_MAX_TOKENS;
        Shape shape = asGraph ? graphShape(n, layout.positions())
                : shapeOf(n, layout.positions(), layout.maxBlocks());
        ensureCapacity(shape.tokens());
        Inputs in = upload(step, layout, shape);
        // a split attention's accumulators, maxima and sums; unused with one part, but a kernel argument must be a
        // device pointer
        long[] parts = {att, att, att};
        if (shape.parts() > 1) {
            long dParts = attentionParts.atLeast(LaunchGeometry.ATTN_PARTS_BYTES, 0);   // reserved in kvCacheSpec
            long cells = (long) shape.tokens() * c.heads() * shape.parts();
            parts[0] = dParts;
            parts[1] = dParts + 4 * cells * c.headDim();
            parts[2] = parts[1] + 4 * cells;
        }
        Runnable layers = () -> layers(shape, in, parts);
        if (asGraph) {
            runAsGraph(shape, layers);
        } else {
            layers.run();
        }

        int dim = c.dim();
        float[][] logitRows = new float[step.slices().size()][];
        int[][] chosen = new int[step.slices().size()][];
        ChosenLogprobs[][] logprobs = new ChosenLogprobs[step.slices().size()][];
        ChosenLogprobs[][] scored = new ChosenLogprobs[step.slices().size()][];
        int rows = layout.logitRows().length;
        if (rows > 0) {
            gatherNormed(in.logitRows(), rows, xb);
            long dLogits = logits.atLeast(4L * rows * c.vocabSize(), 0);
            matmul(output, xb, dLogits, rows);
            // the rows that go back first (one run), then the rows whose tokens are chosen here: their ids only; then
            // the rows that score given tokens: their records only
            int scoredRows = layout.scoredIds().length;
            logitRows = downloadRows(dLogits, c.vocabSize(), step.slices().stream()
                    .mapToInt(s -> s.choice() != null ? 0 : s.logitRows() - scoredOf(s)).toArray());
            long chosenAt = dLogits + 4L * c.vocabSize() * (rows - scoredRows - layout.chosenRows());
            chosen = choose(step, in, chosenAt, layout.chosenRows(), logprobs);
            declined(step, chosen, logprobs, logitRows, chosenAt);
            if (scoredRows > 0) {
                score(step, in, dLogits + 4L * c.vocabSize() * (rows - scoredRows), scoredRows, scored, logitRows);
            }
        }
        float[][] hidden = new float[step.slices().size()][];
        if (layout.hiddenRows().length > 0) {
            gatherNormed(in.hiddenRows(), layout.hiddenRows().length, xb);
            hidden = downloadRows(xb, dim, step.slices().stream().mapToInt(s -> s.hidden() ? s.tokens().length : 0).toArray());
        }
        synchronize();
        return new StepOutput(logitRows, c.vocabSize(), hidden, layout.hiddenRows().length > 0 ? dim : 0, chosen, logprobs,
                scored);
    }

    /**
     * Where a step's inputs lie on the device: the layers' (tokens, their sequences and positions, the block tables)
     * in {@code stepInputs} at offsets fixed by the shape, so a graph finds them where it was recorded; the rest
     * (the rows to gather, the choices and top counts of the rows chosen here) in {@code stepTail}.
     */
    private record Inputs(long tokens, long seqOf, long posOf, long tables, long logitRows, long hiddenRows, long tops,
            long choices, long scoredIds, long scoredTops) {
    }

    /**
     * Packs the step's inputs in page-locked memory and queues their copies, two in all (a copy from the host
     * costs a round trip to the device; this step made five to seven of them). Tokens past the step's own
     * (padding to the shape) get token 0, sequence 0 and position -1.
     */
    private Inputs upload(Step step, StepLayout layout, Shape shape) {
        int t = shape.tokens();
        int n = layout.size();
        int slices = step.slices().size();
        int chosen = layout.chosenRows();
        long fixedBytes = 4L * (3L * t + (long) t * shape.stride());
        long usedBytes = 4L * (3L * t + (long) slices * shape.stride());
        long logitAt = 0;
        long hiddenAt = logitAt + 4L * layout.logitRows().length;
        long topsAt = hiddenAt + 4L * layout.hiddenRows().length;
        long scoredIdsAt = topsAt + 4L * chosen;
        long scoredTopsAt = scoredIdsAt + 4L * layout.scoredIds().length;
        long choicesAt = (scoredTopsAt + 4L * layout.scoredTops().length + 7) / 8 * 8;
        long tailBytes = choicesAt + 8L * CHOICE_DOUBLES * chosen;
        long tailStage = (usedBytes + 255) / 256 * 256;
        MemorySegment s = uploadStaging(tailStage + tailBytes);
        MemorySegment.copy(layout.tokens(), 0, s, ValueLayout.JAVA_INT, 0, n);
        MemorySegment.copy(layout.seqOf(), 0, s, ValueLayout.JAVA_INT, 4L * t, n);
        MemorySegment.copy(layout.posOf(), 0, s, ValueLayout.JAVA_INT, 8L * t, n);
        for (int i = n; i < t; i++) {
            s.setAtIndex(ValueLayout.JAVA_INT, i, 0);
            s.setAtIndex(ValueLayout.JAVA_INT, t + i, 0);
            s.setAtIndex(ValueLayout.JAVA_INT, 2 * t + i, -1);
        }
        int[] tables = layout.tables(shape.stride());
        MemorySegment.copy(tables, 0, s, ValueLayout.JAVA_INT, 12L * t, tables.length);
        MemorySegment tail = s.asSlice(tailStage);
        MemorySegment.copy(layout.logitRows(), 0, tail, ValueLayout.JAVA_INT, logitAt, layout.logitRows().length);
        MemorySegment.copy(layout.hiddenRows(), 0, tail, ValueLayout.JAVA_INT, hiddenAt, layout.hiddenRows().length);
        MemorySegment.copy(layout.scoredIds(), 0, tail, ValueLayout.JAVA_INT, scoredIdsAt, layout.scoredIds().length);
        MemorySegment.copy(layout.scoredTops(), 0, tail, ValueLayout.JAVA_INT, scoredTopsAt, layout.scoredTops().length);
        int row = 0;
        for (Slice slice : step.slices()) {
            TokenChoice ch = slice.choice();
            for (int r = 0; ch != null && r < slice.logitRows(); r++, row++) {
                tail.setAtIndex(ValueLayout.JAVA_INT, topsAt / 4 + row, ch.topLogprobs());
                double[] params = {ch.temperature(), ch.uniform(), ch.topK(), ch.topP(), ch.minP()};
                MemorySegment.copy(params, 0, tail, ValueLayout.JAVA_DOUBLE, choicesAt + 8L * CHOICE_DOUBLES * row,
                        CHOICE_DOUBLES);
            }
        }
        long fixed = stepInputs.atLeast(fixedBytes, 2 * fixedBytes);
        long rest = stepTail.atLeast(Math.max(8, tailBytes), 2 * tailBytes);
        driver.copyToDeviceAsync(fixed, s, usedBytes, stream);
        if (tailBytes > 0) {
            driver.copyToDeviceAsync(rest, tail, tailBytes, stream);
        }
        uploadPending = true;
        return new Inputs(fixed, fixed + 4L * t, fixed + 8L * t, fixed + 12L * t, rest + logitAt, rest + hiddenAt,
                rest + topsAt, rest + choicesAt, rest + scoredIdsAt, rest + scoredTopsAt);
    }

    /** The embedding, then every layer, over the shape's token rows: what a graph records. */
    private void layers(Shape shape, Inputs in, long[] parts) {
        int n = shape.tokens();
        int dim = c.dim();
        launch(embedding.format().embed(), LaunchGeometry.perRow(n),
                args.reset().ptr(embedding.ptr()).i64(embedding.rowBytes()).ptr(in.tokens()).ptr(x).i32(dim));
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
            launch("rope_kv_write", LaunchGeometry.perRow(n), args.reset().ptr(q).ptr(k).ptr(v).ptr(kl).ptr(vl)
                    .ptr(in.tables()).i32(shape.stride()).ptr(in.seqOf()).ptr(in.posOf()).ptr(invFreq).i32(c.heads())
                    .i32(c.kvHeads()).i32(c.headDim()).i32(c.ropeDim()).i32(c.neoxRope() ? 1 : 0).i32(blockSize)
                    .i32(kvPrecision == KvPrecision.BF16 ? 1 : 0));
            launch("attention", LaunchGeometry.attention(c.heads(), n, c.headDim(), shape.parts()), args.reset().ptr(att)
                    .ptr(q).ptr(kl).ptr(vl).ptr(in.tables()).i32(shape.stride()).ptr(in.seqOf()).ptr(in.posOf())
                    .i32(c.heads()).i32(c.kvHeads()).i32(c.headDim()).i32(blockSize)
                    .f32((float) (1.0 / Math.sqrt(c.headDim()))).i32(kvPrecision == KvPrecision.BF16 ? 1 : 0)
                    .i32(shape.partition()).ptr(parts[0]).ptr(parts[1]).ptr(parts[2]));
            if (shape.parts() > 1) {
                launch("attention_reduce", new LaunchGeometry(c.heads(), n, 128), args.reset().ptr(att).ptr(parts[0])
                        .ptr(parts[1]).ptr(parts[2]).i32(c.heads()).i32(c.headDim()).i32(shape.parts()));
            }
            matmul(w.wo(), att, x, n, true);   // the residual add in the product's epilogue
            rmsNorm(xb, x, w.ffnNorm(), dim, n);
            swiglu(w.gate(), w.up(), xb, gate, n);
            matmul(w.down(), gate, x, n, true);
        }
    }

    /**
     * Runs {@code layers} (launching what a step of {@code shape} launches) as a CUDA graph: replayed when one was
     * recorded for the shape in this epoch; else eagerly the first time (which allocates what the shape needs),
     * and recorded the next, when no buffer has moved since. A capture that fails runs the step eagerly; the
     * {@value #CAPTURE_TRIES}th failure turns graphs off (said on stderr).
     */
    private void runAsGraph(Shape shape, Runnable layers) {
        if (!recordGraphs) {
            layers.run();
            return;
        }
        if (graphsEpoch != epoch) {   // a buffer moved: every graph points at old addresses
            dropGraphs();
            graphsEpoch = epoch;
        }
        MemorySegment exec = graphs.get(shape);
        if (exec == null) {
            Long ran = ranEagerly.get(shape);
            if (ran == null || ran != epoch) {
                layers.run();
                if (ranEagerly.size() >= 4096) {
                    ranEagerly.clear();
                }
                ranEagerly.put(shape, epoch);
                return;
            }
            exec = capture(layers);
            if (exec == null) {
                layers.run();
                return;
            }
            graphs.put(shape, exec);
            if (graphs.size() > GRAPH_CACHE) {
                var eldest = graphs.entrySet().iterator().next();
                destroyExec(eldest.getValue());
                graphs.remove(eldest.getKey());
            }
        }
        driver.launchGraph(exec, stream);
        graphReplays++;
    }

    /** {@code layers} recorded and instantiated, or null (graphs now off, the reason kept) when that failed. */
    private MemorySegment capture(Runnable layers) {
        RuntimeException failure = null;
        MemorySegment graph = MemorySegment.NULL;
        long before = epoch;
        driver.beginCapture(stream);
        try {
            whileCapturing.run();
            layers.run();
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            graph = driver.endCapture(stream);
        } catch (CudaException e) {
            failure = failure != null ? failure : e;
        }
        try {
            if (failure == null) {
                MemorySegment exec = driver.instantiate(graph);
                graphCaptures++;
                return exec;
            }
        } catch (CudaException e) {
            failure = e;
        } finally {
            if (!graph.equals(MemorySegment.NULL)) {
                try {
                    driver.destroyGraph(graph);   // the executable graph stands alone
                } catch (CudaException ignored) {
                    // a leak at worst; the result stands
                }
            }
        }
        String why = "a capture failed: " + failure.getMessage() + (epoch != before ? " (a buffer moved)" : "");
        if (++failedCaptures >= CAPTURE_TRIES) {
            graphsOff(why + " (" + failedCaptures + " failures)");
        } else {
            System.err.println("nereid cuda: " + why + "; the step runs eagerly (graphs go off after " + CAPTURE_TRIES
                    + " failures)");
        }
        return null;
    }

    /** Turns graphs off for good, saying why once. */
    private void graphsOff(String why) {
        graphsOff = why;
        dropGraphs();
        ranEagerly.clear();
        System.err.println("nereid cuda: CUDA graphs off, steps run eagerly: " + why);
    }

    /** Graphs on or off (DeviceCheck measures both on one backend): off drops them; on again records anew. */
    void useGraphs(boolean on) {
        if (on) {
            graphsOff = null;
        } else {
            graphsOff = "turned off";
            dropGraphs();
            ranEagerly.clear();
        }
    }

    /**
     * Tests: with {@code false}, steps a graph would take run eagerly in the graph's shape (padded tokens, rounded
     * reach), the reference a replay must equal bit for bit on any device (cuBLAS may pick another algorithm for
     * another number of tokens, so an unpadded step is no such reference on a GPU).
     */
    void recordGraphs(boolean on) {
        recordGraphs = on;
    }

    /** Runs {@code r} inside every capture (tests: an allocation there spoils it, as a bug would). */
    void whileCapturing(Runnable r) {
        whileCapturing = r;
    }

    /** Why steps run eagerly, or null when graphs are on. */
    String graphsOffReason() {
        return graphsOff;
    }

    /** Graph launches so far, and graphs recorded (tests). */
    long[] graphCounts() {
        return new long[] {graphReplays, graphCaptures};
    }

    private void dropGraphs() {
        for (MemorySegment exec : graphs.values()) {
            destroyExec(exec);
        }
        graphs.clear();
    }

    private void destroyExec(MemorySegment exec) {
        try {
            driver.destroyGraphExec(exec);
        } catch (CudaException ignored) {
            // after a sticky device error: the context goes with the backend
        }
    }

    /**
     * The tokens chosen on the device from the {@code count} logit rows at {@code rows}, as each slice's
     * {@link TokenChoice} says ({@code sample_rows}, with the choices uploaded with the step), handed out to those
     * slices in order (null for the others): 4 bytes a row come back instead of the vocabulary's floats. Slices
     * whose choice asks for logprobs get them in {@code logprobs} ({@code row_logprobs}: 168 bytes a row).
     */
    private int[][] choose(Step step, Inputs in, long rows, int count, ChosenLogprobs[][] logprobs) {
        int[][] out = new int[step.slices().size()][];
        if (count == 0) {
            return out;
        }
        boolean anyLogprobs = step.slices().stream().anyMatch(sl -> sl.choice() != null && sl.choice().logprobs());
        launch("sample_rows", LaunchGeometry.perRow(count), args.reset().ptr(dIds).ptr(rows).ptr(in.choices())
                .i32(c.vocabSize()));
        int[][] down = download(dIds, anyLogprobs ? rowLogprobs(dIds, rows, in.tops(), count) : 0, count);
        int[] ids = down[0];
        int[] records = down[1];
        int at = 0;
        for (int i = 0; i < out.length; i++) {
            Slice slice = step.slices().get(i);
            TokenChoice ch = slice.choice();
            if (ch != null) {
                out[i] = Arrays.copyOfRange(ids, at, at + slice.logitRows());
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

    /** How many of slice {@code s}'s rows score given tokens (its first ones). */
    private static int scoredOf(Slice s) {
        return s.scoring() == null ? 0 : s.scoring().ids().length;
    }

    /**
     * The records of the {@code count} rows at {@code rows} that score given tokens ({@code row_logprobs} with the
     * slices' ids: 168 bytes a row come back instead of the row), handed out to those slices in order. A slice with a
     * declined row (a NaN or an infinite largest logit) gets its scored rows back instead, before the rows it already
     * has, for the engine to score on the host.
     */
    private void score(Step step, Inputs in, long rows, int count, ChosenLogprobs[][] scored, float[][] logitRows) {
        int[][] down = download(in.scoredIds(), rowLogprobs(in.scoredIds(), rows, in.scoredTops(), count), count);
        int[] ids = down[0];
        int[] records = down[1];
        int at = 0;
        for (int i = 0; i < scored.length; i++) {
            Slice slice = step.slices().get(i);
            int k = scoredOf(slice);
            if (k == 0) {
                continue;
            }
            int top = Math.min(slice.scoring().topLogprobs(), c.vocabSize());
            scored[i] = new ChosenLogprobs[k];
            for (int r = 0; r < k && scored[i] != null; r++) {
                if (ids[at + r] < 0) {   // declined: this slice's scored rows come back whole
                    float[] back = downloadRows(rows + 4L * c.vocabSize() * at, c.vocabSize(), new int[] {k})[0];
                    float[] rest = logitRows[i];
                    logitRows[i] = rest == null ? back : concat(back, rest);
                    scored[i] = null;
                } else {
                    scored[i][r] = logprobRecord(records, at + r, top);
                }
            }
            at += k;
        }
    }

    /**
     * Queues {@code row_logprobs} over the {@code count} rows at {@code rows} for the ids at {@code ids} (set to -1
     * where it declines) with the alternatives at {@code tops}; the device records' address.
     */
    private long rowLogprobs(long ids, long rows, long tops, int count) {
        long records = logprobRecords.atLeast(4L * LOGPROB_WORDS * count, 8L * LOGPROB_WORDS * count);
        launch("row_logprobs", LaunchGeometry.perRow(count), args.reset().ptr(ids).ptr(records).ptr(rows).ptr(tops)
                .i32(c.vocabSize()));
        return records;
    }

    /** The {@code count} ids at {@code ids} and (unless {@code records} is 0) their records, once the stream has run. */
    private int[][] download(long ids, long records, int count) {
        long idBytes = 4L * count;
        long recordBytes = records == 0 ? 0 : 4L * LOGPROB_WORDS * count;
        MemorySegment s = staging(idBytes + recordBytes);
        driver.copyToHostAsync(s, ids, idBytes, stream);
        if (records != 0) {
            driver.copyToHostAsync(s.asSlice(idBytes), records, recordBytes, stream);
        }
        synchronize();
        return new int[][] {s.asSlice(0, idBytes).toArray(ValueLayout.JAVA_INT),
            s.asSlice(idBytes, recordBytes).toArray(ValueLayout.JAVA_INT)};
    }

    private static float[] concat(float[] a, float[] b) {
        float[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
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
     * The rows the device declined (id -1: a top-p or min-p cut wider than {@code sample_rows}' 1,024 ranks, or
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

    /** into[0..count) = outputNorm(x[rows[i]]), the row ids on the device at {@code rows}. */
    private void gatherNormed(long rows, int count, long into) {
        launch("gather_rows", LaunchGeometry.perRow(count), args.reset().ptr(into).ptr(x).ptr(rows).i32(c.dim()));
        rmsNorm(into, into, outputNorm, c.dim(), count);
    }

    private void matmul(Matrix w, long in, long out, int tokens) {
        matmul(w, in, out, tokens, false);
    }

    /** Whether a product of {@code tokens} tokens with {@code w} runs on cuBLAS (else on the GEMV kernels). */
    private boolean usesCublas(Matrix w, int tokens) {
        return cublas != null && tokens > GEMV_MAX_TOKENS && w.format() != WeightFormat.F32;
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
        driver.launch(kernels.function(kernel), g.gridX(), g.gridY(), g.gridZ(), g.blockX(), 1, 1, 0, stream, a.pointers());
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
        epoch++;        // the activations move: every graph records them
        for (long p : new long[] {x, xb, q, k, v, att, gate, up, halfIn, dIds}) {
            release(p);
        }
        x = xb = q = k = v = att = gate = up = halfIn = dIds = 0;
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
        dIds = alloc(4 * t);
        capacity = cap;
    }

    /**
     * A device buffer that grows when a step needs more (its contents are not kept); none until first asked.
     * Growing releases the old one and clears pointer and size before allocating, so a failed allocation
     * leaves nothing freed in use.
     */
    private final class Growing {
        final boolean graphed;   // read or written by a graph's launches: moving it moves the epoch
        long ptr;
        long bytes;

        Growing(boolean graphed) {
            this.graphed = graphed;
        }

        /** The buffer, of at least {@code need} bytes: {@code max(need, grow)} when it has to grow. */
        long atLeast(long need, long grow) {
            if (need > bytes) {
                long size = Math.max(need, grow);
                if (graphed) {
                    epoch++;
                }
                release(ptr);
                ptr = 0;
                bytes = 0;
                ptr = alloc(size);
                bytes = size;
            }
            return ptr;
        }
    }

    /**
     * Frees a buffer this backend allocated (0, or one already released: nothing), once the stream has run what
     * may read it.
     */
    private void release(long p) {
        if (p != 0 && allocations.contains(p)) {
            synchronize();
            allocations.remove(p);   // removed first: a free that throws is never tried twice
            driver.free(p);
        }
    }

    private long alloc(long bytes) {
        long p = driver.alloc(bytes);
        allocations.add(p);
        return p;
    }

    /** Waits for the stream: everything queued has run, the copies from the host included. */
    private void synchronize() {
        driver.synchronize(stream);
        uploadPending = false;
    }

    /** The page-locked staging buffer, of at least {@code bytes}; grown only once the stream no longer reads it. */
    private MemorySegment staging(long bytes) {
        if (host.byteSize() < bytes) {
            long size = Math.max(bytes, 2 * host.byteSize());
            synchronize();
            driver.freeHost(host);
            host = MemorySegment.NULL;
            host = driver.allocHost(size);
        }
        return host;
    }

    /** The staging buffer to write a step's inputs into: a copy queued from it before has run. */
    private MemorySegment uploadStaging(long bytes) {
        if (uploadPending) {
            synchronize();
        }
        return staging(bytes);
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
        int total = Arrays.stream(counts).sum();
        int chunkRows = (int) Math.max(1, Math.min(total, stagingRowsBytes / (4L * width)));
        MemorySegment s = staging(4L * width * chunkRows);
        int slice = 0;
        int rowInSlice = 0;
        for (int row = 0; row < total; ) {
            int n = Math.min(chunkRows, total - row);
            driver.copyToHostAsync(s, src + 4L * width * row, 4L * width * n, stream);
            synchronize();
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
            dropGraphs();
            if (cublas != null) {
                cublas.close();
            }
            try {
                driver.synchronize(stream);
            } catch (CudaException ignored) {
                // a sticky error: the frees below fail alike, and the context goes
            }
            freeAll();
            kernels.close();
            MemorySegment h = host;
            host = MemorySegment.NULL;
            driver.freeHost(h);
        } finally {   // the stream and the context go even after a sticky device error
            try {
                driver.destroyStream(stream);
            } catch (CudaException ignored) {
                // the context's release takes it
            }
            arena.close();
            driver.releasePrimaryContext(device);
        }
    }
}
