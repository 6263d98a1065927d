package io.nereid.engine.structured;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Runs a {@link Grammar} as a pushdown automaton over bytes and turns it into token masks: the
 * matcher of llama.cpp's GBNF engine (a set of stacks, each a chain of return positions whose top
 * is a byte set) with every stack node and every set of stacks hash-consed, so that a parser state
 * is a small integer and its byte transitions are cached in a table. That makes the grammar a
 * deterministic automaton built lazily, only over the states outputs reach: inside a JSON string
 * every ordinary byte leads back to the same state, and a mask over the {@link TokenTrie} costs a
 * table lookup per trie node it visits. Masks are cached per state too (within a memory budget),
 * so a state the output returns to costs nothing the second time.
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
    private static final int BIG_SUBTREE = 512;   // tokens below a trie node that make its state's self-loops worth computing
    private static final long[] NO_LOOPS = new long[4];

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
    private long[][] loops = new long[256][];
    private int states;
    private long maskBytes;
    private final Map<StateKey, Integer> stateIds = new HashMap<>();
    private final int initial;

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
        m = new long[maskWords];
        int[] at = new int[trie.maxDepth + 1];
        at[0] = state;
        byte[] label = trie.label;
        int[] depth = trie.depth;
        int[] end = trie.subtreeEnd;
        int[] start = trie.tokenStart;
        int[] tokens = trie.tokens;
        long[] sub = trie.subtreeBytes;
        selfLoops(state);
        long[] loop;
        int n = 1;
        int count = trie.nodes();
        while (n < count) {
            int d = depth[n];
            int parent = at[d - 1];
            if (parent != state && loops[parent] == null && start[end[n]] - start[n] >= BIG_SUBTREE) {
                loop = selfLoops(parent);   // worth 256 transitions: it may let this whole subtree be skipped
            } else {
                loop = loops[parent] != null ? loops[parent] : NO_LOOPS;
            }
            if ((sub[4 * n] & ~loop[0]) == 0 && (sub[4 * n + 1] & ~loop[1]) == 0
                    && (sub[4 * n + 2] & ~loop[2]) == 0 && (sub[4 * n + 3] & ~loop[3]) == 0) {
                // every byte below leads back to the parent's state: the whole subtree is allowed
                long[] all = trie.subtreeMask[n];
                if (all != null) {
                    for (int w = 0; w < all.length; w++) {
                        m[w] |= all[w];
                    }
                } else {
                    for (int k = start[n]; k < start[end[n]]; k++) {
                        int id = tokens[k];
                        m[id >>> 6] |= 1L << id;
                    }
                }
                n = end[n];
                continue;
            }
            int[] t = transitions[parent];
            int s = t == null ? UNKNOWN : t[label[n] & 0xFF];
            if (s == UNKNOWN) {
                s = step(parent, label[n] & 0xFF);
            }
            if (s == DEAD) {
                n = end[n];
                continue;
            }
            at[d] = s;
            for (int k = start[n]; k < start[n + 1]; k++) {
                int id = tokens[k];
                m[id >>> 6] |= 1L << id;
            }
            n++;
        }
        if (maskBytes + 8L * maskWords <= MASK_BUDGET_BYTES) {
            masks[state] = m;
            maskBytes += 8L * maskWords;
        }
        return m;
    }

    /** The bytes that lead from {@code state} back to itself (4 words), computed once per state. */
    private long[] selfLoops(int state) {
        long[] loop = loops[state];
        if (loop == null) {
            loop = new long[4];
            for (int b = 0; b < 256; b++) {
                if (step(state, b) == state) {
                    loop[b >>> 6] |= 1L << b;
                }
            }
            loops[state] = loop;
        }
        return loop;
    }

    private int step(int state, int b) {
        int[] t = transitions[state];
        if (t == null) {
            t = new int[256];
            Arrays.fill(t, UNKNOWN);
            transitions[state] = t;
        }
        int next = t[b];
        if (next == UNKNOWN) {
            begin();
            for (int n : stateNodes[state]) {
                if (g.allows(nodePos[n], b)) {
                    expand(node(nodePos[n] + 1, nodeParent[n]));
                }
            }
            next = finish();
            t[b] = next;
        }
        return next;
    }

    private void begin() {
        epoch++;
        readyCount = 0;
        readyAccepting = false;
    }

    /** Adds the stacks {@code start} expands to (rule references entered, finished rules returned from). */
    private void expand(int start) {
        int top = 0;
        work = push(work, top++, start);
        while (top > 0) {
            int n = work[--top];
            if (nodeMark[n] == epoch) {
                continue;
            }
            nodeMark[n] = epoch;
            int pos = nodePos[n];
            int parent = nodeParent[n];
            int e = g.program[pos];
            if (e == Grammar.END) {
                if (parent == ROOT) {
                    readyAccepting = true;
                } else {
                    work = push(work, top++, parent);
                }
            } else if (e >= 0) {
                int ret = g.program[pos + 1] == Grammar.END ? parent : node(pos + 1, parent);
                for (int a : g.alternatives[e]) {
                    work = push(work, top++, node(a, ret));
                }
            } else {
                ready = push(ready, readyCount++, n);
            }
        }
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

    /** Open addressing, long keys to non-negative ints; -1 for absent. */
    private static final class LongIntMap {
        private long[] keys = new long[1024];
        private int[] values = new int[1024];
        private boolean[] used = new boolean[1024];
        private int size;

        int get(long key) {
            int mask = keys.length - 1;
            for (int i = hash(key) & mask; used[i]; i = (i + 1) & mask) {
                if (keys[i] == key) {
                    return values[i];
                }
            }
            return -1;
        }

        void put(long key, int value) {
            if (2 * (size + 1) > keys.length) {
                grow();
            }
            int mask = keys.length - 1;
            int i = hash(key) & mask;
            while (used[i] && keys[i] != key) {
                i = (i + 1) & mask;
            }
            if (!used[i]) {
                size++;
            }
            used[i] = true;
            keys[i] = key;
            values[i] = value;
        }

        private void grow() {
            long[] k = keys;
            int[] v = values;
            boolean[] u = used;
            keys = new long[k.length * 2];
            values = new int[k.length * 2];
            used = new boolean[k.length * 2];
            size = 0;
            for (int i = 0; i < k.length; i++) {
                if (u[i]) {
                    put(k[i], v[i]);
                }
            }
        }

        private static int hash(long key) {
            long h = key * 0x9E3779B97F4A7C15L;
            return (int) (h ^ (h >>> 32));
        }
    }
}
