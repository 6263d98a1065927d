package io.nereid.engine.template;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Prompt rendering cost per request, for a 20-message conversation (a system prompt, then
 * alternating user/assistant turns of a few sentences each):
 * <ul>
 *   <li>{@code llama31}: the Llama 3.1 8B Instruct template (system block, date, trim per message);</li>
 *   <li>{@code qwen3}: the Qwen3 template (reverse scan with a namespace, think-tag splitting);</li>
 *   <li>{@code baselineChatmlStringBuilder}: the same messages concatenated in ChatML by hand with a
 *       {@code StringBuilder}, the floor any template rendering pays (read results as a ratio to it);</li>
 *   <li>{@code compileQwen3}: lexing and parsing the Qwen3 template once (paid per model load).</li>
 * </ul>
 * The templates come from the shared fixtures: {@code -Dnereid.fixtures=DIR}, or the first
 * {@code shared/fixtures} found beside the working directory or one of its parents.
 * Run: {@code bin/nereid jmh engine ChatTemplateBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ChatTemplateBenchmark {

    static final int MESSAGES = 20;

    String qwen3Source;
    ChatTemplate llama31;
    ChatTemplate qwen3;
    ChatRequestContext llamaContext;
    ChatRequestContext qwenContext;
    List<Map<String, Object>> messages;

    @Setup
    public void setUp() throws IOException {
        Path templates = fixtures().resolve("templates");
        llama31 = ChatTemplate.compile(Files.readString(templates.resolve("meta-llama-Llama-3.1-8B-Instruct.jinja")),
                "llama-3.1");
        qwen3Source = Files.readString(templates.resolve("Qwen-Qwen3.jinja"));
        qwen3 = ChatTemplate.compile(qwen3Source, "qwen3");
        messages = conversation();
        Clock clock = Clock.fixed(Instant.parse("2024-07-26T00:00:00Z"), ZoneOffset.UTC);
        llamaContext = new ChatRequestContext(messages, null, true, "<|begin_of_text|>", "<|eot_id|>", Map.of(), clock);
        qwenContext = new ChatRequestContext(messages, null, true, null, "<|im_end|>", Map.of(), clock);
    }

    static Path fixtures() {
        String configured = System.getProperty("nereid.fixtures");
        if (configured != null) {
            return Path.of(configured);
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            for (Path candidate : List.of(dir.resolve("shared/fixtures"), dir.resolveSibling("shared/fixtures"))) {
                if (Files.isDirectory(candidate.resolve("templates"))) {
                    return candidate;
                }
            }
        }
        throw new IllegalStateException("fixtures not found: pass -Dnereid.fixtures=DIR (the shared/fixtures folder)");
    }

    static List<Map<String, Object>> conversation() {
        List<Map<String, Object>> out = new ArrayList<>(MESSAGES);
        out.add(message("system", "You are a helpful assistant. Answer concisely and cite sources when you can."));
        for (int i = 1; i < MESSAGES; i++) {
            out.add(message(i % 2 == 1 ? "user" : "assistant", (i % 2 == 1 ? "Question " : "Answer ") + i
                    + ": the quick brown fox jumps over the lazy dog, then considers the weather in Paris"
                    + " and whether a café au lait is warranted. "));
        }
        return List.copyOf(out);
    }

    private static Map<String, Object> message(String role, String content) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("role", role);
        m.put("content", content);
        return m;
    }

    @Benchmark
    public String llama31() {
        return llama31.render(llamaContext);
    }

    @Benchmark
    public String qwen3() {
        return qwen3.render(qwenContext);
    }

    @Benchmark
    public String baselineChatmlStringBuilder() {
        StringBuilder sb = new StringBuilder(4096);
        for (Map<String, Object> m : messages) {
            sb.append("<|im_start|>").append(m.get("role")).append('\n').append(m.get("content"))
                    .append("<|im_end|>\n");
        }
        return sb.append("<|im_start|>assistant\n").toString();
    }

    @Benchmark
    public ChatTemplate compileQwen3() {
        return ChatTemplate.compile(qwen3Source, "qwen3");
    }
}
