package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.engine.api.AdmissionException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.Usage;
import io.nereid.gateway.http.GatewayServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code /v1/completions} with a batch of prompts on stories260K: choices indexed {@code prompt * n + choice},
 * texts equal to the single-prompt answers, usage summed, the stream interleaved with one usage chunk, and
 * every failure (context overflow, admission of a later prompt) decided before the 200. The engine is the
 * real one behind a submit hook: every handle it returns is recorded (to see cancellations), and a test
 * may make the k-th submit of a request fail or park its prompts (never producing output until cancelled).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayBatchTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final String STORY = TestModels.ONCE_UPON_A_TIME_12;
    private static final String LILY = "Lily and Tom";
    /** Submits since the last reset; with {@link #failAt} >= 0 that submit throws QUEUE_FULL. */
    private static final AtomicInteger submits = new AtomicInteger();
    private static final AtomicInteger failAt = new AtomicInteger(-1);
    private static final AtomicBoolean park = new AtomicBoolean();
    private static final List<CountingHandle> handles = new CopyOnWriteArrayList<>();
    private static TestServer served;
    private static GatewayServer server;

    /** A handle that counts cancellations; parked ones finish every choice as CANCELLED when cancelled. */
    private record CountingHandle(RequestHandle real, Runnable onCancel, AtomicInteger cancels) implements RequestHandle {
        @Override
        public String id() {
            return real == null ? "parked" : real.id();
        }

        @Override
        public void cancel() {
            cancels.incrementAndGet();
            (real == null ? onCancel : (Runnable) real::cancel).run();
        }
    }

    @BeforeAll
    static void start() throws Exception {
        served = TestServer.start(m -> TestEngines.withSubmit(m, (request, sink) -> {
            if (submits.getAndIncrement() == failAt.get()) {
                throw new AdmissionException(AdmissionException.Reason.QUEUE_FULL, Duration.ofSeconds(2),
                        "the waiting queue is full");
            }
            CountingHandle h = park.get()
                    ? new CountingHandle(null, () -> {
                        for (int i = 0; i < request.n(); i++) {
                            sink.onFinish(i, FinishReason.CANCELLED, null, new Usage(request.promptTokens().length, 0, 0,
                                    0, 0, 0));
                        }
                        sink.onStepEnd();
                    }, new AtomicInteger())
                    : new CountingHandle(m.engine().submit(request, sink), null, new AtomicInteger());
            handles.add(h);
            return h;
        }), "--served-model-name", "stories260K", "--threads", "1");
        server = served.server();
    }

    @AfterAll
    static void stop() {
        if (served != null) {
            served.close();
        }
    }

    @AfterEach
    void reset() {
        failAt.set(-1);
        park.set(false);
    }

    private static HttpResponse<String> post(String body) throws Exception {
        submits.set(0);
        handles.clear();
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/completions"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode ok(HttpResponse<String> r) throws Exception {
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body());
    }

    private static String request(String prompt, int n, String more) {
        return "{\"model\":\"stories260K\",\"prompt\":" + prompt + ",\"n\":" + n + ",\"temperature\":0,\"max_tokens\":12"
                + more + "}";
    }

    private static JsonNode single(String prompt) throws Exception {
        return ok(post(request(JSON.writeValueAsString(prompt), 1, "")));
    }

    @Test
    void aBatchOfTwoPromptsWithNTwoHasFourChoicesInPromptOrderWithTheSinglePromptTextsAndSummedUsage() throws Exception {
        JsonNode once = single("Once upon a time");
        JsonNode lily = single(LILY);
        assertEquals(STORY, once.get("choices").get(0).get("text").asText());
        JsonNode b = ok(post(request("[\"Once upon a time\",\"" + LILY + "\"]", 2, "")));
        JsonNode choices = b.get("choices");
        assertEquals(4, choices.size());
        for (int i = 0; i < 4; i++) {
            JsonNode single = (i < 2 ? once : lily).get("choices").get(0);
            assertEquals(i, choices.get(i).get("index").asInt());
            assertEquals(single.get("text").asText(), choices.get(i).get("text").asText(), "choice " + i);
            assertEquals(single.get("finish_reason").asText(), choices.get(i).get("finish_reason").asText());
        }
        JsonNode u = b.get("usage");
        int promptTokens = once.get("usage").get("prompt_tokens").asInt() + lily.get("usage").get("prompt_tokens").asInt();
        int completionTokens = 2 * (once.get("usage").get("completion_tokens").asInt()
                + lily.get("usage").get("completion_tokens").asInt());
        assertEquals(promptTokens, u.get("prompt_tokens").asInt());
        assertEquals(completionTokens, u.get("completion_tokens").asInt());
        assertEquals(promptTokens + completionTokens, u.get("total_tokens").asInt());
        assertEquals(2, handles.size());   // one engine request per prompt
    }

    @Test
    void aBatchOfTokenArraysAnswersAsTheTextsDoAndEchoPrefixesEachPromptsOwnText() throws Exception {
        String once = JSON.readTree(HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
                + "/tokenize")).POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"Once upon a time\"}")).build(),
                HttpResponse.BodyHandlers.ofString()).body()).get("tokens").toString();
        String lilyText = single(LILY).get("choices").get(0).get("text").asText();
        JsonNode tokens = ok(post(request("[" + once + "," + once + "]", 1, ""))).get("choices");
        assertEquals(STORY, tokens.get(0).get("text").asText());
        assertEquals(STORY, tokens.get(1).get("text").asText());
        JsonNode echoed = ok(post(request("[\"Once upon a time\",\"" + LILY + "\"]", 1, ",\"echo\":true"))).get("choices");
        assertEquals("Once upon a time" + STORY, echoed.get(0).get("text").asText());
        assertEquals(LILY + lilyText, echoed.get(1).get("text").asText());
    }

    @Test
    void aStreamedBatchInterleavesAllChoicesWithAFinishEachOneUsageChunkAndOneDone() throws Exception {
        String prompts = "[\"Once upon a time\",\"" + LILY + "\"]";
        JsonNode whole = ok(post(request(prompts, 2, "")));
        HttpResponse<String> r = post(request(prompts, 2, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}"));
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("text/event-stream", r.headers().firstValue("Content-Type").orElse(""));
        String body = r.body();
        assertTrue(body.endsWith("data: [DONE]\n\n"), body);
        assertEquals(body.indexOf("[DONE]"), body.lastIndexOf("[DONE]"), body);
        String[] frames = body.substring(0, body.length() - "data: [DONE]\n\n".length()).split("\n\n");
        StringBuilder[] texts = {new StringBuilder(), new StringBuilder(), new StringBuilder(), new StringBuilder()};
        String[] finish = new String[4];
        for (int f = 0; f < frames.length - 1; f++) {
            JsonNode chunk = JSON.readTree(frames[f].substring("data: ".length()));
            assertEquals(whole.get("model").asText(), chunk.get("model").asText());
            assertTrue(chunk.get("usage") == null || chunk.get("usage").isNull(), frames[f]);
            assertEquals(1, chunk.get("choices").size(), frames[f]);
            JsonNode c = chunk.get("choices").get(0);
            int i = c.get("index").asInt();
            assertNull(finish[i], "choice " + i + " has a chunk after its finish: " + frames[f]);
            texts[i].append(c.get("text").asText());
            finish[i] = c.get("finish_reason").textValue();
        }
        JsonNode usage = JSON.readTree(frames[frames.length - 1].substring("data: ".length()));
        assertEquals(0, usage.get("choices").size());
        for (String count : new String[] {"prompt_tokens", "completion_tokens", "total_tokens"}) {
            assertEquals(whole.get("usage").get(count), usage.get("usage").get(count), count);
        }
        for (int i = 0; i < 4; i++) {
            JsonNode expected = whole.get("choices").get(i);
            assertEquals(expected.get("text").asText(), texts[i].toString(), "choice " + i);
            assertEquals(expected.get("finish_reason").asText(), finish[i], "choice " + i);
        }
    }

    @Test
    void aPromptOverTheContextLengthIsA400NamingItsIndexBeforeAny200() throws Exception {
        String tooLong = "Once upon a time ".repeat(served.model().maxModelLen());
        for (String stream : new String[] {"", ",\"stream\":true"}) {
            HttpResponse<String> r = post(request("[\"Once upon a time\",\"" + tooLong + "\"]", 2, stream));
            assertEquals(400, r.statusCode(), r.body());
            assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
            JsonNode e = JSON.readTree(r.body()).get("error");
            assertEquals("context_length_exceeded", e.get("code").asText());
            assertEquals("max_tokens", e.get("param").asText());
            assertTrue(e.get("message").asText().contains("prompt[1] has "), e.get("message").asText());
            assertEquals(0, submits.get(), "nothing is admitted when any prompt overflows");
        }
        HttpResponse<String> r = post("{\"model\":\"stories260K\",\"prompt\":[\"Once upon a time\",\"" + tooLong + "\"]}");
        JsonNode e = JSON.readTree(r.body()).get("error");
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("prompt[1]", e.get("param").asText());
    }

    @Test
    void whenAdmittingALaterPromptFailsTheAdmittedOnesAreCancelledAndTheErrorIsTheAnswer() throws Exception {
        for (String stream : new String[] {"", ",\"stream\":true"}) {
            failAt.set(2);
            HttpResponse<String> r = post(request("[\"Once upon a time\",\"" + LILY + "\",\"Tom\"]", 1,
                    stream + ",\"ignore_eos\":true"));
            assertEquals(429, r.statusCode(), r.body());
            assertEquals("2", r.headers().firstValue("Retry-After").orElse(null));
            assertEquals("rate_limit_error", JSON.readTree(r.body()).get("error").get("type").asText());
            assertEquals(2, handles.size());
            for (CountingHandle h : handles) {
                assertEquals(1, h.cancels().get());
            }
        }
        assertEquals(0, server.inflight());
        assertEquals(STORY, single("Once upon a time").get("choices").get(0).get("text").asText());
    }

    /** Prompts cancelled because a later one was refused never ran: they are not counted as finished requests. */
    @Test
    void rolledBackPromptsAreNotCountedAsAbortedRequests() throws Exception {
        park.set(true);   // parked prompts finish (CANCELLED) synchronously when cancelled: no timing involved
        double before = abortedRequests();
        failAt.set(2);
        HttpResponse<String> r = post(request("[\"Once upon a time\",\"" + LILY + "\",\"Tom\"]", 1, ""));
        assertEquals(429, r.statusCode(), r.body());
        assertEquals(2, handles.size());
        assertEquals(before, abortedRequests(), 0.0);
    }

    private static double abortedRequests() throws Exception {
        String metrics = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        return metrics.lines().filter(l -> l.startsWith("vllm:request_success_total{") && l.contains("\"abort\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    @Test
    void withEchoAnOutOfVocabularyTokenIsA400NamingItsPromptBeforeAnythingIsAdmitted() throws Exception {
        HttpResponse<String> r = post(request("[[1,2],[1," + Integer.MAX_VALUE + "]]", 1, ",\"echo\":true"));
        assertEquals(400, r.statusCode(), r.body());
        JsonNode e = JSON.readTree(r.body()).get("error");
        assertEquals("prompt[1]", e.get("param").asText());
        assertTrue(e.get("message").asText().startsWith("prompt[1]: token id " + Integer.MAX_VALUE), r.body());
        assertEquals(0, handles.size());
    }

    @Test
    void aPromptTheEngineRejectsIsA400NamingItsIndexAndNoPromptIsAdmitted() throws Exception {
        HttpResponse<String> r = post(request("[[1,2],[1," + Integer.MAX_VALUE + "]]", 1, ""));
        assertEquals(400, r.statusCode(), r.body());
        JsonNode e = JSON.readTree(r.body()).get("error");
        assertEquals("prompt[1]", e.get("param").asText());
        assertTrue(e.get("message").asText().startsWith("prompt[1]: token id " + Integer.MAX_VALUE), r.body());
        assertEquals(0, handles.size(), "every prompt is checked by the engine before the first is submitted");
    }

    @Test
    void aClientThatDisconnectsCancelsEveryPromptOfItsBatch() throws Exception {
        park.set(true);
        submits.set(0);
        handles.clear();
        String body = request("[\"Once upon a time\",\"" + LILY + "\"]", 2, ",\"stream\":true,\"echo\":true");
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder seen = new StringBuilder();
            while (!seen.toString().contains("data: ")) {   // the echo chunks come right after the 200
                int c = in.read();
                assertTrue(c >= 0, "connection closed early: " + seen);
                seen.append((char) c);
            }
            assertTrue(seen.toString().startsWith("HTTP/1.1 200"), seen.toString());
        }
        while (handles.size() < 2 || handles.stream().anyMatch(h -> h.cancels().get() == 0)
                || server.inflight() > 0) {   // bounded by the class timeout
            Thread.sleep(10);
        }
        assertEquals(2, handles.size());
        assertFalse(handles.stream().anyMatch(h -> h.cancels().get() != 1));
    }
}
