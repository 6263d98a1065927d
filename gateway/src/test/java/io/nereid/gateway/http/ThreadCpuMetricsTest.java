package io.nereid.gateway.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ThreadCpuMetricsTest {

    @Test
    void threadsAreGroupedByName() {
        assertEquals("event-loop", ThreadCpuMetrics.group("vert.x-eventloop-thread-3"));
        assertEquals("engine", ThreadCpuMetrics.group("nereid-engine"));
        assertEquals("compute", ThreadCpuMetrics.group("nereid-kernel-0"));
        assertEquals("worker", ThreadCpuMetrics.group("vert.x-worker-thread-12"));
        assertEquals("worker", ThreadCpuMetrics.group("nereid-prep-1"));
        assertEquals("other", ThreadCpuMetrics.group("main"));
        assertEquals("other", ThreadCpuMetrics.group("nereid-engine-2"));
    }

    /** A busy "event loop" thread's CPU shows in its group, and stays counted after the thread exits. */
    @Test
    void aThreadsCpuTimeIsCountedInItsGroupAndKeptAfterItExits() throws Exception {
        ThreadCpuMetrics m = new ThreadCpuMetrics();
        double before = seconds(m, "event-loop");
        CountDownLatch burnt = new CountDownLatch(1);
        CountDownLatch exit = new CountDownLatch(1);
        Thread t = Thread.ofPlatform().name("vert.x-eventloop-thread-test").start(() -> {
            var mx = ManagementFactory.getThreadMXBean();
            long x = 0;
            while (mx.getCurrentThreadCpuTime() < 200_000_000L) {   // 0.2 s of CPU
                x += Long.numberOfTrailingZeros(x + System.nanoTime());
            }
            burnt.countDown();
            try {
                exit.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(burnt.await(30, TimeUnit.SECONDS));
        double alive = seconds(m, "event-loop");
        assertTrue(alive - before >= 0.2, "event-loop went from " + before + " to " + alive);
        exit.countDown();
        t.join(10_000);
        double after = seconds(m, "event-loop");
        assertTrue(after >= alive, "the counter went back from " + alive + " to " + after);
        StringBuilder sb = new StringBuilder();
        m.write(sb);
        for (String g : ThreadCpuMetrics.GROUPS) {
            assertTrue(sb.toString().contains("nereid_thread_cpu_seconds_total{group=\"" + g + "\"} "), sb::toString);
        }
        assertTrue(sb.toString().contains("# TYPE nereid_thread_cpu_seconds_total counter\n"), sb::toString);
    }

    private static double seconds(ThreadCpuMetrics m, String group) {
        StringBuilder sb = new StringBuilder();
        m.write(sb);
        Matcher x = Pattern.compile("nereid_thread_cpu_seconds_total\\{group=\"" + group + "\"} (\\S+)").matcher(sb);
        assertTrue(x.find(), sb::toString);
        return Double.parseDouble(x.group(1));
    }
}
