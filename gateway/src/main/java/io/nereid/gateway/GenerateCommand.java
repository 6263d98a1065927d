package io.nereid.gateway;

import io.nereid.engine.kernel.ComputePool;
import io.nereid.engine.kernel.Kernels;
import io.nereid.engine.model.CpuForward;
import io.nereid.engine.model.CpuModel;
import io.nereid.engine.model.Generator;
import io.nereid.engine.model.KvPrecision;
import io.nereid.engine.model.ModelLoadException;
import io.nereid.engine.model.RangeRunner;
import io.nereid.engine.sampling.Sampler;
import io.nereid.engine.sampling.SamplingParams;
import io.nereid.engine.text.IncrementalDetokenizer;
import java.io.PrintStream;
import java.nio.file.Path;
import java.security.SecureRandom;
import io.nereid.engine.template.ChatTemplate;
import io.nereid.engine.template.ChatTemplates;
import io.nereid.engine.template.TemplateException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code bin/nereid generate}: loads a model (GGUF file or Hugging Face directory), streams a completion of a prompt to stdout and
 * prints prompt and decode speed to stderr. A single sequence on the CPU backend; the server
 * batches many.
 */
final class GenerateCommand {

    static final String USAGE = """
            usage: bin/nereid generate --model FILE.gguf|HF_DIR --prompt TEXT [options]
                   bin/nereid generate --model FILE.gguf|HF_DIR --batch PROMPTS.jsonl [options]
              --batch FILE        offline mode (MLPerf "Offline"): every line {"prompt": ..., optional
                                  "max_tokens"} goes through the batching engine at once; prints one
                                  JSON line per prompt and the total output tok/s
              --max-tokens N      tokens to generate (default 128)
              --temperature T     0 = greedy (default 0.8)
              --top-k K           (default -1: off)      --top-p P   (default 0.95)
              --min-p P           (default 0: off)       --seed S    (default: random)
              --repetition-penalty R (default 1: off)
              --ignore-eos        keep going after end-of-sequence tokens
              --chat              send --prompt as a user message through the chat template
              --system TEXT       with --chat: a system message first
              --chat-template T   with --chat: a built-in (chatml, llama2, llama3, mistral, phi3,
                                  gemma) or a .jinja file instead of the model's own template
              --context N         context length (default: the model's context_length)
              --threads N         kernel threads (default: available processors)
              --prefill-chunk N   prompt tokens per forward step (default 512)
              --kv-type f16|f32   KV cache element type (default f16, as llama.cpp: half the
                                  memory of f32; K and V round to 11 significant bits)
            """;

