package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.PanelDot;
import io.nereid.engine.gguf.GgmlType;
import java.util.Objects;

/**
 * The activations a {@link WeightMatrix#matmul} multiplies: {@code tokens} vectors of
 * {@code cols} floats, row-major in an array, together with the forms the weight formats multiply
 * instead, computed on first use and kept, so that one input shared by several matrices (the
 * query, key and value projections; gate and up) and by every thread of a matmul is converted once.
 *
 * <p><b>The forms are llama.cpp's.</b> ggml does not multiply a quantized weight by the float
 * activations: it first converts them to its {@code vec_dot_type} for that format, and these
 * roundings move logits by more than anything else in a forward pass (on the parity fixtures,
 * up to 2.4 in a log-probability when left out). Each {@link Form} reproduces one, as ggml's
 * x86 build computes it, and hands the kernels the values it stands for, {@code d * q}, as floats:
 * <ul>
 *   <li>{@link Form#F32} for F32 weights: the activations themselves;
 *   <li>{@link Form#F16} / {@link Form#BF16} for F16 / BF16 weights: each value rounded to that
 *       type, to nearest even;
 *   <li>{@link Form#Q8_0} for Q8_0 and Q4_0 weights: blocks of 32, {@code q = rint(x * 127 / amax)}
 *       and {@code d = amax / 127} stored as F16 (ggml's AVX2 {@code quantize_row_q8_0});
 *   <li>{@link Form#Q8_K} for the K-quants: blocks of 256, {@code iscale = -127 / max} with
 *       {@code max} the value of largest magnitude, {@code q = min(127, rint(iscale * x))},
 *       {@code d = 1 / iscale} ({@code quantize_row_q8_K_ref}).
 * </ul>
 * ggml then sums integer products and scales once per block; the kernels here sum the products of
 * the same values in float, which differs from it by float rounding alone.
 *
 * <p>Thread-safety: any number of threads may use one input at once; the first to ask for a form
 * computes it while the others wait. The array is not copied: it must not change while the input
 * is in use.
 */
public final class MatmulInput {

    /** An activation form: what a weight format's kernels multiply. */
    enum Form {
        F32, F16, BF16, Q8_0, Q8_K;

        /** The form llama.cpp multiplies {@code weights} by: its {@code vec_dot_type}. */
        static Form of(GgmlType weights) {
            return switch (weights) {
                case F16 -> F16;
                case BF16 -> BF16;
                case Q8_0, Q4_0 -> Q8_0;
                case Q4_K, Q5_K, Q6_K -> Q8_K;
                default -> F32;
            };
        }

        /** The block the form quantizes in, which a row's length must be a multiple of. */
        int block() {
            return switch (this) {
                case F32, F16, BF16 -> 1;
                case Q8_0 -> Q8_0Format.BLOCK;
                case Q8_K -> KScales.QK_K;
            };
        }
    }

    private static final Form[] FORMS = Form.values();

    /**
     * Space for the forms of inputs of up to {@code elements} floats, which the inputs made with it
     * use one after another instead of allocating their own: a forward pass makes one for all its
     * layers. Nothing is allocated until an input first needs a form.
     *
     * <p>Thread-safety: an input made with these buffers may be used only while no later input made
     * with them is; the caller orders that (one input's matmuls all return before the next starts).
     */
    public static final class Buffers {

        private final int elements;
        private final float[][] forms = new float[FORMS.length][];

        /** @throws IllegalArgumentException if {@code elements} is negative */
        public Buffers(int elements) {
            if (elements < 0) {
                throw new IllegalArgumentException("elements " + elements + " must be >= 0");
            }
            this.elements = elements;
        }

        private final float[][] transposed = new float[FORMS.length][];

        private synchronized float[] array(Form form) {
            float[] a = forms[form.ordinal()];
            if (a == null) {
                forms[form.ordinal()] = a = new float[elements];
            }
            return a;
        }

        private final Quants[] quants = new Quants[FORMS.length];

