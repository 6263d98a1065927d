package io.nereid.engine.template;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Walks a parsed template and writes its output: executes statements, evaluates expressions with
 * Python semantics ({@link PyValues}, {@link PyOps}, {@link PyAccess}), manages scopes
 * ({@link Frame}), loops, macros and captured blocks. One instance per render; not thread-safe.
 * Python-level errors ({@link PyError}) become a {@link TemplateRenderException} naming the
 * template and the line of the statement being executed.
 */
final class Evaluator {

    private static final int MAX_CALL_DEPTH = 200;

    /** How a statement list ended: normally, or by {@code break}/{@code continue}. */
    enum Flow { NORMAL, BREAK, CONTINUE }

    private final String templateName;
    private Frame frame;
    private StringBuilder out = new StringBuilder(1024);
    private int line;
    private int callDepth;

    Evaluator(String templateName, Map<String, Object> root) {
        this.templateName = templateName;
        this.frame = new Frame(new Frame(null, root));
    }

    String templateName() {
        return templateName;
    }

    /** Line of the statement being executed. */
    int line() {
        return line;
    }

    String render(List<Node> body) {
        try {
            exec(body);
            return out.toString();
        } catch (PyError e) {
            throw new TemplateRenderException(templateName, line, e.kind() + ": " + e.getMessage());
        } catch (StackOverflowError e) {
            throw new TemplateRenderException(templateName, line, "RecursionError: maximum recursion depth exceeded");
        }
    }

    // ---------------------------------------------------------------- statements

    private Flow exec(List<Node> nodes) {
        for (Node n : nodes) {
            Flow f = exec(n);
            if (f != Flow.NORMAL) {
                return f;
            }
        }
        return Flow.NORMAL;
    }

    private Flow exec(Node node) {
        line = node.line();
        switch (node) {
            case Node.Text t -> out.append(t.text());
            case Node.Print p -> PyValues.appendStr(out, eval(p.expr()));
            case Node.If i -> {
                for (int k = 0; k < i.tests().size(); k++) {
                    if (PyValues.truthy(eval(i.tests().get(k)))) {
                        return exec(i.bodies().get(k));
                    }
                }
                return exec(i.orElse());
            }
            case Node.For f -> {
                return forLoop(f, eval(f.iter()), 0);
            }
            case Node.Set s -> assign(s.target(), eval(s.value()));
            case Node.SetBlock b -> {
                Object value = capture(b.body());
                assign(b.target(), b.filter() == null ? value : filterChain(b.filter(), value));
            }
            case Node.Macro m -> frame.set(m.name(), new Macro(m.name(), m.params(), m.body(), frame));
            case Node.CallBlock c -> callBlock(c);
            case Node.FilterBlock f -> PyValues.appendStr(out, filterChain(f.filter(), capture(f.body())));
            case Node.With w -> {
                List<Object> values = new ArrayList<>(w.values().size());
                for (Expr e : w.values()) {
                    values.add(eval(e));
                }
                Frame outer = frame;
                frame = new Frame(outer);
                try {
                    for (int k = 0; k < values.size(); k++) {
                        assign(w.targets().get(k), values.get(k));
                    }
                    return exec(w.body());
                } finally {
                    frame = outer;
                }
            }
            case Node.Scope s -> {
                Frame outer = frame;
                frame = new Frame(outer);
                try {
                    return exec(s.body());
                } finally {
                    frame = outer;
                }
            }
            case Node.Break b -> {
                return Flow.BREAK;
            }
            case Node.Continue c -> {
                return Flow.CONTINUE;
            }
        }
        return Flow.NORMAL;
    }

    /** Renders {@code body} in a child frame into a separate buffer and returns the text. */
    private String capture(List<Node> body) {
        return nested(new Frame(frame), () -> exec(body));
    }

    /**
     * Runs {@code body} with {@code scope} as the current frame and a fresh output buffer, returns
     * what it wrote, and restores both (macro calls, recursive loops, captured blocks). Bounds the
     * nesting so a runaway recursion is a render error rather than a stack overflow.
     */
    private String nested(Frame scope, Runnable body) {
        if (callDepth >= MAX_CALL_DEPTH) {
            throw new PyError("RecursionError", "maximum recursion depth exceeded");
        }
        callDepth++;
        StringBuilder savedOut = out;
        Frame savedFrame = frame;
        int savedLine = line;
        out = new StringBuilder();
        frame = scope;
        try {
            body.run();
            line = savedLine; // on failure the line of the failing statement is kept for the report
            return out.toString();
        } finally {
            out = savedOut;
            frame = savedFrame;
            callDepth--;
        }
    }

