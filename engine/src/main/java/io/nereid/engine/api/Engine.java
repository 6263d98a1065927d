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
     * @throws AdmissionException         if the waiting queue is full, the engine is closing or it has failed
     */
    RequestHandle submit(GenerationRequest request, TokenSink sink);

    /**
     * Checks that {@code request} could be served as given, without queueing it: every check of
     * {@link #submit} that depends on the request alone (vocabulary, context length, limits). Front ends call it
     * before they allocate anything for the request. Any thread.
     *
     * @throws RequestValidationException naming the field at fault
     */
    void validate(GenerationRequest request);

    /**
     * Compiles {@code constraint} against the model's vocabulary and keeps it for the requests
     * that carry it, so that {@link #validate} and {@link #submit} find it compiled: front ends
     * call it on a worker thread (compiling a large schema takes milliseconds). Any thread.
     *
     * @throws RequestValidationException (field {@code "constraint"}) naming what cannot be compiled or honoured
     */
    void prepare(Constraint constraint);

    EngineStats stats();

    /** Whether the engine thread runs, and why it stopped if it stopped on its own. Any thread, cheap. */
    EngineHealth health();

    /** Stops the engine thread; requests still in flight finish as CANCELLED. */
    @Override
    void close();
}
