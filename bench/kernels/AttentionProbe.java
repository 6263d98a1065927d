import io.nereid.engine.cpu.kernel.KernelSupport;
import io.nereid.engine.cpu.kernel.Kernels;
import java.util.Random;

/**
 * Probe for the KV cache's layout (engine/.../cpu/KvStorage): ns a position and head of one decode
 * query's F16 attention ({@link KernelSupport#attentionF16Queries}) over CTX positions, 12 heads of
 * 64, LAYERS layers of K and V arrays (12 layers of 2,000 positions: 74 MB, out of cache; 1 layer:
 * in L3), one thread. LAYOUT {@code head} is KvStorage's ({@code [kvHead][block][slot][headDim]}),
 * {@code block} the previous one ({@code [block][kvHead][slot][headDim]}); ORDER {@code up} gives the
 * sequence blocks 0, 1, 2, ..., {@code down} the reverse (a freed sequence's blocks as the pool's
 * queue hands them back), {@code shuffled} a random order.
 * 2026-12-06, AMD EPYC VM, 2,000 positions, 12 layers: block/up 31.6-37.9 ns, head/up 15.6-23.4,
 * head/down 46.7-48.7 when every block was read front to back, 15.4-16.3 since a block whose
 * successor lies below it is read back to front (a later run: block/up 35.6, head/up 14.7, head/down
 * 15.1, head/shuffled 40.2: blocks in no order stream as the previous layout did); 1 layer (in cache) ~12-15.
 * Run (after ./mvnw -q -o compile -pl engine -am):
 *   java --add-modules jdk.incubator.vector -cp engine/target/classes bench/kernels/AttentionProbe.java \
 *     CTX LAYERS head|block up|down|shuffled
 */
public class AttentionProbe {
    public static void main(String[] a) {
        int ctx = Integer.parseInt(a[0]), layers = Integer.parseInt(a[1]);
        boolean headMajor = a[2].equals("head");
        String order = a[3];
        int heads = 12, hd = 64, bs = 16;
        int blocks = (ctx + bs - 1) / bs;
        KernelSupport k = Kernels.provider();
        short[][] keys = new short[layers][blocks * heads * bs * hd], values = new short[layers][blocks * heads * bs * hd];
        Random r = new Random(1);
        for (int l = 0; l < layers; l++) {
            for (int i = 0; i < keys[l].length; i++) {
                keys[l][i] = Float.floatToFloat16((float) r.nextGaussian());
                values[l][i] = Float.floatToFloat16((float) r.nextGaussian());
            }
        }
        int[] table = new int[blocks];
        for (int i = 0; i < blocks; i++) {
            table[i] = order.equals("down") ? blocks - 1 - i : i;
        }
        if (order.equals("shuffled")) {
            for (int i = blocks - 1; i > 0; i--) {
                int j = r.nextInt(i + 1), t = table[i];
                table[i] = table[j];
                table[j] = t;
            }
        }
        float[] q = new float[heads * hd];
        for (int i = 0; i < q.length; i++) {
            q[i] = (float) r.nextGaussian();
        }
        float[] scores = new float[ctx], row = new float[KernelSupport.QUERIES_ROWS * hd], out = new float[heads * hd];
        for (int rep = 0; rep < 10; rep++) {
            int iters = Math.max(1, 2_000_000 / ctx / layers);
            long t0 = System.nanoTime();
            for (int it = 0; it < iters; it++) {
                for (int l = 0; l < layers; l++) {
                    for (int h = 0; h < heads; h++) {
                        int base = headMajor ? h * blocks * bs * hd : h * bs * hd;
                        int stride = headMajor ? bs * hd : heads * bs * hd;
                        k.attentionF16Queries(q, new int[] {h * hd}, new int[] {ctx}, 1, keys[l], values[l], table, bs,
                                base, stride, hd, 0.125f, scores, ctx, row, out, new int[] {h * hd});
                    }
                }
            }
            double positions = (double) iters * layers * heads * ctx;
            System.out.printf("%s layout, blocks %s, %d positions, %d layers: %.2f ns a position and head%n",
                    a[2], order, ctx, layers, (System.nanoTime() - t0) / positions);
        }
    }
}
