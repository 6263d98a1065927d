package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.backend.TokenChoice;
import io.nereid.engine.sampling.Distribution;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Single kernels against the engine's own definition of what they compute, on rows made to hit their
 * edge cases. Runs where a CUDA driver (or the emulator) is present.
 */
@Tag("gpu")
class CudaKernelTest {

    private static CudaDriver driver;
    private static MemorySegment context;
    private static KernelModule kernels;
    private static int device;
    private static final Arena ARENA = Arena.ofShared();

    @BeforeAll
    static void needsADevice() {
        CudaEmulator.assumeDevice();
        driver = CudaDriver.load();
        device = CudaBackendProvider.deviceOrdinal(System.getenv("NEREID_CUDA_DEVICE"));
        context = driver.retainPrimaryContext(device);
        driver.makeCurrent(context);
        kernels = KernelModule.load(driver, driver.attribute(device, CudaDriver.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                driver.attribute(device, CudaDriver.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    }

    @AfterAll
    static void release() {
        if (kernels != null) {
            driver.makeCurrent(context);
            kernels.close();
            driver.releasePrimaryContext(device);
        }
    }

    /**
     * {@code sample_rows} chooses what the host's sampling chain chooses ({@link Distribution#choose}): the
     * argmax on rows made to hit its edge cases (ties across its threads' strides and within one, at either
     * end, NaN, all -infinity, -0, +infinity), and draws at several temperatures and numbers, on random rows, peaked
     * ones, rows with -infinity entries, rows of one finite entry, rows with a NaN; and top-k draws (k 1 to 1,024,
     * top-p and min-p among them, rows of many equal values so ties fall at the cut, NaN); top-p / min-p
     * without a top-k, drawn where the cut settles within 1,024 ranks and declined (-1) where it is wider; one
     * launch, the vocabulary no multiple of the block.
     */
    @Test
    void sampleRowsChoosesWhatTheHostChooses() {
        driver.makeCurrent(context);
        int n = 3000;   // 11.7 strides of 256 threads
        SplittableRandom random = new SplittableRandom(17);
        List<float[]> rows = new ArrayList<>();
        List<TokenChoice> choices = new ArrayList<>();
        for (float[] row : argmaxEdgeCases(random, n)) {
            rows.add(row);
            choices.add(TokenChoice.ARGMAX);
        }
        for (int r = 0; r < 40; r++) {
            float[] row = randomRow(random, n);
            if (r % 4 == 1) {
                row[random.nextInt(n)] += 12;   // peaked: most of the mass on one id
            } else if (r % 4 == 2) {
                for (int i = 0; i < n; i += 3) {
                    row[i] = Float.NEGATIVE_INFINITY;   // weight 0: no candidates
                }
            } else if (r % 4 == 3 && r > 30) {
                java.util.Arrays.fill(row, Float.NEGATIVE_INFINITY);
                row[n - 1 - r] = 1f;   // one candidate
            }
            if (r == 5 || r == 6) {
                row[r * 37] = Float.NaN;   // the host's max is NaN, so no weight is positive: id 0
            }
            float temperature = new float[] {0.3f, 0.8f, 1f, 1.7f}[r % 4];
            double uniform = r == 0 ? 0 : r == 1 ? Math.nextDown(1.0) : random.nextDouble();
            rows.add(row);
            choices.add(TokenChoice.draw(temperature, uniform));
        }
        // top-k draws (with top-p and min-p among them): k from 1 to the most, ties at the k-th value, NaN
        int[] ks = {1, 2, 5, 40, 100, 256, 300, 1000, 1024};
        for (int r = 0; r < 24; r++) {
            float[] row = randomRow(random, n);
            if (r % 3 == 1) {
                for (int i = 0; i < n; i++) {
                    row[i] = Math.round(row[i]);   // many equal values: ties at every cut
                }
            } else if (r % 3 == 2) {
                row[random.nextInt(n)] += 10;   // peaked
            }
            if (r == 23) {
                row[77] = Float.NaN;
            }
            int k = ks[r % ks.length];
            float topP = r % 4 == 0 ? 1f : new float[] {0.5f, 0.9f, 0.95f}[r % 3];
            float minP = r % 5 == 0 ? 0.05f : r % 7 == 0 ? 0.3f : 0f;
            rows.add(row);
            choices.add(TokenChoice.draw(new float[] {0.5f, 0.8f, 1.3f}[r % 3], random.nextDouble(), k, topP, minP));
        }
        // ties past the block's 256 slots: only the highest ids of the equal values make the k
        float[] flat = new float[n];
        rows.add(flat);
        choices.add(TokenChoice.draw(1f, 0.37, 100, 1f, 0f));
        float[] coarse = randomRow(random, n);
        for (int i = 0; i < n; i++) {
            coarse[i] = Math.round(coarse[i] / 4);   // five values over 1,000 ids
        }
        rows.add(coarse);
        choices.add(TokenChoice.draw(1f, 0.81, 256, 0.9f, 0f));
        // top-p / min-p without a top-k: drawn where the cut settles within 256 ranks, else declined (-1)
        List<Integer> declinedAt = new ArrayList<>();
        int answered = 0;
        int declined = 0;
        float[][] cuts = {{1f, 0.9f, 0f}, {3f, 0.9f, 0f}, {1f, 1f, 0.2f}, {1.3f, 1f, 0.01f}, {0.7f, 0.95f, 0.05f},
            {1f, 0.5f, 0f}, {5f, 0.99f, 0f}, {1f, 0.9f, 0.1f}};
        for (int r = 0; r < 32; r++) {
            float[] cut = cuts[r % cuts.length];
            float[] row = randomRow(random, n);
            if (r % 5 == 4) {
                row[random.nextInt(n)] += 9;   // peaked: a nucleus of one
            }
            if (r == 31) {
                row[500] = Float.NaN;   // the host ranks it first; with min-p it is the one candidate
            }
            int keep = new Distribution(new io.nereid.engine.api.SamplingParams(cut[0], -1, cut[1], cut[2], 1f, 0f, 0f,
                    java.util.Map.of(), null, 0)).of(row).size();
            if (keep > 900 && keep < 1150 && r != 31) {
                continue;   // near the kernel's 1,024 ranks: whether a cut at 1,024 settles is the kernel's business
            }
            if (keep <= 900) {
                answered++;
            } else {
                declined++;
                declinedAt.add(rows.size());
            }
            rows.add(row);
            choices.add(TokenChoice.draw(cut[0], random.nextDouble(), 0, cut[1], cut[2]));
        }
        assertTrue(answered >= 8 && declined >= 4, answered + " settled, " + declined + " declined");
        int count = rows.size();
        int[] expected = new int[count];
        MemorySegment host = ARENA.allocate(4L * n * count, 16);
        MemorySegment params = ARENA.allocate(40L * count, 16);
        for (int r = 0; r < count; r++) {
            expected[r] = declinedAt.contains(r) ? -1 : Distribution.choose(choices.get(r), rows.get(r));
            MemorySegment.copy(rows.get(r), 0, host, ValueLayout.JAVA_FLOAT, 4L * n * r, n);
            TokenChoice c = choices.get(r);
            MemorySegment.copy(new double[] {c.temperature(), c.uniform(), c.topK(), c.topP(), c.minP()}, 0, params,
                    ValueLayout.JAVA_DOUBLE, 40L * r, 5);
        }
        long logits = upload(host);
        long choice = upload(params);
        long ids = driver.alloc(4L * count);
        try {
            KernelArgs a = new KernelArgs(ARENA).reset().ptr(ids).ptr(logits).ptr(choice).i32(n);
            LaunchGeometry g = LaunchGeometry.perRow(count);
            driver.launch(kernels.function("sample_rows"), g.gridX(), g.gridY(), 1, g.blockX(), 1, 1, 0, MemorySegment.NULL, a.pointers());
            MemorySegment out = ARENA.allocate(4L * count, 16);
            driver.copyToHost(out, ids, 4L * count);
            assertArrayEquals(expected, out.toArray(ValueLayout.JAVA_INT));
        } finally {
            driver.free(logits);
            driver.free(choice);
            driver.free(ids);
        }
        long distinct = java.util.Arrays.stream(expected).distinct().count();
        assertTrue(distinct > 30, "the rows' choices differ, so agreeing means something: " + distinct);
    }

    /** A top-k above the block's sort (no TokenChoice asks for one) is declined, never sorted past its shared memory. */
    @Test
    void aTopKAboveTheSortIsDeclined() {
        driver.makeCurrent(context);
        int n = 3000;
        MemorySegment host = ARENA.allocate(4L * n, 16);
        MemorySegment.copy(randomRow(new SplittableRandom(3), n), 0, host, ValueLayout.JAVA_FLOAT, 0, n);
        MemorySegment params = ARENA.allocate(40, 16);
        MemorySegment.copy(new double[] {1.0, 0.5, TokenChoice.MAX_TOP_K + 1, 1.0, 0.0}, 0, params, ValueLayout.JAVA_DOUBLE,
                0, 5);
        long logits = upload(host);
        long choice = upload(params);
        long ids = driver.alloc(4);
        try {
            KernelArgs a = new KernelArgs(ARENA).reset().ptr(ids).ptr(logits).ptr(choice).i32(n);
            driver.launch(kernels.function("sample_rows"), 1, 1, 1, LaunchGeometry.THREADS, 1, 1, 0, MemorySegment.NULL,
                    a.pointers());
            MemorySegment out = ARENA.allocate(4, 16);
            driver.copyToHost(out, ids, 4);
            assertEquals(-1, out.get(ValueLayout.JAVA_INT, 0));
        } finally {
            driver.free(logits);
            driver.free(choice);
            driver.free(ids);
        }
    }

    /**
     * {@code row_logprobs} reports what the engine's {@code RawLogprobs.score} does on the row: the chosen
     * token's logprob, its rank and the top 0 to 20 (largest first, equal values in id order), on random rows,
     * rows of many equal values (ties at the cut), rows with -infinity entries, a chosen token of low rank;
     * rows with a NaN or +infinity are declined (id -1), rows declined already or asking for none are left.
     */
    @Test
    void rowLogprobsReportWhatTheHostReports() {
        driver.makeCurrent(context);
        int n = 1000;
        SplittableRandom random = new SplittableRandom(29);
        List<float[]> rows = new ArrayList<>();
        List<int[]> idAndTop = new ArrayList<>();
        int[] tops = {0, 1, 5, 20};
        for (int r = 0; r < 28; r++) {
            float[] row = randomRow(random, n);
            if (r % 4 == 1) {
                for (int i = 0; i < n; i++) {
                    row[i] = Math.round(row[i]);   // ties at every cut
                }
            } else if (r % 4 == 2) {
                for (int i = 0; i < n; i += 2) {
                    row[i] = Float.NEGATIVE_INFINITY;
                }
            }
            int id = r % 3 == 0 ? TokenChoice.argmaxOf(row) : random.nextInt(n);
            if (r % 4 == 2 && id % 2 == 0) {
                id++;
            }
            rows.add(row);
            idAndTop.add(new int[] {id, tops[(r + r / 4) % tops.length]});
        }
        float[] nan = randomRow(random, n);
        nan[5] = Float.NaN;
        float[] inf = randomRow(random, n);
        inf[9] = Float.POSITIVE_INFINITY;
        rows.add(nan);
        idAndTop.add(new int[] {3, 2});
        rows.add(inf);
        idAndTop.add(new int[] {3, 0});
        rows.add(randomRow(random, n));
        idAndTop.add(new int[] {-1, 5});   // declined by sample_rows already
        rows.add(randomRow(random, n));
        idAndTop.add(new int[] {7, -1});   // asks for none
        int count = rows.size();
        MemorySegment host = ARENA.allocate(4L * n * count, 16);
        MemorySegment idSeg = ARENA.allocate(4L * count, 16);
        MemorySegment topSeg = ARENA.allocate(4L * count, 16);
        for (int r = 0; r < count; r++) {
            MemorySegment.copy(rows.get(r), 0, host, ValueLayout.JAVA_FLOAT, 4L * n * r, n);
            idSeg.setAtIndex(ValueLayout.JAVA_INT, r, idAndTop.get(r)[0]);
            topSeg.setAtIndex(ValueLayout.JAVA_INT, r, idAndTop.get(r)[1]);
        }
        long logits = upload(host);
        long ids = upload(idSeg);
        long topsDev = upload(topSeg);
        long records = driver.alloc(4L * 42 * count);
        driver.zeroAsync(records, 4L * 42 * count, MemorySegment.NULL);
        try {
            KernelArgs a = new KernelArgs(ARENA).reset().ptr(ids).ptr(records).ptr(logits).ptr(topsDev).i32(n);
            LaunchGeometry g = LaunchGeometry.perRow(count);
            driver.launch(kernels.function("row_logprobs"), g.gridX(), g.gridY(), 1, g.blockX(), 1, 1, 0, MemorySegment.NULL, a.pointers());
            MemorySegment outIds = ARENA.allocate(4L * count, 16);
            MemorySegment out = ARENA.allocate(4L * 42 * count, 16);
            driver.copyToHost(outIds, ids, 4L * count);
            driver.copyToHost(out, records, 4L * 42 * count);
            for (int r = 0; r < count; r++) {
                int id = idAndTop.get(r)[0];
                int top = idAndTop.get(r)[1];
                int o = 42 * r;
                String where = "row " + r + " (token " + id + ", top " + top + ")";
                if (r == count - 4 || r == count - 3) {
                    assertEquals(-1, outIds.getAtIndex(ValueLayout.JAVA_INT, r), where + ": a NaN / +infinity row is declined");
                    continue;
                }
                assertEquals(id, outIds.getAtIndex(ValueLayout.JAVA_INT, r), where + ": the id stays");
                if (id < 0 || top < 0) {
                    assertEquals(0, out.getAtIndex(ValueLayout.JAVA_INT, o + 1), where + ": no record");
                    continue;
                }
                io.nereid.engine.sampling.SampledToken expected = io.nereid.engine.sampling.RawLogprobs.score(rows.get(r), id, top);
                // within an ulp: a GPU's log may differ from Math.log in the last bit (the emulator's does not)
                assertEquals(expected.logprob(), Float.intBitsToFloat(out.getAtIndex(ValueLayout.JAVA_INT, o)),
                        Math.ulp(expected.logprob()), where + ": logprob");
                assertEquals(expected.rank(), out.getAtIndex(ValueLayout.JAVA_INT, o + 1), where + ": rank");
                for (int k = 0; k < top; k++) {
                    assertEquals(expected.topIds()[k], out.getAtIndex(ValueLayout.JAVA_INT, o + 2 + k), where + ": top id " + k);
                    assertEquals(expected.topLogprobs()[k], Float.intBitsToFloat(out.getAtIndex(ValueLayout.JAVA_INT, o + 22 + k)),
                            Math.ulp(expected.topLogprobs()[k]), where + ": top logprob " + k);
                }
            }
        } finally {
            driver.free(logits);
            driver.free(ids);
            driver.free(topsDev);
            driver.free(records);
        }
    }

    private static List<float[]> argmaxEdgeCases(SplittableRandom random, int n) {
        List<float[]> rows = new ArrayList<>();
        for (int r = 0; r < 6; r++) {
            rows.add(randomRow(random, n));
        }
        float[] tie = randomRow(random, n);   // the greatest at ids 700 and 300 (other threads) and 44 / 556 (one thread)
        tie[700] = 9f;
        tie[300] = 9f;
        rows.add(tie);
        float[] sameThread = randomRow(random, n);
        sameThread[44 + 512] = 9f;
        sameThread[44] = 9f;
        rows.add(sameThread);
        float[] last = randomRow(random, n);
        last[n - 1] = 20f;
        rows.add(last);
        float[] first = randomRow(random, n);
        first[0] = 20f;
        first[256] = 20f;
        rows.add(first);
        float[] nans = randomRow(random, n);
        nans[5] = Float.NaN;
        nans[6] = 30f;
        nans[7] = Float.NaN;
        nans[999] = Float.NaN;
        rows.add(nans);
        float[] nanFirst = randomRow(random, n);
        nanFirst[0] = Float.NaN;
        nanFirst[3] = 30f;
        rows.add(nanFirst);
        float[] infinite = new float[n];
        Arrays.fill(infinite, Float.NEGATIVE_INFINITY);
        rows.add(infinite);
        float[] lateInfinite = new float[n];
        Arrays.fill(lateInfinite, Float.NaN);
        lateInfinite[0] = Float.NEGATIVE_INFINITY;
        lateInfinite[600] = Float.NEGATIVE_INFINITY;
        rows.add(lateInfinite);
        float[] zeros = new float[n];
        zeros[400] = -0f;   // -0 equals 0: the lowest id stays
        rows.add(zeros);
        float[] positive = randomRow(random, n);
        positive[123] = Float.POSITIVE_INFINITY;
        positive[124] = Float.POSITIVE_INFINITY;
        rows.add(positive);
        return rows;
    }

    /**
     * The 16-bit weights' GEMV ({@code gemv_bf16_h8}, {@code gemv_f16_h8}) against a double-precision product,
     * with rows long enough for the lanes' unrolled loads (1800 columns: 225 loads of 16 bytes, so lane 0 takes two
     * rounds of four and the other lanes one round and the rest one by one), rows no multiple of the block's warps, tokens over two tiles, and the
     * residual add (accumulate). The model-level tests' rows are too short to reach the unrolled loop.
     */
    @Test
    void halfPrecisionGemvOverLongRowsIsTheProduct() {
        driver.makeCurrent(context);
        int rows = 37;
        int cols = 1800;
        int tokens = 11;
        SplittableRandom random = new SplittableRandom(23);
        float[] x = randomRow(random, tokens * cols);
        float[] y0 = randomRow(random, tokens * rows);
        for (WeightFormat f : List.of(WeightFormat.BF16, WeightFormat.F16)) {
            float[] w = new float[rows * cols];
            MemorySegment weights = ARENA.allocate(2L * rows * cols, 16);
            for (int i = 0; i < w.length; i++) {
                float v = (float) random.nextDouble(-1, 1);
                short bits = f == WeightFormat.BF16 ? (short) (Float.floatToRawIntBits(v) >>> 16) : Float.floatToFloat16(v);
                w[i] = f == WeightFormat.BF16 ? Float.intBitsToFloat((bits & 0xffff) << 16) : Float.float16ToFloat(bits);
                weights.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, bits);
            }
            for (boolean accumulate : new boolean[] {false, true}) {
                long dw = upload(weights);
                long dx = upload(floats(x));
                long dy = upload(floats(y0));
                try {
                    KernelArgs a = new KernelArgs(ARENA).reset().ptr(dw).i64(2L * cols).ptr(dx).ptr(dy).i32(rows).i32(cols)
                            .i32(tokens).i32(accumulate ? 1 : 0);
                    LaunchGeometry g = LaunchGeometry.gemv(rows, tokens);
                    driver.launch(kernels.function(f.gemv(cols)), g.gridX(), g.gridY(), 1, g.blockX(), 1, 1, 0, MemorySegment.NULL, a.pointers());
                    MemorySegment out = ARENA.allocate(4L * tokens * rows, 16);
                    driver.copyToHost(out, dy, out.byteSize());
                    float[] y = out.toArray(ValueLayout.JAVA_FLOAT);
                    for (int t = 0; t < tokens; t++) {
                        for (int r = 0; r < rows; r++) {
                            double sum = accumulate ? y0[t * rows + r] : 0;
                            double scale = 0;
                            for (int c = 0; c < cols; c++) {
                                sum += (double) w[r * cols + c] * x[t * cols + c];
                                scale += Math.abs((double) w[r * cols + c] * x[t * cols + c]);
                            }
                            double error = Math.abs(y[t * rows + r] - sum);
                            if (error > 1e-5 * scale + 1e-6) {
                                throw new AssertionError(f.gemv(cols) + (accumulate ? " accumulating" : "") + ", token " + t
                                        + " row " + r + ": " + y[t * rows + r] + ", expected " + sum);
                            }
                        }
                    }
                } finally {
                    driver.free(dw);
                    driver.free(dx);
                    driver.free(dy);
                }
            }
        }
    }

    private static MemorySegment floats(float[] values) {
        MemorySegment s = ARENA.allocate(4L * values.length, 16);
        MemorySegment.copy(values, 0, s, ValueLayout.JAVA_FLOAT, 0, values.length);
        return s;
    }

    private static long upload(MemorySegment data) {
        long p = driver.alloc(data.byteSize());
        driver.copyToDevice(p, data, data.byteSize());
        return p;
    }

    private static float[] randomRow(SplittableRandom random, int n) {
        float[] row = new float[n];
        for (int i = 0; i < n; i++) {
            row[i] = (float) random.nextDouble(-8, 8);
        }
        return row;
    }
}
