package io.nereid.nativebackend.cuda;

import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import java.util.Arrays;
import java.util.List;

/**
 * A step as the kernels read it: every token's id, sequence (slice index) and position, the slices'
 * block tables as one {@code sequences x maxBlocks} matrix padded with -1, and which token rows need
 * logits or hidden states. Pure Java: built on the host, then copied to the device in one go.
 *
 * @param tokens     (tokens) ids
 * @param seqOf      (tokens) slice of each token
 * @param posOf      (tokens) position of each token
 * @param tables     (slices x maxBlocks) physical block ids, -1 past a table's end
 * @param maxBlocks  columns of {@code tables}
 * @param logitRows  token rows whose logits are computed, each slice's last ones in order: first the rows that
 *                   come back, slice by slice, then those of the slices whose tokens the backend chooses
 *                   ({@link Slice#choice()}), slice by slice, then the rows that score given tokens
 *                   ({@link Slice#scoring()}: a slice's first rows; its rows after them come back)
 * @param chosenRows how many of {@code logitRows} (before the scored ones) come back as the tokens chosen from them
 * @param hiddenRows token rows whose final hidden states come back (slices that asked)
 * @param scoredIds  (scored rows) the token each scored row scores, in the rows' order
 * @param scoredTops (scored rows) its alternatives
 */
record StepLayout(int[] tokens, int[] seqOf, int[] posOf, int[] tables, int maxBlocks, int[] logitRows, int chosenRows,
        int[] hiddenRows, int[] scoredIds, int[] scoredTops) {

    /**
     * The layout of {@code step}, checking what a kernel would otherwise read out of bounds.
     *
     * @throws IllegalArgumentException for a token outside the vocabulary, a position past
     *                                  {@code maxPositions}, or a block table too short for its positions
     */
    static StepLayout of(Step step, int vocabSize, int blockSize, int maxPositions, int numBlocks) {
        List<Slice> slices = step.slices();
        int n = step.tokens();
        int[] tokens = new int[n];
        int[] seqOf = new int[n];
        int[] posOf = new int[n];
        int maxBlocks = 1;
        int hidden = 0;
        int chosen = 0;
        int scored = 0;
        for (Slice s : slices) {
            maxBlocks = Math.max(maxBlocks, s.blockTable().length);
            hidden += s.hidden() ? s.tokens().length : 0;
            chosen += s.choice() != null ? s.logitRows() : 0;
            scored += s.scoring() != null ? s.scoring().ids().length : 0;
        }
        int[] scoredIds = new int[scored];
        int[] scoredTops = new int[scored];
        int[] tables = new int[slices.size() * maxBlocks];
        Arrays.fill(tables, -1);
        int[] logitRows = new int[step.logitRows()];
        int[] hiddenRows = new int[hidden];
        int t = 0;
        int r = 0;                                   // next row that comes back
        int cr = logitRows.length - scored - chosen; // next row whose token the backend chooses
        int sr = 0;                                  // next scored row (of the last `scored`)
        int hr = 0;
        for (int si = 0; si < slices.size(); si++) {
            Slice s = slices.get(si);
            if (s.endPos() > maxPositions) {
                throw new IllegalArgumentException("positions up to " + s.endPos() + " but the KV cache was allocated for "
                        + maxPositions);
            }
            int needed = (s.endPos() + blockSize - 1) / blockSize;
            if (s.blockTable().length < needed) {
                throw new IllegalArgumentException("slice " + si + ": a block table of " + s.blockTable().length
                        + " blocks for " + s.endPos() + " positions of " + blockSize);
            }
            for (int b = 0; b < s.blockTable().length; b++) {
                int block = s.blockTable()[b];
                if (block < 0 || block >= numBlocks) {
                    throw new IllegalArgumentException("slice " + si + ": block " + block + " outside the " + numBlocks
                            + " allocated");
                }
                tables[si * maxBlocks + b] = block;
            }
            for (int j = 0; j < s.tokens().length; j++, t++) {
                int token = s.tokens()[j];
                if (token < 0 || token >= vocabSize) {
                    throw new IllegalArgumentException("token id " + token + " outside the vocabulary");
                }
                tokens[t] = token;
                seqOf[t] = si;
                posOf[t] = s.startPos() + j;
                if (s.hidden()) {
                    hiddenRows[hr++] = t;
                }
            }
            int k = s.scoring() == null ? 0 : s.scoring().ids().length;
            for (int j = t - s.logitRows(); j < t; j++) {
                if (s.choice() != null) {
                    logitRows[cr++] = j;
                } else if (j - (t - s.logitRows()) < k) {
                    int id = s.scoring().ids()[j - (t - s.logitRows())];
                    if (id < 0 || id >= vocabSize) {
                        throw new IllegalArgumentException("scored token id " + id + " outside the vocabulary");
                    }
                    scoredIds[sr] = id;
                    scoredTops[sr] = s.scoring().topLogprobs();
                    logitRows[logitRows.length - scored + sr++] = j;
                } else {
                    logitRows[r++] = j;
                }
            }
        }
        return new StepLayout(tokens, seqOf, posOf, tables, maxBlocks, logitRows, chosen, hiddenRows, scoredIds,
                scoredTops);
    }

    /**
     * The block tables {@code stride} blocks apart (a graph's stride, fixed by its shape): each table cut to
     * {@code stride} blocks, or padded with -1 to it. A step whose positions all lie below {@code stride} blocks'
     * reads nothing past the cut.
     */
    int[] tables(int stride) {
        if (stride == maxBlocks) {
            return tables;
        }
        int rows = tables.length / maxBlocks;
        int[] out = new int[rows * stride];
        Arrays.fill(out, -1);
        for (int r = 0; r < rows; r++) {
            System.arraycopy(tables, r * maxBlocks, out, r * stride, Math.min(stride, maxBlocks));
        }
        return out;
    }

    int size() {
        return tokens.length;
    }

    /** One past the farthest position of the step: how far its attention reaches. */
    int positions() {
        int p = 0;
        for (int x : posOf) {
            p = Math.max(p, x + 1);
        }
        return p;
    }
}
