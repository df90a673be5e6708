// graphile-worker 0.18.0 in the peer benchmark (../README.md). Usage:
//   node graphile-worker.mjs workload=drain|latency|enqueue config=documented|best|defaults [repeat=3 ...]
import { run, runMigrations, makeWorkerUtils, Logger } from "graphile-worker";
import pg from "pg";
import { args, main } from "./common.mjs";

// `documented`: the configuration of https://worker.graphile.org/docs/performance ("Quick stats");
// `best`: 48 concurrent jobs and a local queue of 1,000; `defaults`: no option set (concurrentJobs 1,
// no local queue, pool 10). All wake on LISTEN/NOTIFY; pollInterval stays at its default 2,000 ms.
const CONFIGS = {
  documented: { concurrentJobs: 24, maxPoolSize: 25, localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
  best: { concurrentJobs: 48, maxPoolSize: 50, localQueue: { size: 1000 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
  defaults: {},
};
const config = args.config ?? "documented";
if (!CONFIGS[config]) throw new Error(`config=${config}: use ${Object.keys(CONFIGS).join(", ")}`);
const quiet = new Logger(() => (level, message) => { if (level === "error") console.error(message); });

main(() => {
  let onJob, utils, runner, producerPool, workerPool;
  // Pools of our own, ended before the database is dropped.
  const pool = (connectionString, max) =>
    new pg.Pool({ connectionString, max }).on("error", () => {}).on("connect", (client) => client.on("error", () => {}));
  return {
    peer: "graphile-worker",
    config,
    settings: {
      concurrency: CONFIGS[config].concurrentJobs ?? 1,
      local_queue: CONFIGS[config].localQueue?.size ?? -1,
    },
    async open(u, hook) {
      onJob = hook;
      producerPool = pool(u, 10);
      workerPool = pool(u, CONFIGS[config].maxPoolSize ?? 10);
      await runMigrations({ pgPool: producerPool, logger: quiet });
      utils = await makeWorkerUtils({ pgPool: producerPool, logger: quiet }); // the producer's own pool
    },
    enqueueMany: (is) => utils.addJobs(is.map((i) => ({ identifier: "noop", payload: { i } }))),
    enqueueOne: (i) => utils.addJob("noop", { i }),
    async startWorkers() {
      runner = await run({
        pgPool: workerPool,
        noHandleSignals: true,
        logger: quiet,
        taskList: { noop: async (payload) => { onJob(payload.i); } },
        preset: { worker: CONFIGS[config] },
      });
    },
    async close() {
      await runner?.stop();
      await utils?.release();
      await producerPool?.end();
      await workerPool?.end();
    },
  };
});
