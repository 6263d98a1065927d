package io.nereid.engine.structured;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A regular expression as a deterministic automaton over characters (Unicode scalar values, in
 * classes), for what a byte grammar cannot say directly: a {@code pattern} or {@code format} together
 * with {@code minLength} / {@code maxLength}, which JSON Schema counts in characters. The regex is parsed
 * by {@link RegexCompiler} (same subset, same refusals) into character-class symbols, made a Thompson
 * NFA, then a DFA over the classes' common refinement; {@link #withLength} intersects it with a length
 * range and writes the result as grammar rules, one per (state, length so far), only the states from
 * which the string can still be completed. Bounded: too many automaton states is a {@link
 * GrammarException}, never an approximation.
 */
final class CharAutomaton {

    static final int MAX_NFA_STATES = 20_000;
    static final int MAX_DFA_STATES = 2_000;
    static final int MAX_PRODUCT_STATES = 50_000;
    /** The shortest maxLength {@link #withLength} narrows a too-long one to; below it, refused. */
    static final int MIN_COUNTED_LENGTH = 128;

    /** The markers of {@code ^} and {@code $}: zero-width assertions (at the start; nothing after). */
    private static final Expr START = new Expr.Ref(Integer.MIN_VALUE);
    private static final Expr END = new Expr.Ref(Integer.MIN_VALUE + 1);

    private final List<CharSet> blocks;   // disjoint character classes covering every character
    private final int[][] next;           // [state][block] -> state, -1: none
    private final boolean[] accepting;
    private final String source;          // for messages

    private CharAutomaton(List<CharSet> blocks, int[][] next, boolean[] accepting, String source) {
        this.blocks = blocks;
        this.next = next;
        this.accepting = accepting;
        this.source = source;
    }

    int states() {
        return next.length;
    }

    /** The strings in which {@code pattern} finds a match, as JSON Schema's {@code pattern} means it. */
    static CharAutomaton search(String pattern) {
        return searchAll(List.of(pattern)).getFirst();
    }

    /**
     * {@link #search} of each pattern, all over the same character classes, so that they combine
     * ({@link #and}, {@link #or}, {@link #not}).
     */
    static List<CharAutomaton> searchAll(List<String> patterns) {
        List<CharSet> symbols = new ArrayList<>();
        List<Expr> trees = new ArrayList<>();
        for (String pattern : patterns) {
            trees.add(RegexCompiler.searchWithAnchors(pattern, s -> {
                symbols.add(s);
                return new Expr.Ref(-symbols.size());   // a symbol, not a rule: never reaches a grammar
            }, START, END));
        }
        List<CharSet> blocks = refine(symbols);
        List<CharAutomaton> out = new ArrayList<>();
        for (int i = 0; i < patterns.size(); i++) {
            out.add(determinize(new Nfa(symbols).build(trees.get(i)), symbols, blocks,
                    Constraints.quoteShort(patterns.get(i))));
        }
        return out;
    }

