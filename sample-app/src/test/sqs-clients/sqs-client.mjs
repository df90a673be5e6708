#!/usr/bin/env node
// End-to-end SQS client checks with @aws-sdk/client-sqs (AWS JSON 1.0 protocol, X-Amz-Target).
// Env: SQS_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (us-east-1), QUEUE_PREFIX,
//      CHECK_SIGNATURES (1|0), STALE_HANDLE (reject|ignore), CASES (optional comma list).
// Output: PASS <case>[: detail] | FAIL <case>: reason | SKIP <case>: why. Exit 0 iff no FAIL.
import crypto from "node:crypto";
import { createRequire } from "node:module";
import {
  SQSClient, CreateQueueCommand, GetQueueUrlCommand, SendMessageCommand, ReceiveMessageCommand,
  DeleteMessageCommand, ChangeMessageVisibilityCommand, SendMessageBatchCommand, DeleteMessageBatchCommand,
  ChangeMessageVisibilityBatchCommand, GetQueueAttributesCommand, SetQueueAttributesCommand, ListQueuesCommand,
  ListDeadLetterSourceQueuesCommand, TagQueueCommand, UntagQueueCommand, ListQueueTagsCommand, PurgeQueueCommand,
  DeleteQueueCommand, StartMessageMoveTaskCommand, ListMessageMoveTasksCommand, CancelMessageMoveTaskCommand,
} from "@aws-sdk/client-sqs";

const require = createRequire(import.meta.url);
const SDK_VERSION = require("@aws-sdk/client-sqs/package.json").version;

const ENDPOINT = process.env.SQS_ENDPOINT || "http://127.0.0.1:9324";
const REGION = process.env.AWS_REGION || "us-east-1";
const ACCESS_KEY = process.env.AWS_ACCESS_KEY_ID || "test";
const SECRET_KEY = process.env.AWS_SECRET_ACCESS_KEY || "test";
const PREFIX = process.env.QUEUE_PREFIX || `js${Date.now()}${crypto.randomBytes(2).toString("hex")}`;
const CHECK_SIG = (process.env.CHECK_SIGNATURES ?? "1") !== "0";
const STALE = process.env.STALE_HANDLE || "reject";
const ONLY = (process.env.CASES || "").split(",").filter(Boolean);

const makeClient = (key = ACCESS_KEY, secret = SECRET_KEY) =>
  new SQSClient({ endpoint: ENDPOINT, region: REGION, maxAttempts: 1, credentials: { accessKeyId: key, secretAccessKey: secret } });

const sqs = makeClient();
const send = (cmd, client = sqs) => client.send(cmd);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const created = new Map(); // name -> url
class Fail extends Error {}
const check = (cond, msg) => { if (!cond) throw new Fail(msg); };

// error code as the SDK exposes it; e.Code/e.Type come from x-amzn-query-error if the server sends it
const codeOf = (e) => e?.name || e?.Code || String(e);
const codeDesc = (e) => {
  const parts = [codeOf(e)];
  if (e?.Code && e.Code !== e.name) parts.push(`Code=${e.Code}`);
  return parts.join(" ");
};
const norm = (c) => String(c).replace("AWS.SimpleQueueService.", "");
async function expectError(promiseFn, codes) {
  try {
    await promiseFn();
  } catch (e) {
    if (e instanceof Fail) throw e;
    const c = codeOf(e);
    check(codes.includes(c) || codes.includes(norm(c)) || (e.Code && codes.includes(norm(e.Code))),
      `expected error ${codes.join("/")}, got ${codeDesc(e)} (HTTP ${e.$metadata?.httpStatusCode}): ${e.message}`);
    return codeDesc(e);
  }
  throw new Fail(`expected error ${codes.join("/")}, call succeeded`);
}

