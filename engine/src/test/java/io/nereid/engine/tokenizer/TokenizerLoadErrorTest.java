package io.nereid.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import io.nereid.engine.gguf.GgufArray;
import io.nereid.engine.gguf.GgufWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad tokenizer sources give a {@link TokenizerException} that names the file and the reason. */
class TokenizerLoadErrorTest {

    @TempDir
    Path dir;

    private Path gguf(String name, GgufWriter w) throws IOException {
        Path p = dir.resolve(name);
        w.write(p);
        return p;
    }

    private static void assertMessage(TokenizerException e, Path file, String reason) {
        assertTrue(e.getMessage().contains(file.toString()), "names the file: " + e.getMessage());
        assertTrue(e.getMessage().contains(reason), "says '" + reason + "': " + e.getMessage());
    }

    @Test
    void aGgufWithoutTokenizerMetadataIsRejected() throws IOException {
        Path p = gguf("no-tokenizer.gguf", new GgufWriter().putString("general.architecture", "llama"));
        var e = assertThrows(TokenizerException.class, () -> GgufTokenizerLoader.load(p));
        assertMessage(e, p, "no tokenizer metadata");
    }

    @Test
    void anUnsupportedTokenizerModelIsRejectedByName() throws IOException {
        Path p = gguf("bert.gguf", new GgufWriter().putString("tokenizer.ggml.model", "bert")
                .putStringArray("tokenizer.ggml.tokens", List.of("a", "b")));
        var e = assertThrows(TokenizerException.class, () -> GgufTokenizerLoader.load(p));
        assertMessage(e, p, "tokenizer model 'bert'");
    }

    @Test
    void anUnknownPreTokenizerIsAnErrorNotAFallback() throws IOException {
        Path p = gguf("pre.gguf", new GgufWriter().putString("tokenizer.ggml.model", "gpt2")
                .putString("tokenizer.ggml.pre", "made-up-pre")
                .putStringArray("tokenizer.ggml.tokens", List.of("a", "b", "ab"))
                .putStringArray("tokenizer.ggml.merges", List.of("a b")));
        var e = assertThrows(TokenizerException.class, () -> GgufTokenizerLoader.load(p));
        assertMessage(e, p, "unknown pre-tokenizer 'made-up-pre'");
        assertTrue(e.getMessage().contains("llama-bpe") && e.getMessage().contains("qwen2"), e.getMessage());
    }

    @Test
    void inconsistentArraysAreRejected() throws IOException {
        Path p = gguf("scores.gguf", new GgufWriter().putString("tokenizer.ggml.model", "llama")
                .putStringArray("tokenizer.ggml.tokens", List.of("a", "b", "c"))
                .putArray("tokenizer.ggml.scores", GgufArray.ofFloat32(new float[] {0f, 1f})));
        var e = assertThrows(TokenizerException.class, () -> GgufTokenizerLoader.load(p));
        assertMessage(e, p, "tokenizer.ggml.scores has 2 entries for 3 tokens");
    }

    @Test
    void aTruncatedGgufIsATokenizerErrorNamingTheFile() throws IOException {
        byte[] whole = Files.readAllBytes(Fixtures.path("tokenizers/gpt-2/vocab.gguf"));
        Path p = dir.resolve("truncated.gguf");
        Files.write(p, java.util.Arrays.copyOf(whole, whole.length / 2));
        var e = assertThrows(TokenizerException.class, () -> GgufTokenizerLoader.load(p));
        assertTrue(e.getMessage().contains(p.toString()), e.getMessage());
    }

    @Test
    void malformedOrUnsupportedTokenizerJsonIsRejected() throws IOException {
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{\"model\": {\"type\": \"BPE\", ");
        assertMessage(assertThrows(TokenizerException.class, () -> HfTokenizerLoader.load(bad)), bad, "malformed JSON");

        Path unigram = dir.resolve("unigram.json");
        Files.writeString(unigram, "{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}");
        assertMessage(assertThrows(TokenizerException.class, () -> HfTokenizerLoader.load(unigram)), unigram,
                "tokenizer model 'Unigram' is not supported");

        Path pre = dir.resolve("pre.json");
        Files.writeString(pre, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []},"
                + " \"pre_tokenizer\": {\"type\": \"Digits\"}}");
        assertMessage(assertThrows(TokenizerException.class, () -> HfTokenizerLoader.load(pre)), pre,
                "pre-tokenizer 'Digits' is not supported");

        Path missing = dir.resolve("nope");
        assertThrows(TokenizerException.class, () -> HfTokenizerLoader.load(missing));
    }
}
