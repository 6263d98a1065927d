package io.nereid.engine.template;

import java.util.List;

/**
 * Expression nodes of a parsed template. Immutable records; shared by every render of a
 * {@link ChatTemplate}.
 */
sealed interface Expr {

    /** A literal: {@code String}, {@code Long}, {@code Double}, {@code Boolean} or {@code null} (None). */
    record Const(Object value) implements Expr { }

    record Name(String name) implements Expr { }

    record ListLiteral(List<Expr> items) implements Expr { }

    record TupleLiteral(List<Expr> items) implements Expr { }

    record DictLiteral(List<Expr> keys, List<Expr> values) implements Expr { }

    /** {@code obj.name}: Python attribute first, then item (sandbox getattr). */
    record GetAttr(Expr obj, String name) implements Expr { }

    /** {@code obj[key]}: item first, then attribute when the key is a string. */
    record GetItem(Expr obj, Expr key) implements Expr { }

    /** {@code start:stop:step} inside brackets; each part may be null. */
    record Slice(Expr start, Expr stop, Expr step) implements Expr { }

    /** Call, filter and test arguments: positional, {@code name=value}, {@code *args}, {@code **kwargs}. */
    record Args(List<Expr> positional, List<String> keywordNames, List<Expr> keywordValues,
                Expr starArgs, Expr starKwargs) {
        static final Args NONE = new Args(List.of(), List.of(), List.of(), null, null);
    }

    record Call(Expr callee, Args args) implements Expr { }

    /** {@code input | name(args)}; {@code input} is null in a {@code {% filter %}} block head. */
    record Filter(Expr input, String name, Args args) implements Expr { }

    /** {@code input is [not] name args}. */
    record Test(Expr input, String name, Args args, boolean negated) implements Expr { }

    /** Arithmetic: one of {@code + - * / // % **}. */
    record Binary(String op, Expr left, Expr right) implements Expr { }

    /** {@code a ~ b ~ c}: string concatenation of each operand's {@code str()}. */
    record Concat(List<Expr> parts) implements Expr { }

    /** {@code first op1 e1 op2 e2 ...}, chained like Python; ops: {@code == != < <= > >= in notin}. */
    record Compare(Expr first, List<String> ops, List<Expr> operands) implements Expr { }

    record And(Expr left, Expr right) implements Expr { }

    record Or(Expr left, Expr right) implements Expr { }

    record Not(Expr operand) implements Expr { }

    /** Unary {@code -} ({@code negate}) or {@code +}. */
    record Unary(boolean negate, Expr operand) implements Expr { }

    /** {@code then if test else orElse}; {@code orElse} may be null (then undefined). */
    record Conditional(Expr test, Expr then, Expr orElse, int line) implements Expr { }
}
