package io.nereid.engine.sampling;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The exponential of the sampling weights, {@code exp(z / T - max)}: one definition, written with correctly
 * rounded operations only (fused multiply-adds, products, differences, bit moves), so that its scalar form,
 * its Vector API form and the CUDA backend's ({@code sample_rows}) give the same bits on any machine, and
 * whether C2 has compiled the vector loop yet changes nothing. ({@code Math.exp} is an intrinsic whose last
 * bit is the JDK's choice, and the Vector API's {@code EXP} differs from it in 5 % of values by an ulp, and
 * from itself between the interpreter and C2.)
 *
 * <p>x = k ln 2 + r with k = round(x / ln 2) (by the 1.5 x 2^52 rounding trick, ties to even) and |r| &lt;=
 * ln 2 / 2 (ln 2 in two parts, Cody and Waite); exp(r) by its Taylor polynomial of degree 13 (error below
 * 1e-17), Horner with fused multiply-adds; times 2^k built from k's bits. Within 1 ulp of the true
 * exponential over the range (ExpTest). Defined for x &lt;= 709; below -708 (where the results near the
 * subnormals begin, e^-708.4; a weight e^-708 of the largest) it is 0; NaN gives NaN.
 *
 * <p>The bulk forms use the Vector API when {@code jdk.incubator.vector} is loaded and its preferred double
 * species has 4 lanes or more, else the scalar form: the same bits either way. Stateless, thread-safe.
 */
final class Exp {

    static final double LOG2E = 0x1.71547652b82fep0;
    static final double LN2_HI = 0x1.62e42fefa39efp-1;
    static final double LN2_LO = 0x1.abc9e3b39803fp-56;
    /** 1.5 x 2^52: adding it rounds a double below 2^51 in magnitude to an integer, which its low bits hold. */
    static final double ROUNDER = 0x1.8p52;
    static final long ROUNDER_BITS = Double.doubleToRawLongBits(ROUNDER);
    static final double UNDERFLOW = -708;
    static final double OVERFLOW = 709;
    /** 1 / n! for n = 0..13, each the double nearest (ExpTest checks them; kernels.cu holds the same). */
    static final double[] TAYLOR = {1.0, 1.0, 0.5, 0.16666666666666666, 0.041666666666666664, 0.008333333333333333,
        0.001388888888888889, 1.984126984126984e-4, 2.48015873015873e-5, 2.7557319223985893e-6, 2.755731922398589e-7,
        2.505210838544172e-8, 2.08767569878681e-9, 1.6059043836821613e-10};

    private Exp() {
    }

    /** exp(x) as defined above. */
    static double exp(double x) {
        if (x < UNDERFLOW) {
            return 0;
        }
        if (x > OVERFLOW) {
            return Double.POSITIVE_INFINITY;
        }
        double t = Math.fma(x, LOG2E, ROUNDER);
        double k = t - ROUNDER;
        double r = Math.fma(-k, LN2_HI, x);
        r = Math.fma(-k, LN2_LO, r);
        double p = TAYLOR[13];
        for (int n = 12; n >= 0; n--) {
            p = Math.fma(p, r, TAYLOR[n]);
        }
        long bits = Double.doubleToRawLongBits(t) - ROUNDER_BITS;   // k
        return p * Double.longBitsToDouble((bits + 1023) << 52);
    }

    /** out[i] = exp(z[i] * inv - max), the product in double (a draw from the whole softmax). */
    static void ofDoubleProducts(float[] z, double inv, double max, double[] out) {
        int i = VECTOR ? Lanes.ofDoubleProducts(z, inv, max, out) : 0;
        for (; i < z.length; i++) {
            out[i] = exp(z[i] * inv - max);
        }
    }

    /** out[i] = exp(z[i] * inv - max), the product in float (the cut distributions). */
    static void ofFloatProducts(float[] z, float inv, double max, double[] out) {
        int i = VECTOR ? Lanes.ofFloatProducts(z, inv, max, out) : 0;
        for (; i < z.length; i++) {
            out[i] = exp(z[i] * inv - max);
        }
    }

    /** out[i] = exp(z[i] - max), the difference in float (log-softmax's sum). */
    static void ofDifferences(float[] z, float max, double[] out) {
        int i = VECTOR ? Lanes.ofDifferences(z, max, out) : 0;
        for (; i < z.length; i++) {
            out[i] = exp(z[i] - max);
        }
    }

    private static final boolean VECTOR = vectorLanes();

    /** Whether the bulk forms run on Vector API lanes in this JVM. */
    static boolean vectorized() {
        return VECTOR;
    }

    private static boolean vectorLanes() {
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()
                || "scalar".equals(System.getProperty("nereid.kernels"))) {
            return false;
        }
        return Lanes.usable();
    }

    /** The Vector API form: loaded only when the module is. */
    private static final class Lanes {
        static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
        static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED.withShape(
                VectorShape.forBitSize(Math.max(64, D.vectorBitSize() / 2)));
        static final VectorSpecies<Long> L = LongVector.SPECIES_PREFERRED;

        static boolean usable() {
            return D.length() >= 4 && F.length() == D.length() && L.length() == D.length();
        }

        static int ofDoubleProducts(float[] z, double inv, double max, double[] out) {
            int bound = D.loopBound(z.length);
            for (int i = 0; i < bound; i += D.length()) {
                DoubleVector x = (DoubleVector) FloatVector.fromArray(F, z, i).convertShape(VectorOperators.F2D, D, 0);
                exp(x.mul(inv).sub(max)).intoArray(out, i);
            }
            return bound;
        }

        static int ofFloatProducts(float[] z, float inv, double max, double[] out) {
            int bound = D.loopBound(z.length);
            for (int i = 0; i < bound; i += D.length()) {
                FloatVector products = FloatVector.fromArray(F, z, i).mul(inv);
                DoubleVector x = (DoubleVector) products.convertShape(VectorOperators.F2D, D, 0);
                exp(x.sub(max)).intoArray(out, i);
            }
            return bound;
        }

        static int ofDifferences(float[] z, float max, double[] out) {
            int bound = D.loopBound(z.length);
            for (int i = 0; i < bound; i += D.length()) {
                FloatVector differences = FloatVector.fromArray(F, z, i).sub(max);
                exp((DoubleVector) differences.convertShape(VectorOperators.F2D, D, 0)).intoArray(out, i);
            }
            return bound;
        }

        /** {@link Exp#exp} lane by lane, operation for operation. */
        static DoubleVector exp(DoubleVector x) {
            DoubleVector t = x.fma(LOG2E, ROUNDER);
            DoubleVector k = t.sub(ROUNDER);
            DoubleVector negK = k.neg();
            DoubleVector r = negK.fma(DoubleVector.broadcast(D, LN2_HI), x);
            r = negK.fma(DoubleVector.broadcast(D, LN2_LO), r);
            DoubleVector p = DoubleVector.broadcast(D, TAYLOR[13]);
            for (int n = 12; n >= 0; n--) {
                p = p.fma(r, DoubleVector.broadcast(D, TAYLOR[n]));
            }
            LongVector bits = t.reinterpretAsLongs().sub(ROUNDER_BITS).add(1023).lanewise(VectorOperators.LSHL, 52);
            DoubleVector y = p.mul(bits.reinterpretAsDoubles());
            VectorMask<Double> under = x.compare(VectorOperators.LT, UNDERFLOW);
            VectorMask<Double> over = x.compare(VectorOperators.GT, OVERFLOW);
            return y.blend(0.0, under).blend(Double.POSITIVE_INFINITY, over);
        }
    }
}
