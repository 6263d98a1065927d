package io.nereid.engine.tokenizer;

import io.nereid.engine.gguf.GgufException;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.gguf.GgufMetadata;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Builds a {@link Tokenizer} from GGUF metadata exactly as llama.cpp (b4748) does:
 * {@code tokenizer.ggml.model = llama} is SentencePiece (scores, byte fallback, dummy-prefix
 * space), {@code gpt2} is byte-level BPE whose pre-tokenizer regexes are chosen by
 * {@code tokenizer.ggml.pre}. CONTROL, UNKNOWN and USER_DEFINED tokens are matched in text
 * (USER_DEFINED ones always, the others only when special tokens are parsed), longest first.
 *
 * <p>Errors are {@link TokenizerException}s naming the file and the reason: no tokenizer
 * metadata, an unsupported tokenizer model, an unknown pre-tokenizer (never a silent fallback),
 * or inconsistent arrays. Stateless.
 */
public final class GgufTokenizerLoader {

    private static final String LLAMA3 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
            + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String QWEN2 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
            + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    /** llama.cpp's GPT-2 expression; its hand-written matcher also keeps leftover whitespace, as gaps are here. */
    private static final String GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";

    /** Pre-tokenizer expressions by {@code tokenizer.ggml.pre}, from llama.cpp's {@code llm_tokenizer_bpe}. */
    private static final Map<String, List<String>> PRE = new HashMap<>();
    private static final Set<String> IGNORE_MERGES_AND_ADD_BOS = Set.of("llama3", "llama-v3", "llama-bpe", "falcon3");