    /**
     * The ASCII language of {@code numbers} (a byte grammar of JSON numbers without rule references, as
     * {@link Numbers} writes them) intersected with the multiples of {@code step}: written without an
     * exponent, the value times 10^scale is an integer (no significant fraction digit past the step's
     * scale) divisible by the step's unscaled value. Exact for the numbers {@code numbers} allows that
     * have no exponent; those with one are left out (a subset, never a wider language).
     */
    static CharAutomaton multiplesOf(Expr numbers, java.math.BigDecimal step) {
        java.math.BigDecimal d = step.stripTrailingZeros();
        if (d.signum() <= 0) {
            throw new GrammarException("multipleOf must be greater than 0, got " + step);
        }
        int scale = Math.max(0, d.scale());
        java.math.BigInteger unscaled = d.movePointRight(scale).toBigIntegerExact();
        if (unscaled.bitLength() > 20 || scale > 20) {
            throw new GrammarException("multipleOf " + step + ": a step over 10^6 units or finer than 10^-20 is not"
                    + " supported");
        }
        int m = unscaled.intValueExact();
        if ((long) m * (scale + 3) > MAX_PRODUCT_STATES) {
            throw new GrammarException("multipleOf " + step + " needs " + (long) m * (scale + 3)
                    + " automaton states, over the " + MAX_PRODUCT_STATES + " supported");
        }
        List<CharSet> symbols = new ArrayList<>();
        Expr tree = symbolsOf(numbers, symbols);
        for (char c : "0123456789.-".toCharArray()) {
            symbols.add(CharSet.of(c));
        }
        List<CharSet> blocks = refine(symbols);
        CharAutomaton range = determinize(new Nfa(symbols).build(tree), symbols, blocks, "the number range");
        // states: 0 start, 1 after '-'; with r the value so far mod m: INT(r) in the integer part, DOT(r) just
        // after '.', FRAC(f, r) after f fraction digits (1 <= f <= scale), TAIL(r) past the scale (zeros only)
        int intBase = 2;
        int dotBase = intBase + m;
        int fracBase = dotBase + m;          // FRAC(f, r) = fracBase + (f - 1) * m + r
        int tailBase = fracBase + scale * m;
        int n = tailBase + m;
        int[][] next = new int[n][blocks.size()];
        boolean[] accepting = new boolean[n];
        for (int[] row : next) {
            Arrays.fill(row, -1);
        }
        java.math.BigInteger big = java.math.BigInteger.valueOf(m);
        java.util.function.IntBinaryOperator zeroAfter = (r, digits) ->   // r * 10^digits mod m == 0 ? 1 : 0
                java.math.BigInteger.valueOf(r).multiply(java.math.BigInteger.TEN.pow(digits)).mod(big).signum() == 0 ? 1 : 0;
        for (int r = 0; r < m; r++) {
            accepting[intBase + r] = zeroAfter.applyAsInt(r, scale) == 1;
            for (int f = 1; f <= scale; f++) {
                accepting[fracBase + (f - 1) * m + r] = zeroAfter.applyAsInt(r, scale - f) == 1;
            }
            accepting[tailBase + r] = r == 0;
        }
        for (int k = 0; k < blocks.size(); k++) {
            CharSet block = blocks.get(k);
            if (block.ranges.length != 2 || block.ranges[0] != block.ranges[1]) {
                continue;   // not one of the characters a plain number is written with
            }
            int c = block.ranges[0];
            if (c == '-') {
                next[0][k] = 1;
            } else if (c == '.') {
                for (int r = 0; r < m; r++) {
                    next[intBase + r][k] = dotBase + r;
                }
            } else if (c >= '0' && c <= '9') {
                int digit = c - '0';
                next[0][k] = intBase + digit % m;
                next[1][k] = intBase + digit % m;
                for (int r = 0; r < m; r++) {
                    int r2 = (10 * r + digit) % m;
                    next[intBase + r][k] = intBase + r2;
                    next[dotBase + r][k] = scale >= 1 ? fracBase + r2 : (digit == 0 ? tailBase + r : -1);
                    for (int f = 1; f <= scale; f++) {
                        next[fracBase + (f - 1) * m + r][k] = f < scale ? fracBase + f * m + r2
                                : (digit == 0 ? tailBase + r : -1);
                    }
                    next[tailBase + r][k] = digit == 0 ? tailBase + r : -1;
                }
            }
        }
        return range.and(minimize(blocks, next, accepting, "multipleOf " + step));
    }

    /** {@code e} with every byte class a character symbol (rule references are refused: not a closed regular language). */
    private static Expr symbolsOf(Expr e, List<CharSet> symbols) {
        return switch (e) {
            case Expr.Bytes b -> {
                CharSet set = CharSet.NONE;
                for (int c = 0; c < 256; c++) {
                    if ((b.bits()[c >>> 6] >>> (c & 63) & 1) != 0) {
                        set = set.union(CharSet.of(c));
                    }
                }
                symbols.add(set);
                yield new Expr.Ref(-symbols.size());
            }
            case Expr.Seq s -> new Expr.Seq(s.items().stream().map(x -> symbolsOf(x, symbols)).toList());
            case Expr.Alt a -> new Expr.Alt(a.options().stream().map(x -> symbolsOf(x, symbols)).toList());
            case Expr.Repeat r -> new Expr.Repeat(symbolsOf(r.item(), symbols), r.min(), r.max());
            case Expr.Ref r -> throw new IllegalArgumentException("a rule reference in a closed number grammar");
        };
    }

