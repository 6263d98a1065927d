package io.nereid.gateway.http;

import java.time.Duration;
import java.util.List;

/**
 * Where a server's models come from: a model repository ({@code --model-repository DIR}, one folder
 * per model) or the one {@code --model}. The server keeps each model's state ({@link ServedModels})
 * and calls {@link #load} on its model-control thread; the {@link ModelService} returned is the
 * server's to close, and closing it gives back what the load reserved (its share of the memory limit).
 */
public interface ModelRepository {

    /** The models the repository holds, in index order. */
    List<String> names();

    /** Whether clients may load and unload models ({@code --model-control-mode explicit}). */
    boolean explicitControl();

    /** How long an unload lets the model's in-flight requests finish before it cancels them. */
    Duration drainTimeout();

    /**
     * Opens model {@code name} (blocking: reads weights, allocates its KV cache, starts its engine).
     *
     * @throws ApiException 404 when the repository has no such model, 400 naming the reason when it
     *                      cannot be loaded (its folder or file is unusable, it would not fit the
     *                      memory limit)
     */
    ModelService load(String name);

    /**
     * Whether a model whose engine stopped after a failure is taken out (UNAVAILABLE with the reason,
     * freed; loadable again in explicit control) while the other models serve on. False: the server
     * stops, as one {@code --model} does (it drains and exits so that it is restarted).
     */
    default boolean isolatesFailures() {
        return true;
    }

    /** A repository of one model that is already loaded and that the caller closes; no load or unload. */
    static ModelRepository of(ModelService model, Duration drainTimeout) {
        return new ModelRepository() {
            @Override
            public List<String> names() {
                return List.of(model.name());
            }

            @Override
            public boolean explicitControl() {
                return false;
            }

            @Override
            public Duration drainTimeout() {
                return drainTimeout;
            }

            @Override
            public boolean isolatesFailures() {
                return false;
            }

            @Override
            public ModelService load(String name) {
                throw new ApiException(400, "invalid_request_error", null, "model_control_disabled",
                        "this server serves one model (--model); loading models needs --model-repository", 0);
            }
        };
    }
}
