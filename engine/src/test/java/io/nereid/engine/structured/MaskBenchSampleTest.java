package io.nereid.engine.structured;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import io.nereid.engine.tokenizer.HfTokenizerLoader;
import io.nereid.engine.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A fixed sample of {@code ../shared/fixtures/maskbench} (every 30th file, about 230 schemas of all
 * splits), run as MaskBench runs it with the Llama 3 tokenizer: every schema that compiles accepts
 * each of its valid instances token by token and rejects each invalid one; a schema that does not
 * compile is refused with a message. The whole set runs in {@code bin/nereid structured-bench}.
 */
class MaskBenchSampleTest {

    @Test
    void compiledSchemasAcceptEveryValidInstanceAndRejectEveryInvalidOne() throws IOException {
        Tokenizer llama3 = HfTokenizerLoader.load(Fixtures.path("tokenizers/llama3/tokenizer.json"));
        List<Path> files;
        try (Stream<Path> s = Files.list(Fixtures.path("maskbench/data"))) {
            files = s.sorted().toList();
        }
        List<String> wrong = new ArrayList<>();
        int passing = 0, refused = 0, sampled = 0;
        for (int i = 0; i < files.size(); i += 30) {
            MaskBench.Result r = MaskBench.run(files.get(i), llama3, false, 30_000);
            sampled++;
            switch (r.outcome()) {
                case PASSING -> passing++;
                case COMPILE_ERROR -> {
                    refused++;
                    assertTrue(r.detail() != null && !r.detail().isBlank(), r.file());
                }
                default -> wrong.add(r.file() + ": " + r.outcome() + " " + r.detail());
            }
        }
        assertEquals(List.of(), wrong, "no instance judged wrongly");
        assertTrue(passing >= 0.85 * sampled, passing + " of " + sampled + " pass (" + refused + " refused)");
    }
}
