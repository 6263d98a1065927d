package io.nereid.gateway;

import io.nereid.engine.backend.Backend;
import io.nereid.gateway.http.GatewayServer;
import io.nereid.gateway.http.ModelService;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * stories260K served on 127.0.0.1 (ephemeral port) with extra {@code serve} options; closing it closes
 * the server, then the model. For a test class's {@code @BeforeAll}/{@code @AfterAll}.
 */
record TestServer(ServingModel model, GatewayServer server) implements AutoCloseable {

    static TestServer start(String... options) throws Exception {
        return start(UnaryOperator.identity(), options);
    }

    /** As {@link #start(String...)}, serving {@code serve} of the model (e.g. {@link TestEngines#withSubmit}). */
    static TestServer start(UnaryOperator<ModelService> serve, String... options) throws Exception {
        return start(serve, UnaryOperator.identity(), options);
    }

    /** As {@link #start(String...)}, with the engine running {@code backend} applied to the CPU backend. */
    static TestServer withBackend(UnaryOperator<Backend> backend, String... options) throws Exception {
        return start(UnaryOperator.identity(), backend, options);
    }

    /** As {@link #start(String...)}, with the KServe v2 gRPC service on an ephemeral port too. */
    static TestServer withGrpc(String... options) throws Exception {
        return start(UnaryOperator.identity(), UnaryOperator.identity(), true, options);
    }

    private static TestServer start(UnaryOperator<ModelService> serve, UnaryOperator<Backend> backend, String... options)
            throws Exception {
        return start(serve, backend, false, options);
    }

    private static TestServer start(UnaryOperator<ModelService> serve, UnaryOperator<Backend> backend, boolean grpc,
            String... options) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("--model", TestModels.stories260K().toString(), "--port", "0"));
        args.addAll(List.of(options));
        ServeConfig c = ServeConfig.parse(args, Map.of());
        ServingModel model = ServingModel.open(c, spec -> spec.withBackendDecorator(backend));
        try {
            return new TestServer(model, GatewayServer.start(serve.apply(model), c.gateway(), "127.0.0.1", 0, grpc ? 0 : -1));
        } catch (Exception e) {
            model.close();
            throw e;
        }
    }

    String url(String path) {
        return "http://127.0.0.1:" + server.port() + path;
    }

    @Override
    public void close() {
        server.close();
        model.close();
    }
}
