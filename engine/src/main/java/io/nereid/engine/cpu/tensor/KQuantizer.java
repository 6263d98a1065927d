package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;

import java.lang.foreign.MemorySegment;

/**
 * The scale searches of ggml's K-quant reference quantizers ({@code ggml-quants.c} of llama.cpp
 * b4748), shared by {@link Q4_KFormat}, {@link Q5_KFormat} and {@link Q6_KFormat}: rounding with
 * {@code nearest_int}, the affine fit of {@code make_qkx2_quants} (Q4_K, Q5_K) and the symmetric
 * fit of {@code make_qx_quants} (Q6_K).
 *
 * <p>llama.cpp's {@code llama-quantize} calls these {@code _ref} paths whenever it has no
 * importance matrix ({@code quantize_q4_K} and friends test {@code quant_weights == NULL}). The
 * files it writes are reproduced byte for byte only if every float operation happens in the same
 * order, so the arithmetic here follows the C statement by statement: {@code a * b * c} is
 * {@code (a * b) * c}, int operands are converted to float where C converts them, sums run in
 * index order, and no {@code a * b + c} is fused: ggml-quants.c is part of ggml-base, which
 * (unlike ggml-cpu) is not built with {@code -march} flags, so its compiler has no FMA to contract
 * into. The parity fixture's Q4_K_M file (an AVX-512 build) is reproduced bit for bit this way.
 *
 * <p>Stateless; the scratch arrays belong to the caller. Thread-safe.
 */
final class KQuantizer {

    /** ggml's {@code GROUP_MAX_EPS}: a group whose largest magnitude is below this is all zeros. */
    static final float GROUP_MAX_EPS = 1e-15f;

    /** {@code 1.5 * 2^23}, see {@link #nearestInt}. */
    private static final float ROUNDING_MAGIC = 12582912f;

    private KQuantizer() {
    }

    /**
     * ggml's {@code nearest_int}: {@code v} rounded to the nearest integer, ties to even. Adding
     * {@code 1.5 * 2^23} moves {@code v} into the binade where the float spacing is 1, so the
     * adder's own rounding does the work, and the integer is read back from the mantissa. Exact for
     * {@code |v| <= 2^22 - 1}; beyond that (ggml asserts against it only in debug builds) it returns
     * the same wrapped value as ggml, which the callers then clamp.
     */
    static int nearestInt(float v) {
        int bits = Float.floatToRawIntBits(v + ROUNDING_MAGIC);
        return (bits & 0x007fffff) - 0x00400000;
    }