const qname = (s) => `${PREFIX}-${s}`;
async function mkq(suffix, attrs) {
  const name = qname(suffix);
  const r = await send(new CreateQueueCommand({ QueueName: name, ...(attrs ? { Attributes: attrs } : {}) }));
  created.set(name, r.QueueUrl);
  return r.QueueUrl;
}
const md5hex = (b) => crypto.createHash("md5").update(b).digest("hex");
function md5OfAttrs(attrs) {
  const parts = [];
  const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b; };
  const lv = (buf) => Buffer.concat([u32(buf.length), buf]);
  for (const name of Object.keys(attrs).sort()) {
    const a = attrs[name];
    parts.push(lv(Buffer.from(name, "utf8")), lv(Buffer.from(a.DataType, "utf8")));
    if (a.StringValue !== undefined) parts.push(Buffer.from([1]), lv(Buffer.from(a.StringValue, "utf8")));
    else parts.push(Buffer.from([2]), lv(Buffer.from(a.BinaryValue)));
  }
  return md5hex(Buffer.concat(parts));
}
const receive = async (url, opts = {}, client = sqs) =>
  (await send(new ReceiveMessageCommand({ QueueUrl: url, ...opts }), client)).Messages || [];
const qattrs = async (url, names) =>
  (await send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: names }))).Attributes || {};

// ---------------------------------------------------------------- cases
const cases = {};

cases["create-queue"] = async () => {
  const name = qname("std");
  const url = await mkq("std", { VisibilityTimeout: "5" });
  check(url.endsWith("/" + name), `QueueUrl ${url} does not end with /${name}`);
  const got = (await send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  check(got === url, `GetQueueUrl ${got} != ${url}`);
  const again = (await send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: "5" } }))).QueueUrl;
  check(again === url, `re-create returned ${again}`);
  const c = await expectError(() => send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: "6" } })),
    ["QueueAlreadyExists", "QueueNameExists"]);
  return `url=${url}; different-attrs error=${c}`;
};

cases["send-receive-attributes"] = async () => {
  const url = await mkq("attrs");
  const body = "hello attrs \u2713 <&> \"q\" 'a'";
  const mattrs = {
    s: { DataType: "String", StringValue: "str-val \u00e9" },
    n: { DataType: "Number", StringValue: "42.5" },
    b: { DataType: "Binary", BinaryValue: new Uint8Array([0, 1, 0xfe, 0xff]) },
  };
  const r = await send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageAttributes: mattrs }));
  check(r.MD5OfMessageBody === md5hex(Buffer.from(body)), `send MD5OfMessageBody ${r.MD5OfMessageBody}`);
  check(r.MD5OfMessageAttributes === md5OfAttrs(mattrs), `send MD5OfMessageAttributes ${r.MD5OfMessageAttributes} != ${md5OfAttrs(mattrs)}`);
  const msgs = await receive(url, { MessageAttributeNames: ["All"], MessageSystemAttributeNames: ["All"], WaitTimeSeconds: 2 });
  check(msgs.length === 1, `expected 1 message, got ${msgs.length}`);
  const m = msgs[0];
  check(m.MessageId === r.MessageId, "MessageId differs");
  check(m.Body === body, `body ${JSON.stringify(m.Body)}`);
  check(m.MD5OfBody === md5hex(Buffer.from(body)), `MD5OfBody ${m.MD5OfBody}`);
  const got = m.MessageAttributes || {};
  check(JSON.stringify(Object.keys(got).sort()) === JSON.stringify(Object.keys(mattrs).sort()), `attribute names ${Object.keys(got)}`);
  for (const [k, v] of Object.entries(mattrs)) {
    const g = got[k];
    check(g.DataType === v.DataType, `attr ${k} DataType ${g.DataType}`);
    if (v.StringValue !== undefined) check(g.StringValue === v.StringValue, `attr ${k} value ${g.StringValue}`);
    else check(g.BinaryValue && Buffer.from(g.BinaryValue).equals(Buffer.from(v.BinaryValue)), `attr ${k} value ${g.BinaryValue}`);
  }
  check(m.MD5OfMessageAttributes === md5OfAttrs(mattrs), `receive MD5OfMessageAttributes ${m.MD5OfMessageAttributes}`);
  const a = m.Attributes || {};
  check(a.ApproximateReceiveCount === "1", `ApproximateReceiveCount ${a.ApproximateReceiveCount}`);
  check("SentTimestamp" in a, "no SentTimestamp");
  const missing = ["SenderId", "ApproximateFirstReceiveTimestamp"].filter((x) => !(x in a));
  return `system attrs: ${Object.keys(a).sort().join(",")}${missing.length ? "; missing " + missing.join(",") : ""}`;
};

