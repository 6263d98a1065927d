package io.nereid.engine.template;

import java.util.List;
import java.util.Map;

/**
 * A method looked up on a value, such as {@code 'abc'.upper} or {@code messages.index}; calling it
 * dispatches to {@link Methods}. Immutable.
 */
record BoundMethod(Object self, String name) implements PyCallable {

    @Override
    public Object call(Evaluator ev, List<Object> args, Map<String, Object> kwargs) {
        if (self instanceof LoopContext loop) {
            if (!kwargs.isEmpty()) {
                throw PyError.type("loop." + name + "() takes no keyword arguments");
            }
            return loop.method(name, args);
        }
        return Methods.call(self, name, args, kwargs);
    }
}
