package io.nereid.engine.backend;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * A kind of backend, found by name through {@link ServiceLoader} ({@code META-INF/services}): the
 * CPU backend in the engine, a CUDA backend in {@code native} when it is on the class path.
 * Implementations are stateless and thread-safe.
 */
public interface BackendProvider {

    /** The name {@code --backend} takes: {@code cpu}, {@code cuda}. */
    String name();

    /** Why the backend cannot run on this machine (no device, no driver), or empty when it can. */
    Optional<String> unavailableReason();

    /**
     * Opens a backend over {@code config.model()}'s weights (the model stays owned by the caller and
     * must outlive the backend).
     *
     * @throws IllegalArgumentException if the model cannot run on this backend, naming why
     */
    Backend open(BackendConfig config);

    /** Every provider on the class path, in {@link ServiceLoader} order. */
    static List<BackendProvider> all() {
        List<BackendProvider> out = new ArrayList<>();
        ServiceLoader.load(BackendProvider.class, BackendProvider.class.getClassLoader()).forEach(out::add);
        return out;
    }

    /**
     * The provider called {@code name}; {@code auto} is the first provider other than {@code cpu} that can run
     * here (a GPU backend on a machine with its device), else {@code cpu}.
     *
     * @throws IllegalArgumentException naming the backends there are, when none is called so
     */
    static BackendProvider named(String name) {
        List<BackendProvider> all = all();
        if (name.equals("auto")) {
            return all.stream().filter(p -> !p.name().equals("cpu") && p.unavailableReason().isEmpty()).findFirst()
                    .orElseGet(() -> named("cpu"));
        }
        return all.stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow(() ->
                new IllegalArgumentException("no backend '" + name + "' (there are: " + String.join(", ",
                        all.stream().map(BackendProvider::name).toList()) + ")" + (name.equals("cuda")
                        ? "; the CUDA backend is in builds made with -Pcuda (./mvnw -Pcuda package)" : "")));
    }
}
