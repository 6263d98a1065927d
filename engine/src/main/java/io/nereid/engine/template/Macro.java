package io.nereid.engine.template;

import java.util.List;
import java.util.Map;

/**
 * A macro value ({@code {% macro name(params) %}}, or the {@code caller} of a call block),
 * bound to the frame it was defined in. Calling it renders its body to a string. Lives within
 * one render; not thread-safe.
 */
final class Macro implements PyCallable {

    private final String name;
    private final List<Node.Param> params;
    private final List<Node> body;
    private final Frame closure;

    Macro(String name, List<Node.Param> params, List<Node> body, Frame closure) {
        this.name = name;
        this.params = params;
        this.body = body;
        this.closure = closure;
    }

    List<Node.Param> params() {
        return params;
    }

    List<Node> body() {
        return body;
    }

    Frame closure() {
        return closure;
    }

    @Override
    public Object call(Evaluator ev, List<Object> args, Map<String, Object> kwargs) {
        return ev.callMacro(this, args, kwargs);
    }

    @Override
    public String name() {
        return name;
    }
}
