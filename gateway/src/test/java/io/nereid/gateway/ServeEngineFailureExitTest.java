package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code serve} whose backend breaks for good: the engine stops, the server drains, and {@code serve}
 * ends with status 70 (what {@code bin/nereid serve} exits with), so an orchestrator restarts it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ServeEngineFailureExitTest {

    @Test
    void whenTheEngineStopsAfterAFailureServeDrainsAndExitsWithStatus70() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        String[] args = {"serve", "--model", TestModels.stories260K().toString(), "--port", "0", "--threads", "1",
            "--drain-timeout", "1"};
        CompletableFuture<Integer> status = CompletableFuture.supplyAsync(() -> ServeCommand.run(args, Map.of(), o, e,
                spec -> spec.withBackendDecorator(real -> {
                    FaultInjectingBackend b = new FaultInjectingBackend(real);
                    b.breakForGood();
                    return b;
                })));
        String url = baseUrl(out, status);
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        for (int i = 0; i < 3; i++) {   // three failed steps in a row stop the engine
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(url + "/v1/completions"))
                    .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"stories260K\",\"prompt\":\"Once\","
                            + "\"max_tokens\":4}")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(500, r.statusCode(), r.body());
        }
        assertEquals(ServeCommand.EXIT_ENGINE_FAILED, status.get(60, TimeUnit.SECONDS), err.toString(StandardCharsets.UTF_8));
        String log = err.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("the engine stopped after a failure") && log.contains("exiting with status 70"), log);
    }

    private static String baseUrl(ByteArrayOutputStream out, CompletableFuture<Integer> status) throws Exception {
        Pattern listening = Pattern.compile("listening on (http://\\S+)");
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < until) {
            Matcher m = listening.matcher(out.toString(StandardCharsets.UTF_8));
            if (m.find()) {
                return m.group(1);
            }
            assertTrue(!status.isDone(), "serve ended early with " + (status.isDone() ? status.get() : null));
            Thread.sleep(20);
        }
        throw new AssertionError("serve did not start: " + out.toString(StandardCharsets.UTF_8));
    }
}
