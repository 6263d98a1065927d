package io.nereid.gateway;

import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.EngineSpec;
import io.nereid.engine.api.EngineStats;
import io.nereid.engine.api.SpeculativeConfig;
import io.nereid.engine.api.Engines;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.LoadedModel;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.nereid.engine.template.ChatTemplate;
import io.nereid.engine.template.ChatTemplates;
import io.nereid.engine.template.TemplateException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * {@code bin/nereid generate}: loads a model (GGUF file or Hugging Face directory), streams a
 * completion of a prompt to stdout and prints prompt and decode speed to stderr; with
 * {@code --batch}, MLPerf's offline scenario ({@link OfflineBatch}). Goes through the same engine
 * ({@link Engines#open}) as the server, with one sequence.
 */
final class GenerateCommand {

    private static final List<CliSpec.Option> FLAGS = List.of(
            new CliSpec.Option("--model", "FILE", "GGUF file or Hugging Face model directory (required)"),
            new CliSpec.Option("--prompt", "TEXT", "the prompt (or --batch)"),
            new CliSpec.Option("--batch", "FILE", "offline mode (MLPerf \"Offline\"): every line {\"prompt\": ..., optional"
                    + " \"max_tokens\"} goes through the batching engine at once; prints one JSON line per prompt and"
                    + " the total output tok/s"),
            new CliSpec.Option("--max-tokens", "N", "tokens to generate (default 128)"),
            new CliSpec.Option("--temperature", "T", "0 = greedy (default 0.8)"),
            new CliSpec.Option("--top-k", "K", "(default -1: off)"),
            new CliSpec.Option("--top-p", "P", "(default 0.95)"),
            new CliSpec.Option("--min-p", "P", "(default 0: off)"),
            new CliSpec.Option("--seed", "S", "(default: random)"),
            new CliSpec.Option("--repetition-penalty", "R", "(default 1: off)"),
            new CliSpec.Option("--ignore-eos", null, "keep going after end-of-sequence tokens"),
            new CliSpec.Option("--chat", null, "send --prompt as a user message through the chat template"),
            new CliSpec.Option("--system", "TEXT", "with --chat: a system message first"),
            new CliSpec.Option("--chat-template", "T", "with --chat: a built-in (chatml, llama2, llama3, mistral, phi3, gemma) or a"
                    + " .jinja file instead of the model's own template"),
            new CliSpec.Option("--context", "N", "context length (default: the model's context_length)"),
            new CliSpec.Option("--threads", "N", "kernel threads (default: available processors)"),
            new CliSpec.Option("--backend", "cpu|cuda|auto", "compute backend (default cpu; auto: CUDA when a device is"
                    + " present)"),
            new CliSpec.Option("--deterministic", null, "batch-invariant kernels: the same bits however the batch is"
                    + " shaped (with --batch: each prompt's greedy text as alone); one-sequence decode is slower"),
            new CliSpec.Option("--enforce-eager", null, "the CUDA backend launches every kernel as a step runs, never a"
                    + " recorded CUDA graph, as serve --enforce-eager"),
            new CliSpec.Option("--prefill-chunk", "N", "prompt tokens per forward step (default 512)"),
            new CliSpec.Option("--kv-type", "f16|bf16|f32", "KV cache element type (default f16, as llama.cpp: half the memory of"
                    + " f32; K and V round to 11 significant bits; bf16 on the CUDA backend only)"),
            new CliSpec.Option("--speculative-config", "JSON", "speculative decoding, vLLM's JSON, e.g."
                    + " '{\"method\":\"ngram\",\"num_speculative_tokens\":4,\"prompt_lookup_max\":4}'"),
            new CliSpec.Option("--speculative-adaptive", "true|false", "with --speculative-config: drafts per step chosen"
                    + " from the measured step times and acceptance, none where they do not pay (default true); false:"
                    + " always num_speculative_tokens, as vLLM"));

    /** {@code generate}'s command line for picocli: unknown options are errors (with the likely one meant). */
    static picocli.CommandLine.Model.CommandSpec commandSpec() {
        return CliSpec.of("generate", List.of("bin/nereid generate --model FILE.gguf|HF_DIR --prompt TEXT [options]",
                "       bin/nereid generate --model FILE.gguf|HF_DIR --batch PROMPTS.jsonl [options]"),
                "Stream a completion of --prompt, or run --batch offline, with one engine.", FLAGS);
    }

    static String usage() {
        return CliSpec.usage(commandSpec());
    }

    private GenerateCommand() {
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        Map<String, String> opt = new HashMap<>();
        picocli.CommandLine.ParseResult given;
        try {
            given = new picocli.CommandLine(commandSpec()).parseArgs(java.util.Arrays.copyOfRange(args, 1, args.length));
        } catch (picocli.CommandLine.UnmatchedArgumentException e) {
            List<String> like = e.getSuggestions();
            err.println("nereid generate: unexpected argument '" + (e.getUnmatched().isEmpty() ? "" : e.getUnmatched()
                    .getFirst()) + "'" + (like.isEmpty() ? "" : "; did you mean " + String.join(" or ", like) + "?") + "\n"
                    + usage());
            return 64;
        } catch (picocli.CommandLine.ParameterException e) {
            err.println("nereid generate: " + e.getMessage() + "\n" + usage());
            return 64;
        }
        for (picocli.CommandLine.Model.OptionSpec o : given.matchedOptions()) {
            Object v = given.matchedOptionValue(o.longestName(), null);
            opt.put(o.longestName(), v instanceof Boolean ? "true" : String.valueOf(v));
        }
        if (opt.containsKey("--help")) {
            out.print(usage());
            return 0;
        }
        if (!opt.containsKey("--model") || !(opt.containsKey("--prompt") || opt.containsKey("--batch"))) {
            err.println("nereid generate: --model and --prompt (or --batch) are required\n" + usage());
            return 64;
        }
        try {
            return generate(opt, out, err);
        } catch (NumberFormatException e) {
            err.println("nereid generate: not a number: " + e.getMessage());
            return 64;
        } catch (TemplateException | EngineException e) {
            err.println("nereid generate: " + e.getMessage());
            return 1;
        } catch (RuntimeException e) {   // a model that does not load, a bad option value: the message names it
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
        boolean batch = opt.containsKey("--batch");
        EngineSpec spec = EngineSpec.builder(Path.of(opt.get("--model"))).threads(threads)
                .backend(ServeConfig.backend(opt.getOrDefault("--backend", "cpu")))
                .maxNumSeqs(batch ? 64 : 1).maxWaiting(batch ? Integer.MAX_VALUE : 1)
                .maxNumBatchedTokens(Integer.parseInt(opt.getOrDefault("--prefill-chunk", "512")))
                .maxModelLen(Integer.parseInt(opt.getOrDefault("--context", "0")))
                .kvPrecision(opt.getOrDefault("--kv-type", "f16"))
                .batchInvariant(opt.containsKey("--deterministic")).eager(opt.containsKey("--enforce-eager"))
                .speculative(opt.containsKey("--speculative-config") ? SpeculativeConfig.parse(opt.get("--speculative-config"))
                        .withAdaptive(ServeConfig.bool("--speculative-adaptive", opt.getOrDefault("--speculative-adaptive", "true"))) : null).build();
        try (LoadedModel model = Engines.open(spec)) {
            if (batch) {
                return OfflineBatch.run(model, params, maxTokens, opt, out, err);
            }
            String text = opt.containsKey("--chat") ? chatPrompt(model, opt) : opt.get("--prompt");
            // A rendered chat template writes its own BOS text (vLLM: add_special_tokens=False).
            int[] prompt = model.tokenizer().encode(text, !opt.containsKey("--chat"), true);
            if (prompt.length + maxTokens > model.maxModelLen()) {
                throw new IllegalArgumentException("prompt (" + prompt.length + " tokens) + --max-tokens " + maxTokens
                        + " exceeds the context of " + model.maxModelLen() + " (use --context)");
            }
            out.print(text);
            Printer printer = new Printer(out);
            model.engine().submit(GenerationRequest.builder("generate", prompt).sampling(params).maxTokens(maxTokens)
                    .ignoreEos(opt.containsKey("--ignore-eos")).build(), printer);
            Usage u = printer.await();
            out.println();
            long prefill = u.firstTokenNanos() - u.queueNanos();
            long decode = u.totalNanos() - u.firstTokenNanos();
            EngineStats.Speculation sp = model.engine().stats().speculation();
            err.printf("prompt: %d tokens, %.1f tok/s | decode: %d tokens, %.1f tok/s | %s, %d threads, seed %d,"
                    + " KV cache %s %.1f MiB%s%n", u.promptTokens(), perSecond(u.promptTokens(), prefill),
                    u.completionTokens(), perSecond(Math.max(0, u.completionTokens() - 1), decode),
                    model.info().architecture().toUpperCase(Locale.ROOT), threads, seed, model.kvCache().precision(),
                    model.kvCache().bytes() / (1024.0 * 1024.0), !sp.enabled() ? ""
                            : String.format(" | drafts: %d of %d accepted in %d steps%s", sp.acceptedTokens(),
                                    sp.draftTokens(), sp.drafts(), spec.speculative().adaptive()
                                            ? " (draft length adaptive)" : ""));
            return 0;
        }
    }

    /** Streams one sequence's text to {@code out} as the engine produces it. Engine thread; {@link #await} on the caller's. */
    private static final class Printer implements TokenSink {
        private final PrintStream out;
        private final CountDownLatch done = new CountDownLatch(1);
        private volatile Usage usage;
        private volatile EngineException error;

        Printer(PrintStream out) {
            this.out = out;
        }

        @Override
        public void onDelta(int choice, String text, int[] tokenIds, List<TokenLogprob> logprobs) {
            out.print(text);
            out.flush();
        }

        @Override
        public void onFinish(int choice, FinishReason reason, Object stopReason, Usage u) {
            usage = u;
            done.countDown();
        }

        @Override
        public void onError(int choice, EngineException e) {
            error = e;
            done.countDown();
        }

        Usage await() {
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new EngineException("interrupted");
            }
            if (error != null) {
                throw error;
            }
            return usage;
        }
    }

    private static String chatPrompt(LoadedModel model, Map<String, String> opt) {
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
        return nanos <= 0 ? 0 : tokens * 1e9 / nanos;
    }
}
