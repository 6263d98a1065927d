package io.nereid.gateway;

import io.nereid.engine.api.EngineSpec;
import io.nereid.gateway.http.GatewayServer;
import io.nereid.gateway.http.ModelRepository;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;

/**
 * {@code bin/nereid serve}: loads the model (or generates the demo model; or the models of a
 * {@code --model-repository}, {@link ModelCatalog}), starts the engines and the HTTP server, and
 * serves until SIGTERM / SIGINT, when it stops admitting, lets in-flight
 * requests finish for up to {@code --drain-timeout}, cancels the rest, closes everything and exits 0;
 * or until the engine stops after a failure, when it drains the same way and exits
 * {@value #EXIT_ENGINE_FAILED}, so that an orchestrator restarts it.
 */
final class ServeCommand {

    private ServeCommand() {
    }

    /** Exit status when the engine stopped after a failure (EX_SOFTWARE): an orchestrator restarts the server. */
    static final int EXIT_ENGINE_FAILED = 70;

    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        return run(args, env, out, err, UnaryOperator.identity());
    }

    /**
     * Serves until SIGTERM / SIGINT (exit 0 after the drain, from the shutdown hook) or until the
     * engine stops after a failure (drain, then return {@link #EXIT_ENGINE_FAILED}).
     * {@code engineSpec} adjusts the engine the configuration asks for (identity but in tests).
     */
    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err,
            UnaryOperator<EngineSpec> engineSpec) {
        List<String> rest = Arrays.asList(args).subList(1, args.length);
        if (rest.contains("--help") || rest.contains("-h")) {
            out.print(ServeConfig.usage());
            return 0;
        }
        ServeConfig config;
        try {
            config = ServeConfig.parse(rest, env);
        } catch (IllegalArgumentException e) {
            err.println("nereid serve: " + e.getMessage() + "\n" + ServeConfig.usage());
            return 64;
        }
        err.println(Main.banner());
        if (config.model() == null && config.repository() == null) {
            err.println("nereid serve: no --model given: generating the demo model (demo, random weights: its output is"
                    + " gibberish)");
        }
        List<ServingModel> loaded = new ArrayList<>();
        Map<String, String> failed = new LinkedHashMap<>();
        ModelRepository repository;
        if (config.repository() == null) {
            try {
                loaded.add(ServingModel.open(config, engineSpec));
            } catch (RuntimeException e) {
                err.println("nereid serve: " + e.getMessage());
                return 1;
            }
            repository = ModelRepository.of(loaded.getFirst(), config.drainTimeout());
        } else {
            ModelCatalog catalog;
            List<String> wanted;
            try {
                catalog = new ModelCatalog(config, engineSpec);
                wanted = startupModels(config.repository(), catalog.names());
            } catch (RuntimeException e) {
                err.println("nereid serve: " + e.getMessage());
                return 64;
            }
            err.println("nereid serve: model repository " + config.repository().dir() + ": " + catalog.names().size()
                    + " models, control mode " + (config.repository().explicit() ? "explicit" : "none")
                    + ", memory limit " + ModelCatalog.mib(catalog.limit()));
            for (String name : wanted) {
                try {
                    loaded.add((ServingModel) catalog.load(name));
                } catch (RuntimeException e) {
                    failed.put(name, e.getMessage());
                    err.println("nereid serve: " + e.getMessage() + " (UNAVAILABLE)");
                }
            }
            repository = catalog;
        }
        GatewayServer server;
        try {
            server = GatewayServer.start(repository, List.copyOf(loaded), failed, config.gateway(), config.host(),
                    config.port(), config.grpcPort());
        } catch (IllegalStateException e) {   // the responses store cannot be opened
            loaded.forEach(ServingModel::close);
            err.println("nereid serve: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            loaded.forEach(ServingModel::close);
            err.println("nereid serve: cannot listen on " + config.host() + ":" + config.port() + ": " + e.getMessage());
            return 1;
        }
        for (ServingModel model : loaded) {
            err.println("nereid serve: " + model.summary());
        }
        if (server.grpcPort() >= 0) {
            out.println("nereid serve: KServe v2 gRPC on " + config.host() + ":" + server.grpcPort());
        }
        if (config.deterministic()) {
            out.println("nereid serve: --deterministic: batch-invariant kernels (results do not depend on what shares a step)");
        }
        out.println("nereid serve: listening on http://" + config.host() + ":" + server.port());
        out.flush();
        AtomicBoolean stopping = new AtomicBoolean();   // the first of a signal and an engine failure shuts down
        CompletableFuture<Void> signalled = new CompletableFuture<>();
        Thread hook = new Thread(() -> {
            if (!stopping.compareAndSet(false, true)) {
                return;   // the engine-failure path is shutting down; its exit status stands
            }
            signalled.complete(null);
            shutdown(server, config.drainTimeout(), err);
            err.println("nereid serve: stopped");
            err.flush();
            out.flush();
            // A drained shutdown is a success: exit 0, not the 143 a SIGTERM'd JVM reports.
            Runtime.getRuntime().halt(0);
        }, "nereid-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        CompletableFuture.anyOf(signalled, server.engineFailure()).join();
        if (!stopping.compareAndSet(false, true)) {
            signalled.join();
            return 0;   // unreachable in practice: the hook halts the JVM once it has drained
        }
        Runtime.getRuntime().removeShutdownHook(hook);
        err.println("nereid serve: the engine stopped after a failure (" + server.engineFailure().join() + "); draining,"
                + " then exiting with status " + EXIT_ENGINE_FAILED + " so that the server is restarted");
        shutdown(server, config.drainTimeout(), err);
        err.println("nereid serve: stopped");
        return EXIT_ENGINE_FAILED;
    }

    /** The models to load at startup: every one in control mode none or for '*', else the --load-model ones. */
    static List<String> startupModels(ServeConfig.Repository r, List<String> names) {
        if (r.loadModels().equals(List.of("*"))) {
            return names;
        }
        for (String n : r.loadModels()) {
            if (!names.contains(n)) {
                throw new IllegalArgumentException("--load-model '" + n + "': the model repository " + r.dir()
                        + " has no folder '" + n + "' (it has: " + (names.isEmpty() ? "none" : String.join(", ", names))
                        + ")");
            }
        }
        return r.loadModels();
    }

    /**
     * What SIGTERM does (the shutdown hook calls this, then halts with 0): stop admitting (503), let
     * in-flight requests finish for up to {@code drainTimeout}, close the model (cancelling the rest:
     * their streams end with an error event {@code code: "shutdown"} and [DONE], see
     * {@link GatewayServer#abortInflight}), give those streams a bounded moment
     * to write their last events, then close the server.
     */
    static void shutdown(GatewayServer server, java.time.Duration drainTimeout, PrintStream err) {
        err.println("nereid serve: shutting down; draining " + server.inflight() + " in-flight requests (up to "
                + drainTimeout.toSeconds() + " s)");
        try {
            int left = server.drain(drainTimeout);
            if (left > 0) {
                err.println("nereid serve: cancelling " + left + " requests still running");
                server.abortInflight();
            }
            server.closeModels();
            if (left > 0) {
                server.drain(java.time.Duration.ofSeconds(5));   // the cancelled streams write their last chunk and [DONE]
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.closeModels();
        }
        server.close();
    }
}
