package io.nereid.nativebackend.cuda;

import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.RandomModelWriter;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * For gpu-tagged test classes ({@code @ExtendWith(CudaDevice.class)}): prepares the emulator in its execution and
 * skips the class unless a CUDA driver, real or emulated, is there. Also the small random llama models they run.
 */
final class CudaDevice implements BeforeAllCallback {

    @Override
    public void beforeAll(ExtensionContext context) {
        CudaEmulator.assumeDevice();
    }

    /** A llama of dim 256, 2 layers, 4 heads (2 KV), FFN 512, vocabulary 512, in {@code type}, written to {@code dir}. */
    static Path llama(Path dir, GgmlType type, int contextLength, long seed) throws IOException {
        return llama(dir, type, 512, contextLength, seed);
    }

    /** The same with a vocabulary of {@code vocab}. */
    static Path llama(Path dir, GgmlType type, int vocab, int contextLength, long seed) throws IOException {
        Path model = dir.resolve(type + "-" + vocab + "-" + contextLength + "-" + seed + ".gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, 256, 2, 4, 2, 512, vocab, contextLength, type,
                false, seed), model);
        return model;
    }
}
