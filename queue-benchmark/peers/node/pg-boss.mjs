// pg-boss 12 in the peer benchmark (../README.md). Usage:
//   node pg-boss.mjs workload=drain|latency|enqueue [config=throughput] [local_concurrency=4 batch_size=1000 notify=true] [repeat=3 ...]
import { PgBoss } from "pg-boss";
import { args, main } from "./common.mjs";

// `throughput`: its throughput and latency options, all off by default (see ../README.md):
// localConcurrency workers in the process, each fetching batchSize jobs a query and fetching again
// at once while batches come back full (burstWhenBatchFull); LISTEN/NOTIFY wake-ups (useListenNotify
// on the instance, notify on the queue); the minimum polling interval, 0.5 s, as the backstop.
// (Its default, work() with no option, fetches "1 job every 2 seconds": no config for that here.)
const config = args.config ?? "throughput";
if (config !== "throughput") throw new Error(`config=${config}: use throughput`);
const localConcurrency = Number(args.local_concurrency ?? 4);
const batchSize = Number(args.batch_size ?? 1000);
const notify = (args.notify ?? "true") === "true"; // notify=false: polling only, every 0.5 s
const QUEUE = "noop";

main(() => {
  let boss, onJob, closing = false;
  return {
    peer: "pg-boss",
    config,
    settings: { local_concurrency: localConcurrency, batch_size: batchSize, notify },
    async open(url, hook) {
      onJob = hook;
      boss = new PgBoss({
        connectionString: url,
        max: localConcurrency + 10, // a connection per worker's fetch and completion, the producer's sends, the listener
        useListenNotify: notify,
      });
      boss.on("error", (e) => { if (!closing) console.error(`pg-boss error: ${e.message}`); });
      await boss.start();
      await boss.createQueue(QUEUE, { notify });
    },
    enqueueMany: (is) => boss.insert(QUEUE, is.map((i) => ({ data: { i } }))),
    enqueueOne: (i) => boss.send(QUEUE, { i }),
    async startWorkers() {
      const options = { localConcurrency, batchSize, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 };
      await boss.work(QUEUE, options, async (jobs) => {
        for (const job of jobs) onJob(job.data.i);
      });
    },
    async close() {
      closing = true;
      await boss?.stop({ graceful: true, timeout: 5000, close: true });
    },
  };
});
