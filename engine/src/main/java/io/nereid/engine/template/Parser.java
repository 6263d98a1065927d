package io.nereid.engine.template;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Builds the statement tree of a template from its tokens, following Jinja2's parser: the tags
 * {@code if/elif/else}, {@code for/else} (with inline {@code if} filter and {@code recursive}),
 * {@code set} (expression, tuple, namespace attribute and block forms), {@code macro},
 * {@code call}, {@code filter}, {@code with}, {@code break}/{@code continue} (the loopcontrols
 * extension) and HF's {@code generation}. Template-loading tags ({@code extends}, {@code include},
 * {@code import}, {@code block}) are rejected: a chat template is a single source. Not
 * thread-safe; one instance parses one source.
 */
final class Parser {

    private static final Set<String> UNSUPPORTED =
            Set.of("extends", "include", "import", "from", "block", "autoescape", "do", "print", "trans");

    private final TokenStream in;
    private final ExprParser expr;
    /** Names of the open tags, innermost last, and the end tags each waits for (for error messages). */
    private final Deque<String> openTags = new ArrayDeque<>();
    private final Deque<List<String>> endTokens = new ArrayDeque<>();
    private int loopDepth;

    private Parser(List<Token> tokens, String templateName) {
        this.in = new TokenStream(tokens, templateName);
        this.expr = new ExprParser(in);
    }

    static List<Node> parse(String source, String templateName) {
        Parser p = new Parser(Lexer.tokenize(source, templateName), templateName);
        List<Node> body = p.subparse(List.of());
        if (p.in.current().kind() != Token.Kind.EOF) {
            throw p.in.fail(p.in.current(), "unexpected '" + p.in.current().describe() + "'");
        }
        return body;
    }

    /** Parses nodes until a block whose tag name is in {@code ends} (left current) or the end. */
    private List<Node> subparse(List<String> ends) {
        List<Node> body = new ArrayList<>();
        StringBuilder data = null;
        int dataLine = 0;
        while (true) {
            Token t = in.current();
            switch (t.kind()) {
                case DATA -> {
                    in.next();
                    if (data == null) {
                        data = new StringBuilder();
                        dataLine = t.line();
                    }
                    data.append(t.text());
                }
                case VARIABLE_BEGIN -> {
                    data = flush(body, data, dataLine);
                    in.next();
                    body.add(new Node.Print(expr.tuple(false, true, null, false), t.line()));
                    in.expect(Token.Kind.VARIABLE_END);
                }
                case BLOCK_BEGIN -> {
                    data = flush(body, data, dataLine);
                    in.next();
                    Token tag = in.current();
                    if (tag.kind() == Token.Kind.NAME && ends.contains(tag.text())) {
                        return body;
                    }
                    body.add(statement());
                    in.expect(Token.Kind.BLOCK_END);
                }
                case EOF -> {
                    flush(body, data, dataLine);
                    return body;
                }
                default -> throw in.fail(t, "unexpected '" + t.describe() + "'");
            }
        }
    }

    private static StringBuilder flush(List<Node> body, StringBuilder data, int line) {
        if (data != null && !data.isEmpty()) {
            body.add(new Node.Text(data.toString(), line));
        }
        return null;
    }

    /** Jinja2's {@code parse_statements}: block end, body up to one of {@code ends}, then optionally drop it. */
    private List<Node> statements(String tag, List<String> ends, boolean dropNeedle) {
        in.skipOperator(":");
        in.expect(Token.Kind.BLOCK_END);
        openTags.push(tag);
        endTokens.push(ends);
        List<Node> body;
        try {
            body = subparse(ends);
            if (in.current().kind() == Token.Kind.EOF) {
                throw failEof();
            }
        } finally {
            openTags.pop();
            endTokens.pop();
        }
        if (dropNeedle) {
            in.next();
        }
        return List.copyOf(body);
    }

    private TemplateSyntaxException failEof() {
        StringBuilder sb = new StringBuilder("Unexpected end of template.");
        appendExpectations(sb);
        return in.fail(in.current(), sb.toString());
    }

    private void appendExpectations(StringBuilder sb) {
        if (!endTokens.isEmpty()) {
            sb.append(" Jinja was looking for the following tags: ")
                    .append(endTokens.peek().stream().map(s -> "'" + s + "'").collect(Collectors.joining(" or ")))
                    .append('.');
        }
        if (!openTags.isEmpty()) {
            sb.append(" The innermost block that needs to be closed is '").append(openTags.peek()).append("'.");
        }
    }

    private Node statement() {
        Token t = in.current();
        if (t.kind() != Token.Kind.NAME) {
            throw in.fail(t, "tag name expected");
        }
        return switch (t.text()) {
            case "if" -> ifStatement();
            case "for" -> forStatement();
            case "set" -> setStatement();
            case "macro" -> macro();
            case "call" -> callBlock();
            case "filter" -> filterBlock();
            case "with" -> with();
            case "generation" -> {
                in.next();
                yield new Node.Scope(statements("generation", List.of("endgeneration"), true), t.line());
            }
            case "break", "continue" -> loopControl(t);
            default -> throw unknownTag(t);
        };
    }

    private TemplateSyntaxException unknownTag(Token t) {
        if (UNSUPPORTED.contains(t.text())) {
            return in.fail(t, "tag '" + t.text() + "' is not supported in chat templates");
        }
        StringBuilder sb = new StringBuilder("Encountered unknown tag '").append(t.text()).append("'.");
        appendExpectations(sb);
        return in.fail(t, sb.toString());
    }

