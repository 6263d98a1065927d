package io.nereid.engine.cpu;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.BackendProvider;
import io.nereid.engine.cpu.kernel.ComputePool;
import io.nereid.engine.cpu.kernel.Kernels;
import java.util.Optional;

/**
 * {@code cpu}: the pure-Java backend, always available. It binds the model's mapped weights in
 * place and runs on a dedicated kernel pool of {@code threads} threads, which it closes with the
 * backend. Registered in {@code META-INF/services}.
 */
public final class CpuBackendProvider implements BackendProvider {

    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public Optional<String> unavailableReason() {
        return Optional.empty();
    }

    @Override
    public Backend open(BackendConfig config) {
        if (config.kvPrecision() == KvPrecision.BF16) {
            throw new IllegalArgumentException("the CPU backend keeps the KV cache in f16 or f32, not bf16 (bf16 is the"
                    + " CUDA backend's)");
        }
        ModelWeights weights = ModelWeights.bind(config.model().tensors(), config.model().config());
        ComputePool pool = new ComputePool(new ComputePool.Config(config.threads()));
        RangeRunner runner = (s, e, min, body) -> pool.parallelFor(s, e, min, body::run);
        return new CpuBackend(config.model().config(), weights, Kernels.provider(), runner, config.kvPrecision(),
                config.batchInvariant(), pool::close);
    }
}