        /** Quants of at least {@code elements} values of {@code form}, grown when too small. */
        private synchronized Quants quants(Form form, int elements) {
            Quants q = quants[form.ordinal()];
            if (q == null || q.q.length < elements) {
                quants[form.ordinal()] = q = Quants.of(form, elements);
            }
            return q;
        }

        /** At least {@code size} floats for a transposed form, grown (tokens are padded) when too small. */
        private synchronized float[] transposedArray(Form form, int size) {
            float[] a = transposed[form.ordinal()];
            if (a == null || a.length < size) {
                transposed[form.ordinal()] = a = new float[size];
            }
            return a;
        }
    }

    private final float[] x;
    private final int tokens;
    private final int cols;
    private final Buffers buffers;             // null: each form gets an array of its own
    private final float[][] forms = new float[FORMS.length][];   // guarded by this; published by ready
    private volatile int ready;                // bit i: form i computed
    private final float[][] transposed = new float[FORMS.length][];   // guarded by this; published by transposedReady
    private final int[] transposedLanes = new int[FORMS.length];   // written before transposedReady
    private volatile int transposedReady;      // bit i: form i transposed, in groups of 4 * transposedLanes[i]
    private final Quants[] quants = new Quants[FORMS.length];   // guarded by this; published by quantsReady
    private volatile int quantsReady;          // bit i: form i's quants computed

    private MatmulInput(float[] x, int tokens, int cols, Buffers buffers) {
        this.x = x;
        this.tokens = tokens;
        this.cols = cols;
        this.buffers = buffers;
        this.forms[Form.F32.ordinal()] = x;
        this.ready = 1 << Form.F32.ordinal();
    }

    /**
     * The first {@code tokens * cols} elements of {@code x}, not copied.
     *
     * @throws IllegalArgumentException if {@code tokens} or {@code cols} is negative
     * @throws IndexOutOfBoundsException if {@code x} is shorter than {@code tokens * cols}
     */
    public static MatmulInput of(float[] x, int tokens, int cols) {
        checkShape(x, tokens, cols);
        return new MatmulInput(x, tokens, cols, null);
    }

    /**
     * {@link #of(float[], int, int)} whose forms, when needed, are written to {@code buffers}
     * (see {@link Buffers} for when it may be used).
     *
     * @throws IllegalArgumentException also if the buffers hold fewer than {@code tokens * cols}
     *     elements
     */
    public static MatmulInput of(float[] x, int tokens, int cols, Buffers buffers) {
        checkShape(x, tokens, cols);
        if (tokens * cols > buffers.elements) {
            throw new IllegalArgumentException(tokens + " x " + cols + " input for buffers of " + buffers.elements);
        }
        return new MatmulInput(x, tokens, cols, buffers);
    }

    private static void checkShape(float[] x, int tokens, int cols) {
        Objects.requireNonNull(x, "x");
        if (tokens < 0 || cols < 0) {
            throw new IllegalArgumentException("tokens " + tokens + " and cols " + cols + " must be >= 0");
        }
        Objects.checkFromIndexSize(0, Math.multiplyExact(tokens, cols), x.length);
    }

    public int tokens() {
        return tokens;
    }

    public int cols() {
        return cols;
    }

    float[] floats() {
        return x;
    }

    /**
     * The values {@code form} stands for, {@code tokens * cols} of them (the array may be longer).
     *
     * @throws IllegalArgumentException if {@code cols} is not a multiple of the form's block
     */
    float[] values(Form form) {
        if ((ready & 1 << form.ordinal()) == 0) {
            compute(form, 0, SERIAL);
        }
        return forms[form.ordinal()];
    }

