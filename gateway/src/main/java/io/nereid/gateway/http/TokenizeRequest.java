package io.nereid.gateway.http;

import java.util.List;
import java.util.Map;

/**
 * A validated {@code POST /tokenize}: either a {@code prompt} or chat {@code messages}.
 *
 * @param model               the model named, or null (vLLM makes it optional)
 * @param prompt              the text to tokenize, or null when {@code messages} is given
 * @param messages            the conversation to render through the chat template, or null
 * @param addGenerationPrompt chat: end with the assistant header (default true)
 * @param addSpecialTokens    add the model's BOS/EOS (default: true for a prompt, false for chat,
 *                            whose template writes its own)
 */
public record TokenizeRequest(String model, String prompt, List<Map<String, Object>> messages,
        boolean addGenerationPrompt, boolean addSpecialTokens) {
}
