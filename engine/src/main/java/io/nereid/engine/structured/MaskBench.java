package io.nereid.engine.structured;

import io.nereid.engine.json.Json;
import io.nereid.engine.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * MaskBench's procedure on one schema file (see {@code ../shared/fixtures/maskbench/README.md}):
 * compile the schema (time to first mask, TTFM: the compile and the first mask), then feed every
 * test instance, serialized compactly, token by token, computing the allowed-token mask before
 * each token (time between masks, TBM). A schema passes when it compiles, every valid instance is
 * accepted to its end and every invalid one is rejected at some token or not accepted at its end.
 * Used by {@code bin/nereid structured-bench} and the engine's tests. Stateless.
 */
public final class MaskBench {

    /** How one schema fared. */
    public enum Outcome {
        PASSING, COMPILE_ERROR, VALIDATION_ERROR, INVALIDATION_ERROR, TIMEOUT
    }

    /**
     * @param split       the file name before {@code ---} or without its trailing number ({@code Github_easy---o12.json},
     *                    {@code BFCL_java_12.json} → {@code Github_easy}, {@code BFCL_java})
     * @param detail      for a failure: the compile error, or which instance failed how
     * @param ttfmMicros  compile + first mask, µs (-1 when it did not compile)
     * @param tbmNanos    each later mask's time, ns
     */
    public record Result(String file, String split, Outcome outcome, String detail, long ttfmMicros, long[] tbmNanos) {
    }

    private MaskBench() {
    }

    /** The split of a MaskBench file name. */
    public static String split(String fileName) {
        String base = fileName.endsWith(".json") ? fileName.substring(0, fileName.length() - 5) : fileName;
        int dashes = base.indexOf("---");
        if (dashes > 0) {
            return base.substring(0, dashes);   // Github_easy---o10094
        }
        int u = base.lastIndexOf('_');   // BFCL_java_12
        return u > 0 && base.substring(u + 1).chars().allMatch(Character::isDigit) ? base.substring(0, u) : base;
    }

    /**
     * Runs one MaskBench file against {@code tokenizer}.
     *
     * @param timeoutMillis a schema taking longer than this (compile and every instance) is a timeout
     */
    @SuppressWarnings("unchecked")
    public static Result run(Path file, Tokenizer tokenizer, boolean freeWhitespace, long timeoutMillis) throws IOException {
        String name = file.getFileName().toString();
        Map<String, Object> doc = Json.parseObject(Files.readString(file));
        Object schema = doc.get("schema");
        List<Object> tests = (List<Object>) doc.getOrDefault("tests", List.of());
        long start = System.nanoTime();
        long deadline = start + timeoutMillis * 1_000_000L;
        CompiledConstraint compiled;
        try {
            compiled = new CompiledConstraint(new Automaton(JsonSchemaCompiler.compile(schema, freeWhitespace),
                    TokenTrie.of(tokenizer)));
        } catch (GrammarException e) {
            return new Result(name, split(name), Outcome.COMPILE_ERROR, e.getMessage(), -1, new long[0]);
        } catch (StackOverflowError e) {
            return new Result(name, split(name), Outcome.COMPILE_ERROR, "the schema nests too deeply", -1, new long[0]);
        }
        long ttfm = (System.nanoTime() - start) / 1000;
        List<Long> tbm = new ArrayList<>();
        Outcome outcome = Outcome.PASSING;
        String detail = null;
        int k = 0;
        try {
            for (Object t : tests) {
                Map<String, Object> test = (Map<String, Object>) t;
                boolean valid = Boolean.TRUE.equals(test.get("valid"));
                String text = compact(test.get("data"));
                int[] ids = tokenizer.encode(text, false, false);
                TokenMatcher m = compiled.matcher(new int[0]);
                boolean ok = true;
                int at = 0;
                for (int j = 0; j < ids.length; j++) {
                    if (j > 0) {
                        long t0 = System.nanoTime();
                        m.currentMask();
                        tbm.add(System.nanoTime() - t0);
                    }
                    if (!m.allows(ids[j])) {
                        ok = false;
                        at = j;
                        break;
                    }
                    m.accept(ids[j]);
                    if (System.nanoTime() > deadline) {
                        return new Result(name, split(name), Outcome.TIMEOUT, "over " + timeoutMillis + " ms", ttfm,
                                toArray(tbm));
                    }
                }
                boolean accepted = ok && m.accepting();
                if (valid && !accepted && outcome == Outcome.PASSING) {
                    outcome = Outcome.VALIDATION_ERROR;
                    detail = "valid instance " + k + " " + (ok ? "not complete at its end" : "rejected at token " + at
                            + " (after " + Constraints.quoteShort(tokenizer.decode(java.util.Arrays.copyOf(ids, at))) + ")");
                } else if (!valid && accepted && outcome == Outcome.PASSING) {
                    outcome = Outcome.INVALIDATION_ERROR;
                    detail = "invalid instance " + k + " accepted: " + Constraints.quoteShort(text);
                }
                k++;
            }
        } catch (GrammarException e) {
            return new Result(name, split(name), Outcome.COMPILE_ERROR, e.getMessage(), ttfm, toArray(tbm));
        }
        return new Result(name, split(name), outcome, detail, ttfm, toArray(tbm));
    }

    private static long[] toArray(List<Long> l) {
        return l.stream().mapToLong(Long::longValue).toArray();
    }

    /** {@code v} as compact JSON: no whitespace, strings escaped minimally, non-ASCII as itself. */
    @SuppressWarnings("unchecked")
    public static String compact(Object v) {
        StringBuilder b = new StringBuilder();
        compact(v, b);
        return b.toString();
    }

    @SuppressWarnings("unchecked")
    private static void compact(Object v, StringBuilder b) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof String s) {
            b.append(Json.quote(s));
        } else if (v instanceof Map<?, ?> m) {
            b.append('{');
            int i = 0;
            for (Map.Entry<String, Object> e : ((Map<String, Object>) m).entrySet()) {
                if (i++ > 0) {
                    b.append(',');
                }
                b.append(Json.quote(e.getKey())).append(':');
                compact(e.getValue(), b);
            }
            b.append('}');
        } else if (v instanceof List<?> l) {
            b.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) {
                    b.append(',');
                }
                compact(l.get(i), b);
            }
            b.append(']');
        } else {
            b.append(v);
        }
    }
}
