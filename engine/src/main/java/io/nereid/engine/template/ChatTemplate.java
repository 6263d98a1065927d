package io.nereid.engine.template;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A compiled HF chat template (the {@code chat_template} Jinja source of a model's
 * {@code tokenizer_config.json}), rendered the way HF transformers' {@code apply_chat_template}
 * renders it with Python Jinja2: {@code ImmutableSandboxedEnvironment(trim_blocks=True,
 * lstrip_blocks=True, extensions=[loopcontrols])}, no autoescape, a single trailing newline of the
 * source dropped, HF's {@code tojson}, {@code raise_exception} and {@code strftime_now}.
 *
 * <p>Lifecycle: {@link #compile} parses once (syntax errors surface here as
 * {@link TemplateSyntaxException}); {@link #render} may then be called any number of times. An
 * instance is immutable and thread-safe: each render keeps its state on its own stack. Render
 * failures are {@link TemplateRenderException} (a Python-style runtime error) or
 * {@link TemplateRaisedException} (the template rejected the conversation); both, like syntax
 * errors, are {@link TemplateException}s.
 */
public final class ChatTemplate {

    private static final List<String> BUILTIN_NAMES = List.of("chatml", "llama2", "llama3", "mistral", "phi3", "gemma");
    private static final Map<String, ChatTemplate> BUILTINS = new ConcurrentHashMap<>();

    private final String name;
    private final List<Node> body;
    private final String source;

    private ChatTemplate(String name, List<Node> body, String source) {
        this.name = name;
        this.body = body;
        this.source = source;
    }

    /** The Jinja source (what tells which tool-call syntax the model was taught). */
    public String source() {
        return source;
    }

    /**
     * Parses {@code source}.
     *
     * @param name names the template in error messages (e.g. the model id)
     * @throws TemplateSyntaxException with the line and reason when the source is not valid
     */
    public static ChatTemplate compile(String source, String name) {
        try {
            return new ChatTemplate(name, List.copyOf(Parser.parse(source, name)), source);
        } catch (StackOverflowError e) {
            throw new TemplateSyntaxException(name, 0, "template nested too deeply to parse");
        }
    }

    /**
     * One of the built-in templates, the canonical HF templates of model families whose
     * checkpoints sometimes ship without one: {@code chatml}, {@code llama2}, {@code llama3},
     * {@code mistral}, {@code phi3}, {@code gemma}.
     *
     * @throws IllegalArgumentException for any other name, listing the known ones
     */
    public static ChatTemplate builtin(String name) {
        if (!BUILTIN_NAMES.contains(name)) {
            throw new IllegalArgumentException("unknown built-in chat template '" + name + "'; known: "
                    + String.join(", ", BUILTIN_NAMES));
        }
        return BUILTINS.computeIfAbsent(name, n -> compile(readResource(n + ".jinja"), n));
    }

    /** The names {@link #builtin} accepts, in a stable order. */
    public static List<String> builtinNames() {
        return BUILTIN_NAMES;
    }

    private static String readResource(String file) {
        try (InputStream in = ChatTemplate.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("built-in chat template resource missing: " + file);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("reading built-in chat template " + file, e);
        }
    }

    /** The name given at compilation. */
    public String name() {
        return name;
    }

    /**
     * Renders the prompt for {@code ctx}. The template sees {@code messages},
     * {@code add_generation_prompt}, {@code tools}, {@code bos_token} and {@code eos_token} (the
     * last three only when not null) and each key of {@code ctx.extraContext()}.
     *
     * @throws TemplateRenderException  on a runtime error (type error, undefined access, ...)
     * @throws TemplateRaisedException  when the template calls {@code raise_exception}
     */
    public String render(ChatRequestContext ctx) {
        Map<String, Object> vars = new HashMap<>(ctx.extraContext());
        vars.put("messages", ctx.messages());
        vars.put("add_generation_prompt", ctx.addGenerationPrompt());
        if (ctx.tools() != null) {
            vars.put("tools", ctx.tools());
        }
        if (ctx.bosToken() != null) {
            vars.put("bos_token", ctx.bosToken());
        }
        if (ctx.eosToken() != null) {
            vars.put("eos_token", ctx.eosToken());
        }
        return render(vars, ctx.clock());
    }

    /** Renders with exactly {@code variables} (plus the globals); for tests and special callers. */
    String render(Map<String, Object> variables, Clock clock) {
        Map<String, Object> root = Globals.forRender(clock);
        root.putAll(variables);
        return new Evaluator(name, root).render(body);
    }

    @Override
    public String toString() {
        return "ChatTemplate[" + name + "]";
    }
}
