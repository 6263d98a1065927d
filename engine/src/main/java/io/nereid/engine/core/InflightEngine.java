package io.nereid.engine.core;

import io.nereid.engine.api.Constraint;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.AdmissionException;
import io.nereid.engine.api.Engine;
import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.EngineHealth;
import io.nereid.engine.api.EngineStats;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.structured.CompiledConstraint;
import io.nereid.engine.structured.Constraints;
import io.nereid.engine.structured.GrammarException;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import io.nereid.kvcache.KvCacheStats;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The inflight-batching engine: its inbox and its loop, around three units with one job each
 * (vLLM v1's split). Every iteration takes new requests from the inbox, ends cancelled and expired
 * ones, and runs one step: the {@link Scheduler} plans it (running sequences first, then chunks of
 * waiting prompts, within {@code maxNumBatchedTokens} and {@code maxNumSeqs}; prefix reuse,
 * admission above a watermark, recompute preemption), the {@link Executor} runs it on the
 * {@link Backend}, the {@link OutputProcessor} turns the logits into tokens, text and events, and
 * the scheduler applies the outcome. {@link Events} delivers to each request's {@link TokenSink}
 * and ends every iteration with {@link TokenSink#onStepEnd()} for every sink it gave events to.
 *
 * <p>Failures: everything a request brings (its admission, its scheduling, the processing of its
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
    /** Bytes of prompt-logprob logits (every position x vocabulary, F32) one step may produce. */
    private static final long PROMPT_LOGIT_BYTES_PER_STEP = 64L << 20;
    /** Failed forward passes in a row after which the backend counts as broken and the engine stops. */
    static final int MAX_CONSECUTIVE_STEP_FAILURES = 3;

    private final EngineConfig config;
    private final KvCacheManager cache;
    private final RequestLimits limits;
    private final Constraints constraints;   // compiled structured-output constraints, cached by text
    private final Scheduler scheduler;
    private final Executor executor;
    private final OutputProcessor outputs;
    private final Events events = new Events();
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
    private final List<RequestState> live = new ArrayList<>();
    private long iterations;
    private long promptTokens;
    private int consecutiveStepFailures;

    /** An engine over {@code backend}, whose KV cache must already hold {@code config.numBlocks()} blocks. */
    public InflightEngine(EngineConfig config, Backend backend, Tokenizer tokenizer) {
        this(config, backend, tokenizer, DraftProposer.NONE);
    }

    /**
     * An engine that verifies the drafts {@code proposer} offers for each decode in the same pass
     * (speculative decoding; {@link DraftProposer#NONE} for none).
     */
    public InflightEngine(EngineConfig config, Backend backend, Tokenizer tokenizer, DraftProposer proposer) {
        this.config = config;
        this.limits = new RequestLimits(config, backend.vocabSize());
        this.constraints = new Constraints(tokenizer);
        this.cache = new KvCacheManager(new KvCacheConfig(config.numBlocks(), config.blockSize(), config.watermark(),
                KvCacheConfig.randomSeed()));
        int promptRows = (int) Math.min(config.maxNumBatchedTokens(), PROMPT_LOGIT_BYTES_PER_STEP / (4L * backend.vocabSize()));
        this.scheduler = new Scheduler(config, cache, proposer, promptRows, queued::decrementAndGet);
        this.executor = new Executor(backend, cache);
        this.outputs = new OutputProcessor(tokenizer, backend.vocabSize(), config.maxModelLen(), events,
                proposer != DraftProposer.NONE);
        this.thread = Thread.ofPlatform().name("nereid-engine").daemon().unstarted(this::loop);
        thread.start();
    }

    @Override
    public RequestHandle submit(GenerationRequest r, TokenSink sink) {
        CompiledConstraint constraint = checked(r);
        if (closing || exited) {
            throw refusal();
        }
        if (queued.incrementAndGet() > config.maxWaiting()) {
            queued.decrementAndGet();
            throw new AdmissionException(AdmissionException.Reason.QUEUE_FULL, Duration.ofSeconds(1),
                    "the waiting queue is full (" + config.maxWaiting() + " requests); retry later");
        }
        RequestState state = new RequestState(r, sink, submissions.incrementAndGet(), () -> LockSupport.unpark(thread),
                constraint);
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
        checked(r);
    }

    /** {@link #validate}'s checks; the request's compiled constraint, or null when it has none. */
    private CompiledConstraint checked(GenerationRequest r) {
        limits.check(r);
        return r.constraint() == null ? null : compiled(r.constraint());
    }

    @Override
    public void prepare(Constraint c) {
        compiled(c);
    }

    private CompiledConstraint compiled(Constraint c) {
        try {
            return constraints.compile(c);
        } catch (GrammarException e) {
            throw new RequestValidationException("constraint", e.getMessage());
        }
    }

    @Override
    public EngineStats stats() {
        EngineStats s = stats;   // the engine thread's last snapshot; requests it has not taken yet are waiting too
        return new EngineStats(s.waiting() + inboxed.get(), s.running(), s.kvUsage(), s.prefixQueryTokens(),
                s.prefixHitTokens(), s.preemptions(), s.iterations(), s.lastStepTokens(), s.promptTokens(),
                s.generationTokens(), s.speculation());
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
                events.endStep();
                publishStats(0);
                return;
            }
            expireAndCancel();
            boolean idle = !scheduler.hasWork();
            if (!idle) {
                step();
            }
            events.endStep();
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
            events.endStep();
            publishStats(0);
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "could not publish the final engine state", t);
        }
    }

    private void drainInbox() {
        for (RequestState r; (r = inbox.poll()) != null; ) {
            inboxed.decrementAndGet();
            live.add(r);
            try {
                r.outputs[0] = outputs.newOutput(r, 0);
                r.choices[0] = new Sequence(r, 0, r.outputs[0]);
                scheduler.add(r.choices[0]);
            } catch (RuntimeException | Error e) {
                failRequest(r, requestFailure(r, "could not be admitted", e));
            }
        }
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
     * One step: plan (a sequence whose scheduling fails fails its request alone), run the forward
     * pass (a failure there fails the step's sequences; {@value #MAX_CONSECUTIVE_STEP_FAILURES} in a
     * row stop the engine), process the output (a slice that fails there fails its request alone),
     * and apply the outcome.
     */
    private void step() {
        long t0 = System.nanoTime();
        StepPlan plan = scheduler.schedule();
        for (StepPlan.Failure f : plan.failures()) {
            failRequest(f.sequence().request, requestFailure(f.sequence().request, "could not be scheduled", f.cause()));
        }
        plan = plan.withoutFinished();   // a failed request may have had another choice in the plan
        if (plan.isEmpty()) {
            publishStats(0);
            LockSupport.parkNanos(IDLE_PARK_NANOS); // nothing fits now; wait for frees
            return;
        }
        StepOutput out;
        try {
            out = executor.execute(plan);
        } catch (RuntimeException | Error e) {
            stepFailed(plan, e);
            return;
        }
        consecutiveStepFailures = 0;
        iterations++;
        for (ScheduledSlice s : plan.slices()) {
            if (s.start() + s.tokens().length <= s.sequence().promptLength()) {
                promptTokens += s.tokens().length;
            }
        }
        StepOutcome outcome = outputs.process(plan, out,
                (r, e) -> failRequest(r, requestFailure(r, "failed while its output was processed", e)));
        scheduler.stepTimed(plan, System.nanoTime() - t0);   // before update, which may finish its sequences
        scheduler.update(plan, outcome);
        live.removeIf(RequestState::allFinished);
        publishStats(plan.tokens());
    }

    /**
     * The forward pass failed: its K/V is undefined, so the prefix cache is forgotten and the step's
     * sequences fail (the backend's fault, not theirs). After {@value #MAX_CONSECUTIVE_STEP_FAILURES}
     * such steps in a row the backend counts as broken and the engine stops.
     */
    private void stepFailed(StepPlan plan, Throwable e) {
        consecutiveStepFailures++;
        LOG.log(System.Logger.Level.ERROR, "engine step failed (" + consecutiveStepFailures + " in a row); failing the "
                + plan.slices().size() + " sequences in it", e);
        cache.resetPrefixCache();
        EngineException error = new EngineException("generation failed: " + e, e);
        for (ScheduledSlice slice : plan.slices()) {
            Sequence s = slice.sequence();
            if (!s.finished()) {
                scheduler.release(s);
                events.error(s.request, s.choice, error);
            }
        }
        live.removeIf(RequestState::allFinished);
        publishStats(0);
        if (consecutiveStepFailures >= MAX_CONSECUTIVE_STEP_FAILURES) {
            throw new EngineException("the backend failed " + consecutiveStepFailures + " steps in a row (last: " + e
                    + ")", e);
        }
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
            if (r.choices[c] != null && !r.choices[c].finished()) {
                scheduler.release(r.choices[c]);
            }
            events.finish(r, c, reason, null);
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
            if (r.choices[c] != null && !r.choices[c].finished()) {
                try {
                    scheduler.release(r.choices[c]);
                } catch (RuntimeException | Error e) {
                    LOG.log(System.Logger.Level.ERROR, "could not free the blocks of " + r.id() + " choice " + c, e);
                }
            }
            events.error(r, c, error);
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
        stats = new EngineStats(scheduler.waiting(), scheduler.running(), kv.usage(), kv.prefixQueryTokens(),
                kv.prefixHitTokens(), scheduler.preemptions(), iterations, stepTokens, promptTokens, outputs.generated(),
                outputs.speculation());
    }

    /** KV-cache statistics, for tests and metrics (engine-thread snapshot via {@link #stats()} otherwise). */
    KvCacheStats kvStats() {
        return cache.stats();
    }
}