    /** A regex that matches exactly the strings {@code literals}, each character escaped. */
    static String literals(List<String> literals) {
        StringBuilder r = new StringBuilder("^(?:");
        for (int i = 0; i < literals.size(); i++) {
            if (i > 0) {
                r.append('|');
            }
            literals.get(i).codePoints().forEach(c -> r.append("\\u{").append(Integer.toHexString(c)).append('}'));
        }
        return r.append(")$").toString();
    }

    boolean isEmpty() {
        BitSet seen = new BitSet();
        ArrayDeque<Integer> queue = new ArrayDeque<>(List.of(0));
        seen.set(0);
        while (!queue.isEmpty()) {
            int q = queue.poll();
            if (accepting[q]) {
                return false;
            }
            for (int t : next[q]) {
                if (t >= 0 && !seen.get(t)) {
                    seen.set(t);
                    queue.add(t);
                }
            }
        }
        return true;
    }

    CharAutomaton and(CharAutomaton o) {
        return product(o, true);
    }

    CharAutomaton or(CharAutomaton o) {
        return product(o, false);
    }

    /** Every string this automaton rejects. */
    CharAutomaton not() {
        int n = states();
        int[][] nx = new int[n + 1][blocks.size()];
        boolean[] acc = new boolean[n + 1];
        for (int q = 0; q <= n; q++) {
            for (int k = 0; k < blocks.size(); k++) {
                nx[q][k] = q == n || next[q][k] < 0 ? n : next[q][k];   // n: the dead state, completed
            }
            acc[q] = q == n || !accepting[q];
        }
        return minimize(blocks, nx, acc, "not " + source);
    }

    /** The product automaton: both accept ({@code and}) or either does. Same classes required. */
    private CharAutomaton product(CharAutomaton o, boolean and) {
        if (o.blocks != blocks) {
            throw new IllegalArgumentException("automata over different character classes");
        }
        int dead = -1;
        LongIntMap ids = new LongIntMap(64);
        List<long[]> pairs = new ArrayList<>();
        List<int[]> nx = new ArrayList<>();
        ids.put(0L, 0);
        pairs.add(new long[] {0, 0});
        for (int i = 0; i < pairs.size(); i++) {
            int a = (int) pairs.get(i)[0];
            int b = (int) pairs.get(i)[1];
            int[] row = new int[blocks.size()];
            for (int k = 0; k < blocks.size(); k++) {
                int ta = a < 0 ? -1 : next[a][k];
                int tb = b < 0 ? -1 : o.next[b][k];
                if (ta < 0 && tb < 0 || and && (ta < 0 || tb < 0)) {
                    row[k] = dead;
                    continue;
                }
                long key = ((long) ta << 32) | (tb & 0xffffffffL);
                int id = ids.get(key);
                if (id < 0) {
                    if (pairs.size() >= MAX_DFA_STATES) {
                        throw new GrammarException(source + " with " + o.source + ": over " + MAX_DFA_STATES
                                + " automaton states");
                    }
                    id = pairs.size();
                    ids.put(key, id);
                    pairs.add(new long[] {ta, tb});
                }
                row[k] = id;
            }
            nx.add(row);
        }
        boolean[] acc = new boolean[pairs.size()];
        for (int i = 0; i < acc.length; i++) {
            int a = (int) pairs.get(i)[0];
            int b = (int) pairs.get(i)[1];
            boolean x = a >= 0 && accepting[a];
            boolean y = b >= 0 && o.accepting[b];
            acc[i] = and ? x && y : x || y;
        }
        return minimize(blocks, nx.toArray(int[][]::new), acc, source);
    }

