package io.nereid.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Nereid server the bench started as a child process for one sweep configuration. {@link #start}
 * runs the command (which must listen on the port it prints as {@code listening on http://HOST:PORT},
 * as {@code bin/nereid serve --port 0} does), copies its output to a log file, and returns once
 * {@code GET /health/ready} answers 200. {@link #close} stops it with SIGTERM (the server drains)
 * and waits; only a server that outlives the wait is killed. Used by one thread; {@link #close} may
 * also be called from a shutdown hook, and is idempotent.
 */
public final class ServerProcess implements AutoCloseable {

    /** Servers started and not stopped yet (any thread may start or stop one). */
    private static final Set<Process> STARTED = ConcurrentHashMap.newKeySet();

    private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+?)/?$");
    private static final Pattern GRPC = Pattern.compile("KServe v2 gRPC on (\\S+)$");
    private static final long STOP_WAIT_S = 60;

    private final Process process;
    private final Thread logCopier;
    private final String url;
    private final String grpc;

    private ServerProcess(Process process, Thread logCopier, String url, String grpc) {
        this.process = process;
        this.logCopier = logCopier;
        this.url = url;
        this.grpc = grpc;
    }

    /** The KServe v2 gRPC address it printed ({@code KServe v2 gRPC on HOST:PORT}), or null. */
    public String grpcAddress() {
        return grpc;
    }

    /** The base URL, e.g. {@code http://127.0.0.1:41234}. */
    public String url() {
        return url;
    }

    /**
     * Starts {@code command}, its stdout and stderr going to {@code log}, and waits (at most
     * {@code timeoutS}) for it to listen and be ready.
     *
     * @throws IOException naming the command and the log when it exits, or is not ready in time
     */
    public static ServerProcess start(List<String> command, Path log, double timeoutS)
            throws IOException, InterruptedException {
        Files.createDirectories(log.toAbsolutePath().getParent());
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        STARTED.add(p);
        long deadline = System.nanoTime() + (long) (timeoutS * 1e9);
        CompletableFuture<String> listening = new CompletableFuture<>();
        java.util.concurrent.atomic.AtomicReference<String> grpc = new java.util.concurrent.atomic.AtomicReference<>();
        Thread copier = Thread.ofVirtual().name("bench-server-log").start(() -> copyOutput(p, log, listening, grpc));
        try {
            String url = listening.get(remainingNs(deadline), TimeUnit.NANOSECONDS);
            if (url == null) {
                throw new IOException("server exited (status " + p.waitFor() + ") before listening: "
                        + String.join(" ", command) + "; see " + log);
            }
            awaitReady(url, p, deadline, log);
            return new ServerProcess(p, copier, url, grpc.get());
        } catch (java.util.concurrent.TimeoutException e) {
            stop(p);
            throw new IOException("server not listening after " + timeoutS + " s: " + String.join(" ", command)
                    + "; see " + log);
        } catch (java.util.concurrent.ExecutionException e) {
            stop(p);
            throw new IOException("server output: " + e.getCause().getMessage(), e.getCause());
        } catch (IOException | InterruptedException | RuntimeException e) {
            stop(p);
            throw e;
        }
    }

    /**
     * Copies the server's output to the log; completes {@code listening} with the URL, or null at
     * exit; sets {@code grpc} to the gRPC address when the server prints one (before its URL).
     */
    private static void copyOutput(Process p, Path log, CompletableFuture<String> listening,
            java.util.concurrent.atomic.AtomicReference<String> grpc) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
             var out = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                out.write(line);
                out.newLine();
                out.flush();
                Matcher g = GRPC.matcher(line.strip());
                if (g.find()) {
                    grpc.set(g.group(1));
                }
                Matcher m = LISTENING.matcher(line.strip());
                if (!listening.isDone() && m.find()) {
                    listening.complete(m.group(1));
                }
            }
            listening.complete(null);
        } catch (IOException e) {
            listening.completeExceptionally(e);
        }
    }

    private static void awaitReady(String url, Process p, long deadline, Path log)
            throws IOException, InterruptedException {
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
            HttpRequest ready = HttpRequest.newBuilder(URI.create(url + "/health/ready"))
                    .timeout(Duration.ofSeconds(5)).GET().build();
            int status = 0;
            while (System.nanoTime() < deadline) {
                if (!p.isAlive()) {
                    throw new IOException("server exited (status " + p.exitValue() + ") before ready; see " + log);
                }
                try {
                    status = client.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode();
                    if (status == 200) {
                        return;
                    }
                } catch (IOException e) {
                    status = 0; // not accepting yet
                }
                Thread.sleep(100);
            }
            throw new IOException(url + "/health/ready: not 200 in time (last status " + status + "); see " + log);
        }
    }

    private static long remainingNs(long deadline) {
        return Math.max(1, deadline - System.nanoTime());
    }

    /** SIGTERM, then wait for the drain; kill only a server still running after the wait. The log is complete after. */
    @Override
    public void close() throws InterruptedException {
        stop(process);
        logCopier.join(Duration.ofSeconds(10));
    }

    /**
     * Stops every server started and not stopped yet: the shutdown hook's last resort for one that was
     * still starting (loading its model) when the bench was interrupted.
     */
    public static void stopAll() throws InterruptedException {
        for (Process p : List.copyOf(STARTED)) {
            stop(p);
        }
    }

    private static void stop(Process p) throws InterruptedException {
        try {
            if (!p.isAlive()) {
                return;
            }
            // A launcher script may still be building (bin/nereid runs Maven before it execs java): its
            // children are stopped too. SIGTERM through the handle: Process.destroy() would also close our
            // end of its output, losing the drain's last log lines.
            p.descendants().forEach(ProcessHandle::destroy);
            p.toHandle().destroy();
            if (!p.waitFor(STOP_WAIT_S, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } finally {
            STARTED.remove(p);
        }
    }
}
