package io.nereid.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Server sweep flags: the configurations they make and the command lines that start them. */
class ServeSweepTest {
    @Test
    void valueListsMakeTheCrossProductSmallestFirst() {
        ServeSweep.Parsed p = ServeSweep.parse(new String[] {"--concurrency", "1,4", "--serve-model", "m.gguf",
                "--max-num-seqs", "8,16", "--max-num-batched-tokens", "512,2048", "--serve", "--chat-template chatml",
                "--serve-command", "java -cp x Main serve"});
        assertArrayEquals(new String[] {"--concurrency", "1,4"}, p.rest());
        List<ServeSweep.Setup> setups = p.sweep().setups();
        assertEquals(List.of("max-num-seqs=8 max-num-batched-tokens=512", "max-num-seqs=8 max-num-batched-tokens=2048",
                "max-num-seqs=16 max-num-batched-tokens=512", "max-num-seqs=16 max-num-batched-tokens=2048"),
                setups.stream().map(ServeSweep.Setup::label).toList());
        assertEquals("seqs16-tokens2048", setups.get(3).dirName());
        assertEquals(List.of("java", "-cp", "x", "Main", "serve", "--host", "127.0.0.1", "--port", "0", "--model",
                "m.gguf", "--chat-template", "chatml", "--max-num-seqs", "16", "--max-num-batched-tokens", "2048"),
                p.sweep().commandLine(setups.get(3)));
    }

    @Test
    void aSpeculativeConfigServesEveryConfigurationWithoutAndWithIt() {
        String json = "{\"method\":\"ngram\",\"num_speculative_tokens\":3}";
        List<ServeSweep.Setup> setups = ServeSweep.parse(new String[] {"--serve-model", "m.gguf", "--max-num-seqs", "1,4",
                "--speculative-config", json}).sweep().setups();
        assertEquals(List.of("max-num-seqs=1 no-spec", "max-num-seqs=1 spec", "max-num-seqs=4 no-spec",
                "max-num-seqs=4 spec"), setups.stream().map(ServeSweep.Setup::label).toList());
        assertEquals(List.of("--model", "m.gguf", "--max-num-seqs", "1"), setups.get(0).args());
        assertEquals(List.of("--model", "m.gguf", "--max-num-seqs", "1", "--speculative-config", json), setups.get(1).args());
        assertEquals("seqs4-spec", setups.get(3).dirName());
    }

    @Test
    void speculationCountersComeFromTheServersMetrics() {
        String before = "# TYPE vllm:spec_decode_num_drafts_total counter\n"
                + "vllm:spec_decode_num_drafts_total{model_name=\"m\"} 10.0\n"
                + "vllm:spec_decode_num_draft_tokens_total{model_name=\"m\"} 30.0\n"
                + "vllm:spec_decode_num_accepted_tokens_total{model_name=\"m\"} 12.0\n";
        String after = before.replace("} 10.0", "} 110.0").replace("} 30.0", "} 330.0").replace("} 12.0", "} 237.0");
        SpeculationCounters level = SpeculationCounters.parse(after).orElseThrow()
                .since(SpeculationCounters.parse(before).orElseThrow());
        assertEquals(100, level.drafts());
        assertEquals(300, level.draftTokens());
        assertEquals(0.75, level.acceptanceRate(), 1e-12);
        assertEquals("{\"drafts\":100,\"draft_tokens\":300,\"accepted_tokens\":225,\"acceptance_rate\":0.75}\n", level.json());
        assertNull(SpeculationCounters.parse("vllm:generation_tokens_total{model_name=\"m\"} 5.0\n").orElse(null));
    }

    @Test
    void withoutServerFlagsTheArgumentsPassThrough() {
        String[] args = {"--url", "http://h:1", "--concurrency", "2"};
        ServeSweep.Parsed p = ServeSweep.parse(args);
        assertNull(p.sweep());
        assertArrayEquals(args, p.rest());
    }

    @Test
    void oneUnsweptServerIsTheServerDefaults() {
        List<ServeSweep.Setup> setups = ServeSweep.parse(new String[] {"--serve-model", "m.gguf"}).sweep().setups();
        assertEquals(1, setups.size());
        assertEquals("server defaults", setups.getFirst().label());
        assertEquals(List.of("--model", "m.gguf"), setups.getFirst().args());
    }

    @Test
    void badServerFlagsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> ServeSweep.parse(new String[] {"--max-num-seqs", "0"}));
        assertThrows(IllegalArgumentException.class, () -> ServeSweep.parse(new String[] {"--max-num-seqs", "a"}));
        assertThrows(IllegalArgumentException.class, () -> ServeSweep.parse(new String[] {"--serve-model"}));
        assertThrows(IllegalArgumentException.class,
                () -> ServeSweep.parse(new String[] {"--url", "http://h:1", "--max-num-seqs", "8"}));
        assertThrows(IllegalArgumentException.class, () -> ServeSweep.parse(new String[] {"--serve-timeout", "0"}));
        assertThrows(IllegalArgumentException.class, () -> ServeSweep.parse(new String[] {"--max-num-seqs", "4,8,4"}));
        assertThrows(IllegalArgumentException.class,
                () -> ServeSweep.parse(new String[] {"--max-num-batched-tokens", "256", "--max-num-batched-tokens", "256"}));
    }

    @Test
    void theOptionListForCompletionHoldsEveryFlagTheBenchParsesAndWhichTakeAValue() {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        assertEquals(0, Main.run(new String[] {"--list-options"}, new java.io.PrintStream(out, true), System.err));
        List<String> lines = out.toString().lines().toList();
        assertEquals(BenchConfig.OPTS.size() + ServeSweep.FLAGS.size() + 1, lines.size());
        org.junit.jupiter.api.Assertions.assertTrue(lines.contains("--concurrency\tN[,N...]"), String.join("\n", lines));
        org.junit.jupiter.api.Assertions.assertTrue(lines.contains("--no-progress\t"), "a switch has no label");
        org.junit.jupiter.api.Assertions.assertTrue(lines.contains("--max-num-batched-tokens\tVALUE"));
        for (String line : lines) {   // each one is a flag the bench takes: parsing it alone never says "unknown option"
            String flag = line.split("\t")[0];
            String[] words = line.endsWith("\t") ? new String[] {flag} : new String[] {flag, "1"};
            try {
                BenchConfig.parse(ServeSweep.parse(words).rest());
            } catch (IllegalArgumentException e) {
                org.junit.jupiter.api.Assertions.assertFalse(e.getMessage().contains("unknown option"), flag + ": " + e.getMessage());
            }
        }
    }
}