cases["long-poll-wakes"] = async () => {
  const url = await mkq("lp");
  const other = makeClient();
  let sentAt;
  const t0 = Date.now();
  const sender = (async () => { await sleep(1000); sentAt = Date.now(); await send(new SendMessageCommand({ QueueUrl: url, MessageBody: "wake-up" }), other); })();
  const msgs = await receive(url, { WaitTimeSeconds: 10 });
  const t1 = Date.now();
  await sender;
  check(msgs.length === 1 && msgs[0].Body === "wake-up", `receive returned ${JSON.stringify(msgs.map((m) => m.Body))} after ${(t1 - t0) / 1000}s`);
  check(t1 - t0 < 5000, `took ${(t1 - t0) / 1000}s`);
  return `receive returned after ${((t1 - t0) / 1000).toFixed(2)}s, ${t1 - sentAt} ms after the send`;
};

cases["long-poll-empty"] = async () => {
  const url = await mkq("empty");
  const t0 = Date.now();
  const msgs = await receive(url, { WaitTimeSeconds: 2 });
  const dt = (Date.now() - t0) / 1000;
  check(msgs.length === 0, `got ${msgs.length} messages`);
  check(dt >= 1.9, `returned after only ${dt}s`);
  return `${dt.toFixed(2)}s`;
};

cases["change-visibility"] = async () => {
  const url = await mkq("vis");
  const { MessageId } = await send(new SendMessageCommand({ QueueUrl: url, MessageBody: "vis" }));
  const m = await receive(url, { VisibilityTimeout: 30, WaitTimeSeconds: 2 });
  check(m.length === 1, `first receive got ${m.length}`);
  check((await receive(url)).length === 0, "message visible while in flight");
  await send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: m[0].ReceiptHandle, VisibilityTimeout: 0 }));
  // deprecated AttributeNames on purpose (servers must accept both spellings)
  const m2 = await receive(url, { WaitTimeSeconds: 2, AttributeNames: ["ApproximateReceiveCount"] });
  check(m2.length === 1, `second receive got ${m2.length}`);
  check(m2[0].MessageId === MessageId, "different MessageId");
  check(m2[0].Attributes?.ApproximateReceiveCount === "2", `ApproximateReceiveCount ${m2[0].Attributes?.ApproximateReceiveCount}`);
};

cases["stale-receipt-handle"] = async () => {
  const url = await mkq("stale");
  await send(new SendMessageCommand({ QueueUrl: url, MessageBody: "stale" }));
  const m1 = await receive(url, { VisibilityTimeout: 1, WaitTimeSeconds: 2 });
  check(m1.length === 1, `first receive got ${m1.length}`);
  await sleep(1500);
  const m2 = await receive(url, { VisibilityTimeout: 30, WaitTimeSeconds: 3, MessageSystemAttributeNames: ["ApproximateReceiveCount"] });
  check(m2.length === 1, `second receive got ${m2.length}`);
  check(m2[0].Attributes?.ApproximateReceiveCount === "2", `second receive ApproximateReceiveCount ${m2[0].Attributes?.ApproximateReceiveCount}`);
  const h1 = m1[0].ReceiptHandle, h2 = m2[0].ReceiptHandle;
  check(h1 !== h2, "second receive returned the same receipt handle");
  const count = async () => {
    const a = await qattrs(url, ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]);
    return Number(a.ApproximateNumberOfMessages || 0) + Number(a.ApproximateNumberOfMessagesNotVisible || 0);
  };
  let old = "ok";
  try { await send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: h1 })); } catch (e) { old = "error " + codeDesc(e); }
  const still = await count();
  let neu = "ok";
  try { await send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: h2 })); } catch (e) { neu = "error " + codeDesc(e); }
  const left = await count();
  const detail = `delete(old handle)=${old}, message ${still ? "still there" : "deleted"}; delete(new handle)=${neu}; messages left=${left}`;
  if (STALE === "reject") {
    check(/^error (AWS\.SimpleQueueService\.)?ReceiptHandleIsInvalid/.test(old), detail);
    check(still === 1, detail);
    check(neu === "ok" && left === 0, detail);
  }
  return detail;
};