    private Node ifStatement() {
        int line = in.next().line();
        List<Expr> tests = new ArrayList<>();
        List<List<Node>> bodies = new ArrayList<>();
        List<Node> orElse = List.of();
        while (true) {
            tests.add(expr.tuple(false, false, null, false));
            bodies.add(statements("if", List.of("elif", "else", "endif"), false));
            Token end = in.next();
            if (end.isName("elif")) {
                continue;
            }
            if (end.isName("else")) {
                orElse = statements("if", List.of("endif"), true);
            }
            break;
        }
        return new Node.If(List.copyOf(tests), List.copyOf(bodies), orElse, line);
    }

    private Node forStatement() {
        int line = in.next().line();
        loopDepth++; // the target of a for loop may not be 'loop' either
        Node.Target target;
        try {
            target = assignTarget(t -> t.isName("in"), false);
        } finally {
            loopDepth--;
        }
        in.expectName("in");
        Expr iter = expr.tuple(false, false, t -> t.isName("recursive"), false);
        Expr filter = in.skipName("if") ? expr.expression() : null;
        boolean recursive = in.skipName("recursive");
        loopDepth++;
        List<Node> body;
        try {
            body = statements("for", List.of("endfor", "else"), false);
        } finally {
            loopDepth--;
        }
        List<Node> orElse = List.of();
        if (in.next().isName("else")) {
            orElse = statements("for", List.of("endfor"), true);
        }
        return new Node.For(target, iter, filter, recursive, body, orElse, line);
    }

    private Node setStatement() {
        int line = in.next().line();
        Node.Target target = assignTarget(null, true);
        if (in.skipOperator("=")) {
            return new Node.Set(target, expr.tuple(false, true, null, false), line);
        }
        Expr filter = in.current().isOperator("|") ? expr.filter(null, false) : null;
        if (target instanceof Node.Target.Tuple) {
            throw in.fail(in.current(), "can't assign a block to a tuple");
        }
        return new Node.SetBlock(target, filter, statements("set", List.of("endset"), true), line);
    }

    /** A {@code set}/{@code for}/{@code with} target: name, tuple of names, or {@code ns.attr}. */
    private Node.Target assignTarget(java.util.function.Predicate<Token> extraEnd, boolean withNamespace) {
        if (withNamespace && in.current().kind() == Token.Kind.NAME && in.look().isOperator(".")) {
            String ns = in.next().text();
            in.next();
            return new Node.Target.NamespaceAttr(ns, in.expect(Token.Kind.NAME).text());
        }
        Token at = in.current();
        return toTarget(expr.tuple(true, true, extraEnd, false), at);
    }

    private Node.Target toTarget(Expr e, Token at) {
        if (e instanceof Expr.Name(String name)) {
            if (name.equals("loop") && loopDepth > 0) {
                throw in.fail(at, "Can't assign to special loop variable in for-loop target");
            }
            return new Node.Target.Name(name);
        }
        if (e instanceof Expr.TupleLiteral(List<Expr> items)) {
            List<Node.Target> targets = new ArrayList<>();
            for (Expr item : items) {
                targets.add(toTarget(item, at));
            }
            return new Node.Target.Tuple(List.copyOf(targets));
        }
        throw in.fail(at, "can't assign to '" + e.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT) + "'");
    }

    private Node macro() {
        int line = in.next().line();
        String name = in.expect(Token.Kind.NAME).text();
        List<Node.Param> params = signature();
        int outerLoops = loopDepth;
        loopDepth = 0;
        try {
            return new Node.Macro(name, params, statements("macro", List.of("endmacro"), true), line);
        } finally {
            loopDepth = outerLoops;
        }
    }

    private List<Node.Param> signature() {
        List<Node.Param> params = new ArrayList<>();
        in.expectOperator("(");
        while (!in.current().isOperator(")")) {
            if (!params.isEmpty()) {
                in.expectOperator(",");
            }
            Token nameToken = in.expect(Token.Kind.NAME);
            Expr defaultValue = in.skipOperator("=") ? expr.expression() : null;
            params.add(new Node.Param(nameToken.text(), defaultValue));
        }
        in.expectOperator(")");
        return List.copyOf(params);
    }

    private Node callBlock() {
        int line = in.next().line();
        List<Node.Param> params = in.current().isOperator("(") ? signature() : List.of();
        Token at = in.current();
        Expr call = expr.expression();
        if (!(call instanceof Expr.Call c)) {
            throw in.fail(at, "expected call");
        }
        int outerLoops = loopDepth;
        loopDepth = 0;
        try {
            return new Node.CallBlock(c, params, statements("call", List.of("endcall"), true), line);
        } finally {
            loopDepth = outerLoops;
        }
    }

    private Node filterBlock() {
        int line = in.next().line();
        Expr filter = expr.filter(null, true);
        return new Node.FilterBlock(filter, statements("filter", List.of("endfilter"), true), line);
    }

    private Node with() {
        int line = in.next().line();
        List<Node.Target> targets = new ArrayList<>();
        List<Expr> values = new ArrayList<>();
        while (in.current().kind() != Token.Kind.BLOCK_END) {
            if (!targets.isEmpty()) {
                in.expectOperator(",");
            }
            Token at = in.current();
            targets.add(toTarget(expr.primary(), at));
            in.expectOperator("=");
            values.add(expr.expression());
        }
        return new Node.With(List.copyOf(targets), List.copyOf(values), statements("with", List.of("endwith"), true),
                line);
    }

    private Node loopControl(Token t) {
        in.next();
        if (loopDepth == 0) {
            throw in.fail(t, "'" + t.text() + "' outside of a loop");
        }
        return t.text().equals("break") ? new Node.Break(t.line()) : new Node.Continue(t.line());
    }
}