    /**
     * {@link #values}{@code (form)} transposed for {@link PanelDot}: the tokens padded with zeros
     * to a multiple of {@code lanes} and cut into groups of {@code 4 * lanes} (the last may be
     * smaller, {@code tg} tokens); group {@code g} starts at {@code g * 4 * lanes * cols}, and in it
     * token {@code t}'s element {@code k} is at {@code k * tg + t}, or where {@link #paired} says for one
     * vector of tokens in a quantized form. Computed once, like the forms.
     *
     * @throws IllegalArgumentException as {@link #values}, or if the form was transposed for other lanes
     */
    float[] transposed(Form form, int lanes) {
        int i = form.ordinal();
        if ((transposedReady & 1 << i) == 0) {
            compute(form, lanes, SERIAL);
        }
        if (transposedLanes[i] != lanes) { // one vector width per JVM: only a caller's mistake gets here
            throw new IllegalArgumentException(form + " transposed for " + transposedLanes[i] + " lanes, not " + lanes);
        }
        return transposed[i];
    }

    /**
     * A quantized form's integers and scales, what the {@link Interleaved} kernels multiply: for
     * element {@code i}, {@link #values}{@code [i] == d[i / block] * value(i)}, which is
     * {@code q16[i]} (the form's block),
     * for Q8_K {@code sums[i / 32]} is the sum of the 32 integers from {@code i / 32 * 32}, as
     * ggml's {@code bsums} (by 16) added in pairs, and for both forms {@code lows[i / 32]} holds
     * {@code -8} times the sum of the first 16 of those 32, the bias {@link Interleaved}'s nibble
     * sums start from.
     *
     * <p>{@code q[i]} and {@code lows[b]} hold each 16-bit value twice, in the low and the high
     * half: the kernels broadcast them to every 16-bit lane as ints, which x86 does in the load
     * unit ({@code vpbroadcastd zmm, m32}), where a 16-bit broadcast takes the shuffle port the
     * kernels' widenings also need ({@code vpbroadcastw zmm, m16}). {@code q16} holds the same
     * integers once each, for the Q8_0, Q5_K and Q6_K kernels: from the ints, 1.1B Q8_0 decoded at
     * 15.5-15.9 against 16.8 tok/s (its 32 columns a block read twice the bytes), and Q6_K's
     * two-token kernel ran 3.3x slower (JMH, four tokens 2,156 against 661 us). {@code qf} holds them as
     * floats (exact), for the kernels of several tokens that sum the integers on float lanes
     * ({@link InterleavedPasses}).
     */
    record Quants(int[] q, short[] q16, float[] qf, float[] d, int[] sums, int[] lows) {

        static Quants of(Form form, int elements) {
            return new Quants(new int[elements], new short[elements], new float[elements],
                    new float[elements / form.block()], form == Form.Q8_K ? new int[elements / 32] : null,
                    new int[elements / 32]);
        }

        /** The integer of element {@code i}. */
        int value(int i) {
            return (short) q[i];
        }

        /** {@code v} (in the 16-bit range) in both halves of an int. */
        static int pair(int v) {
            return v & 0xFFFF | v << 16;
        }

        /** {@link #lows} of the 32-block at {@code off}. */
        void low(int off) {
            int sum = 0;
            for (int j = off; j < off + 16; j++) {
                sum += (short) q[j];
            }
            lows[off / 32] = pair(-8 * sum);
        }
    }

    /**
     * {@link Quants} of the Q8_0 or Q8_K form, computed once like the forms (by the first thread
     * to ask; inputs of a few tokens are what asks, where that is short).
     *
     * @throws IllegalArgumentException if {@code form} is not Q8_0 or Q8_K, or as {@link #values}
     */
    Quants quants(Form form) {
        if (form != Form.Q8_0 && form != Form.Q8_K) {
            throw new IllegalArgumentException(form + " has no integer quants");
        }
        int i = form.ordinal();
        if ((quantsReady & 1 << i) == 0) {
            synchronized (this) {
                if ((quantsReady & 1 << i) == 0) {
                    if (cols % form.block() != 0) {
                        throw new IllegalArgumentException("rows of " + cols + " are not a whole number of " + form
                                + " blocks of " + form.block());
                    }
                    int n = tokens * cols;
                    Quants q = buffers != null ? buffers.quants(form, n) : Quants.of(form, n);
                    for (int off = 0; off < n; off += form.block()) {
                        if (form == Form.Q8_0) {
                            q8_0Quants(x, off, q);
                        } else {
                            q8_KQuants(x, off, q);
                        }
                    }
                    quants[i] = q;
                    quantsReady |= 1 << i;
                }
            }
        }
        return quants[i];
    }

