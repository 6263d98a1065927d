/**
 * Structured output: constraints compiled into token masks, the grammar engine behind
 * {@code response_format}, vLLM's {@code guided_*} and (next) tool calls.
 *
 * <pre>
 *   Constraint ──compile──▶ Grammar (byte-level CFG) ──▶ Automaton (lazy DFA over PDA states)
 *   JsonSchemaCompiler       Grammar.Builder lowers       + TokenTrie of the vocabulary
 *   RegexCompiler            Expr trees into rules        = masks per state, cached
 *   GbnfParser, choice
 *                                 per sequence: TokenMatcher (a LogitsProcessor) holds its
 *                                 state history: apply = mask, accept = advance, rollback = pop
 * </pre>
 *
 * <p>Why our own engine: no JVM library compiles JSON Schema to a token-level matcher (llguidance
 * and XGrammar are Rust / C++; dk.brics.automaton handles regular languages only, and JSON Schema
 * with {@code $ref} recursion is context-free). The design follows llama.cpp's GBNF matcher (sets
 * of grammar stacks) made fast the way llguidance and XGrammar are: every stack node and every set
 * of stacks is hash-consed, so a parser state is an int, its byte transitions are cached, and a
 * mask is one preorder scan over the vocabulary's trie that skips every rejected prefix; masks
 * are cached per state within a memory budget.
 *
 * <p>Soundness: every keyword is either enforced exactly or refused with a {@link
 * io.nereid.engine.structured.GrammarException} that names it; the known gaps where the language
 * is a superset: {@code oneOf} is treated as {@code anyOf} (exclusivity is not enforced).
 * Properties come in the schema's order.
 *
 * <p>Threading: compiled constraints and automata are thread-safe (the automaton synchronizes its
 * growing tables); matchers are per sequence, engine thread only.
 */
package io.nereid.engine.structured;
