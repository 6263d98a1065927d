package io.nereid.engine.cpu.parity;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.cpu.CpuBackendProvider;
import io.nereid.engine.cpu.parity.ParityFixture.AttentionMode;
import io.nereid.engine.model.ModelSource;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Runs sequences through the CPU backend seam ({@link CpuBackendProvider}, {@link Backend#forward})
 * the way the parity tests need them: teacher-forced along a {@link ForwardPath}, or greedily as
 * llama-server does (the prompt in one step, then one token per step). Every run opens a backend
 * of its own with a fresh KV cache. Stateless; one run at a time per caller thread.
 */
final class ParityRuns {

    /** Tokens per KV block: small, so that the sequences cross several block boundaries. */
    static final int BLOCK_SIZE = 16;

    /**
     * How the backend is opened.
     *
     * @param kv             KV cache element type (llama.cpp's references used F16)
     * @param threads        kernel threads
     * @param batchInvariant {@code --deterministic}'s kernels
     */
    record Settings(KvPrecision kv, int threads, boolean batchInvariant) {

        /** llama-server's settings for the references: F16 KV cache, {@code -t 2}; our default kernels. */
        static final Settings REFERENCE = new Settings(KvPrecision.F16, 2, false);

        /** {@link #REFERENCE} with batch-invariant kernels ({@code --deterministic}). */
        static final Settings DETERMINISTIC = new Settings(KvPrecision.F16, 2, true);

        @Override
        public String toString() {
            return "KV " + kv + ", " + threads + (threads == 1 ? " thread" : " threads")
                    + (batchInvariant ? ", batch invariant" : "");
        }
    }

    private ParityRuns() {
    }

    /**
     * Teacher forcing over every prompt of {@code fixture}: for prompt p, the logits of its 32
     * reference steps (rows of vocabSize), step k's row after {@code prompt_ids + generated[:k]},
     * where {@code generated} is the reference's generation in {@code mode}.
     */
    static float[][][] teacherForced(ModelSource model, ParityFixture fixture, AttentionMode mode, ForwardPath path,
            Settings settings) {
        return fixture.prompts().stream().map(p -> {
            int[] generated = p.generated(mode);
            int[] tokens = new int[p.promptIds().length + generated.length - 1];
            System.arraycopy(p.promptIds(), 0, tokens, 0, p.promptIds().length);
            System.arraycopy(generated, 0, tokens, p.promptIds().length, generated.length - 1);
            return teacherForced(model, settings, tokens, p.promptIds().length - 1, path);
        }).toArray(float[][][]::new);
    }

    /**
     * The logits of positions {@code firstRow .. tokens.length - 1} after feeding {@code tokens}
     * along {@code path}: (tokens.length - firstRow) rows of vocabSize.
     */
    static float[][] teacherForced(ModelSource model, Settings settings, int[] tokens, int firstRow, ForwardPath path) {
        try (Backend backend = open(model, settings, tokens.length)) {
            float[][] rows = new float[tokens.length - firstRow][];
            for (int start = 0; start < tokens.length; start += path.chunk) {
                int end = (int) Math.min(tokens.length, (long) start + path.chunk);
                // the compared positions are a suffix of the sequence, so a chunk's are a suffix of the chunk
                int wanted = Math.max(0, end - Math.max(start, firstRow));
                StepOutput out = backend.forward(new Step(List.of(
                        new Slice(Arrays.copyOfRange(tokens, start, end), start, blockTable(end), wanted))));
                for (int r = 0; r < wanted; r++) {
                    rows[end - wanted + r - firstRow] = out.row(0, r);
                }
            }
            return rows;
        }
    }

    /** {@code n} greedy ids (argmax of the raw logits, lowest id on a tie) after {@code prompt}. */
    static int[] greedy(ModelSource model, Settings settings, int[] prompt, int n) {
        int length = prompt.length + n - 1;
        try (Backend backend = open(model, settings, length)) {
            int[] out = new int[n];
            float[] logits = backend.forward(new Step(List.of(new Slice(prompt, 0, blockTable(prompt.length), 1))))
                    .row(0, 0);
            for (int i = 0; i < n; i++) {
                out[i] = argmax(logits);
                if (i + 1 < n) {
                    int pos = prompt.length + i;
                    Slice decode = new Slice(new int[] {out[i]}, pos, blockTable(pos + 1), 1);
                    logits = backend.forward(new Step(List.of(decode))).row(0, 0);
                }
            }
            return out;
        }
    }

    static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }

    private static Backend open(ModelSource model, Settings settings, int positions) {
        Backend backend = new CpuBackendProvider().open(new BackendConfig(model, settings.kv(), settings.threads(),
                settings.batchInvariant()));
        backend.allocate(blocks(positions), BLOCK_SIZE, positions);
        return backend;
    }

    private static int blocks(int positions) {
        return (positions + BLOCK_SIZE - 1) / BLOCK_SIZE;
    }

    /** The blocks positions {@code 0 .. positions - 1} live in, as a block manager would hand them out. */
    private static int[] blockTable(int positions) {
        return IntStream.range(0, blocks(positions)).toArray();
    }
}
