package io.nereid.engine.model;

import io.nereid.engine.cpu.tensor.Quantizer;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufArray;
import io.nereid.engine.gguf.GgufWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Writes a GGUF model with seeded random weights of any supported architecture, size and weight
 * type, so that tests, benchmarks and the demo server need no download. The tokenizer is a small
 * SentencePiece vocabulary: {@code <unk> <s> </s>}, the 256 byte-fallback tokens, then
 * {@code ▁} and single letters and filler pieces up to {@code vocabSize}. Weights are N(0, 0.02)
 * (norms 1), which keeps activations in a realistic range. Stateless.
 */
public final class RandomModelWriter {

    /**
     * The shape of a model to generate.
     *
     * @param type        type of the 2-D weight matrices (norms and biases stay F32)
     * @param tiedOutput  no {@code output.weight}: the output projection reuses {@code token_embd}
     */
    public record Spec(Architecture architecture, int dim, int layers, int heads, int kvHeads, int ffnDim, int vocabSize,
            int contextLength, GgmlType type, boolean tiedOutput, long seed) {

        public Spec {
            if (vocabSize < 300) {
                throw new IllegalArgumentException("vocabSize must be at least 300 (specials, 256 bytes, letters)");
            }
            if (dim % heads != 0) {
                throw new IllegalArgumentException("dim " + dim + " is not a multiple of heads " + heads);
            }
        }

        public int headDim() {
            return dim / heads;
        }
    }

    private RandomModelWriter() {
    }

    public static void write(Spec s, Path path) throws IOException {
        SplittableRandom random = new SplittableRandom(s.seed());
        String a = s.architecture().ggufName();
        GgufWriter w = new GgufWriter()
                .putString("general.architecture", a)
                .putString("general.name", "nereid-random-" + a)
                .putUInt32(a + ".context_length", s.contextLength())
                .putUInt32(a + ".embedding_length", s.dim())
                .putUInt32(a + ".block_count", s.layers())
                .putUInt32(a + ".feed_forward_length", s.ffnDim())
                .putUInt32(a + ".attention.head_count", s.heads())
                .putUInt32(a + ".attention.head_count_kv", s.kvHeads())
                .putFloat32(a + ".attention.layer_norm_rms_epsilon", 1e-5f)
                .putFloat32(a + ".rope.freq_base", 10000f);
        vocabulary(w, s.vocabSize());
        int headDim = s.headDim();
        int qDim = s.heads() * headDim;
        int kvDim = s.kvHeads() * headDim;
        matrix(w, "token_embd.weight", s.vocabSize(), s.dim(), s.type(), random);
        for (int l = 0; l < s.layers(); l++) {
            String p = "blk." + l + ".";
            ones(w, p + "attn_norm.weight", s.dim());
            matrix(w, p + "attn_q.weight", qDim, s.dim(), s.type(), random);
            matrix(w, p + "attn_k.weight", kvDim, s.dim(), s.type(), random);
            matrix(w, p + "attn_v.weight", kvDim, s.dim(), s.type(), random);
            matrix(w, p + "attn_output.weight", s.dim(), qDim, s.type(), random);
            if (s.architecture().qkvBias()) {
                vector(w, p + "attn_q.bias", qDim, random);
                vector(w, p + "attn_k.bias", kvDim, random);
                vector(w, p + "attn_v.bias", kvDim, random);
            }
            if (s.architecture().qkNorm()) {
                ones(w, p + "attn_q_norm.weight", headDim);
                ones(w, p + "attn_k_norm.weight", headDim);
            }
            ones(w, p + "ffn_norm.weight", s.dim());
            matrix(w, p + "ffn_gate.weight", s.ffnDim(), s.dim(), s.type(), random);
            matrix(w, p + "ffn_up.weight", s.ffnDim(), s.dim(), s.type(), random);
            matrix(w, p + "ffn_down.weight", s.dim(), s.ffnDim(), s.type(), random);
        }
        ones(w, "output_norm.weight", s.dim());
        if (!s.tiedOutput()) {
            matrix(w, "output.weight", s.vocabSize(), s.dim(), s.type(), random);
        }
        w.write(path);
    }

    private static void vocabulary(GgufWriter w, int size) {
        List<String> tokens = new ArrayList<>(size);
        List<Integer> types = new ArrayList<>(size);
        tokens.addAll(List.of("<unk>", "<s>", "</s>"));
        types.addAll(List.of(2, 3, 3));
        for (int b = 0; b < 256; b++) {
            tokens.add(String.format("<0x%02X>", b));
            types.add(6);
        }
        tokens.add("▁");
        types.add(1);
        for (char c = 'a'; c <= 'z' && tokens.size() < size; c++) {
            tokens.add(String.valueOf(c));
            types.add(1);
            if (tokens.size() < size) {
                tokens.add("▁" + c);
                types.add(1);
            }
        }
        for (int i = 0; tokens.size() < size; i++) {
            tokens.add("▁tok" + i);
            types.add(1);
        }
        float[] scores = new float[size];
        int[] typeCodes = new int[size];
        for (int i = 0; i < size; i++) {
            scores[i] = -i;
            typeCodes[i] = types.get(i);
        }
        w.putString("tokenizer.ggml.model", "llama")
                .putString("tokenizer.ggml.pre", "default")
                .putStringArray("tokenizer.ggml.tokens", tokens)
                .putArray("tokenizer.ggml.scores", GgufArray.ofFloat32(scores))
                .putArray("tokenizer.ggml.token_type", GgufArray.ofInt32(typeCodes))
                .putUInt32("tokenizer.ggml.bos_token_id", 1)
                .putUInt32("tokenizer.ggml.eos_token_id", 2)
                .putUInt32("tokenizer.ggml.unknown_token_id", 0);
    }

    private static void matrix(GgufWriter w, String name, int rows, int cols, GgmlType type, SplittableRandom random) {
        float[] data = new float[Math.multiplyExact(rows, cols)];
        for (int i = 0; i < data.length; i++) {
            data[i] = (float) (random.nextGaussian() * 0.02);
        }
        long[] dims = {cols, rows};
        if (type == GgmlType.F32) {
            w.addTensor(name, dims, data);
        } else {
            w.addTensor(name, type, dims, Quantizer.quantize(type, data));
        }
    }

    private static void vector(GgufWriter w, String name, int n, SplittableRandom random) {
        float[] data = new float[n];
        for (int i = 0; i < n; i++) {
            data[i] = (float) (random.nextGaussian() * 0.02);
        }
        w.addTensor(name, new long[] {n}, data);
    }

    private static void ones(GgufWriter w, String name, int n) {
        float[] data = new float[n];
        java.util.Arrays.fill(data, 1f);
        w.addTensor(name, new long[] {n}, data);
    }
}
