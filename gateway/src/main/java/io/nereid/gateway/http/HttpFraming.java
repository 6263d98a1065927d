package io.nereid.gateway.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.nereid.openapi.ErrorResponse;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.impl.VertxHttpRequestDecoder;
import io.vertx.core.net.impl.ConnectionBase;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP/1.1 message-framing rules (RFC 9112 section 6) that Netty's request decoder relaxes,
 * enforced before any route sees the request, and the answer to every request the decoder
 * refuses: an OpenAI-shaped error, then the connection closed (what follows on it cannot be
 * trusted to start a new request).
 *
 * <pre>
 *   Content-Length + Transfer-Encoding      → 400  (section 6.3: a request-smuggling vector; Netty
 *                                                   would drop Content-Length and go on)
 *   Transfer-Encoding other than "chunked"  → 501  (section 6.1: unknown coding, e.g. "xchunked", "gzip, chunked")
 *   "chunked" applied more than once        → 400  (section 6.1)
 *   request line too long                   → 414
 *   header block too large                  → 431
 *   an HTTP version other than 1.1 and 1.0  → 505
 *   anything else the decoder cannot parse  → 400
 * </pre>
 *
 * <p>A connection that carries no request in progress must deliver a complete request head within
 * the request timeout, or it is closed ({@code HeadTimeout}): new connections and idle keep-alive
 * ones alike.
 *
 * <p>The rules live in a subclass of Vert.x's own decoder that replaces it in each new
 * connection's pipeline ({@link #install}): Netty checks the headers after parsing them in
 * {@code isContentAlwaysEmpty}, and a request whose decoder result is a failure goes to
 * {@link #answer} instead of the router. This uses Vert.x 5's internal connection class to reach
 * the pipeline; {@code GatewayProtocolAbuseTest} fails if an upgrade breaks it.
 *
 * <p>Threads: everything runs on the connection's event loop.
 */
final class HttpFraming {

    private static final String DECODER = "httpDecoder";
    private static final String HEAD_TIMEOUT = "nereidHeadTimeout";
    private static final String VERTX_HANDLER = "handler";

    private HttpFraming() {
    }

    /** A framing rule the request breaks: the status to answer and why. */
    static final class FramingException extends RuntimeException {
        private final int status;

        FramingException(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }

        int status() {
            return status;
        }
    }

    /**
     * Vert.x's request decoder plus the framing rules above. After a request breaks them, every
     * later byte of the connection is discarded: whatever it holds (a smuggled second request) is
     * never parsed, let alone answered.
     */
    private static final class StrictDecoder extends VertxHttpRequestDecoder {
        private boolean refused;

        StrictDecoder(HttpServerOptions options) {
            super(options);
        }

        @Override
        protected boolean isContentAlwaysEmpty(HttpMessage msg) {
            FramingException broken = check(msg.protocolVersion(), msg.headers());
            if (broken != null) {
                msg.setDecoderResult(DecoderResult.failure(broken));
                refused = true;
            }
            return super.isContentAlwaysEmpty(msg);
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
            if (refused) {
                in.skipBytes(in.readableBytes());
                return;
            }
            super.decode(ctx, in, out);
        }
    }

    /**
     * Waits for request heads: a connection that holds no request in progress (a new one, or an
     * idle keep-alive one) and receives no complete request head for {@code millis} is closed,
     * silently (RFC 9112 section 9.5), so a client that trickles a head, or sends bytes the decoder
     * skips, cannot hold a connection forever. A request's body has its own deadline in the router.
     */
    private static final class HeadTimeout extends ChannelDuplexHandler {
        private final long millis;
        private int inProgress;   // requests whose head arrived and whose response has not ended
        private ScheduledFuture<?> timer;

        HeadTimeout(long millis) {
            this.millis = millis;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            arm(ctx);
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            disarm();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            disarm();
            ctx.fireChannelInactive();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof HttpRequest) {
                inProgress++;
                disarm();
            }
            ctx.fireChannelRead(msg);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            // A response ends with its last content; a 1xx interim response (100 Continue) ends nothing.
            if (msg instanceof LastHttpContent && !(msg instanceof HttpResponse r && r.status().code() < 200)) {
                ChannelPromise p = promise.unvoid();
                p.addListener(f -> {
                    if (inProgress > 0 && --inProgress == 0) {
                        arm(ctx);
                    }
                });
                ctx.write(msg, p);
            } else {
                ctx.write(msg, promise);
            }
        }

        private void arm(ChannelHandlerContext ctx) {
            disarm();
            timer = ctx.executor().schedule(() -> {
                if (inProgress == 0) {
                    ctx.close();
                }
            }, millis, TimeUnit.MILLISECONDS);
        }

        private void disarm() {
            if (timer != null) {
                timer.cancel(false);
                timer = null;
            }
        }
    }

    /**
     * The connection handler: puts the strict decoder in place of Vert.x's, and the head timeout
     * ({@code headTimeoutMillis}) after it, before the first request is read.
     */
    static void install(HttpConnection connection, HttpServerOptions options, long headTimeoutMillis) {
        if (connection instanceof ConnectionBase base) {
            ChannelPipeline pipeline = base.channel().pipeline();
            if (pipeline.get(DECODER) instanceof VertxHttpRequestDecoder && !(pipeline.get(DECODER) instanceof StrictDecoder)) {
                pipeline.replace(DECODER, DECODER, new StrictDecoder(options));
                // Next to Vert.x's own handler: it sees decoded requests coming in and responses before they are encoded.
                HeadTimeout timeout = new HeadTimeout(headTimeoutMillis);
                if (pipeline.get(VERTX_HANDLER) != null) {
                    pipeline.addBefore(VERTX_HANDLER, HEAD_TIMEOUT, timeout);
                } else {
                    pipeline.addLast(HEAD_TIMEOUT, timeout);
                }
            }
        }
    }

    /** Whether {@code connection} decodes with the strict decoder (for tests). */
    static boolean installed(HttpConnection connection) {
        return connection instanceof ConnectionBase base && base.channel().pipeline().get(DECODER) instanceof StrictDecoder;
    }

    /**
     * The framing rule a request's headers break, or null. Pure.
     */
    static FramingException check(HttpVersion version, HttpHeaders headers) {
        if (!version.equals(HttpVersion.HTTP_1_1) && !version.equals(HttpVersion.HTTP_1_0)) {
            return new FramingException(505, "HTTP version " + version.text() + " is not supported (HTTP/1.1 and HTTP/1.0)");
        }
        List<String> values = headers.getAll(HttpHeaderNames.TRANSFER_ENCODING);
        if (values.isEmpty()) {
            return null;
        }
        if (headers.contains(HttpHeaderNames.CONTENT_LENGTH)) {
            return new FramingException(400, "the request has both Content-Length and Transfer-Encoding (RFC 9112"
                    + " section 6.3); send one");
        }
        List<String> codings = new ArrayList<>();
        for (String v : values) {
            for (String c : v.split(",")) {
                if (!c.isBlank()) {
                    codings.add(c.trim().toLowerCase(Locale.ROOT));
                }
            }
        }
        for (String c : codings) {
            if (!c.equals("chunked")) {
                return new FramingException(501, "transfer coding '" + c + "' is not supported (only chunked)");
            }
        }
        if (codings.size() != 1) {
            return new FramingException(400, codings.isEmpty() ? "an empty Transfer-Encoding header"
                    : "the chunked transfer coding is applied " + codings.size() + " times (RFC 9112 section 6.1)");
        }
        return null;
    }

    /** The server's invalid-request handler: the status the decoder failure maps to, an error body, then close. */
    static void answer(HttpServerRequest request) {
        Throwable cause = request.decoderResult().cause();
        int status;
        String message;
        switch (cause) {
            case FramingException f -> {
                status = f.status();
                message = f.getMessage();
            }
            case TooLongHttpLineException l -> {
                status = 414;
                message = "the request line is too long: " + l.getMessage();
            }
            case TooLongHttpHeaderException h -> {
                status = 431;
                message = "the request headers are too large: " + h.getMessage();
            }
            case null -> {
                status = 400;
                message = "malformed HTTP request";
            }
            default -> {
                status = 400;
                message = "malformed HTTP request: " + cause.getMessage();
            }
        }
        String type = status >= 500 ? "server_error" : "invalid_request_error";
        String code = switch (status) {
            case 414 -> "uri_too_long";
            case 431 -> "headers_too_large";
            case 501 -> "not_implemented";
            case 505 -> "http_version_not_supported";
            default -> "bad_request";
        };
        byte[] body = SseChunks.json(ErrorResponse.of(message, type, null, code)).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        request.response().setStatusCode(status).putHeader("Content-Type", "application/json")
                .putHeader("Connection", "close").end(io.vertx.core.buffer.Buffer.buffer(body));
        request.connection().close();   // now, before a pipelined request behind this one is dispatched
    }
}
