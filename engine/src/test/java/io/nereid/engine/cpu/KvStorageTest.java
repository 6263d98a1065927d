package io.nereid.engine.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.cpu.kernel.KernelSupport;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.ModelConfig;
import io.nereid.engine.model.RopeScaling;
import io.nereid.kvcache.BlockCopy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Storage of the paged K/V in either precision: size, rounding on write, block copies. */
class KvStorageTest {

    // 2 layers, 2 KV heads of 4 dimensions.
    private static final ModelConfig CONFIG = new ModelConfig(Architecture.LLAMA, 16, 2, 4, 2, 4, 8, 10, 64, 1e-5f,
            10000f, 4, new RopeScaling.None(), false);
    private static final KernelSupport K = Kernels.scalar();

    /** Attention of a zero query over {@code numTokens} of {@code block}: the mean of their V rows. */
    private static float[] meanValue(KvStorage kv, int layer, int head, int block, int numTokens) {
        float[] out = new float[4];
        kv.attentionQueries(K, layer, new float[4], new int[] {0}, new int[] {numTokens}, 1, new int[] {block}, head, 1f,
                new float[numTokens], numTokens, new float[KernelSupport.QUERIES_ROWS * 4], out, new int[] {0});
        return out;
    }

    @Test
    void f16HoldsHalfTheBytesOfF32() {
        long f32 = new KvStorage(CONFIG, 8, 16, KvPrecision.F32).bytes();
        long f16 = new KvStorage(CONFIG, 8, 16, KvPrecision.F16).bytes();
        assertEquals(2L * 2 * 8 * 2 * 16 * 4 * Float.BYTES, f32);
        assertEquals(f32 / 2, f16);
        assertEquals(KvPrecision.F32, new KvStorage(CONFIG, 8, 16).precision());
    }

    @Test
    void f16WritesRoundToNearestEvenAndAttentionReadsTheRoundedValues() {
        KvStorage kv = new KvStorage(CONFIG, 4, 16, KvPrecision.F16);
        float ulp = 0x1p-10f;   // binary16 spacing in [1, 2)
        // Ties go to the even significand: 1 + ulp/2 -> 1, 1 + 3ulp/2 -> 1 + 2ulp; 70000 overflows.
        float[] row = {1 + ulp / 2, 1 + 3 * ulp / 2, -0.1f, 70000f};
        kv.write(1, 2, 1, 0, new float[4], row, 0);
        float[] out = meanValue(kv, 1, 1, 2, 1);
        assertArrayEquals(new float[] {1f, 1 + 2 * ulp, Float.float16ToFloat(Float.floatToFloat16(-0.1f)),
                Float.POSITIVE_INFINITY}, out);
    }

    @ParameterizedTest
    @EnumSource(value = KvPrecision.class, names = {"F32", "F16"})   // the CPU backend's
    void aBlockCopyCarriesTheFirstSlotsOfEveryLayerAndHead(KvPrecision precision) {
        KvStorage kv = new KvStorage(CONFIG, 4, 8, precision);
        for (int layer = 0; layer < 2; layer++) {
            for (int head = 0; head < 2; head++) {
                for (int slot = 0; slot < 3; slot++) {
                    float base = 100 * layer + 10 * head + slot;
                    float[] row = {base, base + 0.25f, -base, 0.5f};
                    kv.write(layer, 1, head, slot, row, row, 0);
                }
            }
        }
        kv.copy(new BlockCopy(1, 3, 2));
        for (int layer = 0; layer < 2; layer++) {
            for (int head = 0; head < 2; head++) {
                String where = "layer " + layer + " head " + head;
                assertArrayEquals(meanValue(kv, layer, head, 1, 2), meanValue(kv, layer, head, 3, 2), where);
                // Slot 2 was not copied: the target's third row is still zero.
                assertArrayEquals(new float[4], meanValue(kv, layer, head, 0, 3), where + " untouched block");
                float[] threeOfTarget = meanValue(kv, layer, head, 3, 3);
                float[] twoOfSource = meanValue(kv, layer, head, 1, 2);
                // an F16 cache also rounds the attention weights to F16, as llama.cpp does: 2^-11 relative
                float relative = precision == KvPrecision.F16 ? 1e-3f : 1e-4f;
                for (int d = 0; d < 4; d++) {
                    assertEquals(twoOfSource[d] * 2 / 3, threeOfTarget[d], relative * Math.max(1, Math.abs(twoOfSource[d])),
                            where + " uncopied slot");
                }
            }
        }
    }

    /** The layout attention streams at long contexts: one head's consecutive blocks side by side (KvStorage's doc). */
    @Test
    void aHeadsConsecutiveBlocksLieSideBySide() {
        KvStorage kv = new KvStorage(CONFIG, 4, 8, KvPrecision.F16);
        for (int head = 0; head < 2; head++) {
            for (int block = 0; block + 1 < 4; block++) {
                assertEquals(kv.offset(block, head, 7) + 4, kv.offset(block + 1, head, 0), "head " + head);
            }
        }
        assertEquals(4 * 8 * 4, kv.offset(0, 1, 0), "head 1 starts after all of head 0's blocks");
    }

    @Test
    void kvTypeNamesParseAndUnknownOnesAreNamedInTheError() {
        assertEquals(KvPrecision.F16, KvPrecision.parse("f16"));
        assertEquals(KvPrecision.F32, KvPrecision.parse(" F32 "));
        assertEquals(KvPrecision.BF16, KvPrecision.parse("bfloat16"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KvPrecision.parse("q8_0"));
        assertEquals("KV cache type 'q8_0' is not one of f16, bf16, f32", e.getMessage());
    }

    @Test
    void theCpuBackendRefusesABf16Cache() {
        ModelConfig c = new ModelConfig(Architecture.LLAMA, 8, 1, 2, 1, 4, 16, 32, 64, 1e-5f, 10000, 4,
                new RopeScaling.None(), false);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new KvStorage(c, 4, 16, KvPrecision.BF16));
        assertTrue(e.getMessage().contains("not bf16"), e.getMessage());
    }
}
