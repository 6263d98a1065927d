package io.nereid.gateway.http;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code nereid_thread_cpu_seconds_total{group}}: CPU time of the JVM's threads summed by what they
 * do, read from {@link ThreadMXBean} at scrape time, so an operator (or a benchmark note) can see
 * how the serving cost splits between the HTTP event loops, the engine thread and the kernel pool.
 * Threads are grouped by name: {@code vert.x-eventloop-thread-*} is {@code event-loop},
 * {@code nereid-engine} is {@code engine}, {@code nereid-kernel-*} is {@code compute},
 * {@code vert.x-worker-thread-*} / {@code nereid-prep-*} (template rendering, tokenization) are
 * {@code worker}; every other Java thread is {@code other}. Time spent by the JVM's own native
 * threads (GC, JIT) is not a Java thread's and is only in {@code process_cpu_seconds_total}.
 *
 * <p>Monotonic: the last time seen for a thread that has since exited stays in its group (what it
 * used after the previous scrape is lost). Thread-safe: {@link #write} is synchronized; scrapes are
 * rare.
 */
final class ThreadCpuMetrics {

    static final String[] GROUPS = {"event-loop", "engine", "compute", "worker", "other"};

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final Map<Long, Long> lastSeen = new HashMap<>();   // thread id -> CPU nanos at the previous scrape
    private final Map<Long, String> groupOf = new HashMap<>();
    private final Map<String, Long> retired = new HashMap<>();  // group -> CPU nanos of exited threads

    /** The group of a thread named {@code name}. */
    static String group(String name) {
        if (name.startsWith("vert.x-eventloop-thread-")) {
            return "event-loop";
        } else if (name.equals("nereid-engine")) {
            return "engine";
        } else if (name.startsWith("nereid-kernel-")) {
            return "compute";
        } else if (name.startsWith("vert.x-worker-thread-") || name.startsWith("nereid-prep-")) {
            return "worker";
        }
        return "other";
    }

    /** Appends the counter (all groups, 0 where none ran) and {@code process_cpu_seconds_total}. */
    synchronized void write(StringBuilder sb) {
        Map<String, Long> nanos = new LinkedHashMap<>();
        for (String g : GROUPS) {
            nanos.put(g, retired.getOrDefault(g, 0L));
        }
        if (threads.isThreadCpuTimeSupported() && threads.isThreadCpuTimeEnabled()) {
            Map<Long, Long> now = new HashMap<>();
            for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds(), 0)) {
                long cpu = t == null ? -1 : threads.getThreadCpuTime(t.getThreadId());
                if (cpu >= 0) {   // -1: exited between the two calls
                    String g = group(t.getThreadName());
                    now.put(t.getThreadId(), cpu);
                    groupOf.put(t.getThreadId(), g);
                    nanos.merge(g, cpu, Long::sum);
                }
            }
            for (Map.Entry<Long, Long> e : lastSeen.entrySet()) {
                if (!now.containsKey(e.getKey())) {
                    String g = groupOf.remove(e.getKey());
                    retired.merge(g, e.getValue(), Long::sum);
                    nanos.merge(g, e.getValue(), Long::sum);
                }
            }
            lastSeen.clear();
            lastSeen.putAll(now);
        }
        sb.append("# HELP nereid_thread_cpu_seconds_total CPU time of the JVM's threads by group (event-loop, engine,"
                + " compute, worker, other)\n# TYPE nereid_thread_cpu_seconds_total counter\n");
        nanos.forEach((g, n) -> sb.append("nereid_thread_cpu_seconds_total{group=\"").append(g).append("\"} ")
                .append(ServingMetrics.num(n / 1e9)).append('\n'));
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                && os.getProcessCpuTime() >= 0) {
            sb.append("# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
                    + "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total ")
                    .append(ServingMetrics.num(os.getProcessCpuTime() / 1e9)).append('\n');
        }
    }
}
