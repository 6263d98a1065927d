package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.Q8_0Format.BLOCK;
import static io.nereid.engine.cpu.tensor.Q8_0Format.BLOCK_BYTES;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q8_0 with the Vector API: {@code L} int8 quants widened to floats per step. {@link Q8_0Format}
 * is the specification. With activations quantized to Q8_0 as well ({@link MatmulInput}), the
 * products are integers: a block's 32 are taken {@code 2L} at a time as shorts (|q| <= 127, so a
 * product fits) and the dot is scaled once per block by both scales, as llama.cpp's
 * {@code vec_dot_q8_0_q8_0} does.
 */
final class Q8_0Vector implements RowKernel {

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();


    @Override
    public GgmlType type() {
        return GgmlType.Q8_0;
    }

    private static FloatVector quants(MemorySegment w, long block, int k) {
        return W.toFloats(W.loadBytes(w, block + 2 + k));
    }

    /** Elements {@code k..k+L} of a block decoded, as {@link #dequantize} writes them: {@code q * d}. */
    private static FloatVector weights(MemorySegment w, long block, float d, int k) {
        return quants(w, block, k).mul(d);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            for (int k = 0; k < BLOCK; k += f.length()) {
                acc = weights(w, block, d, k).fma(FloatVector.fromArray(f, x, xOff + b * BLOCK + k), acc);
            }
        }
        return F32Vector.sum(acc);
    }

    @Override
    public boolean dotsInPlace() {
        return true;
    }

    @Override
    public void dot4(MemorySegment w, long offset, long rowBytes, float[] x, int xOff, int n, float[] out, int outOff) {
        VectorSpecies<Float> f = W.floats();
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        for (int b = 0; b < n / BLOCK; b++) {
            long b0 = offset + (long) b * BLOCK_BYTES, b1 = b0 + rowBytes, b2 = b1 + rowBytes, b3 = b2 + rowBytes;
            float d0 = Bytes.f16(w, b0), d1 = Bytes.f16(w, b1), d2 = Bytes.f16(w, b2), d3 = Bytes.f16(w, b3);
            for (int k = 0; k < BLOCK; k += f.length()) {
                FloatVector v = FloatVector.fromArray(f, x, xOff + b * BLOCK + k);
                a0 = weights(w, b0, d0, k).fma(v, a0);
                a1 = weights(w, b1, d1, k).fma(v, a1);
                a2 = weights(w, b2, d2, k).fma(v, a2);
                a3 = weights(w, b3, d3, k).fma(v, a3);
            }
        }
        out[outOff] = F32Vector.sum(a0);
        out[outOff + 1] = F32Vector.sum(a1);
        out[outOff + 2] = F32Vector.sum(a2);
        out[outOff + 3] = F32Vector.sum(a3);
    }

    /**
     * {@code sum(q_w[j] * q_x[j])} of one block, spread over {@code L} int lanes. Bytes are taken
     * {@code 2L} at a time ({@link VectorWidth#bytePairs}, half the width) and widened to as many
     * shorts ({@link VectorWidth#shortPairs}, the whole width). The short products are read as
     * ints, each {@code p = hi * 2^16 + lo} ({@code lo} unsigned); then
     * {@code (p + (p << 16)) >> 16} is {@code hi + lo} with both signed. (Widening the upper half
     * of the shorts with {@code convertShape(S2I, ints, 1)} instead was 4x slower than the float
     * kernel: C2 does not compile that part to vector code.)
     */
    private IntVector blockSums(MemorySegment w, long block, byte[] xq, int xb) {
        VectorSpecies<Byte> bytePairs = W.bytePairs();
        VectorSpecies<Short> shortPairs = W.shortPairs();
        IntVector s = IntVector.zero(W.ints());
        for (int k = 0; k < BLOCK; k += bytePairs.length()) {
            ShortVector qw = (ShortVector) ByteVector.fromMemorySegment(bytePairs, w, block + 2 + k,
                    ByteOrder.LITTLE_ENDIAN).convertShape(VectorOperators.B2S, shortPairs, 0);
            ShortVector qx = (ShortVector) ByteVector.fromArray(bytePairs, xq, xb + k)
                    .convertShape(VectorOperators.B2S, shortPairs, 0);
            IntVector p = qw.mul(qx).reinterpretAsInts();
            s = s.add(p.add(p.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16));
        }
        return s;
    }

    /** {@code acc + d_w * d_x * (q_w · q_x)} for one block. */
    private FloatVector blockDot(MemorySegment w, long block, byte[] xq, float[] xd, int b, FloatVector acc) {
        FloatVector s = (FloatVector) blockSums(w, block, xq, b * BLOCK).convert(VectorOperators.I2F, 0);
        return VectorRowKernels.fma(s, Bytes.f16(w, block) * xd[b], acc);
    }

    /**
     * The dot product of a run of Q8_0 weights with activations in Q8_0: quants
     * {@code xq[xBlock * 32 ..]} and scales {@code xd[xBlock ..]}, {@code n / 32} blocks. Named
     * {@code dot} so that the launchers' {@code dontinline} command covers it too.
     */
    float dot(MemorySegment w, long offset, byte[] xq, float[] xd, int xBlock, int n) {
        VectorSpecies<Float> f = W.floats();
        int blocks = n / BLOCK;
        FloatVector acc0 = FloatVector.zero(f), acc1 = FloatVector.zero(f);
        int b = 0;
        for (; b + 1 < blocks; b += 2) {
            acc0 = blockDot(w, offset + (long) b * BLOCK_BYTES, xq, xd, xBlock + b, acc0);
            acc1 = blockDot(w, offset + (long) (b + 1) * BLOCK_BYTES, xq, xd, xBlock + b + 1, acc1);
        }
        if (b < blocks) {
            acc0 = blockDot(w, offset + (long) b * BLOCK_BYTES, xq, xd, xBlock + b, acc0);
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    /**
     * {@link Q8_0Format#quantizeBlock} of one block, bit for bit, that also writes the quants
     * times {@code d} to {@code values[off, off + 32)}: rounding half away from zero is
     * {@code trunc(|v|)}, plus one when the exact remainder {@code |v| - trunc(|v|)} is at least
     * one half, with the sign of {@code v}.
     */
    float quantizeBlock(float[] src, int off, byte[] q, float[] values) {
        VectorSpecies<Float> f = W.floats();
        FloatVector amax = FloatVector.zero(f);
        for (int k = 0; k < BLOCK; k += f.length()) {
            amax = amax.max(FloatVector.fromArray(f, src, off + k).abs());
        }
        float d = amax.reduceLanes(VectorOperators.MAX) / 127f;
        float id = d != 0f ? 1f / d : 0f;
        for (int k = 0; k < BLOCK; k += f.length()) {
            FloatVector v = FloatVector.fromArray(f, src, off + k).mul(id);
            FloatVector a = v.abs();
            FloatVector t = (FloatVector) a.convert(VectorOperators.F2I, 0).convert(VectorOperators.I2F, 0);
            FloatVector r = t.add(FloatVector.broadcast(f, 1f), a.sub(t).compare(VectorOperators.GE, 0.5f));
            // + 0 turns the -0 of a small negative v into the +0 that the scalar q * d gives
            r = r.lanewise(VectorOperators.NEG, v.compare(VectorOperators.LT, 0f)).add(0f);
            W.storeBytes(r, q, off + k);
            r.mul(d).intoArray(values, off + k);
        }
        return d;
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int l = W.floats().length();
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            for (int k = 0; k < BLOCK; k += l) {
                quants(w, block, k).mul(d).intoArray(dst, dstOff + b * BLOCK + k);
            }
        }
    }
}
