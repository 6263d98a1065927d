package io.nereid.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nereid.engine.Fixtures;
import io.nereid.engine.json.Json;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The tokenizer of the fixture model stories260K (a real GGUF model file) against llama.cpp's ids and text. */
class StoriesModelTokenizerTest {

    private final Tokenizer tokenizer = GgufTokenizerLoader.load(Fixtures.path("models/stories260K.gguf"));
    private final Map<String, Object> reference = Json.parseObject(Fixtures.read("models/stories260K.json"));

    @Test
    void promptGetsBosAndTheDummyPrefixSpace() {
        assertArrayEquals(TokenizerFixtureTest.ints(reference.get("prompt_ids")),
                tokenizer.encode((String) reference.get("prompt"), true, true));
        assertEquals(List.of("<s>", "▁Once", "▁upon", "▁a", "▁time"),
                java.util.Arrays.stream(TokenizerFixtureTest.ints(reference.get("prompt_ids"))).mapToObj(tokenizer::piece).toList());
    }

    @Test
    void greedyContinuationDecodesToTheReferenceText() {
        int[] prompt = TokenizerFixtureTest.ints(reference.get("prompt_ids"));
        int[] greedy = TokenizerFixtureTest.ints(reference.get("greedy_ids"));
        int[] all = java.util.stream.IntStream.concat(java.util.Arrays.stream(prompt), java.util.Arrays.stream(greedy)).toArray();
        assertEquals(reference.get("full_text"), tokenizer.decode(all, true));
        assertEquals(512, tokenizer.vocabSize());
        assertEquals(new SpecialTokens(1, 2, -1, -1, -1, 0, true, false), tokenizer.specialTokens());
    }
}
