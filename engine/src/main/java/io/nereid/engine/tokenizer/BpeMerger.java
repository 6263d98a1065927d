package io.nereid.engine.tokenizer;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Byte-pair merging of one pre-tokenized word into token ids: start from one symbol per
 * character and repeatedly merge the adjacent pair with the lowest merge rank, leftmost first
 * on ties — llama.cpp's {@code llm_tokenizer_bpe_session} and HF's {@code Word::merge_all}
 * agree on this order.
 *
 * <p>Symbols are token ids, and a merge is looked up by the pair of ids, so the inner loop does
 * no string work. A merge whose result is not in the vocabulary is dropped at load time (HF
 * rejects such files; llama.cpp would fall back to bytes). Results are memoized per word in a
 * bounded concurrent cache. Immutable apart from the cache; thread-safe.
 */
final class BpeMerger {

    private static final int CACHE_LIMIT = 200_000;

    private final Map<String, Integer> vocab;
    private final Map<Long, Long> merges;   // (leftId << 32 | rightId) -> (rank << 32 | mergedId)
    private final boolean ignoreMerges;
    private final int unknownId;            // for characters outside the vocabulary; -1 drops them
    private final int[] byteFallback;       // (256) ids of <0xXX> when byte_fallback is on, else null
    private final ConcurrentHashMap<String, int[]> cache = new ConcurrentHashMap<>();

    /**
     * @param mergeList   merges in rank order, each as its two parts
     * @param ignoreMerges emit a word that is itself a token directly (HF {@code ignore_merges},
     *                     llama.cpp for Llama 3)
     * @param byteFallback write a character outside the vocabulary as its UTF-8 bytes through the
     *                     {@code <0xXX>} tokens (SentencePiece-style BPE); otherwise it becomes
     *                     {@code unknownId}, or nothing when that is -1
     */
    BpeMerger(Map<String, Integer> vocab, List<String[]> mergeList, boolean ignoreMerges, boolean byteFallback,
            int unknownId) {
        this.vocab = vocab;
        this.ignoreMerges = ignoreMerges;
        this.unknownId = unknownId;
        if (byteFallback) {
            this.byteFallback = new int[256];
            for (int b = 0; b < 256; b++) {
                Integer id = vocab.get(String.format("<0x%02X>", b));
                this.byteFallback[b] = id == null ? unknownId : id;
            }
        } else {
            this.byteFallback = null;
        }
        this.merges = new HashMap<>(mergeList.size() * 2);
        for (int rank = 0; rank < mergeList.size(); rank++) {
            String[] pair = mergeList.get(rank);
            Integer left = vocab.get(pair[0]);
            Integer right = vocab.get(pair[1]);
            Integer merged = vocab.get(pair[0] + pair[1]);
            if (left == null || right == null || merged == null) {
                continue;
            }
            merges.putIfAbsent(key(left, right), ((long) rank << 32) | merged);
        }
    }

    private static long key(int left, int right) {
        return ((long) left << 32) | (right & 0xffffffffL);
    }

    /** Empties the word cache (benchmarks, to measure uncached merging). */
    void clearCache() {
        cache.clear();
    }

    /**
     * Appends the ids of one pre-tokenized piece. With {@code byteLevel} the piece is first mapped
     * to GPT-2's byte alphabet; the cache is keyed by the piece as given, so a hit skips that too.
     * A merger is always used with the same {@code byteLevel} setting (one per tokenizer).
     */
    void encode(String piece, boolean byteLevel, IntList out) {
        int[] ids = cache.get(piece);
        if (ids == null) {
            ids = merge(byteLevel ? ByteLevel.encode(piece) : piece);
            if (cache.size() < CACHE_LIMIT) {
                cache.put(piece, ids);
            }
        }
        out.addAll(ids);
    }

    private int[] merge(String word) {
        if (ignoreMerges) {
            Integer whole = vocab.get(word);
            if (whole != null) {
                return new int[] {whole};
            }
        }
        int n = word.codePointCount(0, word.length());
        if (n == 0) {
            return new int[0];
        }
        int[] ids = new int[n];
        int[] next = new int[n];
        int[] prev = new int[n];
        int i = 0;
        for (int off = 0; off < word.length(); i++) {
            int cp = word.codePointAt(off);
            int len = Character.charCount(cp);
            Integer id = vocab.get(word.substring(off, off + len));
            ids[i] = id == null ? -1 : id;
            prev[i] = i - 1;
            next[i] = i + 1 < n ? i + 1 : -1;
            off += len;
        }
        LongHeap heap = new LongHeap(n);
        for (int k = 0; k + 1 < n; k++) {
            push(heap, ids, k, k + 1);
        }
        while (!heap.isEmpty()) {
            long top = heap.pop();
            int rank = (int) (top >>> 32);
            int left = (int) top;
            int right = next[left];
            if (ids[left] < 0 || right < 0) {
                continue;
            }
            Long m = merges.get(key(ids[left], ids[right]));
            if (m == null || (int) (m >>> 32) != rank) {
                continue; // stale: one side has changed since this pair was queued
            }
            ids[left] = (int) (long) m;
            ids[right] = -2; // merged away
            next[left] = next[right];
            if (next[right] >= 0) {
                prev[next[right]] = left;
            }
            if (prev[left] >= 0) {
                push(heap, ids, prev[left], left);
            }
            if (next[left] >= 0) {
                push(heap, ids, left, next[left]);
            }
        }
        IntList out = new IntList(n);
        for (int k = 0; k >= 0; k = next[k]) {
            if (ids[k] >= 0) {
                out.add(ids[k]);
            } else if (ids[k] == -1) {
                unknown(word, k, out);
            }
        }
        return out.toArray();
    }

    /** An unmerged character that is not in the vocabulary: its bytes, the unknown id, or nothing. */
    private void unknown(String word, int symbol, IntList out) {
        int off = word.offsetByCodePoints(0, symbol);
        String ch = word.substring(off, off + Character.charCount(word.codePointAt(off)));
        if (byteFallback != null) {
            for (byte b : ch.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
                if (byteFallback[b & 0xff] >= 0) {
                    out.add(byteFallback[b & 0xff]);
                }
            }
        } else if (unknownId >= 0) {
            out.add(unknownId);
        }
    }

    private void push(LongHeap heap, int[] ids, int left, int right) {
        if (ids[left] < 0 || ids[right] < 0) {
            return;
        }
        Long m = merges.get(key(ids[left], ids[right]));
        if (m != null) {
            heap.push((m & 0xffffffff00000000L) | left);
        }
    }

    /** A binary min-heap of longs; ordering by (rank, left index) is the merge priority. */
    private static final class LongHeap {
        private long[] a;
        private int size;

        LongHeap(int capacity) {
            a = new long[Math.max(4, capacity)];
        }

        boolean isEmpty() {
            return size == 0;
        }

        void push(long v) {
            if (size == a.length) {
                a = java.util.Arrays.copyOf(a, size * 2);
            }
            int i = size++;
            while (i > 0) {
                int parent = (i - 1) >>> 1;
                if (a[parent] <= v) {
                    break;
                }
                a[i] = a[parent];
                i = parent;
            }
            a[i] = v;
        }

        long pop() {
            long top = a[0];
            long last = a[--size];
            int i = 0;
            while (true) {
                int child = 2 * i + 1;
                if (child >= size) {
                    break;
                }
                if (child + 1 < size && a[child + 1] < a[child]) {
                    child++;
                }
                if (a[child] >= last) {
                    break;
                }
                a[i] = a[child];
                i = child;
            }
            a[i] = last;
            return top;
        }
    }
}
