package io.nereid.engine.tokenizer;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.function.UnaryOperator;

/**
 * The {@link Tokenizer} every loader builds: special/added tokens are cut out first
 * ({@link SpecialTokenSplitter}), each remaining text fragment is normalized, pre-tokenized and
 * encoded by the model ({@link SentencePieceEncoder} or {@link RegexSplitter} +
 * {@link BpeMerger}), and BOS/EOS are added per the model's flags. Decoding uses each token's
 * bytes, computed once at construction. Immutable; thread-safe.
 */
final class ModelTokenizer implements Tokenizer {

    /** How text fragments between special tokens become ids. */
    sealed interface Model permits SentencePiece, Bpe {
    }

    /** SentencePiece (llama.cpp SPM) with the dummy-prefix space when {@code addSpacePrefix}. */
    record SentencePiece(SentencePieceEncoder encoder, boolean addSpacePrefix) implements Model {
    }

    /**
     * BPE with merge ranks.
     *
     * @param normalizer applied to each text fragment first; gets whether the fragment is the
     *                   first of the input (HF Metaspace {@code prepend_scheme: first})
     * @param splitter   regex pre-tokenization
     * @param byteLevel  map each piece to GPT-2's byte alphabet before merging
     */
    record Bpe(FragmentNormalizer normalizer, RegexSplitter splitter, boolean byteLevel, BpeMerger merger,
            boolean stripsLeadingSpace) implements Model {
    }

    /** Text normalization of one fragment between special tokens. */
    @FunctionalInterface
    interface FragmentNormalizer {
        FragmentNormalizer IDENTITY = (text, first) -> text;

        String apply(String text, boolean firstFragment);

        static FragmentNormalizer of(UnaryOperator<String> f) {
            return (text, first) -> f.apply(text);
        }

        default FragmentNormalizer then(FragmentNormalizer next) {
            return (text, first) -> next.apply(apply(text, first), first);
        }
    }

    static final FragmentNormalizer NFC = FragmentNormalizer.of(s -> Normalizer.normalize(s, Normalizer.Form.NFC));

    private final String source;
    private final String[] pieces;
    private final byte[][] bytes;         // (vocabSize) what each token contributes to decoded text
    private final boolean[] special;
    private final SpecialTokens specialTokens;
    private final SpecialTokenSplitter splitter;
    private final Model model;

    ModelTokenizer(String source, String[] pieces, byte[][] bytes, boolean[] special, SpecialTokens specialTokens,
            SpecialTokenSplitter splitter, Model model) {
        this.source = source;
        this.pieces = pieces;
        this.bytes = bytes;
        this.special = special;
        this.specialTokens = specialTokens;
        this.splitter = splitter;
        this.model = model;
    }

    /** The fragment encoder (benchmarks reach in to measure its parts). */
    Model model() {
        return model;
    }

    @Override
    public int vocabSize() {
        return pieces.length;
    }

    @Override
    public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        IntList out = new IntList(text.length() / 3 + 4);
        if (addSpecial && specialTokens.addBos()) {
            out.add(specialTokens.bos());
        }
        boolean afterSpecial = true; // SentencePiece: the first fragment gets the dummy prefix too
        for (SpecialTokenSplitter.Fragment f : splitter.split(text, parseSpecial)) {
            boolean firstFragment = f.start() == 0;
            if (!f.isText()) {
                out.add(f.token());
                afterSpecial = true;
                continue;
            }
            String fragment = text.substring(f.start(), f.end());
            switch (model) {
                case SentencePiece spm -> spm.encoder().encode(fragment, spm.addSpacePrefix() && afterSpecial, out);
                case Bpe bpe -> encodeBpe(bpe, bpe.normalizer().apply(fragment, firstFragment), out);
            }
            afterSpecial = false;
        }
        if (addSpecial && specialTokens.addEos()) {
            out.add(specialTokens.eos());
        }
        return out.toArray();
    }

    private static void encodeBpe(Bpe bpe, String text, IntList out) {
        int[] bounds = bpe.splitter().split(text, 0, text.length());
        for (int k = 0; k < bounds.length; k += 2) {
            bpe.merger().encode(text.substring(bounds[k], bounds[k + 1]), bpe.byteLevel(), out);
        }
    }

    @Override
    public byte[] tokenBytes(int id) {
        return bytes[checkId(id)].clone();
    }

    @Override
    public boolean stripsLeadingSpace() {
        return switch (model) {
            case SentencePiece spm -> spm.addSpacePrefix();
            case Bpe bpe -> bpe.stripsLeadingSpace();
        };
    }

    @Override
    public String piece(int id) {
        return pieces[checkId(id)];
    }

    @Override
    public boolean isSpecial(int id) {
        return special[checkId(id)];
    }

    @Override
    public SpecialTokens specialTokens() {
        return specialTokens;
    }

    @Override
    public String decode(int[] ids, boolean skipSpecial) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(ids.length * 4);
        boolean first = true;
        for (int id : ids) {
            if (skipSpecial && special[checkId(id)]) {
                continue;
            }
            byte[] b = bytes[checkId(id)];
            int from = first && stripsLeadingSpace() && b.length > 0 && b[0] == ' ' ? 1 : 0;
            out.write(b, from, b.length - from);
            first = false;
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private int checkId(int id) {
        if (id < 0 || id >= pieces.length) {
            throw new IllegalArgumentException("token id " + id + " outside the vocabulary of " + pieces.length
                    + " (" + source + ")");
        }
        return id;
    }

    @Override
    public String toString() {
        return "Tokenizer[" + source + ", " + pieces.length + " tokens, " + model.getClass().getSimpleName() + "]";
    }

}