    /**
     * ggml's {@code make_qkx2_quants} with {@code use_mad = false}: fits
     * {@code x[i] ~ scale * L[i] + min} (min at most 0) over {@code n} values of {@code x} from
     * {@code xOff}, quants {@code L} in 0..nmax, minimizing the weighted squared error. It starts
     * from the min-max fit, then tries {@code nstep + 1} inverse scales
     * {@code (rmin + rdelta * is + nmax) / (max - min)}, solves the least-squares scale and min for
     * each rounding and keeps the best. Writes the quants to {@code l[lOff, lOff + n)} and
     * {@code -min} (a value to subtract, at least 0) to {@code mins[minIndex]}; returns the scale.
     *
     * @param laux scratch of at least {@code n} bytes
     */
    static float makeQkx2Quants(int n, int nmax, float[] x, int xOff, float[] weights, byte[] l, int lOff,
            byte[] laux, float rmin, float rdelta, int nstep, float[] mins, int minIndex) {
        float min = x[xOff];
        float max = x[xOff];
        float sumW = weights[0];
        float sumX = sumW * x[xOff];
        for (int i = 1; i < n; i++) {
            float xi = x[xOff + i];
            if (xi < min) {
                min = xi;
            }
            if (xi > max) {
                max = xi;
            }
            float w = weights[i];
            sumW += w;
            sumX += w * xi;
        }
        if (min > 0) {
            min = 0;
        }
        if (max == min) {
            for (int i = 0; i < n; i++) {
                l[lOff + i] = 0;
            }
            mins[minIndex] = -min;
            return 0f;
        }
        float iscale = nmax / (max - min);
        float scale = 1 / iscale;
        float bestError = 0;
        for (int i = 0; i < n; i++) {
            int q = clamp(nearestInt(iscale * (x[xOff + i] - min)), 0, nmax);
            l[lOff + i] = (byte) q;
            float diff = scale * q + min - x[xOff + i];
            bestError += weights[i] * (diff * diff);
        }
        for (int is = 0; is <= nstep; is++) {
            iscale = (rmin + rdelta * is + nmax) / (max - min);
            float sumL = 0;
            float sumL2 = 0;
            float sumXL = 0;
            for (int i = 0; i < n; i++) {
                int q = clamp(nearestInt(iscale * (x[xOff + i] - min)), 0, nmax);
                laux[i] = (byte) q;
                float w = weights[i];
                sumL += w * q;
                sumL2 += w * q * q;
                sumXL += w * q * x[xOff + i];
            }
            float det = sumW * sumL2 - sumL * sumL;
            if (det > 0) {
                float thisScale = (sumW * sumXL - sumX * sumL) / det;
                float thisMin = (sumL2 * sumX - sumL * sumXL) / det;
                if (thisMin > 0) {
                    thisMin = 0;
                    thisScale = sumXL / sumL2;
                }
                float error = 0;
                for (int i = 0; i < n; i++) {
                    float diff = thisScale * laux[i] + thisMin - x[xOff + i];
                    error += weights[i] * (diff * diff);
                }
                if (error < bestError) {
                    System.arraycopy(laux, 0, l, lOff, n);
                    bestError = error;
                    scale = thisScale;
                    min = thisMin;
                }
            }
        }
        mins[minIndex] = -min;
        return scale;
    }

    /**
     * ggml's {@code make_qx_quants} as Q6_K calls it ({@code rmse_type = 1}, no importance
     * weights, so each value weighs {@code x^2}): fits {@code x[i] ~ scale * (L[i] - nmax)},
     * {@code L} in 0..2 nmax - 1, trying the inverse scales {@code -(nmax + 0.1 is) / max} for
     * {@code is} in -9..9 ({@code max} the value of largest magnitude, sign kept) and keeping the one
     * whose least-squares scale explains the most of {@code sum(w x^2)}. Writes
     * {@code l[lOff, lOff + n)}; returns the scale (negative when {@code max} is positive).
     */
    static float makeQxQuants(int n, int nmax, float[] x, int xOff, byte[] l, int lOff) {
        float max = 0;
        float amax = 0;
        for (int i = 0; i < n; i++) {
            float ax = Math.abs(x[xOff + i]);
            if (ax > amax) {
                amax = ax;
                max = x[xOff + i];
            }
        }
        if (amax < GROUP_MAX_EPS) {
            for (int i = 0; i < n; i++) {
                l[lOff + i] = 0;
            }
            return 0f;
        }
        float iscale = -nmax / max;
        float sumLX = 0;
        float sumL2 = 0;
        for (int i = 0; i < n; i++) {
            float xi = x[xOff + i];
            int q = clamp(nearestInt(iscale * xi), -nmax, nmax - 1);
            l[lOff + i] = (byte) (q + nmax);
            float w = xi * xi;
            sumLX += w * xi * q;
            sumL2 += w * q * q;
        }
        float scale = sumL2 != 0 ? sumLX / sumL2 : 0f;
        float best = scale * sumLX;
        for (int is = -9; is <= 9; is++) {
            if (is == 0) {
                continue;
            }
            iscale = -(nmax + 0.1f * is) / max;
            sumLX = 0;
            sumL2 = 0;
            for (int i = 0; i < n; i++) {
                float xi = x[xOff + i];
                int q = clamp(nearestInt(iscale * xi), -nmax, nmax - 1);
                float w = xi * xi;
                sumLX += w * xi * q;
                sumL2 += w * q * q;
            }
            if (sumL2 > 0 && sumLX * sumLX > best * sumL2) {
                for (int i = 0; i < n; i++) {
                    l[lOff + i] = (byte) (nmax + clamp(nearestInt(iscale * x[xOff + i]), -nmax, nmax - 1));
                }
                scale = sumLX / sumL2;
                best = scale * sumLX;
            }
        }
        return scale;
    }

