package io.nereid.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SentencePiece-style family of HF {@code tokenizer.json} (Llama 2, Mistral): BPE over
 * {@code ▁}-joined text with byte fallback, in both shapes HF writes it (legacy normalizers
 * Prepend + Replace, and the Metaspace pre-tokenizer), decoded with Replace / ByteFallback /
 * Fuse / Strip. A hand-made vocabulary keeps the expected ids checkable by hand.
 */
class MetaspaceBpeTest {

    @TempDir
    Path dir;

    // ids: 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF>, then pieces.
    private static String vocab() {
        StringBuilder sb = new StringBuilder("\"<unk>\": 0, \"<s>\": 1, \"</s>\": 2");
        for (int b = 0; b < 256; b++) {
            sb.append(String.format(", \"<0x%02X>\": %d", b, 3 + b));
        }
        String[] pieces = {"▁", "H", "e", "l", "o", "w", "r", "d", "▁H", "el", "lo", "▁w", "or", "ld", "▁Hel", "▁Hello",
            "▁wor", "▁world"};
        for (int i = 0; i < pieces.length; i++) {
            sb.append(", \"").append(pieces[i]).append("\": ").append(259 + i);
        }
        return sb.toString();
    }

    private static final String MERGES = "[\"▁ H\", \"e l\", \"l o\", \"▁ w\", \"o r\", \"l d\", \"▁H el\", \"▁Hel lo\","
            + " \"▁w or\", \"▁wor ld\"]";
    private static final String ADDED = "[{\"id\": 0, \"content\": \"<unk>\", \"special\": true},"
            + " {\"id\": 1, \"content\": \"<s>\", \"special\": true}, {\"id\": 2, \"content\": \"</s>\", \"special\": true}]";
    private static final String DECODER = "{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\":"
            + " {\"String\": \"▁\"}, \"content\": \" \"}, {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"},"
            + " {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}]}";
    private static final String POST = "{\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\","
            + " \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}]}";

    private Tokenizer load(String normalizer, String preTokenizer) throws IOException {
        Path file = dir.resolve("tokenizer.json");
        Files.writeString(file, "{\"added_tokens\": " + ADDED + ", \"normalizer\": " + normalizer
                + ", \"pre_tokenizer\": " + preTokenizer + ", \"post_processor\": " + POST + ", \"decoder\": " + DECODER
                + ", \"model\": {\"type\": \"BPE\", \"byte_fallback\": true, \"unk_token\": \"<unk>\", \"vocab\": {"
                + vocab() + "}, \"merges\": " + MERGES + "}}");
        Files.writeString(dir.resolve("tokenizer_config.json"), "{\"bos_token\": \"<s>\", \"eos_token\": \"</s>\"}");
        return HfTokenizerLoader.load(dir);
    }

    private Tokenizer legacy() throws IOException {
        return load("{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"▁\"},"
                + " {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"▁\"}]}", "null");
    }

    private Tokenizer metaspace() throws IOException {
        return load("null", "{\"type\": \"Metaspace\", \"replacement\": \"▁\", \"prepend_scheme\": \"first\", \"split\": false}");
    }

    @Test
    void mergesByRankOverSpaceJoinedText() throws IOException {
        for (Tokenizer t : new Tokenizer[] {legacy(), metaspace()}) {
            assertArrayEquals(new int[] {274, 276}, t.encode("Hello world", false, true), t.toString()); // ▁Hello ▁world
            assertEquals("Hello world", t.decode(t.encode("Hello world", false, true)));
        }
    }

    @Test
    void charactersOutsideTheVocabularyFallBackToBytesAndDecodeBack() throws IOException {
        Tokenizer t = legacy();
        int[] ids = t.encode("Hello é", false, true);
        // ▁Hello, ▁, then é = C3 A9 as byte tokens 3 + 0xC3, 3 + 0xA9.
        assertArrayEquals(new int[] {274, 259, 3 + 0xC3, 3 + 0xA9}, ids);
        assertEquals("Hello é", t.decode(ids));
        assertTrue(t.stripsLeadingSpace());
    }

    @Test
    void bosComesFromThePostProcessorAndSpecialTokensSplitTheText() throws IOException {
        Tokenizer t = metaspace();
        assertEquals(1, t.specialTokens().bos());
        assertTrue(t.specialTokens().addBos());
        assertArrayEquals(new int[] {1, 274}, t.encode("Hello", true, true));
        assertArrayEquals(new int[] {274, 2, 260, 268, 269}, t.encode("Hello</s>Hello", false, true),
                "prepend_scheme first: no ▁ after a special token (H el lo)");
        assertEquals("Hello world", t.decode(new int[] {1, 274, 276}, true));
    }
}
