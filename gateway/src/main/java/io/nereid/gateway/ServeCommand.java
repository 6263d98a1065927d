package io.nereid.gateway;

import io.nereid.gateway.http.GatewayServer;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * {@code bin/nereid serve}: loads the model (or generates the demo model), starts the engine and
 * the HTTP server, and serves until SIGTERM / SIGINT, when it stops admitting, lets in-flight
 * requests finish for up to {@code --drain-timeout}, cancels the rest and closes everything.
 */
final class ServeCommand {

    private ServeCommand() {
    }

    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
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
        if (config.model() == null) {
            err.println("nereid serve: no --model given: generating the demo model (demo, random weights: its output is"
                    + " gibberish)");
        }
        ServingModel model;
        GatewayServer server;
        try {
            model = ServingModel.open(config);
        } catch (RuntimeException e) {
            err.println("nereid serve: " + e.getMessage());
            return 1;
        }
        try {
            server = GatewayServer.start(model, config.gateway(), config.host(), config.port());
        } catch (Exception e) {
            model.close();
            err.println("nereid serve: cannot listen on " + config.host() + ":" + config.port() + ": " + e.getMessage());
            return 1;
        }
        err.println("nereid serve: " + model.summary());
        out.println("nereid serve: listening on http://" + config.host() + ":" + server.port());
        out.flush();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            shutdown(server, model, config.drainTimeout(), err);
            stopped.countDown();
            err.println("nereid serve: stopped");
            err.flush();
            out.flush();
            // A drained shutdown is a success: exit 0, not the 143 a SIGTERM'd JVM reports.
            Runtime.getRuntime().halt(0);
        }, "nereid-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /**
     * What SIGTERM does (the shutdown hook calls this, then halts with 0): stop admitting (503), let
     * in-flight requests finish for up to {@code drainTimeout}, close the model (cancelling the rest:
     * their streams end with an error event {@code code: "shutdown"} and [DONE], see
     * {@link GatewayServer#abortInflight}), give those streams a bounded moment
     * to write their last events, then close the server.
     */
    static void shutdown(GatewayServer server, ServingModel model, java.time.Duration drainTimeout, PrintStream err) {
        err.println("nereid serve: shutting down; draining " + server.inflight() + " in-flight requests (up to "
                + drainTimeout.toSeconds() + " s)");
        try {
            int left = server.drain(drainTimeout);
            if (left > 0) {
                err.println("nereid serve: cancelling " + left + " requests still running");
                server.abortInflight();
            }
            model.close();
            if (left > 0) {
                server.drain(java.time.Duration.ofSeconds(5));   // the cancelled streams write their last chunk and [DONE]
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            model.close();
        }
        server.close();
    }
}
