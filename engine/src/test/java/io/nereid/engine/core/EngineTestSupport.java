package io.nereid.engine.core;

import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.cpu.CpuBackend;
import io.nereid.engine.cpu.CpuModel;
import io.nereid.engine.cpu.KvStorage;
import io.nereid.engine.cpu.RangeRunner;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.RandomModelWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A generated model shared by the engine tests, and a sink that records what arrives. */
final class EngineTestSupport {

    static final int CONTEXT = 2048;
    private static CpuModel model;

    private EngineTestSupport() {
    }

    static synchronized CpuModel model() {
        if (model == null) {
            try {
                Path dir = Files.createTempDirectory("nereid-engine-test");
                Path file = dir.resolve("llama.gguf");
                RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, 64, 2, 4, 2, 96, 320, CONTEXT,
                        GgmlType.F32, false, 11), file);
                model = CpuModel.open(file);
                file.toFile().deleteOnExit();
                dir.toFile().deleteOnExit();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return model;
    }

    static InflightEngine engine(EngineConfig config) {
        return new InflightEngine(config, backend(config), model().tokenizer());
    }

    /** The CPU backend of the shared model, with a KV pool sized for {@code config}. */
    static Backend backend(EngineConfig config) {
        return model().backend(Kernels.provider(), RangeRunner.SERIAL, KvPrecision.F32, config.numBlocks(),
                config.blockSize(), config.maxModelLen());
    }

    static EngineConfig config(int numBlocks, int blockSize, boolean prefixCaching, int budget) {
        return new EngineConfig(64, budget, 4096, CONTEXT, numBlocks, blockSize, 0.01, prefixCaching, true);
    }

    static int[] prompt(long seed, int length) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[length];
        for (int i = 0; i < length; i++) {
            t[i] = 3 + r.nextInt(317);
        }
        return t;
    }

    /**
     * Records deltas and terminal events per choice, and the order of all callbacks ({@link #log()});
     * {@link #await()} waits for every choice to end and for the step end that must follow.
     */
    static class Recorder implements TokenSink {
        final int n;
        volatile io.nereid.engine.api.RequestHandle handle;
        volatile int cancelAfterTokens = -1;
        final List<List<Integer>> tokens = new ArrayList<>();
        final StringBuilder[] text;
        final FinishReason[] reasons;
        final Object[] stopReasons;
        final Usage[] usages;
        final int[] terminalEvents;
        volatile int deltasAfterTerminal;
        final List<List<TokenLogprob>> promptLogprobs = new ArrayList<>();   // one entry per onPromptLogprobs
        final List<List<TokenLogprob>> logprobs = new ArrayList<>();         // per choice, every delta's
        volatile int mostIdsInADelta;
        final CountDownLatch done;
        private final CountDownLatch stepEndAfterEnd = new CountDownLatch(1);
        private final List<String> log = new ArrayList<>();

        Recorder(int n) {
            this.n = n;
            this.text = new StringBuilder[n];
            this.reasons = new FinishReason[n];
            this.stopReasons = new Object[n];
            this.usages = new Usage[n];
            this.terminalEvents = new int[n];
            this.done = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                tokens.add(new ArrayList<>());
                logprobs.add(new ArrayList<>());
                text[i] = new StringBuilder();
            }
        }

        @Override
        public synchronized void onDelta(int choice, String t, int[] ids, List<TokenLogprob> logprobs) {
            if (terminalEvents[choice] > 0) {
                deltasAfterTerminal++;
            }
            log.add("delta " + choice);
            for (int id : ids) {
                tokens.get(choice).add(id);
            }
            text[choice].append(t);
            this.logprobs.get(choice).addAll(logprobs);
            mostIdsInADelta = Math.max(mostIdsInADelta, ids.length);
            if (cancelAfterTokens >= 0 && tokens.get(choice).size() >= cancelAfterTokens && handle != null) {
                handle.cancel();
            }
        }

        @Override
        public synchronized void onPromptLogprobs(List<TokenLogprob> logprobs) {
            log.add("prompt logprobs");
            promptLogprobs.add(List.copyOf(logprobs));
        }

        @Override
        public synchronized void onFinish(int choice, FinishReason reason, Object stopReason, Usage usage) {
            log.add("finish " + choice);
            reasons[choice] = reason;
            stopReasons[choice] = stopReason;
            usages[choice] = usage;
            if (++terminalEvents[choice] == 1) {
                done.countDown();
            }
        }

        @Override
        public synchronized void onError(int choice, EngineException error) {
            log.add("error " + choice);
            reasons[choice] = null;
            if (++terminalEvents[choice] == 1) {
                done.countDown();
            }
        }

        @Override
        public synchronized void onStepEnd() {
            log.add("step end");
            if (done.getCount() == 0) {
                stepEndAfterEnd.countDown();
            }
        }

        Recorder await() {
            try {
                if (!done.await(60, TimeUnit.SECONDS)) {
                    throw new AssertionError("request did not finish within 60 s");
                }
                if (!stepEndAfterEnd.await(60, TimeUnit.SECONDS)) {
                    throw new AssertionError("no onStepEnd followed the last terminal event");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            return this;
        }

        /** Every callback in order: "prompt logprobs", "delta C", "finish C", "error C", "step end". */
        synchronized List<String> log() {
            return List.copyOf(log);
        }

        synchronized List<Integer> tokens(int choice) {
            return List.copyOf(tokens.get(choice));
        }
    }
}
