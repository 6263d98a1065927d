package io.nereid.gateway.http;

import io.nereid.engine.api.Engine;
import java.util.List;
import java.util.Map;

/**
 * What the HTTP layer needs of the served model. {@link #renderChat} and {@link #tokenize} may
 * block and are called on the worker pool only; the rest is cheap and thread-safe.
 */
public interface ModelService {

    /** The {@code model} clients send. */
    String name();

    /** e.g. "demo, random weights", or null. */
    String description();

    /** Unix seconds the model was loaded. */
    long created();

    /** Prompt + generated tokens of one sequence. */
    int maxModelLen();

    Engine engine();

    boolean hasChatTemplate();

    /** The conversation through the chat template, ending with the assistant header. */
    String renderChat(List<Map<String, Object>> messages);

    int[] tokenize(String text, boolean addSpecial);
}
