// llama-bench's pp / tg rows for a GGUF file, through llama.cpp's own libraries (the prebuilt CPU
// build node-llama-cpp ships): the same-machine baseline for `bin/nereid bench-model`.
// Usage: node bench.mjs MODEL [THREADS] [PP] [TG] [REPS] [DEPTH]   (PP or TG 0 skips that row)
// ppN: one llama_decode of N tokens; tgN: N one-token decodes, no sampling; both from an empty
// context, or after DEPTH tokens already in it (llama-bench's -d: rows labelled "tg128 @ d2048"; the
// depth's prefill is not timed). As llama-bench: random token ids, a warm-up run first, mean ±
// sample stddev of tok/s.
import {getLlama} from "node-llama-cpp";

const [modelPath, threads = "2", pp = "512", tg = "128", reps = "5", depth = "0"] = process.argv.slice(2);
if (!modelPath) {
  console.error("usage: node bench.mjs MODEL [THREADS] [PP] [TG] [REPS] [DEPTH]");
  process.exit(2);
}
const llama = await getLlama({gpu: false, build: "never", logLevel: "error", maxThreads: Number(threads)});
const model = await llama.loadModel({modelPath, gpuLayers: 0});
const context = await model.createContext({
  contextSize: Number(depth) + Math.max(Number(pp), Number(tg)) + 64,
  batchSize: Math.max(Number(pp), Number(depth), 1),
  threads: {ideal: Number(threads), min: Number(threads)},
  sequences: 1,
});
const sequence = context.getSequence();

function randomTokens(n, seed) {
  const out = [];
  for (let i = 0, s = seed; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out.push(100 + (s % 30000));
  }
  return out;
}

function meanStd(xs) {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length - 1));
  return `${mean.toFixed(2)} ± ${sd.toFixed(2)}`;
}

async function seconds(run) {
  const t0 = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** A fresh history holding DEPTH random tokens (not timed). */
async function atDepth() {
  await sequence.clearHistory();
  if (Number(depth) > 0) {
    await sequence.evaluateWithoutGeneratingNewTokens(randomTokens(Number(depth), 3));
  }
}

async function promptRun(n) {
  await atDepth();
  const tokens = randomTokens(n, 7);
  return n / await seconds(() => sequence.evaluateWithoutGeneratingNewTokens(tokens));
}

async function generationRun(n) {
  await atDepth();
  const tokens = randomTokens(n, 11);
  return n / await seconds(async () => {
    for (const token of tokens) {
      await sequence.evaluateWithoutGeneratingNewTokens([token]);
    }
  });
}

const name = modelPath.split("/").pop();
console.log(`| model | backend | threads | test | t/s |`);
console.log(`| --- | --- | ---: | ---: | ---: |`);
for (const [test, n, run] of [["pp" + pp, Number(pp), promptRun], ["tg" + tg, Number(tg), generationRun]]) {
  if (n <= 0) {
    continue;
  }
  await run(Math.min(n, 16)); // warm-up
  const rates = [];
  for (let r = 0; r < Number(reps); r++) {
    rates.push(await run(n));
  }
  console.log(`| ${name} | llama.cpp ${llama.llamaCppRelease.release} (node-llama-cpp, CPU) | ${threads} | ${test}${Number(depth) > 0 ? " @ d" + depth : ""} | ${meanStd(rates)} |`);
}
process.exit(0);
