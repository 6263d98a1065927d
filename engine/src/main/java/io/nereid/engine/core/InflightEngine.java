package io.nereid.engine.core;

import io.nereid.engine.api.AdmissionException;
import io.nereid.engine.api.Engine;
import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.EngineHealth;
import io.nereid.engine.api.EngineStats;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.sampling.RawLogprobs;
import io.nereid.engine.sampling.SampledToken;
import io.nereid.engine.sampling.SamplingChain;
import io.nereid.engine.text.IncrementalDetokenizer;
import io.nereid.engine.text.StopMatch;
import io.nereid.engine.text.StopStringMatcher;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.kvcache.BlockTable;
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
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

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
 * <p>Failures: everything a request brings (its sampler, its scheduling, the processing of its
 * logits, its sink's callbacks) runs under a guard, so a failure there fails that request alone
 * ({@link TokenSink#onError}) and the loop goes on. A failed forward pass fails the sequences of its
 * step and resets the prefix cache (their K/V is undefined). The engine thread stops only when the
 * backend fails {@value #MAX_CONSECUTIVE_STEP_FAILURES} steps in a row (a broken device, not a bad
 * request) or its own bookkeeping fails: then every request in flight gets {@code onError}, every
 * later {@link #submit} is refused with {@link AdmissionException.Reason#ENGINE_FAILED}, and
 * {@link #health()} says why, so the process can be restarted.
 *
 * <p>Threads: {@link #submit}, {@link #validate}, {@link #stats}, {@link #health} and
 * {@link RequestHandle#cancel()} may be called from any thread; everything else, sink callbacks
 * included, runs on the engine thread.
 */
public final class InflightEngine implements Engine {

    private static final System.Logger LOG = System.getLogger(InflightEngine.class.getName());
    private static final long IDLE_PARK_NANOS = 20_000_000; // checks deadlines even when idle
    /** Failed forward passes in a row after which the backend counts as broken and the engine stops. */
    static final int MAX_CONSECUTIVE_STEP_FAILURES = 3;
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
    private final AtomicInteger inboxed = new AtomicInteger();       // in the inbox, not yet taken by the engine thread
    private final AtomicLong submissions = new AtomicLong();
    private volatile boolean closing;
    /** Set by the engine thread just before its last look at the inbox: a request added later is refused. */
    private volatile boolean exited;
    /** Why the engine thread stopped on its own; set before {@link #exited}. */
    private volatile Throwable failure;
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
    private int consecutiveStepFailures;

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
        if (closing || exited) {
            throw refusal();
        }
        if (queued.incrementAndGet() > config.maxWaiting()) {
            queued.decrementAndGet();
            throw new AdmissionException(AdmissionException.Reason.QUEUE_FULL, Duration.ofSeconds(1),
                    "the waiting queue is full (" + config.maxWaiting() + " requests); retry later");
        }
        RequestState state = new RequestState(r, sink, submissions.incrementAndGet(), () -> LockSupport.unpark(thread));
        inboxed.incrementAndGet();
        inbox.add(state);
        if (exited && inbox.remove(state)) {
            // The engine thread took its last look at the inbox before this request arrived: nothing
            // would ever answer it. (If remove fails, that last look took it and ends it.)
            inboxed.decrementAndGet();
            queued.decrementAndGet();
            throw refusal();
        }
        LockSupport.unpark(thread);
        return state;
    }

    /** Why a request cannot be queued once the engine thread is stopping or stopped. */
    private AdmissionException refusal() {
        Throwable f = failure;
        if (f != null) {
            return new AdmissionException(AdmissionException.Reason.ENGINE_FAILED, Duration.ofSeconds(5),
                    "the engine stopped after a failure (" + describe(f) + "); the server must be restarted");
        }
        return new AdmissionException(AdmissionException.Reason.SHUTTING_DOWN, Duration.ofSeconds(5),
                "the engine is shutting down");
    }

    @Override
    public void validate(GenerationRequest r) {
        int vocab = backend.vocabSize();
        int prompt = r.promptTokens().length;
        if (prompt == 0) {
            throw new RequestValidationException("prompt", "the prompt is empty");
        }
        if (r.n() < 1 || r.n() > config.maxNumSeqs()) {
            throw new RequestValidationException("n", "n must be in [1, " + config.maxNumSeqs() + "], got " + r.n());
        }
        if (r.maxTokens() < 0) {
            throw new RequestValidationException("max_tokens", "max_tokens must be at least 0, got " + r.maxTokens());
        }
        if (r.minTokens() < 0 || r.minTokens() > r.maxTokens()) {
            throw new RequestValidationException("min_tokens", "min_tokens must be in [0, max_tokens], got " + r.minTokens());
        }
        if (r.promptLogprobs() > SamplingParams.MAX_LOGPROBS) {
            throw new RequestValidationException("prompt_logprobs", "prompt_logprobs must be in [0, "
                    + SamplingParams.MAX_LOGPROBS + "], got " + r.promptLogprobs());
        }
        for (int t : r.promptTokens()) {
            if (t < 0 || t >= vocab) {
                throw new RequestValidationException("prompt", "token id " + t + " is outside the vocabulary of " + vocab);
            }
        }
        for (Map.Entry<Integer, Float> e : r.sampling().logitBias().entrySet()) {
            if (e.getKey() < 0 || e.getKey() >= vocab) {
                throw new RequestValidationException("logit_bias", "logit_bias names token " + e.getKey()
                        + ", outside the vocabulary [0, " + vocab + ")");
            }
        }
        validateStops(r, vocab);
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

    private static void validateStops(GenerationRequest r, int vocab) {
        List<String> stops = r.stop();
        if (stops.size() > GenerationRequest.MAX_STOPS) {
            throw new RequestValidationException("stop", "at most " + GenerationRequest.MAX_STOPS + " stop strings, got "
                    + stops.size());
        }
        for (int i = 0; i < stops.size(); i++) {
            String problem = StopStringMatcher.problem(i, stops.get(i));
            if (problem != null) {
                throw new RequestValidationException("stop", problem);
            }
            if (stops.get(i).length() > GenerationRequest.MAX_STOP_CHARS) {
                throw new RequestValidationException("stop", "stop string " + i + " has " + stops.get(i).length()
                        + " characters; at most " + GenerationRequest.MAX_STOP_CHARS);
            }
        }
        int[] ids = r.stopTokenIds();
        if (ids.length > GenerationRequest.MAX_STOP_TOKEN_IDS) {
            throw new RequestValidationException("stop_token_ids", "at most " + GenerationRequest.MAX_STOP_TOKEN_IDS
                    + " stop token ids, got " + ids.length);
        }
        for (int id : ids) {
            if (id < 0 || id >= vocab) {
                throw new RequestValidationException("stop_token_ids", "stop token id " + id
                        + " is outside the vocabulary [0, " + vocab + ")");
            }
        }
    }

    @Override
    public EngineStats stats() {
        EngineStats s = stats;   // the engine thread's last snapshot; requests it has not taken yet are waiting too
        return new EngineStats(s.waiting() + inboxed.get(), s.running(), s.kvUsage(), s.prefixQueryTokens(),
                s.prefixHitTokens(), s.preemptions(), s.iterations(), s.lastStepTokens(), s.promptTokens(),
                s.generationTokens());
    }

    @Override
    public EngineHealth health() {
        Throwable f = failure;
        if (f != null) {
            return new EngineHealth(false, describe(f));
        }
        if (!thread.isAlive() && !closing) {
            return new EngineHealth(false, "the engine thread ended unexpectedly");
        }
        return closing || exited ? new EngineHealth(false, null) : EngineHealth.RUNNING;
    }

    private static String describe(Throwable t) {
        return t instanceof EngineException && t.getMessage() != null ? t.getMessage() : t.toString();
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
        try {
            run();
        } catch (Throwable t) {
            stop(t);
        }
    }

    private void run() {
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
                step();
            }
            endStep();
            if (idle) {
                publishStats(0);
                LockSupport.parkNanos(IDLE_PARK_NANOS);
            }
        }
    }

    /**
     * The engine thread ends after a failure outside every request's guard: fails every request it
     * holds or that is still in the inbox, refuses all later ones, and never throws (its state may be
     * what broke, so each part is guarded on its own).
     */
    private void stop(Throwable cause) {
        failure = cause;   // before exited: a submit that sees exited reports the failure
        exited = true;
        LOG.log(System.Logger.Level.ERROR, "the engine stopped after a failure; failing every request in flight and"
                + " refusing new ones", cause);
        EngineException error = new EngineException("the engine stopped after a failure: " + describe(cause), cause);
        for (RequestState r; (r = inbox.poll()) != null; ) {
            inboxed.decrementAndGet();
            live.add(r);
        }
        for (RequestState r : List.copyOf(live)) {
            try {
                failRequest(r, error);
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.ERROR, "could not fail request " + r.id(), t);
            }
        }
        try {
            endStep();
            publishStats(0);
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "could not publish the final engine state", t);
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
            callSink(r, "onStepEnd", r.sink::onStepEnd);
        }
        notified.clear();
    }

    /**
     * Runs one of {@code r}'s sink callbacks: a sink that throws (it must not) cancels its request
     * instead of reaching the engine loop.
     */
    private static void callSink(RequestState r, String callback, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.WARNING, "token sink of " + r.id() + " threw in " + callback + "; cancelling it", e);
            r.cancel();
        }
    }

    private void drainInbox() {
        for (RequestState r; (r = inbox.poll()) != null; ) {
            inboxed.decrementAndGet();
            live.add(r);
            try {
                r.choices[0] = newSequence(r, 0);
                enqueueWaiting(r.choices[0], false);
            } catch (RuntimeException | Error e) {
                failRequest(r, requestFailure(r, "could not be admitted", e));
            }
        }
    }

    private Sequence newSequence(RequestState r, int choice) {
        return new Sequence(r, choice, sampler(r, choice), new IncrementalDetokenizer(tokenizer, true, true),
                new StopStringMatcher(r.request.stop()));
    }

    /**
     * Each choice has its own RNG stream: seed + choice, or a per-request seed when none was given.
     * Until min_tokens, the EOS ids (unless ignore_eos) and the stop token ids cannot be chosen.
     */
    private SamplingChain sampler(RequestState r, int choice) {
        GenerationRequest q = r.request;
        long seed = q.sampling().seed() != null ? q.sampling().seed() + choice : r.order * 0x9E3779B97F4A7C15L + choice;
        int[] suppressed = q.ignoreEos() ? q.stopTokenIds()
                : IntStream.concat(Arrays.stream(eosIds), Arrays.stream(q.stopTokenIds())).toArray();
        return new SamplingChain(q.sampling(), backend.vocabSize(), q.promptTokens(), seed, q.minTokens(), suppressed);
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

    /**
     * One iteration's step: schedules (each sequence under its request's guard), runs the forward
     * pass, and processes each sequence's logits (under its guard again). A failed forward pass fails
     * the step's sequences; {@value #MAX_CONSECUTIVE_STEP_FAILURES} in a row stop the engine.
     */
    private void step() {
        int budget = config.maxNumBatchedTokens();
        // Prompt positions whose logits are all kept (prompt logprobs): bounded per step, so a long
        // prompt on a large vocabulary is scored over several steps instead of in one huge array.
        int[] logitRows = {(int) Math.max(1, Math.min(budget, PROMPT_LOGIT_BYTES_PER_STEP / (4L * backend.vocabSize())))};
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
            try {
                budget -= scheduleRunning(s, budget, logitRows, slices, owners);
            } catch (RuntimeException | Error e) {
                failRequest(s.request, requestFailure(s.request, "could not be scheduled", e));
            }
        }
        // 2. Waiting prompts, in order, while they fit (no skipping ahead: no starvation).
        while (budget > 0 && !waiting.isEmpty() && running.size() < config.maxNumSeqs()) {
            Sequence s = waiting.peekFirst();
            int scheduled;
            try {
                scheduled = scheduleWaiting(s, budget, logitRows, slices, owners);
            } catch (RuntimeException | Error e) {
                failRequest(s.request, requestFailure(s.request, "could not be scheduled", e));
                continue;
            }
            if (scheduled < 0) {
                break;
            }
            budget = Math.max(0, budget - scheduled);
        }
        // A sequence failed after it was scheduled (a later fork of its request failed) has no place in the forward.
        for (int i = owners.size() - 1; i >= 0; i--) {
            if (owners.get(i).finished) {
                owners.remove(i);
                slices.remove(i);
            }
        }
        if (slices.isEmpty()) {
            publishStats(0);
            LockSupport.parkNanos(IDLE_PARK_NANOS); // nothing fits now; wait for frees
            return;
        }
        float[][] logits;
        try {
            backend.copy(cache.drainCopies());
            logits = backend.forward(new Step(slices)).logits();
        } catch (RuntimeException | Error e) {
            stepFailed(owners, e);
            return;
        }
        consecutiveStepFailures = 0;
        iterations++;
        int stepTokens = 0;
        int vocab = backend.vocabSize();
        for (int i = 0; i < slices.size(); i++) {
            Sequence s = owners.get(i);
            Slice slice = slices.get(i);
            int n = slice.tokens().length;
            boolean allLogits = scoresPrompt(s, slice.startPos());
            boolean wantsLogits = slice.endPos() == s.length();
            stepTokens += n;
            s.computed += n;
            if (s.computed <= s.promptLength()) {
                promptTokens += n;
            }
            if (s.finished) {
                continue;   // its request failed earlier in this loop
            }
            try {
                if (allLogits) {
                    scorePrompt(s.request, slice, logits[i], vocab);
                }
                if (wantsLogits) {
                    float[] last = allLogits ? Arrays.copyOfRange(logits[i], (n - 1) * vocab, n * vocab) : logits[i];
                    onLogits(s, last);
                }
            } catch (RuntimeException | Error e) {
                failRequest(s.request, requestFailure(s.request, "failed while its output was processed", e));
            }
        }
        publishStats(stepTokens);
    }

    /**
     * Schedules running sequence {@code s}'s next slice (a decode token or a prompt chunk), preempting
     * others if its blocks do not fit; returns the tokens it takes from the budget (0: none this step).
     */
    private int scheduleRunning(Sequence s, int budget, int[] logitRows, List<Slice> slices, List<Sequence> owners) {
        int chunk = config.chunkedPrefill() ? Math.min(s.pending(), budget) : s.pending();
        if (chunk > budget && budget < config.maxNumBatchedTokens()) {
            return 0; // an unchunked prompt takes a step of its own
        }
        if (scoresPrompt(s, s.computed)) {
            chunk = Math.min(chunk, logitRows[0]);   // scored in chunks even without chunked prefill
            if (chunk == 0) {
                return 0;
            }
            logitRows[0] -= chunk;
        }
        while (!cache.canAppend(s.table, chunk)) {
            Sequence victim = victim();
            preempt(victim);
            if (victim == s) {
                break;
            }
        }
        if (s.table == null) {
            return 0; // preempted itself
        }
        return Math.min(budget, schedule(s, chunk, slices, owners));
    }

    /**
     * Admits the first waiting sequence {@code s} with its longest cached prefix and schedules its
     * first chunk; returns the tokens taken from the budget, or -1 when it does not fit now (the
     * waiting queue then waits: no skipping ahead).
     */
    private int scheduleWaiting(Sequence s, int budget, int[] logitRows, List<Slice> slices, List<Sequence> owners) {
        // A prompt whose logprobs are wanted is computed in full: its logits are not in the cache.
        PrefixMatch match = config.prefixCaching() && !s.request.needsPromptLogprobs()
                ? cache.longestCachedPrefix(s.tokens(), 0) : cache.longestCachedPrefix(new int[0], 0);
        int chunk = s.length() - match.numTokens();
        if (config.chunkedPrefill()) {
            chunk = Math.min(chunk, budget);
        } else if (chunk > budget && budget < config.maxNumBatchedTokens()) {
            return -1; // an unchunked prompt waits for a step of its own
        }
        boolean scores = scoresPrompt(s, match.numTokens());
        if (scores) {
            chunk = Math.min(chunk, logitRows[0]);
            if (chunk == 0) {
                return -1;
            }
        }
        int blocks = cache.blocksToAdmit(match, match.numTokens() + chunk);
        // The watermark protects running sequences; with none running it would only deadlock.
        if (running.isEmpty() ? blocks > cache.freeBlocks() : !cache.canAdmit(blocks)) {
            return -1;
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
            logitRows[0] -= chunk;
        }
        return schedule(s, chunk, slices, owners);
    }

    /**
     * The forward pass failed: its K/V is undefined, so the prefix cache is forgotten and the step's
     * sequences fail (the backend's fault, not theirs). After {@value #MAX_CONSECUTIVE_STEP_FAILURES}
     * such steps in a row the backend counts as broken and the engine stops.
     */
    private void stepFailed(List<Sequence> owners, Throwable e) {
        consecutiveStepFailures++;
        LOG.log(System.Logger.Level.ERROR, "engine step failed (" + consecutiveStepFailures + " in a row); failing the "
                + owners.size() + " sequences in it", e);
        cache.resetPrefixCache();
        EngineException error = new EngineException("generation failed: " + e, e);
        for (Sequence s : owners) {
            if (!s.finished) {
                release(s);
                if (s.request.end(s.choice)) {
                    notified(s.request);
                    callSink(s.request, "onError", () -> s.request.sink.onError(s.choice, error));
                }
                if (s.request.allFinished()) {
                    live.remove(s.request);
                }
            }
        }
        publishStats(0);
        if (consecutiveStepFailures >= MAX_CONSECUTIVE_STEP_FAILURES) {
            throw new EngineException("the backend failed " + consecutiveStepFailures + " steps in a row (last: " + e
                    + ")", e);
        }
    }

    /** Whether a slice of {@code s} from {@code start} keeps every position's logits (prompt logprobs). */
    private static boolean scoresPrompt(Sequence s, int start) {
        // Every position whose next token is a prompt token needs its logits.
        return s.request.needsPromptLogprobs() && start < s.promptLength() - 1;
    }

    private int schedule(Sequence s, int chunk, List<Slice> slices, List<Sequence> owners) {
        int start = s.computed;
        s.table.append(s.tokens(start, start + chunk));
        int logitRows = scoresPrompt(s, start) ? chunk : start + chunk == s.length() ? 1 : 0;
        slices.add(new Slice(s.tokens(start, start + chunk), start, s.table.blockIds(), logitRows));
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
            SampledToken t = RawLogprobs.score(Arrays.copyOfRange(rows, j * vocab, (j + 1) * vocab), prompt[next],
                    r.request.promptLogprobs());
            r.promptLogprobs[next - 1] = new TokenLogprob(t.id(), t.logprob(), t.rank(), t.topIds(), t.topLogprobs());
        }
    }

    /** The prompt is complete: its logprobs (when asked for) go out before any of its output. */
    private void sendPromptLogprobs(RequestState r) {
        r.promptLogprobsSent = true;
        notified(r);
        callSink(r, "onPromptLogprobs", () -> r.sink.onPromptLogprobs(List.of(r.promptLogprobs)));
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
        SampledToken t = s.chain.sample(logits, q.logprobs());
        s.chain.accept(t.id());
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
        callSink(s.request, "onDelta", () -> s.request.sink.onDelta(s.choice, text, ids, lp));
    }

    /** Frees {@code s}'s blocks and takes it out of the queues; it computes nothing more. */
    private void release(Sequence s) {
        s.finished = true;
        running.remove(s);   // first: out of the queues even if freeing its blocks fails
        waiting.remove(s);
        if (s.table != null) {
            BlockTable table = s.table;
            s.table = null;
            table.free();
        }
    }

    private void finish(Sequence s, FinishReason reason, Object stopReason) {
        if (s.finished) {
            return;
        }
        release(s);
        RequestState r = s.request;
        if (r.end(s.choice)) {
            Usage usage = usage(r, s.promptLength(), s.generated, s.cachedTokens, s.firstTokenNanos);
            notified(r);
            callSink(r, "onFinish", () -> r.sink.onFinish(s.choice, reason, stopReason, usage));
        }
        if (r.allFinished()) {
            live.remove(r);
        }
    }

    private static Usage usage(RequestState r, int promptLength, int generated, int cachedTokens, long firstTokenNanos) {
        long now = System.nanoTime();
        return new Usage(promptLength, generated, cachedTokens,
                r.scheduledNanos == 0 ? now - r.arrivalNanos : r.scheduledNanos - r.arrivalNanos,
                firstTokenNanos == 0 ? 0 : firstTokenNanos - r.arrivalNanos, now - r.arrivalNanos);
    }

    /** A request never scheduled leaves the queued count when it ends. */
    private void settleQueued(RequestState r) {
        if (r.scheduledNanos == 0 && live.contains(r)) {
            queued.decrementAndGet();
            r.scheduledNanos = System.nanoTime();
        }
    }

    /** Ends every choice of a request, including choices not forked yet (which produced nothing). */
    private void finishRequest(RequestState r, FinishReason reason) {
        settleQueued(r);
        for (int c = 0; c < r.choices.length; c++) {
            if (r.choices[c] != null) {
                finish(r.choices[c], reason, null);
            } else if (r.end(c)) {
                int choice = c;
                Usage usage = usage(r, r.request.promptTokens().length, 0, 0, 0);
                notified(r);
                callSink(r, "onFinish", () -> r.sink.onFinish(choice, reason, null, usage));
            }
        }
        live.remove(r);
    }

    /**
     * Fails every choice of {@code r} not yet ended with {@code error} (its blocks freed): what a
     * failure in one request's own processing does, leaving every other request running.
     */
    private void failRequest(RequestState r, EngineException error) {
        settleQueued(r);
        for (int c = 0; c < r.choices.length; c++) {
            if (r.choices[c] != null && !r.choices[c].finished) {
                try {
                    release(r.choices[c]);
                } catch (RuntimeException | Error e) {
                    LOG.log(System.Logger.Level.ERROR, "could not free the blocks of " + r.id() + " choice " + c, e);
                }
            }
            if (r.end(c)) {
                int choice = c;
                notified(r);
                callSink(r, "onError", () -> r.sink.onError(choice, error));
            }
        }
        live.remove(r);
    }

    /** The error a request gets when its own processing failed ({@code what}: where); the cause is logged. */
    private static EngineException requestFailure(RequestState r, String what, Throwable cause) {
        LOG.log(System.Logger.Level.ERROR, "request " + r.id() + " " + what + "; failing it alone", cause);
        return new EngineException("the request " + what + " in the engine: " + cause, cause);
    }

    private void publishStats(int stepTokens) {
        KvCacheStats kv = cache.stats();
        stats = new EngineStats(waiting.size(), running.size(), kv.usage(), kv.prefixQueryTokens(), kv.prefixHitTokens(),
                preemptions, iterations, stepTokens, promptTokens, generationTokens);
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
