package io.nereid.kvcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

class BlockHasherTest {

    // The SipHash paper's key 00 01 02 ... 0f, as two little-endian words.
    private final BlockHasher reference = new BlockHasher(0x0706050403020100L, 0x0f0e0d0c0b0a0908L);

    @Test
    void matchesSipHash24ReferenceVectors() {
        // Reference vectors of SipHash-2-4 (Aumasson & Bernstein): message 00 01 .. (n-1).
        assertEquals(0x726fdb47dd0e0e31L, reference.hashWords(new long[0]));
        assertEquals(0x93f5f5799a932462L, reference.hashWords(new long[] {0x0706050403020100L}));
    }

    @Test
    void blockHashIsSipHashOfParentExtraAndPackedTokens() {
        int[] tokens = {1, 2, 3, -4, 5, 6, 7, 8};
        long expected = reference.hashWords(new long[] {
            11L, 22L, 1L | 2L << 32, 3L | (-4L << 32), 5L | 6L << 32, 7L | 8L << 32});
        assertEquals(expected, reference.hash(11L, 22L, tokens, 0, tokens.length));
    }

    @Test
    void everyInputChangesTheHash() {
        BlockHasher h = new BlockHasher(42);
        int[] t = {5, 6, 7, 8, 9, 10, 11, 12};
        long base = h.hash(BlockHasher.ROOT, 0, t, 0, 8);
        assertNotEquals(base, h.hash(BlockHasher.ROOT + 1, 0, t, 0, 8));
        assertNotEquals(base, h.hash(BlockHasher.ROOT, 1, t, 0, 8));
        int[] u = t.clone();
        u[7] = 13;
        assertNotEquals(base, h.hash(BlockHasher.ROOT, 0, u, 0, 8));
        assertNotEquals(base, new BlockHasher(43).hash(BlockHasher.ROOT, 0, t, 0, 8));
        assertEquals(base, new BlockHasher(42).hash(BlockHasher.ROOT, 0, t, 0, 8));
    }

    @Test
    void extraKeyOfDistinguishesNames() {
        assertEquals(BlockHasher.extraKeyOf("llama"), BlockHasher.extraKeyOf("llama"));
        assertNotEquals(BlockHasher.extraKeyOf("llama"), BlockHasher.extraKeyOf("llamb"));
    }
}