    static {
        for (String name : List.of("llama3", "llama-v3", "llama-bpe", "falcon3", "dbrx", "smaug-bpe")) {
            PRE.put(name, List.of(LLAMA3));
        }
        for (String name : List.of("qwen2", "deepseek-r1-qwen", "stablelm2")) {
            PRE.put(name, List.of(QWEN2));
        }
        for (String name : List.of("gpt-2", "phi-2", "mpt", "olmo", "jina-es", "jina-de", "jina-v2-es", "jina-v2-de")) {
            PRE.put(name, List.of(GPT2));
        }
        for (String name : List.of("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b")) {
            PRE.put(name, List.of("\\p{N}", GPT2));
        }
        PRE.put("falcon", List.of("[\\p{P}\\$\\+<=>\\^~\\|`]+", GPT2, "[0-9][0-9][0-9]"));
        PRE.put("deepseek-coder", List.of("[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}"));
        PRE.put("default", List.of("[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2, "\\p{N}+", "[0-9][0-9][0-9]"));
    }

    private GgufTokenizerLoader() {
    }

    /** Supported values of {@code tokenizer.ggml.pre} for byte-level BPE. */
    public static Set<String> supportedPreTokenizers() {
        return Set.copyOf(PRE.keySet());
    }

    public static Tokenizer load(Path file) {
        try {
            return fromMetadata(GgufFile.readMetadata(file));
        } catch (GgufException e) {
            throw new TokenizerException(e.getMessage(), e);
        }
    }

    /** Builds the tokenizer from already-read metadata ({@link GgufMetadata#source()} names the file). */
    public static Tokenizer fromMetadata(GgufMetadata meta) {
        String source = meta.source();
        String model = meta.findString("tokenizer.ggml.model").orElseThrow(() -> new TokenizerException(
                source + ": no tokenizer metadata (tokenizer.ggml.model is missing)"));
        try {
            return switch (model) {
                case "llama" -> build(meta, true);
                case "gpt2" -> build(meta, false);
                default -> throw new TokenizerException(source + ": tokenizer model '" + model
                        + "' (tokenizer.ggml.model) is not supported; supported: llama (SentencePiece), gpt2 (byte-level BPE)");
            };
        } catch (GgufException e) {
            throw new TokenizerException(source + ": bad tokenizer metadata: " + e.getMessage(), e);
        }
    }

    private static Tokenizer build(GgufMetadata meta, boolean sentencePiece) {
        String source = meta.source();
        List<String> tokens = meta.getStringArray("tokenizer.ggml.tokens");
        int n = tokens.size();
        TokenType[] types = new TokenType[n];
        int[] typeCodes = meta.contains("tokenizer.ggml.token_type") ? meta.getIntArray("tokenizer.ggml.token_type") : null;
        if (typeCodes != null && typeCodes.length != n) {
            throw new TokenizerException(source + ": tokenizer.ggml.token_type has " + typeCodes.length
                    + " entries for " + n + " tokens");
        }
        Map<String, Integer> vocab = new HashMap<>(n * 2);
        String[] pieces = new String[n];
        for (int i = 0; i < n; i++) {
            pieces[i] = tokens.get(i);
            types[i] = typeCodes == null ? TokenType.NORMAL : TokenType.fromGguf(typeCodes[i]);
            vocab.put(pieces[i], i); // duplicates: the last one wins, as in llama.cpp
        }
        String pre = meta.findString("tokenizer.ggml.pre").orElse("default");

        ModelTokenizer.Model model;
        if (sentencePiece) {
            float[] scores = meta.getFloatArray("tokenizer.ggml.scores");
            if (scores.length != n) {
                throw new TokenizerException(source + ": tokenizer.ggml.scores has " + scores.length + " entries for " + n + " tokens");
            }
            boolean spacePrefix = meta.findBool("tokenizer.ggml.add_space_prefix").orElse(true);
            model = new ModelTokenizer.SentencePiece(new SentencePieceEncoder(vocab, scores, id(meta, "unknown_token_id", 0, n)),
                    spacePrefix);
        } else {
            List<String> regexes = PRE.get(pre);
            if (regexes == null) {
                throw new TokenizerException(source + ": unknown pre-tokenizer '" + pre + "' (tokenizer.ggml.pre); supported: "
                        + new java.util.TreeSet<>(PRE.keySet()));
            }
            List<String[]> merges = new ArrayList<>();
            for (String m : meta.getStringArray("tokenizer.ggml.merges")) {
                int space = m.indexOf(' ', 1);
                if (space < 0) {
                    throw new TokenizerException(source + ": merge '" + m + "' is not two pieces separated by a space");
                }
                merges.add(new String[] {m.substring(0, space), m.substring(space + 1)});
            }
            BpeMerger merger = new BpeMerger(vocab, merges, IGNORE_MERGES_AND_ADD_BOS.contains(pre), false, -1);
            model = new ModelTokenizer.Bpe(ModelTokenizer.FragmentNormalizer.IDENTITY, new RegexSplitter(regexes), true,
                    merger, false);
        }

        byte[][] bytes = new byte[n][];
        boolean[] special = new boolean[n];
        for (int i = 0; i < n; i++) {
            bytes[i] = tokenBytes(pieces[i], types[i], sentencePiece);
            special[i] = types[i] == TokenType.CONTROL || types[i] == TokenType.UNKNOWN;
        }

        boolean phi3 = meta.findString("general.name").map(s -> s.toLowerCase(Locale.ROOT))
                .filter(s -> s.contains("phi-3") || s.contains("phi3")).isPresent();
        List<SpecialTokenSplitter.Entry> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            TokenType t = types[i];
            if (t == TokenType.CONTROL || t == TokenType.USER_DEFINED || t == TokenType.UNKNOWN) {
                // llama.cpp gives Phi-3's special tokens rstrip, except these three.
                boolean rstrip = phi3 && !Set.of("<unk>", "<s>", "<|endoftext|>").contains(pieces[i]);
                entries.add(new SpecialTokenSplitter.Entry(pieces[i], i, t == TokenType.USER_DEFINED, false, rstrip));
            }
        }

        int bos = id(meta, "bos_token_id", sentencePiece ? 1 : 11, n);
        int eos = id(meta, "eos_token_id", sentencePiece ? 2 : 11, n);
        int unk = id(meta, "unknown_token_id", sentencePiece ? 0 : -1, n);
        int pad = id(meta, "padding_token_id", -1, n);
        int eot = id(meta, "eot_token_id", firstPresent(vocab, "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>"), n);
        int eom = id(meta, "eom_token_id", firstPresent(vocab, "<|eom_id|>"), n);
        boolean addBos = meta.findBool("tokenizer.ggml.add_bos_token")
                .orElse(sentencePiece || IGNORE_MERGES_AND_ADD_BOS.contains(pre));
        boolean addEos = meta.findBool("tokenizer.ggml.add_eos_token").orElse(false);
        SpecialTokens specialTokens = new SpecialTokens(bos, eos, eot, eom, pad, unk, addBos && bos >= 0, addEos && eos >= 0);
        return new ModelTokenizer(source, pieces, bytes, special, specialTokens,
                new SpecialTokenSplitter(SpecialTokenSplitter.Mode.LLAMA_CPP, entries), model);
    }

    /** What llama.cpp's {@code token_to_piece} writes for a token (special tokens as their text). */
    private static byte[] tokenBytes(String piece, TokenType type, boolean sentencePiece) {
        if (type == TokenType.NORMAL) {
            if (sentencePiece) {
                return piece.replace(SentencePieceEncoder.SPACE, ' ').getBytes(StandardCharsets.UTF_8);
            }
            byte[] b = ByteLevel.decode(piece);
            return b != null ? b : piece.getBytes(StandardCharsets.UTF_8);
        }
        if (type == TokenType.BYTE && piece.length() == 6 && piece.startsWith("<0x")) {
            return new byte[] {(byte) Integer.parseInt(piece.substring(3, 5), 16)};
        }
        return piece.getBytes(StandardCharsets.UTF_8);
    }

    /** {@code tokenizer.ggml.<key>}, the default when absent; -1 when it is u32 -1 or outside the vocabulary. */
    private static int id(GgufMetadata meta, String key, int fallback, int n) {
        long v = meta.findLong("tokenizer.ggml." + key).orElse(fallback);
        return v >= 0 && v < n ? (int) v : -1;
    }

    private static int firstPresent(Map<String, Integer> vocab, String... texts) {
        for (String t : texts) {
            Integer id = vocab.get(t);
            if (id != null) {
                return id;
            }
        }
        return -1;
    }
}
