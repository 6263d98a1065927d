package io.nereid.engine.structured;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Runs a {@link Grammar} as a pushdown automaton over bytes and turns it into token masks: the
 * matcher of llama.cpp's GBNF engine (a set of stacks, each a chain of return positions whose top
 * is a byte set) with every stack node and every set of stacks hash-consed, so that a parser state
 * is a small integer and its byte transitions are cached in a table. That makes the grammar a
 * deterministic automaton built lazily, only over the states outputs reach. A transition is
 * computed once per class of bytes that the same stacks take (inside a JSON string, one
 * expansion for some 200 bytes), and each node's expansion is kept, so a new state costs little.
 *
 * <p>A mask is one preorder scan of the {@link TokenTrie} that skips every subtree the grammar
 * rejects and takes whole every subtree whose bytes all lead back to the same state (inside a JSON
 * string, nearly the whole vocabulary at once). A state that most bytes take to one state looping
 * on most bytes (the opening quote of a JSON string and its body) starts instead from the tokens
 * spelled with those bytes alone, computed once per byte set for the vocabulary
 * ({@link TokenTrie#within}), and walks only where spellings leave the set. Masks are cached per state (within a memory
 * budget), so a state the output returns to costs nothing the second time. States inside counted
 * repetitions ({@code maxLength}, {@code {m,n}}, {@code maxItems}) would each cost a full scan,
 * since every item moves to a new state: their masks derive instead from the same position in the
 * repetition without its count, which agrees on every token shorter than the items left (see
 * {@link #canonicalPositions}); only longer tokens are scanned.
 *
 * <p>A rule reference in tail position does not push a return position (tail calls), so the
 * repetitions the compilers write as right recursion run in constant stack depth.
 *
 * <p>Threading: the tables grow as states are discovered, so every method is synchronized; one
 * automaton is shared by all sequences with the same constraint (on the engine thread, and by the
 * compile step that builds the first state).
 */
final class Automaton {

    /** No state: the bytes so far cannot be continued into anything the grammar accepts. */
    static final int DEAD = -1;
    private static final int UNKNOWN = -2;
    private static final int ROOT = 0;   // the node below every stack

    /** Bounds on what one constraint's automaton may hold; past them the request fails, not the engine. */
    static final int MAX_NODES = 8_000_000;
    static final int MAX_STATES = 2_000_000;
    static final long MASK_BUDGET_BYTES = 16L << 20;

    private final Grammar g;
    private final TokenTrie trie;
    private final int maskWords;

    // stack nodes: (position, parent node)
    private int[] nodePos = new int[1024];
    private int[] nodeParent = new int[1024];
    private int[] nodeMark = new int[1024];
    private int nodes = 1;
    private final LongIntMap nodeIds = new LongIntMap();

    // states: sorted ready nodes (each a stack whose top is a byte set) + whether the input may end
    private int[][] stateNodes = new int[256][];
    private boolean[] accepting = new boolean[256];
    private int[][] transitions = new int[256][];
    private long[][] masks = new long[256][];
    private long[][] loops = new long[256][];   // per state, learnt while masking: see subtreeLoops
    private int[] canonical = new int[256];   // per state: 1 + the state whose mask it shares (0: not yet known)
    private int states;
    private long maskBytes;
    private final Map<StateKey, Integer> stateIds = new HashMap<>();
    private final int initial;
    private final int[][] canonicalPosition;   // {position map, limit per position}; null without counted repetitions
    private int[] canonicalLimit = new int[256];   // per state: the input length up to which it agrees with its canonical state
    private int cutLimit;

    // per node, memo of its expansion (closureOf)
    static final long CLOSURE_BUDGET = 4_000_000;   // ints, over all nodes
    private int[][] closure = new int[1024][];
    private boolean[] closureAccepts = new boolean[1024];
    private int[] closureMark = new int[1024];
    private int[] after = new int[1024];   // per ready node: the node past its byte (0: not yet made)
    private int closureEpoch;
    private long closureInts;
    private boolean closureAccepting;
    private int[] reached = new int[256];

    // scratch for one transition
    private int epoch;
    private int[] work = new int[256];
    private int[] ready = new int[256];
    private int readyCount;
    private boolean readyAccepting;

    Automaton(Grammar grammar, TokenTrie trie) {
        this.g = grammar;
        this.trie = trie;
        this.maskWords = (trie.vocabSize + 63) >>> 6;
        this.canonicalPosition = canonicalPositions(trie.maxDepth);
        nodePos[ROOT] = -1;
        begin();
        for (int a : g.alternatives[g.root]) {
            expand(node(a, ROOT));
        }
        initial = finish();
        if (initial == DEAD) {
            throw new GrammarException("the constraint accepts nothing");
        }
    }

    synchronized int initial() {
        return initial;
    }

    synchronized int vocabSize() {
        return trie.vocabSize;
    }

    /** Whether the output may end in {@code state}. */
    synchronized boolean accepting(int state) {
        return accepting[state];
    }

    /** Whether the output must end in {@code state}: it accepts and no byte can follow. */
    synchronized boolean terminated(int state) {
        return accepting[state] && stateNodes[state].length == 0;
    }

    /** The bytes of token {@code id}, or null for a token the grammar never allows (special, empty). */
    byte[] tokenBytes(int id) {
        return id >= 0 && id < trie.tokenBytes.length ? trie.tokenBytes[id] : null;
    }

    /** The state after byte {@code b} (0..255) in {@code state}, or {@link #DEAD}. */
    synchronized int advance(int state, int b) {
        return step(state, b);
    }

    /** The state after {@code bytes}, or {@link #DEAD}. */
    synchronized int advance(int state, byte[] bytes) {
        int s = state;
        for (int i = 0; i < bytes.length && s != DEAD; i++) {
            s = step(s, bytes[i] & 0xFF);
        }
        return s;
    }

    /**
     * The tokens allowed in {@code state}: bit {@code id} of the returned words (read-only, shared)
     * is set for every ordinary token whose bytes the grammar can continue with. EOS is not in it
     * (see {@link #accepting}).
     */
    synchronized long[] mask(int state) {
        long[] m = masks[state];
        if (m != null) {
            return m;
        }
        int c = canonicalState(state);
        int limit = 0;   // tokens of at most this many bytes are known before the walk
        m = new long[maskWords + 1];   // the last word takes the bit set for nodes where no token ends
        if (c != state) {
            long[] same = mask(c);
            limit = canonicalLimit[state];
            if (limit >= trie.maxDepth) {
                if (masks[c] == same) {
                    masks[state] = same;   // shared: no more memory
                }
                return same;
            }
            long[] shorter = trie.tokensUpTo(limit);
            for (int w = 0; w < maskWords; w++) {
                m[w] = same[w] & shorter[w];
            }
        }
        // the state and its transition row (null until needed) at each depth of the current path
        int[] at = new int[trie.maxDepth + 1];
        int[][] rowAt = new int[trie.maxDepth + 1][];
        if (!shortcut(state, limit, at, rowAt, m)) {
            at[0] = state;
            rowAt[0] = row(state);
            walk(1, trie.nodes(), limit, at, rowAt, m);
        }
        m = Arrays.copyOf(m, maskWords);
        if (maskBytes + 8L * maskWords <= MASK_BUDGET_BYTES) {
            masks[state] = m;
            maskBytes += 8L * maskWords;
        }
        return m;
    }

    /** A state's first bytes and its loop bytes must both number this many for {@link #shortcut}. */
    static final int SHORTCUT_BYTES = 64;

    /**
     * The mask of {@code state} when most bytes take it to one state {@code next} that loops on
     * most bytes {@code L} (inside a JSON string): the tokens spelled with {@code L} alone
     * ({@link TokenTrie#within}, shared by every grammar) are allowed as far as their first byte
     * leads to {@code next}; first bytes in {@code L} that lead elsewhere have their tokens taken
     * out again and are walked; the rest is walked below the exits. False, having done nothing,
     * when the state is not like that.
     */
    private boolean shortcut(int state, int limit, int[] at, int[][] rowAt, long[] m) {
        int[] t = fullRow(state);
        int next = dominant(t);
        if (next == DEAD || count(t, next) < SHORTCUT_BYTES) {
            return false;
        }
        int[] nt = fullRow(next);
        long[] loop = new long[4];
        for (int b = 0; b < Expr.SPECIAL; b++) {
            if (nt[b] == next) {
                loop[b >>> 6] |= 1L << b;
            }
        }
        if (Long.bitCount(loop[0]) + Long.bitCount(loop[1]) + Long.bitCount(loop[2]) + Long.bitCount(loop[3]) < SHORTCUT_BYTES) {
            return false;
        }
        TokenTrie.Within w = trie.within(loop);
        long[] tokens = w.tokens();
        for (int i = 0; i < m.length; i++) {
            m[i] |= tokens[i];
        }
        int[] first = trie.firstNodes();
        at[0] = state;
        rowAt[0] = t;
        for (int b = 0; b < Expr.SPECIAL; b++) {
            int c = first[b];
            if (c != 0 && (loop[b >>> 6] >>> b & 1) != 0 && t[b] != next) {
                // a first byte in L that leads elsewhere: within's tokens below it do not hold here
                trie.clearWithin(c, loop, m);
                walk(c, trie.subtreeEnd[c], 0, at, rowAt, m);   // all of it: the clearing took short tokens too
            }
        }
        int[] exits = w.exits();
        byte[] exitFirst = w.exitFirst();
        for (int i = 0; i < exits.length; i++) {
            int x = exits[i];
            int d = trie.depth[x];
            if (trie.height[x] <= limit) {
                continue;
            }
            if (d == 1) {
                walk(x, trie.subtreeEnd[x], limit, at, rowAt, m);   // parent: the root, in state
            } else if (t[exitFirst[i] & 0xFF] == next) {
                at[d - 1] = next;   // its ancestors' bytes took state to next, which they loop on
                rowAt[d - 1] = nt;
                walk(x, trie.subtreeEnd[x], limit, at, rowAt, m);
            }   // else below a first byte that leads elsewhere: walked whole above
        }
        return true;
    }

    /** The transition row of {@code state} with every ordinary byte's next state computed. */
    private int[] fullRow(int state) {
        int[] t = row(state);
        for (int b = 0; b < Expr.SPECIAL; b++) {
            if (t[b] == UNKNOWN) {
                step(state, b);
            }
        }
        return t;
    }

    /** The state most ordinary bytes lead to in row {@code t} (all computed), or {@link #DEAD}. */
    private static int dominant(int[] t) {
        int best = DEAD, bestCount = 0;
        for (int b = 0; b < Expr.SPECIAL && Expr.SPECIAL - b > bestCount; b++) {
            int s = t[b];
            if (s != DEAD && s != best) {
                int c = count(t, s);
                if (c > bestCount) {
                    best = s;
                    bestCount = c;
                }
            }
        }
        return best;
    }

    /** How many ordinary bytes row {@code t} takes to {@code s}. */
    private static int count(int[] t, int s) {
        int c = 0;
        for (int b = 0; b < Expr.SPECIAL; b++) {
            c += t[b] == s ? 1 : 0;
        }
        return c;
    }

    /**
     * Adds to {@code m} the allowed tokens among trie nodes {@code [from, to)}, a preorder range
     * whose parents' states are in {@code at} by depth ({@code rowAt}: their rows, or null); skips
     * subtrees with no token longer than {@code limit} (known already).
     */
    private void walk(int from, int to, int limit, int[] at, int[][] rowAt, long[] m) {
        byte[] label = trie.label;
        short[] depth = trie.depth;
        short[] height = trie.height;
        int[] end = trie.subtreeEnd;
        int[] tokenAt = trie.tokenAt;
        int n = from;
        while (n < to) {
            if (height[n] <= limit) {
                n = end[n];   // no token below is longer than the limit: known already
                continue;
            }
            int d = depth[n];
            int parent = at[d - 1];
            int b = label[n] & 0xFF;
            int[] t = rowAt[d - 1];
            if (t == null) {
                t = rowAt[d - 1] = row(parent);   // made only for states that are parents: half the nodes are leaves
            }
            int s = t[b];
            if (s == UNKNOWN) {
                s = step(parent, b);
            }
            if (s == DEAD) {
                n = end[n];
                continue;
            }
            if (s == parent && subtreeLoops(parent, n)) {
                // every byte below leads back to the parent's state: the whole subtree is allowed
                trie.addSubtree(n, m);
                n = end[n];
                continue;
            }
            at[d] = s;
            rowAt[d] = transitions[s];
            int id = tokenAt[n];
            if (id >= 0) {
                m[id >>> 6] |= 1L << id;
            } else {
                trie.addTokensAt(n, m);
            }
            n++;
        }
    }

    /**
     * Where each program position goes when counted repetitions are cut loose: a position inside
     * {@code O_j} or {@code E_j} (at most / exactly {@code j} more of an item that consumes at
     * least a byte; {@link Grammar#counted}), {@code j >= 2}, goes to the same place in the item's
     * unbounded repetition (item* for O, item forever for E). The two agree on every input of at
     * most {@code j} bytes, so a state's mask is its cut state's for the tokens that short, and
     * only longer tokens need a walk; with {@code j} at least the longest token, they share the
     * mask outright. The unbounded repetition loops, so its own walk skips whole subtrees: inside
     * a string of at most 1,000 characters a mask costs what it costs in an unbounded one. Null
     * when the grammar has no counted repetition.
     */
    private int[][] canonicalPositions(int longest) {
        int[] map = null, limit = null;
        int[][] alts = g.alternatives;
        for (int[] chain : g.counted) {
            int loose = chain[0];
            for (int j = 2; j < chain.length; j++) {
                if (!sameShape(alts[chain[j]], alts[loose])) {
                    continue;
                }
                if (map == null) {
                    map = new int[g.program.length];
                    Arrays.setAll(map, i -> i);
                    limit = new int[g.program.length];
                    Arrays.fill(limit, Integer.MAX_VALUE);
                }
                int[] from = alts[chain[j]], to = alts[loose];
                for (int a = 0; a < from.length; a++) {
                    for (int o = 0; ; o++) {
                        map[from[a] + o] = to[a] + o;
                        limit[from[a] + o] = j >= longest ? Integer.MAX_VALUE : j;
                        if (g.program[from[a] + o] == Grammar.END) {
                            break;
                        }
                    }
                }
            }
        }
        return map == null ? null : new int[][] {map, limit};
    }

    private boolean sameShape(int[] a, int[] b) {
        if (a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            int x = a[i], y = b[i];
            while (g.program[x] != Grammar.END && g.program[y] != Grammar.END) {
                x++;
                y++;
            }
            if (x - a[i] != y - b[i] || g.program[x] != g.program[y]) {
                return false;
            }
        }
        return true;
    }

    /**
     * The state {@code state}'s mask derives from: itself, unless it sits in counted repetitions;
     * then the state with every position cut ({@link #canonicalPositions}), the two agreeing on all
     * inputs of at most {@code canonicalLimit[state]} bytes.
     */
    private int canonicalState(int state) {
        if (canonicalPosition == null) {
            return state;
        }
        int c = canonical[state];
        if (c != 0) {
            return c - 1;
        }
        int[] ns = stateNodes[state];
        int[] cut = new int[ns.length];
        boolean changed = false;
        cutLimit = Integer.MAX_VALUE;
        for (int i = 0; i < ns.length; i++) {
            cut[i] = canonicalNode(ns[i]);
            changed |= cut[i] != ns[i];
        }
        int result = state;
        int limit = cutLimit;
        if (changed) {
            Arrays.sort(cut);
            int n = 0;
            for (int i = 0; i < cut.length; i++) {
                if (i == 0 || cut[i] != cut[i - 1]) {
                    cut[n++] = cut[i];
                }
            }
            result = intern(Arrays.copyOf(cut, n), accepting[state]);
        }
        canonical[state] = result + 1;
        canonicalLimit[state] = limit;
        if (canonical[result] == 0) {
            canonical[result] = result + 1;
            canonicalLimit[result] = Integer.MAX_VALUE;
        }
        return result;
    }

    private int canonicalNode(int n) {
        int depth = 0;
        boolean changed = false;
        int[] map = canonicalPosition[0], limit = canonicalPosition[1];
        for (int x = n; x != ROOT; x = nodeParent[x]) {
            work = push(work, depth++, x);
            changed |= map[nodePos[x]] != nodePos[x];
        }
        if (!changed) {
            return n;
        }
        int c = ROOT;
        for (int i = depth - 1; i >= 0; i--) {
            int pos = nodePos[work[i]];
            cutLimit = Math.min(cutLimit, limit[pos]);
            c = node(map[pos], c);
        }
        return c;
    }

    /**
     * Whether every byte on the edges below trie node {@code n} leads from {@code state} back to
     * itself. What is learnt is kept per state (bytes known to loop, bytes known not to), so each
     * byte is tried at most once per state and a state without loops costs one try.
     */
    private boolean subtreeLoops(int state, int n) {
        long[] k = loops[state];
        if (k == null) {
            k = loops[state] = new long[8];   // words 0..3: bytes that loop; 4..7: bytes that do not
        }
        long[] sub = trie.subtreeBytes;
        for (int w = 0; w < 4; w++) {
            long unknown = sub[4 * n + w] & ~k[w];
            if ((unknown & k[4 + w]) != 0) {
                return false;
            }
            while (unknown != 0) {
                int b = 64 * w + Long.numberOfTrailingZeros(unknown);
                unknown &= unknown - 1;
                if (step(state, b) == state) {
                    k[w] |= 1L << b;
                } else {
                    k[4 + w] |= 1L << b;
                    return false;
                }
            }
        }
        return true;
    }

    /** The transition row of {@code state}, made if it has none. */
    private int[] row(int state) {
        int[] t = transitions[state];
        if (t == null) {
            t = new int[256];
            Arrays.fill(t, UNKNOWN);
            transitions[state] = t;
        }
        return t;
    }

    /**
     * The state after byte {@code b}, computed once per class of bytes: the bytes that exactly
     * the same stacks take lead to the same state, so one expansion fills the row for all of
     * them (inside a JSON string, some 200 bytes at once; the bytes no stack takes, all DEAD).
     */
    private int step(int state, int b) {
        int[] t = row(state);
        int next = t[b];
        if (next == UNKNOWN) {
            begin();
            long c0 = -1L, c1 = -1L, c2 = -1L, c3 = -1L;   // the bytes taken by exactly the stacks that take b
            for (int n : stateNodes[state]) {
                long[] set = g.sets[-g.program[nodePos[n]] - 2];
                if ((set[b >>> 6] >>> b & 1) != 0) {
                    c0 &= set[0];
                    c1 &= set[1];
                    c2 &= set[2];
                    c3 &= set[3];
                    int next1 = after[n];
                    if (next1 == 0) {
                        next1 = after[n] = node(nodePos[n] + 1, nodeParent[n]);   // never ROOT: 0 means not yet known
                    }
                    expand(next1);
                } else {
                    c0 &= ~set[0];
                    c1 &= ~set[1];
                    c2 &= ~set[2];
                    c3 &= ~set[3];
                }
            }
            next = finish();
            fill(t, 0, c0, next);
            fill(t, 64, c1, next);
            fill(t, 128, c2, next);
            fill(t, 192, c3, next);
        }
        return next;
    }

    private static void fill(int[] row, int base, long bytes, int state) {
        while (bytes != 0) {
            row[base + Long.numberOfTrailingZeros(bytes)] = state;
            bytes &= bytes - 1;
        }
    }

    private void begin() {
        epoch++;
        readyCount = 0;
        readyAccepting = false;
    }

    /** Adds the stacks {@code start} expands to (rule references entered, finished rules returned from). */
    private void expand(int start) {
        int[] c = closure[start];
        boolean accepts;
        if (c == null) {
            c = closureOf(start);
            accepts = closureAccepting;
        } else {
            accepts = closureAccepts[start];
        }
        readyAccepting |= accepts;
        for (int r : c) {
            if (nodeMark[r] != epoch) {
                nodeMark[r] = epoch;
                ready = push(ready, readyCount++, r);
            }
        }
    }

    /**
     * The ready stacks (top a byte set) that {@code start} expands to, and in {@link
     * #closureAccepting} whether the input may end there; kept per node within a budget, since
     * the same nodes are expanded again for every state and byte that reach them.
     */
    private int[] closureOf(int start) {
        int mark = ++closureEpoch;
        int top = 0, found = 0;
        boolean accepts = false;
        work = push(work, top++, start);
        while (top > 0) {
            int n = work[--top];
            if (closureMark[n] == mark) {
                continue;
            }
            closureMark[n] = mark;
            int pos = nodePos[n];
            int parent = nodeParent[n];
            int e = g.program[pos];
            if (e == Grammar.END) {
                if (parent == ROOT) {
                    accepts = true;
                } else {
                    work = push(work, top++, parent);
                }
            } else if (e >= 0) {
                int ret = g.program[pos + 1] == Grammar.END ? parent : node(pos + 1, parent);
                for (int a : g.alternatives[e]) {
                    work = push(work, top++, node(a, ret));
                }
            } else {
                reached = push(reached, found++, n);
            }
        }
        int[] c = Arrays.copyOf(reached, found);
        closureAccepting = accepts;
        if (closureInts + found + 4 <= CLOSURE_BUDGET) {
            closure[start] = c;
            closureAccepts[start] = accepts;
            closureInts += found + 4;
        }
        return c;
    }

    private static int[] push(int[] a, int i, int v) {
        if (i == a.length) {
            a = Arrays.copyOf(a, a.length * 2);
        }
        a[i] = v;
        return a;
    }

    private int finish() {
        if (readyCount == 0 && !readyAccepting) {
            return DEAD;
        }
        int[] key = Arrays.copyOf(ready, readyCount);
        Arrays.sort(key);
        return intern(key, readyAccepting);
    }

    /** The state of these ready stacks (sorted, distinct), made if new. */
    private int intern(int[] key, boolean readyAccepting) {
        StateKey k = new StateKey(key, readyAccepting);
        Integer id = stateIds.get(k);
        if (id != null) {
            return id;
        }
        if (states == MAX_STATES) {
            throw new GrammarException("the constraint needs more than " + MAX_STATES + " parser states");
        }
        if (states == stateNodes.length) {
            int c = states * 2;
            stateNodes = Arrays.copyOf(stateNodes, c);
            accepting = Arrays.copyOf(accepting, c);
            transitions = Arrays.copyOf(transitions, c);
            masks = Arrays.copyOf(masks, c);
            loops = Arrays.copyOf(loops, c);
            canonical = Arrays.copyOf(canonical, c);
            canonicalLimit = Arrays.copyOf(canonicalLimit, c);
        }
        stateNodes[states] = key;
        accepting[states] = readyAccepting;
        stateIds.put(k, states);
        return states++;
    }

    private int node(int pos, int parent) {
        long key = (long) pos << 32 | (parent & 0xFFFFFFFFL);
        int id = nodeIds.get(key);
        if (id >= 0) {
            return id;
        }
        if (nodes == MAX_NODES) {
            throw new GrammarException("the constraint needs more than " + MAX_NODES + " parser stack nodes");
        }
        if (nodes == nodePos.length) {
            int c = nodes * 2;
            nodePos = Arrays.copyOf(nodePos, c);
            nodeParent = Arrays.copyOf(nodeParent, c);
            nodeMark = Arrays.copyOf(nodeMark, c);
            closure = Arrays.copyOf(closure, c);
            closureAccepts = Arrays.copyOf(closureAccepts, c);
            closureMark = Arrays.copyOf(closureMark, c);
            after = Arrays.copyOf(after, c);
        }
        nodePos[nodes] = pos;
        nodeParent[nodes] = parent;
        nodeIds.put(key, nodes);
        return nodes++;
    }

    private record StateKey(int[] nodes, boolean accepting) {
        @Override
        public boolean equals(Object o) {
            return o instanceof StateKey k && accepting == k.accepting && Arrays.equals(nodes, k.nodes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(nodes) * 31 + (accepting ? 1 : 0);
        }
    }
}
