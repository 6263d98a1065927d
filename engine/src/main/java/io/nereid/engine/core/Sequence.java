package io.nereid.engine.core;

import io.nereid.kvcache.BlockTable;
import java.util.Arrays;

/**
 * One choice of a request as the {@link Scheduler} sees it: its tokens (prompt, then output), how
 * many of them have K/V computed, and its block table while it holds blocks; plus its
 * {@link ChoiceOutput}. Engine thread only.
 *
 * <pre>
 *   tokens   [ prompt ........ | output .... ]
 *   computed [ K/V in cache ......... ]          computed ≤ length
 *   pending                          [ ... ]     length - computed: the next slice's tokens
 * </pre>
 */
final class Sequence {

    /** Where the scheduler keeps it. */
    enum Status { WAITING, RUNNING, FINISHED }

    final RequestState request;
    final int choice;
    private final ChoiceOutput output;
    private int[] tokens;       // (capacity >= length) prompt then output
    private int length;
    private int computed;       // tokens whose K/V is in the cache
    private int cachedTokens;   // prompt tokens taken from the prefix cache at first admission
    private BlockTable table;   // null unless RUNNING
    private Status status = Status.WAITING;
    boolean scheduledThisStep;  // scheduler scratch: in the plan being built (not a preemption victim)
    /** The distributions the last proposal's drafts were drawn from (a draft model sampling), or null: drafts q puts all on. */
    io.nereid.engine.sampling.Probabilities[] draftQ;

    /** Choice {@code choice} of {@code request}, at its prompt. */
    Sequence(RequestState request, int choice, ChoiceOutput output) {
        this.request = request;
        this.choice = choice;
        this.output = output;
        int[] prompt = request.request.promptTokens();
        this.tokens = Arrays.copyOf(prompt, prompt.length + 16);
        this.length = prompt.length;
    }

    /** A copy of {@code parent} (n > 1): same tokens and computed K/V, its blocks shared through {@code table}. */
    Sequence(Sequence parent, int choice, ChoiceOutput output, BlockTable table) {
        this.request = parent.request;
        this.choice = choice;
        this.output = output;
        this.tokens = parent.tokens.clone();
        this.length = parent.length;
        this.computed = parent.computed;
        this.cachedTokens = parent.cachedTokens;
        this.table = table;
        this.status = Status.RUNNING;
    }

    ChoiceOutput output() {
        return output;
    }

    int length() {
        return length;
    }

    int[] tokens() {
        return Arrays.copyOf(tokens, length);
    }

    /** The backing array, valid in {@code [0, length())}: read only, for proposers that scan the history. */
    int[] tokenArray() {
        return tokens;
    }

    int[] tokens(int from, int to) {
        return Arrays.copyOfRange(tokens, from, to);
    }

    int promptLength() {
        return request.request.promptTokens().length;
    }

    int computed() {
        return computed;
    }

    /** Tokens known but not computed: a prompt chunk still to prefill, or the last sampled token. */
    int pending() {
        return length - computed;
    }

    int cachedTokens() {
        return cachedTokens;
    }

    BlockTable table() {
        return table;
    }

    Status status() {
        return status;
    }

    boolean finished() {
        return status == Status.FINISHED;
    }

    boolean running() {
        return status == Status.RUNNING;
    }

    void append(int token) {
        if (length == tokens.length) {
            tokens = Arrays.copyOf(tokens, length * 2);
        }
        tokens[length++] = token;
    }

    /** Admitted with {@code table}, whose first {@code computed} tokens are cached; the first admission records them. */
    void admit(BlockTable table, int computed, boolean first) {
        this.table = table;
        this.computed = computed;
        this.status = Status.RUNNING;
        if (first) {
            this.cachedTokens = computed;
        }
    }

    /** {@code n} more tokens have K/V in the cache. */
    void advance(int n) {
        if (n < 0 || computed + n > length) {
            throw new IllegalStateException("cannot advance " + n + " tokens: computed " + computed + " of " + length);
        }
        computed += n;
    }

    /** Back to waiting, its blocks gone (preempted: it will be recomputed from its tokens). */
    BlockTable preempt() {
        BlockTable t = table;
        table = null;
        computed = 0;
        status = Status.WAITING;
        return t;
    }

    /** Finished: no more computing; returns the table to free, if it held one. */
    BlockTable finish() {
        BlockTable t = table;
        table = null;
        status = Status.FINISHED;
        return t;
    }

    @Override
    public String toString() {
        return request.id() + "/" + choice + "[" + status + ", computed " + computed + " of " + length + "]";
    }
}
