package io.nereid.kvcache;

/**
 * Keyed hash of a full block for the prefix cache: SipHash-2-4 over the 64-bit words
 * {@code parentHash, extraKey, (token[0] | token[1] << 32), (token[2] | token[3] << 32), ...}.
 *
 * <p>Why keyed: a cache hit hands one request the K/V computed for another, so a colliding
 * prefix would leak or corrupt output across users (vLLM moved to SHA-256 for this reason).
 * SipHash with a secret key makes collisions impossible to craft from outside; {@link BlockPool}
 * also compares the stored tokens, parent hash and extra key on every hit, so only an accidental
 * 64-bit collision of two parent chains could still alias.
 *
 * <p>The word stream is the standard SipHash message in little-endian byte order, so the
 * function equals reference SipHash-2-4 over those bytes. Stateless and thread-safe.
 */
public final class BlockHasher {

    /** Parent hash used for the first block of every sequence. */
    public static final long ROOT = 0x6e65726569642d31L; // "nereid-1"

    private final long k0;
    private final long k1;

    public BlockHasher(long seed) {
        // Spread one configured long into SipHash's 128-bit key.
        this(mix(seed), mix(seed ^ 0x9e3779b97f4a7c15L));
    }

    /** The raw 128-bit key, little-endian halves; used by the reference-vector test. */
    BlockHasher(long k0, long k1) {
        this.k0 = k0;
        this.k1 = k1;
    }

    /** Hash of one block of {@code count} tokens at {@code tokens[offset..]}. */
    public long hash(long parentHash, long extraKey, int[] tokens, int offset, int count) {
        State s = new State(k0, k1);
        s.word(parentHash);
        s.word(extraKey);
        int i = 0;
        for (; i + 1 < count; i += 2) {
            s.word((tokens[offset + i] & 0xffffffffL) | ((long) tokens[offset + i + 1] << 32));
        }
        int bytes = 16 + count * 4;
        long last = (long) (bytes & 0xff) << 56;
        if (i < count) {
            last |= tokens[offset + i] & 0xffffffffL;
        }
        return s.finish(last);
    }

    /** SipHash-2-4 of a message of whole 64-bit words, for testing against reference vectors. */
    long hashWords(long[] words) {
        State s = new State(k0, k1);
        for (long w : words) {
            s.word(w);
        }
        return s.finish((long) ((words.length * 8) & 0xff) << 56);
    }

    /** A stable 64-bit key for a model or adapter name, for {@code extraKey}. */
    public static long extraKeyOf(String name) {
        long h = 0xcbf29ce484222325L; // FNV-1a, then mixed: names are not secret, only distinct
        for (int i = 0; i < name.length(); i++) {
            h = (h ^ name.charAt(i)) * 0x100000001b3L;
        }
        return mix(h);
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** The four SipHash lanes; a local object the JIT scalar-replaces. */
    private static final class State {
        long v0;
        long v1;
        long v2;
        long v3;

        State(long k0, long k1) {
            v0 = k0 ^ 0x736f6d6570736575L;
            v1 = k1 ^ 0x646f72616e646f6dL;
            v2 = k0 ^ 0x6c7967656e657261L;
            v3 = k1 ^ 0x7465646279746573L;
        }

        void word(long m) {
            v3 ^= m;
            round();
            round();
            v0 ^= m;
        }

        long finish(long lastWord) {
            word(lastWord);
            v2 ^= 0xff;
            round();
            round();
            round();
            round();
            return v0 ^ v1 ^ v2 ^ v3;
        }

        private void round() {
            v0 += v1;
            v1 = Long.rotateLeft(v1, 13);
            v1 ^= v0;
            v0 = Long.rotateLeft(v0, 32);
            v2 += v3;
            v3 = Long.rotateLeft(v3, 16);
            v3 ^= v2;
            v0 += v3;
            v3 = Long.rotateLeft(v3, 21);
            v3 ^= v0;
            v2 += v1;
            v1 = Long.rotateLeft(v1, 17);
            v1 ^= v2;
            v2 = Long.rotateLeft(v2, 32);
        }
    }
}
