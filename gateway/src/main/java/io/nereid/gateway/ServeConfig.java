package io.nereid.gateway;

import io.nereid.engine.api.EngineSpec;
import io.nereid.engine.api.SpeculativeConfig;
import io.nereid.engine.api.ToolCallFormat;
import io.nereid.gateway.http.GatewayOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Everything {@code bin/nereid serve} is configured with, built in one place ({@link #parse}) from
 * command-line flags and, for flags not given, {@code NEREID_*} environment variables.
 *
 * @param model               GGUF file or Hugging Face model directory, or null: generate the random-weight demo model
 * @param servedModelName     the {@code model} clients must send (default: the file name, or "nereid-demo")
 * @param host                interface to bind
 * @param port                TCP port; 0 picks a free one (printed at startup)
 * @param maxNumSeqs          sequences per engine step
 * @param maxNumBatchedTokens tokens per engine step
 * @param maxWaiting          queued requests before 429
 * @param blockSize           tokens per KV block
 * @param kvCacheBytes        KV cache memory, or 0: enough for max-num-seqs full contexts, at most 512 MiB
 * @param chatTemplate        built-in template name or Jinja file, or null: the model's own
 * @param threads             kernel threads
 * @param drainTimeout        on SIGTERM, how long in-flight requests may take to finish
 * @param gateway             API keys, CORS origins, strictness and the stall timeouts of the HTTP layer
 * @param speculative         speculative decoding ({@code --speculative-config}), or null for none
 * @param toolCallParser      how the model writes tool calls ({@code --tool-call-parser}), or null: from its chat template
 * @param reasoningParser     how the model thinks ({@code --reasoning-parser} deepseek_r1 | qwen3), or null: no reasoning split
 * @param grpcPort            KServe v2 gRPC port; 0 picks a free one; -1: no gRPC
 * @param maxModelLen         prompt + output tokens of one sequence, or 0: the model's context length
 * @param repository          {@code --model-repository} and its model control, or null: serve {@code model}
 * @param memoryLimit         bytes all loaded models' weights and KV caches may take together (a repository's), or
 *                            0: 80 % of physical memory
 * @param task                {@code --task}: auto (embeddings when the model declares a pooling), generate, embed
 * @param backend             {@code --backend}: cpu, cuda, or auto (CUDA when a device is there, else the CPU)
 * @param deterministic       {@code --deterministic}: batch-invariant kernels (a token's logits the same bits alone,
 *                            batched, chunked and after a prefix-cache hit), at a cost in one-sequence decode speed
 * @param speculativeAdaptive {@code --speculative-adaptive}: the draft length chosen per step, for {@code speculative}
 *                            and for the repository's models' own {@code speculative_config}
 * @param kvCacheDtype        {@code --kv-cache-dtype}: the KV cache's element type, f16, bf16 or f32 (auto is f16)
 * @param enforceEager        {@code --enforce-eager}, as vLLM's: the CUDA backend launches every kernel as a step runs
 *                            instead of replaying recorded CUDA graphs (the CPU backend records none)
 */
public record ServeConfig(Path model, String servedModelName, String host, int port, int maxNumSeqs,
        int maxNumBatchedTokens, int maxWaiting, int blockSize, long kvCacheBytes, String chatTemplate, int threads,
        Duration drainTimeout, GatewayOptions gateway, SpeculativeConfig speculative, ToolCallFormat toolCallParser,
        String reasoningParser, int grpcPort, int maxModelLen, Repository repository, long memoryLimit, String task,
        String backend, boolean deterministic, boolean speculativeAdaptive, String kvCacheDtype, boolean enforceEager) {

    /**
     * A model repository: one folder per model under {@code dir}.
     *
     * @param explicit   {@code --model-control-mode explicit}: clients load and unload; only {@code loadModels}
     *                   load at startup (none: every model loads at startup and stays)
     * @param loadModels {@code --load-model} names, or ["*"] for all
     */
    public record Repository(Path dir, boolean explicit, List<String> loadModels) {
        public Repository {
            loadModels = List.copyOf(loadModels);
        }
    }

    /** Without HTTP-layer options ({@link GatewayOptions#DEFAULTS}) and without speculative decoding. */
    public ServeConfig(Path model, String servedModelName, String host, int port, int maxNumSeqs,
            int maxNumBatchedTokens, int maxWaiting, int blockSize, long kvCacheBytes, String chatTemplate, int threads,
            Duration drainTimeout) {
        this(model, servedModelName, host, port, maxNumSeqs, maxNumBatchedTokens, maxWaiting, blockSize, kvCacheBytes,
                chatTemplate, threads, drainTimeout, GatewayOptions.DEFAULTS, null, null, null, -1, 0, null, 0, "auto", "cpu", false,
                true, "f16", false);
    }

    /** One flag: its name, environment variable, default (null: none) and help line. */
    record Option(String flag, String defaultValue, String help) {
        String env() {
            return "NEREID_" + flag.substring(2).replace('-', '_').toUpperCase(Locale.ROOT);
        }
    }

    static final List<Option> OPTIONS = List.of(
            new Option("--model", null, "GGUF model file, or Hugging Face model directory (config.json, *.safetensors,"
                    + " tokenizer.json) (default: a small random-weight demo model)"),
            new Option("--served-model-name", null, "model name clients send (default: the file or directory name"
                    + " without .gguf)"),
            new Option("--model-repository", null, "serve several models: a folder holding one folder per model (its"
                    + " name is the served name) with a GGUF file or a Hugging Face model directory and an optional"
                    + " nereid.json of per-model settings; instead of --model"),
            new Option("--model-control-mode", "none", "with --model-repository: none (every model loads at startup)"
                    + " or explicit (--load-model ones at startup; clients load and unload through"
                    + " /v2/repository/models/NAME/load|unload and gRPC)"),
            new Option("--load-model", null, "with --model-control-mode explicit: a model to load at startup;"
                    + " repeatable; '*' for all (environment: comma-separated)"),
            new Option("--memory-limit", null, "memory all loaded models' weights and KV caches may take together,"
                    + " e.g. 8GiB; with --model-repository; a load that would not fit is refused (default: 80% of"
                    + " physical memory)"),
            new Option("--responses-store", null, "file of the /v1/responses store (an H2 database; survives"
                    + " restarts), or 'memory' (default: $XDG_DATA_HOME/nereid/responses, else"
                    + " $HOME/.local/share/nereid/responses; memory when neither is set)"),
            new Option("--responses-ttl", "30d", "how long a stored response is kept, e.g. 30d, 12h, 90m, 3600s"),
            new Option("--responses-max-size", "1GiB", "how much stored responses may take; the oldest go first"),
            new Option("--task", "auto", "auto (POST /v1/embeddings when the model declares a pooling: GGUF pooling_type,"
                    + " sentence-transformers modules.json), embed (also for a generative model: last-token pooling,"
                    + " normalised, as vLLM), or generate (no embeddings)"),
            new Option("--max-model-len", null, "prompt + output tokens of one sequence (default: the model's context"
                    + " length, capped by the KV cache)"),
            new Option("--host", "127.0.0.1", "interface to bind"),
            new Option("--port", "8000", "TCP port; 0 = any free port (printed)"),
            new Option("--grpc-port", null, "KServe v2 / Triton gRPC port; 0 = any free port (printed), -1 = no gRPC"
                    + " (default: 8001 as Triton's, or any free port when --port is 0)"),
            new Option("--max-num-seqs", "64", "sequences per engine step"),
            new Option("--max-num-batched-tokens", "512", "tokens per engine step"),
            new Option("--max-waiting", "1024", "queued requests before 429 rate_limit_error"),
            new Option("--block-size", "16", "tokens per KV-cache block"),
            new Option("--kv-cache-memory", null, "KV cache size, e.g. 512MiB, 2GiB (default: max-num-seqs full"
                    + " contexts, at most 512MiB)"),
            new Option("--chat-template", null, "built-in name (chatml, llama2, llama3, mistral, phi3, gemma) or a"
                    + " .jinja file (default: the model's own)"),
            new Option("--threads", null, "kernel threads (default: available processors)"),
            new Option("--backend", "cpu", "cpu, cuda (a build with -Pcuda and an NVIDIA GPU), or auto: CUDA when a device"
                    + " is present, else the CPU"),
            new Option("--kv-cache-dtype", "auto", "KV cache element type: auto (f16), f16, bf16 (the CUDA backend; keys"
                    + " that overflow f16 keep their range), f32 (the CPU backend); float16 / bfloat16 / float32 as vLLM"
                    + " writes them"),
            new Option("--deterministic", "false", "batch-invariant kernels: a token's logits are the same bits alone,"
                    + " batched, chunked and after a prefix-cache hit, so greedy output does not depend on the load"
                    + " (as vLLM's VLLM_BATCH_INVARIANT); one-sequence decode is slower (see the README); a bare"
                    + " --deterministic means true"),
            new Option("--enforce-eager", "false", "the CUDA backend launches every kernel as a step runs, never a"
                    + " recorded CUDA graph (as vLLM's; by default a step of up to 512 tokens is recorded once per"
                    + " shape and replayed with one launch); the CPU backend records none; a bare --enforce-eager"
                    + " means true"),
            new Option("--drain-timeout", "30", "seconds in-flight requests may take to finish after SIGTERM"),
            new Option("--engine-stall-timeout", "30", "seconds the engine may make no progress while work is pending"
                    + " before GET /health/ready answers 503"),
            new Option("--stall-timeout", "30", "seconds a streaming client may leave its write queue full"
                    + " (reading nothing) before it is dropped and its request cancelled"),
            new Option("--request-timeout", "30", "seconds a client may take to send a request body after its head"
                    + " (then 408 and the connection is closed), and that a connection may wait for a request head"
                    + " (new or idle keep-alive; then it is closed)"),
            new Option("--strict", "false", "unknown request fields are a 400 naming them (default: ignored and"
                    + " named in the x-nereid-ignored-fields header); a bare --strict means true"),
            new Option("--no-playground", "false", "GET / serves no chat playground (404); a bare --no-playground means true"),
            new Option("--api-key", null, "require 'Authorization: Bearer KEY' on every route but /health*;"
                    + " repeatable (environment: comma-separated)"),
            new Option("--api-key-file", null, "file of API keys, one per line ('#' comments), added to --api-key"),
            new Option("--allowed-origins", null, "comma-separated CORS origins, or '*' (default: none)"),
            new Option("--tool-call-parser", null, "how the model writes tool calls: hermes (Hermes, Qwen 2.5 / 3:"
                    + " <tool_call>...</tool_call>), llama3_json (Llama 3.1 / 3.2 JSON) or mistral ([TOOL_CALLS][...]); default: from the"
                    + " chat template"),
            new Option("--reasoning-parser", null, "split the model's thinking into reasoning_content: deepseek_r1"
                    + " (the template opens <think>) or qwen3 (<think>...</think> at the start); structured output then"
                    + " constrains the answer only"),
            new Option("--speculative-config", null, "speculative decoding as vLLM's JSON, e.g."
                    + " '{\"method\":\"ngram\",\"num_speculative_tokens\":4,\"prompt_lookup_max\":4,\"prompt_lookup_min\":2}'"
                    + " or '{\"method\":\"draft_model\",\"model\":\"draft.gguf\",\"num_speculative_tokens\":3}'"
                    + " (keys: method, num_speculative_tokens, prompt_lookup_max, prompt_lookup_min, model,"
                    + " disable_by_batch_size) (default: none)"),
            new Option("--speculative-adaptive", "true", "with --speculative-config: each step drafts as many of at most"
                    + " num_speculative_tokens as the measured step times and acceptance say pay, none where verifying"
                    + " costs more than the drafts bring (on a CPU: the quantized formats); false: always"
                    + " num_speculative_tokens, as vLLM"));

    public ServeConfig {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--port must be in [0, 65535], got " + port);
        }
        if (grpcPort < -1 || grpcPort > 65535) {
            throw new IllegalArgumentException("--grpc-port must be -1 (none) or in [0, 65535], got " + grpcPort);
        }
        if (maxNumSeqs < 1 || maxNumBatchedTokens < 1 || maxWaiting < 1 || blockSize < 1 || threads < 1) {
            throw new IllegalArgumentException("--max-num-seqs, --max-num-batched-tokens, --max-waiting, --block-size"
                    + " and --threads must be positive");
        }
        if (blockSize != 8 && blockSize != 16 && blockSize != 32 && blockSize != 64) {
            throw new IllegalArgumentException("--block-size must be 8, 16, 32 or 64, got " + blockSize);
        }
        if (kvCacheBytes < 0) {
            throw new IllegalArgumentException("--kv-cache-memory must not be negative");
        }
        if (maxModelLen < 0 || memoryLimit < 0) {
            throw new IllegalArgumentException("--max-model-len and --memory-limit must not be negative");
        }
        if (!java.util.Set.of("auto", "generate", "embed").contains(task)) {
            throw new IllegalArgumentException("--task must be auto, generate or embed, got '" + task + "'");
        }
        if (repository != null && model != null) {
            throw new IllegalArgumentException("give --model or --model-repository, not both");
        }
        if (repository == null && memoryLimit > 0) {
            throw new IllegalArgumentException("--memory-limit applies to --model-repository (one --model is loaded"
                    + " whatever its size)");
        }
    }

    /** The engine this configuration serves: model, limits, KV cache, threads. */
    public EngineSpec engineSpec() {
        return EngineSpec.builder(model).threads(threads).maxNumSeqs(maxNumSeqs).maxNumBatchedTokens(maxNumBatchedTokens)
                .maxWaiting(maxWaiting).blockSize(blockSize).kvCacheBytes(kvCacheBytes).maxModelLen(maxModelLen)
                .speculative(speculative).backend(backend).batchInvariant(deterministic).kvPrecision(kvCacheDtype).eager(enforceEager)
                .build();
    }

    /** The --kv-cache-dtype value as the engine names it: auto is f16 (llama.cpp's default); vLLM's spellings too. */
    static String kvCacheDtype(String value) {
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "auto", "f16", "float16" -> "f16";
            case "bf16", "bfloat16" -> "bf16";
            case "f32", "float32" -> "f32";
            default -> throw new IllegalArgumentException("--kv-cache-dtype must be auto, f16, bf16 or f32, got '"
                    + value + "'");
        };
    }

    /** The --backend value, checked: cpu, cuda or auto. */
    static String backend(String value) {
        String b = value.trim().toLowerCase(Locale.ROOT);
        if (!java.util.Set.of("cpu", "cuda", "auto").contains(b)) {
            throw new IllegalArgumentException("--backend must be cpu, cuda or auto, got '" + value + "'");
        }
        return b;
    }

    /**
     * This configuration for one model of a repository: {@code model} served as {@code name}, with
     * the settings its nereid.json gives in place of the server's.
     */
    ServeConfig forModel(Path model, String name, int maxNumSeqs, int maxNumBatchedTokens, int maxWaiting,
            long kvCacheBytes, String chatTemplate, SpeculativeConfig speculative, ToolCallFormat toolCallParser,
            String reasoningParser, int maxModelLen, String task) {
        return new ServeConfig(model, name, host, port, maxNumSeqs, maxNumBatchedTokens, maxWaiting, blockSize,
                kvCacheBytes, chatTemplate, threads, drainTimeout, gateway, speculative, toolCallParser, reasoningParser,
                grpcPort, maxModelLen, null, 0, task, backend, deterministic, speculativeAdaptive, kvCacheDtype,
                enforceEager);
    }

    /** The switches: given bare, they mean true. */
    static final java.util.Set<String> SWITCHES = java.util.Set.of("--strict", "--no-playground", "--deterministic",
            "--enforce-eager");
    /** The options that may be given more than once, each adding a value. */
    static final java.util.Set<String> REPEATABLE = java.util.Set.of("--api-key", "--load-model");

    /**
     * {@code serve}'s command line for picocli, built from {@link #OPTIONS} (one list for parsing,
     * help, environment variables and shell completion). Picocli only reads the words; defaults and
     * the environment are applied by {@link #parse}, so that a flag wins over its variable, which wins
     * over the default.
     */
    static picocli.CommandLine.Model.CommandSpec commandSpec() {
        picocli.CommandLine.Model.CommandSpec spec = picocli.CommandLine.Model.CommandSpec.create().name("serve");
        spec.usageMessage().description("Serve a model (or the demo model) over OpenAI, KServe v2 HTTP and gRPC. Each"
                + " option can also be given as an environment variable: --port as NEREID_PORT.")
                .sortOptions(false).abbreviateSynopsis(true).width(110);
        for (Option o : OPTIONS) {
            String help = o.help() + (o.defaultValue() == null ? "" : " (default " + o.defaultValue() + ")") + "; env "
                    + o.env();
            picocli.CommandLine.Model.OptionSpec.Builder b = picocli.CommandLine.Model.OptionSpec.builder(o.flag())
                    .description(help).paramLabel("V");
            if (SWITCHES.contains(o.flag())) {
                b.arity("0..1").fallbackValue("true").type(String.class);
            } else if (REPEATABLE.contains(o.flag())) {
                b.arity("1").type(List.class).auxiliaryTypes(String.class);
            } else {
                b.arity("1").type(String.class);
            }
            spec.addOption(b.build());
        }
        spec.addOption(picocli.CommandLine.Model.OptionSpec.builder("-h", "--help").usageHelp(true)
                .description("this text").build());
        spec.parser().overwrittenOptionsAllowed(true).caseInsensitiveEnumValuesAllowed(true);
        return spec;
    }

    static String usage() {
        return "usage: bin/nereid " + new picocli.CommandLine(commandSpec()).getUsageMessage(
                picocli.CommandLine.Help.Ansi.OFF).replaceFirst("^Usage: ", "");
    }

    /**
     * Flags win over environment variables, which win over defaults.
     *
     * @throws IllegalArgumentException naming the flag that is unknown (with the likely one meant),
     *                                  missing its value or malformed
     */
    static ServeConfig parse(List<String> args, Map<String, String> env) {
        Map<String, String> v = new LinkedHashMap<>();
        List<String> keys = new ArrayList<>();
        List<String> loads = new ArrayList<>();
        for (Option o : OPTIONS) {
            String e = env.get(o.env());
            v.put(o.flag(), e != null && !e.isBlank() ? e : o.defaultValue());
        }
        picocli.CommandLine.ParseResult given;
        try {
            given = new picocli.CommandLine(commandSpec()).parseArgs(args.toArray(String[]::new));
        } catch (picocli.CommandLine.UnmatchedArgumentException e) {
            List<String> like = e.getSuggestions();
            String word = e.getUnmatched().isEmpty() ? String.valueOf(args) : e.getUnmatched().getFirst();
            throw new IllegalArgumentException("unknown option '" + word + "'" + (like.isEmpty() ? ""
                    : "; did you mean " + String.join(" or ", like) + "?"));
        } catch (picocli.CommandLine.ParameterException e) {
            String m = e.getMessage();
            throw new IllegalArgumentException(m.startsWith("Missing required parameter for option '")
                    ? m.substring(m.indexOf('\'') + 1, m.indexOf('\'', m.indexOf('\'') + 1)) + " needs a value" : m);
        }
        java.util.Set<String> names = new java.util.LinkedHashSet<>();   // once per option, however often it is given
        given.matchedOptions().forEach(o -> names.add(o.longestName()));
        for (String name : names) {
            if (name.equals("--help")) {
                continue;
            }
            if (REPEATABLE.contains(name)) {
                List<String> values = given.matchedOptionValue(name, List.of());
                (name.equals("--api-key") ? keys : loads).addAll(values);
            } else {
                v.put(name, given.matchedOptionValue(name, v.get(name)));
            }
        }
        if (keys.isEmpty() && v.get("--api-key") != null) {
            keys.addAll(list(v.get("--api-key")));
        }
        if (v.get("--api-key-file") != null) {
            keys.addAll(keyFile(Path.of(v.get("--api-key-file"))));
        }
        GatewayOptions gateway = new GatewayOptions(keys, v.get("--allowed-origins") == null ? List.of()
                : list(v.get("--allowed-origins")), Duration.ofSeconds(integer(v, "--engine-stall-timeout")), bool(v, "--strict"),
                Duration.ofSeconds(integer(v, "--stall-timeout")), Duration.ofSeconds(integer(v, "--request-timeout")),
                responsesStore(v, env), !bool(v, "--no-playground"));
        Path model = v.get("--model") == null ? null : Path.of(v.get("--model"));
        String name = v.get("--served-model-name");
        if (name == null) {
            name = model == null ? "nereid-demo" : model.getFileName().toString().replaceFirst("\\.gguf$", "");
        }
        String kv = v.get("--kv-cache-memory");
        if (loads.isEmpty() && v.get("--load-model") != null) {
            loads.addAll(list(v.get("--load-model")));
        }
        Repository repository = repository(v, loads, name);
        String memory = v.get("--memory-limit");
        return new ServeConfig(model, name, v.get("--host"), integer(v, "--port"), integer(v, "--max-num-seqs"),
                integer(v, "--max-num-batched-tokens"), integer(v, "--max-waiting"), integer(v, "--block-size"),
                kv == null ? 0 : bytes(kv, "--kv-cache-memory"), v.get("--chat-template"),
                v.get("--threads") == null ? Runtime.getRuntime().availableProcessors() : integer(v, "--threads"),
                Duration.ofSeconds(integer(v, "--drain-timeout")), gateway,
                adaptive(speculative(v.get("--speculative-config")), bool(v, "--speculative-adaptive")),
                toolCallParser(v.get("--tool-call-parser")), reasoningParser(v.get("--reasoning-parser")),
                v.get("--grpc-port") != null ? integer(v, "--grpc-port") : integer(v, "--port") == 0 ? 0 : 8001,
                v.get("--max-model-len") == null ? 0 : integer(v, "--max-model-len"), repository,
                memory == null ? 0 : bytes(memory, "--memory-limit"), v.get("--task").trim().toLowerCase(Locale.ROOT),
                backend(v.get("--backend")), bool(v, "--deterministic"), bool(v, "--speculative-adaptive"),
                kvCacheDtype(v.get("--kv-cache-dtype")), bool(v, "--enforce-eager"));
    }

    private static Repository repository(Map<String, String> v, List<String> loads, String name) {
        String dir = v.get("--model-repository");
        String mode = v.get("--model-control-mode").trim().toLowerCase(Locale.ROOT);
        if (!mode.equals("none") && !mode.equals("explicit")) {
            throw new IllegalArgumentException("--model-control-mode must be none or explicit, got '"
                    + v.get("--model-control-mode") + "'");
        }
        if (dir == null) {
            if (!loads.isEmpty() || mode.equals("explicit")) {
                throw new IllegalArgumentException("--load-model and --model-control-mode explicit need"
                        + " --model-repository DIR");
            }
            return null;
        }
        if (v.get("--served-model-name") != null) {
            throw new IllegalArgumentException("--served-model-name does not apply to --model-repository: each model is"
                    + " served under its folder's name");
        }
        if (!loads.isEmpty() && mode.equals("none")) {
            throw new IllegalArgumentException("--load-model needs --model-control-mode explicit (mode none loads every"
                    + " model of the repository)");
        }
        if (loads.contains("*") && loads.size() > 1) {
            throw new IllegalArgumentException("--load-model '*' must be the only --load-model");
        }
        Path d = Path.of(dir);
        if (!Files.isDirectory(d)) {
            throw new IllegalArgumentException("--model-repository " + dir + " is not a directory");
        }
        return new Repository(d, mode.equals("explicit"), mode.equals("none") ? List.of("*") : loads);
    }

    /** {@code --responses-store} (a file, 'memory', or the data directory's default), its TTL and size limit. */
    private static GatewayOptions.ResponsesStore responsesStore(Map<String, String> v, Map<String, String> env) {
        String store = v.get("--responses-store");
        Path file;
        if (store == null) {
            String data = env.get("XDG_DATA_HOME") != null && !env.get("XDG_DATA_HOME").isBlank() ? env.get("XDG_DATA_HOME")
                    : env.get("HOME") != null && !env.get("HOME").isBlank() ? env.get("HOME") + "/.local/share" : null;
            file = data == null ? null : Path.of(data, "nereid", "responses");
        } else {
            file = store.trim().equals("memory") ? null : Path.of(store.trim());
        }
        long maxBytes = bytes(v.get("--responses-max-size"), "--responses-max-size");
        try {
            return new GatewayOptions.ResponsesStore(file, duration(v.get("--responses-ttl"), "--responses-ttl"), maxBytes);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** {@code 30d}, {@code 12h}, {@code 90m}, {@code 3600s} or plain seconds. */
    static Duration duration(String s, String flag) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        long unit = switch (t.isEmpty() ? ' ' : t.charAt(t.length() - 1)) {
            case 'd' -> 86_400;
            case 'h' -> 3_600;
            case 'm' -> 60;
            case 's' -> 1;
            default -> 0;
        };
        try {
            return Duration.ofSeconds(unit == 0 ? Long.parseLong(t) : Long.parseLong(t.substring(0, t.length() - 1)) * unit);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " must be a duration like 30d, 12h, 90m or 3600s, got '" + s + "'");
        }
    }

    static String reasoningParser(String name) {
        if (name != null && !name.equals("deepseek_r1") && !name.equals("qwen3")) {
            throw new IllegalArgumentException("--reasoning-parser must be deepseek_r1 or qwen3, got '" + name + "'");
        }
        return name;
    }

    static ToolCallFormat toolCallParser(String name) {
        if (name == null) {
            return null;
        }
        ToolCallFormat f = ToolCallFormat.named(name);
        if (f == null) {
            throw new IllegalArgumentException("--tool-call-parser must be hermes, llama3_json or mistral, got '" + name + "'");
        }
        return f;
    }

    /** {@code c} (null for none) with its draft length chosen per step or fixed. */
    static SpeculativeConfig adaptive(SpeculativeConfig c, boolean on) {
        return c == null ? null : c.withAdaptive(on);
    }

    static SpeculativeConfig speculative(String json) {
        if (json == null || json.isBlank()) {
            return null;
        }
        try {
            return SpeculativeConfig.parse(json);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--speculative-config: " + e.getMessage(), e);
        }
    }

    private static List<String> list(String commaSeparated) {
        return Arrays.stream(commaSeparated.split(",")).map(String::trim).filter(t -> !t.isEmpty()).toList();
    }

    private static List<String> keyFile(Path file) {
        try {
            return Files.readAllLines(file).stream().map(String::trim).filter(t -> !t.isEmpty() && !t.startsWith("#"))
                    .toList();
        } catch (IOException e) {
            throw new IllegalArgumentException("--api-key-file " + file + ": cannot read: " + e.getMessage());
        }
    }

    private static boolean bool(Map<String, String> v, String flag) {
        return bool(flag, v.get(flag));
    }

    /** {@code value} of {@code flag} as a boolean: true / 1 / yes / on or false / 0 / no / off. */
    static boolean bool(String flag, String value) {
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on" -> true;
            case "false", "0", "no", "off" -> false;
            default -> throw new IllegalArgumentException(flag + " must be true or false, got '" + value + "'");
        };
    }

    private static int integer(Map<String, String> v, String flag) {
        try {
            return Integer.parseInt(v.get(flag).trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " must be an integer, got '" + v.get(flag) + "'");
        }
    }

    /** {@code 512MiB}, {@code 2GiB}, {@code 512M}, {@code 1G}, {@code 64KiB} or plain bytes. */
    static long bytes(String s, String flag) {
        String t = s.trim().toUpperCase(Locale.ROOT).replace("IB", "").replace("B", "");
        long unit = 1;
        if (!t.isEmpty() && "KMG".indexOf(t.charAt(t.length() - 1)) >= 0) {
            unit = 1L << (10 * ("KMG".indexOf(t.charAt(t.length() - 1)) + 1));
            t = t.substring(0, t.length() - 1);
        }
        try {
            return Math.round(Double.parseDouble(t.trim()) * unit);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " must be a size like 512MiB or 2GiB, got '" + s + "'");
        }
    }
}
