package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deployment files under {@code deploy/} against a running server: every probe path, port,
 * environment variable and metric name the Kubernetes manifests, the KServe runtime, the
 * InferencePool and the Dockerfile name exists; and a real Prometheus (Debian's, started here on
 * loopback with the shipped scrape config; skipped when it is missing) scrapes the server under a
 * little load while every PromQL expression of the shipped Grafana dashboard returns data.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DeployManifestsTest {

    private static final Path DEPLOY = Path.of("").toAbsolutePath().getParent().resolve("deploy");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static TestServer server;

    @BeforeAll
    static void start() throws Exception {
        server = TestServer.start("--served-model-name", "stories", "--chat-template", "chatml", "--threads", "1");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static List<JsonNode> documents(String file) throws Exception {
        List<JsonNode> docs = new ArrayList<>();
        try (var it = YAML.readerFor(JsonNode.class).readValues(DEPLOY.resolve(file).toFile())) {
            while (it.hasNext()) {
                docs.add((JsonNode) it.next());
            }
        }
        return docs;
    }

    private static int status(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(server.url(path))).build(), HttpResponse.BodyHandlers.ofString())
                .statusCode();
    }

    private static String metrics() throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(server.url("/metrics"))).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /** The port serve listens on by default: --port's, and --grpc-port's (8001 when --port is not 0). */
    private static int defaultOf(String flag) {
        ServeConfig c = ServeConfig.parse(List.of(), java.util.Map.of());
        return flag.equals("--port") ? c.port() : c.grpcPort();
    }

    private static Set<String> knownVariables() {
        Set<String> out = new java.util.HashSet<>();
        ServeConfig.OPTIONS.forEach(o -> out.add(o.env()));
        return out;
    }

    @Test
    void theKubernetesManifestsNameProbesPortsVariablesAndMetricsTheServerHas() throws Exception {
        List<JsonNode> docs = documents("kubernetes/nereid.yaml");
        assertEquals(List.of("Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"),
                docs.stream().map(d -> d.get("kind").asText()).toList());
        JsonNode pod = docs.get(0).at("/spec/template/spec");
        JsonNode c = pod.at("/containers/0");
        assertEquals(defaultOf("--port"), c.at("/ports/0/containerPort").asInt());
        assertEquals(defaultOf("--grpc-port"), c.at("/ports/1/containerPort").asInt());
        for (String probe : List.of("readinessProbe", "livenessProbe", "startupProbe")) {
            String path = c.at("/" + probe + "/httpGet/path").asText();
            assertEquals(200, status(path), probe + " " + path);
            assertEquals("http", c.at("/" + probe + "/httpGet/port").asText());
        }
        assertEquals("/health/ready", c.at("/readinessProbe/httpGet/path").asText());
        assertTrue(pod.get("terminationGracePeriodSeconds").asInt() > 30, "longer than --drain-timeout");
        for (JsonNode e : c.get("env")) {
            assertTrue(knownVariables().contains(e.get("name").asText()), e.toString());
        }
        String metricsPage = metrics();
        String hpaMetric = docs.get(3).at("/spec/metrics/0/pods/metric/name").asText();
        assertTrue(metricsPage.contains("\n" + hpaMetric + "{"), hpaMetric);
        assertEquals("/metrics", docs.get(0).at("/spec/template/metadata/annotations/prometheus.io~1path").asText());

        JsonNode runtime = documents("kubernetes/kserve-servingruntime.yaml").getFirst();
        JsonNode rc = runtime.at("/spec/containers/0");
        assertEquals(200, status(rc.at("/readinessProbe/httpGet/path").asText()));
        assertEquals(200, status(rc.at("/livenessProbe/httpGet/path").asText()));
        assertEquals(defaultOf("--grpc-port"), rc.at("/ports/0/containerPort").asInt());
        JsonNode pool = documents("kubernetes/inference-pool.yaml").getFirst();
        assertEquals(defaultOf("--port"), pool.at("/spec/targetPorts/0/number").asInt());
        for (String gauge : List.of("vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc")) {
            assertTrue(metricsPage.contains("\n" + gauge + "{"), gauge + " (the endpoint picker reads it)");
        }
    }

    @Test
    void theDockerfileChecksReadinessExposesTheDefaultPortsAndSetsKnownVariables() throws Exception {
        String docker = Files.readString(DEPLOY.resolve("docker/Dockerfile"));
        Matcher health = Pattern.compile("CMD curl -fsS http://127\\.0\\.0\\.1:(\\d+)(/\\S+)").matcher(docker);
        assertTrue(health.find());
        assertEquals(defaultOf("--port"), Integer.parseInt(health.group(1)));
        assertEquals(200, status(health.group(2)));
        assertTrue(docker.contains("EXPOSE " + defaultOf("--port") + " " + defaultOf("--grpc-port")));
        Matcher env = Pattern.compile("(NEREID_[A-Z_]+)=").matcher(docker);
        int seen = 0;
        while (env.find()) {
            assertTrue(knownVariables().contains(env.group(1)), env.group(1));
            seen++;
        }
        assertTrue(seen >= 3);
        assertTrue(docker.contains("USER nereid"), "not root");
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static JsonNode query(int port, String promql) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/query?query="
                + URLEncoder.encode(promql, StandardCharsets.UTF_8))).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), promql + " -> " + r.body());
        return JSON.readTree(r.body());
    }

    private static void load(int requests) throws Exception {
        for (int i = 0; i < requests; i++) {
            HTTP.send(HttpRequest.newBuilder(URI.create(server.url("/v1/completions"))).header("Content-Type",
                    "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"stories\",\"prompt\":"
                    + "\"Once upon a time\",\"max_tokens\":24,\"stream\":true,\"ignore_eos\":true}")).build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void prometheusScrapesTheServerAndEveryDashboardQueryReturnsData(@TempDir Path tmp) throws Exception {
        Path prometheus = Path.of("/usr/bin/prometheus");
        assumeTrue(Files.isExecutable(prometheus), "needs Debian's prometheus (.ci/run installs it)");
        String target = "127.0.0.1:" + server.server().port();
        String config = Files.readString(DEPLOY.resolve("prometheus/prometheus.yml"))
                .replace("\"127.0.0.1:8000\"", "\"" + target + "\"").replace("scrape_interval: 5s", "scrape_interval: 1s");
        assertTrue(config.contains(target), "the shipped config names one target to point at this server");
        Files.writeString(tmp.resolve("prometheus.yml"), config);
        int port = freePort();
        Process p = new ProcessBuilder(prometheus.toString(), "--config.file=" + tmp.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + tmp.resolve("data"), "--web.listen-address=127.0.0.1:" + port,
                "--log.level=warn").redirectErrorStream(true).redirectOutput(tmp.resolve("prometheus.log").toFile()).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            // load while Prometheus scrapes: rates and histogram quantiles then have samples that moved
            for (int round = 0; ; round++) {
                assertTrue(System.nanoTime() < deadline, "Prometheus never scraped: " + Files.readString(
                        tmp.resolve("prometheus.log")));
                load(2);
                Thread.sleep(300);
                if (round < 10) {
                    continue;
                }
                try {
                    JsonNode up = query(port, "count_over_time(up{job=\"nereid\"}[1m])");
                    if (!up.at("/data/result").isEmpty() && up.at("/data/result/0/value/1").asDouble() >= 4) {
                        break;
                    }
                } catch (java.io.IOException starting) {
                    // not listening yet
                }
            }
            assertEquals("1", query(port, "up{job=\"nereid\"}").at("/data/result/0/value/1").asText());
            JsonNode dash = JSON.readTree(DEPLOY.resolve("grafana/nereid-dashboard.json").toFile());
            int exprs = 0;
            for (JsonNode panel : dash.get("panels")) {
                for (JsonNode t : panel.get("targets")) {
                    String expr = t.get("expr").asText().replace("$model", ".*");
                    JsonNode r = query(port, expr);
                    assertEquals("success", r.get("status").asText(), expr);
                    assertFalse(r.at("/data/result").isEmpty(), panel.get("title").asText() + ": no data for " + expr);
                    exprs++;
                }
            }
            assertTrue(exprs >= 14, "the dashboard's queries");
        } finally {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }
}
