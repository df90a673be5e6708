// The three workloads of the peer benchmark (../README.md), run against an adapter for one peer:
//   adapter = { peer, config, settings,
//     open(url, onJob)  -> install the peer's schema and queue in a fresh database; no workers yet.
//                          The peer's handler must call onJob(i) first thing, i being the job's index.
//     enqueueMany(is)   -> one bulk enqueue call for the indexes `is` (the drain's chunks of 1,000)
//     enqueueOne(i)     -> one single enqueue call
//     startWorkers()    -> start the peer's workers
//     close() }
// Every run gets its own database, peer_<name>_<random>, dropped WITH (FORCE) afterwards.
import pg from "pg";
import { performance } from "node:perf_hooks";
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";

export const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const k = a.indexOf("=");
    return k < 0 ? [a, "true"] : [a.slice(0, k), a.slice(k + 1)];
  }),
);
const num = (key, fallback) => Number(args[key] ?? fallback);
const ADMIN_URL = args.admin_url ?? process.env.PEERS_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Creates peer_<name>_<random> on the admin URL's server, runs fn(url), drops the database. */
export async function withFreshDatabase(name, fn) {
  const db = `peer_${name.replace(/[^a-z0-9]/gi, "_")}_${randomBytes(4).toString("hex")}`.toLowerCase();
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${db}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${db}`;
    try {
      return await fn(url.toString());
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
}

export const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
const f2 = (x) => x.toFixed(2);

function line(adapter, fields) {
  const parts = [`peer=${adapter.peer}`, `config=${adapter.config}`];
  for (const [k, v] of Object.entries(fields)) parts.push(`${k}=${v}`);
  console.log(parts.join(" "));
}

async function waitFor(predicate, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) return false;
    await sleep(2);
  }
  return true;
}

/** Jobs enqueued in bulk with no worker running, then the workers started: start → last handler start. */
async function drainOnce(make, n, chunk) {
  const adapter = make();
  return withFreshDatabase(`${adapter.peer}_drain`, async (url) => {
    const runs = new Uint8Array(n);
    let started = 0;
    let last = 0;
    await adapter.open(url, (i) => {
      last = performance.now();
      started++;
      runs[i]++;
    });
    const e0 = performance.now();
    for (let from = 0; from < n; from += chunk) {
      const is = [];
      for (let i = from; i < Math.min(n, from + chunk); i++) is.push(i);
      await adapter.enqueueMany(is);
    }
    const enqueueSeconds = (performance.now() - e0) / 1000;
    const t0 = performance.now();
    await adapter.startWorkers();
    const done = await waitFor(() => started >= n, num("timeout_s", 600) * 1000);
    await sleep(200); // a run twice would show here
    await adapter.close();
    return { adapter, n, done, enqueueSeconds, seconds: (last - t0) / 1000, exactlyOnce: done && runs.every((r) => r === 1) };
  });
}

export async function drain(make) {
  const n = num("n", 100_000);
  const chunk = num("chunk", 1000);
  const warmup = num("drain_warmup", 20_000);
  if (warmup > 0) await drainOnce(make, warmup, chunk); // discarded: the JIT's first jobs
  for (let r = 0; r < num("repeat", 3); r++) {
    const d = await drainOnce(make, n, chunk);
    line(d.adapter, {
      workload: "drain", n, drain_per_s: d.done ? (n / d.seconds).toFixed(0) : "incomplete",
      enqueue_per_s: (n / d.enqueueSeconds).toFixed(0), exactly_once: d.exactlyOnce, ...d.adapter.settings,
    });
  }
}

/** Single enqueues on a fixed schedule from the workers' process: enqueue call's return → handler start. */
export async function latency(make) {
  const rate = num("rate", 200);
  const n = num("jobs", 4000);
  const adapter = make();
  await withFreshDatabase(`${adapter.peer}_latency`, async (url) => {
    let starts = new Float64Array(n);
    let offset = 0;
    await adapter.open(url, (i) => {
      const j = i - offset;
      if (j >= 0 && j < n) starts[j] = performance.now();
    });
    await adapter.startWorkers();
    const runs = num("repeat", 3);
    for (let r = -1; r < runs; r++) { // r = -1: the discarded warm-up run of the same length
      offset = (r + 1) * n;
      starts = new Float64Array(n);
      const returned = new Float64Array(n);
      const calls = new Float64Array(n);
      const t0 = performance.now() + 10;
      for (let j = 0; j < n; j++) {
        const due = t0 + (j * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait); // no busy wait: it would hold back the handlers on the same event loop
        const before = performance.now();
        await adapter.enqueueOne(offset + j);
        returned[j] = performance.now();
        calls[j] = returned[j] - before;
      }
      const achieved = n / ((returned[n - 1] - t0) / 1000);
      const complete = await waitFor(() => starts.every((s) => s > 0), 30_000);
      if (r < 0) continue;
      const lat = Float64Array.from(starts, (s, j) => s - returned[j]).filter((x, j) => starts[j] > 0).sort();
      calls.sort();
      line(adapter, {
        workload: "latency", rate, achieved_per_s: achieved.toFixed(0), n: lat.length,
        p50_ms: f2(pct(lat, 0.5)), p95_ms: f2(pct(lat, 0.95)), p99_ms: f2(pct(lat, 0.99)), max_ms: f2(lat[lat.length - 1]),
        enqueue_call_p50_ms: f2(pct(calls, 0.5)), enqueue_call_p99_ms: f2(pct(calls, 0.99)),
        ...(complete ? {} : { missing: n - lat.length }), ...adapter.settings,
      });
    }
    await adapter.close();
  });
}

/** 8 concurrent producers making single enqueue calls at a fixed total rate while the workers run. */
export async function enqueue(make) {
  const seconds = num("seconds", 20);
  const producers = num("producers", 8);
  for (const target of String(args.targets ?? "5000,10000").split(",").map(Number)) {
    const adapter = make();
    await withFreshDatabase(`${adapter.peer}_enqueue`, async (url) => {
      let handled = 0;
      await adapter.open(url, () => { handled++; });
      await adapter.startWorkers();
      let next = 0;
      let enqueued = 0;
      const interval = (1000 * producers) / target;
      const t0 = performance.now() + 10;
      const end = t0 + seconds * 1000;
      const loop = async (p) => {
        let due = t0 + (interval * p) / producers;
        while (due < end && performance.now() < end) { // a producer behind schedule stops with the others
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          await adapter.enqueueOne(next++);
          enqueued++;
          due += interval;
        }
      };
      await Promise.all(Array.from({ length: producers }, (_, p) => loop(p)));
      const elapsed = (performance.now() - t0) / 1000;
      const handledAtEnd = handled;
      line(adapter, {
        workload: "enqueue", producers, target_per_s: target, seconds, enqueued_per_s: (enqueued / elapsed).toFixed(0),
        completed_per_s: (handledAtEnd / elapsed).toFixed(0), backlog_at_end: enqueued - handledAtEnd, ...adapter.settings,
      });
      await waitFor(() => handled >= enqueued, 30_000); // let the backlog go before the database does
      await adapter.close();
    });
  }
}

export async function main(make) {
  const workloads = { drain, latency, enqueue };
  const workload = workloads[args.workload];
  if (!workload) throw new Error(`workload=${args.workload}: use drain, latency or enqueue`);
  await workload(make);
  process.exit(0);
}
