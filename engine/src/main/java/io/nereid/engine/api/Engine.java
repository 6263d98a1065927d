package io.nereid.engine.api;

/**
 * The serving engine: many requests share every forward pass (inflight batching). Thread-safe;
 * output arrives on the engine thread through each request's {@link TokenSink}.
 */
public interface Engine extends AutoCloseable {

    /**
     * Queues a request.
     *
     * @throws RequestValidationException if it can never be served as given
     * @throws AdmissionException         if the waiting queue is full or the engine is closing
     */
    RequestHandle submit(GenerationRequest request, TokenSink sink);

    EngineStats stats();

    /** Stops the engine thread; requests still in flight finish as CANCELLED. */
    @Override
    void close();
}
