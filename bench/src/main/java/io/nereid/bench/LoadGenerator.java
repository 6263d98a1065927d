package io.nereid.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Sends a run's requests and records each one ({@link RecordedRequest}): the send time, every SSE
 * event's arrival time and payload, and how it ended. Each request runs on its own virtual thread
 * with the JDK {@link HttpClient} reading the stream line by line; the arrival time is taken as
 * each line is read. A request still unfinished after {@code --request-timeout} has its thread
 * interrupted and is recorded as a timeout.
 * <p>
 * Closed loop ({@code --concurrency N}): N workers, each sends its next request when the previous one
 * ends. Open loop ({@code --request-rate R}): requests start at Poisson arrival times (exponential
 * gaps of mean 1/R, from the seed) whatever is in flight. Offline ({@code --scenario offline}): the
 * open loop with every arrival at time 0, i.e. all requests sent at once.
 * <p>
 * With {@code --max-errors N}, the N-th failed request (warm-up included) stops the run: no new
 * request is sent, those in flight finish, and {@link #stoppedEarly()} says so.
 * <p>
 * {@link #run} blocks the caller until every request has ended; {@code onDone} is called from the
 * request threads (concurrently) as each ends. {@link #recorded()} may be read at any time, e.g.
 * from a shutdown hook for a partial report.
 */
public final class LoadGenerator implements AutoCloseable {
    private final BenchConfig config;
    private final URI uri;
    private final HttpClient client;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "bench-timeouts");
        t.setDaemon(true);
        return t;
    });
    private final ConcurrentLinkedQueue<RecordedRequest> recorded = new ConcurrentLinkedQueue<>();
    private final AtomicInteger failures = new AtomicInteger();
    private volatile boolean stopped;
    private final GrpcStreamSender grpc;   // --endpoint grpc-stream, else null

    public LoadGenerator(BenchConfig config) {
        this.config = config;
        this.uri = URI.create(config.url() + path(config));
        this.grpc = config.endpoint().equals("grpc-stream")
                ? new GrpcStreamSender(config.grpcAddress(), config.model(), config.apiKey(), config.timeoutS()) : null;
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .executor(Executors.newVirtualThreadPerTaskExecutor())
                .build();
    }

    /** The route {@code --endpoint} names. */
    static String path(BenchConfig config) {
        return switch (config.endpoint()) {
            case "chat" -> "/v1/chat/completions";
            case "responses" -> "/v1/responses";
            case "grpc-stream" -> "/inference.GRPCInferenceService/ModelStreamInfer";
            case "kserve-generate" -> "/v2/models/" + java.net.URLEncoder.encode(config.model(),
                    java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20") + "/generate_stream";
            default -> "/v1/completions";
        };
    }

    /** Sends the warm-up requests (unrecorded), then the measured ones; returns them in id order. */
    public List<RecordedRequest> run(Workload workload, Consumer<RecordedRequest> onDone) throws InterruptedException {
        if (config.warmupRequests() > 0) {
            int c = config.concurrencies().isEmpty() ? 1 : config.concurrencies().getFirst();
            closedLoop(workload, c, config.warmupRequests(), 0, r -> { }, false);
            if (stopped) {
                return recorded();
            }
        }
        int count = config.durationS() > 0 ? Integer.MAX_VALUE : config.numRequests();
        long stopAt = config.durationS() > 0 ? System.nanoTime() + (long) (config.durationS() * 1e9) : Long.MAX_VALUE;
        if (config.openLoop() || config.offline()) {
            openLoop(workload, count, stopAt, onDone);
        } else {
            closedLoop(workload, config.concurrencies().getFirst(), count, stopAt, onDone, true);
        }
        return recorded();
    }

    /** Whether {@code --max-errors} failed requests stopped the run before its end. */
    public boolean stoppedEarly() {
        return stopped;
    }

    /** Counts a finished request against {@code --max-errors}; the limit's last failure stops the run. */
    private void count(RecordedRequest r) {
        if (!r.ok() && config.maxErrors() > 0 && failures.incrementAndGet() >= config.maxErrors()) {
            stopped = true;
        }
    }

    /** What has been recorded so far, in id order. */
    public List<RecordedRequest> recorded() {
        List<RecordedRequest> list = new ArrayList<>(recorded);
        list.sort(Comparator.comparingInt(RecordedRequest::id));
        return list;
    }

    private void closedLoop(Workload workload, int concurrency, int count, long stopAt,
                            Consumer<RecordedRequest> onDone, boolean record) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        Object payloads = new Object();
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < concurrency; w++) {
            workers.add(Thread.ofVirtual().name("bench-worker-" + w).start(() -> {
                while (true) {
                    int id = next.getAndIncrement();
                    if (stopped || id >= count || (stopAt != 0 && System.nanoTime() >= stopAt)) {
                        return;
                    }
                    String payload;
                    synchronized (payloads) {
                        payload = workload.nextPayload();
                    }
                    RecordedRequest r = send(id, payload);
                    count(r);
                    if (record) {
                        recorded.add(r);
                        onDone.accept(r);
                    }
                }
            }));
        }
        for (Thread t : workers) {
            t.join();
        }
    }

    private void openLoop(Workload workload, int count, long stopAt, Consumer<RecordedRequest> onDone)
            throws InterruptedException {
        Random arrivals = new Random(config.seed() * 31 + 7);
        List<Thread> inFlight = new ArrayList<>();
        long start = System.nanoTime();
        double t = 0;
        for (int id = 0; id < count; id++) {
            long at = start + (long) (t * 1e9);
            if (at >= stopAt) {
                break;
            }
            long wait = at - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            if (stopped) {
                break;
            }
            String payload = workload.nextPayload();
            int rid = id;
            inFlight.add(Thread.ofVirtual().name("bench-request-" + id).start(() -> {
                RecordedRequest r = send(rid, payload);
                count(r);
                recorded.add(r);
                onDone.accept(r);
            }));
            // Exponential inter-arrival gap: −ln(U)/R with U in (0, 1]; offline: no gap at all.
            if (!config.offline()) {
                t += -Math.log(1.0 - arrivals.nextDouble()) / config.requestRate();
            }
        }
        for (Thread th : inFlight) {
            th.join();
        }
    }

    /** Sends one request and records it; never throws. Runs on the calling (virtual) thread. */
    RecordedRequest send(int id, String payload) {
        if (grpc != null) {
            return grpc.send(id, payload);
        }
        HttpRequest.Builder b = HttpRequest.newBuilder(uri)
                .header("Content-Type", "application/json")
                .header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(payload));
        if (config.apiKey() != null && !config.apiKey().isEmpty()) {
            b.header("Authorization", "Bearer " + config.apiKey());
        }
        HttpRequest request = b.build();
        List<Chunk> chunks = new ArrayList<>();
        Thread self = Thread.currentThread();
        boolean[] timedOut = {false};
        long sendNs = System.nanoTime();
        ScheduledFuture<?> deadline = timer.schedule(() -> {
            synchronized (timedOut) {
                timedOut[0] = true;
                self.interrupt();
            }
        }, (long) (config.timeoutS() * 1e9), TimeUnit.NANOSECONDS);
        int status = 0;
        int in = -1;
        int out = -1;
        String error = null;
        try {
            HttpResponse<Stream<String>> response = client.send(request, HttpResponse.BodyHandlers.ofLines());
            status = response.statusCode();
            try (Stream<String> lines = response.body()) {
                Iterator<String> it = lines.iterator();
                if (status != 200) {
                    StringBuilder body = new StringBuilder();
                    it.forEachRemaining(body::append);
                    error = "HTTP " + status + ": " + StreamEvent.abbreviate(body.toString());
                } else {
                    boolean done = false;
                    while (it.hasNext()) {
                        String line = it.next();
                        long now = System.nanoTime();
                        if (!line.startsWith("data:")) {
                            continue; // blank separators, comments, event:/id: fields
                        }
                        String data = line.substring(5).strip();
                        StreamEvent e = StreamEvent.parse(data);
                        chunks.add(new Chunk(now, data, e.content()));
                        if (e.promptTokens() >= 0) {
                            in = e.promptTokens();
                        }
                        if (e.completionTokens() >= 0) {
                            out = e.completionTokens();
                        }
                        if (e.error() != null) {
                            error = e.error();
                        }
                        if (e.done()) {
                            done = true;
                            break;
                        }
                    }
                    // Triton's generate_stream ends with the connection, not with [DONE]
                    if (!done && error == null && !config.endpoint().equals("kserve-generate")) {
                        error = "stream ended without [DONE]";
                    }
                }
            }
        } catch (IOException | UncheckedIOException e) {
            error = "I/O: " + e.getMessage();
        } catch (InterruptedException e) {
            error = "interrupted";
        }
        long endNs = System.nanoTime();
        synchronized (timedOut) {
            deadline.cancel(false);
            Thread.interrupted(); // a deadline that fired after the stream ended must not leak
            if (timedOut[0]) {
                return new RecordedRequest(id, payload, sendNs, chunks, -1, status, "timeout after "
                        + config.timeoutS() + " s", in, out);
            }
        }
        return new RecordedRequest(id, payload, sendNs, chunks, endNs, status, error, in, out);
    }

    @Override
    public void close() {
        timer.shutdownNow();
        client.close();
        if (grpc != null) {
            grpc.close();
        }
    }
}
