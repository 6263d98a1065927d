package io.nereid.engine.model;

import io.nereid.engine.cpu.tensor.Quantizer;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufException;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.gguf.GgufTensorInfo;
import io.nereid.engine.gguf.GgufWriter;
import java.io.IOException;
import java.nio.file.Path;

/**
 * {@code bin/nereid quantize}: rewrites a GGUF model with its 2-D weight matrices in another
 * format (Q8_0, Q4_0, F16, BF16, F32), as llama.cpp's {@code llama-quantize} does for these
 * types: metadata and 1-D tensors (norms, biases) are copied unchanged, as is any matrix whose
 * rows are not a whole number of blocks. Stateless.
 */
public final class ModelQuantizer {

    /** What was converted. */
    public record Result(int converted, int copied, long bytesIn, long bytesOut) {
    }

    private ModelQuantizer() {
    }

    public static Result quantize(Path in, Path out, GgmlType target) throws IOException {
        if (!Quantizer.QUANTIZABLE.contains(target)) {
            throw new IllegalArgumentException("cannot quantize to " + target + "; supported: " + Quantizer.QUANTIZABLE);
        }
        try (GgufFile f = GgufFile.open(in)) {
            GgufWriter w = new GgufWriter().putAll(f.metadata());
            int converted = 0;
            int copied = 0;
            long bytesOut = 0;
            for (GgufTensorInfo t : f.tensors()) {
                long[] d = t.dims();
                boolean matrix = d.length == 2 && t.name().endsWith(".weight") && d[0] % target.blockSize() == 0;
                if (matrix && t.type() != target) {
                    float[] data = Quantizer.dequantize(t.type(), f.tensorData(t), 0, Math.toIntExact(t.elementCount()));
                    byte[] q = Quantizer.quantize(target, data);
                    w.addTensor(t.name(), target, d, q);
                    bytesOut += q.length;
                    converted++;
                } else {
                    w.addTensor(t.name(), t.type(), d, f.tensorData(t));
                    bytesOut += t.byteSize();
                    copied++;
                }
            }
            w.write(out);
            return new Result(converted, copied, f.fileSize(), bytesOut);
        } catch (GgufException e) {
            throw new ModelLoadException(e.getMessage(), e);
        }
    }
}
