package io.nereid.engine.template;

/**
 * One lexical token of a template. {@code text} is the source spelling (operator, name) or the
 * data text; {@code value} the decoded literal for {@link Kind#STRING} ({@code String}),
 * {@link Kind#INTEGER} ({@code Long}) and {@link Kind#FLOAT} ({@code Double}). Immutable.
 */
record Token(Kind kind, String text, Object value, int line) {

    enum Kind {
        /** Literal template text between tags (already whitespace-controlled). */
        DATA,
        VARIABLE_BEGIN, VARIABLE_END, BLOCK_BEGIN, BLOCK_END,
        NAME, STRING, INTEGER, FLOAT,
        /** Operators and punctuation: {@code + - * / // % ** ~ ( ) [ ] { } == != < <= > >= = . : | , ;}. */
        OPERATOR,
        EOF
    }

    boolean isOperator(String op) {
        return kind == Kind.OPERATOR && text.equals(op);
    }

    boolean isName(String name) {
        return kind == Kind.NAME && text.equals(name);
    }

    /** How the token reads in an error message, like Jinja2's {@code describe_token}. */
    String describe() {
        return switch (kind) {
            case DATA -> "template data";
            case VARIABLE_BEGIN -> "begin of print statement";
            case VARIABLE_END -> "end of print statement";
            case BLOCK_BEGIN -> "begin of statement block";
            case BLOCK_END -> "end of statement block";
            case EOF -> "end of template";
            case STRING -> "string";
            default -> text;
        };
    }
}
