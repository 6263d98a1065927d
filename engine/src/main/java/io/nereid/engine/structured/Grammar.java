package io.nereid.engine.structured;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A context-free grammar over bytes, flattened the way llama.cpp's GBNF engine holds one: one
 * program array in which every alternative of every rule is a run of elements ended by
 * {@link #END}; an element is a rule reference ({@code >= 0}) or a byte set
 * ({@code <= -2}, set {@code -e - 2}). A position is an index into the program. Immutable and
 * thread-safe; {@link Automaton} runs it.
 *
 * <p>Left recursion is refused when the grammar is built (a pushdown matcher would expand it
 * forever); every other context-free grammar is accepted, ambiguous ones included.
 */
final class Grammar {

    static final int END = -1;

    /** Upper bound on the program, so that a schema cannot make the compiler use unbounded memory. */
    static final int MAX_PROGRAM = 4_000_000;

    final int[] program;
    final int[][] alternatives;   // per rule: the start positions of its alternatives
    final long[][] sets;          // per byte-set element: 4 words, bit b = byte b allowed
    final String[] names;
    final int root;
    /**
     * Counted repetitions of items that cannot match the empty string: {@code counted[c][k]}, k >= 1,
     * is the rule "at most {@code k} more of the item" ({@code O_k ::= item O_(k-1) | ε}) or
     * "exactly {@code k} more" ({@code E_k ::= item E_(k-1)}); {@code counted[c][0]} is the same
     * without the count ({@code S ::= item S | ε}, or {@code F ::= item F}, which never ends and
     * exists only for this). A counted rule and its loose one behave alike on every input of at
     * most {@code k} bytes, which lets the automaton derive one's mask from the other's ({@link
     * Automaton}).
     */
    final int[][] counted;
    /** The ids of the special tokens the grammar writes ({@link Builder#token}), ascending. */
    final int[] specialTokens;

    private Grammar(int[] program, int[][] alternatives, long[][] sets, String[] names, int root, int[][] counted,
            int[] specialTokens) {
        this.specialTokens = specialTokens;
        this.program = program;
        this.alternatives = alternatives;
        this.sets = sets;
        this.names = names;
        this.root = root;
        this.counted = counted;
    }

    /** Whether the element at {@code position} is a byte set that allows {@code b}. */
    boolean allows(int position, int b) {
        int e = program[position];
        return e <= -2 && (sets[-e - 2][b >>> 6] >>> (b & 63) & 1) != 0;
    }

    /** The grammar whose start rule is {@code body}, written into a fresh builder (no special tokens). */
    static Grammar of(java.util.function.Function<Builder, Expr> body) {
        return of(Map.of(), body);
    }

    /** The same for a vocabulary with the special tokens {@code specialTokens} (id by text). */
    static Grammar of(Map<String, Integer> specialTokens, java.util.function.Function<Builder, Expr> body) {
        Builder b = new Builder(specialTokens);
        int root = b.rule("root");
        b.define(root, body.apply(b));
        return b.build(root);
    }

    @Override
    public String toString() {
        return "Grammar[" + alternatives.length + " rules, " + program.length + " elements]";
    }

    /**
     * Builds a grammar from {@link Expr}s: rules are named and defined in any order (recursion
     * through {@link Expr.Ref}); alternatives and repetitions nested inside a rule become rules of
     * their own, shared when equal. Not thread-safe; one per compile.
     */
    @SuppressWarnings("unchecked")
    static final class Builder {
        private final List<String> names = new ArrayList<>();
        private final List<Expr> definitions = new ArrayList<>();
        // rules for nested expressions: small ones (a byte set, a rule, a repetition of one) shared when
        // equal; larger ones by identity, since a record's structural hash walks the whole tree each time
        private final Map<Expr, Integer> anonymous = new HashMap<>();
        private final Map<Expr, Integer> anonymousLarge = new java.util.IdentityHashMap<>();
        private final Map<Expr.Bytes, Integer> setIndex = new HashMap<>();
        private final List<long[]> sets = new ArrayList<>();
        private final List<int[][]> lowered = new ArrayList<>();   // per rule: alternatives as element runs
        private final Map<Chain, Map<Integer, Integer>> chains = new HashMap<>();   // k -> O_k or E_k
        private final Map<Chain, Integer> loose = new HashMap<>();   // the chain's rule without the count
        private record Chain(Expr item, boolean exact) {}
        private int elements;
        private final Map<String, Integer> specials;
        private final java.util.SortedSet<Integer> usedSpecials = new java.util.TreeSet<>();

        Builder() {
            this(Map.of());
        }

        Builder(Map<String, Integer> specials) {
            this.specials = specials;
        }

        /**
         * {@code text} as the model writes it: the special token of that text where the vocabulary
         * has one (no ordinary token may spell it then), else the text.
         */
        Expr token(String text) {
            Integer id = specials.get(text);
            if (id != null) {
                usedSpecials.add(id);
                return Expr.special(text);
            }
            return Expr.literal(text);
        }

        /** The text of special token {@code id}, or null when {@code id} is not one. */
        String specialText(int id) {
            for (Map.Entry<String, Integer> e : specials.entrySet()) {
                if (e.getValue() == id) {
                    return e.getKey();
                }
            }
            return null;
        }

        /** Whether the vocabulary has a special token {@code text}. */
        boolean hasSpecial(String text) {
            return specials.containsKey(text);
        }

        /** A new rule, defined later with {@link #define}. */
        int rule(String name) {
            names.add(name);
            definitions.add(null);
            lowered.add(null);
            return names.size() - 1;
        }

        void define(int rule, Expr e) {
            if (definitions.get(rule) != null) {
                throw new IllegalStateException("rule " + names.get(rule) + " is defined twice");
            }
            definitions.set(rule, e);
        }

        boolean defined(int rule) {
            return definitions.get(rule) != null;
        }

        /** A rule for {@code e}: the same one for the same expression (for small ones, for an equal one). */
        int ruleFor(String name, Expr e) {
            Map<Expr, Integer> memo = small(e) ? anonymous : anonymousLarge;
            Integer r = memo.get(e);
            if (r == null) {
                r = rule(name);
                define(r, e);
                memo.put(e, r);
            }
            return r;
        }

        private static boolean small(Expr e) {
            return switch (e) {
                case Expr.Bytes b -> true;
                case Expr.Ref r -> true;
                case Expr.Repeat rep -> rep.item() instanceof Expr.Bytes || rep.item() instanceof Expr.Ref;
                case Expr.Seq s -> s.items().size() <= 4 && s.items().stream().allMatch(x -> x instanceof Expr.Bytes || x instanceof Expr.Ref);
                case Expr.Alt a -> a.options().size() <= 4 && a.options().stream().allMatch(x -> x instanceof Expr.Bytes || x instanceof Expr.Ref);
            };
        }

        Grammar build(int root) {
            for (int r = 0; r < names.size(); r++) {   // lowering may add rules; they are lowered too
                if (definitions.get(r) == null) {
                    throw new GrammarException("rule " + names.get(r) + " is used but never defined");
                }
                lower(r);
            }
            boolean[] nullable = nullable();
            checkLeftRecursion(nullable);
            List<int[]> counted = new ArrayList<>();
            chains.forEach((chain, rules) -> {
                if (chain.item() instanceof Expr.Bytes || !nullable[((Expr.Ref) chain.item()).rule()]) {
                    int length = 0;   // the run O_1 .. O_length made here (a rule made elsewhere ends it)
                    while (rules.containsKey(length + 1)) {
                        length++;
                    }
                    int[] c = new int[length + 1];
                    c[0] = loose.get(chain);
                    for (int k = 1; k <= length; k++) {
                        c[k] = rules.get(k);
                    }
                    counted.add(c);
                }
            });
            int[] program = new int[elements + totalAlternatives()];
            int[][] starts = new int[names.size()][];
            int p = 0;
            for (int r = 0; r < names.size(); r++) {
                int[][] alts = lowered.get(r);
                starts[r] = new int[alts.length];
                for (int a = 0; a < alts.length; a++) {
                    starts[r][a] = p;
                    System.arraycopy(alts[a], 0, program, p, alts[a].length);
                    p += alts[a].length;
                    program[p++] = END;
                }
            }
            return new Grammar(program, starts, sets.toArray(long[][]::new), names.toArray(String[]::new), root,
                    counted.toArray(int[][]::new), usedSpecials.stream().mapToInt(Integer::intValue).toArray());
        }

        private int totalAlternatives() {
            int n = 0;
            for (int[][] alts : lowered) {
                n += alts.length;
            }
            return n;
        }

        private void lower(int r) {
            Expr e = definitions.get(r);
            List<Expr> options = e instanceof Expr.Alt a ? a.options() : List.of(e);
            int[][] alts = new int[options.size()][];
            for (int i = 0; i < alts.length; i++) {
                IntList out = new IntList();
                flatten(options.get(i), out, names.get(r));
                alts[i] = out.toArray();
                elements += alts[i].length;
                if (elements > MAX_PROGRAM) {
                    throw new GrammarException("the constraint is too large (over " + MAX_PROGRAM + " grammar elements)");
                }
            }
            lowered.set(r, alts);
        }

        private void flatten(Expr e, IntList out, String owner) {
            switch (e) {
                case Expr.Seq s -> {
                    for (Expr item : s.items()) {
                        flatten(item, out, owner);
                    }
                }
                case Expr.Bytes b -> {
                    if (b.isEmpty()) {
                        throw new GrammarException("rule " + owner + " has an empty character class");
                    }
                    Integer k = setIndex.get(b);
                    if (k == null) {
                        k = sets.size();
                        sets.add(b.bits());
                        setIndex.put(b, k);
                    }
                    out.add(-k - 2);
                }
                case Expr.Ref ref -> out.add(ref.rule());
                case Expr.Alt a -> out.add(ruleFor(owner + "-alt", a));
                case Expr.Repeat rep -> repeat(rep, out, owner);
            }
        }

        private void repeat(Expr.Repeat rep, IntList out, String owner) {
            Expr item = rep.item();
            if (!(item instanceof Expr.Bytes || item instanceof Expr.Ref)) {
                item = new Expr.Ref(ruleFor(owner + "-item", item));
            }
            if (rep.min() > MAX_PROGRAM) {
                throw new GrammarException("the constraint is too large (a repetition of " + rep.min() + ")");
            }
            if (rep.min() < 2) {
                for (int i = 0; i < rep.min(); i++) {
                    flatten(item, out, owner);
                }
            } else {
                // E_k ::= item E_(k-1), E_1 ::= item: exactly k more (a chain of rules, not k copies
                // inline, so that the automaton sees which positions differ only by the count)
                Integer previous = null;
                for (int k = 1; k <= rep.min(); k++) {
                    previous = chainRule(item, k, true, previous, owner);
                }
                out.add(previous);
            }
            if (rep.max() < 0) {
                out.add(star(item, owner));
            } else if (rep.max() > rep.min()) {
                // O_k ::= item O_(k-1) | ε, O_1 ::= item | ε: at most k more
                int extra = rep.max() - rep.min();
                if (extra > MAX_PROGRAM / 4) {
                    throw new GrammarException("the constraint is too large (a repetition of up to " + rep.max() + ")");
                }
                Integer previous = null;
                for (int k = 1; k <= extra; k++) {
                    previous = chainRule(item, k, false, previous, owner);
                }
                out.add(previous);
            }
        }

        /** S ::= item S | ε — right recursion, which the matcher runs in constant stack depth; shared per item. */
        private int star(Expr item, String owner) {
            Expr.Repeat key = new Expr.Repeat(item, 0, -1);
            Integer s = anonymous.get(key);
            if (s == null) {
                s = rule(owner + "-star");
                anonymous.put(key, s);
                define(s, Expr.alt(Expr.seq(item, new Expr.Ref(s)), Expr.EMPTY));
            }
            return s;
        }

        /** F ::= item F: items without end, which no output reaches (see {@link Grammar#counted}). */
        private int forever(Expr item, String owner) {
            int f = rule(owner + "-forever");
            define(f, Expr.seq(item, new Expr.Ref(f)));
            return f;
        }

        /** O_k (at most k more items) or E_k (exactly k more), given the rule for k - 1; shared per item. */
        private int chainRule(Expr item, int k, boolean exact, Integer previous, String owner) {
            Chain chain = new Chain(item, exact);
            Map<Integer, Integer> rules = chains.get(chain);
            if (rules == null) {
                rules = new HashMap<>();
                chains.put(chain, rules);
                loose.put(chain, exact ? forever(item, owner) : star(item, owner));
            }
            Integer r = rules.get(k);
            if (r == null) {
                r = rule(owner + (exact ? "-exactly" : "-upto") + k);
                rules.put(k, r);
                Expr once = previous == null ? item : Expr.seq(item, new Expr.Ref(previous));
                define(r, exact ? once : Expr.alt(once, Expr.EMPTY));
            }
            return r;
        }

        /**
         * Refuses left recursion that grows the stack: a rule that can reach itself without
         * consuming a byte through at least one reference that is not a tail call. A cycle made of
         * tail calls only (S ::= x S | ε with x nullable) is harmless: the matcher re-enters the
         * same stack node and its visited check ends the expansion.
         */
        private void checkLeftRecursion(boolean[] nullable) {
            int n = names.size();
            // leftmost edges r -> e, and whether each is a tail call (the last element of its alternative)
            List<int[]>[] edges = new List[n];
            for (int r = 0; r < n; r++) {
                edges[r] = new ArrayList<>();
                for (int[] alt : lowered.get(r)) {
                    for (int k = 0; k < alt.length; k++) {
                        int e = alt[k];
                        if (e < 0) {
                            break;
                        }
                        edges[r].add(new int[] {e, k == alt.length - 1 ? 1 : 0});
                        if (!nullable[e]) {
                            break;
                        }
                    }
                }
            }
            int[] component = stronglyConnected(edges);
            for (int r = 0; r < n; r++) {
                for (int[] e : edges[r]) {
                    if (e[1] == 0 && component[e[0]] == component[r]) {
                        throw new GrammarException("rule " + names.get(e[0]) + " is left-recursive, which is not supported");
                    }
                }
            }
        }

        /** Which rules can match the empty string. */
        private boolean[] nullable() {
            int n = names.size();
            boolean[] nullable = new boolean[n];
            boolean changed = true;
            while (changed) {
                changed = false;
                for (int r = 0; r < n; r++) {
                    if (!nullable[r] && Arrays.stream(lowered.get(r)).anyMatch(alt -> allNullable(alt, nullable))) {
                        nullable[r] = changed = true;
                    }
                }
            }
            return nullable;
        }

        /** Tarjan's strongly connected components, iterative; the component number of each rule. */
        private static int[] stronglyConnected(List<int[]>[] edges) {
            int n = edges.length;
            int[] index = new int[n], low = new int[n], component = new int[n], edgeAt = new int[n];
            Arrays.fill(index, -1);
            boolean[] onStack = new boolean[n];
            int[] stack = new int[n], call = new int[n];
            int sp = 0, next = 0, components = 0;
            for (int s = 0; s < n; s++) {
                if (index[s] >= 0) {
                    continue;
                }
                int cp = 0;
                call[cp++] = s;
                index[s] = low[s] = next++;
                stack[sp++] = s;
                onStack[s] = true;
                while (cp > 0) {
                    int v = call[cp - 1];
                    if (edgeAt[v] < edges[v].size()) {
                        int w = edges[v].get(edgeAt[v]++)[0];
                        if (index[w] < 0) {
                            index[w] = low[w] = next++;
                            stack[sp++] = w;
                            onStack[w] = true;
                            call[cp++] = w;
                        } else if (onStack[w]) {
                            low[v] = Math.min(low[v], index[w]);
                        }
                    } else {
                        cp--;
                        if (cp > 0) {
                            int parent = call[cp - 1];
                            low[parent] = Math.min(low[parent], low[v]);
                        }
                        if (low[v] == index[v]) {
                            int w;
                            do {
                                w = stack[--sp];
                                onStack[w] = false;
                                component[w] = components;
                            } while (w != v);
                            components++;
                        }
                    }
                }
            }
            return component;
        }

        private static boolean allNullable(int[] alt, boolean[] nullable) {
            for (int e : alt) {
                if (e < 0 || !nullable[e]) {
                    return false;
                }
            }
            return true;
        }
    }

    /** A growable list of ints: an alternative's elements while it is lowered (no boxing). */
    private static final class IntList {
        private int[] items = new int[8];
        private int size;

        void add(int v) {
            if (size == items.length) {
                items = Arrays.copyOf(items, 2 * size);
            }
            items[size++] = v;
        }

        int[] toArray() {
            return Arrays.copyOf(items, size);
        }
    }
}
