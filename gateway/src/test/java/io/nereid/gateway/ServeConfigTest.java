package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.gateway.http.GatewayOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServeConfigTest {

    @Test
    void strictIsOffByDefaultAndABareSwitchOrEnvironmentVariable() {
        assertFalse(ServeConfig.parse(List.of(), Map.of()).gateway().strict());
        assertTrue(ServeConfig.parse(List.of("--strict"), Map.of()).gateway().strict());
        assertTrue(ServeConfig.parse(List.of("--strict", "--port", "0"), Map.of()).gateway().strict());
        assertFalse(ServeConfig.parse(List.of("--strict=false"), Map.of("NEREID_STRICT", "true")).gateway().strict());
        assertTrue(ServeConfig.parse(List.of(), Map.of("NEREID_STRICT", "true")).gateway().strict());
        assertTrue(ServeConfig.parse(List.of(), Map.of("NEREID_STRICT", "1")).gateway().strict());
        assertThrows(IllegalArgumentException.class, () -> ServeConfig.parse(List.of(), Map.of("NEREID_STRICT", "maybe")));
        assertTrue(ServeConfig.usage().contains("--strict"));
    }

    @Test
    void kvCacheDtypeIsF16ByDefaultAndTakesVllmsSpellings() {
        assertEquals("f16", ServeConfig.parse(List.of(), Map.of()).kvCacheDtype());
        assertEquals("BF16", ServeConfig.parse(List.of("--kv-cache-dtype", "bfloat16"), Map.of()).engineSpec().kvPrecision()
                .name());
        assertEquals("f32", ServeConfig.parse(List.of(), Map.of("NEREID_KV_CACHE_DTYPE", "float32")).kvCacheDtype());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ServeConfig.parse(List.of("--kv-cache-dtype", "fp8"), Map.of()));
        assertTrue(e.getMessage().contains("--kv-cache-dtype") && e.getMessage().contains("'fp8'"), e.getMessage());
    }

    @Test
    void deterministicIsOffByDefaultAndTurnsOnTheEnginesBatchInvariantKernels() {
        assertFalse(ServeConfig.parse(List.of(), Map.of()).deterministic());
        assertFalse(ServeConfig.parse(List.of(), Map.of()).engineSpec().batchInvariant());
        assertTrue(ServeConfig.parse(List.of("--deterministic", "--port", "0"), Map.of()).engineSpec().batchInvariant());
        assertTrue(ServeConfig.parse(List.of(), Map.of("NEREID_DETERMINISTIC", "true")).engineSpec().batchInvariant());
        assertFalse(ServeConfig.parse(List.of("--deterministic=false"), Map.of("NEREID_DETERMINISTIC", "1")).deterministic());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ServeConfig.parse(List.of("--deterministic=sometimes"), Map.of()));
        assertTrue(e.getMessage().contains("--deterministic"), e.getMessage());
        assertTrue(ServeConfig.usage().contains("--deterministic"));
    }

    @Test
    void enforceEagerIsOffByDefaultAndReachesTheBackendConfig() {
        assertFalse(ServeConfig.parse(List.of(), Map.of()).engineSpec().eager());
        assertTrue(ServeConfig.parse(List.of("--enforce-eager", "--port", "0"), Map.of()).engineSpec().eager());
        assertTrue(ServeConfig.parse(List.of(), Map.of("NEREID_ENFORCE_EAGER", "true")).enforceEager());
        assertFalse(ServeConfig.parse(List.of("--enforce-eager=false"), Map.of()).engineSpec().eager());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ServeConfig.parse(List.of("--enforce-eager=maybe"), Map.of()));
        assertTrue(e.getMessage().contains("--enforce-eager"), e.getMessage());
        assertTrue(ServeConfig.usage().contains("--enforce-eager"));
    }

    @Test
    void clientStallTimeoutDefaultsTo30sAndReadsTheEnvironment() {
        assertEquals(Duration.ofSeconds(30), ServeConfig.parse(List.of(), Map.of()).gateway().clientStallTimeout());
        assertEquals(Duration.ofSeconds(5), ServeConfig.parse(List.of(), Map.of("NEREID_STALL_TIMEOUT", "5"))
                .gateway().clientStallTimeout());
        assertEquals(Duration.ofSeconds(2), ServeConfig.parse(List.of("--stall-timeout", "2"), Map.of())
                .gateway().clientStallTimeout());
        assertThrows(IllegalArgumentException.class, () -> ServeConfig.parse(List.of("--stall-timeout", "0"),
                Map.of()));
        assertTrue(ServeConfig.usage().contains("--stall-timeout"));
    }

    @Test
    void engineStallTimeoutIsTheReadinessLimitAndSeparateFromTheClientOne() {
        GatewayOptions g = ServeConfig.parse(List.of("--engine-stall-timeout", "7", "--stall-timeout", "3"), Map.of())
                .gateway();
        assertEquals(Duration.ofSeconds(7), g.stallTimeout());
        assertEquals(Duration.ofSeconds(3), g.clientStallTimeout());
        assertEquals(Duration.ofSeconds(9), ServeConfig.parse(List.of(), Map.of("NEREID_ENGINE_STALL_TIMEOUT", "9"))
                .gateway().stallTimeout());
    }

    @Test
    void aMistypedOptionNamesTheOneMeantAndTheHelpShowsDefaultsAndVariables() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ServeConfig.parse(java.util.List.of("--max-num-seq", "4"), java.util.Map.of()));
        assertTrue(e.getMessage().contains("unknown option '--max-num-seq'") && e.getMessage().contains("--max-num-seqs"),
                e.getMessage());
        IllegalArgumentException missing = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ServeConfig.parse(java.util.List.of("--port"), java.util.Map.of()));
        assertTrue(missing.getMessage().contains("--port"), missing.getMessage());
        String help = ServeConfig.usage();
        assertTrue(help.contains("--max-num-seqs") && help.contains("(default 64)") && help.contains("NEREID_MAX_NUM_SEQS"),
                help);
        // the forms the hand-written parser took still work: --flag=value, a bare switch, repeats, the last one wins
        ServeConfig c = ServeConfig.parse(java.util.List.of("--port=0", "--strict", "--api-key", "a", "--api-key", "b",
                "--max-num-seqs", "3", "--max-num-seqs", "5", "--grpc-port", "-1"), java.util.Map.of());
        assertEquals(0, c.port());
        assertTrue(c.gateway().strict());
        assertEquals(java.util.List.of("a", "b"), c.gateway().apiKeys());
        assertEquals(5, c.maxNumSeqs());
        assertEquals(-1, c.grpcPort());
        assertEquals("cpu", c.engineSpec().backend());
        assertEquals("auto", ServeConfig.parse(java.util.List.of("--backend", "AUTO"), java.util.Map.of()).engineSpec()
                .backend());
        assertEquals("cuda", ServeConfig.parse(java.util.List.of(), java.util.Map.of("NEREID_BACKEND", "cuda")).engineSpec()
                .backend());
        assertTrue(org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> ServeConfig.parse(
                java.util.List.of("--backend", "gpu"), java.util.Map.of())).getMessage()
                .contains("--backend must be cpu, cuda or auto, got 'gpu'"));
        assertTrue(Main.completion(java.util.List.of()).contains("--max-num-seqs"), "the bash completion script knows serve's options");
    }
}
