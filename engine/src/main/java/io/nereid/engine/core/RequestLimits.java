package io.nereid.engine.core;

import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestValidationException;
import java.util.Map;

/**
 * What a request may ask of this engine beyond what {@link GenerationRequest.Builder#build()}
 * checks on its own: token ids inside the model's vocabulary (prompt, logit_bias, stop token ids),
 * at most {@code maxNumSeqs} choices, prompt + max_tokens within the context and the KV pool.
 * Pure and thread-safe.
 *
 * @param vocabSize   token ids are in {@code [0, vocabSize)}
 * @param maxNumSeqs  most choices of one request (they run together once the prompt is computed)
 * @param maxModelLen prompt + generated tokens of one sequence
 * @param numBlocks   KV blocks in the pool (the null block included)
 * @param blockSize   tokens per KV block
 */
record RequestLimits(int vocabSize, int maxNumSeqs, int maxModelLen, int numBlocks, int blockSize) {

    RequestLimits(EngineConfig c, int vocabSize) {
        this(vocabSize, c.maxNumSeqs(), c.maxModelLen(), c.numBlocks(), c.blockSize());
    }

    /** @throws RequestValidationException naming the first field over a limit */
    void check(GenerationRequest r) {
        if (r.n() > maxNumSeqs) {
            throw new RequestValidationException("n", "n must be in [1, " + maxNumSeqs + "], got " + r.n());
        }
        for (int t : r.promptTokens()) {
            if (t >= vocabSize) {
                throw new RequestValidationException("prompt", "token id " + t + " is outside the vocabulary of " + vocabSize);
            }
        }
        for (Map.Entry<Integer, Float> e : r.sampling().logitBias().entrySet()) {
            if (e.getKey() < 0 || e.getKey() >= vocabSize) {
                throw new RequestValidationException("logit_bias", "logit_bias names token " + e.getKey()
                        + ", outside the vocabulary [0, " + vocabSize + ")");
            }
        }
        for (int id : r.stopTokenIds()) {
            if (id >= vocabSize) {
                throw new RequestValidationException("stop_token_ids", "stop token id " + id
                        + " is outside the vocabulary [0, " + vocabSize + ")");
            }
        }
        int prompt = r.promptLength();
        if ((long) prompt + r.maxTokens() > maxModelLen) {
            throw new RequestValidationException("max_tokens", "prompt (" + prompt + " tokens) + max_tokens (" + r.maxTokens()
                    + ") exceeds the model's context of " + maxModelLen + " tokens");
        }
        long blocks = ((long) prompt + r.maxTokens() + blockSize - 1) / blockSize;
        if (blocks > numBlocks - 1) {
            throw new RequestValidationException("max_tokens", "prompt + max_tokens needs " + blocks
                    + " KV blocks but the whole pool has " + (numBlocks - 1));
        }
    }
}
