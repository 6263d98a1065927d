package io.nereid.engine.template;

import java.time.Clock;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * The global functions of a render: Jinja2's {@code range}, {@code dict}, {@code namespace},
 * {@code joiner}, and HF's {@code raise_exception(msg)} and {@code strftime_now(format)} (the
 * date from the render's {@link Clock}, C-locale names). {@code range} is capped at 100,000 items
 * like Jinja2's sandbox. The table is immutable and thread-safe; the functions run on the
 * rendering thread.
 */
final class Globals {

    static final int MAX_RANGE = 100_000;

    private static final Map<String, Object> STATIC = Map.of(
            "range", fn("range", (args, kwargs) -> range(args, kwargs)),
            "dict", fn("dict", Globals::dict),
            "namespace", fn("namespace", (args, kwargs) -> {
                Namespace ns = new Namespace();
                dict(args, kwargs).forEach((k, v) -> ns.attributes().put(PyValues.str(k), v));
                return ns;
            }),
            "joiner", fn("joiner", Globals::joiner));

    private Globals() {
    }

    /** The globals for one render: the static table plus the clock-bound {@code strftime_now}. */
    static Map<String, Object> forRender(Clock clock) {
        Map<String, Object> globals = new HashMap<>(STATIC);
        globals.put("raise_exception", new RaiseException());
        globals.put("strftime_now", fn("strftime_now", (args, kwargs) -> {
            Object format = Params.bind("strftime_now", args, kwargs, new String[] {"format"}, Params.REQUIRED)[0];
            return Strftime.format(Params.string("strftime_now", format), ZonedDateTime.now(clock));
        }));
        return globals;
    }

    private static PyCallable fn(String name, BiFunction<List<Object>, Map<String, Object>, Object> body) {
        return new PyCallable() {
            @Override
            public Object call(Evaluator ev, List<Object> args, Map<String, Object> kwargs) {
                return body.apply(args, kwargs);
            }

            @Override
            public String name() {
                return name;
            }
        };
    }

    /** HF's {@code raise_exception}: the template rejects its input with exactly this message. */
    private record RaiseException() implements PyCallable {
        @Override
        public Object call(Evaluator ev, List<Object> args, Map<String, Object> kwargs) {
            Object msg = Params.bind("raise_exception", args, kwargs, new String[] {"message"}, Params.REQUIRED)[0];
            throw new TemplateRaisedException(ev.templateName(), ev.line(), PyValues.str(msg));
        }

        @Override
        public String name() {
            return "raise_exception";
        }
    }

    private static Object range(List<Object> args, Map<String, Object> kwargs) {
        if (!kwargs.isEmpty()) {
            throw PyError.type("range() takes no keyword arguments");
        }
        if (args.isEmpty() || args.size() > 3) {
            throw PyError.type("range expected at least 1 argument, got " + args.size());
        }
        long start = 0;
        long stop;
        long step = 1;
        if (args.size() == 1) {
            stop = Params.integer("range", args.get(0));
        } else {
            start = Params.integer("range", args.get(0));
            stop = Params.integer("range", args.get(1));
            if (args.size() == 3) {
                step = Params.integer("range", args.get(2));
            }
        }
        if (step == 0) {
            throw PyError.value("range() arg 3 must not be zero");
        }
        long count = step > 0 ? (stop > start ? (stop - start - 1) / step + 1 : 0)
                : (stop < start ? (start - stop - 1) / -step + 1 : 0);
        if (count > MAX_RANGE) {
            throw PyError.overflow("Range too big. The sandbox blocks ranges larger than MAX_RANGE (" + MAX_RANGE + ").");
        }
        List<Object> out = new ArrayList<>((int) count);
        for (long i = 0, v = start; i < count; i++, v += step) {
            out.add(v);
        }
        return Collections.unmodifiableList(out);
    }

    /** Python {@code dict(mapping_or_pairs, **kwargs)}. */
    private static Map<Object, Object> dict(List<Object> args, Map<String, Object> kwargs) {
        if (args.size() > 1) {
            throw PyError.type("dict expected at most 1 argument, got " + args.size());
        }
        Map<Object, Object> out = new LinkedHashMap<>();
        if (!args.isEmpty()) {
            Object source = args.getFirst();
            if (source instanceof Map<?, ?> m) {
                out.putAll(m);
            } else {
                for (Object pair : PyValues.iterate(source)) {
                    List<Object> kv = PyValues.iterate(pair);
                    if (kv.size() != 2) {
                        throw PyError.value("dictionary update sequence element has length " + kv.size()
                                + "; 2 is required");
                    }
                    out.put(kv.get(0), kv.get(1));
                }
            }
        }
        out.putAll(kwargs);
        return out;
    }

    private static Object joiner(List<Object> args, Map<String, Object> kwargs) {
        String sep = PyValues.str(Params.bind("joiner", args, kwargs, new String[] {"sep"}, ", ")[0]);
        boolean[] used = {false};
        return fn("joiner", (a, k) -> {
            if (!used[0]) {
                used[0] = true;
                return "";
            }
            return sep;
        });
    }
}