    /** The largest magnitude in the Q8_0 block at {@code off}. */
    private static float absMax(float[] x, int off) {
        float amax = 0f;
        for (int j = off; j < off + Q8_0Format.BLOCK; j++) {
            amax = Math.max(amax, Math.abs(x[j]));
        }
        return amax;
    }

    /** {@link #q8_0Block}'s integers and F16-rounded scale ({@link QuantLanes}). */
    private static void q8_0Quants(float[] x, int off, Quants out) {
        float amax = QuantLanes.absMax(x, off, Q8_0Format.BLOCK);
        out.d[off / Q8_0Format.BLOCK] = Float.float16ToFloat(Float.floatToFloat16(amax / 127f));
        float id = amax != 0f ? 127f / amax : 0f;
        QuantLanes.quantize(x, off, Q8_0Format.BLOCK, id, out);
        out.low(off);
    }

    /** The first value of largest magnitude in the Q8_K block at {@code off}, 0 if all are. */
    private static float signedMax(float[] x, int off) {
        float amax = 0f;
        float max = 0f;
        for (int j = off; j < off + KScales.QK_K; j++) {
            float ax = Math.abs(x[j]);
            if (ax > amax) {
                amax = ax;
                max = x[j];
            }
        }
        return max;
    }

    /** {@link #q8_KBlock}'s integers, scale and sums of 32 ({@link QuantLanes}). */
    private static void q8_KQuants(float[] x, int off, Quants out) {
        float max = signedMax(x, off);
        float iscale = max == 0f ? 0f : -127f / max;
        out.d[off / KScales.QK_K] = max == 0f ? 0f : 1f / iscale;
        for (int s = off; s < off + KScales.QK_K; s += 32) {
            QuantLanes.quantize(x, s, 32, iscale, out);
            int sum = 0;
            for (int j = s; j < s + 32; j++) {
                sum += out.q16[j];
            }
            out.sums[s / 32] = sum;
            out.low(s);
        }
    }

    /** {@code tokens} rounded up to a multiple of {@code lanes}. */
    static int paddedTokens(int tokens, int lanes) {
        return (tokens + lanes - 1) / lanes * lanes;
    }

    /**
     * {@link #transposed}'s layout of {@code v} ({@code tokens} rows of {@code cols}) into
     * {@code out}, for tokens {@code [from, to)} only, and for the padding after the last token
     * when {@code to == tokens}: disjoint ranges write disjoint elements.
     */
    static void transpose(float[] v, int tokens, int cols, int lanes, float[] out, int from, int to) {
        int padded = paddedTokens(tokens, lanes);
        int end = to == tokens ? padded : to;
        int group = 4 * lanes;
        for (int g0 = from / group * group; g0 < end; g0 += group) {
            int tg = Math.min(group, padded - g0);
            int base = g0 * cols;
            int t0 = Math.max(from, g0) - g0;
            int t1 = Math.min(end, g0 + tg) - g0;
            // 64 columns at a time: what they write (64 x tg floats) stays in L1 across the tokens
            for (int k0 = 0; k0 < cols; k0 += 64) {
                int k1 = Math.min(cols, k0 + 64);
                for (int t = t0; t < t1; t++) {
                    int token = g0 + t;
                    int src = token * cols;
                    for (int k = k0; k < k1; k++) {
                        out[base + k * tg + t] = token < tokens ? v[src + k] : 0f;
                    }
                }
            }
        }
    }

    /** Columns {@link #transposeGroup} takes at a time, and the blocks a parallel transposition of one group splits into. */
    static final int TRANSPOSE_COLUMNS = 64;

