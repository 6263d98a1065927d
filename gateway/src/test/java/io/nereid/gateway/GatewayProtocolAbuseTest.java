package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * HTTP/1.1 abuse over raw sockets against a real server (stories260K, {@code --request-timeout 1}):
 * request smuggling, unknown transfer codings, oversized heads, garbage, pipelining, Expect, bodies
 * that never end and clients that leave mid-upload. Every refusal is a 4xx / 501 in OpenAI's
 * envelope, framing errors close the connection, nothing is logged as a server fault, and the server
 * answers a good request after each case.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayProtocolAbuseTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String BODY = "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"max_tokens\":12,"
            + "\"temperature\":0}";
    private static TestServer served;
    private static final List<LogRecord> serverFaults = new ArrayList<>();
    private static final Handler FAULTS = new Handler() {
        @Override
        public void publish(LogRecord r) {
            String m = r.getMessage() == null ? "" : new java.util.logging.SimpleFormatter().formatMessage(r);
            if (r.getLevel().intValue() >= Level.WARNING.intValue() && (m.contains("500") || m.contains("internal error"))) {
                synchronized (serverFaults) {
                    serverFaults.add(r);
                }
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeAll
    static void start() throws Exception {
        Logger.getLogger("io.nereid.gateway").addHandler(FAULTS);
        served = TestServer.start("--threads", "1", "--request-timeout", "1");
    }

    @AfterAll
    static void stop() {
        Logger.getLogger("io.nereid.gateway").removeHandler(FAULTS);
        if (served != null) {
            served.close();
        }
    }

    /** After every case: nothing logged as a 500, and a good request on a new connection gives the reference text. */
    @AfterEach
    void theServerStillServesAndLoggedNoFault() throws Exception {
        Response r = exchange(post("/v1/completions", BODY), 1).getFirst();
        assertEquals(200, r.status(), r.toString());
        assertEquals(TestModels.ONCE_UPON_A_TIME_12, JSON.readTree(r.body()).get("choices").get(0).get("text").asText());
        synchronized (serverFaults) {
            assertTrue(serverFaults.isEmpty(), () -> "logged as server faults: " + serverFaults.stream()
                    .map(LogRecord::getMessage).toList());
        }
    }

    @Test
    void contentLengthWithTransferEncodingIsA400AndTheSmuggledRequestIsNeverAnswered() throws Exception {
        String body = "{\"model\":\"stories260K\",\"prompt\":\"x\",\"max_tokens\":1}";
        String smuggled = "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
        String chunked = Integer.toHexString(body.length()) + "\r\n" + body + "\r\n0\r\n\r\n";
        String request = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + (chunked.length() + smuggled.length()) + "\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked + smuggled;
        Raw raw = send(request);
        assertEquals(1, raw.responses().size(), raw.text());
        assertError(raw.responses().getFirst(), 400, "Content-Length and Transfer-Encoding");
        assertTrue(raw.closed(), "the connection must be closed after a conflicting framing: " + raw.text());
    }

    @Test
    void aTransferCodingOtherThanChunkedIs501AndClosesTheConnection() throws Exception {
        for (String coding : List.of("xchunked", "gzip, chunked", "identity", "chunked;q=1")) {
            Raw raw = send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: " + coding + "\r\n\r\n" + BODY + "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n");
            assertEquals(1, raw.responses().size(), coding + ": " + raw.text());
            assertError(raw.responses().getFirst(), 501, "not supported");
            assertTrue(raw.closed(), coding);
        }
        Raw twice = send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked"
                + "\r\n\r\n0\r\n\r\n");
        assertError(twice.responses().getFirst(), 400, "applied 2 times");
        assertTrue(twice.closed());
    }

    @Test
    void malformedOrConflictingContentLengthsAre400AndClose() throws Exception {
        for (String lengths : List.of("Content-Length: 5\r\nContent-Length: 6", "Content-Length: -1", "Content-Length: abc",
                "Content-Length: 99999999999999999999999")) {
            Raw raw = send("POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + lengths + "\r\n\r\n{}{}{}");
            assertEquals(1, raw.responses().size(), lengths + ": " + raw.text());
            assertError(raw.responses().getFirst(), 400, null);
            assertTrue(raw.closed(), lengths);
        }
    }

    @Test
    void anOversizedHeadIs431AndAnOversizedRequestLineIs414() throws Exception {
        Raw headers = send("GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(20_000) + "\r\n\r\n");
        assertError(headers.responses().getFirst(), 431, "too large");
        assertTrue(headers.closed());
        Raw many = send("GET /v1/models HTTP/1.1\r\nHost: x\r\n" + "X-H: v\r\n".repeat(3_000) + "\r\n");
        assertError(many.responses().getFirst(), 431, null);
        Raw line = send("GET /v1/models?" + "q".repeat(10_000) + " HTTP/1.1\r\nHost: x\r\n\r\n");
        assertError(line.responses().getFirst(), 414, "too long");
        assertTrue(line.closed());
    }

    @Test
    void garbageIsA400AndClosesTheConnection() throws Exception {
        for (String garbage : List.of("HELLO\r\n\r\n", "GET\r\n\r\n", "GET / HTTP/1.1 extra\r\n\r\n",
                "POST /v1/completions HTTP/1.1\r\nNo colon here\r\n\r\n")) {
            Raw raw = send(garbage);
            assertFalse(raw.responses().isEmpty(), garbage);
            assertError(raw.responses().getFirst(), 400, null);
            assertTrue(raw.closed(), garbage);
        }
        Raw version = send("GET /v1/models HTTP/9.9\r\nHost: x\r\n\r\n");
        assertError(version.responses().getFirst(), 505, "HTTP/9.9");
        assertTrue(version.closed());
    }

    @Test
    void aConnectionThatNeverCompletesARequestHeadIsClosedAfterTheRequestTimeout() throws Exception {
        // Control characters before a request line are skipped (RFC 9112 section 2.2), so the decoder waits on.
        for (String head : List.of("\u0000\u0001\u0002\r\n\r\n", "", "POST /v1/completions HTTP/1.1\r\nHost: x\r\n")) {
            try (Socket s = socket()) {
                s.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
                s.getOutputStream().flush();
                long start = System.nanoTime();
                Raw raw = readToEnd(s.getInputStream());   // read timeout 30 s: only the server can end this early
                double seconds = (System.nanoTime() - start) / 1e9;
                assertTrue(raw.closed() && seconds < 10, "open after " + seconds + " s: " + raw.text());
                assertTrue(raw.responses().isEmpty(), raw.text());
            }
        }
        // A keep-alive connection left idle after a response is closed the same way.
        try (Socket s = socket()) {
            s.getOutputStream().write(post("/tokenize", "{\"prompt\":\"Once\"}").getBytes(StandardCharsets.UTF_8));
            assertEquals(200, readResponse(s.getInputStream()).status());
            long start = System.nanoTime();
            assertTrue(readToEnd(s.getInputStream()).closed());
            assertTrue((System.nanoTime() - start) / 1e9 < 10);
        }
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrderOnOneConnection() throws Exception {
        StringBuilder three = new StringBuilder();
        for (String prompt : List.of("Once", "Once upon", "Once upon a time")) {
            three.append(post("/tokenize", "{\"prompt\":\"" + prompt + "\"}"));
        }
        List<Response> responses = exchange(three.toString(), 3);
        assertEquals(3, responses.size());
        int last = 0;
        for (Response r : responses) {
            assertEquals(200, r.status(), r.toString());
            int count = JSON.readTree(r.body()).get("count").asInt();
            assertTrue(count > last, "responses out of order: " + responses);
            last = count;
        }
    }

    @Test
    void anExpectationOtherThan100ContinueIs417AndAHundredContinueIsHonoured() throws Exception {
        Raw bad = send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 999-nope\r\n"
                + "Content-Length: " + BODY.length() + "\r\n\r\n" + BODY);
        assertError(bad.responses().getFirst(), 417, "999-nope");

        try (Socket s = socket()) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                    + "Content-Length: " + BODY.length() + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String interim = readHead(s.getInputStream());
            assertTrue(interim.startsWith("HTTP/1.1 100 Continue"), interim);
            out.write(BODY.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Response ok = readResponse(s.getInputStream());
            assertEquals(200, ok.status(), ok.toString());
        }
    }

    @Test
    void aChunkedBodyThatNeverEndsIs408AfterTheRequestTimeoutAndTheConnectionCloses() throws Exception {
        for (String head : List.of("Transfer-Encoding: chunked\r\n\r\n5\r\n{\"mod\r\n",
                "Content-Length: 1000\r\n\r\n{\"model\":")) {
            try (Socket s = socket()) {
                s.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + head).getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                long start = System.nanoTime();
                Response r = readResponse(s.getInputStream());   // the socket stays open: only the server ends this
                double seconds = (System.nanoTime() - start) / 1e9;
                assertError(r, 408, "--request-timeout");
                assertTrue(seconds < 10, "408 after " + seconds + " s");
                assertTrue(readToEnd(s.getInputStream()).closed(), "the connection must be closed after a 408");
            }
        }
    }

    @Test
    void aClientThatLeavesMidUploadIsNeitherAnsweredNorLoggedAsAServerFault() throws Exception {
        for (String head : List.of("Content-Length: 1000\r\n\r\n{\"model\":\"stories260K\",",
                "Transfer-Encoding: chunked\r\n\r\n20\r\n{\"model\":\"sto")) {
            try (Socket s = socket()) {
                s.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + head).getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                Thread.sleep(100);
            }
        }
        Thread.sleep(300);   // the server notices the closes; @AfterEach checks the log
    }

    @Test
    void aKnownPathWithAnotherMethodIs405WithAllow() throws Exception {
        Raw raw = send("GET /v1/completions HTTP/1.1\r\nHost: x\r\n\r\n");
        Response r = raw.responses().getFirst();
        assertError(r, 405, "takes POST");
        assertTrue(r.head().toLowerCase().contains("\r\nallow: post"), r.head());
        assertError(send("DELETE /v1/models HTTP/1.1\r\nHost: x\r\n\r\n").responses().getFirst(), 405, null);
        assertError(send("GET /no/such HTTP/1.1\r\nHost: x\r\n\r\n").responses().getFirst(), 404, null);
    }

    // ---- raw HTTP ----

    record Response(int status, String head, String body) {
    }

    /** Everything the server sent until it closed the connection or went quiet for 2 s. */
    record Raw(List<Response> responses, boolean closed, String text) {
    }

    private static Socket socket() throws IOException {
        Socket s = new Socket("127.0.0.1", served.server().port());
        s.setSoTimeout(30_000);
        return s;
    }

    private static String post(String path, String body) {
        return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
    }

    private static Raw send(String request) throws IOException {
        try (Socket s = socket()) {
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            s.setSoTimeout(2_000);
            return readToEnd(s.getInputStream());
        }
    }

    /** Sends {@code requests} on one connection and reads {@code count} responses. */
    private static List<Response> exchange(String requests, int count) throws IOException {
        try (Socket s = socket()) {
            s.getOutputStream().write(requests.getBytes(StandardCharsets.UTF_8));
            s.getOutputStream().flush();
            List<Response> out = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                out.add(readResponse(s.getInputStream()));
            }
            return out;
        }
    }

    private static Raw readToEnd(InputStream in) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        boolean closed = false;
        byte[] buf = new byte[8192];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                all.write(buf, 0, n);
            }
            closed = true;
        } catch (SocketTimeoutException quiet) {
            // still open
        } catch (SocketException reset) {
            closed = true;
        }
        String text = all.toString(StandardCharsets.UTF_8);
        List<Response> responses = new ArrayList<>();
        java.io.ByteArrayInputStream again = new java.io.ByteArrayInputStream(all.toByteArray());
        while (again.available() > 0) {
            responses.add(readResponse(again));
        }
        return new Raw(responses, closed, text);
    }

    private static String readHead(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("connection closed in a response head: " + head);
            }
            head.append((char) c);
        }
        return head.toString();
    }

    /** One response with a Content-Length body (every response these cases get has one). */
    private static Response readResponse(InputStream in) throws IOException {
        String head = readHead(in);
        int status = Integer.parseInt(head.substring(9, 12));
        int length = 0;
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        byte[] body = in.readNBytes(length);
        return new Response(status, head, new String(body, StandardCharsets.UTF_8));
    }

    private static void assertError(Response r, int status, String messagePart) throws IOException {
        assertEquals(status, r.status(), r.toString());
        JsonNode error = JSON.readTree(r.body()).get("error");
        assertTrue(error != null && error.get("message").isTextual(), r.toString());
        assertTrue(error.get("type").isTextual() && error.has("param") && error.has("code"), r.toString());
        if (messagePart != null) {
            assertTrue(error.get("message").asText().contains(messagePart), r.toString());
        }
    }
}
