package io.nereid.engine.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nereid.engine.Fixtures;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.engine.tokenizer.TokenizerFixtureTest;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The incremental detokenizer over real vocabularies: for every fixture case of all nine
 * tokenizers, feeding the reference ids one at a time (with and without skipping special
 * tokens) concatenates to exactly the whole-sequence decode — byte-fallback tokens of emoji
 * and Khmer, byte-level pieces that split characters, the SentencePiece leading space.
 */
class IncrementalDetokenizerFixtureTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"llama-spm", "phi-3", "gpt-2", "deepseek-coder", "falcon", "starcoder", "mpt", "llama3", "qwen3"})
    void tokenByTokenDecodingEqualsWholeDecodingOnEveryFixtureCase(String name) {
        Tokenizer tokenizer = TokenizerFixtureTest.tokenizer(name);
        List<Map<String, Object>> cases = Fixtures.jsonLines("tokenizers/" + name + "/cases.jsonl");
        for (Map<String, Object> c : cases) {
            int[] ids = TokenizerFixtureTest.ints(c.get("ids"));
            for (boolean skipSpecial : new boolean[] {false, true}) {
                IncrementalDetokenizer detok = new IncrementalDetokenizer(tokenizer, skipSpecial);
                StringBuilder streamed = new StringBuilder();
                for (int id : ids) {
                    streamed.append(detok.push(id));
                }
                streamed.append(detok.flush());
                assertEquals(tokenizer.decode(ids, skipSpecial), streamed.toString(),
                        name + " case " + c.get("id") + " skipSpecial=" + skipSpecial);
            }
            assertEquals(c.get("decoded"), tokenizer.decode(ids));
        }
    }

    @org.junit.jupiter.api.Test
    void aContinuationKeepsTheSpaceThatSeparatesItFromThePrompt() {
        Tokenizer spm = TokenizerFixtureTest.tokenizer("llama-spm");
        int[] prompt = spm.encode("Lily and Tom");
        int[] all = spm.encode("Lily and Tom were playing");
        int[] completion = java.util.Arrays.copyOfRange(all, prompt.length, all.length);
        IncrementalDetokenizer detok = new IncrementalDetokenizer(spm, true, true);
        StringBuilder out = new StringBuilder();
        for (int id : completion) {
            out.append(detok.push(id));
        }
        out.append(detok.flush());
        assertEquals(" were playing", out.toString());
        assertEquals("were playing", spm.decode(completion), "a whole decode starts a sequence");
    }
}