    /**
     * The strings of this automaton's language whose length in characters is in {@code [min, max]}
     * ({@code max} -1: no upper bound), each character encoded by {@code encode}, as rules of {@code b}. A
     * {@code max} too long to count within {@link #MAX_PRODUCT_STATES} is narrowed to the longest that fits
     * (at least {@link #MIN_COUNTED_LENGTH}): fewer strings, never one longer than {@code max}.
     *
     * @throws GrammarException when no string has such a length, or the product is too large
     */
    Expr withLength(Grammar.Builder b, int min, int max, Function<CharSet, Expr> encode, String where) {
        if (max >= 0 && (long) states() * (max + 1) > MAX_PRODUCT_STATES) {
            // a maxLength too long to count exactly (an email format with maxLength 1024): strings up to the
            // longest length that fits instead, a narrower language that never holds a string the schema refuses
            int fits = MAX_PRODUCT_STATES / states() - 1;
            if (fits >= Math.max(min, MIN_COUNTED_LENGTH)) {
                max = fits;
            }
        }
        int cap = max >= 0 ? max : min;   // past min without a max, the count stops mattering
        int width = cap + 1;
        long size = (long) states() * width;
        if (size > MAX_PRODUCT_STATES) {
            throw new GrammarException(source + " with lengths " + min + ".." + (max < 0 ? "" : max) + " (at " + where
                    + ") needs " + size + " automaton states, over the " + MAX_PRODUCT_STATES + " supported");
        }
        // product state p = q * width + n: DFA state q after n characters (n saturating at cap when max < 0)
        int n = (int) size;
        boolean[] acceptP = new boolean[n];
        List<List<Integer>> reverse = new ArrayList<>(n);
        for (int p = 0; p < n; p++) {
            reverse.add(new ArrayList<>(2));
        }
        for (int q = 0; q < states(); q++) {
            for (int c = 0; c <= cap; c++) {
                int p = q * width + c;
                acceptP[p] = accepting[q] && c >= min;
                int c2 = c < cap ? c + 1 : (max < 0 ? cap : -1);
                if (c2 < 0) {
                    continue;
                }
                for (int k = 0; k < blocks.size(); k++) {
                    if (next[q][k] >= 0) {
                        reverse.get(next[q][k] * width + c2).add(p);
                    }
                }
            }
        }
        BitSet live = new BitSet(n);   // product states from which an accepting one can be reached
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        for (int p = 0; p < n; p++) {
            if (acceptP[p]) {
                live.set(p);
                queue.add(p);
            }
        }
        while (!queue.isEmpty()) {
            for (int from : reverse.get(queue.poll())) {
                if (!live.get(from)) {
                    live.set(from);
                    queue.add(from);
                }
            }
        }
        if (!live.get(0)) {
            throw new GrammarException(source + " (at " + where + ") matches no string of " + min + ".."
                    + (max < 0 ? "" : max) + " characters");
        }
        Map<Integer, Integer> rules = new HashMap<>();
        // the same character sets recur at every count of a state: each is encoded once (and then shares its rule)
        Map<CharSet, Expr> encoded = new HashMap<>();
        ArrayDeque<Integer> todo = new ArrayDeque<>();
        int start = rules.computeIfAbsent(0, p -> b.rule("chars"));
        todo.add(0);
        while (!todo.isEmpty()) {
            int p = todo.poll();
            int q = p / width;
            int c = p % width;
            int c2 = c < cap ? c + 1 : (max < 0 ? cap : -1);
            Map<Integer, CharSet> byTarget = new java.util.TreeMap<>();
            for (int k = 0; c2 >= 0 && k < blocks.size(); k++) {
                int t = next[q][k];
                if (t >= 0 && live.get(t * width + c2)) {
                    byTarget.merge(t * width + c2, blocks.get(k), CharSet::union);
                }
            }
            List<Expr> options = new ArrayList<>();
            if (acceptP[p]) {
                options.add(Expr.EMPTY);
            }
            for (Map.Entry<Integer, CharSet> e : byTarget.entrySet()) {
                int target = e.getKey();
                Integer r = rules.get(target);
                if (r == null) {
                    r = b.rule("chars");
                    rules.put(target, r);
                    todo.add(target);
                }
                Expr chars = encoded.computeIfAbsent(e.getValue(), encode);
                if (chars != null) {
                    options.add(Expr.seq(chars, new Expr.Ref(r)));
                }
            }
            b.define(rules.get(p), Expr.alt(options));
        }
        return new Expr.Ref(start);
    }

    /** Thompson's construction over symbol ids, epsilon moves apart. */
    private static final class Nfa {
        final List<CharSet> symbols;
        final List<int[]> eps = new ArrayList<>();     // per state: epsilon targets
        final List<int[]> moves = new ArrayList<>();   // per state: {symbol, target} or empty
        final Map<Integer, Integer> atStart = new HashMap<>();   // ^: from -> to, only before any character
        final Map<Integer, Integer> atEnd = new HashMap<>();     // $: from -> to, then no more characters
        int accept;

        Nfa(List<CharSet> symbols) {
            this.symbols = symbols;
        }

