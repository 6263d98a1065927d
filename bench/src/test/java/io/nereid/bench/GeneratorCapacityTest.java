package io.nereid.bench;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The load generator's capacity: the SSE chunk rate it sustains against {@link FakeSseServer}, a
 * trivial endpoint that streams without delay. Prints the figure (the closing note asks
 * for ≥ 5× the chunk rate of the server's 256-stream test); asserts only that nothing was lost,
 * never a speed. The fake server shares the machine's cores, so the figure is a lower bound.
 * {@code -Dbench.capacity.streams=256} sizes a longer measurement.
 */
class GeneratorCapacityTest {
    @Test
    void sustainedChunkRateAgainstTrivialSseEndpoint() throws Exception {
        int streams = Integer.getInteger("bench.capacity.streams", 32);
        int tokens = 256;
        int requests = streams * 4;
        try (FakeSseServer server = new FakeSseServer(0)) {
            BenchConfig config = BenchConfig.parse(new String[] {"--url", server.url(), "--model", "fake-model",
                    "--concurrency", Integer.toString(streams), "--num-requests", Integer.toString(requests),
                    "--output-tokens-mean", Integer.toString(tokens), "--input-tokens-mean", "8",
                    "--output-dir", Path.of("target", "capacity").toString(), "--no-progress"});
            List<RecordedRequest> recorded;
            try (LoadGenerator generator = new LoadGenerator(config)) {
                recorded = generator.run(new Workload(config), r -> { });
            }
            RunMetrics m = RunMetrics.of(recorded);
            long chunks = m.requests().stream().mapToLong(r -> r.contentArrivalsNs().size()).sum();
            assertEquals((long) requests * tokens, chunks, "every chunk recorded; errors: " + m.errors() + ", e.g. "
                    + recorded.stream().filter(r -> !r.ok()).map(RecordedRequest::error).limit(3).toList());
            System.out.printf(Locale.ROOT, "bench capacity: %d streams, %d chunks in %.2f s = %,.0f chunks/s%n",
                    streams, chunks, m.durationS(), chunks / m.durationS());
        }
    }
}
