package io.nereid.engine.structured;

import io.nereid.engine.tokenizer.Tokenizer;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The byte strings of a vocabulary's ordinary tokens as a trie, laid out in preorder so that a
 * mask is one forward scan that skips every subtree whose prefix the grammar rejects: node
 * {@code n} is reached by byte {@link #label} from the nearest earlier node of depth
 * {@code depth - 1}, and its subtree ends before {@link #subtreeEnd}. A special (control) token
 * is spelled {@link Expr#SPECIAL}, its text, {@link Expr#SPECIAL}, so that only a grammar that names
 * it ({@link Expr#special}) allows it; ordinary tokens holding byte 0xFF (never UTF-8: the byte
 * fallback {@code <0xFF>}) are left out, so none can spell a special one; so are tokens without
 * bytes. The matcher treats EOS on its own.
 *
 * <p>Immutable and thread-safe; one per tokenizer ({@link #of}).
 */
final class TokenTrie {

    /** No tokens: for automata that only check byte strings. */
    static final TokenTrie EMPTY = new TokenTrie(0, new byte[1], new short[1], new int[] {1}, new int[2], new int[0], new byte[0][],
            Map.of());

    /** {@link #tokenAt} of a node where several tokens end (the same bytes under different ids). */
    static final int SEVERAL = -1;

    private static final Map<Tokenizer, TokenTrie> CACHE = Collections.synchronizedMap(new WeakHashMap<>());

    final int vocabSize;
    final byte[] label;       // per node; node 0 is the root
    final short[] depth;      // tokens are at most Short.MAX_VALUE bytes (longer ones are left out)
    final int[] subtreeEnd;
    final int[] tokenStart;   // tokens ending at node n: tokens[tokenStart[n] .. tokenStart[n + 1])
    final int[] tokens;
    /**
     * Per node: the one token ending there, {@link #SEVERAL}, or where none does {@link #noToken}, a
     * bit just past the mask's words, so that the walk sets a bit per node without a branch.
     */
    final int[] tokenAt;
    final int noToken;
    private final int[] firstNodes;
    final short[] height;     // per node: the length of the longest token in its subtree (0 for none)
    private final long[][] upTo;   // per length, made when first asked: the tokens of at most that many bytes
    final int maxDepth;
    final byte[][] tokenBytes;   // per id as the grammar spells it; null for tokens left out
    private final Map<String, Integer> specialIds;   // special tokens by text (the first id of a text)
    final long[] subtreeBytes;   // 4 words per node: every byte on the edges of its subtree, its own label included
    final long[][] subtreeMask;  // per node with at least BULK tokens below it: those tokens as a bitset; else null

    /** Subtrees this large get a bitset, so that allowing all of them is a few thousand ORs, not a loop per token. */
    static final int BULK = 2048;

    private TokenTrie(int vocabSize, byte[] label, short[] depth, int[] subtreeEnd, int[] tokenStart, int[] tokens,
            byte[][] tokenBytes, Map<String, Integer> specialIds) {
        this.tokenBytes = tokenBytes;
        this.specialIds = Map.copyOf(specialIds);
        this.subtreeBytes = new long[4 * label.length];
        // the subtree of n is n + 1 .. subtreeEnd[n] - 1 in preorder: fold each node into its parent, last first
        int[] parent = new int[label.length];
        int[] open = new int[maxDepthOf(depth) + 2];
        for (int n = 1; n < label.length; n++) {
            open[depth[n]] = n;
            parent[n] = depth[n] == 1 ? 0 : open[depth[n] - 1];
        }
        this.subtreeMask = new long[label.length][];
        int words = (vocabSize + 63) >>> 6;
        for (int n = 0; n < label.length; n++) {
            if (tokenStart[subtreeEnd[n]] - tokenStart[n] >= BULK) {
                long[] m = new long[words];
                for (int k = tokenStart[n]; k < tokenStart[subtreeEnd[n]]; k++) {
                    m[tokens[k] >>> 6] |= 1L << tokens[k];
                }
                subtreeMask[n] = m;
            }
        }
        this.height = new short[label.length];
        for (int n = label.length - 1; n >= 0; n--) {
            if (tokenStart[n + 1] > tokenStart[n]) {
                height[n] = (short) Math.max(height[n], depth[n]);
            }
            if (n > 0) {
                height[parent[n]] = (short) Math.max(height[parent[n]], height[n]);
            }
        }
        for (int n = label.length - 1; n >= 1; n--) {
            int b = label[n] & 0xFF;
            subtreeBytes[4 * n + (b >>> 6)] |= 1L << b;
            for (int w = 0; w < 4; w++) {
                subtreeBytes[4 * parent[n] + w] |= subtreeBytes[4 * n + w];
            }
        }
        this.vocabSize = vocabSize;
        this.label = label;
        this.depth = depth;
        this.subtreeEnd = subtreeEnd;
        this.tokenStart = tokenStart;
        this.tokens = tokens;
        this.maxDepth = maxDepthOf(depth);
        this.upTo = new long[maxDepth + 1][];
        this.firstNodes = new int[256];
        for (int n = 1; n < label.length; n = subtreeEnd[n]) {
            firstNodes[label[n] & 0xFF] = n;
        }
        this.tokenAt = new int[label.length];
        this.noToken = 64 * words;
        for (int n = 0; n < label.length; n++) {
            int k = tokenStart[n + 1] - tokenStart[n];
            tokenAt[n] = k == 0 ? noToken : k == 1 ? tokens[tokenStart[n]] : SEVERAL;
        }
    }

    private static int maxDepthOf(short[] depth) {
        int max = 0;
        for (short d : depth) {
            max = Math.max(max, d);
        }
        return max;
    }

    /** The tokens of at most {@code length} bytes (bitset over ids; shared, read-only). */
    synchronized long[] tokensUpTo(int length) {
        long[] m = upTo[length];
        if (m == null) {
            m = new long[(vocabSize + 63) >>> 6];
            for (int id = 0; id < tokenBytes.length; id++) {
                if (tokenBytes[id] != null && tokenBytes[id].length <= length) {
                    m[id >>> 6] |= 1L << id;
                }
            }
            upTo[length] = m;
        }
        return m;
    }

    /**
     * The tokens spelled with bytes of one set only, and the nodes where a spelling first leaves
     * the set (each such node's label outside it, its ancestors' labels inside).
     *
     * @param tokens    bitset over ids, with {@link #noToken}'s word: OR it into a walk's mask as it is
     * @param exits     in preorder
     * @param exitFirst per exit: the label of its depth-1 ancestor (itself at depth 1)
     */
    record Within(long[] tokens, int[] exits, byte[] exitFirst) {
    }

    /** {@link #within} by byte set (4 words), most recently used last; bounded. */
    private final Map<List<Long>, Within> withinCache = new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<List<Long>, Within> eldest) {
            return size() > 32;
        }
    };

    /**
     * {@link Within} for the byte set {@code set} (4 words), made once per set by one scan of the
     * nodes whose spelling stays in it. A state that most bytes take to one looping state (the
     * opening quote of a JSON string, then its body: every byte but the quote, the backslash and
     * control bytes) gets most of its mask from this, whatever grammar the states come from.
     */
    Within within(long[] set) {
        List<Long> key = List.of(set[0], set[1], set[2], set[3]);
        synchronized (withinCache) {
            Within w = withinCache.get(key);
            if (w != null) {
                return w;
            }
        }
        long[] in = new long[(vocabSize + 63) / 64 + 1];
        int[] exits = new int[256];
        byte[] first = new byte[256];
        int k = 0;
        byte top = 0;
        for (int n = 1; n < label.length; ) {
            int b = label[n] & 0xFF;
            if (depth[n] == 1) {
                top = label[n];
            }
            if ((set[b >>> 6] >>> b & 1) != 0) {
                int id = tokenAt[n];
                if (id >= 0) {
                    in[id >>> 6] |= 1L << id;
                } else {
                    addTokensAt(n, in);
                }
                n++;
            } else {
                if (k == exits.length) {
                    exits = Arrays.copyOf(exits, 2 * k);
                    first = Arrays.copyOf(first, 2 * k);
                }
                first[k] = top;
                exits[k++] = n;
                n = subtreeEnd[n];
            }
        }
        Within w = new Within(in, Arrays.copyOf(exits, k), Arrays.copyOf(first, k));
        synchronized (withinCache) {
            withinCache.put(key, w);
        }
        return w;
    }

    /** Clears in {@code mask} the tokens below node {@code n} (itself included) spelled with bytes of {@code set} only, from {@code n} down. */
    void clearWithin(int n, long[] set, long[] mask) {
        for (int x = n, end = subtreeEnd[n]; x < end; ) {
            int b = label[x] & 0xFF;
            if ((set[b >>> 6] >>> b & 1) != 0) {
                for (int k = tokenStart[x]; k < tokenStart[x + 1]; k++) {
                    int id = tokens[k];
                    mask[id >>> 6] &= ~(1L << id);
                }
                x++;
            } else {
                x = subtreeEnd[x];
            }
        }
    }

    /** The depth-1 nodes (the first bytes of tokens), by byte; 0 for a byte no token starts with. */
    int[] firstNodes() {
        return firstNodes;
    }

    /** Sets in {@code mask} the bit of every token in node {@code n}'s subtree, itself included. */
    void addSubtree(int n, long[] mask) {
        long[] all = subtreeMask[n];
        if (all != null) {
            for (int w = 0; w < all.length; w++) {
                mask[w] |= all[w];
            }
        } else {
            for (int k = tokenStart[n]; k < tokenStart[subtreeEnd[n]]; k++) {
                int id = tokens[k];
                mask[id >>> 6] |= 1L << id;
            }
        }
    }

    /** Sets in {@code mask} the bits of the tokens that end at node {@code n}. */
    void addTokensAt(int n, long[] mask) {
        for (int k = tokenStart[n]; k < tokenStart[n + 1]; k++) {
            int id = tokens[k];
            mask[id >>> 6] |= 1L << id;
        }
    }

    int nodes() {
        return label.length;
    }

    /** The vocabulary's special tokens: id by text (the first id of a text). */
    Map<String, Integer> specialIds() {
        return specialIds;
    }

    /** The trie of {@code tokenizer}'s vocabulary, built once per tokenizer. */
    static TokenTrie of(Tokenizer tokenizer) {
        return CACHE.computeIfAbsent(tokenizer, TokenTrie::build);
    }

    static TokenTrie build(Tokenizer tokenizer) {
        int v = tokenizer.vocabSize();
        byte[][] bytes = new byte[v][];
        Integer[] order = new Integer[v];
        Map<String, Integer> specials = new java.util.HashMap<>();
        int n = 0;
        for (int id = 0; id < v; id++) {
            byte[] b = tokenizer.tokenBytes(id);
            if (b.length == 0 || b.length > Short.MAX_VALUE - 2) {
                continue;
            }
            if (tokenizer.isSpecial(id)) {
                specials.putIfAbsent(new String(b, java.nio.charset.StandardCharsets.UTF_8), id);
                byte[] marked = new byte[b.length + 2];
                marked[0] = marked[b.length + 1] = (byte) Expr.SPECIAL;
                System.arraycopy(b, 0, marked, 1, b.length);
                b = marked;
            } else if (contains(b, (byte) Expr.SPECIAL)) {
                continue;
            }
            bytes[id] = b;
            order[n++] = id;
        }
        Integer[] ids = Arrays.copyOf(order, n);
        Arrays.sort(ids, (a, b) -> Arrays.compareUnsigned(bytes[a], bytes[b]));
        // preorder nodes: walking the sorted strings, each new node is a string's byte past the
        // prefix it shares with the string before it
        int capacity = 1;
        for (Integer id : ids) {
            capacity += bytes[id].length;
        }
        byte[] label = new byte[capacity];
        short[] depth = new short[capacity];
        int[] tokenOf = new int[capacity];   // per node: how many tokens end there
        int[] tokenNode = new int[n];
        int[] path = new int[Arrays.stream(ids).mapToInt(id -> bytes[id].length).max().orElse(0) + 1];
        int nodes = 1;
        byte[] previous = new byte[0];
        for (int k = 0; k < n; k++) {
            byte[] b = bytes[ids[k]];
            int common = Arrays.mismatch(previous, b);
            if (common < 0) {
                common = b.length;   // the same bytes as the token before
            }
            for (int d = common; d < b.length; d++) {
                label[nodes] = b[d];
                depth[nodes] = (short) (d + 1);
                path[d + 1] = nodes++;
            }
            int end = path[b.length];
            tokenOf[end]++;
            tokenNode[k] = end;
            previous = b;
        }
        label = Arrays.copyOf(label, nodes);
        depth = Arrays.copyOf(depth, nodes);
        int[] subtreeEnd = new int[nodes];
        int[] open = new int[path.length + 1];
        int top = 0;
        for (int i = 0; i < nodes; i++) {
            while (top > 0 && depth[open[top - 1]] >= depth[i]) {
                subtreeEnd[open[--top]] = i;
            }
            open[top++] = i;
        }
        while (top > 0) {
            subtreeEnd[open[--top]] = nodes;
        }
        int[] tokenStart = new int[nodes + 1];
        for (int i = 0; i < nodes; i++) {
            tokenStart[i + 1] = tokenStart[i] + tokenOf[i];
        }
        int[] fill = Arrays.copyOf(tokenStart, nodes);
        int[] tokens = new int[n];
        for (int k = 0; k < n; k++) {
            tokens[fill[tokenNode[k]]++] = ids[k];
        }
        return new TokenTrie(v, label, depth, subtreeEnd, tokenStart, tokens, bytes, specials);
    }

    private static boolean contains(byte[] b, byte x) {
        for (byte y : b) {
            if (y == x) {
                return true;
            }
        }
        return false;
    }
}
