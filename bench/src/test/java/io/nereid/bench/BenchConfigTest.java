package io.nereid.bench;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Load levels from the flags: concurrency and request-rate lists, their labels, directories and errors. */
class BenchConfigTest {
    private static BenchConfig parse(String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "--output-dir";
        all[1] = "out";
        System.arraycopy(args, 0, all, 2, args.length);
        return BenchConfig.parse(all);
    }

    @Test
    void aRateListIsOneOpenLoopLevelPerRateInOrder() {
        BenchConfig c = parse("--request-rate", "4, 0.5,2.50,1e-3");
        assertEquals(List.of(4.0, 0.5, 2.5, 0.001), c.requestRates());
        assertTrue(c.concurrencies().isEmpty());
        List<BenchConfig> levels = c.levels();
        assertEquals(4, levels.size());
        assertEquals(List.of("request rate 4/s", "request rate 0.5/s", "request rate 2.5/s", "request rate 0.001/s"),
                levels.stream().map(BenchConfig::loadLabel).toList());
        assertEquals(List.of("rate4", "rate0.5", "rate2.5", "rate0.001"),
                levels.stream().map(BenchConfig::levelDirName).toList());
        for (BenchConfig level : levels) {
            assertTrue(level.openLoop());
            assertEquals(List.of(level.requestRate()), level.requestRates());
            assertEquals(Path.of("out", level.levelDirName()), level.outputDir());
        }
        assertEquals(0.5, levels.get(1).requestRate());
    }

    @Test
    void aConcurrencyListIsLabelledTheSameWay() {
        List<BenchConfig> levels = parse("--concurrency", "1,16").levels();
        assertEquals(List.of("concurrency 1", "concurrency 16"), levels.stream().map(BenchConfig::loadLabel).toList());
        assertEquals(Path.of("out", "concurrency16"), levels.get(1).outputDir());
        assertEquals(List.of(16), levels.get(1).concurrencies());
        assertEquals(0, levels.get(1).requestRate());
    }

    @Test
    void oneLevelReportsToTheOutputDirItself() {
        BenchConfig rate = parse("--request-rate", "2.0");
        assertSame(rate, rate.levels().getFirst());
        assertEquals(1, rate.levels().size());
        assertEquals("request rate 2/s", rate.loadLabel());
        BenchConfig plain = parse();
        assertEquals(List.of(plain), plain.levels());
        assertEquals("concurrency 1", plain.loadLabel());
        assertEquals("offline 10 requests", parse("--scenario", "offline", "--num-requests", "10").loadLabel());
    }

    @Test
    void theServerScenarioSweepsRatesUnderItsSlos() {
        BenchConfig c = parse("--scenario", "server", "--request-rate", "2,8", "--ttft-slo", "100");
        for (BenchConfig level : c.levels()) {
            assertEquals("server", level.scenario());
            assertEquals(100, level.ttftSloMs());
        }
        assertEquals("rate8", c.levels().get(1).levelDirName());
    }

    @Test
    void badRateListsAreRefused() {
        String[][] bad = {
                {"--request-rate", "0"},
                {"--request-rate", "2,-1"},
                {"--request-rate", "2,0,4"},
                {"--request-rate", "NaN"},
                {"--request-rate", "Infinity"},
                {"--request-rate", "2,"},
                {"--request-rate", "2,,4"},
                {"--request-rate", "two"},
                {"--request-rate", "2,2.0"},
                {"--concurrency", "4,4"},
                {"--concurrency", "1,"},
                {"--request-rate", "2,4", "--concurrency", "1"},
                {"--concurrency", "1,4", "--request-rate", "2"},
                {"--scenario", "offline", "--request-rate", "2,4"},
                {"--scenario", "server", "--concurrency", "1,4", "--ttft-slo", "100"},
        };
        for (String[] args : bad) {
            assertThrows(IllegalArgumentException.class, () -> parse(args), String.join(" ", args));
        }
        assertEquals("--concurrency and --request-rate are exclusive (closed vs open loop)",
                assertThrows(IllegalArgumentException.class,
                        () -> parse("--request-rate", "2,4", "--concurrency", "1")).getMessage());
        assertEquals("--request-rate: must be > 0 requests/s, got 0.0",
                assertThrows(IllegalArgumentException.class, () -> parse("--request-rate", "2,0")).getMessage());
        assertEquals("--request-rate: a value is listed twice in [2.0, 2.0]",
                assertThrows(IllegalArgumentException.class, () -> parse("--request-rate", "2,2.0")).getMessage());
    }

    @Test
    void aMistypedOptionNamesTheOneMeant() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> BenchConfig.parse(new String[] {"--concurency", "4"}));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("unknown option '--concurency'")
                && e.getMessage().contains("--concurrency"), e.getMessage());
    }

    @Test
    void theGeneratedHelpListsEveryOptionTheParserTakes() {
        String help = BenchConfig.usage();
        for (BenchConfig.Opt o : BenchConfig.OPTS) {
            org.junit.jupiter.api.Assertions.assertTrue(help.contains(o.name()), o.name());
            String[] args = o.label() == null ? new String[] {o.name()} : new String[] {o.name(), "1"};
            try {
                BenchConfig.parse(args);
            } catch (IllegalArgumentException e) {   // a value of the wrong kind, never an unknown option
                org.junit.jupiter.api.Assertions.assertFalse(e.getMessage().startsWith("unknown option"), e.getMessage());
            }
        }
    }
}
