import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Summarises one bench/serving/overhead.sh run: streamed output tokens/s (GenAI-Perf's output
 * token throughput), the gap between consecutive content chunks of a stream (p50 / p99 over all
 * streams; the first chunk, TTFT, is not a gap) and the server's CPU time by thread group between
 * two /metrics scrapes (nereid_thread_cpu_seconds_total, process_cpu_seconds_total).
 * Usage: java -cp 'bench/target/lib/*' OverheadReport.java DIR METRICS_BEFORE METRICS_AFTER
 */
public class OverheadReport {

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        Path dir = Path.of(args[0]);
        JsonNode perf = json.readTree(dir.resolve("profile_export_genai_perf.json").toFile());
        JsonNode profile = json.readTree(dir.resolve("profile_export.json").toFile());
        List<Double> gaps = new ArrayList<>();
        int requests = 0;
        Map<String, Integer> errors = new LinkedHashMap<>();
        for (JsonNode r : profile.get("experiments").get(0).get("requests")) {
            requests++;
            if (r.hasNonNull("error")) {
                errors.merge(r.get("error").asText(), 1, Integer::sum);
            }
            long previous = -1;
            JsonNode ts = r.get("response_timestamps");
            JsonNode out = r.get("response_outputs");
            for (int i = 0; i < ts.size(); i++) {
                String data = out.get(i).get("response").asText();
                // content: an OpenAI choice, or a KServe / Triton text_output (generate_stream, ModelStreamInfer)
                if (!data.contains("\"choices\":[{") && !data.contains("\"text_output\":")) {   // usage, [DONE], error
                    continue;
                }
                long t = ts.get(i).asLong();
                if (previous >= 0) {
                    gaps.add((t - previous) / 1e6);
                }
                previous = t;
            }
        }
        double[] g = gaps.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        System.out.printf("requests %d, output tokens/s %.0f, chunks %d, chunk gap p50 %.2f ms, p99 %.2f ms,"
                        + " ITL avg %.2f ms%n", requests, perf.get("output_token_throughput").get("avg").asDouble(),
                g.length + requests, pct(g, 50), pct(g, 99), perf.get("inter_token_latency").get("avg").asDouble());
        errors.forEach((e, n) -> System.out.println("error x" + n + ": " + e));
        Map<String, Double> before = cpu(Files.readString(Path.of(args[1])));
        Map<String, Double> after = cpu(Files.readString(Path.of(args[2])));
        double process = after.get("process") - before.get("process");
        StringBuilder sb = new StringBuilder("server CPU s (share of process):");
        after.forEach((k, v) -> {
            double d = v - before.getOrDefault(k, 0.0);
            sb.append(String.format(" %s %.1f (%.0f %%)", k, d, 100 * d / process));
        });
        System.out.println(sb);
    }

    private static double pct(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int i = (int) Math.ceil(p / 100 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    private static Map<String, Double> cpu(String metrics) {
        Map<String, Double> m = new LinkedHashMap<>();
        Matcher x = Pattern.compile("(?m)^nereid_thread_cpu_seconds_total\\{group=\"([^\"]+)\"} (\\S+)$").matcher(metrics);
        while (x.find()) {
            m.put(x.group(1), Double.parseDouble(x.group(2)));
        }
        Matcher p = Pattern.compile("(?m)^process_cpu_seconds_total (\\S+)$").matcher(metrics);
        if (!p.find()) {
            throw new IllegalArgumentException("no process_cpu_seconds_total in " + Arrays.toString(metrics.lines()
                    .limit(3).toArray()));
        }
        m.put("process", Double.parseDouble(p.group(1)));
        return m;
    }
}
