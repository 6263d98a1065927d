import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Probe for issue 13: the cores' float FMA peak through the Vector API at its preferred width,
 * the ceiling of prompt processing (float FMAs on decoded weight tiles). Twelve independent FMA
 * chains per thread, nothing loaded. On the 2-core AMD EPYC VM (2026-12-06, 512-bit): 208-219
 * GFLOP/s on one thread, 390 on two (the two vCPUs are separate cores). 110M pp512 at 1,100 tok/s
 * is about 200 GFLOP/s.
 * Run: java --add-modules jdk.incubator.vector bench/kernels/FmaProbe.java THREADS
 */
public class FmaProbe {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    static float run(long iters, float seed) {
        FloatVector a0 = FloatVector.broadcast(F, seed), a1 = a0.add(1), a2 = a0.add(2), a3 = a0.add(3);
        FloatVector a4 = a0.add(4), a5 = a0.add(5), a6 = a0.add(6), a7 = a0.add(7);
        FloatVector a8 = a0.add(8), a9 = a0.add(9), a10 = a0.add(10), a11 = a0.add(11);
        FloatVector m = FloatVector.broadcast(F, 0.999f), c = FloatVector.broadcast(F, 0.001f);
        for (long i = 0; i < iters; i++) {
            a0 = a0.fma(m, c); a1 = a1.fma(m, c); a2 = a2.fma(m, c); a3 = a3.fma(m, c);
            a4 = a4.fma(m, c); a5 = a5.fma(m, c); a6 = a6.fma(m, c); a7 = a7.fma(m, c);
            a8 = a8.fma(m, c); a9 = a9.fma(m, c); a10 = a10.fma(m, c); a11 = a11.fma(m, c);
        }
        return a0.add(a1).add(a2).add(a3).add(a4).add(a5).add(a6).add(a7).add(a8).add(a9).add(a10).add(a11)
                .reduceLanes(VectorOperators.ADD);
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        long iters = 200_000_000L;
        for (int round = 0; round < 3; round++) { // the first rounds run before C2 has compiled the loop
            Thread[] ts = new Thread[threads];
            float[] sink = new float[threads];
            long t0 = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                int tt = t;
                ts[t] = new Thread(() -> sink[tt] = run(iters, tt));
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            double s = (System.nanoTime() - t0) / 1e9;
            System.out.printf("%d thread(s), %d-bit: %.1f GFLOP/s (checksum %.1f)%n", threads, F.vectorBitSize(),
                    threads * iters * 12 * 2.0 * F.length() / s / 1e9, sink[0]);
        }
    }
}
