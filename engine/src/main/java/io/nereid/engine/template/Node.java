package io.nereid.engine.template;

import java.util.List;

/**
 * Statement nodes of a parsed template. Each carries the 1-based source line where it starts, for
 * error messages. Immutable records; shared by every render of a {@link ChatTemplate}.
 */
sealed interface Node {

    int line();

    /** Literal template text. */
    record Text(String text, int line) implements Node { }

    /** {@code {{ expr }}}. */
    record Print(Expr expr, int line) implements Node { }

    record If(List<Expr> tests, List<List<Node>> bodies, List<Node> orElse, int line) implements Node { }

    /** {@code {% for target in iter [if filter] [recursive] %}body{% else %}orElse{% endfor %}}. */
    record For(Target target, Expr iter, Expr filter, boolean recursive, List<Node> body, List<Node> orElse,
               int line) implements Node { }

    record Set(Target target, Expr value, int line) implements Node { }

    /** {@code {% set target | filters %}body{% endset %}}; {@code filter} applies to the captured body. */
    record SetBlock(Target target, Expr filter, List<Node> body, int line) implements Node { }

    record Macro(String name, List<Param> params, List<Node> body, int line) implements Node { }

    /** {@code {% call(params) callee(args) %}body{% endcall %}}: body becomes {@code caller()}. */
    record CallBlock(Expr.Call call, List<Param> params, List<Node> body, int line) implements Node { }

    /** {@code {% filter f %}body{% endfilter %}}; {@code filter} has a null innermost input. */
    record FilterBlock(Expr filter, List<Node> body, int line) implements Node { }

    /** {@code {% with a = x %}body{% endwith %}}. */
    record With(List<Target> targets, List<Expr> values, List<Node> body, int line) implements Node { }

    /** Rendered as is in its own scope (HF's {@code {% generation %}} and similar wrappers). */
    record Scope(List<Node> body, int line) implements Node { }

    record Break(int line) implements Node { }

    record Continue(int line) implements Node { }

    /** A macro parameter; {@code defaultValue} may be null. */
    record Param(String name, Expr defaultValue) { }

    /** What a {@code set} or {@code for} assigns to. */
    sealed interface Target {
        record Name(String name) implements Target { }

        record Tuple(List<Target> items) implements Target { }

        /** {@code ns.attr} on a {@code namespace()} object. */
        record NamespaceAttr(String namespace, String attr) implements Target { }
    }
}
