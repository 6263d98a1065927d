package io.nereid.engine.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Backends by name: the CPU's from the engine, {@code auto}, and what an unknown name says. */
class BackendProviderTest {

    @Test
    void autoIsTheCpuWhereNoOtherBackendCanRunAndAMissingCudaSaysHowToBuildIt() {
        assertEquals("cpu", BackendProvider.named("cpu").name());
        assertTrue(BackendProvider.named("cpu").unavailableReason().isEmpty());
        // the engine's own class path holds no GPU backend
        assertEquals("cpu", BackendProvider.named("auto").name());
        String cuda = assertThrows(IllegalArgumentException.class, () -> BackendProvider.named("cuda")).getMessage();
        assertTrue(cuda.contains("no backend 'cuda' (there are: cpu)") && cuda.contains("-Pcuda"), cuda);
        String other = assertThrows(IllegalArgumentException.class, () -> BackendProvider.named("tpu")).getMessage();
        assertEquals("no backend 'tpu' (there are: cpu)", other);
    }
}
