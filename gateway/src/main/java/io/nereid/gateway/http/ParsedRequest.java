package io.nereid.gateway.http;

import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.SamplingParams;
import java.util.List;
import java.util.Map;

/**
 * A validated {@code /v1/chat/completions} or {@code /v1/completions} request, defaults applied.
 *
 * @param messages      chat: the conversation, text content flattened to strings; else null
 * @param prompts       completions: the prompt texts (one, or a batch), or null when {@code promptTokens} is given
 * @param promptTokens  completions: the prompts already tokenized (one, or a batch), or null
 * @param maxTokens     most tokens per choice, or null: up to the context length
 * @param logprobs      report per-token log-probabilities ({@code sampling.topLogprobs()} alternatives)
 * @param echo          put the prompt (completions) or a final assistant message (chat, as vLLM) before each
 *                      choice's output
 * @param promptLogprobs vLLM's {@code prompt_logprobs}: alternatives per prompt token, -1 when not asked for
 * @param ignoredFields unknown fields, ignored (reported in {@code x-nereid-ignored-fields})
 * @param structured    what the output must match ({@code response_format}, {@code guided_*},
 *                      {@code structured_outputs}) and the field it came from, or null
 * @param tools         chat's tools, tool_choice and parallel_tool_calls, or null
 * @param reasoning     chat with a reasoning parser: how the thought is split off the answer; else null
 * @param templateKwargs vLLM's {@code chat_template_kwargs}: more chat-template variables (empty for none)
 */
public record ParsedRequest(Kind kind, String model, List<Map<String, Object>> messages, List<String> prompts,
        List<int[]> promptTokens, SamplingParams sampling, List<String> stop, int[] stopTokenIds, Integer maxTokens,
        int minTokens, boolean ignoreEos, int n, boolean stream, boolean includeUsage, int priority,
        boolean logprobs, boolean echo, int promptLogprobs, List<String> ignoredFields,
        StructuredOutputs.Parsed structured, ToolsRequest tools, ReasoningParser.Format reasoning,
        Map<String, Object> templateKwargs) {

    /** This request for a model that thinks: the thought split off, a constraint applying to the answer only. */
    ParsedRequest withReasoning(ReasoningParser.Format format) {
        StructuredOutputs.Parsed s = structured == null ? null : new StructuredOutputs.Parsed(
                new io.nereid.engine.api.Constraint.AfterThinking(structured.constraint(), format.startsInThought), structured.param());
        return new ParsedRequest(kind, model, messages, prompts, promptTokens, sampling, stop, stopTokenIds, maxTokens,
                minTokens, ignoreEos, n, stream, includeUsage, priority, logprobs, echo, promptLogprobs, ignoredFields, s,
                tools, format, templateKwargs);
    }

    /** This request with the model's tool-call syntax known: its calls are constrained and read back. */
    ParsedRequest withToolFormat(io.nereid.engine.api.ToolCallFormat format) {
        ToolsRequest t = tools.withFormat(format);
        if (t.active() && structured != null) {
            t = t.withAnswer(structured);   // response_format with tools: an answer that is not a call follows it
        }
        return new ParsedRequest(kind, model, messages, prompts, promptTokens, sampling, stop, stopTokenIds, maxTokens,
                minTokens, ignoreEos, n, stream, includeUsage, priority, logprobs, echo, promptLogprobs, ignoredFields,
                t.active() ? new StructuredOutputs.Parsed(t.constraint(), t.toolsField()) : structured, t, reasoning, templateKwargs);
    }

    /** Whether tool calls are read back out of the output. */
    boolean readsToolCalls() {
        return tools != null && tools.active() && tools.format() != null;
    }

    public enum Kind { CHAT, COMPLETION }

    /** How many prompts the request generates for (each with {@code n} choices): 1 for chat. */
    public int promptCount() {
        return prompts != null ? prompts.size() : promptTokens != null ? promptTokens.size() : 1;
    }

    /** Completions with echo and logprobs: the echoed prompt's tokens are scored too (OpenAI's legacy API). */
    public boolean echoLogprobs() {
        return kind == Kind.COMPLETION && echo && logprobs;
    }

    /** Alternatives per prompt token the engine must compute, or -1: none. */
    public int enginePromptLogprobs() {
        return Math.max(promptLogprobs, echoLogprobs() ? sampling.topLogprobs() : -1);
    }

    /**
     * The engine request for one prompt of this request.
     *
     * @throws ApiException 400 naming the field (as this route names it) when the engine refuses an option
     */
    public GenerationRequest engineRequest(String id, int[] prompt, int maxTokens) {
        try {
            return GenerationRequest.builder(id, prompt).sampling(sampling).stop(stop).stopTokenIds(stopTokenIds)
                    .maxTokens(maxTokens).minTokens(minTokens).ignoreEos(ignoreEos).n(n).logprobs(logprobs)
                    .priority(priority).promptLogprobs(enginePromptLogprobs())
                    .constraint(structured == null ? null : structured.constraint()).build();
        } catch (RequestValidationException e) {
            throw invalid(e);
        }
    }

    /** The 400 for an engine refusal of this request: a constraint's under the field it came from. */
    public ApiException invalid(RequestValidationException e) {
        if ("constraint".equals(e.param()) && structured != null) {
            return ApiException.invalid(structured.param(), e.getMessage());
        }
        return invalid(kind, e);
    }

    /** The 400 for an engine refusal, naming the field as the route {@code kind} names it. */
    public static ApiException invalid(Kind kind, RequestValidationException e) {
        return ApiException.invalid(wireName(kind, e.param()), e.getMessage());
    }

    /**
     * The request field an engine field comes from: completions' legacy {@code logprobs: N} is the
     * engine's {@code top_logprobs}; chat's {@code max_completion_tokens} its {@code max_tokens}, and
     * chat's prompt comes from {@code messages}.
     */
    static String wireName(Kind kind, String engineField) {
        if (engineField == null) {
            return null;
        }
        return switch (kind) {
            case COMPLETION -> engineField.equals("top_logprobs") ? "logprobs" : engineField;
            case CHAT -> switch (engineField) {
                case "max_tokens" -> "max_completion_tokens";
                case "prompt" -> "messages";
                default -> engineField;
            };
        };
    }
}
