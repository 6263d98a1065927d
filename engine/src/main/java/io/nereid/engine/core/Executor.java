package io.nereid.engine.core;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.StepOutput;
import io.nereid.kvcache.KvCacheManager;

/**
 * Runs a {@link StepPlan} on the {@link Backend}: first the copy-on-write block copies the KV-cache
 * manager queued while the plan was made, then one forward pass over every slice. A failure here is
 * the backend's, not a request's. Engine thread only.
 */
final class Executor {

    private final Backend backend;
    private final KvCacheManager cache;

    Executor(Backend backend, KvCacheManager cache) {
        this.backend = backend;
        this.cache = cache;
    }

    StepOutput execute(StepPlan plan) {
        backend.copy(cache.drainCopies());
        return backend.forward(plan.toStep());
    }
}
