package io.nereid.engine.core;

import io.nereid.engine.api.AdmissionException;
import io.nereid.engine.api.Engine;
import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.EngineStats;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.nereid.engine.model.Slice;
import io.nereid.engine.sampling.SampledToken;
import io.nereid.engine.sampling.Sampler;
import io.nereid.engine.text.IncrementalDetokenizer;
import io.nereid.engine.text.StopMatch;
import io.nereid.engine.text.StopStringMatcher;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import io.nereid.kvcache.KvCacheStats;
import io.nereid.kvcache.PrefixMatch;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The inflight-batching engine: one platform thread runs a loop in which every iteration builds
 * one step — running sequences first (one decode token each, or the next chunk of an unfinished
 * prompt), then chunks of waiting prompts — within {@code maxNumBatchedTokens} and
 * {@code maxNumSeqs}, runs it through the backend, samples, detokenizes, matches stops and
 * delivers output to each request's {@link TokenSink}, ending each iteration with
 * {@link TokenSink#onStepEnd()} for every sink it gave events to.
 *
 * <p>Memory: a new prompt claims its longest cached prefix and is admitted only if its chunk's
 * blocks fit above the watermark; when a running sequence needs a block and none is free, the
 * sequence with the highest priority value, then the latest arrival, is preempted by recompute:
 * its blocks are freed (its prefix usually stays cached) and it returns to the front of the
 * waiting queue with its tokens so far, to be prefilled again.
 *
 * <p>Threads: {@link #submit} and {@link RequestHandle#cancel()} may be called from any thread;
 * everything else, sink callbacks included, runs on the engine thread.
 */
public final class InflightEngine implements Engine {

    private static final System.Logger LOG = System.getLogger(InflightEngine.class.getName());
    private static final long IDLE_PARK_NANOS = 20_000_000; // checks deadlines even when idle
    private static final int MAX_LOGPROBS = 20;               // alternatives per token, as OpenAI's top_logprobs
    /** Bytes of prompt-logprob logits (every position x vocabulary, F32) one step may produce. */
    private static final long PROMPT_LOGIT_BYTES_PER_STEP = 64L << 20;

    private final EngineConfig config;
    private final Backend backend;
    private final Tokenizer tokenizer;
    private final KvCacheManager cache;
    private final int[] eosIds;
    private final Thread thread;

    private final ConcurrentLinkedQueue<RequestState> inbox = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();        // submitted, not yet first scheduled
    private final AtomicLong submissions = new AtomicLong();
    private volatile boolean closing;
    /** Set by the engine thread just before its last look at the inbox: a request added later is refused. */
    private volatile boolean exited;
    private volatile EngineStats stats = new EngineStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    // Engine-thread state.
    private final Deque<Sequence> waiting = new ArrayDeque<>();
    private final List<Sequence> running = new ArrayList<>();
    private final List<RequestState> live = new ArrayList<>();
    private final List<RequestState> notified = new ArrayList<>();   // sinks given events since the last step end
    private long preemptions;
    private long iterations;
    private long promptTokens;
    private long generationTokens;

    public InflightEngine(EngineConfig config, Backend backend, Tokenizer tokenizer) {
        this.config = config;
        this.backend = backend;
        this.tokenizer = tokenizer;
        this.cache = new KvCacheManager(new KvCacheConfig(config.numBlocks(), config.blockSize(), config.watermark(),
                KvCacheConfig.randomSeed()));
        this.eosIds = tokenizer.specialTokens().stopIds();
        this.thread = Thread.ofPlatform().name("nereid-engine").daemon().unstarted(this::loop);
        thread.start();
    }

    @Override
    public RequestHandle submit(GenerationRequest r, TokenSink sink) {
        validate(r);
        if (closing) {
            throw new AdmissionException(AdmissionException.Reason.SHUTTING_DOWN, Duration.ofSeconds(5), "the engine is shutting down");
        }
        if (queued.incrementAndGet() > config.maxWaiting()) {
            queued.decrementAndGet();
            throw new AdmissionException(AdmissionException.Reason.QUEUE_FULL, Duration.ofSeconds(1),
                    "the waiting queue is full (" + config.maxWaiting() + " requests); retry later");
        }
        RequestState state = new RequestState(r, sink, submissions.incrementAndGet(), () -> LockSupport.unpark(thread));
        inbox.add(state);
        if (exited && inbox.remove(state)) {
            // The engine thread took its last look at the inbox before this request arrived: nothing
            // would ever answer it. (If remove fails, that last look took it and finishes it as cancelled.)
            queued.decrementAndGet();
            throw new AdmissionException(AdmissionException.Reason.SHUTTING_DOWN, Duration.ofSeconds(5), "the engine is shutting down");
        }
        LockSupport.unpark(thread);
        return state;
    }

    private void validate(GenerationRequest r) {
        int prompt = r.promptTokens().length;
        if (prompt == 0) {
            throw new RequestValidationException("prompt", "the prompt is empty");
        }
        for (int t : r.promptTokens()) {
            if (t < 0 || t >= backend.vocabSize()) {
                throw new RequestValidationException("prompt", "token id " + t + " is outside the vocabulary of "
                        + backend.vocabSize());
            }
        }
        if (r.maxTokens() < 0) {
            throw new RequestValidationException("max_tokens", "max_tokens must be at least 0, got " + r.maxTokens());
        }
        if (r.promptLogprobs() > MAX_LOGPROBS || r.sampling().topLogprobs() > MAX_LOGPROBS) {
            throw new RequestValidationException("prompt_logprobs", "at most " + MAX_LOGPROBS
                    + " alternatives per token, got " + Math.max(r.promptLogprobs(), r.sampling().topLogprobs()));
        }
        if (r.minTokens() < 0 || r.minTokens() > r.maxTokens()) {
            throw new RequestValidationException("min_tokens", "min_tokens must be in [0, max_tokens], got " + r.minTokens());
        }
        if (r.n() < 1 || r.n() > config.maxNumSeqs()) {
            throw new RequestValidationException("n", "n must be in [1, " + config.maxNumSeqs() + "], got " + r.n());
        }
        if ((long) prompt + r.maxTokens() > config.maxModelLen()) {
            throw new RequestValidationException("max_tokens", "prompt (" + prompt + " tokens) + max_tokens (" + r.maxTokens()
                    + ") exceeds the model's context of " + config.maxModelLen() + " tokens");
        }
        long blocks = ((long) prompt + r.maxTokens() + config.blockSize() - 1) / config.blockSize();
        if (blocks > config.numBlocks() - 1) {
            throw new RequestValidationException("max_tokens", "prompt + max_tokens needs " + blocks
                    + " KV blocks but the whole pool has " + (config.numBlocks() - 1));
        }
    }

    @Override
    public EngineStats stats() {
        return stats;
    }

    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(thread);
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- engine thread ----

    private void loop() {
        while (true) {
            drainInbox();
            if (closing) {
                exited = true;
                drainInbox();   // requests that passed submit's closing check while this thread was stopping
                for (RequestState r : List.copyOf(live)) {
                    finishRequest(r, FinishReason.CANCELLED);
                }
                endStep();
                publishStats(0);
                return;
            }
            expireAndCancel();
            boolean idle = waiting.isEmpty() && running.isEmpty();
            if (!idle) {
                try {
                    step();
                } catch (RuntimeException | Error e) {
                    LOG.log(System.Logger.Level.ERROR, "engine step failed; failing the sequences in it", e);
                    failRunning(e);
                }
            }
            endStep();
            if (idle) {
                publishStats(0);
                LockSupport.parkNanos(IDLE_PARK_NANOS);
            }
        }
    }

    /** Remembers that {@code r}'s sink got an event in this iteration, for {@link #endStep()}. */
    private void notified(RequestState r) {
        if (!r.notifiedThisStep) {
            r.notifiedThisStep = true;
            notified.add(r);
        }
    }

    /** {@link TokenSink#onStepEnd()} for every sink that got events in this iteration. */
    private void endStep() {
        for (RequestState r : notified) {
            r.notifiedThisStep = false;
            try {
                r.sink.onStepEnd();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "token sink of " + r.id() + " threw in onStepEnd", e);
            }
        }
        notified.clear();
    }

    private void drainInbox() {
        for (RequestState r; (r = inbox.poll()) != null; ) {
            r.choices[0] = newSequence(r, 0);
            live.add(r);
            enqueueWaiting(r.choices[0], false);
        }
    }

    private Sequence newSequence(RequestState r, int choice) {
        return new Sequence(r, choice, sampler(r, choice), new IncrementalDetokenizer(tokenizer, true, true),
                new StopStringMatcher(r.request.stop()));
    }

    /** Each choice has its own RNG stream: seed + choice, or a per-request seed when none was given. */
    private Sampler sampler(RequestState r, int choice) {
        GenerationRequest q = r.request;
        long seed = q.sampling().seed() != null ? q.sampling().seed() + choice : r.order * 0x9E3779B97F4A7C15L + choice;
        return new Sampler(q.sampling(), backend.vocabSize(), q.promptTokens(), seed);
    }

    /** Waiting order: priority (lower first), then arrival; a preempted sequence goes before its equals. */
    private void enqueueWaiting(Sequence s, boolean preempted) {
        Comparator<Sequence> order = Comparator.comparingInt((Sequence x) -> x.request.request.priority())
                .thenComparingLong(x -> x.request.order);
        List<Sequence> all = new ArrayList<>(waiting);
        int at = 0;
        while (at < all.size() && (order.compare(all.get(at), s) < 0 || (!preempted && order.compare(all.get(at), s) == 0))) {
            at++;
        }
        all.add(at, s);
        waiting.clear();
        waiting.addAll(all);
    }

    private void expireAndCancel() {
        Instant now = Instant.now();
        for (RequestState r : List.copyOf(live)) {
            if (r.cancelled()) {
                finishRequest(r, FinishReason.CANCELLED);
            } else if (r.request.deadline() != null && now.isAfter(r.request.deadline())) {
                finishRequest(r, FinishReason.DEADLINE);
            }
        }
    }

    private void step() {
        int budget = config.maxNumBatchedTokens();
        // Prompt positions whose logits are all kept (prompt logprobs): bounded per step, so a long
        // prompt on a large vocabulary is scored over several steps instead of in one huge array.
        int logitRows = (int) Math.max(1, Math.min(budget, PROMPT_LOGIT_BYTES_PER_STEP / (4L * backend.vocabSize())));
        List<Slice> slices = new ArrayList<>();
        List<Sequence> owners = new ArrayList<>();
        running.sort(Comparator.comparingInt((Sequence x) -> x.request.request.priority()).thenComparingLong(x -> x.request.order));
        for (Sequence s : running) {
            s.scheduledThisStep = false;
        }
        // Without chunked prefill a waiting prompt gets a step of its own, ahead of the decodes
        // (vLLM's prefill-first policy): the decodes stall for that step instead of the prompt
        // waiting for a step with a free budget.
        boolean prefillAlone = !config.chunkedPrefill() && !waiting.isEmpty() && running.size() < config.maxNumSeqs();
        // 1. Running sequences: a decode token, or the next chunk of a prompt being prefilled.
        for (Sequence s : prefillAlone ? List.<Sequence>of() : List.copyOf(running)) {
            if (s.finished || s.table == null || budget == 0) {
                continue;
            }
            int chunk = config.chunkedPrefill() ? Math.min(s.pending(), budget) : s.pending();
            if (chunk > budget && budget < config.maxNumBatchedTokens()) {
                continue; // an unchunked prompt takes a step of its own
            }
            if (scoresPrompt(s, s.computed)) {
                chunk = Math.min(chunk, logitRows);   // scored in chunks even without chunked prefill
                if (chunk == 0) {
                    continue;
                }
                logitRows -= chunk;
            }
            while (!cache.canAppend(s.table, chunk)) {
                Sequence victim = victim();
                preempt(victim);
                if (victim == s) {
                    break;
                }
            }
            if (s.table == null) {
                continue; // preempted itself
            }
            budget = Math.max(0, budget - schedule(s, chunk, slices, owners));
        }
        // 2. Waiting prompts, in order, while they fit (no skipping ahead: no starvation).
        while (budget > 0 && !waiting.isEmpty() && running.size() < config.maxNumSeqs()) {
            Sequence s = waiting.peekFirst();
            // A prompt whose logprobs are wanted is computed in full: its logits are not in the cache.
            PrefixMatch match = config.prefixCaching() && !s.request.needsPromptLogprobs()
                    ? cache.longestCachedPrefix(s.tokens(), 0) : cache.longestCachedPrefix(new int[0], 0);
            int chunk = s.length() - match.numTokens();
            if (config.chunkedPrefill()) {
                chunk = Math.min(chunk, budget);
            } else if (chunk > budget && budget < config.maxNumBatchedTokens()) {
                break; // an unchunked prompt waits for a step of its own
            }
            boolean scores = scoresPrompt(s, match.numTokens());
            if (scores) {
                chunk = Math.min(chunk, logitRows);
                if (chunk == 0) {
                    break;
                }
            }
            int blocks = cache.blocksToAdmit(match, match.numTokens() + chunk);
            // The watermark protects running sequences; with none running it would only deadlock.
            if (running.isEmpty() ? blocks > cache.freeBlocks() : !cache.canAdmit(blocks)) {
                break;
            }
            waiting.pollFirst();
            s.table = cache.newTable(0, match, s.tokens());
            s.computed = match.numTokens();
            if (s.request.scheduledNanos == 0) {
                s.request.scheduledNanos = System.nanoTime();
                s.cachedTokens = match.numTokens();
                queued.decrementAndGet();
            }
            running.add(s);
            if (scores) {
                logitRows -= chunk;
            }
            budget = Math.max(0, budget - schedule(s, chunk, slices, owners));
        }
        if (slices.isEmpty()) {
            publishStats(0);
            LockSupport.parkNanos(IDLE_PARK_NANOS); // nothing fits now; wait for frees
            return;
        }
        backend.copy(cache.drainCopies());
        float[][] logits = backend.forward(slices);
        iterations++;
        int stepTokens = 0;
        int vocab = backend.vocabSize();
        for (int i = 0; i < slices.size(); i++) {
            Sequence s = owners.get(i);
            Slice slice = slices.get(i);
            int n = slice.tokens().length;
            stepTokens += n;
            s.computed += n;
            if (s.computed <= s.promptLength()) {
                promptTokens += n;
            }
            if (slice.allLogits()) {
                scorePrompt(s.request, slice, logits[i], vocab);
            }
            if (slice.wantsLogits() && !s.finished) {
                float[] last = slice.allLogits() ? Arrays.copyOfRange(logits[i], (n - 1) * vocab, n * vocab) : logits[i];
                onLogits(s, last);
            }
        }
        publishStats(stepTokens);
    }

    /** Whether a slice of {@code s} from {@code start} keeps every position's logits (prompt logprobs). */
    private static boolean scoresPrompt(Sequence s, int start) {
        // Every position whose next token is a prompt token needs its logits.
        return s.request.needsPromptLogprobs() && start < s.promptLength() - 1;
    }

    private int schedule(Sequence s, int chunk, List<Slice> slices, List<Sequence> owners) {
        int start = s.computed;
        s.table.append(s.tokens(start, start + chunk));
        boolean allLogits = scoresPrompt(s, start);
        slices.add(new Slice(s.tokens(start, start + chunk), start, s.table.blockIds(), start + chunk == s.length(),
                allLogits));
        owners.add(s);
        s.scheduledThisStep = true;
        return chunk;
    }

    /** The running sequence to give up first: highest priority value, then latest arrival, not yet in this step. */
    private Sequence victim() {
        Sequence worst = null;
        for (Sequence s : running) {
            if (s.table == null || s.scheduledThisStep) {
                continue;
            }
            if (worst == null || s.request.request.priority() > worst.request.request.priority()
                    || (s.request.request.priority() == worst.request.request.priority() && s.request.order > worst.request.order)) {
                worst = s;
            }
        }
        if (worst == null) {
            throw new IllegalStateException("no sequence can be preempted, yet blocks are needed");
        }
        return worst;
    }

    private void preempt(Sequence s) {
        s.table.free();
        s.table = null;
        s.computed = 0;
        running.remove(s);
        preemptions++;
        enqueueWaiting(s, true);
    }

    /**
     * Scores the prompt tokens that follow the slice's positions (row j of {@code rows} predicts the
     * token at {@code startPos + j + 1}); a recomputed position (after a preemption) is scored again,
     * to the same value.
     */
    private static void scorePrompt(RequestState r, Slice slice, float[] rows, int vocab) {
        int[] prompt = r.request.promptTokens();
        for (int j = 0; j < slice.tokens().length; j++) {
            int next = slice.startPos() + j + 1;
            if (next >= prompt.length) {
                break;
            }
            SampledToken t = Sampler.score(Arrays.copyOfRange(rows, j * vocab, (j + 1) * vocab), prompt[next],
                    r.request.promptLogprobs());
            r.promptLogprobs[next - 1] = new TokenLogprob(t.id(), t.logprob(), t.rank(), t.topIds(), t.topLogprobs());
        }
    }

    /** The prompt is complete: its logprobs (when asked for) go out before any of its output. */
    private void sendPromptLogprobs(RequestState r) {
        r.promptLogprobsSent = true;
        notified(r);
        try {
            r.sink.onPromptLogprobs(List.of(r.promptLogprobs));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "token sink of " + r.id() + " threw in onPromptLogprobs; cancelling it", e);
            r.cancel();
        }
    }

    private void onLogits(Sequence s, float[] logits) {
        RequestState r = s.request;
        GenerationRequest q = r.request;
        if (r.needsPromptLogprobs()) {
            sendPromptLogprobs(r);
        }
        if (q.maxTokens() == 0) {
            finishRequest(r, FinishReason.LENGTH);   // only the prompt was wanted (scoring it)
            return;
        }
        if (!r.forked && q.n() > 1) {
            // The prompt is done once; the other choices start from a copy-on-write fork of it.
            r.forked = true;
            for (int c = 1; c < q.n(); c++) {
                Sequence fork = new Sequence(s, c, sampler(r, c), new IncrementalDetokenizer(tokenizer, true, true),
                        new StopStringMatcher(q.stop()));
                r.choices[c] = fork;
                running.add(fork);
                sampleAndEmit(fork, logits);
            }
        }
        sampleAndEmit(s, logits);
    }

    private void sampleAndEmit(Sequence s, float[] logits) {
        GenerationRequest q = s.request.request;
        float[] z = logits;
        if (s.generated < q.minTokens()) {
            z = logits.clone();
            if (!q.ignoreEos()) {
                for (int id : eosIds) {
                    z[id] = Float.NEGATIVE_INFINITY;
                }
            }
            for (int id : q.stopTokenIds()) {
                if (id >= 0 && id < z.length) {
                    z[id] = Float.NEGATIVE_INFINITY;
                }
            }
        }
        SampledToken t = s.sampler.sample(z, q.logprobs());
        s.add(t.id());
        s.generated++;
        generationTokens++;
        if (s.firstTokenNanos == 0) {
            s.firstTokenNanos = System.nanoTime();
        }
        List<TokenLogprob> lp = q.logprobs()
                ? List.of(new TokenLogprob(t.id(), t.logprob(), t.rank(), t.topIds(), t.topLogprobs())) : List.of();
        boolean eos = !q.ignoreEos() && contains(eosIds, t.id());
        if (eos || contains(q.stopTokenIds(), t.id())) {
            emit(s, flush(s), new int[] {t.id()}, lp);
            finish(s, FinishReason.STOP, eos ? null : t.id());
            return;
        }
        String text = s.detokenizer.push(t.id());
        if (s.generated > q.minTokens() || q.stop().isEmpty()) {
            StopMatch m = s.stops.push(text);
            if (m instanceof StopMatch.Stop stop) {
                emit(s, stop.text(), new int[] {t.id()}, lp);
                finish(s, FinishReason.STOP, stop.stop());
                return;
            }
            text = ((StopMatch.Continue) m).text();
        }
        if (s.generated >= q.maxTokens() || s.length() >= config.maxModelLen()) {
            emit(s, text + flush(s), new int[] {t.id()}, lp);
            finish(s, FinishReason.LENGTH, null);
            return;
        }
        emit(s, text, new int[] {t.id()}, lp);
    }

    /** Text still held by the detokenizer and the stop matcher, when the choice ends for another reason. */
    private static String flush(Sequence s) {
        String tail = s.detokenizer.flush();
        StopMatch m = s.stops.push(tail);
        String text = m instanceof StopMatch.Stop stop ? stop.text() : ((StopMatch.Continue) m).text();
        return text + (m instanceof StopMatch.Continue ? s.stops.flush() : "");
    }

    private void emit(Sequence s, String text, int[] ids, List<TokenLogprob> lp) {
        notified(s.request);
        try {
            s.request.sink.onDelta(s.choice, text, ids, lp);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "token sink of " + s.request.id() + " threw; cancelling it", e);
            s.request.cancel();
        }
    }

    private void finish(Sequence s, FinishReason reason, Object stopReason) {
        if (s.finished) {
            return;
        }
        s.finished = true;
        if (s.table != null) {
            s.table.free();
            s.table = null;
        }
        running.remove(s);
        waiting.remove(s);
        RequestState r = s.request;
        long now = System.nanoTime();
        Usage usage = new Usage(s.promptLength(), s.generated, s.cachedTokens,
                r.scheduledNanos == 0 ? now - r.arrivalNanos : r.scheduledNanos - r.arrivalNanos,
                s.firstTokenNanos == 0 ? 0 : s.firstTokenNanos - r.arrivalNanos, now - r.arrivalNanos);
        notified(r);
        try {
            r.sink.onFinish(s.choice, reason, stopReason, usage);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "token sink of " + r.id() + " threw in onFinish", e);
        }
        if (r.allFinished()) {
            live.remove(r);
        }
    }

    /** Ends every choice of a request, including choices not forked yet. */
    private void finishRequest(RequestState r, FinishReason reason) {
        if (r.scheduledNanos == 0 && live.contains(r)) {
            queued.decrementAndGet();
            r.scheduledNanos = System.nanoTime();
        }
        for (int c = 0; c < r.choices.length; c++) {
            if (r.choices[c] == null) {
                r.choices[c] = newSequence(r, c);
            }
            finish(r.choices[c], reason, null);
        }
        live.remove(r);
    }

    private void failRunning(Throwable e) {
        cache.resetPrefixCache(); // K/V written by the failed step is undefined
        for (Sequence s : List.copyOf(running)) {
            if (!s.finished) {
                s.finished = true;
                if (s.table != null) {
                    s.table.free();
                    s.table = null;
                }
                running.remove(s);
                notified(s.request);
                try {
                    s.request.sink.onError(s.choice, new EngineException("generation failed: " + e, e));
                } catch (RuntimeException ignored) {
                    // nothing more can be told to this client
                }
                if (s.request.allFinished()) {
                    live.remove(s.request);
                }
            }
        }
    }

    private void publishStats(int stepTokens) {
        KvCacheStats kv = cache.stats();
        stats = new EngineStats(waiting.size() + queued.get() - countUnscheduledWaiting(), running.size(), kv.usage(),
                kv.prefixQueryTokens(), kv.prefixHitTokens(), preemptions, iterations, stepTokens, promptTokens,
                generationTokens);
    }

    /** Waiting sequences never scheduled are also counted in {@code queued}; count them once. */
    private int countUnscheduledWaiting() {
        int n = 0;
        for (Sequence s : waiting) {
            if (s.request.scheduledNanos == 0) {
                n++;
            }
        }
        return n;
    }

    /** KV-cache statistics, for tests and metrics (engine-thread snapshot via {@link #stats()} otherwise). */
    KvCacheStats kvStats() {
        return cache.stats();
    }

    private static boolean contains(int[] ids, int id) {
        for (int x : ids) {
            if (x == id) {
                return true;
            }
        }
        return false;
    }
}