    private Flow forLoop(Node.For f, Object iterable, int depth) {
        List<Object> items = PyValues.iterate(iterable);
        if (items instanceof MutableList || !(items instanceof java.util.RandomAccess)) {
            items = new ArrayList<>(items); // the body may mutate it; indexed access must be cheap
        }
        Frame outer = frame;
        try {
            if (f.filter() != null) {
                List<Object> kept = new ArrayList<>();
                for (Object item : items) {
                    frame = new Frame(outer);
                    assign(f.target(), item);
                    if (PyValues.truthy(eval(f.filter()))) {
                        kept.add(item);
                    }
                }
                items = kept;
            }
            if (items.isEmpty()) {
                frame = new Frame(outer);
                return exec(f.orElse());
            }
            LoopContext loop = new LoopContext(items, depth, f.recursive() ? f : null, outer);
            for (int i = 0; i < items.size(); i++) {
                loop.index0 = i;
                frame = new Frame(outer);
                frame.set("loop", loop);
                assign(f.target(), items.get(i));
                if (exec(f.body()) == Flow.BREAK) {
                    break;
                }
            }
            return Flow.NORMAL;
        } finally {
            frame = outer;
        }
    }

    /** {@code loop(children)} inside a {@code recursive} loop: renders the loop again one level deeper. */
    String recurseLoop(Node.For f, Frame loopFrame, Object iterable, int depth) {
        return nested(loopFrame, () -> forLoop(f, iterable, depth));
    }

    private void assign(Node.Target target, Object value) {
        switch (target) {
            case Node.Target.Name n -> frame.set(n.name(), value);
            case Node.Target.Tuple t -> {
                List<Object> items = PyValues.iterate(value);
                int expected = t.items().size();
                if (items.size() > expected) {
                    throw PyError.value("too many values to unpack (expected " + expected + ")");
                }
                if (items.size() < expected) {
                    throw PyError.value("not enough values to unpack (expected " + expected + ", got "
                            + items.size() + ")");
                }
                for (int i = 0; i < expected; i++) {
                    assign(t.items().get(i), items.get(i));
                }
            }
            case Node.Target.NamespaceAttr a -> {
                if (!(lookup(a.namespace()) instanceof Namespace ns)) {
                    throw PyError.runtime("cannot assign attribute on non-namespace object");
                }
                ns.attributes().put(a.attr(), value);
            }
        }
    }

    private void callBlock(Node.CallBlock c) {
        Macro caller = new Macro("caller", c.params(), c.body(), frame);
        Object callee = eval(c.call().callee());
        List<Object> args = new ArrayList<>();
        Map<String, Object> kwargs = new LinkedHashMap<>();
        evalArgs(c.call().args(), args, kwargs);
        kwargs.put("caller", caller);
        PyValues.appendStr(out, invoke(callee, args, kwargs));
    }

    /** Calls a macro: binds parameters (defaults evaluated in the macro's scope) and renders its body. */
    String callMacro(Macro m, List<Object> args, Map<String, Object> kwargs) {
        return nested(new Frame(m.closure()), () -> {
            Map<String, Object> extra = new LinkedHashMap<>(kwargs);
            List<Node.Param> params = m.params();
            for (int i = 0; i < params.size(); i++) {
                Node.Param p = params.get(i);
                Object v;
                if (i < args.size()) {
                    if (extra.containsKey(p.name())) {
                        throw PyError.type("macro '" + m.name() + "' got multiple values for argument '"
                                + p.name() + "'");
                    }
                    v = args.get(i);
                } else if (extra.containsKey(p.name())) {
                    v = extra.remove(p.name());
                } else if (p.defaultValue() != null) {
                    v = eval(p.defaultValue());
                } else {
                    v = Undefined.withHint("parameter '" + p.name() + "' was not provided");
                }
                frame.set(p.name(), v);
            }
            if (extra.containsKey("caller")) {
                frame.set("caller", extra.remove("caller"));
            }
            frame.set("varargs", PyTuple.copyOf(args.subList(Math.min(params.size(), args.size()), args.size())));
            frame.set("kwargs", extra);
            exec(m.body());
        });
    }

    // ---------------------------------------------------------------- expressions

    private Object lookup(String name) {
        Object v = frame.get(name);
        return v == Frame.MISSING ? Undefined.variable(name) : v;
    }