    private GenerateCommand() {
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        Map<String, String> opt = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--ignore-eos") || a.equals("--help") || a.equals("--chat")) {
                opt.put(a, "true");
            } else if (a.startsWith("--") && i + 1 < args.length) {
                opt.put(a, args[++i]);
            } else {
                err.println("nereid generate: unexpected argument '" + a + "'\n" + USAGE);
                return 64;
            }
        }
        if (opt.containsKey("--help")) {
            out.print(USAGE);
            return 0;
        }
        if (!opt.containsKey("--model") || !(opt.containsKey("--prompt") || opt.containsKey("--batch"))) {
            err.println("nereid generate: --model and --prompt (or --batch) are required\n" + USAGE);
            return 64;
        }
        try {
            return generate(opt, out, err);
        } catch (NumberFormatException e) {
            err.println("nereid generate: not a number: " + e.getMessage());
            return 64;
        } catch (IllegalArgumentException | ModelLoadException | TemplateException e) {
            err.println("nereid generate: " + e.getMessage());
            return 1;
        }
    }

    private static int generate(Map<String, String> opt, PrintStream out, PrintStream err) {
        long seed = opt.containsKey("--seed") ? Long.parseLong(opt.get("--seed")) : new SecureRandom().nextLong();
        SamplingParams params = new SamplingParams(Float.parseFloat(opt.getOrDefault("--temperature", "0.8")),
                Integer.parseInt(opt.getOrDefault("--top-k", "-1")), Float.parseFloat(opt.getOrDefault("--top-p", "0.95")),
                Float.parseFloat(opt.getOrDefault("--min-p", "0")),
                Float.parseFloat(opt.getOrDefault("--repetition-penalty", "1")), 0f, 0f, Map.of(), seed, 0);
        int maxTokens = Integer.parseInt(opt.getOrDefault("--max-tokens", "128"));
        int threads = Integer.parseInt(opt.getOrDefault("--threads", Integer.toString(Runtime.getRuntime().availableProcessors())));
        KvPrecision kvType = KvPrecision.parse(opt.getOrDefault("--kv-type", "f16"));
        try (CpuModel model = CpuModel.open(Path.of(opt.get("--model")));
                ComputePool pool = new ComputePool(new ComputePool.Config(threads))) {
            if (opt.containsKey("--batch")) {
                return OfflineBatch.run(model, pool, params, maxTokens, opt, out, err);
            }
            int context = Integer.parseInt(opt.getOrDefault("--context", Integer.toString(model.config().contextLength())));
            String text = opt.containsKey("--chat") ? chatPrompt(model, opt) : opt.get("--prompt");
            // A rendered chat template writes its own BOS text (vLLM: add_special_tokens=False).
            int[] prompt = model.tokenizer().encode(text, !opt.containsKey("--chat"), true);
            if (prompt.length + maxTokens > context) {
                throw new IllegalArgumentException("prompt (" + prompt.length + " tokens) + --max-tokens " + maxTokens
                        + " exceeds the context of " + context + " (use --context)");
            }
            RangeRunner runner = (start, end, minChunk, body) -> pool.parallelFor(start, end, minChunk, body::run);
            CpuForward forward = model.forward(Kernels.provider(), runner, context);
            Generator generator = new Generator(forward, context, 16, Integer.parseInt(opt.getOrDefault("--prefill-chunk", "512")),
                    kvType);
            IncrementalDetokenizer detok = new IncrementalDetokenizer(model.tokenizer(), true, true);
            int[] stops = opt.containsKey("--ignore-eos") ? new int[0] : model.tokenizer().specialTokens().stopIds();
            out.print(text);
            Generator.Stats stats = generator.generate(prompt, maxTokens,
                    new Sampler(params, model.config().vocabSize(), prompt, seed), stops, t -> {
                        out.print(detok.push(t.id()));
                        out.flush();
                    });
            out.println(detok.flush());
            err.printf("prompt: %d tokens, %.1f tok/s | decode: %d tokens, %.1f tok/s | %s, %d threads, seed %d,"
                    + " KV cache %s %.1f MiB%n",
                    stats.promptTokens(), perSecond(stats.promptTokens(), stats.prefillNanos()),
                    stats.generatedTokens(), perSecond(Math.max(0, stats.generatedTokens() - 1), stats.decodeNanos()),
                    model.config().architecture(), threads, seed,
                    kvType.name().toLowerCase(java.util.Locale.ROOT), generator.kvBytes() / (1024.0 * 1024.0));
            return 0;
        }
    }

    private static String chatPrompt(CpuModel model, Map<String, String> opt) {
        ChatTemplate template = opt.containsKey("--chat-template") ? ChatTemplates.named(opt.get("--chat-template"))
                : model.chatTemplate().orElseThrow(() -> new IllegalArgumentException(
                        "the model has no chat template (tokenizer.chat_template); pass --chat-template"));
        List<Map<String, Object>> messages = new ArrayList<>();
        if (opt.containsKey("--system")) {
            messages.add(Map.of("role", "system", "content", opt.get("--system")));
        }
        messages.add(Map.of("role", "user", "content", opt.get("--prompt")));
        return ChatTemplates.renderForGeneration(template, messages, model.tokenizer());
    }

    private static double perSecond(int tokens, long nanos) {
        return nanos == 0 ? 0 : tokens * 1e9 / nanos;
    }
}