    /**
     * {@link #transpose} of all {@code tokens} (at most {@code 4 lanes}: one group) for columns
     * {@code [c0, c1)} only: disjoint column ranges of whole {@link #TRANSPOSE_COLUMNS} write disjoint
     * cache lines.
     */
    static void transposeGroup(float[] v, int tokens, int cols, int lanes, boolean paired, float[] out, int c0, int c1) {
        int tg = paddedTokens(tokens, lanes);
        for (int k0 = c0; k0 < c1; k0 += TRANSPOSE_COLUMNS) {
            int k1 = Math.min(c1, k0 + TRANSPOSE_COLUMNS);
            for (int t = 0; t < tg; t++) {
                if (paired) { // a block starts at an even column: each pair stays in its block's lines
                    for (int k = k0; k < k1; k++) {
                        out[(k & ~1) * tg + 2 * t + (k & 1)] = t < tokens ? v[t * cols + k] : 0f;
                    }
                } else {
                    for (int k = k0; k < k1; k++) {
                        out[k * tg + t] = t < tokens ? v[t * cols + k] : 0f;
                    }
                }
            }
        }
    }

    /**
     * Whether {@link #transposed}{@code (form, lanes)} of {@code tokens} tokens is paired: one vector of tokens
     * (at most {@code lanes}, a batched decode step) in a quantized form, which {@link PanelDot#multiplyPairs}
     * multiplies with two columns in a vector, token {@code t}'s element {@code k} at
     * {@code (k & ~1) * lanes + 2t + (k & 1)}.
     */
    static boolean paired(Form form, int tokens, int lanes) {
        return (form == Form.Q8_0 || form == Form.Q8_K) && paddedTokens(tokens, lanes) == lanes;
    }

    /** A parallel loop over {@code [0, n)}: the caller's threads run {@code body} on disjoint ranges. */
    @FunctionalInterface
    public interface Ranges {

        /** The body of one range. */
        @FunctionalInterface
        interface Body {
            void run(int from, int to);
        }

        void run(int n, Body body);
    }

    /**
     * Computes now, by {@code ranges} over the tokens (in groups of {@code 4 lanes} when
     * transposing), the form {@code weights} multiplies (and its
     * {@link #transposed} layout for {@code lanes > 0}), instead of by the first thread that asks
     * while the others wait: a forward pass calls this before a matmul of many tokens. The same
     * values either way. Does nothing for what is already computed.
     *
     * @throws IllegalArgumentException as {@link #values}
     */
    public void prepare(GgmlType weights, int lanes, Ranges ranges) {
        compute(Form.of(weights), lanes, ranges);
    }

    /** One range, on the calling thread: {@link #values} and {@link #transposed} on first use. */
    private static final Ranges SERIAL = (n, body) -> body.run(0, n);

    /**
     * {@code form}'s values, and its transposed layout for {@code lanes > 0}, computed by
     * {@code ranges} over the tokens and published, where not yet done; the first caller computes
     * while the others wait.
     */
    private void compute(Form form, int lanes, Ranges ranges) {
        int i = form.ordinal();
        int bit = 1 << i;
        if ((ready & bit) != 0 && (lanes == 0 || (transposedReady & bit) != 0)) {
            return;
        }
        synchronized (this) {
            boolean values = (ready & bit) == 0;
            boolean transpose = lanes > 0 && (transposedReady & bit) == 0;
            if (values && cols % form.block() != 0) {
                throw new IllegalArgumentException("rows of " + cols + " are not a whole number of " + form
                        + " blocks of " + form.block());
            }
            float[] v = values ? (buffers != null ? buffers.array(form) : new float[tokens * cols]) : forms[i];
            float[] t = transpose ? transposedArray(form, lanes) : null;
            if (!values && t == null) {
                return;
            }
            // A cache line of the transposed layout holds one column of 16 tokens: ranges of tokens that cut a
            // group of 4 * lanes had two threads write the same lines (a 16-sequence decode, its tokens split two by
            // two, spent 11 % of its time here). So one group (a decode step of up to 4 * lanes sequences) is
            // transposed by blocks of columns once every token's values are in; more, in whole groups with their values.
            int group = 4 * lanes;
            if (t != null && tokens <= group) {
                if (values) {
                    ranges.run(tokens, (from, to) -> convert(form, x, from * cols, to * cols, v));
                }
                int blocks = (cols + TRANSPOSE_COLUMNS - 1) / TRANSPOSE_COLUMNS;
                boolean paired = paired(form, tokens, lanes);
                ranges.run(blocks, (b0, b1) -> transposeGroup(v, tokens, cols, lanes, paired, t,
                        b0 * TRANSPOSE_COLUMNS, Math.min(cols, b1 * TRANSPOSE_COLUMNS)));
                publish(i, bit, values, v, t, lanes);
                return;
            }
            int unit = t != null ? group : 1;
            ranges.run((tokens + unit - 1) / unit, (u0, u1) -> {
                int from = u0 * unit, to = Math.min(tokens, u1 * unit);
                if (values) {
                    convert(form, x, from * cols, to * cols, v);
                }
                if (t != null) {
                    transpose(v, tokens, cols, lanes, t, from, to);
                }
            });
            publish(i, bit, values, v, t, lanes);
        }
    }

