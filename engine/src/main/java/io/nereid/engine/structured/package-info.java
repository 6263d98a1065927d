/**
 * Structured output: constraints compiled into token masks, the grammar engine behind
 * {@code response_format}, vLLM's {@code guided_*}, tool calls and reasoning models' answers.
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
 * io.nereid.engine.structured.GrammarException} that names it ({@code oneOf} only when its options
 * are provably disjoint). One deliberate looseness: unconstrained string bodies take bytes of 0x80
 * and above one by one rather than as whole UTF-8 characters (a non-UTF-8 sequence decodes to
 * U+FFFD, still a valid string character, so the JSON stays valid); strings with a length, a
 * pattern or a format count real characters. Objects of up to 8 properties take them in any order;
 * larger ones in the schema's order or required-first. Tool calls ({@code ToolCallGrammar}) and
 * thought-then-answer ({@code Constraint.AfterThinking}) are grammars over the same machinery.
 *
 * <p>Special tokens: a grammar may name a special (control) token of the vocabulary ({@code
 * Expr.special}, through {@code Grammar.Builder.token}: Mistral's {@code [TOOL_CALLS]}). The trie
 * spells each special token as byte 0xFF, its text, 0xFF; 0xFF is never UTF-8 and in no ordinary
 * byte set, and ordinary tokens holding it (the byte fallback {@code <0xFF>}) are left out, so a
 * special token is allowed exactly where a grammar names it and no ordinary token can spell it.
 * The output's text keeps the special tokens its constraint writes ({@code
 * CompiledConstraint.specialTokens}), so what reads the output back sees them.
 *
 * <p>Threading: compiled constraints and automata are thread-safe (the automaton synchronizes its
 * growing tables); matchers are per sequence, engine thread only.
 */
package io.nereid.engine.structured;
