package io.nereid.engine.template;

import java.util.List;
import java.util.Map;

/**
 * Anything a template can call: global functions, macros, bound methods such as
 * {@code 'a'.upper}, {@code loop.cycle}. Called on the rendering thread.
 */
interface PyCallable {

    /**
     * @param ev     the evaluator of the running render (for output capture and errors)
     * @param args   positional arguments
     * @param kwargs keyword arguments in call order
     */
    Object call(Evaluator ev, List<Object> args, Map<String, Object> kwargs);

    /** The name used in messages and {@code repr}. */
    String name();
}