cases["batches"] = async () => {
  const url = await mkq("batch");
  const entries = Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: `batch-${i}` }));
  const r = await send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
  check((r.Successful || []).length === 10 && !(r.Failed || []).length, `send batch: ${JSON.stringify(r.Failed)}`);
  for (const e of r.Successful) check(e.MD5OfMessageBody === md5hex(`batch-${e.Id.slice(1)}`), `batch MD5 for ${e.Id}`);
  const got = new Map();
  let calls = 0;
  while (got.size < 10 && calls < 6) {
    calls++;
    for (const m of await receive(url, { MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30 })) got.set(m.MessageId, m);
  }
  check(got.size === 10, `received ${got.size} distinct messages in ${calls} calls`);
  const msgs = [...got.values()];
  check(JSON.stringify(msgs.map((m) => m.Body).sort()) === JSON.stringify(entries.map((e) => e.MessageBody).sort()), "bodies differ");
  const cv = await send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: url,
    Entries: msgs.map((m, i) => ({ Id: `c${i}`, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 60 })) }));
  check((cv.Successful || []).length === 10 && !(cv.Failed || []).length, `change-visibility batch ${JSON.stringify(cv.Failed)}`);
  const d = await send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: msgs.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })) }));
  check((d.Successful || []).length === 10 && !(d.Failed || []).length, `delete batch: ${(d.Successful || []).length} ok, failed ${JSON.stringify(d.Failed)}`);
  return `received in ${calls} ReceiveMessage calls`;
};

cases["batches-duplicate-ids"] = async () => {
  const url = await mkq("batchdup");
  const c = await expectError(() => send(new SendMessageBatchCommand({ QueueUrl: url,
    Entries: [{ Id: "x", MessageBody: "1" }, { Id: "x", MessageBody: "2" }] })), ["BatchEntryIdsNotDistinct"]);
  return `code=${c}`;
};

cases["batches-bad-handle"] = async () => {
  const url = await mkq("batchbad");
  await send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [0, 1, 2].map((i) => ({ Id: `m${i}`, MessageBody: `p${i}` })) }));
  const got = new Map();
  for (let i = 0; i < 5 && got.size < 3; i++)
    for (const m of await receive(url, { MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30 })) got.set(m.MessageId, m);
  check(got.size === 3, `received ${got.size}`);
  const entries = [...got.values()].map((m, i) => ({ Id: `g${i}`, ReceiptHandle: m.ReceiptHandle }));
  entries.splice(1, 0, { Id: "bad", ReceiptHandle: "garbage-receipt-handle" });
  const r = await send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: entries }));
  const ok = (r.Successful || []).map((e) => e.Id).sort();
  const failed = r.Failed || [];
  check(JSON.stringify(ok) === '["g0","g1","g2"]', `Successful=${ok} Failed=${JSON.stringify(failed)}`);
  check(failed.length === 1 && failed[0].Id === "bad", `Failed=${JSON.stringify(failed)}`);
  return `Failed entry Code=${failed[0].Code} SenderFault=${failed[0].SenderFault} Message=${JSON.stringify(failed[0].Message)}`;
};

cases["fifo-order"] = async () => {
  const url = await mkq("orders.fifo", { FifoQueue: "true", ContentBasedDeduplication: "true" });
  const seqs = [];
  for (const [body, g] of [["a1", "A"], ["b1", "B"], ["a2", "A"], ["a3", "A"], ["b2", "B"]]) {
    const r = await send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageGroupId: g }));
    check(r.SequenceNumber, `no SequenceNumber on send of ${body}`);
    seqs.push(r.SequenceNumber);
  }
  const opts = { MaxNumberOfMessages: 1, VisibilityTimeout: 30, WaitTimeSeconds: 1 };
  const first = [...(await receive(url, opts)), ...(await receive(url, opts))];
  const third = await receive(url, opts);
  const inflightOk = JSON.stringify(first.map((m) => m.Body).sort()) === '["a1","b1"]' && third.length === 0;
  const inflightDetail = `first two receives ${JSON.stringify(first.map((m) => m.Body))}, third ${JSON.stringify(third.map((m) => m.Body))}`;
  const order = { A: [], B: [] };
  const take = async (m) => { order[m.Body[0].toUpperCase()].push(m.Body); await send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle })); };
  for (const m of [...first, ...third]) await take(m);
  for (let i = 0; i < 10 && order.A.length + order.B.length < 5; i++)
    for (const m of await receive(url, { ...opts, MessageSystemAttributeNames: ["All"] })) await take(m);
  check(JSON.stringify(order) === JSON.stringify({ A: ["a1", "a2", "a3"], B: ["b1", "b2"] }), `per-group order ${JSON.stringify(order)} (${inflightDetail})`);
  check(inflightOk, "one-in-flight-per-group violated: " + inflightDetail);
  check(new Set(seqs).size === 5, `SequenceNumbers not distinct ${seqs}`);
  return `SequenceNumber e.g. ${seqs[0]}`;
};

