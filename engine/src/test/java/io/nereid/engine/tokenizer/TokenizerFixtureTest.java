package io.nereid.engine.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every case of {@code ../shared/fixtures/tokenizers/<name>/cases.jsonl}: {@code ids} (no BOS,
 * special text parsed), {@code ids_specials_as_text}, {@code ids_add_special} and
 * {@code decoded}, exactly. Prints a pass count per tokenizer and fails listing every mismatch.
 */
public class TokenizerFixtureTest {

    static final Map<String, Tokenizer> LOADED = new ConcurrentHashMap<>();

    public static Tokenizer tokenizer(String name) {
        return LOADED.computeIfAbsent(name, n -> switch (n) {
            case "llama3", "qwen3" -> HfTokenizerLoader.load(Fixtures.path("tokenizers/" + n + "/tokenizer.json"));
            default -> GgufTokenizerLoader.load(Fixtures.path("tokenizers/" + n + "/vocab.gguf"));
        });
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"llama-spm", "phi-3", "gpt-2", "deepseek-coder", "falcon", "starcoder", "mpt", "llama3", "qwen3"})
    void everyFixtureCaseMatchesTheReferenceImplementation(String name) {
        Tokenizer tokenizer = tokenizer(name);
        List<Map<String, Object>> cases = Fixtures.jsonLines("tokenizers/" + name + "/cases.jsonl");
        List<String> failures = new ArrayList<>();
        int passed = 0;
        for (Map<String, Object> c : cases) {
            String text = (String) c.get("text");
            int[] ids = ints(c.get("ids"));
            boolean ok = check(failures, c, "ids", ids, tokenizer.encode(text, false, true));
            if (c.containsKey("ids_specials_as_text")) {
                ok &= check(failures, c, "ids_specials_as_text", ints(c.get("ids_specials_as_text")),
                        tokenizer.encode(text, false, false));
            }
            if (c.containsKey("ids_add_special")) {
                ok &= check(failures, c, "ids_add_special", ints(c.get("ids_add_special")),
                        tokenizer.encode(text, true, true));
            }
            String decoded = tokenizer.decode(ids);
            if (!decoded.equals(c.get("decoded"))) {
                failures.add("case " + c.get("id") + " decoded: expected " + quote(c.get("decoded")) + " got " + quote(decoded));
                ok = false;
            }
            if (c.get("decoded_skip_special") instanceof String skip && !tokenizer.decode(ids, true).equals(skip)) {
                failures.add("case " + c.get("id") + " decoded_skip_special: expected " + quote(skip)
                        + " got " + quote(tokenizer.decode(ids, true)));
                ok = false;
            }
            passed += ok ? 1 : 0;
        }
        System.out.printf("tokenizer fixtures: %-14s %d/%d cases pass%n", name, passed, cases.size());
        assertTrue(failures.isEmpty(), name + ": " + failures.size() + " mismatches:\n" + String.join("\n", failures));
        assertEquals(75, cases.size());
    }

    @Test
    void specialTokenIdsMatchTheModelsConventions() {
        SpecialTokens llama3 = tokenizer("llama3").specialTokens();
        assertEquals(128000, llama3.bos());
        assertEquals(128001, llama3.eos());
        assertEquals(128009, llama3.eot());
        assertTrue(!llama3.addBos(), "the shipped post-processor adds nothing");
        SpecialTokens qwen3 = tokenizer("qwen3").specialTokens();
        assertEquals(-1, qwen3.bos());
        assertEquals(151645, qwen3.eos());
        assertEquals(151643, qwen3.pad());
        assertTrue(tokenizer("qwen3").isSpecial(151644));
        assertTrue(!tokenizer("qwen3").isSpecial(151667), "<think> is an added token but not special");
    }

    private static boolean check(List<String> failures, Map<String, Object> c, String field, int[] expected, int[] actual) {
        if (Arrays.equals(expected, actual)) {
            return true;
        }
        failures.add("case " + c.get("id") + " " + field + " for " + quote(c.get("text")) + ": expected "
                + Arrays.toString(expected) + " got " + Arrays.toString(actual));
        return false;
    }

    public static int[] ints(Object list) {
        return ((List<?>) list).stream().mapToInt(o -> ((Long) o).intValue()).toArray();
    }

    private static String quote(Object s) {
        return "\"" + String.valueOf(s).replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + "\"";
    }
}
