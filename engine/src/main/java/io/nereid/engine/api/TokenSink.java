package io.nereid.engine.api;

import java.util.List;

/**
 * Receives a request's output, per choice. All methods are called on the engine thread and must
 * not block (hop to another executor, e.g. a Vert.x context, and return). For each choice there
 * is exactly one terminal call, {@link #onFinish} or {@link #onError}, and no output after it.
 *
 * <p>Events come in engine steps: after the last {@code onDelta}/{@code onFinish}/{@code onError}
 * a step delivers to this sink, the engine calls {@link #onStepEnd()} once. Every event is followed
 * by an {@code onStepEnd} (cancellations, deadlines and shutdown included), so a sink may buffer
 * events and hand them on only at step end: a choice's last text and its finish then travel
 * together.
 */
public interface TokenSink {

    /**
     * New text of choice {@code choice} and the tokens it came from. {@code text} may be empty when
     * tokens were produced whose text is still held back (an incomplete UTF-8 character, a possible
     * stop string); {@code logprobs} has one entry per token when logprobs were requested, else is empty.
     */
    void onDelta(int choice, String text, int[] tokenIds, List<TokenLogprob> logprobs);

    /**
     * The prompt's log-probabilities, when the request asked for them
     * ({@link GenerationRequest#promptLogprobs()} >= 0): once per request (not per choice), in the
     * step that completes the prompt, before any {@code onDelta} or {@code onFinish} of that step.
     * Entry {@code i} scores the prompt token at position {@code i + 1} given the tokens before it
     * (the first prompt token has no logprob), so there are {@code promptTokens.length - 1}
     * entries. Not called when the request ends before its prompt is computed. Nothing by default.
     */
    default void onPromptLogprobs(List<TokenLogprob> logprobs) {
    }

    /**
     * An embedding request's vector ({@link GenerationRequest#pooling()}): once, in the step that
     * completes the prompt, before its {@code onFinish}. Not normalised (the front end applies what
     * the model defines). Nothing by default.
     */
    default void onEmbedding(float[] vector) {
    }

    /**
     * The choice ended; {@code stopReason} is the matched stop string or stop token id (vLLM's
     * {@code stop_reason}), null for EOS, length, cancellation or deadline.
     */
    void onFinish(int choice, FinishReason reason, Object stopReason, Usage usage);

    /** The choice failed inside the engine (a bug or a backend failure); nothing more follows. */
    void onError(int choice, EngineException error);

    /** The engine step that delivered the events since the previous call is over; nothing by default. */
    default void onStepEnd() {
    }
}
