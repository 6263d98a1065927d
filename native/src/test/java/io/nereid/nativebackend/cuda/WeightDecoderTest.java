package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nereid.engine.cpu.tensor.Quantizer;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernels' weight decoders ({@code load_group} in kernels.cu, which every GEMV, embedding and
 * dequantize kernel reads weights through) equal the CPU backend's scalar dequantizers bit for bit, for
 * every format: nvcc compiles them into a host program here, so this needs the CUDA toolkit but no GPU
 * (skipped without nvcc). Rows hold values of several magnitudes, zeros and negatives.
 */
class WeightDecoderTest {

    @Test
    void everyFormatDecodesAsTheCpuBackendDoes(@TempDir Path dir) throws Exception {
        Optional<Path> nvcc = KernelSourceTest.nvcc();
        Assumptions.assumeTrue(nvcc.isPresent(), "no nvcc here: the decoders' host check is skipped");
        Files.writeString(dir.resolve("kernels.cu"), KernelSource.load().text());
        try (InputStream in = WeightDecoderTest.class.getResourceAsStream("dequant_host.cu")) {
            Files.write(dir.resolve("dequant_host.cu"), in.readAllBytes());
        }
        Path exe = dir.resolve("dequant_host");
        KernelSourceTest.run(List.of(nvcc.get().toString(), "-O2", "-o", exe.toString(), "dequant_host.cu"), dir);
        int rows = 5;
        int cols = 768;
        SplittableRandom random = new SplittableRandom(19);
        float[] values = new float[rows * cols];
        for (int i = 0; i < values.length; i++) {
            double scale = Math.pow(10, (i / cols) - 2);   // a magnitude per row: 0.01 ... 100
            values[i] = i % 97 == 0 ? 0f : (float) (random.nextGaussian() * scale);
        }
        for (WeightFormat f : WeightFormat.values()) {
            byte[] bytes = Quantizer.quantize(f.type, values);
            Path in = dir.resolve(f.suffix + ".in");
            Path out = dir.resolve(f.suffix + ".out");
            Files.write(in, bytes);
            KernelSourceTest.run(List.of(exe.toString(), Integer.toString(f.type.id()), Integer.toString(rows),
                    Integer.toString(cols), Long.toString(f.rowBytes(cols)), in.toString(), out.toString()), dir);
            float[] gpu = new float[rows * cols];
            ByteBuffer.wrap(Files.readAllBytes(out)).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(gpu);
            float[] cpu = Quantizer.dequantize(f.type, MemorySegment.ofArray(bytes), 0, rows * cols);
            for (int i = 0; i < cpu.length; i++) {
                assertEquals(Float.floatToRawIntBits(cpu[i]), Float.floatToRawIntBits(gpu[i]),
                        f + " value " + i + ": CPU " + cpu[i] + ", kernel " + gpu[i]);
            }
        }
    }
}
