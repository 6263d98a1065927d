import java.lang.foreign.*;
import java.nio.ByteOrder;
import java.util.Random;
import jdk.incubator.vector.*;

/**
 * Probe for issue 13: the Q4_0 and Q8_0 row dot on float-widened weights (what the kernels do)
 * against an integer dot on Q8_0-quantized activations (products on 16-bit lanes, one float FMA
 * per block, as llama.cpp computes them), one thread, one 2048 x 5632 matrix (1.1B ffn shape).
 * Run: java --add-modules jdk.incubator.vector -XX:CompileCommand=dontinline,IntDotProbe::dot* bench/kernels/IntDotProbe.java 2048 5632
 * Rows: float / int = Q4_0, f8 / i8 = Q8_0; best of 3 s each, three rounds.
 * Results and the decision are in bench/MEASUREMENTS.md.
 */
public class IntDotProbe {
    static final VectorSpecies<Short> S5 = ShortVector.SPECIES_512; static final VectorSpecies<Byte> B2 = ByteVector.SPECIES_256;
    static float dot8Float(MemorySegment w, long off, float[] x, int n) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < n / 32; b++) {
            long blk = off + b * 34L;
            float d = f16(w, blk);
            for (int k = 0; k < 32; k += 16) {
                FloatVector v = ((FloatVector) ByteVector.fromMemorySegment(B, w, blk + 2 + k, ByteOrder.LITTLE_ENDIAN).convertShape(VectorOperators.B2F, F, 0)).mul(d);
                acc = v.fma(FloatVector.fromArray(F, x, b * 32 + k), acc);
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }
    static float dot8Int(MemorySegment w, long off, short[] xq, float[] xd, int n) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < n / 32; b++) {
            long blk = off + b * 34L;
            float d = f16(w, blk) * xd[b];
            ShortVector q = (ShortVector) ByteVector.fromMemorySegment(B2, w, blk + 2, ByteOrder.LITTLE_ENDIAN).convertShape(VectorOperators.B2S, S5, 0);
            ShortVector p = q.mul(ShortVector.fromArray(S5, xq, b * 32));
            IntVector s = ((IntVector) p.convertShape(VectorOperators.S2I, I, 0)).add((IntVector) p.convertShape(VectorOperators.S2I, I, 1));
            acc = ((FloatVector) s.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, d), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    static final VectorSpecies<Short> S = ShortVector.SPECIES_256;
    static final VectorSpecies<Byte> B = ByteVector.SPECIES_128;
    static final ValueLayout.OfShort SH = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    static float f16(MemorySegment w, long o) { return Float.float16ToFloat(w.get(SH, o)); }

    static float dotFloat(MemorySegment w, long off, float[] x, int n) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < n / 32; b++) {
            long blk = off + b * 18L;
            float d = f16(w, blk);
            IntVector q = ByteVector.fromMemorySegment(B, w, blk + 2, ByteOrder.LITTLE_ENDIAN).convertShape(VectorOperators.B2I, I, 0).reinterpretAsInts();
            FloatVector lo = ((FloatVector) q.and(0x0F).sub(8).convert(VectorOperators.I2F, 0)).mul(d);
            FloatVector hi = ((FloatVector) q.lanewise(VectorOperators.LSHR, 4).and(0x0F).sub(8).convert(VectorOperators.I2F, 0)).mul(d);
            acc = lo.fma(FloatVector.fromArray(F, x, b * 32), acc);
            acc = hi.fma(FloatVector.fromArray(F, x, b * 32 + 16), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    static float dotInt(MemorySegment w, long off, short[] xq, float[] xd, int n) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < n / 32; b++) {
            long blk = off + b * 18L;
            float d = f16(w, blk) * xd[b];
            ShortVector q = (ShortVector) ByteVector.fromMemorySegment(B, w, blk + 2, ByteOrder.LITTLE_ENDIAN).convertShape(VectorOperators.B2S, S, 0);
            ShortVector lo = q.and((short) 0x0F).sub((short) 8);
            ShortVector hi = q.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).sub((short) 8);
            ShortVector p = lo.mul(ShortVector.fromArray(S, xq, b * 32)).add(hi.mul(ShortVector.fromArray(S, xq, b * 32 + 16)));
            FloatVector pf = (FloatVector) p.convertShape(VectorOperators.S2F, F, 0);
            acc = pf.fma(FloatVector.broadcast(F, d), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    public static void main(String[] a) {
        int rows = Integer.parseInt(a[0]), cols = Integer.parseInt(a[1]);
        Random r = new Random(1);
        long bytes = (long) rows * cols / 32 * 18;
        MemorySegment w = Arena.ofShared().allocate(bytes, 64);
        for (long i = 0; i < bytes; i++) w.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
        for (long bl = 0; bl < bytes; bl += 18) w.set(SH, bl, Float.floatToFloat16(0.01f + r.nextFloat() * 0.01f));
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        short[] xq = new short[cols]; float[] xd = new float[cols / 32];
        for (int b = 0; b < cols / 32; b++) {
            float amax = 0; for (int i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(x[b * 32 + i]));
            float d = amax / 127; xd[b] = d;
            for (int i = 0; i < 32; i++) xq[b * 32 + i] = (short) Math.round(x[b * 32 + i] / d);
        }
        float[] out = new float[rows];
        long bytes8 = (long) rows * cols / 32 * 34;
        MemorySegment w8 = Arena.ofShared().allocate(bytes8, 64);
        for (long i = 0; i < bytes8; i++) w8.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
        for (long bl = 0; bl < bytes8; bl += 34) w8.set(SH, bl, Float.floatToFloat16(0.01f + r.nextFloat() * 0.01f));
        for (int rep = 0; rep < 3; rep++) {
            for (String mode : new String[] {"float", "int", "f8", "i8"}) {
                double best = 1e9; long start = System.nanoTime();
                while (System.nanoTime() - start < 3_000_000_000L) {
                    long t0 = System.nanoTime();
                    if (mode.equals("float")) for (int i = 0; i < rows; i++) out[i] = dotFloat(w, (long) i * cols / 32 * 18, x, cols);
                    else if (mode.equals("int")) for (int i = 0; i < rows; i++) out[i] = dotInt(w, (long) i * cols / 32 * 18, xq, xd, cols);
                    if (mode.equals("f8")) for (int i = 0; i < rows; i++) out[i] = dot8Float(w8, (long) i * cols / 32 * 34, x, cols);
                    if (mode.equals("i8")) for (int i = 0; i < rows; i++) out[i] = dot8Int(w8, (long) i * cols / 32 * 34, xq, xd, cols);
                    best = Math.min(best, (System.nanoTime() - t0) / 1e9);
                }
                System.out.printf("%-5s %.3f ms %.2f GB/s out[7]=%f%n", mode, best * 1e3, (mode.contains("8") ? bytes8 : bytes) / best / 1e9, out[7]);
            }
        }
    }
}