        int state() {
            if (eps.size() >= MAX_NFA_STATES) {
                throw new GrammarException("regex too large: over " + MAX_NFA_STATES + " automaton states");
            }
            eps.add(new int[0]);
            moves.add(new int[0]);
            return eps.size() - 1;
        }

        void epsilon(int from, int to) {
            int[] e = eps.get(from);
            int[] n = Arrays.copyOf(e, e.length + 1);
            n[e.length] = to;
            eps.set(from, n);
        }

        Nfa build(Expr tree) {
            int s = state();
            accept = fragment(tree, s);
            return this;
        }

        /** Adds {@code e} starting at {@code from}; returns its end state. */
        int fragment(Expr e, int from) {
            switch (e) {
                case Expr.Ref r when r == START || r == END -> {
                    int to = state();
                    int mid = state();   // one assertion per state: a fresh one to hang it from
                    epsilon(from, mid);
                    (r == START ? atStart : atEnd).put(mid, to);
                    return to;
                }
                case Expr.Ref r -> {
                    int to = state();
                    moves.set(from, concat(moves.get(from), new int[] {-r.rule() - 1, to}));
                    return to;
                }
                case Expr.Seq s -> {
                    int at = from;
                    for (Expr item : s.items()) {
                        at = fragment(item, at);
                    }
                    return at;
                }
                case Expr.Alt a -> {
                    int end = state();
                    for (Expr o : a.options()) {
                        int start = state();
                        epsilon(from, start);
                        epsilon(fragment(o, start), end);
                    }
                    return end;
                }
                case Expr.Repeat r -> {
                    int at = from;
                    for (int i = 0; i < r.min(); i++) {
                        at = fragment(r.item(), at);
                    }
                    if (r.max() < 0) {   // a loop: at -> item -> back to at
                        int loop = state();
                        epsilon(at, loop);
                        int end = fragment(r.item(), loop);
                        epsilon(end, loop);
                        return loop;
                    }
                    int end = state();
                    epsilon(at, end);
                    for (int i = r.min(); i < r.max(); i++) {
                        at = fragment(r.item(), at);
                        epsilon(at, end);
                    }
                    return end;
                }
                case Expr.Bytes ignored -> throw new IllegalStateException("a byte class in a character automaton");
            }
        }

        private static int[] concat(int[] a, int[] b) {
            int[] n = Arrays.copyOf(a, a.length + b.length);
            System.arraycopy(b, 0, n, a.length, b.length);
            return n;
        }

        /**
         * The closure of product states {@code 4 q + flags} (flag 1: a character was read, flag 2: an
         * end assertion passed, so no character may follow) under epsilon moves and the assertions
         * that hold.
         */
        BitSet closure(BitSet set) {
            BitSet out = (BitSet) set.clone();
            ArrayDeque<Integer> stack = new ArrayDeque<>();
            set.stream().forEach(stack::push);
            while (!stack.isEmpty()) {
                int ps = stack.pop();
                int q = ps >> 2;
                int flags = ps & 3;
                List<Integer> targets = new ArrayList<>(4);
                for (int t : eps.get(q)) {
                    targets.add(4 * t + flags);
                }
                Integer s = atStart.get(q);
                if (s != null && (flags & 1) == 0) {
                    targets.add(4 * s + flags);
                }
                Integer e = atEnd.get(q);
                if (e != null) {
                    targets.add(4 * e + (flags | 2));
                }
                for (int t : targets) {
                    if (!out.get(t)) {
                        out.set(t);
                        stack.push(t);
                    }
                }
            }
            return out;
        }
    }