    Object eval(Expr e) {
        return switch (e) {
            case Expr.Const c -> c.value();
            case Expr.Name n -> lookup(n.name());
            case Expr.GetAttr g -> PyAccess.getattr(eval(g.obj()), g.name());
            case Expr.GetItem g -> PyAccess.getitem(eval(g.obj()), eval(g.key()));
            case Expr.Slice s -> new PySlice(optional(s.start()), optional(s.stop()), optional(s.step()));
            case Expr.ListLiteral l -> {
                MutableList list = new MutableList(l.items().size());
                for (Expr item : l.items()) {
                    list.add(eval(item));
                }
                yield list;
            }
            case Expr.TupleLiteral t -> {
                List<Object> items = new ArrayList<>(t.items().size());
                for (Expr item : t.items()) {
                    items.add(eval(item));
                }
                yield PyTuple.copyOf(items);
            }
            case Expr.DictLiteral d -> dict(d);
            case Expr.Call c -> {
                Object callee = eval(c.callee());
                List<Object> args = new ArrayList<>();
                Map<String, Object> kwargs = new LinkedHashMap<>();
                evalArgs(c.args(), args, kwargs);
                yield invoke(callee, args, kwargs);
            }
            case Expr.Filter f -> filter(f, eval(f.input()));
            case Expr.Test t -> {
                Object value = eval(t.input());
                List<Object> args = new ArrayList<>();
                Map<String, Object> kwargs = new LinkedHashMap<>();
                evalArgs(t.args(), args, kwargs);
                yield Tests.apply(t.name(), this, value, args, kwargs) != t.negated();
            }
            case Expr.Binary b -> PyOps.binary(b.op(), eval(b.left()), eval(b.right()));
            case Expr.Concat c -> {
                StringBuilder sb = new StringBuilder();
                for (Expr part : c.parts()) {
                    PyValues.appendStr(sb, eval(part));
                }
                yield sb.toString();
            }
            case Expr.Compare c -> compare(c);
            case Expr.And a -> {
                Object left = eval(a.left());
                yield PyValues.truthy(left) ? eval(a.right()) : left;
            }
            case Expr.Or o -> {
                Object left = eval(o.left());
                yield PyValues.truthy(left) ? left : eval(o.right());
            }
            case Expr.Not n -> !PyValues.truthy(eval(n.operand()));
            case Expr.Unary u -> u.negate() ? PyOps.negate(eval(u.operand())) : PyOps.plus(eval(u.operand()));
            case Expr.Conditional c -> {
                if (PyValues.truthy(eval(c.test()))) {
                    yield eval(c.then());
                }
                yield c.orElse() != null ? eval(c.orElse()) : Undefined.withHint("the inline if-expression on line "
                        + c.line() + " evaluated to false and no else section was defined.");
            }
        };
    }

    private Object optional(Expr e) {
        return e == null ? null : eval(e);
    }

    private Object dict(Expr.DictLiteral d) {
        Map<Object, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < d.keys().size(); i++) {
            Object key = eval(d.keys().get(i));
            if (key instanceof List<?> || key instanceof Map<?, ?> || key instanceof Undefined) {
                throw PyError.type("unhashable type: '" + PyValues.typeName(key) + "'");
            }
            map.put(existingKey(map, key), eval(d.values().get(i)));
        }
        return map;
    }

    /** Python dicts treat 1, 1.0 and True as one key: the first spelling stays. */
    private static Object existingKey(Map<Object, Object> map, Object key) {
        if (PyValues.isNumber(key) && !map.containsKey(key)) {
            for (Object k : map.keySet()) {
                if (PyValues.isNumber(k) && PyValues.eq(k, key)) {
                    return k;
                }
            }
        }
        return key;
    }

    private boolean compare(Expr.Compare c) {
        Object left = eval(c.first());
        for (int i = 0; i < c.ops().size(); i++) {
            Object right = eval(c.operands().get(i));
            boolean ok = switch (c.ops().get(i)) {
                case "==" -> PyValues.eq(left, right);
                case "!=" -> !PyValues.eq(left, right);
                case "in" -> PyOps.contains(right, left);
                case "notin" -> !PyOps.contains(right, left);
                default -> PyValues.order(c.ops().get(i), left, right);
            };
            if (!ok) {
                return false;
            }
            left = right;
        }
        return true;
    }

    private void evalArgs(Expr.Args a, List<Object> args, Map<String, Object> kwargs) {
        for (Expr e : a.positional()) {
            args.add(eval(e));
        }
        if (a.starArgs() != null) {
            args.addAll(PyValues.iterate(eval(a.starArgs())));
        }
        for (int i = 0; i < a.keywordNames().size(); i++) {
            kwargs.put(a.keywordNames().get(i), eval(a.keywordValues().get(i)));
        }
        if (a.starKwargs() != null) {
            if (!(eval(a.starKwargs()) instanceof Map<?, ?> m)) {
                throw PyError.type("argument after ** must be a mapping");
            }
            m.forEach((k, v) -> kwargs.put(PyValues.str(k), v));
        }
    }

    private Object filter(Expr.Filter f, Object input) {
        List<Object> args = new ArrayList<>();
        Map<String, Object> kwargs = new LinkedHashMap<>();
        evalArgs(f.args(), args, kwargs);
        return Filters.apply(f.name(), this, input, args, kwargs);
    }

    /** Applies a filter chain whose innermost input is the placeholder null, to {@code seed}. */
    private Object filterChain(Expr chain, Object seed) {
        Expr.Filter f = (Expr.Filter) chain;
        Object input = f.input() == null ? seed : filterChain(f.input(), seed);
        return filter(f, input);
    }

    Object invoke(Object callee, List<Object> args, Map<String, Object> kwargs) {
        if (callee instanceof PyCallable c) {
            return c.call(this, args, kwargs);
        }
        if (callee instanceof Undefined u) {
            throw u.error();
        }
        throw PyError.type("'" + PyValues.typeName(callee) + "' object is not callable");
    }
}
