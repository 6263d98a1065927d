import java.lang.foreign.*;
import java.nio.ByteOrder;
import java.util.Random;
import jdk.incubator.vector.*;

/**
 * Probe for issue 13: one-token matmul with 32 rows in the lanes (weights interleaved so that
 * one load holds one column of 32 rows), products on 16-bit lanes against Q8-quantized
 * activations broadcast one column at a time, summed on 16-bit lanes as long as they cannot
 * overflow, then widened and scaled per block. No lane sums at all. Against the row dot in the
 * kernels' float way. One thread.
 * Run: java --add-modules jdk.incubator.vector bench/kernels/InterleavedProbe.java 1024 4096
 */
public class InterleavedProbe {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    static final VectorSpecies<Short> S = ShortVector.SPECIES_512;
    static final VectorSpecies<Byte> B128 = ByteVector.SPECIES_128;
    static final VectorSpecies<Byte> B256 = ByteVector.SPECIES_256;
    static final ValueLayout.OfShort SH = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    static float f16(MemorySegment w, long o) { return Float.float16ToFloat(w.get(SH, o)); }

    /** Q4_0 row dot, float activations (the kernels' dotFast shape). */
    static float q40Float(MemorySegment w, long off, float[] x, int n) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        for (int b = 0; b < n / 32; b++) {
            long blk = off + b * 18L;
            IntVector q = ByteVector.fromMemorySegment(B128, w, blk + 2, LE).convertShape(VectorOperators.B2I, I, 0).reinterpretAsInts();
            FloatVector ql = (FloatVector) q.and(0x0F).sub(8).convert(VectorOperators.I2F, 0);
            FloatVector qh = (FloatVector) q.lanewise(VectorOperators.LSHR, 4).and(0x0F).sub(8).convert(VectorOperators.I2F, 0);
            FloatVector s = ql.mul(FloatVector.fromArray(F, x, b * 32)).add(qh.mul(FloatVector.fromArray(F, x, b * 32 + 16)));
            FloatVector t = s.fma(FloatVector.broadcast(F, f16(w, blk)), a0);
            a0 = a1; a1 = t;
        }
        return a0.add(a1).reduceLanes(VectorOperators.ADD);
    }

    /**
     * Q4_0 interleaved: per group of 32 rows and per block, 32 float scales (128 bytes) then 16
     * columns of 32 bytes: byte r of column p = signed nibbles (q-8) of row r, element p low and
     * element p+16 high. xq the Q8_0 activations as shorts (+-127), xd their block scales.
     */
    static void q40Il(MemorySegment w, long groupOff, int blocks, short[] xq, float[] xd, float[] out, int o) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        long p = groupOff;
        for (int b = 0; b < blocks; b++) {
            FloatVector s0 = FloatVector.fromMemorySegment(F, w, p, LE), s1 = FloatVector.fromMemorySegment(F, w, p + 64, LE);
            p += 128;
            ShortVector acc = ShortVector.zero(S);
            int x0 = b * 32;
            for (int c = 0; c < 16; c++) {
                ShortVector v = (ShortVector) ByteVector.fromMemorySegment(B256, w, p + c * 32L, LE).convertShape(VectorOperators.B2S, S, 0);
                ShortVector hi = v.lanewise(VectorOperators.ASHR, 4);
                ShortVector lo = v.lanewise(VectorOperators.LSHL, 12).lanewise(VectorOperators.ASHR, 12);
                acc = acc.add(lo.mul(xq[x0 + c])).add(hi.mul(xq[x0 + 16 + c]));
            }
            p += 512;
            FloatVector d = FloatVector.broadcast(F, xd[b]);
            FloatVector f0 = (FloatVector) acc.convertShape(VectorOperators.S2F, F, 0);
            FloatVector f1 = (FloatVector) acc.convertShape(VectorOperators.S2F, F, 1);
            a0 = f0.mul(d).fma(s0, a0);
            a1 = f1.mul(d).fma(s1, a1);
        }
        a0.intoArray(out, o);
        a1.intoArray(out, o + 16);
    }

    /**
     * Q6_K-like interleaved (int8 quants q-32 in [-32, 31], a float scale per 16 columns): per
     * group and per 16 columns, 32 float scales then 16 columns of 32 bytes. xn the NEGATED Q8_K
     * activations as shorts ([-127, 128]), so that eight products sum on 16 bits exactly; xd per
     * 256 columns.
     */
    static void q6Il(MemorySegment w, long groupOff, int cols, short[] xn, float[] xd, float[] out, int o) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        long p = groupOff;
        for (int sb = 0; sb < cols / 256; sb++) {
            FloatVector b0 = FloatVector.zero(F), b1 = b0;
            for (int j = 0; j < 16; j++) {
                FloatVector s0 = FloatVector.fromMemorySegment(F, w, p, LE), s1 = FloatVector.fromMemorySegment(F, w, p + 64, LE);
                p += 128;
                int x0 = sb * 256 + j * 16;
                ShortVector e = ShortVector.zero(S), f = e;
                for (int c = 0; c < 8; c++) {
                    ShortVector v = (ShortVector) ByteVector.fromMemorySegment(B256, w, p + c * 32L, LE).convertShape(VectorOperators.B2S, S, 0);
                    e = e.add(v.mul(xn[x0 + c]));
                    ShortVector u = (ShortVector) ByteVector.fromMemorySegment(B256, w, p + (c + 8) * 32L, LE).convertShape(VectorOperators.B2S, S, 0);
                    f = f.add(u.mul(xn[x0 + 8 + c]));
                }
                p += 512;
                IntVector i0 = ((IntVector) e.convertShape(VectorOperators.S2I, I, 0)).add((IntVector) f.convertShape(VectorOperators.S2I, I, 0));
                IntVector i1 = ((IntVector) e.convertShape(VectorOperators.S2I, I, 1)).add((IntVector) f.convertShape(VectorOperators.S2I, I, 1));
                b0 = ((FloatVector) i0.convert(VectorOperators.I2F, 0)).fma(s0, b0);
                b1 = ((FloatVector) i1.convert(VectorOperators.I2F, 0)).fma(s1, b1);
            }
            FloatVector d = FloatVector.broadcast(F, -xd[sb]);
            a0 = b0.fma(d, a0);
            a1 = b1.fma(d, a1);
        }
        a0.intoArray(out, o);
        a1.intoArray(out, o + 16);
    }

    /** Q6_K-like row dot the kernels' way: int8 quants widened to float, a float scale per 16. */
    static float q6Float(MemorySegment w, long off, float[] x, int n) {
        FloatVector acc = FloatVector.zero(F);
        long p = off;
        for (int j = 0; j < n / 16; j++) {
            float s = w.get(ValueLayout.JAVA_FLOAT_UNALIGNED, p);
            FloatVector q = (FloatVector) ByteVector.fromMemorySegment(B128, w, p + 4, LE).convertShape(VectorOperators.B2F, F, 0);
            acc = q.mul(FloatVector.fromArray(F, x, j * 16)).fma(FloatVector.broadcast(F, s), acc);
            p += 20;
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    /** Q8_0 interleaved: per group and block, 32 float scales then 32 columns of 32 int8. Products widened to int32 each. */
    static void q80Il(MemorySegment w, long groupOff, int blocks, short[] xq, float[] xd, float[] out, int o) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        long p = groupOff;
        for (int b = 0; b < blocks; b++) {
            FloatVector s0 = FloatVector.fromMemorySegment(F, w, p, LE), s1 = FloatVector.fromMemorySegment(F, w, p + 64, LE);
            p += 128;
            IntVector i0 = IntVector.zero(I), i1 = i0;
            int x0 = b * 32;
            for (int c = 0; c < 32; c += 2) {
                ShortVector v = (ShortVector) ByteVector.fromMemorySegment(B256, w, p + c * 32L, LE).convertShape(VectorOperators.B2S, S, 0);
                ShortVector u = (ShortVector) ByteVector.fromMemorySegment(B256, w, p + (c + 1) * 32L, LE).convertShape(VectorOperators.B2S, S, 0);
                ShortVector pv = v.mul(xq[x0 + c]), pu = u.mul(xq[x0 + c + 1]);
                // two products of at most 127*127 each: 32258, fits
                ShortVector sum = pv.add(pu);
                i0 = i0.add((IntVector) sum.convertShape(VectorOperators.S2I, I, 0));
                i1 = i1.add((IntVector) sum.convertShape(VectorOperators.S2I, I, 1));
            }
            p += 1024;
            FloatVector d = FloatVector.broadcast(F, xd[b]);
            a0 = ((FloatVector) i0.convert(VectorOperators.I2F, 0)).mul(d).fma(s0, a0);
            a1 = ((FloatVector) i1.convert(VectorOperators.I2F, 0)).mul(d).fma(s1, a1);
        }
        a0.intoArray(out, o);
        a1.intoArray(out, o + 16);
    }

    static float q80Float(MemorySegment w, long off, float[] x, int n) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        for (int b = 0; b < n / 32; b++) {
            long blk = off + b * 34L;
            FloatVector q0 = (FloatVector) ByteVector.fromMemorySegment(B128, w, blk + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector q1 = (FloatVector) ByteVector.fromMemorySegment(B128, w, blk + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = q0.mul(FloatVector.fromArray(F, x, b * 32)).add(q1.mul(FloatVector.fromArray(F, x, b * 32 + 16)));
            FloatVector t = s.fma(FloatVector.broadcast(F, f16(w, blk)), a0);
            a0 = a1; a1 = t;
        }
        return a0.add(a1).reduceLanes(VectorOperators.ADD);
    }

    interface Run { void run(); }

    static double best(Run r) {
        double best = 1e9; long start = System.nanoTime();
        while (System.nanoTime() - start < 2_000_000_000L) {
            long t0 = System.nanoTime(); r.run(); best = Math.min(best, (System.nanoTime() - t0) / 1e3);
        }
        return best;
    }

    public static void main(String[] a) {
        int rows = Integer.parseInt(a[0]), cols = Integer.parseInt(a[1]);
        Random r = new Random(1);
        // values: q4 in [0,15] per weight, q8 in [-127,127], q6 in [-32,31]; scales per block
        byte[][] q4 = new byte[rows][cols], q8 = new byte[rows][cols], q6 = new byte[rows][cols];
        float[][] d32 = new float[rows][cols / 32], d16 = new float[rows][cols / 16];
        for (int i = 0; i < rows; i++) {
            for (int k = 0; k < cols; k++) { q4[i][k] = (byte) r.nextInt(16); q8[i][k] = (byte) (r.nextInt(255) - 127); q6[i][k] = (byte) (r.nextInt(64) - 32); }
            for (int b = 0; b < cols / 32; b++) d32[i][b] = Float.float16ToFloat(Float.floatToFloat16(0.01f + r.nextFloat() * 0.01f));
            for (int b = 0; b < cols / 16; b++) d16[i][b] = 0.01f + r.nextFloat() * 0.01f;
        }
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        short[] xq = new short[cols]; float[] xd = new float[cols / 32]; float[] xr = new float[cols];
        for (int b = 0; b < cols / 32; b++) {
            float amax = 0; for (int i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(x[b * 32 + i]));
            float d = amax / 127; xd[b] = d;
            for (int i = 0; i < 32; i++) { xq[b * 32 + i] = (short) Math.round(x[b * 32 + i] / d); xr[b * 32 + i] = xq[b * 32 + i] * d; }
        }
        short[] xn = new short[cols]; float[] xd256 = new float[cols / 256]; float[] xr256 = new float[cols];
        for (int b = 0; b < cols / 256; b++) {
            float max = 0; for (int i = 0; i < 256; i++) if (Math.abs(x[b * 256 + i]) > Math.abs(max)) max = x[b * 256 + i];
            float is = -128f / max; xd256[b] = 1 / is;
            for (int i = 0; i < 256; i++) { int q = Math.min(127, Math.round(is * x[b * 256 + i])); xn[b * 256 + i] = (short) -q; xr256[b * 256 + i] = q * xd256[b]; }
        }
        // row layouts
        MemorySegment w4 = Arena.ofShared().allocate((long) rows * cols / 32 * 18, 64);
        MemorySegment w8 = Arena.ofShared().allocate((long) rows * cols / 32 * 34, 64);
        MemorySegment w6 = Arena.ofShared().allocate((long) rows * cols / 16 * 20, 64);
        for (int i = 0; i < rows; i++) for (int b = 0; b < cols / 32; b++) {
            long o4 = ((long) i * cols / 32 + b) * 18, o8 = ((long) i * cols / 32 + b) * 34;
            w4.set(SH, o4, Float.floatToFloat16(d32[i][b])); w8.set(SH, o8, Float.floatToFloat16(d32[i][b]));
            for (int j = 0; j < 16; j++) w4.set(ValueLayout.JAVA_BYTE, o4 + 2 + j, (byte) (q4[i][b * 32 + j] | q4[i][b * 32 + 16 + j] << 4));
            for (int j = 0; j < 32; j++) w8.set(ValueLayout.JAVA_BYTE, o8 + 2 + j, q8[i][b * 32 + j]);
        }
        for (int i = 0; i < rows; i++) for (int j = 0; j < cols / 16; j++) {
            long o = ((long) i * cols / 16 + j) * 20;
            w6.set(ValueLayout.JAVA_FLOAT_UNALIGNED, o, d16[i][j]);
            for (int k = 0; k < 16; k++) w6.set(ValueLayout.JAVA_BYTE, o + 4 + k, q6[i][j * 16 + k]);
        }
        // interleaved layouts
        int groups = rows / 32;
        MemorySegment i4 = Arena.ofShared().allocate((long) rows * cols / 32 * 20, 64);
        MemorySegment i8 = Arena.ofShared().allocate((long) rows * cols / 32 * 36, 64);
        MemorySegment i6 = Arena.ofShared().allocate((long) rows * cols / 16 * 24, 64);
        long p4 = 0, p8 = 0, p6 = 0;
        for (int g = 0; g < groups; g++) {
            for (int b = 0; b < cols / 32; b++) {
                for (int rr = 0; rr < 32; rr++) { i4.set(ValueLayout.JAVA_FLOAT_UNALIGNED, p4 + rr * 4, d32[g * 32 + rr][b]); i8.set(ValueLayout.JAVA_FLOAT_UNALIGNED, p8 + rr * 4, d32[g * 32 + rr][b]); }
                p4 += 128; p8 += 128;
                for (int c = 0; c < 16; c++) for (int rr = 0; rr < 32; rr++) {
                    int lo = q4[g * 32 + rr][b * 32 + c] - 8, hi = q4[g * 32 + rr][b * 32 + 16 + c] - 8;
                    i4.set(ValueLayout.JAVA_BYTE, p4 + c * 32 + rr, (byte) ((lo & 0xF) | (hi << 4)));
                }
                p4 += 512;
                for (int c = 0; c < 32; c++) for (int rr = 0; rr < 32; rr++) i8.set(ValueLayout.JAVA_BYTE, p8 + c * 32 + rr, q8[g * 32 + rr][b * 32 + c]);
                p8 += 1024;
            }
            for (int j = 0; j < cols / 16; j++) {
                for (int rr = 0; rr < 32; rr++) i6.set(ValueLayout.JAVA_FLOAT_UNALIGNED, p6 + rr * 4, d16[g * 32 + rr][j]);
                p6 += 128;
                for (int c = 0; c < 16; c++) for (int rr = 0; rr < 32; rr++) i6.set(ValueLayout.JAVA_BYTE, p6 + c * 32 + rr, q6[g * 32 + rr][j * 16 + c]);
                p6 += 512;
            }
        }
        float[] out = new float[rows], ref = new float[rows];
        // checks against scalar references
        for (int i = 0; i < rows; i++) { double s = 0; for (int k = 0; k < cols; k++) s += (double) (q4[i][k] - 8) * d32[i][k / 32] * xr[k]; ref[i] = (float) s; }
        for (int g = 0; g < groups; g++) q40Il(i4, (long) g * cols / 32 * 640, cols / 32, xq, xd, out, g * 32);
        System.out.printf("q4_0 il max rel err %.2e%n", maxRel(out, ref));
        for (int i = 0; i < rows; i++) out[i] = q40Float(w4, (long) i * cols / 32 * 18, xr, cols);
        System.out.printf("q4_0 float max rel err %.2e%n", maxRel(out, ref));
        for (int i = 0; i < rows; i++) { double s = 0; for (int k = 0; k < cols; k++) s += (double) q8[i][k] * d32[i][k / 32] * xr[k]; ref[i] = (float) s; }
        for (int g = 0; g < groups; g++) q80Il(i8, (long) g * cols / 32 * 1152, cols / 32, xq, xd, out, g * 32);
        System.out.printf("q8_0 il max rel err %.2e%n", maxRel(out, ref));
        for (int i = 0; i < rows; i++) { double s = 0; for (int k = 0; k < cols; k++) s += (double) q6[i][k] * d16[i][k / 16] * xr256[k]; ref[i] = (float) s; }
        for (int g = 0; g < groups; g++) q6Il(i6, (long) g * cols / 16 * 640, cols, xn, xd256, out, g * 32);
        System.out.printf("q6 il max rel err %.2e%n", maxRel(out, ref));
        for (int rep = 0; rep < 3; rep++) {
            System.out.printf("q4_0 float %.0f us  il %.0f us | q8_0 float %.0f us  il %.0f us | q6 float %.0f us  il %.0f us%n",
                    best(() -> { for (int i = 0; i < rows; i++) out[i] = q40Float(w4, (long) i * cols / 32 * 18, xr, cols); }),
                    best(() -> { for (int g = 0; g < groups; g++) q40Il(i4, (long) g * cols / 32 * 640, cols / 32, xq, xd, out, g * 32); }),
                    best(() -> { for (int i = 0; i < rows; i++) out[i] = q80Float(w8, (long) i * cols / 32 * 34, xr, cols); }),
                    best(() -> { for (int g = 0; g < groups; g++) q80Il(i8, (long) g * cols / 32 * 1152, cols / 32, xq, xd, out, g * 32); }),
                    best(() -> { for (int i = 0; i < rows; i++) out[i] = q6Float(w6, (long) i * cols / 16 * 20, xr256, cols); }),
                    best(() -> { for (int g = 0; g < groups; g++) q6Il(i6, (long) g * cols / 16 * 640, cols, xn, xd256, out, g * 32); }));
        }
    }

    static double maxRel(float[] out, float[] ref) {
        double m = 0, scale = 0;
        for (float v : ref) scale = Math.max(scale, Math.abs(v));
        for (int i = 0; i < out.length; i++) m = Math.max(m, Math.abs(out[i] - ref[i]) / scale);
        return m;
    }
}
