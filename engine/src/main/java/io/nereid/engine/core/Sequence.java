package io.nereid.engine.core;

import io.nereid.engine.sampling.SamplingChain;
import io.nereid.engine.text.IncrementalDetokenizer;
import io.nereid.engine.text.StopStringMatcher;
import io.nereid.kvcache.BlockTable;
import java.util.Arrays;

/**
 * One choice of a request as the scheduler sees it: its tokens (prompt, then output), how many
 * of them have K/V computed, its block table while it holds blocks, and its per-choice output
 * state (sampling chain, detokenizer, stop matcher). Engine thread only.
 */
final class Sequence {

    final RequestState request;
    final int choice;
    final SamplingChain chain;
    final IncrementalDetokenizer detokenizer;
    final StopStringMatcher stops;

    private int[] tokens;       // (length) prompt then output
    private int length;
    int computed;               // tokens whose K/V is in the cache
    int generated;              // output tokens
    int cachedTokens;           // prompt tokens taken from the prefix cache at first admission
    BlockTable table;           // null while waiting
    boolean finished;
    boolean scheduledThisStep;
    long firstTokenNanos;

    Sequence(RequestState request, int choice, SamplingChain chain, IncrementalDetokenizer detokenizer, StopStringMatcher stops) {
        this.request = request;
        this.choice = choice;
        this.chain = chain;
        this.detokenizer = detokenizer;
        this.stops = stops;
        int[] prompt = request.request.promptTokens();
        this.tokens = Arrays.copyOf(prompt, prompt.length + 16);
        this.length = prompt.length;
    }

    /** A copy of {@code parent} at the moment its prompt completed (n > 1): shares its blocks. */
    Sequence(Sequence parent, int choice, SamplingChain chain, IncrementalDetokenizer detokenizer, StopStringMatcher stops) {
        this.request = parent.request;
        this.choice = choice;
        this.chain = chain;
        this.detokenizer = detokenizer;
        this.stops = stops;
        this.tokens = parent.tokens.clone();
        this.length = parent.length;
        this.computed = parent.computed;
        this.cachedTokens = parent.cachedTokens;
        this.table = parent.table.fork();
    }

    int length() {
        return length;
    }

    int[] tokens() {
        return Arrays.copyOf(tokens, length);
    }

    int[] tokens(int from, int to) {
        return Arrays.copyOfRange(tokens, from, to);
    }

    void add(int token) {
        if (length == tokens.length) {
            tokens = Arrays.copyOf(tokens, length * 2);
        }
        tokens[length++] = token;
    }

    int promptLength() {
        return request.request.promptTokens().length;
    }

    /** Tokens known but not computed: a prompt chunk still to prefill, or the last sampled token. */
    int pending() {
        return length - computed;
    }
}
