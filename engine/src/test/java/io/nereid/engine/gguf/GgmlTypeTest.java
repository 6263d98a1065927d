package io.nereid.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** ggml type ids and sizes (ggml's type_traits: elements per block, bytes per block). */
class GgmlTypeTest {

    @ParameterizedTest
    @CsvSource({
        "F32, 0, 1, 4", "F16, 1, 1, 2", "Q4_0, 2, 32, 18", "Q4_1, 3, 32, 20", "Q5_0, 6, 32, 22", "Q5_1, 7, 32, 24",
        "Q8_0, 8, 32, 34", "Q8_1, 9, 32, 36", "Q2_K, 10, 256, 84", "Q3_K, 11, 256, 110", "Q4_K, 12, 256, 144",
        "Q5_K, 13, 256, 176", "Q6_K, 14, 256, 210", "Q8_K, 15, 256, 292", "I8, 24, 1, 1", "I16, 25, 1, 2",
        "I32, 26, 1, 4", "I64, 27, 1, 8", "F64, 28, 1, 8", "BF16, 30, 1, 2", "IQ4_NL, 20, 32, 18", "IQ4_XS, 23, 256, 136"})
    void idAndLayout(GgmlType type, int id, int blockSize, int bytesPerBlock) {
        assertEquals(id, type.id());
        assertEquals(blockSize, type.blockSize());
        assertEquals(bytesPerBlock, type.bytesPerBlock());
        assertEquals(Optional.of(type), GgmlType.byId(id));
    }

    @Test
    void idsAreUniqueAndRemovedIdsAreUnknown() {
        Set<Integer> ids = new HashSet<>();
        for (GgmlType t : GgmlType.values()) {
            assertTrue(ids.add(t.id()), t.name());
        }
        for (int removed : new int[] {4, 5, 31, 32, 33, 36, 37, 38, 40, -1}) {
            assertEquals(Optional.empty(), GgmlType.byId(removed), "id " + removed);
        }
    }

    @Test
    void byteSizeCountsWholeBlocks() {
        assertEquals(4L * 64 * 512, GgmlType.F32.byteSize(new long[] {64, 512}));
        assertEquals(2 * 144, GgmlType.Q4_K.byteSize(new long[] {256, 2}));
        assertEquals(4 * 34, GgmlType.Q8_0.byteSize(new long[] {64, 2}));
        assertEquals(0, GgmlType.Q4_0.byteSize(new long[] {32, 0}));
        assertThrows(IllegalArgumentException.class, () -> GgmlType.Q4_0.byteSize(new long[] {48}));
        assertThrows(IllegalArgumentException.class, () -> GgmlType.F32.byteSize(new long[] {-1}));
        assertThrows(ArithmeticException.class, () -> GgmlType.F32.byteSize(new long[] {1L << 62}));
    }
}
