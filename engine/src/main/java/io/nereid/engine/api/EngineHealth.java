package io.nereid.engine.api;

/**
 * Whether the engine can serve, safe to read from any thread.
 *
 * @param alive   the engine thread is running: false once it stopped, after {@link Engine#close()} or a failure
 * @param failure why the engine thread stopped on its own (a backend that fails every step, a fault in the
 *                engine's own bookkeeping), or null; once set, every request is refused with
 *                {@link AdmissionException.Reason#ENGINE_FAILED}
 */
public record EngineHealth(boolean alive, String failure) {

    public static final EngineHealth RUNNING = new EngineHealth(true, null);

    /** The engine stopped on its own: restart the process. */
    public boolean failed() {
        return failure != null;
    }
}
