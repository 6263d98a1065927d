package io.nereid.engine.cpu.parity;

/**
 * How a teacher-forced sequence goes through the backend: which kernel shapes compute it. Each
 * path asks for the logits of the same positions, so their results compare row for row.
 */
enum ForwardPath {
    /** (a) The whole sequence in one forward step: batched prefill, one logit row per compared position. */
    ONE_STEP(Integer.MAX_VALUE),
    /** (b) One token per step from the first token on: the decode path (one query row per step). */
    TOKEN_BY_TOKEN(1),
    /** (c) Chunked prefill, 7 tokens a step: chunks straddle the prompt's end and block boundaries. */
    CHUNKS_OF_7(7);

    /** Tokens per forward step (the last step may have fewer). */
    final int chunk;

    ForwardPath(int chunk) {
        this.chunk = chunk;
    }
}
