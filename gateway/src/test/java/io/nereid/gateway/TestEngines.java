package io.nereid.gateway;

import io.nereid.engine.api.Engine;
import io.nereid.engine.api.EngineStats;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.TokenSink;
import io.nereid.gateway.http.ModelService;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.function.BiFunction;

/** Served models whose engine's {@code submit} a test intercepts, to make admission outcomes deterministic. */
final class TestEngines {

    private TestEngines() {
    }

    /**
     * {@code m} with an engine whose {@code submit} is {@code submit} (which may call {@code m.engine()}
     * itself); {@code validate}, {@code stats}, {@code health} and {@code close} go to {@code m}'s engine,
     * everything else to {@code m}.
     */
    static ModelService withSubmit(ModelService m, BiFunction<GenerationRequest, TokenSink, RequestHandle> submit) {
        Engine real = m.engine();
        Engine engine = new Engine() {
            @Override
            public RequestHandle submit(GenerationRequest request, TokenSink sink) {
                return submit.apply(request, sink);
            }

            @Override
            public void validate(GenerationRequest request) {
                real.validate(request);
            }

            @Override
            public void prepare(io.nereid.engine.api.Constraint constraint) {
                real.prepare(constraint);
            }

            @Override
            public EngineStats stats() {
                return real.stats();
            }

            @Override
            public io.nereid.engine.api.EngineHealth health() {
                return real.health();
            }

            @Override
            public void close() {
                real.close();
            }
        };
        return (ModelService) Proxy.newProxyInstance(ModelService.class.getClassLoader(), new Class<?>[] {ModelService.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("engine")) {
                        return engine;
                    }
                    try {
                        return method.invoke(m, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
