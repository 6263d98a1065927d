package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Connections stay alive after a streamed response: three requests (streamed completion, streamed
 * chat, whole completion) on one HTTP/1.1 socket, each answered completely, read with a strict
 * chunked-encoding parser so a response that ran into the next one would fail here.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GatewayKeepAliveTest {

    private static TestServer server;

    @BeforeAll
    static void start() throws Exception {
        server = TestServer.start("--served-model-name", "stories260K", "--threads", "1", "--chat-template", "chatml");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void oneSocketCarriesSeveralStreamedResponses() throws Exception {
        String completion = "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"temperature\":0,\"max_tokens\":12";
        String chat = "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":5,"
                + "\"stream\":true}";
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.server().port())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();

            send(out, "/v1/completions", completion + ",\"stream\":true}");
            String first = readResponse(in);
            assertTrue(first.contains("text/event-stream"), first);
            assertTrue(first.endsWith("data: [DONE]\n\n"), first);
            StringBuilder text = new StringBuilder();
            for (String line : first.split("\n")) {
                if (line.startsWith("data: {")) {
                    int at = line.indexOf("\"text\":\"") + 8;
                    text.append(line, at, line.indexOf('"', at));
                }
            }
            assertEquals(TestModels.ONCE_UPON_A_TIME_12, text.toString());

            send(out, "/v1/chat/completions", chat);
            String second = readResponse(in);
            assertTrue(second.contains("chat.completion.chunk") && second.endsWith("data: [DONE]\n\n"), second);

            send(out, "/v1/completions", completion + "}");
            String third = readResponse(in);
            assertTrue(third.contains("\"text\":\"" + TestModels.ONCE_UPON_A_TIME_12 + "\""), third);
        }
    }

    private static void send(OutputStream out, String path, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                + b.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(b);
        out.flush();
    }

    /** One response: status 200, no "Connection: close"; returns the header block, a blank line, then the body. */
    private static String readResponse(InputStream in) throws IOException {
        String head = line(in);
        assertTrue(head.startsWith("HTTP/1.1 200"), head);
        StringBuilder headers = new StringBuilder();
        int length = -1;
        boolean chunked = false;
        for (String h; !(h = line(in)).isEmpty(); ) {
            String lower = h.toLowerCase(Locale.ROOT);
            assertTrue(!lower.startsWith("connection:") || !lower.contains("close"), h);
            chunked |= lower.startsWith("transfer-encoding:") && lower.contains("chunked");
            if (lower.startsWith("content-length:")) {
                length = Integer.parseInt(h.substring(15).trim());
            }
            headers.append(h).append('\n');
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (chunked) {
            for (int size; (size = Integer.parseInt(line(in).trim(), 16)) > 0; ) {
                body.write(in.readNBytes(size));
                assertEquals("", line(in), "chunk not followed by CRLF");
            }
            assertEquals("", line(in), "no CRLF after the last chunk");
        } else {
            assertTrue(length >= 0, "neither chunked nor Content-Length: " + headers);
            body.write(in.readNBytes(length));
        }
        return headers + "\n" + body.toString(StandardCharsets.UTF_8);
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int c; (c = in.read()) != '\n'; ) {
            if (c < 0) {
                throw new IOException("connection closed after: " + sb);
            }
            if (c != '\r') {
                sb.append((char) c);
            }
        }
        return sb.toString();
    }
}
