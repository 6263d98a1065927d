package io.nereid.engine.template;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Recursive-descent parser for Jinja2 expressions with Jinja2's precedence, lowest first:
 * conditional {@code a if c else b}; {@code or}; {@code and}; {@code not}; comparisons and
 * {@code in}/{@code not in} (chained); {@code + -}; {@code ~}; {@code * / // %}; {@code **}
 * (left-associative, as in Jinja2); unary {@code - +}; then primaries with postfix
 * {@code .attr [key] (args)} and, binding tighter than unary minus's operand but looser than
 * postfix, filters {@code |f} and tests {@code is t}. Not thread-safe.
 */
final class ExprParser {

    private static final int MAX_DEPTH = 200;

    private final TokenStream in;
    private int depth;

    ExprParser(TokenStream in) {
        this.in = in;
    }

    Expr expression() {
        return expression(true);
    }

    Expr expression(boolean withConditional) {
        if (++depth > MAX_DEPTH) {
            throw in.fail(in.current(), "expression nested deeper than " + MAX_DEPTH + " levels");
        }
        try {
            return withConditional ? conditional() : or();
        } finally {
            depth--;
        }
    }

    private Expr conditional() {
        Expr expr = or();
        while (true) {
            Token t = in.current();
            if (!in.skipName("if")) {
                return expr;
            }
            Expr test = or();
            Expr orElse = in.skipName("else") ? conditional() : null;
            expr = new Expr.Conditional(test, expr, orElse, t.line());
        }
    }

    private Expr or() {
        Expr left = and();
        while (in.skipName("or")) {
            left = new Expr.Or(left, and());
        }
        return left;
    }

    private Expr and() {
        Expr left = not();
        while (in.skipName("and")) {
            left = new Expr.And(left, not());
        }
        return left;
    }

    private Expr not() {
        if (in.skipName("not")) {
            return new Expr.Not(not());
        }
        return compare();
    }

    private Expr compare() {
        Expr first = math1();
        List<String> ops = new ArrayList<>();
        List<Expr> operands = new ArrayList<>();
        while (true) {
            Token t = in.current();
            if (t.kind() == Token.Kind.OPERATOR && isComparison(t.text())) {
                in.next();
                ops.add(t.text());
            } else if (t.isName("in")) {
                in.next();
                ops.add("in");
            } else if (t.isName("not") && in.look().isName("in")) {
                in.next();
                in.next();
                ops.add("notin");
            } else {
                break;
            }
            operands.add(math1());
        }
        return ops.isEmpty() ? first : new Expr.Compare(first, List.copyOf(ops), List.copyOf(operands));
    }

    private static boolean isComparison(String op) {
        return switch (op) {
            case "==", "!=", "<", "<=", ">", ">=" -> true;
            default -> false;
        };
    }

    private Expr math1() {
        Expr left = concat();
        while (in.current().isOperator("+") || in.current().isOperator("-")) {
            String op = in.next().text();
            left = new Expr.Binary(op, left, concat());
        }
        return left;
    }

    private Expr concat() {
        List<Expr> parts = new ArrayList<>();
        parts.add(math2());
        while (in.skipOperator("~")) {
            parts.add(math2());
        }
        return parts.size() == 1 ? parts.getFirst() : new Expr.Concat(List.copyOf(parts));
    }

    private Expr math2() {
        Expr left = pow();
        while (true) {
            Token t = in.current();
            if (t.isOperator("*") || t.isOperator("/") || t.isOperator("//") || t.isOperator("%")) {
                in.next();
                left = new Expr.Binary(t.text(), left, pow());
            } else {
                return left;
            }
        }
    }

    private Expr pow() {
        Expr left = unary(true);
        while (in.skipOperator("**")) {
            left = new Expr.Binary("**", left, unary(true));
        }
        return left;
    }

    private Expr unary(boolean withFilter) {
        Expr node;
        if (in.skipOperator("-")) {
            node = new Expr.Unary(true, unary(false));
        } else if (in.skipOperator("+")) {
            node = new Expr.Unary(false, unary(false));
        } else {
            node = primary();
        }
        node = postfix(node);
        return withFilter ? filterChain(node) : node;
    }

    Expr primary() {
        Token t = in.current();
        switch (t.kind()) {
            case NAME -> {
                in.next();
                return switch (t.text()) {
                    case "true", "True" -> new Expr.Const(Boolean.TRUE);
                    case "false", "False" -> new Expr.Const(Boolean.FALSE);
                    case "none", "None" -> new Expr.Const(null);
                    default -> new Expr.Name(t.text());
                };
            }
            case STRING -> {
                StringBuilder sb = new StringBuilder((String) in.next().value());
                while (in.current().kind() == Token.Kind.STRING) { // adjacent literals concatenate
                    sb.append((String) in.next().value());
                }
                return new Expr.Const(sb.toString());
            }
            case INTEGER, FLOAT -> {
                return new Expr.Const(in.next().value());
            }
            case OPERATOR -> {
                if (in.skipOperator("(")) {
                    Expr e = tuple(false, true, null, true);
                    in.expectOperator(")");
                    return e;
                }
                if (t.isOperator("[")) {
                    return list();
                }
                if (t.isOperator("{")) {
                    return dict();
                }
            }
            default -> { }
        }
        throw in.fail(t, "unexpected '" + t.describe() + "'");
    }

    /**
     * Jinja2's {@code parse_tuple}: one expression, or a tuple when commas follow. {@code simplified}
     * parses primaries only (assignment targets); {@code extraEnd} stops at e.g. {@code in}.
     */
    Expr tuple(boolean simplified, boolean withConditional, Predicate<Token> extraEnd, boolean explicitParens) {
        List<Expr> items = new ArrayList<>();
        boolean isTuple = false;
        while (true) {
            if (!items.isEmpty()) {
                in.expectOperator(",");
            }
            if (isTupleEnd(extraEnd)) {
                break;
            }
            items.add(simplified ? primary() : expression(withConditional));
            if (in.current().isOperator(",")) {
                isTuple = true;
            } else {
                break;
            }
        }
        if (!isTuple) {
            if (!items.isEmpty()) {
                return items.getFirst();
            }
            if (!explicitParens) {
                throw in.fail(in.current(), "Expected an expression, got '" + in.current().describe() + "'");
            }
        }
        return new Expr.TupleLiteral(List.copyOf(items));
    }

    private boolean isTupleEnd(Predicate<Token> extraEnd) {
        Token t = in.current();
        return t.kind() == Token.Kind.VARIABLE_END || t.kind() == Token.Kind.BLOCK_END || t.kind() == Token.Kind.EOF
                || t.isOperator(")") || extraEnd != null && extraEnd.test(t);
    }

    private Expr list() {
        in.expectOperator("[");
        List<Expr> items = new ArrayList<>();
        while (!in.current().isOperator("]")) {
            if (!items.isEmpty()) {
                in.expectOperator(",");
            }
            if (in.current().isOperator("]")) {
                break;
            }
            items.add(expression());
        }
        in.expectOperator("]");
        return new Expr.ListLiteral(List.copyOf(items));
    }

    private Expr dict() {
        in.expectOperator("{");
        List<Expr> keys = new ArrayList<>();
        List<Expr> values = new ArrayList<>();
        while (!in.current().isOperator("}")) {
            if (!keys.isEmpty()) {
                in.expectOperator(",");
            }
            if (in.current().isOperator("}")) {
                break;
            }
            keys.add(expression());
            in.expectOperator(":");
            values.add(expression());
        }
        in.expectOperator("}");
        return new Expr.DictLiteral(List.copyOf(keys), List.copyOf(values));
    }

    private Expr postfix(Expr node) {
        while (true) {
            Token t = in.current();
            if (t.isOperator(".") || t.isOperator("[")) {
                node = subscript(node);
            } else if (t.isOperator("(")) {
                node = new Expr.Call(node, callArgs());
            } else {
                return node;
            }
        }
    }

    private Expr filterChain(Expr node) {
        while (true) {
            Token t = in.current();
            if (t.isOperator("|")) {
                node = filter(node, false);
            } else if (t.isName("is")) {
                node = test(node);
            } else if (t.isOperator("(")) {
                node = new Expr.Call(node, callArgs());
            } else {
                return node;
            }
        }
    }

    private Expr subscript(Expr node) {
        Token t = in.next();
        if (t.isOperator(".")) {
            Token attr = in.next();
            if (attr.kind() == Token.Kind.NAME) {
                return new Expr.GetAttr(node, attr.text());
            }
            if (attr.kind() != Token.Kind.INTEGER) {
                throw in.fail(attr, "expected name or number");
            }
            return new Expr.GetItem(node, new Expr.Const(attr.value()));
        }
        List<Expr> args = new ArrayList<>();
        while (!in.current().isOperator("]")) {
            if (!args.isEmpty()) {
                in.expectOperator(",");
            }
            args.add(subscribed());
        }
        in.expectOperator("]");
        if (args.isEmpty()) {
            throw in.fail(t, "expected an expression inside '[]'");
        }
        Expr key = args.size() == 1 ? args.getFirst() : new Expr.TupleLiteral(List.copyOf(args));
        return new Expr.GetItem(node, key);
    }

    private Expr subscribed() {
        Expr start = null;
        if (!in.current().isOperator(":")) {
            start = expression();
            if (!in.current().isOperator(":")) {
                return start;
            }
        }
        in.next(); // ':'
        Expr stop = null;
        Expr step = null;
        if (!in.current().isOperator("]") && !in.current().isOperator(",") && !in.current().isOperator(":")) {
            stop = expression();
        }
        if (in.skipOperator(":")) {
            if (!in.current().isOperator("]") && !in.current().isOperator(",")) {
                step = expression();
            }
        }
        return new Expr.Slice(start, stop, step);
    }

    Expr.Args callArgs() {
        Token open = in.current();
        in.expectOperator("(");
        List<Expr> positional = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<Expr> values = new ArrayList<>();
        Expr star = null;
        Expr starStar = null;
        boolean first = true;
        while (!in.current().isOperator(")")) {
            if (!first) {
                in.expectOperator(",");
                if (in.current().isOperator(")")) {
                    break;
                }
            }
            first = false;
            if (in.skipOperator("*")) {
                star = expression();
            } else if (in.skipOperator("**")) {
                starStar = expression();
            } else if (in.current().kind() == Token.Kind.NAME && in.look().isOperator("=")) {
                String name = in.next().text();
                in.next();
                names.add(name);
                values.add(expression());
            } else {
                if (!names.isEmpty() || star != null || starStar != null) {
                    throw in.fail(open, "positional argument follows keyword argument");
                }
                positional.add(expression());
            }
        }
        in.expectOperator(")");
        return new Expr.Args(List.copyOf(positional), List.copyOf(names), List.copyOf(values), star, starStar);
    }

    /** {@code | name(args) | name2 ...}; with {@code startInline} the first {@code |} is implied. */
    Expr filter(Expr node, boolean startInline) {
        while (in.current().isOperator("|") || startInline) {
            if (!startInline) {
                in.next();
            }
            startInline = false;
            Token nameToken = in.expect(Token.Kind.NAME);
            String name = dottedName(nameToken.text());
            if (!Filters.isKnown(name)) {
                throw in.fail(nameToken, "No filter named '" + name + "'.");
            }
            Expr.Args args = in.current().isOperator("(") ? callArgs() : Expr.Args.NONE;
            node = new Expr.Filter(node, name, args);
        }
        return node;
    }

    private Expr test(Expr node) {
        in.next(); // 'is'
        boolean negated = in.skipName("not");
        Token nameToken = in.expect(Token.Kind.NAME);
        String name = dottedName(nameToken.text());
        if (!Tests.isKnown(name)) {
            throw in.fail(nameToken, "No test named '" + name + "'.");
        }
        Expr.Args args = Expr.Args.NONE;
        Token t = in.current();
        if (t.isOperator("(")) {
            args = callArgs();
        } else if ((t.kind() == Token.Kind.NAME || t.kind() == Token.Kind.STRING || t.kind() == Token.Kind.INTEGER
                || t.kind() == Token.Kind.FLOAT || t.isOperator("[") || t.isOperator("{"))
                && !t.isName("else") && !t.isName("or") && !t.isName("and")) {
            if (t.isName("is")) {
                throw in.fail(t, "You cannot chain multiple tests with is");
            }
            Expr arg = postfix(primary());
            args = new Expr.Args(List.of(arg), List.of(), List.of(), null, null);
        }
        return new Expr.Test(node, name, args, negated);
    }

    private String dottedName(String first) {
        StringBuilder name = new StringBuilder(first);
        while (in.skipOperator(".")) {
            name.append('.').append(in.expect(Token.Kind.NAME).text());
        }
        return name.toString();
    }
}
