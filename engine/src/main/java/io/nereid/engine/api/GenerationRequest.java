package io.nereid.engine.api;

import io.nereid.engine.text.StopStringMatcher;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One generation request in engine terms (no OpenAI types): the front end has already rendered the
 * chat template and tokenized. Built with {@link #builder(String, int[])}; {@link Builder#build()}
 * is the one place that checks each field on its own (what also depends on the model — the
 * vocabulary, the context, the engine's limits — {@link Engine#validate} checks), throwing
 * {@link RequestValidationException} naming the field. Immutable.
 */
public final class GenerationRequest {

    /** Most stop strings per request (OpenAI allows 4; vLLM any number): each costs a little per generated token. */
    public static final int MAX_STOPS = 64;
    /** Most UTF-16 characters in one stop string. */
    public static final int MAX_STOP_CHARS = 1024;
    /** Most stop token ids per request: each generated token is compared with every one. */
    public static final int MAX_STOP_TOKEN_IDS = 1024;

    private final String id;
    private final int[] promptTokens;
    private final SamplingParams sampling;
    private final List<String> stop;
    private final int[] stopTokenIds;
    private final int maxTokens;
    private final int minTokens;
    private final boolean ignoreEos;
    private final int n;
    private final boolean logprobs;
    private final int priority;
    private final Instant deadline;
    private final int promptLogprobs;
    private final Constraint constraint;
    private final Pooling pooling;

    private GenerationRequest(Builder b) {
        this.id = b.id;
        this.promptTokens = b.promptTokens.clone();
        this.sampling = b.sampling;
        this.stop = List.copyOf(b.stop);
        this.stopTokenIds = b.stopTokenIds.clone();
        this.maxTokens = b.maxTokens;
        this.minTokens = b.minTokens;
        this.ignoreEos = b.ignoreEos;
        this.n = b.n;
        this.logprobs = b.logprobs;
        this.priority = b.priority;
        this.deadline = b.deadline;
        this.promptLogprobs = b.promptLogprobs;
        this.constraint = b.constraint;
        this.pooling = b.pooling;
    }

    /** A request for {@code promptTokens} with every default: greedy, 16 tokens, one choice, no stops. */
    public static Builder builder(String id, int[] promptTokens) {
        return new Builder(id, promptTokens);
    }

    /** Greedy, no stops, one choice: for tests and simple callers. */
    public static GenerationRequest greedy(String id, int[] prompt, int maxTokens) {
        return builder(id, prompt).maxTokens(maxTokens).build();
    }

    /** Unique id (for logs and metrics). */
    public String id() {
        return id;
    }

    /** The prompt's token ids (at least one). */
    public int[] promptTokens() {
        return promptTokens.clone();
    }

    /** The prompt's length, without copying it. */
    public int promptLength() {
        return promptTokens.length;
    }

    /** Sampling parameters; {@code sampling.topLogprobs()} alternatives are reported when {@link #logprobs()}. */
    public SamplingParams sampling() {
        return sampling;
    }

    /** Stop strings (not included in the output). */
    public List<String> stop() {
        return stop;
    }

    /** Token ids that end the choice (beyond the model's EOS tokens). */
    public int[] stopTokenIds() {
        return stopTokenIds.clone();
    }

    /** Most tokens to generate per choice (0 only computes the prompt, e.g. to score it with {@link #promptLogprobs()}). */
    public int maxTokens() {
        return maxTokens;
    }

    /** EOS tokens, stop token ids and stop strings are suppressed until this many tokens. */
    public int minTokens() {
        return minTokens;
    }

    /** Keep generating after the model's EOS tokens. */
    public boolean ignoreEos() {
        return ignoreEos;
    }

    /** Choices; the prompt is computed once and forked. */
    public int n() {
        return n;
    }

    /** Report log-probabilities per generated token. */
    public boolean logprobs() {
        return logprobs;
    }

    /** Lower is served first and preempted last (vLLM's convention). */
    public int priority() {
        return priority;
    }

    /** When to give up (finish reason DEADLINE), or null. */
    public Instant deadline() {
        return deadline;
    }

    /**
     * Report the log-probability of every prompt token after the first with this many alternatives
     * ({@link TokenSink#onPromptLogprobs}); -1: off. Such a request computes its whole prompt: it
     * takes nothing from the prefix cache (as vLLM).
     */
    /** What the output must match, or null. */
    public Constraint constraint() {
        return constraint;
    }

    public int promptLogprobs() {
        return promptLogprobs;
    }

    /**
     * For an embedding request, how its prompt's final hidden states are pooled (the engine computes
     * the prompt only and hands the pooled vector to {@link TokenSink#onEmbedding}); null to generate.
     */
    public Pooling pooling() {
        return pooling;
    }

    @Override
    public String toString() {
        return "GenerationRequest[" + id + ", " + promptTokens.length + " prompt tokens, max " + maxTokens + ", n " + n + "]";
    }

    /** Builds a {@link GenerationRequest}; not thread-safe. */
    public static final class Builder {
        private final String id;
        private final int[] promptTokens;
        private SamplingParams sampling = SamplingParams.GREEDY;
        private List<String> stop = List.of();
        private int[] stopTokenIds = new int[0];
        private int maxTokens = 16;
        private int minTokens;
        private boolean ignoreEos;
        private int n = 1;
        private boolean logprobs;
        private int priority;
        private Instant deadline;
        private int promptLogprobs = -1;
        private Constraint constraint;
        private Pooling pooling;

        private Builder(String id, int[] promptTokens) {
            this.id = Objects.requireNonNull(id, "id");
            this.promptTokens = Objects.requireNonNull(promptTokens, "promptTokens");
        }

        public Builder sampling(SamplingParams p) {
            this.sampling = Objects.requireNonNull(p, "sampling");
            return this;
        }

        public Builder stop(List<String> stops) {
            this.stop = Objects.requireNonNull(stops, "stop");
            return this;
        }

        public Builder stopTokenIds(int[] ids) {
            this.stopTokenIds = Objects.requireNonNull(ids, "stopTokenIds");
            return this;
        }

        public Builder maxTokens(int tokens) {
            this.maxTokens = tokens;
            return this;
        }

        public Builder minTokens(int tokens) {
            this.minTokens = tokens;
            return this;
        }

        public Builder ignoreEos(boolean ignore) {
            this.ignoreEos = ignore;
            return this;
        }

        public Builder n(int choices) {
            this.n = choices;
            return this;
        }

        public Builder logprobs(boolean report) {
            this.logprobs = report;
            return this;
        }

        public Builder priority(int p) {
            this.priority = p;
            return this;
        }

        public Builder deadline(Instant when) {
            this.deadline = when;
            return this;
        }

        /** What the output must match (structured output); null for none. */
        public Builder constraint(Constraint c) {
            this.constraint = c;
            return this;
        }

        public Builder promptLogprobs(int alternatives) {
            this.promptLogprobs = alternatives;
            return this;
        }

        /** An embedding request pooled this way (null: generate); it generates nothing (max_tokens 0). */
        public Builder pooling(Pooling p) {
            this.pooling = p;
            return this;
        }

        /**
         * Checks every field on its own and together with the others (the model's limits are
         * {@link Engine#validate}'s).
         *
         * @throws RequestValidationException naming the first bad field
         */
        public GenerationRequest build() {
            if (promptTokens.length == 0) {
                throw new RequestValidationException("prompt", "the prompt is empty");
            }
            for (int t : promptTokens) {
                if (t < 0) {
                    throw new RequestValidationException("prompt", "token id " + t + " is negative");
                }
            }
            if (n < 1) {
                throw new RequestValidationException("n", "n must be at least 1, got " + n);
            }
            if (maxTokens < 0) {
                throw new RequestValidationException("max_tokens", "max_tokens must be at least 0, got " + maxTokens);
            }
            if (minTokens < 0 || minTokens > maxTokens) {
                throw new RequestValidationException("min_tokens", "min_tokens must be in [0, max_tokens], got " + minTokens);
            }
            if (promptLogprobs < -1 || promptLogprobs > SamplingParams.MAX_LOGPROBS) {
                throw new RequestValidationException("prompt_logprobs", "prompt_logprobs must be in [0, "
                        + SamplingParams.MAX_LOGPROBS + "], got " + promptLogprobs);
            }
            if (pooling != null && (maxTokens != 0 || n != 1 || logprobs || promptLogprobs >= 0 || constraint != null)) {
                throw new RequestValidationException("pooling", "an embedding request generates nothing: max_tokens 0,"
                        + " one choice, no logprobs and no constraint");
            }
            checkStops();
            return new GenerationRequest(this);
        }

        private void checkStops() {
            if (stop.size() > MAX_STOPS) {
                throw new RequestValidationException("stop", "at most " + MAX_STOPS + " stop strings, got " + stop.size());
            }
            for (int i = 0; i < stop.size(); i++) {
                String problem = StopStringMatcher.problem(i, stop.get(i));
                if (problem != null) {
                    throw new RequestValidationException("stop", problem);
                }
                if (stop.get(i).length() > MAX_STOP_CHARS) {
                    throw new RequestValidationException("stop", "stop string " + i + " has " + stop.get(i).length()
                            + " characters; at most " + MAX_STOP_CHARS);
                }
            }
            if (stopTokenIds.length > MAX_STOP_TOKEN_IDS) {
                throw new RequestValidationException("stop_token_ids", "at most " + MAX_STOP_TOKEN_IDS
                        + " stop token ids, got " + stopTokenIds.length);
            }
            for (int id : stopTokenIds) {
                if (id < 0) {
                    throw new RequestValidationException("stop_token_ids", "stop token id " + id + " is negative");
                }
            }
        }
    }
}
