package io.nereid.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class StatisticsTest {
    @Test
    void percentilesInterpolateLinearlyLikeNumpy() {
        // numpy.percentile([1, 2, 3, 4, 10], q): p25 = 2, p50 = 3, p75 = 4, p90 = 7.6, p99 = 9.76
        Statistics s = Statistics.of(new double[] {10, 3, 1, 4, 2});
        assertEquals(2.0, s.p25(), 1e-12);
        assertEquals(3.0, s.p50(), 1e-12);
        assertEquals(4.0, s.p75(), 1e-12);
        assertEquals(7.6, s.p90(), 1e-12);
        assertEquals(9.76, s.p99(), 1e-12);
        assertEquals(1.0, s.min());
        assertEquals(10.0, s.max());
        assertEquals(4.0, s.avg(), 1e-12);
        // numpy.std (population): sqrt(((3² + 2² + 1² + 0² + 6²) / 5) = sqrt(10)
        assertEquals(Math.sqrt(10), s.std(), 1e-12);
    }

    @Test
    void oneSampleHasEveryPercentileEqualToIt() {
        Statistics s = Statistics.of(new double[] {42});
        assertEquals(42.0, s.p1());
        assertEquals(42.0, s.p99());
        assertEquals(0.0, s.std());
    }
}