cases["fifo-dedup"] = async () => {
  const url = await mkq("dedup.fifo", { FifoQueue: "true" });
  const p = { QueueUrl: url, MessageBody: "dup", MessageGroupId: "D", MessageDeduplicationId: "dedup-1" };
  const r1 = await send(new SendMessageCommand(p));
  const r2 = await send(new SendMessageCommand(p));
  check(r1.SequenceNumber && r2.SequenceNumber, `SequenceNumber missing ${r1.SequenceNumber}/${r2.SequenceNumber}`);
  check(r1.MessageId === r2.MessageId, `MessageIds differ ${r1.MessageId} vs ${r2.MessageId}`);
  const msgs = await receive(url, { MaxNumberOfMessages: 10, WaitTimeSeconds: 1 });
  check(msgs.length === 1, `received ${msgs.length} messages, expected 1`);
  return `duplicate send: same MessageId, ${r1.SequenceNumber === r2.SequenceNumber ? "same" : "different"} SequenceNumber`;
};

cases["fifo-batch-sequence-number"] = async () => {
  const url = await mkq("batch.fifo", { FifoQueue: "true", ContentBasedDeduplication: "true" });
  const r = await send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [
    { Id: "1", MessageBody: "x1", MessageGroupId: "G" }, { Id: "2", MessageBody: "x2", MessageGroupId: "G" }] }));
  const ok = r.Successful || [];
  check(ok.length === 2 && !(r.Failed || []).length, `send batch: ${ok.length} ok, failed ${JSON.stringify(r.Failed)}`);
  const n = ok.filter((e) => e.SequenceNumber).length;
  check(n === 2, `SendMessageBatch on a FIFO queue: ${n} of 2 result entries have SequenceNumber`);
};

cases["redrive"] = async () => {
  const dlq = await mkq("dlq");
  const arn = (await qattrs(dlq, ["QueueArn"])).QueueArn;
  check(arn, "dlq has no QueueArn");
  const work = await mkq("work", { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: "2" }), VisibilityTimeout: "1" });
  const { MessageId } = await send(new SendMessageCommand({ QueueUrl: work, MessageBody: "poison" }));
  check((await receive(work, { WaitTimeSeconds: 2 })).length === 1, "receive 1 got nothing");
  await sleep(1200);
  check((await receive(work, { WaitTimeSeconds: 3 })).length === 1, "receive 2 got nothing");
  await sleep(1200);
  const t0 = Date.now();
  const r3 = await receive(work, { WaitTimeSeconds: 3, MessageSystemAttributeNames: ["ApproximateReceiveCount"] });
  const t3 = (Date.now() - t0) / 1000;
  check(r3.length === 0, `receive 3 from work returned a message (count ${r3[0]?.Attributes?.ApproximateReceiveCount})`);
  const d = await receive(dlq, { WaitTimeSeconds: 2, MessageSystemAttributeNames: ["All"] });
  check(d.length === 1 && d[0].Body === "poison", `dlq receive got ${JSON.stringify(d.map((m) => m.Body))}`);
  const srcs = (await send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: dlq }))).queueUrls || [];
  check(JSON.stringify(srcs) === JSON.stringify([work]), `ListDeadLetterSourceQueues=${JSON.stringify(srcs)}`);
  return `3rd receive empty after ${t3.toFixed(2)}s; dlq MessageId ${d[0].MessageId === MessageId ? "same" : "new"}; dlq ApproximateReceiveCount=${d[0].Attributes?.ApproximateReceiveCount}`;
};