    private static CharAutomaton determinize(Nfa nfa, List<CharSet> symbols, List<CharSet> blocks, String source) {
        boolean[][] covers = new boolean[symbols.size()][blocks.size()];   // block k inside symbol s
        for (int s = 0; s < symbols.size(); s++) {
            for (int k = 0; k < blocks.size(); k++) {
                covers[s][k] = symbols.get(s).contains(blocks.get(k).ranges[0]);
            }
        }
        Map<BitSet, Integer> ids = new HashMap<>();
        List<BitSet> sets = new ArrayList<>();
        List<int[]> next = new ArrayList<>();
        BitSet start = new BitSet();
        start.set(0);   // product state 4 * 0 + no flags
        start = nfa.closure(start);
        ids.put(start, 0);
        sets.add(start);
        for (int d = 0; d < sets.size(); d++) {
            BitSet cur = sets.get(d);
            int[] row = new int[blocks.size()];
            for (int k = 0; k < blocks.size(); k++) {
                BitSet to = new BitSet();
                for (int ps = cur.nextSetBit(0); ps >= 0; ps = cur.nextSetBit(ps + 1)) {
                    if ((ps & 2) != 0) {
                        continue;   // past an end assertion: no character may follow
                    }
                    int[] m = nfa.moves.get(ps >> 2);
                    for (int j = 0; j < m.length; j += 2) {
                        if (covers[m[j]][k]) {
                            to.set(4 * m[j + 1] + (ps & 3 | 1));
                        }
                    }
                }
                if (to.isEmpty()) {
                    row[k] = -1;
                    continue;
                }
                BitSet closed = nfa.closure(to);
                Integer id = ids.get(closed);
                if (id == null) {
                    if (sets.size() >= MAX_DFA_STATES) {
                        throw new GrammarException(source + ": over " + MAX_DFA_STATES + " automaton states");
                    }
                    id = sets.size();
                    ids.put(closed, id);
                    sets.add(closed);
                }
                row[k] = id;
            }
            next.add(row);
        }
        boolean[] accepting = new boolean[sets.size()];
        for (int d = 0; d < sets.size(); d++) {
            BitSet set = sets.get(d);
            accepting[d] = set.get(4 * nfa.accept) || set.get(4 * nfa.accept + 1) || set.get(4 * nfa.accept + 2)
                    || set.get(4 * nfa.accept + 3);
        }
        return minimize(blocks, next.toArray(int[][]::new), accepting, source);
    }

    /**
     * Moore's partition refinement: states that accept the same continuations merged (the subset
     * construction of a Thompson NFA leaves many), so that the product with a length counter stays small.
     * State 0 stays the start.
     */
    static CharAutomaton minimize(List<CharSet> blocks, int[][] next, boolean[] accepting, String source) {
        int n = next.length;
        int[] cls = new int[n];
        for (int q = 0; q < n; q++) {
            cls[q] = accepting[q] ? 1 : 0;
        }
        int count = -1;
        while (true) {
            Map<List<Integer>, Integer> signatures = new HashMap<>();
            int[] refined = new int[n];
            for (int q = 0; q < n; q++) {
                List<Integer> sig = new ArrayList<>(next[q].length + 1);
                sig.add(cls[q]);
                for (int t : next[q]) {
                    sig.add(t < 0 ? -1 : cls[t]);
                }
                refined[q] = signatures.computeIfAbsent(sig, k -> signatures.size());
            }
            cls = refined;
            if (signatures.size() == count) {
                break;
            }
            count = signatures.size();
        }
        // renumber so that the start's class is 0, then one row per class
        int[] order = new int[count];
        Arrays.fill(order, -1);
        int[] firstOf = new int[count];
        int used = 0;
        order[cls[0]] = used++;
        firstOf[0] = 0;
        for (int q = 0; q < n; q++) {
            if (order[cls[q]] < 0) {
                firstOf[used] = q;
                order[cls[q]] = used++;
            }
        }
        int[][] mNext = new int[count][];
        boolean[] mAccept = new boolean[count];
        for (int c = 0; c < count; c++) {
            int q = firstOf[c];
            mAccept[c] = accepting[q];
            mNext[c] = new int[next[q].length];
            for (int k = 0; k < next[q].length; k++) {
                mNext[c][k] = next[q][k] < 0 ? -1 : order[cls[next[q][k]]];
            }
        }
        return new CharAutomaton(blocks, mNext, mAccept, source);
    }

    /** The coarsest partition of all characters into classes each symbol is a union of. */
    static List<CharSet> refine(List<CharSet> symbols) {
        List<CharSet> blocks = new ArrayList<>(List.of(CharSet.ALL));
        for (CharSet s : symbols) {
            List<CharSet> split = new ArrayList<>(blocks.size() + 1);
            CharSet outside = s.complement();
            for (CharSet b : blocks) {
                CharSet in = intersect(b, s);
                CharSet out = intersect(b, outside);
                if (!in.isEmpty()) {
                    split.add(in);
                }
                if (!out.isEmpty()) {
                    split.add(out);
                }
            }
            blocks = split;
        }
        return blocks;
    }

    static CharSet intersect(CharSet a, CharSet b) {
        return a.complement().union(b.complement()).complement();
    }
}
