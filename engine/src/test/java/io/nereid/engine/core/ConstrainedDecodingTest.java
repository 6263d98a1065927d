package io.nereid.engine.core;

import static io.nereid.engine.core.EngineTestSupport.backend;
import static io.nereid.engine.core.EngineTestSupport.config;
import static io.nereid.engine.core.EngineTestSupport.model;
import static io.nereid.engine.core.EngineTestSupport.prompt;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.Constraint;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.core.EngineTestSupport.Recorder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Structured output in the engine: every sampled output matches its constraint, batched with
 * unconstrained requests that stay as they were; greedy constrained output is the same with
 * speculative drafts; a constraint that is complete ends the choice even with ignore_eos and
 * min_tokens; one that cannot be compiled is refused before anything is queued.
 */
@Timeout(120)
class ConstrainedDecodingTest {

    private static final Pattern REGEX = Pattern.compile("(yes|no) [a-z]{2,6}( [0-9]{1,3}){1,4}!");
    private static final Constraint REGEX_CONSTRAINT = new Constraint.Regex(REGEX.pattern());
    private static final Constraint JSON = new Constraint.JsonSchema("""
            {"type":"object","properties":{"a":{"type":"integer","minimum":-5,"maximum":500},
             "b":{"enum":["x","yy",null]},"c":{"type":"array","items":{"type":"boolean"},"maxItems":3}},
             "required":["a","c"],"additionalProperties":false}""", false);

    private static List<Recorder> run(DraftProposer proposer, List<GenerationRequest> requests, boolean alone) {
        EngineConfig c = config(512, 16, true, 64);
        List<Recorder> out = new ArrayList<>();
        try (InflightEngine e = new InflightEngine(c, backend(c), model().tokenizer(), proposer)) {
            for (GenerationRequest q : requests) {
                Recorder r = new Recorder(q.n());
                e.submit(q, r);
                if (alone) {
                    r.await();
                }
                out.add(r);
            }
            for (Recorder r : out) {
                r.await();
            }
        }
        return out;
    }

    private static GenerationRequest request(int i, Constraint c, SamplingParams p, int n) {
        return GenerationRequest.builder("c" + i, prompt(900 + i, 12 + 5 * i)).sampling(p).maxTokens(120).n(n)
                .constraint(c).build();
    }

    private static SamplingParams sampled(long seed) {
        return new SamplingParams(1.0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), seed, 0);
    }

    @Test
    void sampledOutputsMatchTheirConstraintsBatchedWithOthers() {
        List<GenerationRequest> requests = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            Constraint c = i % 3 == 0 ? REGEX_CONSTRAINT : i % 3 == 1 ? JSON : null;
            requests.add(request(i, c, sampled(40 + i), 1 + i % 2));
        }
        List<Recorder> batched = run(DraftProposer.NONE, requests, false);
        List<Recorder> alone = run(DraftProposer.NONE, requests, true);
        for (int i = 0; i < requests.size(); i++) {
            Recorder r = batched.get(i);
            for (int c = 0; c < r.n; c++) {
                String text = r.text[c].toString();
                if (requests.get(i).constraint() == REGEX_CONSTRAINT) {
                    assertTrue(REGEX.matcher(text).matches(), text);
                    assertEquals(FinishReason.STOP, r.reasons[c]);
                } else if (requests.get(i).constraint() == JSON) {
                    assertValid(text);
                    assertEquals(FinishReason.STOP, r.reasons[c], text);
                }
                assertEquals(alone.get(i).tokens.get(c), r.tokens.get(c), "request " + i + " choice " + c + " batched or alone");
            }
        }
    }

    /** What {@link #JSON} allows, checked on the parsed value. */
    private static void assertValid(String text) {
        Map<String, Object> v = io.nereid.engine.json.Json.parseObject(text);
        assertTrue(java.util.Set.of("a", "b", "c").containsAll(v.keySet()) && v.containsKey("a") && v.containsKey("c"), text);
        long a = (Long) v.get("a");
        assertTrue(a >= -5 && a <= 500, text);
        if (v.containsKey("b")) {
            assertTrue(v.get("b") == null || List.of("x", "yy").contains(v.get("b")), text);
        }
        List<?> c = (List<?>) v.get("c");
        assertTrue(c.size() <= 3 && c.stream().allMatch(x -> x instanceof Boolean), text);
    }

    @Test
    void greedyConstrainedOutputIsTheSameWithDrafts() {
        List<GenerationRequest> requests = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            requests.add(request(i, i % 2 == 0 ? REGEX_CONSTRAINT : JSON, SamplingParams.GREEDY, 1));
        }
        List<Recorder> reference = run(DraftProposer.NONE, requests, true);
        List<Recorder> drafted = run(new NgramProposer(4, 1, 3, Integer.MAX_VALUE), requests, false);
        for (int i = 0; i < requests.size(); i++) {
            assertEquals(reference.get(i).tokens.get(0), drafted.get(i).tokens.get(0), "request " + i);
            assertEquals(reference.get(i).text[0].toString(), drafted.get(i).text[0].toString());
        }
    }

    @Test
    void aCompleteConstraintEndsTheChoiceEvenWithIgnoreEosAndMinTokens() {
        GenerationRequest q = GenerationRequest.builder("done", prompt(7, 20)).maxTokens(60).minTokens(50).ignoreEos(true)
                .sampling(sampled(3)).constraint(new Constraint.Choice(List.of("alpha", "beta"))).build();
        Recorder r = run(DraftProposer.NONE, List.of(q), true).get(0);
        assertTrue(List.of("alpha", "beta").contains(r.text[0].toString()), r.text[0].toString());
        assertEquals(FinishReason.STOP, r.reasons[0]);
    }

    @Test
    void aConstraintThatCannotBeCompiledIsRefusedBeforeAnythingIsQueued() {
        EngineConfig c = config(64, 16, true, 64);
        try (InflightEngine e = new InflightEngine(c, backend(c), model().tokenizer(), DraftProposer.NONE)) {
            GenerationRequest bad = GenerationRequest.builder("bad", prompt(1, 8)).constraint(
                    new Constraint.JsonSchema("{\"type\":\"object\",\"not\":{\"required\":[\"a\",\"b\"]}}", false)).build();
            RequestValidationException v = assertThrows(RequestValidationException.class, () -> e.submit(bad, new Recorder(1)));
            assertEquals("constraint", v.param());
            assertTrue(v.getMessage().contains("'not'"), v.getMessage());
            assertEquals(0, e.stats().waiting());
        }
    }
}
