package io.nereid.engine.cpu.tensor;

import java.lang.foreign.MemorySegment;

/**
 * The 12 bytes of 6-bit sub-block scales and mins shared by Q4_K and Q5_K (ggml's
 * {@code get_scale_min_k4}): eight (scale, min) pairs, one per 32-weight sub-block.
 *
 * <pre>
 * byte   0..3  : bits 0-5 = scale[0..3], bits 6-7 = bits 4-5 of scale[4..7]
 * byte   4..7  : bits 0-5 = min[0..3],   bits 6-7 = bits 4-5 of min[4..7]
 * byte   8..11 : bits 0-3 = bits 0-3 of scale[4..7], bits 4-7 = bits 0-3 of min[4..7]
 * </pre>
 */
final class KScales {

    /** Weights per K-quant super-block. */
    static final int QK_K = 256;

    private KScales() {
    }

    /** Scale of sub-block {@code j} (0..7), 0..63; {@code at} is the offset of the 12 bytes. */
    static int scale(MemorySegment s, long at, int j) {
        return j < 4
                ? Bytes.u8(s, at + j) & 63
                : (Bytes.u8(s, at + j + 4) & 0x0F) | ((Bytes.u8(s, at + j - 4) >>> 6) << 4);
    }

    /**
     * {@link #scale} from the 12 bytes read as two words, {@code lo} (bytes 0..7) and {@code hi}
     * (8..11): register shifts instead of a bounds-checked read per byte, for the kernels that
     * decode every sub-block.
     */
    static int scale(long lo, int hi, int j) {
        return j < 4
                ? (int) (lo >>> 8 * j) & 63
                : (hi >>> 8 * (j - 4)) & 0x0F | ((int) (lo >>> 8 * (j - 4) + 6) & 3) << 4;
    }

    /** {@link #min} from the 12 bytes read as two words, as {@link #scale(long, int, int)}. */
    static int min(long lo, int hi, int j) {
        return j < 4
                ? (int) (lo >>> 8 * (j + 4)) & 63
                : (hi >>> 8 * (j - 4) + 4) & 0x0F | ((int) (lo >>> 8 * j + 6) & 3) << 4;
    }

    /** Min of sub-block {@code j} (0..7), 0..63. */
    static int min(MemorySegment s, long at, int j) {
        return j < 4
                ? Bytes.u8(s, at + j + 4) & 63
                : (Bytes.u8(s, at + j + 4) >>> 4) | ((Bytes.u8(s, at + j) >>> 6) << 4);
    }

    /**
     * Writes the 12 bytes at {@code at} from eight scales and eight mins (each 0..63), the inverse
     * of {@link #scale} and {@link #min}, packed as ggml's quantizers pack them.
     */
    static void pack(int[] scales, int[] mins, MemorySegment s, long at) {
        for (int j = 0; j < 4; j++) {
            Bytes.putByte(s, at + j, scales[j] | (scales[j + 4] >>> 4) << 6);
            Bytes.putByte(s, at + j + 4, mins[j] | (mins[j + 4] >>> 4) << 6);
            Bytes.putByte(s, at + j + 8, (scales[j + 4] & 0x0F) | (mins[j + 4] & 0x0F) << 4);
        }
    }

    /**
     * Sub-block {@code j}'s share of a factored dot, {@code sum((d * scale * q - dmin * min) * x)}
     * written as {@code d * scale * qx - dmin * min * xs} from {@code qx = sum(q * x)} and
     * {@code xs = sum(x)}: two multiplies per sub-block instead of two per weight.
     */
    static float subBlockDot(MemorySegment s, long at, int j, float d, float dmin, float qx, float xs) {
        return d * scale(s, at, j) * qx - dmin * min(s, at, j) * xs;
    }

    /**
     * The packed K-quant layouts' four floats of 64-weight group {@code g} ({@code Q4_KPacked},
     * {@code Q5_KPacked}) at {@code at}: {@code d * scale} of sub-blocks {@code 2g} and
     * {@code 2g + 1}, then {@code dmin * min} of the same two.
     */
    static void packGroupScales(MemorySegment dst, long at, float d, float dmin, long lo, int hi, int g) {
        dst.set(Bytes.FLOAT, at, d * scale(lo, hi, 2 * g));
        dst.set(Bytes.FLOAT, at + 4, d * scale(lo, hi, 2 * g + 1));
        dst.set(Bytes.FLOAT, at + 8, dmin * min(lo, hi, 2 * g));
        dst.set(Bytes.FLOAT, at + 12, dmin * min(lo, hi, 2 * g + 1));
    }

    /** The float at {@code at + 4 * i} of a packed group's scales ({@link #packGroupScales}): 0, 1 scales; 2, 3 mins. */
    static float groupScale(MemorySegment w, long at, int i) {
        return w.get(Bytes.FLOAT, at + 4L * i);
    }
}
