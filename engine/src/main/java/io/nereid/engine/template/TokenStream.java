package io.nereid.engine.template;

import java.util.List;

/** A cursor over lexed tokens with Jinja2-style expectations and errors. Not thread-safe. */
final class TokenStream {

    private final List<Token> tokens;
    private final String templateName;
    private int index;

    TokenStream(List<Token> tokens, String templateName) {
        this.tokens = tokens;
        this.templateName = templateName;
    }

    Token current() {
        return tokens.get(index);
    }

    Token look() {
        return tokens.get(Math.min(index + 1, tokens.size() - 1));
    }

    Token next() {
        Token t = tokens.get(index);
        if (t.kind() != Token.Kind.EOF) {
            index++;
        }
        return t;
    }

    boolean skipOperator(String op) {
        if (current().isOperator(op)) {
            index++;
            return true;
        }
        return false;
    }

    boolean skipName(String name) {
        if (current().isName(name)) {
            index++;
            return true;
        }
        return false;
    }

    Token expect(Token.Kind kind) {
        Token t = current();
        if (t.kind() != kind) {
            throw fail(t, "expected " + describe(kind) + ", got '" + t.describe() + "'");
        }
        return next();
    }

    void expectOperator(String op) {
        if (!current().isOperator(op)) {
            throw fail(current(), "expected token '" + op + "', got '" + current().describe() + "'");
        }
        next();
    }

    void expectName(String name) {
        if (!current().isName(name)) {
            throw fail(current(), "expected token '" + name + "', got '" + current().describe() + "'");
        }
        next();
    }

    TemplateSyntaxException fail(Token at, String reason) {
        return new TemplateSyntaxException(templateName, at.line(), reason);
    }

    private static String describe(Token.Kind kind) {
        return switch (kind) {
            case NAME -> "name";
            case BLOCK_END -> "token 'end of statement block'";
            case VARIABLE_END -> "token 'end of print statement'";
            default -> kind.name().toLowerCase(java.util.Locale.ROOT);
        };
    }
}
