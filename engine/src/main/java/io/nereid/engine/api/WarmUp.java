package io.nereid.engine.api;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Forward passes of the shapes most served steps take, run once on a CPU backend when it is loaded,
 * before the engine serves: a prompt, one sequence's decode with 0 to 7 drafts, decodes of 2, 4 and
 * 16 sequences (not: more drafts, batches with drafts, other batch sizes, which take the same kernels
 * as one of these). So that the JIT has seen each shape's branches before it compiles the forward pass
 * and its kernels: a shape first taken after C2 compiled them without it hits an uncommon trap, and
 * the hot methods run in the interpreter until compiled again (110M Q4_K_M, after 300 one-token
 * steps: the first two-token step 174 ms against 6, the nine one-token steps after it 7-17 ms
 * against 3.4), and a server's first requests ran the kernels cold.
 *
 * <p>The passes write K/V into the first blocks after the null block; nothing reads them, and a
 * sequence that later gets those blocks writes each position before it reads it. Shapes whose
 * blocks or positions the cache does not have are left out.
 */
final class WarmUp {

    /** Tokens of the warm-up prompt, at least (whole blocks): a prompt the panels take. */
    private static final int PROMPT_TOKENS = 32;

    /** Tokens one sequence's decodes take: 1 to 8 (0 to 7 drafts). */
    private static final int MOST_DECODE_TOKENS = 8;

    /** Sequences of the batched decodes. */
    private static final int[] BATCHES = {2, 4, 16};

    private WarmUp() {
    }

    /**
     * Runs the passes on {@code backend}, whose KV cache holds {@code numBlocks} blocks of
     * {@code blockSize} for sequences of up to {@code maxPositions}; returns how many it ran.
     */
    static int run(Backend backend, int numBlocks, int blockSize, int maxPositions) {
        int promptBlocks = (PROMPT_TOKENS + blockSize - 1) / blockSize;
        int prompt = promptBlocks * blockSize;
        int vocab = backend.vocabSize();
        int decodeBlocks = (MOST_DECODE_TOKENS + blockSize - 1) / blockSize;
        if (promptBlocks + decodeBlocks >= numBlocks || prompt + MOST_DECODE_TOKENS > maxPositions) {
            return 0;
        }
        int[] shared = new int[promptBlocks];
        for (int b = 0; b < promptBlocks; b++) {
            shared[b] = 1 + b;   // block 0 is the engine's null block (a draft model's proposer uses it too: harmless)
        }
        int passes = 0;
        backend.forward(new Step(List.of(new Slice(tokens(prompt, 0, vocab), 0, shared, 1))));
        passes++;
        // one sequence: decode, and verifications of 1 to 7 drafts, in a block after the prompt's
        int[] one = withBlock(shared, promptBlocks + 1, blockSize, MOST_DECODE_TOKENS);
        for (int round = 0; round < 2; round++) {
            for (int n = 1; n <= MOST_DECODE_TOKENS; n++) {
                backend.forward(new Step(List.of(new Slice(tokens(n, round + n, vocab), prompt, one, n))));
                passes++;
            }
        }
        // decodes of several sequences, each its own block for its token after the shared prompt
        for (int batch : BATCHES) {
            if (promptBlocks + batch >= numBlocks) {   // blocks promptBlocks + 1 .. promptBlocks + batch
                break;
            }
            List<Slice> slices = new ArrayList<>();
            for (int s = 0; s < batch; s++) {
                slices.add(new Slice(tokens(1, s, vocab), prompt, withBlock(shared, promptBlocks + 1 + s, blockSize, 1), 1));
            }
            backend.forward(new Step(slices));
            passes++;
        }
        return passes;
    }

    /** The shared prompt's blocks and {@code block} after them, for {@code tokens} positions after the prompt. */
    private static int[] withBlock(int[] shared, int block, int blockSize, int tokens) {
        int extra = (tokens + blockSize - 1) / blockSize;
        int[] table = Arrays.copyOf(shared, shared.length + extra);
        for (int e = 0; e < extra; e++) {
            table[shared.length + e] = block + e;
        }
        return table;
    }

    /** {@code n} token ids, varied by {@code seed}, within the vocabulary. */
    private static int[] tokens(int n, int seed, int vocab) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = (17 + 31 * (seed + i)) % vocab;
        }
        return t;
    }
}
