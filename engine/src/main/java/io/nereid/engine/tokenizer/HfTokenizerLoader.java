package io.nereid.engine.tokenizer;

import io.nereid.engine.json.Json;
import io.nereid.engine.json.JsonException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Builds a {@link Tokenizer} from a Hugging Face {@code tokenizer.json} (and, when present,
 * {@code tokenizer_config.json} beside it) for the two BPE families:
 * <ul>
 *   <li>byte-level BPE (GPT-2, Llama 3, Qwen 2/3): {@code Split} regexes and/or
 *       {@code ByteLevel} pre-tokenizer, optional NFC normalizer, {@code ignore_merges};</li>
 *   <li>SentencePiece-style BPE (Llama 2, Mistral): {@code Metaspace} or
 *       {@code Prepend}+{@code Replace} normalizers, {@code byte_fallback}.</li>
 * </ul>
 * Added tokens are matched leftmost-longest as HF does; non-special ones even when special
 * tokens are not parsed. Anything else in the file (another model type, an unknown
 * pre-tokenizer or normalizer) is a {@link TokenizerException} naming the file and the
 * component — never a silent approximation. Stateless.
 */
public final class HfTokenizerLoader {

    static final String GPT2_REGEX =
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

    private HfTokenizerLoader() {
    }

    /** Loads {@code tokenizer.json} from a model directory or the file itself. */
    public static Tokenizer load(Path path) {
        return load(path, 0, List.of());
    }

    /**
     * Loads {@code tokenizer.json} for a model whose embedding has {@code modelVocabSize} rows:
     * ids the file does not define up to that size (a padded embedding, as Qwen's) become special
     * tokens {@code [PADn]} that decode to nothing; {@code moreStops} join the ids that end
     * generation ({@link SpecialTokens#moreStops}).
     */
    public static Tokenizer load(Path path, int modelVocabSize, List<Integer> moreStops) {
        Path file = Files.isDirectory(path) ? path.resolve("tokenizer.json") : path;
        Map<String, Object> json = readJson(file);
        Path configFile = file.resolveSibling("tokenizer_config.json");
        Map<String, Object> config = Files.isRegularFile(configFile) ? readJson(configFile) : Map.of();
        return new Builder(file.toString(), json, config, modelVocabSize, moreStops).build();
    }