    /**
     * The part of {@code quantize_row_q4_K_ref} and {@code quantize_row_q5_K_ref} that the two
     * share: for the super-block of 256 values at {@code x[xOff]}, fits each 32-value sub-block with
     * {@link #makeQkx2Quants} (weights {@code sqrt(mean(x^2)) + |x|}), quantizes the eight scales
     * and eight mins to 6 bits against their maxima, writes {@code d}, {@code dmin} (fp16) and the 12
     * packed scale bytes at {@code dst[block]}, and requantizes every value against its sub-block's
     * stored scale and min: {@code q = clamp(round((x + dmin * m) / (d * sc)), 0, nmax)}. The 256
     * quants are left in {@code s.quants} for the caller to pack.
     */
    static void superBlockWithMins(float[] x, int xOff, int nmax, float rmin, int nstep, Scratch s,
            MemorySegment dst, long block) {
        float maxScale = 0;
        float maxMin = 0;
        for (int j = 0; j < QK_K / 32; j++) {
            int sub = xOff + 32 * j;
            float sumX2 = 0;
            for (int i = 0; i < 32; i++) {
                sumX2 += x[sub + i] * x[sub + i];
            }
            float avX = (float) Math.sqrt(sumX2 / 32); // sqrt in double, rounded once: sqrtf
            for (int i = 0; i < 32; i++) {
                s.weights[i] = avX + Math.abs(x[sub + i]);
            }
            s.scales[j] = makeQkx2Quants(32, nmax, x, sub, s.weights, s.quants, 32 * j, s.aux, rmin, 0.1f, nstep,
                    s.mins, j);
            if (s.scales[j] > maxScale) { // not Math.max: C's comparison, for NaN and -0.0 alike
                maxScale = s.scales[j];
            }
            if (s.mins[j] > maxMin) {
                maxMin = s.mins[j];
            }
        }
        float invScale = maxScale > 0 ? 63f / maxScale : 0f;
        float invMin = maxMin > 0 ? 63f / maxMin : 0f;
        for (int j = 0; j < QK_K / 32; j++) {
            // C stores nearest_int's result in a uint8_t before clamping to 63: keep that wrap
            s.scaleBits[j] = Math.min(63, nearestInt(invScale * s.scales[j]) & 0xFF);
            s.minBits[j] = Math.min(63, nearestInt(invMin * s.mins[j]) & 0xFF);
        }
        KScales.pack(s.scaleBits, s.minBits, dst, block + 4);
        Bytes.putF16(dst, block, maxScale / 63f);
        Bytes.putF16(dst, block + 2, maxMin / 63f);
        float d = Bytes.f16(dst, block);
        float dmin = Bytes.f16(dst, block + 2);
        for (int j = 0; j < QK_K / 32; j++) {
            float dj = d * KScales.scale(dst, block + 4, j);
            if (dj == 0) {
                continue; // the sub-block keeps the quants of its fit
            }
            float mj = dmin * KScales.min(dst, block + 4, j);
            for (int i = 0; i < 32; i++) {
                s.quants[32 * j + i] = (byte) clamp(nearestInt((x[xOff + 32 * j + i] + mj) / dj), 0, nmax);
            }
        }
    }

    /** Per-call working memory of {@link #superBlockWithMins}; {@code quants} also serves Q6_K. */
    static final class Scratch {
        final byte[] quants = new byte[QK_K];
        final byte[] aux = new byte[32];
        final float[] weights = new float[32];
        final float[] scales = new float[QK_K / 16];
        final float[] mins = new float[QK_K / 32];
        final int[] scaleBits = new int[QK_K / 32];
        final int[] minBits = new int[QK_K / 32];
    }

    static int clamp(int v, int lo, int hi) {
        return Math.max(lo, Math.min(hi, v));
    }
}
