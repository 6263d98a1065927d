package io.nereid.engine.structured;

import io.nereid.engine.api.Constraint;
import io.nereid.engine.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Compiles {@link Constraint}s into {@link CompiledConstraint}s over a tokenizer's vocabulary and
 * keeps the last {@value #CACHE_SIZE} per tokenizer, keyed by {@link Constraint#key()}, so that a
 * schema sent with every request compiles once. Compiling builds the grammar, the automaton's
 * first state and its first mask: what a request's first token needs, done on the caller's
 * thread (the gateway's worker pool), not the engine's.
 *
 * <p>Thread-safe.
 */
public final class Constraints {

    static final int CACHE_SIZE = 64;

    private final Tokenizer tokenizer;
    private final Map<String, CompiledConstraint> cache = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, CompiledConstraint> eldest) {
            return size() > CACHE_SIZE;
        }
    };

    public Constraints(Tokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    /**
     * The compiled form of {@code c}, from the cache or compiled now.
     *
     * @throws GrammarException naming what cannot be compiled or honoured
     */
    public CompiledConstraint compile(Constraint c) {
        String key = c.key();
        synchronized (cache) {
            CompiledConstraint hit = cache.get(key);
            if (hit != null) {
                return hit;
            }
        }
        TokenTrie trie = TokenTrie.of(tokenizer);
        Grammar g = grammar(c, trie.specialIds());
        CompiledConstraint compiled = new CompiledConstraint(new Automaton(g, trie), g.specialTokens);
        synchronized (cache) {
            cache.putIfAbsent(key, compiled);
            return cache.get(key);
        }
    }

    /** The byte grammar of {@code c} for a vocabulary without special tokens. */
    static Grammar grammar(Constraint c) {
        return grammar(c, Map.of());
    }

    /** The byte grammar of {@code c} for a vocabulary with {@code specialTokens} (id by text). */
    static Grammar grammar(Constraint c, Map<String, Integer> specialTokens) {
        return Grammar.of(specialTokens, b -> into(b, c));
    }

    /** {@code c} as an expression of {@code b}. */
    static Expr into(Grammar.Builder b, Constraint c) {
        return switch (c) {
            case Constraint.JsonSchema j ->
                    JsonSchemaCompiler.into(b, JsonSchemaCompiler.parse(j.schema(), "the schema"), j.freeWhitespace(), "root");
            case Constraint.Regex r -> RegexCompiler.fullMatch(r.pattern());
            case Constraint.Choice ch -> {
                if (ch.options().isEmpty()) {
                    throw new GrammarException("a choice needs at least one option");
                }
                List<Expr> options = new ArrayList<>();
                for (String o : ch.options()) {
                    options.add(Expr.literal(o));
                }
                yield Expr.alt(options);
            }
            case Constraint.Grammar g -> GbnfParser.into(b, g.ebnf());
            case Constraint.ToolCalls t -> ToolCallGrammar.into(b, t);
            case Constraint.AfterThinking t -> {
                // the thought is free text up to its end marker; the constraint holds from the answer on
                Expr thought = Expr.seq(ToolCallGrammar.avoiding(b, Constraint.AfterThinking.END), Expr.literal(Constraint.AfterThinking.END),
                        new Expr.Repeat(Expr.anyOf(" \n"), 0, 4));
                Expr answer = into(b, t.answer());
                yield t.startsInThought()
                        ? Expr.seq(Expr.opt(Expr.literal(Constraint.AfterThinking.START)), thought, answer)
                        : Expr.seq(Expr.opt(Expr.seq(Expr.literal(Constraint.AfterThinking.START), thought)), answer);
            }
        };
    }

    /** {@code s} quoted for an error message, cut at 80 characters. */
    static String quoteShort(String s) {
        return "'" + (s.length() > 80 ? s.substring(0, 77) + "..." : s) + "'";
    }
}
