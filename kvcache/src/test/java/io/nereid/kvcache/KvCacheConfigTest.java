package io.nereid.kvcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class KvCacheConfigTest {

    @ParameterizedTest
    @ValueSource(ints = {8, 16, 32, 64})
    void acceptsSupportedBlockSizes(int blockSize) {
        assertEquals(blockSize, new KvCacheConfig(10, blockSize, 0.01, 1).blockSize());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 4, 12, 128, -16})
    void rejectsOtherBlockSizesNamingTheValue(int blockSize) {
        var e = assertThrows(IllegalArgumentException.class, () -> new KvCacheConfig(10, blockSize, 0.01, 1));
        assertTrue(e.getMessage().contains(Integer.toString(blockSize)), e.getMessage());
    }

    @Test
    void rejectsPoolsWithoutAUsableBlockAndBadWatermarks() {
        assertThrows(IllegalArgumentException.class, () -> new KvCacheConfig(1, 16, 0.01, 1));
        assertThrows(IllegalArgumentException.class, () -> new KvCacheConfig(10, 16, -0.1, 1));
        assertThrows(IllegalArgumentException.class, () -> new KvCacheConfig(10, 16, 1.0, 1));
        assertThrows(IllegalArgumentException.class, () -> new KvCacheConfig(10, 16, Double.NaN, 1));
    }

    @Test
    void watermarkIsAFloorOfUsableBlocks() {
        assertEquals(10, new KvCacheConfig(1001, 16, 0.01, 1).watermarkBlocks());
        assertEquals(0, new KvCacheConfig(50, 16, 0.01, 1).watermarkBlocks());
        assertEquals(1000, new KvCacheConfig(1001, 16, 0.01, 1).usableBlocks());
    }
}