cases["move-task"] = async () => {
  const dlq = await mkq("mdlq");
  const arn = (await qattrs(dlq, ["QueueArn"])).QueueArn;
  const work = await mkq("mwork", { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: "1" }) });
  for (let i = 0; i < 3; i++) await send(new SendMessageCommand({ QueueUrl: work, MessageBody: `failing ${i}` }));
  const count = async (url) => Number((await qattrs(url, ["ApproximateNumberOfMessages"])).ApproximateNumberOfMessages);
  // A message's second receive moves it to the dead-letter queue.
  for (let i = 0; i < 20 && (await count(dlq)) < 3; i++) await receive(work, { MaxNumberOfMessages: 10, VisibilityTimeout: 0 });
  check((await count(dlq)) === 3, `dead-letter queue holds ${await count(dlq)}`);
  const t0 = Date.now();
  const { TaskHandle } = await send(new StartMessageMoveTaskCommand({ SourceArn: arn, MaxNumberOfMessagesPerSecond: 10 }));
  check(TaskHandle, "no TaskHandle");
  let task;
  for (let i = 0; i < 60; i++) {
    task = ((await send(new ListMessageMoveTasksCommand({ SourceArn: arn, MaxResults: 10 }))).Results || [])[0];
    if (task?.Status !== "RUNNING") break;
    await sleep(250);
  }
  check(task?.Status === "COMPLETED", `task ${JSON.stringify(task)}`);
  check(task.ApproximateNumberOfMessagesMoved === 3, `moved ${task.ApproximateNumberOfMessagesMoved}`);
  check((await count(work)) === 3, `source holds ${await count(work)}`);
  await expectError(() => send(new CancelMessageMoveTaskCommand({ TaskHandle })), ["UnsupportedOperation"]);
  await expectError(() => send(new StartMessageMoveTaskCommand({ SourceArn: arn.replace(/[^:]+$/, "no-such-queue") })),
    ["ResourceNotFoundException"]);
  return `3 messages back in their source queue ${((Date.now() - t0) / 1000).toFixed(1)}s after StartMessageMoveTask`;
};

cases["queue-attributes"] = async () => {
  const url = await mkq("qattr");
  await send(new SendMessageCommand({ QueueUrl: url, MessageBody: "1" }));
  await send(new SendMessageCommand({ QueueUrl: url, MessageBody: "2" }));
  const a = await qattrs(url, ["All"]);
  check(a.ApproximateNumberOfMessages === "2", `ApproximateNumberOfMessages ${a.ApproximateNumberOfMessages}`);
  check((a.QueueArn || "").endsWith(":" + qname("qattr")), `QueueArn ${a.QueueArn}`);
  check("VisibilityTimeout" in a, "no VisibilityTimeout");
  await send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { DelaySeconds: "1" } }));
  const dly = (await qattrs(url, ["DelaySeconds"])).DelaySeconds;
  check(dly === "1", `DelaySeconds read back ${dly}`);
  const std = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp", "LastModifiedTimestamp", "DelaySeconds", "MaximumMessageSize", "MessageRetentionPeriod",
    "QueueArn", "ReceiveMessageWaitTimeSeconds", "VisibilityTimeout", "SqsManagedSseEnabled"];
  const missing = std.filter((x) => !(x in a));
  return `arn=${a.QueueArn}${missing.length ? "; missing " + missing.join(",") : ""}`;
};

cases["list-queues"] = async () => {
  await mkq("list");
  const urls = (await send(new ListQueuesCommand({ QueueNamePrefix: PREFIX }))).QueueUrls || [];
  const want = [...created.values()].sort();
  check(JSON.stringify([...urls].sort()) === JSON.stringify(want),
    `extra=${urls.filter((u) => !want.includes(u))} missing=${want.filter((u) => !urls.includes(u))}`);
  return `${urls.length} queues`;
};

cases["standard-message-group"] = async () => {
  const url = await mkq("tenants");
  await send(new SendMessageCommand({ QueueUrl: url, MessageBody: "of tenant a", MessageGroupId: "tenant-a" }));
  const got = await receive(url, { AttributeNames: ["MessageGroupId"], MessageSystemAttributeNames: ["MessageGroupId"], WaitTimeSeconds: 1 });
  const groups = got.map((m) => (m.Attributes || {}).MessageGroupId);
  check(JSON.stringify(groups) === '["tenant-a"]', `MessageGroupId of a standard queue's message: ${JSON.stringify(groups)}`);
};

