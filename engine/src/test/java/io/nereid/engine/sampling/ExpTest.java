package io.nereid.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link Exp}: within 1 ulp of the true exponential (against {@code Math.exp}, itself within 1 ulp, and against
 * a 40-digit reference on a sample), its edges, and its bulk forms (the Vector API lanes where the module is
 * loaded, as in the test JVM) the scalar form's bits on every lane and at every tail length.
 */
class ExpTest {

    @Test
    void withinAnUlpOfTheTrueExponential() {
        SplittableRandom r = new SplittableRandom(3);
        double worst = 0;
        for (int i = 0; i < 200_000; i++) {
            double x = i % 2 == 0 ? -708 * r.nextDouble() : -40 * r.nextDouble();
            double ours = Exp.exp(x);
            double ulps = Math.abs(ours - Math.exp(x)) / Math.ulp(Math.exp(x));
            worst = Math.max(worst, ulps);
            assertTrue(ulps <= 2, "exp(" + x + ") = " + ours + ", Math.exp " + Math.exp(x));
        }
        for (int i = 0; i < 300; i++) {   // against a 40-digit exponential: within one ulp of the truth
            double x = -30 * r.nextDouble();
            BigDecimal truth = exp40(new BigDecimal(x));
            BigDecimal error = new BigDecimal(Exp.exp(x)).subtract(truth).abs();
            assertTrue(error.compareTo(new BigDecimal(Math.ulp(Exp.exp(x)))) <= 0, "exp(" + x + ") off by " + error);
        }
        assertTrue(worst <= 2, "worst " + worst + " ulps from Math.exp");
    }

    @Test
    void theTaylorCoefficientsAreTheDoublesNearestOneOverNFactorial() {
        BigDecimal factorial = BigDecimal.ONE;
        for (int n = 0; n < Exp.TAYLOR.length; n++) {
            factorial = n == 0 ? BigDecimal.ONE : factorial.multiply(BigDecimal.valueOf(n));
            BigDecimal exact = BigDecimal.ONE.divide(factorial, new MathContext(50));
            double c = Exp.TAYLOR[n];
            BigDecimal error = new BigDecimal(c).subtract(exact).abs();
            assertTrue(error.compareTo(new BigDecimal(Math.ulp(c) / 2)) <= 0, "1/" + n + "! = " + exact + ", not " + c);
        }
    }

    @Test
    void edges() {
        assertEquals(1.0, Exp.exp(0.0));
        assertEquals(1.0, Exp.exp(-0.0));
        assertEquals(0.0, Exp.exp(Double.NEGATIVE_INFINITY));
        assertEquals(0.0, Exp.exp(-708.5), "below -708: 0, not a subnormal");
        assertTrue(Exp.exp(-708) > 0 && Exp.exp(-708) < 1e-307);
        assertTrue(Double.isNaN(Exp.exp(Double.NaN)));
        assertEquals(Math.E, Exp.exp(1), Math.ulp(Math.E));
        assertEquals(Double.POSITIVE_INFINITY, Exp.exp(710));
        assertTrue(Double.isFinite(Exp.exp(709)));
    }

    @Test
    void theBulkFormsAreTheScalarsBitsOnEveryLaneAndTail() {
        assertEquals(ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent(), Exp.vectorized(),
                "the lanes are what is compared here wherever the module is loaded");
        SplittableRandom r = new SplittableRandom(5);
        for (int n = 0; n < 70; n++) {
            float[] z = new float[n];
            for (int i = 0; i < n; i++) {
                z[i] = switch (i % 9) {
                    case 0 -> Float.NEGATIVE_INFINITY;
                    case 1 -> Float.NaN;
                    case 2 -> -1e30f;
                    case 3 -> 0f;
                    default -> (float) (10 * r.nextGaussian());
                };
            }
            double invD = 1 / 0.7;
            float invF = 1f / 0.7f;
            double max = 12.5;
            double[] d = new double[n];
            double[] f = new double[n];
            double[] s = new double[n];
            Exp.ofDoubleProducts(z, invD, max, d);
            Exp.ofFloatProducts(z, invF, max, f);
            Exp.ofDifferences(z, 12.5f, s);
            for (int i = 0; i < n; i++) {
                assertEquals(Double.doubleToRawLongBits(Exp.exp(z[i] * invD - max)), Double.doubleToRawLongBits(d[i]),
                        "double products, n " + n + " i " + i + " z " + z[i]);
                assertEquals(Double.doubleToRawLongBits(Exp.exp(z[i] * invF - max)), Double.doubleToRawLongBits(f[i]),
                        "float products, n " + n + " i " + i + " z " + z[i]);
                assertEquals(Double.doubleToRawLongBits(Exp.exp(z[i] - 12.5f)), Double.doubleToRawLongBits(s[i]),
                        "differences, n " + n + " i " + i + " z " + z[i]);
            }
        }
    }

    /** e^x to 40 digits (Taylor series of e^(x / 64), squared six times). */
    private static BigDecimal exp40(BigDecimal x) {
        MathContext mc = new MathContext(60);
        BigDecimal y = x.divide(BigDecimal.valueOf(64), mc);
        BigDecimal sum = BigDecimal.ONE;
        BigDecimal term = BigDecimal.ONE;
        for (int n = 1; n < 60; n++) {
            term = term.multiply(y, mc).divide(BigDecimal.valueOf(n), mc);
            sum = sum.add(term, mc);
        }
        for (int i = 0; i < 6; i++) {
            sum = sum.multiply(sum, mc);
        }
        return sum.round(new MathContext(40));
    }
}