    /** Publishes what {@link #compute} computed: the values of form {@code i} and its transposed layout. Holds this lock. */
    private void publish(int i, int bit, boolean values, float[] v, float[] t, int lanes) {
        if (values) {
            forms[i] = v;
            ready |= bit;
        }
        if (t != null) {
            transposed[i] = t;
            transposedLanes[i] = lanes;
            transposedReady |= bit;
        }
    }

    /** An array for {@code form} transposed for {@code lanes}: the buffers' or a new one. Holds this lock. */
    private float[] transposedArray(Form form, int lanes) {
        int size = Math.multiplyExact(paddedTokens(tokens, lanes), cols);
        return buffers != null ? buffers.transposedArray(form, size) : new float[size];
    }

    /** {@code out[0, n) = form(x[0, n))}; {@code n} a multiple of the form's block. */
    static void convert(Form form, float[] x, int n, float[] out) {
        convert(form, x, 0, n, out);
    }

    /** {@code out[from, to) = form(x[from, to))}; both multiples of the form's block. */
    static void convert(Form form, float[] x, int from, int to, float[] out) {
        switch (form) {
            case F32 -> System.arraycopy(x, from, out, from, to - from);
            case F16 -> {
                for (int i = from; i < to; i++) {
                    out[i] = Float.float16ToFloat(Float.floatToFloat16(x[i]));
                }
            }
            case BF16 -> {
                for (int i = from; i < to; i++) {
                    out[i] = BF16Format.toFloat(BF16Format.fromFloat(x[i]));
                }
            }
            case Q8_0 -> {
                for (int off = from; off < to; off += Q8_0Format.BLOCK) {
                    q8_0Block(x, off, out);
                }
            }
            case Q8_K -> {
                for (int off = from; off < to; off += KScales.QK_K) {
                    q8_KBlock(x, off, out);
                }
            }
        }
    }

    /** ggml's AVX2 {@code quantize_row_q8_0} of one block, as the values {@code fp16(d) * q}. */
    private static void q8_0Block(float[] x, int off, float[] out) {
        float amax = absMax(x, off);
        float d = Float.float16ToFloat(Float.floatToFloat16(amax / 127f));
        float id = amax != 0f ? 127f / amax : 0f;
        for (int j = off; j < off + Q8_0Format.BLOCK; j++) {
            out[j] = d * (float) Math.rint(x[j] * id);   // _mm256_round_ps(_MM_ROUND_NEAREST): half to even
        }
    }

    /**
     * ggml's {@code quantize_row_q8_K_ref} of one block, as the values {@code d * q}: {@code max} is
     * the first value of largest magnitude; {@code nearest_int} rounds half to even, as
     * {@link Math#rint} does.
     */
    private static void q8_KBlock(float[] x, int off, float[] out) {
        float max = signedMax(x, off);
        if (max == 0f) {
            java.util.Arrays.fill(out, off, off + KScales.QK_K, 0f);
            return;
        }
        float iscale = -127f / max;
        float d = 1f / iscale;
        for (int j = off; j < off + KScales.QK_K; j++) {
            out[j] = d * Math.min(127f, (float) Math.rint(iscale * x[j]));
        }
    }
}
