package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.engine.api.GenerationRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;

/**
 * Table-driven abuse of every POST route on a real server (stories260K with the chatml template):
 * wrong types, huge / negative / non-finite numbers, deep nesting, oversized bodies, broken
 * encodings, bad logit_bias keys, n / best_of / logprobs extremes, stop lists too long, trailing
 * data. Each case must get a 4xx in OpenAI's error envelope (the exact status, and the field named
 * where the case says so) — never a 5xx, never a hang — and after every family a greedy request
 * still returns llama.cpp's reference text.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class GatewayAbuseTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String COMPLETIONS = "/v1/completions";
    private static final String CHAT = "/v1/chat/completions";
    private static final String COMPLETION = "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"max_tokens\":4";
    private static final String CHAT_BODY = "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
            + "\"max_tokens\":4";
    private static final int ANY_4XX = -1;
    private static TestServer served;
    private static HttpClient client;

    /**
     * One abusive request.
     *
     * @param status the status it must get ({@link #ANY_4XX}: some 4xx)
     * @param param  the field the error must name, or null when any (or none) will do
     */
    record Case(String name, String route, byte[] body, int status, String param) {
        @Override
        public String toString() {
            return route + " " + name;
        }
    }

    @BeforeAll
    static void start() throws Exception {
        served = TestServer.start("--chat-template", "chatml", "--threads", "1", "--max-num-seqs", "8");
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        if (served != null) {
            served.close();
        }
    }

    @TestFactory
    Stream<DynamicNode> everyAbusiveRequestIsA4xxInOpenAisEnvelopeAndTheServerStillGenerates() {
        return families().entrySet().stream().map(f -> {
            List<DynamicNode> tests = new ArrayList<>();
            for (Case c : f.getValue()) {
                tests.add(DynamicTest.dynamicTest(c.toString(), () -> check(c)));
            }
            tests.add(DynamicTest.dynamicTest("after " + f.getKey() + ": greedy output is still the reference",
                    GatewayAbuseTest::stillGenerates));
            return DynamicContainer.dynamicContainer(f.getKey() + " (" + f.getValue().size() + " cases)", tests);
        });
    }

    private static void check(Case c) throws Exception {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(served.url(c.route())))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(c.body())).build(), HttpResponse.BodyHandlers.ofString());
        int status = r.statusCode();
        assertTrue(c.status() == ANY_4XX ? status >= 400 && status < 500 : status == c.status(),
                () -> c + ": status " + status + " " + r.body());
        JsonNode error = JSON.readTree(r.body()).get("error");
        assertTrue(error != null && error.isObject(), () -> c + ": no error envelope: " + r.body());
        assertTrue(error.get("message").isTextual() && !error.get("message").asText().isBlank(), r.body());
        assertTrue(error.get("type").isTextual(), r.body());
        assertTrue(error.has("param") && error.has("code"), r.body());
        assertFalse(error.get("message").asText().contains("internal error"), r.body());
        if (c.param() != null) {
            assertEquals(c.param(), error.get("param").asText(), () -> c + ": " + r.body());
        }
    }

    private static void stillGenerates() throws Exception {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(served.url(COMPLETIONS)))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\","
                        + "\"max_tokens\":12,\"temperature\":0}")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(TestModels.ONCE_UPON_A_TIME_12, JSON.readTree(r.body()).get("choices").get(0).get("text").asText());
        assertTrue(served.model().engine().health().alive());
    }

    /** The cases by family, in a stable order. */
    static Map<String, List<Case>> families() {
        Map<String, List<Case>> f = new LinkedHashMap<>();
        f.put("wrong types", wrongTypes());
        f.put("numbers out of range", numbers());
        f.put("nesting", nesting());
        f.put("body size", sizes());
        f.put("encoding", encodings());
        f.put("logit_bias", logitBias());
        f.put("n, best_of, logprobs", extremes());
        f.put("stops", stops());
        f.put("trailing data", trailing());
        f.put("shape", shapes());
        return f;
    }

    private static List<Case> wrongTypes() {
        List<Case> out = new ArrayList<>();
        Map<String, List<String>> bad = new LinkedHashMap<>();
        bad.put("model", List.of("1", "true", "[]", "{}"));
        bad.put("max_tokens", List.of("\"4\"", "4.5", "true", "[]", "{}"));
        bad.put("temperature", List.of("\"1\"", "true", "[]", "{}"));
        bad.put("top_p", List.of("\"1\"", "false"));
        bad.put("top_k", List.of("\"1\"", "1.5", "[]"));
        bad.put("min_p", List.of("\"0\""));
        bad.put("presence_penalty", List.of("\"0\"", "{}"));
        bad.put("frequency_penalty", List.of("\"0\"", "[]"));
        bad.put("repetition_penalty", List.of("\"1\""));
        bad.put("seed", List.of("\"1\"", "1.5", "1e30", "{}"));
        bad.put("stop", List.of("1", "[1]", "{\"a\":1}", "[\"\"]", "[null]"));
        bad.put("stop_token_ids", List.of("\"1\"", "[1.5]", "[\"a\"]", "{}"));
        bad.put("n", List.of("\"2\"", "2.5", "true", "[]"));
        bad.put("min_tokens", List.of("\"1\"", "[]"));
        bad.put("ignore_eos", List.of("\"yes\"", "1"));
        bad.put("stream", List.of("\"true\"", "1", "{}"));
        bad.put("user", List.of("1", "[]", "{}"));
        bad.put("priority", List.of("\"x\"", "1.5"));
        bad.put("logit_bias", List.of("[]", "\"x\"", "1"));
        bad.put("echo", List.of("\"x\"", "1"));
        bad.put("prompt_logprobs", List.of("\"x\"", "true"));
        for (var e : bad.entrySet()) {
            for (String v : e.getValue()) {
                out.add(field(COMPLETIONS, COMPLETION, e.getKey(), v, 400, e.getKey()));
                out.add(field(CHAT, CHAT_BODY, e.getKey(), v, 400, e.getKey()));
            }
        }
        for (String v : List.of("1", "true", "{}", "[true]", "[[1],\"x\"]", "[]", "\"\"", "[[]]", "[1.5]")) {
            out.add(new Case("prompt=" + v, COMPLETIONS, utf8("{\"model\":\"stories260K\",\"prompt\":" + v + "}"), 400, null));
        }
        out.add(field(COMPLETIONS, COMPLETION, "logprobs", "\"x\"", 400, "logprobs"));
        out.add(field(COMPLETIONS, COMPLETION, "logprobs", "true", 400, "logprobs"));
        out.add(field(CHAT, CHAT_BODY, "logprobs", "1", 400, "logprobs"));
        out.add(field(CHAT, CHAT_BODY, "top_logprobs", "\"x\"", 400, "top_logprobs"));
        out.add(field(COMPLETIONS, COMPLETION + ",\"stream\":true", "stream_options", "1", 400, "stream_options"));
        out.add(field(COMPLETIONS, COMPLETION + ",\"stream\":true", "stream_options", "{\"include_usage\":\"yes\"}", 400,
                "stream_options.include_usage"));
        for (String m : List.of("\"hi\"", "[]", "[1]", "[{\"role\":1}]", "[{\"content\":\"x\"}]",
                "[{\"role\":\"robot\",\"content\":\"x\"}]", "[{\"role\":\"user\",\"content\":1}]",
                "[{\"role\":\"user\",\"content\":[{\"type\":\"text\"}]}]", "[{\"role\":\"user\",\"content\":[1]}]",
                "[{\"role\":\"user\",\"content\":\"x\",\"name\":1}]")) {
            out.add(new Case("messages=" + m, CHAT, utf8("{\"model\":\"stories260K\",\"messages\":" + m + "}"), 400, null));
        }
        out.add(new Case("tokenize prompt=1", "/tokenize", utf8("{\"prompt\":1}"), 400, "prompt"));
        out.add(new Case("tokenize messages=x", "/tokenize", utf8("{\"messages\":\"x\"}"), 400, "messages"));
        out.add(new Case("tokenize both", "/tokenize", utf8("{\"prompt\":\"a\",\"messages\":[]}"), 400, null));
        out.add(new Case("tokenize neither", "/tokenize", utf8("{}"), 400, null));
        out.add(new Case("tokenize add_special_tokens", "/tokenize", utf8("{\"prompt\":\"a\",\"add_special_tokens\":\"x\"}"),
                400, "add_special_tokens"));
        out.add(new Case("detokenize tokens=x", "/detokenize", utf8("{\"tokens\":\"x\"}"), 400, "tokens"));
        out.add(new Case("detokenize tokens=[1.5]", "/detokenize", utf8("{\"tokens\":[1.5]}"), 400, "tokens"));
        out.add(new Case("detokenize missing", "/detokenize", utf8("{}"), 400, "tokens"));
        out.add(new Case("detokenize model=1", "/detokenize", utf8("{\"tokens\":[1],\"model\":1}"), ANY_4XX, null));
        return out;
    }

    private static List<Case> numbers() {
        List<Case> out = new ArrayList<>();
        Map<String, List<String>> bad = new LinkedHashMap<>();
        bad.put("max_tokens", List.of("-1", "0", "-2147483648", "2147483648", "99999999999999999999", "1e400", "-1e400"));
        bad.put("temperature", List.of("-1", "2.0001", "1e400", "-1e400", "-0.5"));
        bad.put("top_p", List.of("0", "-0.1", "1.5", "1e400"));
        bad.put("top_k", List.of("-2", "2147483648", "-99999999999"));
        bad.put("min_p", List.of("-0.1", "1.1", "1e400"));
        bad.put("presence_penalty", List.of("3", "-2.5", "1e400", "-1e400"));
        bad.put("frequency_penalty", List.of("2.01", "-3"));
        bad.put("repetition_penalty", List.of("0", "-1", "1e400"));
        bad.put("seed", List.of("18446744073709551616", "-99999999999999999999"));
        bad.put("priority", List.of("2147483648", "-2147483649"));
        bad.put("min_tokens", List.of("-1", "2147483648"));
        for (var e : bad.entrySet()) {
            for (String v : e.getValue()) {
                String param = e.getKey().equals("max_tokens") ? null : e.getKey();
                out.add(field(COMPLETIONS, COMPLETION.replace(",\"max_tokens\":4", ""), e.getKey(), v, 400, param));
                out.add(field(CHAT, CHAT_BODY.replace(",\"max_tokens\":4", ""), e.getKey(), v, 400, null));
            }
        }
        out.add(field(COMPLETIONS, COMPLETION, "min_tokens", "5", 400, "min_tokens"));   // over max_tokens 4
        out.add(field(CHAT, CHAT_BODY, "min_tokens", "5", 400, "min_tokens"));
        out.add(field(COMPLETIONS, COMPLETION.replace(",\"max_tokens\":4", ""), "max_tokens", "2147483647", 400, "max_tokens"));
        out.add(field(CHAT, CHAT_BODY.replace(",\"max_tokens\":4", ""), "max_completion_tokens", "2147483647", 400,
                "max_completion_tokens"));
        for (String literal : List.of("NaN", "Infinity", "-Infinity", "+1", ".5", "1.", "01", "0x10", "1e", "--1")) {
            out.add(field(COMPLETIONS, COMPLETION, "temperature", literal, 400, null));
        }
        return out;
    }

    private static List<Case> nesting() {
        List<Case> out = new ArrayList<>();
        String deep = "[".repeat(10_000) + "]".repeat(10_000);
        String deepObject = "{\"a\":".repeat(10_000) + "1" + "}".repeat(10_000);
        out.add(new Case("top level depth 10000", COMPLETIONS, utf8(deep), 400, null));
        out.add(new Case("field depth 10000", COMPLETIONS, utf8(COMPLETION + ",\"user\":" + deep + "}"), 400, null));
        out.add(new Case("unknown field object depth 10000", COMPLETIONS, utf8(COMPLETION + ",\"x\":" + deepObject + "}"), 400,
                null));
        out.add(new Case("prompt depth 10000", COMPLETIONS, utf8("{\"model\":\"stories260K\",\"prompt\":" + deep + "}"), 400,
                null));
        out.add(new Case("messages depth 10000", CHAT, utf8("{\"model\":\"stories260K\",\"messages\":" + deep + "}"), 400,
                null));
        out.add(new Case("content depth 10000", CHAT, utf8("{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\","
                + "\"content\":" + deep + "}]}"), 400, null));
        out.add(new Case("logit_bias depth 10000", COMPLETIONS, utf8(COMPLETION + ",\"logit_bias\":" + deepObject + "}"), 400,
                null));
        out.add(new Case("tokenize depth 10000", "/tokenize", utf8("{\"prompt\":" + deep + "}"), 400, null));
        out.add(new Case("detokenize depth 10000", "/detokenize", utf8("{\"tokens\":" + deep + "}"), 400, null));
        out.add(new Case("stream_options depth 10000", COMPLETIONS, utf8(COMPLETION + ",\"stream\":true,\"stream_options\":"
                + deepObject + "}"), 400, null));
        return out;
    }

    private static List<Case> sizes() {
        List<Case> out = new ArrayList<>();
        String tenMegabytes = "x".repeat(10 << 20);
        for (String route : List.of(COMPLETIONS, CHAT, "/tokenize", "/detokenize")) {
            out.add(new Case("10 MB body", route, utf8("{\"prompt\":\"" + tenMegabytes + "\"}"), 413, null));
        }
        out.add(new Case("2M token ids", COMPLETIONS, utf8("{\"model\":\"stories260K\",\"prompt\":["
                + "1,".repeat(2_000_000) + "1]}"), ANY_4XX, null));
        out.add(new Case("200 KB prompt", COMPLETIONS, utf8("{\"model\":\"stories260K\",\"prompt\":\""
                + "Once upon a time ".repeat(12_000) + "\",\"max_tokens\":4}"), 400, "max_tokens"));
        out.add(new Case("200 KB prompt, no max_tokens", COMPLETIONS, utf8("{\"model\":\"stories260K\",\"prompt\":\""
                + "Once upon a time ".repeat(12_000) + "\"}"), 400, "prompt"));
        out.add(new Case("100 KB message", CHAT, utf8("{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"" + "Hi there. ".repeat(10_000) + "\"}],\"max_tokens\":4}"), 400, "max_completion_tokens"));
        out.add(new Case("10000 messages", CHAT, utf8("{\"model\":\"stories260K\",\"messages\":["
                + "{\"role\":\"user\",\"content\":\"Hi\"},".repeat(9_999) + "{\"role\":\"user\",\"content\":\"Hi\"}]}"),
                400, "messages"));
        return out;
    }

    private static List<Case> encodings() {
        List<Case> out = new ArrayList<>();
        byte[] invalidUtf8 = concat(utf8("{\"model\":\"stories260K\",\"prompt\":\"Once "), new byte[] {(byte) 0xC3, 0x28},
                utf8("\",\"max_tokens\":4}"));
        byte[] truncatedUtf8 = concat(utf8("{\"model\":\"stories260K\",\"prompt\":\"Once "), new byte[] {(byte) 0xE2, (byte) 0x82},
                utf8("\"}"));
        byte[] overlong = concat(utf8("{\"model\":\"stories260K\",\"prompt\":\""), new byte[] {(byte) 0xC0, (byte) 0xAF},
                utf8("\"}"));
        byte[] rawNull = concat(utf8("{\"model\":\"stories260K\",\"prompt\":\"Once"), new byte[] {0}, utf8("\"}"));
        byte[] nullOutside = concat(utf8("{\"model\":\"stories260K\","), new byte[] {0}, utf8("\"prompt\":\"Once\"}"));
        for (String route : List.of(COMPLETIONS, CHAT, "/tokenize", "/detokenize")) {
            out.add(new Case("invalid UTF-8", route, invalidUtf8, 400, null));
            out.add(new Case("truncated UTF-8", route, truncatedUtf8, 400, null));
            out.add(new Case("overlong UTF-8", route, overlong, 400, null));
            out.add(new Case("raw NUL in a string", route, rawNull, 400, null));
            out.add(new Case("raw NUL between fields", route, nullOutside, 400, null));
            out.add(new Case("empty body", route, new byte[0], 400, null));
            out.add(new Case("body null", route, utf8("null"), 400, null));
            out.add(new Case("body array", route, utf8("[]"), 400, null));
            out.add(new Case("body string", route, utf8("\"x\""), 400, null));
            out.add(new Case("body number", route, utf8("1"), 400, null));
            out.add(new Case("unterminated", route, utf8("{\"model\":\"stories260K\",\"prompt\":\"Once"), 400, null));
            out.add(new Case("bad escape", route, utf8("{\"model\":\"stories260K\",\"prompt\":\"\\q\"}"), 400, null));
            out.add(new Case("single quotes", route, utf8("{'model':'stories260K'}"), 400, null));
            out.add(new Case("comment", route, utf8("{/* c */\"model\":\"stories260K\"}"), 400, null));
        }
        out.add(new Case("NUL in a token prompt", COMPLETIONS, utf8("{\"model\":\"stories260K\",\"prompt\":[1,\u0000 2]}"), 400,
                null));
        return out;
    }

    private static List<Case> logitBias() {
        List<Case> out = new ArrayList<>();
        for (String key : List.of("-1", "99999999", "512", "2147483648", "abc", "", "1.5", " 1", "0x10", "1e3")) {
            out.add(field(COMPLETIONS, COMPLETION, "logit_bias", "{\"" + key + "\":1}", 400, "logit_bias"));
            out.add(field(CHAT, CHAT_BODY, "logit_bias", "{\"" + key + "\":1}", 400, "logit_bias"));
        }
        for (String value : List.of("\"x\"", "101", "-101", "1e400", "[]", "{}", "true", "null")) {
            out.add(field(COMPLETIONS, COMPLETION, "logit_bias", "{\"1\":" + value + "}", 400, "logit_bias"));
        }
        StringBuilder many = new StringBuilder("{");
        for (int i = 0; i < 600; i++) {
            many.append(i == 0 ? "" : ",").append('"').append(i).append("\":1");
        }
        out.add(field(COMPLETIONS, COMPLETION, "logit_bias", many.append('}').toString(), 400, "logit_bias"));
        return out;
    }

    private static List<Case> extremes() {
        List<Case> out = new ArrayList<>();
        for (String n : List.of("0", "-1", "65", "2147483647", "-2147483648", "1e10", "1000000")) {
            out.add(field(COMPLETIONS, COMPLETION, "n", n, 400, "n"));
            out.add(field(CHAT, CHAT_BODY, "n", n, 400, "n"));
        }
        for (String b : List.of("0", "2", "2147483647", "-1", "\"x\"", "1.5")) {
            out.add(field(COMPLETIONS, COMPLETION, "best_of", b, 400, "best_of"));
        }
        for (String lp : List.of("21", "-1", "2147483647", "-2147483648", "1e10")) {
            out.add(field(COMPLETIONS, COMPLETION, "logprobs", lp, 400, "logprobs"));
            out.add(field(CHAT, CHAT_BODY + ",\"logprobs\":true", "top_logprobs", lp, 400, "top_logprobs"));
            out.add(field(COMPLETIONS, COMPLETION, "prompt_logprobs", lp, 400, "prompt_logprobs"));
        }
        out.add(field(CHAT, CHAT_BODY, "top_logprobs", "5", 400, "top_logprobs"));   // without logprobs: true
        out.add(new Case("n 64 on a batch of 64 prompts with max_tokens 2147483647", COMPLETIONS,
                utf8("{\"model\":\"stories260K\",\"n\":64,\"max_tokens\":2147483647,\"prompt\":["
                        + "\"a\",".repeat(63) + "\"a\"]}"), 400, null));
        out.add(new Case("65 prompts", COMPLETIONS, utf8("{\"model\":\"stories260K\",\"prompt\":[" + "\"a\",".repeat(64)
                + "\"a\"]}"), 400, "prompt"));
        return out;
    }

    private static List<Case> stops() {
        List<Case> out = new ArrayList<>();
        String thousand = "[" + String.join(",", java.util.Collections.nCopies(1000, "\"x\"")) + "]";
        String many = "[" + String.join(",", java.util.Collections.nCopies(GenerationRequest.MAX_STOPS + 1, "\"y\"")) + "]";
        String longStop = "\"" + "z".repeat(GenerationRequest.MAX_STOP_CHARS + 1) + "\"";
        for (String route : List.of(COMPLETIONS, CHAT)) {
            String base = route.equals(CHAT) ? CHAT_BODY : COMPLETION;
            out.add(field(route, base, "stop", thousand, 400, "stop"));
            out.add(field(route, base, "stop", many, 400, "stop"));
            out.add(field(route, base, "stop", longStop, 400, "stop"));
            out.add(field(route, base, "stop", "[\"ok\"," + longStop + "]", 400, "stop"));
            out.add(field(route, base, "stop", "\"\\ud800\"", 400, "stop"));
            out.add(field(route, base, "stop", "[\"a\\udc00b\"]", 400, "stop"));
            out.add(field(route, base, "stop_token_ids", "[512]", 400, "stop_token_ids"));
            out.add(field(route, base, "stop_token_ids", "[-1]", 400, "stop_token_ids"));
            out.add(field(route, base, "stop_token_ids", "[2147483648]", 400, "stop_token_ids"));
            out.add(field(route, base, "stop_token_ids", "[" + "1,".repeat(GenerationRequest.MAX_STOP_TOKEN_IDS) + "1]", 400,
                    "stop_token_ids"));
        }
        return out;
    }

    private static List<Case> trailing() {
        List<Case> out = new ArrayList<>();
        for (String route : List.of(COMPLETIONS, CHAT, "/tokenize", "/detokenize")) {
            String base = switch (route) {
                case COMPLETIONS -> COMPLETION + "}";
                case CHAT -> CHAT_BODY + "}";
                case "/tokenize" -> "{\"prompt\":\"Once\"}";
                default -> "{\"tokens\":[1,2]}";
            };
            for (String tail : List.of("xyz", base, "{}", "]", "}", ",", "null", "1", "\"s\"", " x")) {
                out.add(new Case("trailing " + (tail.equals(base) ? "second document" : tail), route, utf8(base + tail), 400,
                        null));
            }
        }
        return out;
    }

    private static List<Case> shapes() {
        List<Case> out = new ArrayList<>();
        out.add(new Case("chat body on completions", COMPLETIONS, utf8(CHAT_BODY + "}"), 400, "prompt"));
        out.add(new Case("completions body on chat", CHAT, utf8(COMPLETION + "}"), 400, "messages"));
        out.add(new Case("unknown model", COMPLETIONS, utf8(COMPLETION.replace("stories260K", "gpt-9") + "}"), 404, "model"));
        out.add(new Case("missing model", COMPLETIONS, utf8("{\"prompt\":\"Once\"}"), 400, "model"));
        out.add(new Case("null model", CHAT, utf8("{\"model\":null,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"), 400,
                "model"));
        out.add(new Case("token ids outside the vocabulary", COMPLETIONS,
                utf8("{\"model\":\"stories260K\",\"prompt\":[1,99999]}"), 400, "prompt"));
        out.add(new Case("negative token id", COMPLETIONS, utf8("{\"model\":\"stories260K\",\"prompt\":[-7]}"), 400, "prompt"));
        out.add(new Case("tools", CHAT, utf8(CHAT_BODY + ",\"tools\":[{\"type\":\"function\"}]}"), 400, "tools[0].function"));
        out.add(new Case("tool message", CHAT, utf8("{\"model\":\"stories260K\",\"messages\":[{\"role\":\"tool\","
                + "\"content\":\"x\"}]}"), 400, null));
        out.add(new Case("image part", CHAT, utf8("{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":"
                + "[{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}}]}]}"), 400, null));
        out.add(new Case("stream_options without stream", COMPLETIONS, utf8(COMPLETION
                + ",\"stream_options\":{\"include_usage\":true}}"), 400, "stream_options"));
        out.add(new Case("prompt_logprobs with stream", COMPLETIONS, utf8(COMPLETION + ",\"stream\":true,\"prompt_logprobs\":1}"),
                400, "prompt_logprobs"));
        out.add(new Case("detokenize ids outside the vocabulary", "/detokenize", utf8("{\"tokens\":[1,99999999]}"), 400,
                "tokens"));
        out.add(new Case("detokenize unknown model", "/detokenize", utf8("{\"tokens\":[1],\"model\":\"gpt-9\"}"), 404, "model"));
        return out;
    }

    /** {@code base} (an object's text without its closing brace) with {@code name} set to the JSON {@code value}. */
    private static Case field(String route, String base, String name, String value, int status, String param) {
        return new Case(name + "=" + abbreviate(value), route, utf8(base + ",\"" + name + "\":" + value + "}"), status, param);
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 37) + "... (" + s.length() + " chars)";
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
