import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Probe for issue 13: how fast a file's bytes stream through the cores, read from its mapping
 * ({@code file}) or from a copy in anonymous memory ({@code anon}), on 1 or 2 threads (each its
 * half, four 512-bit loads in flight). On the 2-core Intel VM (2026-12-04) a 2.2 GB GGUF written
 * hours before: file 10.5 / 15.5 GB/s, anon 15.5 / 30.5; two hours later the same file 16.3 / 31.2,
 * anon 15.6 / 30.9. A copy made at load does not depend on the page cache's state, which is one
 * reason the weights a decode reads as the file has them are copied (engine/.../cpu/tensor/WeightMatrix,
 * {@code nereid.weights.copy}).
 * Run: java --add-modules jdk.incubator.vector bench/kernels/StreamProbe.java FILE THREADS file|anon
 */
public class StreamProbe {
    static final VectorSpecies<Long> S = LongVector.SPECIES_512;
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    static long sum(MemorySegment m, long from, long to) {
        LongVector a = LongVector.zero(S), b = a, c = a, d = a;
        for (long i = from; i < to; i += 256) {
            a = a.add(LongVector.fromMemorySegment(S, m, i, LE));
            b = b.add(LongVector.fromMemorySegment(S, m, i + 64, LE));
            c = c.add(LongVector.fromMemorySegment(S, m, i + 128, LE));
            d = d.add(LongVector.fromMemorySegment(S, m, i + 192, LE));
        }
        return a.add(b).add(c).add(d).reduceLanes(VectorOperators.ADD);
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[1]);
        MemorySegment m;
        long size;
        try (FileChannel ch = FileChannel.open(Path.of(args[0]))) {
            size = ch.size() / (1 << 20) * (1 << 20);
            m = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, Arena.global());
        }
        if (args[2].equals("anon")) {
            MemorySegment a = Arena.global().allocate(size, 1 << 21);
            a.copyFrom(m);
            m = a;
        }
        MemorySegment seg = m;
        long bytes = size;
        for (int rep = 0; rep < 5; rep++) {
            long t0 = System.nanoTime();
            Thread[] ts = new Thread[threads];
            long[] out = new long[threads];
            for (int t = 0; t < threads; t++) {
                int k = t;
                ts[t] = new Thread(() -> out[k] = sum(seg, bytes / threads * k, bytes / threads * (k + 1)));
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            double s = (System.nanoTime() - t0) / 1e9;
            System.out.printf("%s, %d thread(s): %.1f GB/s (checksum %d)%n", args[2], threads, bytes / 1e9 / s, out[0] & 0xFF);
        }
    }
}
