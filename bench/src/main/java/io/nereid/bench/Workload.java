package io.nereid.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Builds the request bodies of a run, deterministically from the seed: synthetic prompts of
 * common English words, or prompts from a JSONL file, each behind an optional shared prefix.
 * Synthetic prompts hit {@code --input-tokens-mean} in the server's own tokens when each word's
 * token cost is known ({@link #wordCosts}, measured through {@code /tokenize} once per server):
 * words are drawn until their costs sum to the sampled length exactly (words cost the same inside a
 * prompt as alone, since BPE and SentencePiece pieces do not cross spaces). Without the costs each
 * word counts as one token, about right for BPE vocabularies; the reported ISL is the server's
 * either way. Output
 * lengths are pinned with {@code max_tokens = min_tokens} and {@code ignore_eos} so every request
 * generates exactly the sampled count. Not thread-safe; the generator builds bodies up front.
 * <p>
 * A sweep builds one workload per level ({@link #Workload(BenchConfig, int)}): each level's prompts
 * and lengths come from its own random stream, derived from (seed, level), so a later level never
 * re-sends an earlier level's prompts and hits the server's prefix cache (which would make its
 * TTFT meaningless). Only the {@code --shared-prefix-tokens} system prompt, derived from the seed
 * alone, is common to all levels, deliberately. Level 0 is what a single run uses. Prompts from
 * {@code --input-file} are the user's and are sent as they are at every level.
 * <p>
 * {@code --workload input-grounded}: each prompt is a passage of words (the sampled length less
 * the instruction's tokens) followed by {@link #REPEAT}, sent with {@code temperature 0}
 * ({@code --extra-inputs} may override it): the output of a model that follows the instruction
 * copies its input, the case of summarising, editing and retrieval answers in which n-gram prompt
 * lookup finds its drafts. A model that does not follow it (a generated random-weight one) makes
 * whatever it makes; the acceptance rate the bench reads from the server says which.
 */
public final class Workload {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] WORDS = ("the of and to in is was he for it with as his on be at by had are but from"
            + " or have an they which one you were her all she there would their we him been has when who will more"
            + " no if out so said what up its about into than them can only other new some could time these two may"
            + " then do first any my now such like our over man me even most made after also did many before must"
            + " through back years where much your way well down should because each just those people how too little"
            + " state good very make world still own see men work long get here between both life being under never day"
            + " same another know while last might us great old year off come since against go came right used take"
            + " three house small story cat dog tree river happy sun play friend garden bird boat").split(" ");

    /** What an input-grounded prompt ends with, after its passage. */
    static final String REPEAT = "\n\nRepeat the text above word for word:\n";
    /**
     * {@link #REPEAT}'s tokens when the server's tokenizer is not known (8 words and the newlines);
     * else its count in that tokenizer ({@link #wordCosts}).
     */
    private static final int REPEAT_TOKENS = 10;

    private final BenchConfig config;
    private final Random random;
    private final String prefix;
    private final List<String> filePrompts;
    /** Tokens of each of {@link #WORDS}; null = one each. */
    private final int[] costs;
    /** Indexes of the one-token words, to fill a prompt's last tokens exactly. */
    private final int[] singles;
    /** What an input-grounded prompt's instruction costs: subtracted from its passage. */
    private final int repeatTokens;
    private int next;

    public Workload(BenchConfig config) {
        this(config, 0, null);
    }

    /**
     * The workload of sweep level {@code level} (0 = the first level, or a single run).
     *
     * @param costs each word's tokens and then {@link #REPEAT}'s ({@link #wordCosts}), or null: one
     *     token per word, {@value #REPEAT_TOKENS} for the instruction
     */
    public Workload(BenchConfig config, int level, int[] costs) {
        if (level < 0) {
            throw new IllegalArgumentException("level must be >= 0, got " + level);
        }
        if (costs != null && costs.length != WORDS.length + 1) {
            throw new IllegalArgumentException("costs: one per word and the instruction's expected, got " + costs.length);
        }
        this.config = config;
        this.costs = costs == null ? null : costs.clone();
        this.singles = costs == null ? new int[0]
                : java.util.stream.IntStream.range(0, WORDS.length).filter(i -> costs[i] == 1).toArray();
        this.repeatTokens = costs == null ? REPEAT_TOKENS : costs[WORDS.length];
        this.random = new Random(levelSeed(config.seed(), level));
        this.prefix = config.sharedPrefixTokens() > 0 ? words(new Random(config.seed() ^ 0x5eed), config.sharedPrefixTokens()) : "";
        this.filePrompts = config.inputFile() == null ? List.of() : readPrompts(config);
    }

    /** The next request body (streaming, with usage). */
    public String nextPayload() {
        boolean grounded = config.inputGrounded();
        String prompt;
        if (grounded) {
            int length = sample(config.inputTokensMean(), config.inputTokensStddev());
            prompt = words(random, Math.max(1, length - repeatTokens)) + REPEAT;
        } else {
            prompt = filePrompts.isEmpty()
                    ? words(random, sample(config.inputTokensMean(), config.inputTokensStddev()))
                    : filePrompts.get(next++ % filePrompts.size());
        }
        ObjectNode body = JSON.createObjectNode();
        if (grounded) { // greedy: the continuation a copying model gives, which prompt lookup predicts
            body.put("temperature", 0.0); // a float: KServe's temperature input is FP32
        }
        if (config.endpoint().equals("kserve-generate") || config.endpoint().equals("grpc-stream")) {
            // Triton's generate extension: inputs by the TensorRT-LLM ensemble's names, text deltas streamed
            body.put("text_input", prefix.isEmpty() ? prompt : prefix + "\n" + prompt);
            if (config.outputTokensMean() > 0) {
                int out = sample(config.outputTokensMean(), config.outputTokensStddev());
                body.put("max_tokens", out);
                body.put("min_length", out);
                body.put("ignore_eos", true);
            }
            body.put("exclude_input_in_output", true);
            return extra(body);
        }
        body.put("model", config.model());
        if (config.endpoint().equals("responses")) {
            // the same request as chat's: the prefix as instructions (a system message), the prompt as input
            if (!prefix.isEmpty()) {
                body.put("instructions", prefix);
            }
            body.put("input", prompt);
            if (config.outputTokensMean() > 0) {
                int out = sample(config.outputTokensMean(), config.outputTokensStddev());
                body.put("max_output_tokens", out);
                body.put("min_tokens", out);
                body.put("ignore_eos", true);
            }
            body.put("stream", true);
            return extra(body);
        }
        if (config.endpoint().equals("chat")) {
            var messages = body.putArray("messages");
            if (!prefix.isEmpty()) {
                messages.addObject().put("role", "system").put("content", prefix);
            }
            messages.addObject().put("role", "user").put("content", prompt);
        } else {
            body.put("prompt", prefix.isEmpty() ? prompt : prefix + "\n" + prompt);
        }
        if (config.outputTokensMean() > 0) {
            int out = sample(config.outputTokensMean(), config.outputTokensStddev());
            body.put("max_tokens", out);
            body.put("min_tokens", out);
            body.put("ignore_eos", true);
        }
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        return extra(body);
    }

    /** {@code body} with {@code --extra-inputs} merged in, as JSON text. */
    private String extra(ObjectNode body) {
        if (config.extraInputs() != null) {
            try {
                body.setAll((ObjectNode) JSON.readTree(config.extraInputs()));
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalStateException(e);   // checked when parsed
            }
        }
        return body.toString();
    }

    /**
     * The seed of a level's prompt stream: the seed itself for level 0, otherwise a 64-bit mix of
     * (seed, level) (SplitMix64's finaliser), so that neighbouring levels' streams are unrelated.
     */
    static long levelSeed(long seed, int level) {
        if (level == 0) {
            return seed;
        }
        long z = seed + 0x9E3779B97F4A7C15L * level;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private int sample(int mean, int stddev) {
        return Math.max(1, (int) Math.round(mean + stddev * random.nextGaussian()));
    }

    /** How many costs {@link #wordCosts} gives: one per word, then the instruction's. */
    static int costCount() {
        return WORDS.length + 1;
    }

    /**
     * Each of {@link #WORDS}' tokens in the server's tokenizer: the tokens it adds after "the"
     * (so it is counted as a word inside a prompt, with its leading space), at least 1; then
     * {@link #REPEAT}'s, counted the same way.
     */
    public static int[] wordCosts(ServerTokenizer tokenizer) throws IOException, InterruptedException {
        int base = tokenizer.countText("the");
        int[] costs = new int[WORDS.length + 1];
        for (int i = 0; i < WORDS.length; i++) {
            costs[i] = Math.max(1, tokenizer.countText("the " + WORDS[i]) - base);
        }
        costs[WORDS.length] = Math.max(1, tokenizer.countText("the" + REPEAT) - base);
        return costs;
    }

    /** Words worth {@code n} tokens: exactly, when the costs are known and some word is one token. */
    String words(Random r, int n) {
        StringBuilder b = new StringBuilder();
        int tokens = 0;
        while (tokens < n) {
            int w = r.nextInt(WORDS.length);
            int cost = costs == null ? 1 : costs[w];
            if (cost > n - tokens) {
                if (singles.length == 0) {
                    break;
                }
                w = singles[r.nextInt(singles.length)];
                cost = 1;
            }
            if (!b.isEmpty()) {
                b.append(' ');
            }
            b.append(WORDS[w]);
            tokens += cost;
        }
        return b.toString();
    }

    private static List<String> readPrompts(BenchConfig config) {
        List<String> prompts = new ArrayList<>();
        try {
            int line = 0;
            for (String l : Files.readAllLines(config.inputFile())) {
                line++;
                if (l.isBlank()) {
                    continue;
                }
                JsonNode n = JSON.readTree(l);
                JsonNode text = n.hasNonNull("text") ? n.get("text") : n.get("prompt");
                if (text == null || !text.isTextual()) {
                    throw new IllegalArgumentException("--input-file " + config.inputFile() + ": line " + line
                            + " has no \"text\" or \"prompt\" string");
                }
                prompts.add(text.asText());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("--input-file " + config.inputFile() + ": " + e.getMessage(), e);
        }
        if (prompts.isEmpty()) {
            throw new IllegalArgumentException("--input-file " + config.inputFile() + ": no prompts");
        }
        return prompts;
    }
}