    private static Map<String, Object> readJson(Path file) {
        try {
            return Json.parseObject(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new TokenizerException(file + ": cannot read: " + e.getMessage(), e);
        } catch (JsonException e) {
            throw new TokenizerException(file + ": malformed JSON: " + e.getMessage(), e);
        }
    }

    /** One load: holds the parsed file while the parts are assembled. */
    private static final class Builder {
        private final String source;
        private final Map<String, Object> json;
        private final Map<String, Object> config;
        private final int modelVocabSize;
        private final List<Integer> moreStops;
        private final Map<String, Integer> vocab = new HashMap<>();
        private final List<String> extraRegexes = new ArrayList<>();
        private ModelTokenizer.FragmentNormalizer normalizer = ModelTokenizer.FragmentNormalizer.IDENTITY;
        private boolean byteLevel;
        private boolean stripsLeadingSpace;

        Builder(String source, Map<String, Object> json, Map<String, Object> config, int modelVocabSize,
                List<Integer> moreStops) {
            this.source = source;
            this.json = json;
            this.config = config;
            this.modelVocabSize = modelVocabSize;
            this.moreStops = moreStops;
        }

        Tokenizer build() {
            Map<String, Object> model = object(json.get("model"), "model");
            String type = model.get("type") == null ? "BPE" : string(model.get("type"), "model.type");
            if (!type.equals("BPE")) {
                throw error("tokenizer model '" + type + "' is not supported (only BPE)");
            }
            for (Map.Entry<String, Object> e : object(model.get("vocab"), "model.vocab").entrySet()) {
                vocab.put(e.getKey(), (int) number(e.getValue(), "model.vocab"));
            }
            List<AddedToken> added = addedTokens();
            for (AddedToken t : added) {
                vocab.putIfAbsent(t.content(), t.id());
            }
            int defined = vocab.values().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
            int size = Math.max(defined, modelVocabSize);
            String[] pieces = new String[size];
            vocab.forEach((piece, id) -> {
                if (id < 0) {
                    throw error("negative token id " + id + " for '" + piece + "'");
                }
                pieces[id] = piece;
            });
            for (AddedToken t : added) {
                pieces[t.id()] = t.content();
            }
            for (int i = 0; i < defined; i++) {
                if (pieces[i] == null) {
                    throw error("token id " + i + " is missing from the vocabulary");
                }
            }

            normalizer = normalizer(json.get("normalizer"));
            preTokenizer(json.get("pre_tokenizer"));
            decoder(json.get("decoder"));

            String unk = model.get("unk_token") instanceof String s ? s : null;
            int unkId = unk == null ? -1 : vocab.getOrDefault(unk, -1);
            BpeMerger merger = new BpeMerger(vocab, merges(model.get("merges")),
                    Boolean.TRUE.equals(model.get("ignore_merges")), Boolean.TRUE.equals(model.get("byte_fallback")), unkId);

            byte[][] bytes = new byte[size][];
            boolean[] special = new boolean[size];
            for (int i = 0; i < defined; i++) {
                bytes[i] = pieceBytes(pieces[i]);
            }
            for (int i = defined; i < size; i++) { // llama.cpp's converter names padding rows the same way
                pieces[i] = "[PAD" + i + "]";
                bytes[i] = new byte[0];
                special[i] = true;
            }
            List<SpecialTokenSplitter.Entry> entries = new ArrayList<>();
            for (AddedToken t : added) {
                bytes[t.id()] = t.content().getBytes(StandardCharsets.UTF_8);
                special[t.id()] = t.special();
                entries.add(new SpecialTokenSplitter.Entry(t.content(), t.id(), !t.special(), t.lstrip(), t.rstrip()));
            }
            var bpe = new ModelTokenizer.Bpe(normalizer, new RegexSplitter(extraRegexes), byteLevel, merger,
                    stripsLeadingSpace);
            return new ModelTokenizer(source, pieces, bytes, special, specialTokens(unkId),
                    new SpecialTokenSplitter(SpecialTokenSplitter.Mode.HF, entries), bpe);
        }

        private byte[] pieceBytes(String piece) {
            if (byteLevel) {
                byte[] b = ByteLevel.decode(piece);
                return b != null ? b : piece.getBytes(StandardCharsets.UTF_8);
            }
            if (piece.length() == 6 && piece.startsWith("<0x") && piece.endsWith(">")) {
                try {
                    return new byte[] {(byte) Integer.parseInt(piece.substring(3, 5), 16)};
                } catch (NumberFormatException notAByteToken) {
                    // an ordinary piece that happens to look similar
                }
            }
            return piece.replace(SentencePieceEncoder.SPACE, ' ').getBytes(StandardCharsets.UTF_8);
        }

        private record AddedToken(int id, String content, boolean special, boolean lstrip, boolean rstrip) {
        }

        private List<AddedToken> addedTokens() {
            List<AddedToken> out = new ArrayList<>();
            Object list = json.get("added_tokens");
            if (list == null) {
                return out;
            }
            for (Object o : list(list, "added_tokens")) {
                Map<String, Object> t = object(o, "added_tokens[]");
                out.add(new AddedToken((int) number(t.get("id"), "added_tokens[].id"),
                        string(t.get("content"), "added_tokens[].content"),
                        Boolean.TRUE.equals(t.get("special")),
                        Boolean.TRUE.equals(t.get("lstrip")), Boolean.TRUE.equals(t.get("rstrip"))));
            }
            return out;
        }

        private List<String[]> merges(Object value) {
            List<String[]> out = new ArrayList<>();
            if (value == null) {
                return out;
            }
            for (Object m : list(value, "model.merges")) {
                if (m instanceof String s) {
                    int space = s.indexOf(' ', 1);
                    if (space < 0) {
                        throw error("merge '" + s + "' is not two pieces separated by a space");
                    }
                    out.add(new String[] {s.substring(0, space), s.substring(space + 1)});
                } else if (m instanceof List<?> pair && pair.size() == 2) {
                    out.add(new String[] {string(pair.get(0), "merge"), string(pair.get(1), "merge")});
                } else {
                    throw error("merge " + m + " is neither \"a b\" nor [a, b]");
                }
            }
            return out;
        }

        private ModelTokenizer.FragmentNormalizer normalizer(Object value) {
            if (value == null) {
                return ModelTokenizer.FragmentNormalizer.IDENTITY;
            }
            Map<String, Object> n = object(value, "normalizer");
            String type = string(n.get("type"), "normalizer.type");
            return switch (type) {
                case "NFC" -> ModelTokenizer.NFC;
                case "NFD", "NFKC", "NFKD" -> ModelTokenizer.FragmentNormalizer.of(
                        s -> java.text.Normalizer.normalize(s, java.text.Normalizer.Form.valueOf(type)));
                case "Lowercase" -> ModelTokenizer.FragmentNormalizer.of(s -> s.toLowerCase(java.util.Locale.ROOT));
                case "Prepend" -> {
                    String prefix = string(n.get("prepend"), "normalizer.prepend");
                    yield (s, first) -> s.isEmpty() ? s : prefix + s;
                }
                case "Replace" -> {
                    Map<String, Object> pattern = object(n.get("pattern"), "normalizer.pattern");
                    String content = string(n.get("content"), "normalizer.content");
                    if (pattern.get("String") instanceof String literal) {
                        yield ModelTokenizer.FragmentNormalizer.of(s -> s.replace(literal, content));
                    }
                    Pattern regex = Pattern.compile(string(pattern.get("Regex"), "normalizer.pattern.Regex"),
                            Pattern.UNICODE_CHARACTER_CLASS);
                    yield ModelTokenizer.FragmentNormalizer.of(s -> regex.matcher(s).replaceAll(
                            java.util.regex.Matcher.quoteReplacement(content)));
                }
                case "Sequence" -> {
                    ModelTokenizer.FragmentNormalizer all = ModelTokenizer.FragmentNormalizer.IDENTITY;
                    for (Object part : list(n.get("normalizers"), "normalizer.normalizers")) {
                        all = all.then(normalizer(part));
                    }
                    yield all;
                }
                default -> throw error("normalizer '" + type + "' is not supported");
            };
        }

        private void preTokenizer(Object value) {
            if (value == null) {
                return;
            }
            Map<String, Object> p = object(value, "pre_tokenizer");
            String type = string(p.get("type"), "pre_tokenizer.type");
            switch (type) {
                case "Sequence" -> {
                    for (Object part : list(p.get("pretokenizers"), "pre_tokenizer.pretokenizers")) {
                        preTokenizer(part);
                    }
                }
                case "Split" -> {
                    String behavior = string(p.get("behavior"), "pre_tokenizer.behavior");
                    if (!behavior.equals("Isolated") || Boolean.TRUE.equals(p.get("invert"))) {
                        throw error("Split pre-tokenizer with behavior " + behavior
                                + (Boolean.TRUE.equals(p.get("invert")) ? " (inverted)" : "") + " is not supported");
                    }
                    Map<String, Object> pattern = object(p.get("pattern"), "pre_tokenizer.pattern");
                    extraRegexes.add(pattern.get("String") instanceof String literal
                            ? Pattern.quote(literal) : string(pattern.get("Regex"), "pre_tokenizer.pattern.Regex"));
                }
                case "ByteLevel" -> {
                    byteLevel = true;
                    if (Boolean.TRUE.equals(p.get("add_prefix_space"))) {
                        normalizer = normalizer.then((s, first) -> first && !s.startsWith(" ") ? " " + s : s);
                    }
                    if (!Boolean.FALSE.equals(p.get("use_regex"))) {
                        extraRegexes.add(GPT2_REGEX);
                    }
                }
                case "Metaspace" -> {
                    String replacement = string(p.get("replacement"), "pre_tokenizer.replacement");
                    String scheme = p.get("prepend_scheme") instanceof String s ? s
                            : Boolean.FALSE.equals(p.get("add_prefix_space")) ? "never" : "always";
                    normalizer = normalizer.then((s, first) -> {
                        String replaced = s.replace(" ", replacement);
                        boolean prepend = scheme.equals("always") || (scheme.equals("first") && first);
                        return prepend && !replaced.startsWith(replacement) ? replacement + replaced : replaced;
                    });
                    if (!Boolean.FALSE.equals(p.get("split"))) {
                        String r = Pattern.quote(replacement);
                        extraRegexes.add(r + "(?:(?!" + r + ").)*|(?:(?!" + r + ").)+");
                    }
                }
                default -> throw error("pre-tokenizer '" + type + "' is not supported");
            }
        }

        private void decoder(Object value) {
            if (value == null) {
                return;
            }
            Map<String, Object> d = object(value, "decoder");
            String type = string(d.get("type"), "decoder.type");
            switch (type) {
                case "Sequence" -> {
                    for (Object part : list(d.get("decoders"), "decoder.decoders")) {
                        decoder(part);
                    }
                }
                case "ByteLevel" -> byteLevel = true;
                case "Strip" -> stripsLeadingSpace |= " ".equals(d.get("content")) && number(d.get("start"), "decoder.start") > 0;
                case "Metaspace" -> stripsLeadingSpace |= !"never".equals(d.get("prepend_scheme"));
                case "Replace", "ByteFallback", "Fuse" -> {
                    // Folded into pieceBytes: ▁ -> space, <0xXX> -> byte, concatenation.
                }
                default -> throw error("decoder '" + type + "' is not supported");
            }
        }

        private SpecialTokens specialTokens(int unkId) {
            int bos = idOf(config.get("bos_token"));
            int eos = idOf(config.get("eos_token"));
            int pad = idOf(config.get("pad_token"));
            int eot = firstPresent("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>");
            int eom = firstPresent("<|eom_id|>");
            boolean[] adds = postProcessorAdds(bos, eos);
            boolean addBos = config.get("add_bos_token") instanceof Boolean b ? b : adds[0];
            boolean addEos = config.get("add_eos_token") instanceof Boolean b ? b : adds[1];
            return new SpecialTokens(bos, eos, eot, eom, pad, unkId, addBos && bos >= 0, addEos && eos >= 0, moreStops);
        }

        /** {@code TemplateProcessing}: does the single-sequence template put BOS before / EOS after it? */
        private boolean[] postProcessorAdds(int bos, int eos) {
            if (!(json.get("post_processor") instanceof Map<?, ?> pp) || !"TemplateProcessing".equals(pp.get("type"))) {
                return new boolean[] {false, false};
            }
            boolean seenSequence = false;
            boolean[] adds = new boolean[2];
            for (Object item : list(pp.get("single"), "post_processor.single")) {
                Map<String, Object> m = object(item, "post_processor.single[]");
                if (m.containsKey("Sequence")) {
                    seenSequence = true;
                } else if (m.get("SpecialToken") instanceof Map<?, ?> st) {
                    int id = vocab.getOrDefault(String.valueOf(st.get("id")), -1);
                    if (!seenSequence && id == bos) {
                        adds[0] = true;
                    } else if (seenSequence && id == eos) {
                        adds[1] = true;
                    }
                }
            }
            return adds;
        }

        private int idOf(Object token) {
            Object content = token instanceof Map<?, ?> m ? m.get("content") : token;
            return content instanceof String s ? vocab.getOrDefault(s, -1) : -1;
        }

        private int firstPresent(String... candidates) {
            for (String c : candidates) {
                Integer id = vocab.get(c);
                if (id != null) {
                    return id;
                }
            }
            return -1;
        }

        @SuppressWarnings("unchecked")
        private Map<String, Object> object(Object o, String what) {
            if (o instanceof Map<?, ?> m) {
                return (Map<String, Object>) m;
            }
            throw error(what + " must be an object");
        }

        private List<?> list(Object o, String what) {
            if (o instanceof List<?> l) {
                return l;
            }
            throw error(what + " must be an array");
        }

        private String string(Object o, String what) {
            if (o instanceof String s) {
                return s;
            }
            throw error(what + " must be a string");
        }

        private long number(Object o, String what) {
            if (o instanceof Long l) {
                return l;
            }
            throw error(what + " must be an integer");
        }

        private TokenizerException error(String reason) {
            return new TokenizerException(source + ": " + reason);
        }
    }
}