cases["tags"] = async () => {
  const url = await mkq("tags");
  await send(new TagQueueCommand({ QueueUrl: url, Tags: { env: "test", team: "core" } }));
  let t = (await send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags || {};
  check(JSON.stringify(t, Object.keys(t).sort()) === '{"env":"test","team":"core"}', `after tag ${JSON.stringify(t)}`);
  await send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ["team"] }));
  t = (await send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags || {};
  check(JSON.stringify(t) === '{"env":"test"}', `after untag ${JSON.stringify(t)}`);
};

cases["purge"] = async () => {
  const url = await mkq("purge");
  for (let i = 0; i < 3; i++) await send(new SendMessageCommand({ QueueUrl: url, MessageBody: `p${i}` }));
  let n = (await qattrs(url, ["ApproximateNumberOfMessages"])).ApproximateNumberOfMessages;
  check(n === "3", `before purge ApproximateNumberOfMessages ${n}`);
  await send(new PurgeQueueCommand({ QueueUrl: url }));
  const m = await receive(url, { WaitTimeSeconds: 1 });
  check(m.length === 0, `receive after purge got ${m.length}`);
  n = (await qattrs(url, ["ApproximateNumberOfMessages"])).ApproximateNumberOfMessages;
  check(n === "0", `after purge ApproximateNumberOfMessages ${n}`);
};

cases["nonexistent-queue"] = async () => {
  try {
    await send(new GetQueueUrlCommand({ QueueName: qname("does-not-exist") }));
  } catch (e) {
    const c = codeOf(e);
    const ok = ["QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"];
    check(ok.includes(c) || ok.includes(e.Code), `code ${codeDesc(e)} (HTTP ${e.$metadata?.httpStatusCode})`);
    return `code=${codeDesc(e)} HTTP ${e.$metadata?.httpStatusCode}`;
  }
  throw new Fail("GetQueueUrl succeeded");
};

cases["bad-signature"] = async () => {
  if (!CHECK_SIG) return ["SKIP", "CHECK_SIGNATURES=0"];
  const res = [], errs = [];
  for (const [label, client, codes] of [["wrong secret", makeClient(ACCESS_KEY, SECRET_KEY + "-wrong"), ["SignatureDoesNotMatch"]],
    ["unknown key", makeClient("AKIAUNKNOWNKEY000000", SECRET_KEY), ["InvalidClientTokenId"]]]) {
    try { res.push(`${label}: ${await expectError(() => send(new ListQueuesCommand({}), client), codes)}`); } catch (e) { errs.push(`${label}: ${e.message}`); }
  }
  check(!errs.length, errs.join("; "));
  return res.join("; ");
};

cases["delete-queue"] = async () => {
  if (!created.size) return ["SKIP", "no queues were created"];
  const names = [...created.keys()];
  const errs = [];
  for (const name of names) {
    try { await send(new DeleteQueueCommand({ QueueUrl: created.get(name) })); created.delete(name); } catch (e) { errs.push(`${name}: ${codeDesc(e)}`); }
  }
  check(!errs.length, "delete failed: " + errs.join("; "));
  const still = [];
  const codes = new Set();
  for (const name of names) {
    try { await send(new GetQueueUrlCommand({ QueueName: name })); still.push(name); } catch (e) { codes.add(codeDesc(e)); }
  }
  check(!still.length, `GetQueueUrl still works for ${still}`);
  return `${names.length} queues deleted; GetQueueUrl afterwards: ${[...codes].join(",")}`;
};

console.log(`# @aws-sdk/client-sqs ${SDK_VERSION} protocol=awsJson1_0 node=${process.version} endpoint=${ENDPOINT} prefix=${PREFIX}`);
let fails = 0;
const tStart = Date.now();
for (const [name, fn] of Object.entries(cases)) {
  if (ONLY.length && !ONLY.includes(name) && name !== "delete-queue") continue;
  try {
    const r = await fn();
    if (Array.isArray(r) && r[0] === "SKIP") console.log(`SKIP ${name}: ${r[1]}`);
    else console.log(`PASS ${name}${r ? ": " + r : ""}`);
  } catch (e) {
    fails++;
    if (e instanceof Fail) console.log(`FAIL ${name}: ${e.message}`);
    else console.log(`FAIL ${name}: unexpected error ${codeDesc(e)}: ${e.message}`);
  }
}
console.log(`# ${fails} failed, ${((Date.now() - tStart) / 1000).toFixed(1)}s`);
process.exit(fails ? 1 : 0);
