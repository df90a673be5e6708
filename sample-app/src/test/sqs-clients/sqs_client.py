#!/usr/bin/env python3
"""End-to-end SQS client checks with boto3 (query protocol on boto3 1.26, JSON protocol on newer boto3).

Env: SQS_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (us-east-1),
     QUEUE_PREFIX, CHECK_SIGNATURES (1|0), STALE_HANDLE (reject|ignore), CASES (optional, comma list).
Output: one line per case: PASS <case>[: detail] | FAIL <case>: reason | SKIP <case>: why. Exit 0 iff no FAIL.
"""
import hashlib
import json
import os
import struct
import sys
import threading
import time
import uuid

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ.get("SQS_ENDPOINT", "http://127.0.0.1:9324")
REGION = os.environ.get("AWS_REGION") or "us-east-1"
ACCESS_KEY = os.environ.get("AWS_ACCESS_KEY_ID") or "test"
SECRET_KEY = os.environ.get("AWS_SECRET_ACCESS_KEY") or "test"
PREFIX = os.environ.get("QUEUE_PREFIX") or "py%d%s" % (int(time.time()), uuid.uuid4().hex[:4])
CHECK_SIG = os.environ.get("CHECK_SIGNATURES", "1") != "0"
STALE = os.environ.get("STALE_HANDLE", "reject")
ONLY = [c for c in os.environ.get("CASES", "").split(",") if c]

CFG = Config(retries={"max_attempts": 0}, connect_timeout=5, read_timeout=40)


def make_client(key=ACCESS_KEY, secret=SECRET_KEY):
    return boto3.client("sqs", endpoint_url=ENDPOINT, region_name=REGION,
                        aws_access_key_id=key, aws_secret_access_key=secret, config=CFG)


sqs = make_client()
PROTOCOL = sqs.meta.service_model.protocol
RECV_MEMBERS = list(sqs.meta.service_model.operation_model("ReceiveMessage").input_shape.members)
SYS_ATTR_PARAM = "MessageSystemAttributeNames" if "MessageSystemAttributeNames" in RECV_MEMBERS else "AttributeNames"

created = {}  # name -> url (alive)
results = []


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def code_of(e):
    return e.response.get("Error", {}).get("Code", "")


def norm(code):
    return code.replace("AWS.SimpleQueueService.", "")


def expect_error(fn, codes, **kw):
    """Call fn(**kw); it must raise ClientError whose (normalised) code is in codes. Returns the raw code."""
    try:
        fn(**kw)
    except ClientError as e:
        c = code_of(e)
        check(c in codes or norm(c) in codes,
              "expected error %s, got %s (HTTP %s)" % ("/".join(codes), c, e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")))
        return c
    raise Fail("expected error %s, call succeeded" % "/".join(codes))


def qname(suffix):
    return "%s-%s" % (PREFIX, suffix)


def mkq(suffix, attrs=None):
    name = qname(suffix)
    kw = {"QueueName": name}
    if attrs:
        kw["Attributes"] = attrs
    url = sqs.create_queue(**kw)["QueueUrl"]
    created[name] = url
    return url


def md5hex(b):
    return hashlib.md5(b).hexdigest()


def md5_of_attrs(attrs):
    """MD5OfMessageAttributes as documented by AWS."""
    buf = b""
    for name in sorted(attrs):
        a = attrs[name]
        dt = a["DataType"]
        buf += struct.pack(">I", len(name.encode())) + name.encode()
        buf += struct.pack(">I", len(dt.encode())) + dt.encode()
        if "StringValue" in a and a["StringValue"] is not None:
            v = a["StringValue"].encode("utf-8")
            buf += b"\x01" + struct.pack(">I", len(v)) + v
        else:
            v = a["BinaryValue"]
            buf += b"\x02" + struct.pack(">I", len(v)) + v
    return md5hex(buf)


def receive(url, **kw):
    return sqs.receive_message(QueueUrl=url, **kw).get("Messages", [])


def qattrs(url, names):
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names).get("Attributes", {})


# ---------------------------------------------------------------- cases

def case_create_queue():
    name = qname("std")
    url = mkq("std", {"VisibilityTimeout": "5"})
    check(url.endswith("/" + name), "QueueUrl %r does not end with /%s" % (url, name))
    got = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    check(got == url, "GetQueueUrl %r != CreateQueue %r" % (got, url))
    again = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "5"})["QueueUrl"]
    check(again == url, "re-create returned %r != %r" % (again, url))
    c = expect_error(sqs.create_queue, {"QueueAlreadyExists", "QueueNameExists"},
                     QueueName=name, Attributes={"VisibilityTimeout": "6"})
    return "url=%s; different-attrs error=%s" % (url, c)


def case_send_receive_attributes():
    url = mkq("attrs")
    body = "hello attrs \u2713 <&> \"q\" 'a'"
    mattrs = {
        "s": {"DataType": "String", "StringValue": "str-val \u00e9"},
        "n": {"DataType": "Number", "StringValue": "42.5"},
        "b": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xfe\xff"},
    }
    r = sqs.send_message(QueueUrl=url, MessageBody=body, MessageAttributes=mattrs)
    check(r.get("MD5OfMessageBody") == md5hex(body.encode()), "send MD5OfMessageBody %r wrong" % r.get("MD5OfMessageBody"))
    check(r.get("MD5OfMessageAttributes") == md5_of_attrs(mattrs),
          "send MD5OfMessageAttributes %r != %s" % (r.get("MD5OfMessageAttributes"), md5_of_attrs(mattrs)))
    msgs = receive(url, MessageAttributeNames=["All"], WaitTimeSeconds=2, **{SYS_ATTR_PARAM: ["All"]})
    check(len(msgs) == 1, "expected 1 message, got %d" % len(msgs))
    m = msgs[0]
    check(m["MessageId"] == r["MessageId"], "MessageId differs")
    check(m["Body"] == body, "body %r != %r" % (m["Body"], body))
    check(m.get("MD5OfBody") == md5hex(body.encode()), "MD5OfBody %r wrong" % m.get("MD5OfBody"))
    got = m.get("MessageAttributes", {})
    check(set(got) == set(mattrs), "attribute names %s" % sorted(got))
    for k, v in mattrs.items():
        g = got[k]
        check(g.get("DataType") == v["DataType"], "attr %s DataType %r" % (k, g.get("DataType")))
        if "StringValue" in v:
            check(g.get("StringValue") == v["StringValue"], "attr %s value %r" % (k, g.get("StringValue")))
        else:
            check(g.get("BinaryValue") == v["BinaryValue"], "attr %s value %r" % (k, g.get("BinaryValue")))
    check(m.get("MD5OfMessageAttributes") == md5_of_attrs(mattrs), "receive MD5OfMessageAttributes %r wrong" % m.get("MD5OfMessageAttributes"))
    a = m.get("Attributes", {})
    check(a.get("ApproximateReceiveCount") == "1", "ApproximateReceiveCount %r" % a.get("ApproximateReceiveCount"))
    check("SentTimestamp" in a, "no SentTimestamp")
    missing = [x for x in ("SenderId", "ApproximateFirstReceiveTimestamp") if x not in a]
    return "system attrs via %s: %s%s" % (SYS_ATTR_PARAM, ",".join(sorted(a)), ("; missing " + ",".join(missing)) if missing else "")


def case_long_poll_wakes():
    url = mkq("lp")
    other = make_client()
    sent = {}

    def later():
        time.sleep(1.0)
        sent["t"] = time.time()
        try:
            other.send_message(QueueUrl=url, MessageBody="wake-up")
        except Exception as e:  # noqa
            sent["err"] = e

    th = threading.Thread(target=later)
    t0 = time.time()
    th.start()
    msgs = receive(url, WaitTimeSeconds=10)
    t1 = time.time()
    th.join()
    check("err" not in sent, "second client send failed: %s" % sent.get("err"))
    check(len(msgs) == 1 and msgs[0]["Body"] == "wake-up", "receive returned %r after %.2fs" % ([m["Body"] for m in msgs], t1 - t0))
    check(t1 - t0 < 5, "took %.2fs" % (t1 - t0))
    return "receive returned after %.2fs, %.0f ms after the send" % (t1 - t0, (t1 - sent["t"]) * 1000)


def case_long_poll_empty():
    url = mkq("empty")
    t0 = time.time()
    msgs = receive(url, WaitTimeSeconds=2)
    dt = time.time() - t0
    check(not msgs, "got %d messages" % len(msgs))
    check(dt >= 1.9, "returned after only %.2fs" % dt)
    return "%.2fs" % dt


def case_change_visibility():
    url = mkq("vis")
    mid = sqs.send_message(QueueUrl=url, MessageBody="vis")["MessageId"]
    m = receive(url, VisibilityTimeout=30, WaitTimeSeconds=2)
    check(len(m) == 1, "first receive got %d" % len(m))
    check(not receive(url), "message visible while in flight")
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m[0]["ReceiptHandle"], VisibilityTimeout=0)
    # deprecated AttributeNames parameter on purpose (both spellings must be accepted)
    m2 = receive(url, WaitTimeSeconds=2, AttributeNames=["ApproximateReceiveCount"])
    check(len(m2) == 1, "second receive got %d" % len(m2))
    check(m2[0]["MessageId"] == mid, "different MessageId")
    cnt = m2[0].get("Attributes", {}).get("ApproximateReceiveCount")
    check(cnt == "2", "ApproximateReceiveCount %r" % cnt)


def case_stale_receipt_handle():
    url = mkq("stale")
    sqs.send_message(QueueUrl=url, MessageBody="stale")
    m1 = receive(url, VisibilityTimeout=1, WaitTimeSeconds=2)
    check(len(m1) == 1, "first receive got %d" % len(m1))
    time.sleep(1.5)
    m2 = receive(url, VisibilityTimeout=30, WaitTimeSeconds=3, AttributeNames=["ApproximateReceiveCount"])
    check(len(m2) == 1, "second receive got %d" % len(m2))
    cnt = m2[0].get("Attributes", {}).get("ApproximateReceiveCount")
    check(cnt == "2", "second receive ApproximateReceiveCount %r" % cnt)
    h1, h2 = m1[0]["ReceiptHandle"], m2[0]["ReceiptHandle"]
    check(h1 != h2, "second receive returned the same receipt handle")
    old = "ok"
    try:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=h1)
    except ClientError as e:
        old = "error " + code_of(e)
    inflight = qattrs(url, ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])
    still = int(inflight.get("ApproximateNumberOfMessages", 0)) + int(inflight.get("ApproximateNumberOfMessagesNotVisible", 0))
    new = "ok"
    try:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=h2)
    except ClientError as e:
        new = "error " + code_of(e)
    after = qattrs(url, ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])
    left = int(after.get("ApproximateNumberOfMessages", 0)) + int(after.get("ApproximateNumberOfMessagesNotVisible", 0))
    detail = "delete(old handle)=%s, message %s; delete(new handle)=%s; messages left=%d" % (
        old, "still there" if still else "deleted", new, left)
    if STALE == "reject":
        check(old in ("error ReceiptHandleIsInvalid", "error AWS.SimpleQueueService.ReceiptHandleIsInvalid"), detail)
        check(still == 1, detail)
        check(new == "ok" and left == 0, detail)
    return detail


def case_batches():
    url = mkq("batch")
    entries = [{"Id": "m%d" % i, "MessageBody": "batch-%d" % i} for i in range(10)]
    r = sqs.send_message_batch(QueueUrl=url, Entries=entries)
    ok, failed = r.get("Successful", []), r.get("Failed", [])
    check(len(ok) == 10 and not failed, "send batch: %d ok, failed=%r" % (len(ok), failed))
    for e in ok:
        check(e["MD5OfMessageBody"] == md5hex(("batch-" + e["Id"][1:]).encode()), "batch MD5 for %s wrong" % e["Id"])
    got = {}
    calls = 0
    while len(got) < 10 and calls < 6:
        calls += 1
        for m in receive(url, MaxNumberOfMessages=10, WaitTimeSeconds=1, VisibilityTimeout=30):
            got[m["MessageId"]] = m
    check(len(got) == 10, "received %d distinct messages in %d calls" % (len(got), calls))
    check(sorted(m["Body"] for m in got.values()) == sorted(e["MessageBody"] for e in entries), "bodies differ")
    msgs = list(got.values())
    r = sqs.change_message_visibility_batch(QueueUrl=url, Entries=[
        {"Id": "c%d" % i, "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 60} for i, m in enumerate(msgs)])
    check(len(r.get("Successful", [])) == 10 and not r.get("Failed"), "change-visibility batch %r" % r.get("Failed"))
    r = sqs.delete_message_batch(QueueUrl=url, Entries=[
        {"Id": "d%d" % i, "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(msgs)])
    check(len(r.get("Successful", [])) == 10 and not r.get("Failed"),
          "delete batch: %d ok, failed=%r" % (len(r.get("Successful", [])), r.get("Failed")))
    return "received in %d ReceiveMessage calls" % calls


def case_batch_ids_not_distinct():
    url = mkq("batchdup")
    c = expect_error(sqs.send_message_batch, {"BatchEntryIdsNotDistinct"}, QueueUrl=url,
                     Entries=[{"Id": "x", "MessageBody": "1"}, {"Id": "x", "MessageBody": "2"}])
    return "code=%s" % c


def case_batch_delete_bad_handle():
    url = mkq("batchbad")
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "m%d" % i, "MessageBody": "p%d" % i} for i in range(3)])
    got = {}
    for _ in range(5):
        for m in receive(url, MaxNumberOfMessages=10, WaitTimeSeconds=1, VisibilityTimeout=30):
            got[m["MessageId"]] = m
        if len(got) == 3:
            break
    check(len(got) == 3, "received %d" % len(got))
    entries = [{"Id": "g%d" % i, "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got.values())]
    entries.insert(1, {"Id": "bad", "ReceiptHandle": "garbage-receipt-handle"})
    r = sqs.delete_message_batch(QueueUrl=url, Entries=entries)
    ok = sorted(e["Id"] for e in r.get("Successful", []))
    failed = r.get("Failed", [])
    check(ok == ["g0", "g1", "g2"], "Successful=%r Failed=%r" % (ok, failed))
    check(len(failed) == 1 and failed[0]["Id"] == "bad", "Failed=%r" % failed)
    f = failed[0]
    return "Failed entry Code=%s SenderFault=%s Message=%r" % (f.get("Code"), f.get("SenderFault"), f.get("Message"))


def case_fifo_order():
    url = mkq("orders.fifo", {"FifoQueue": "true", "ContentBasedDeduplication": "true"})
    seqs = []
    for body, g in (("a1", "A"), ("b1", "B"), ("a2", "A"), ("a3", "A"), ("b2", "B")):
        r = sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId=g)
        check(r.get("SequenceNumber"), "no SequenceNumber on send of %s" % body)
        seqs.append(r["SequenceNumber"])
    first = []
    for _ in range(2):
        first += receive(url, MaxNumberOfMessages=1, VisibilityTimeout=30, WaitTimeSeconds=1)
    third = receive(url, MaxNumberOfMessages=1, VisibilityTimeout=30, WaitTimeSeconds=1)
    bodies = sorted(m["Body"] for m in first)
    inflight_ok = bodies == ["a1", "b1"] and not third
    inflight_detail = "first two receives %s, third %s" % ([m["Body"] for m in first], [m["Body"] for m in third])
    order = {"A": [], "B": []}
    for m in first + third:
        order[m["Body"][0].upper()].append(m["Body"])
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    for _ in range(10):
        if len(order["A"]) + len(order["B"]) >= 5:
            break
        for m in receive(url, MaxNumberOfMessages=1, VisibilityTimeout=30, WaitTimeSeconds=1,
                         **{SYS_ATTR_PARAM: ["All"]}):
            order[m["Body"][0].upper()].append(m["Body"])
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    check(order == {"A": ["a1", "a2", "a3"], "B": ["b1", "b2"]}, "per-group order %r (%s)" % (order, inflight_detail))
    check(inflight_ok, "one-in-flight-per-group violated: " + inflight_detail)
    check(len(set(seqs)) == 5, "SequenceNumbers not distinct: %r" % seqs)
    return "SequenceNumber e.g. %s" % seqs[0]


def case_fifo_dedup():
    url = mkq("dedup.fifo", {"FifoQueue": "true"})
    r1 = sqs.send_message(QueueUrl=url, MessageBody="dup", MessageGroupId="D", MessageDeduplicationId="dedup-1")
    r2 = sqs.send_message(QueueUrl=url, MessageBody="dup", MessageGroupId="D", MessageDeduplicationId="dedup-1")
    check(r1.get("SequenceNumber") and r2.get("SequenceNumber"), "SequenceNumber missing: %r / %r" % (r1.get("SequenceNumber"), r2.get("SequenceNumber")))
    check(r1["MessageId"] == r2["MessageId"], "MessageIds differ %s vs %s" % (r1["MessageId"], r2["MessageId"]))
    msgs = receive(url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
    check(len(msgs) == 1, "received %d messages, expected 1" % len(msgs))
    a = "same" if r1["SequenceNumber"] == r2["SequenceNumber"] else "different"
    return "duplicate send: same MessageId, %s SequenceNumber" % a


def case_fifo_batch_sequence_number():
    url = mkq("batch.fifo", {"FifoQueue": "true", "ContentBasedDeduplication": "true"})
    r = sqs.send_message_batch(QueueUrl=url, Entries=[
        {"Id": "1", "MessageBody": "x1", "MessageGroupId": "G"}, {"Id": "2", "MessageBody": "x2", "MessageGroupId": "G"}])
    ok = r.get("Successful", [])
    check(len(ok) == 2 and not r.get("Failed"), "send batch: %d ok, failed=%r" % (len(ok), r.get("Failed")))
    n = len([e for e in ok if e.get("SequenceNumber")])
    check(n == 2, "SendMessageBatch on a FIFO queue: %d of 2 result entries have SequenceNumber" % n)


def case_redrive():
    dlq = mkq("dlq")
    arn = qattrs(dlq, ["QueueArn"]).get("QueueArn")
    check(arn, "dlq has no QueueArn")
    work = mkq("work", {"RedrivePolicy": json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": "2"}),
                        "VisibilityTimeout": "1"})
    rp = qattrs(work, ["RedrivePolicy"]).get("RedrivePolicy")
    mid = sqs.send_message(QueueUrl=work, MessageBody="poison")["MessageId"]
    r1 = receive(work, WaitTimeSeconds=2)
    check(len(r1) == 1, "receive 1 got %d" % len(r1))
    time.sleep(1.2)
    r2 = receive(work, WaitTimeSeconds=3)
    check(len(r2) == 1, "receive 2 got %d" % len(r2))
    time.sleep(1.2)
    t0 = time.time()
    r3 = receive(work, WaitTimeSeconds=3)
    t3 = time.time() - t0
    check(not r3, "receive 3 from work returned a message (count %s)" % [m.get("Attributes") for m in r3])
    d = receive(dlq, WaitTimeSeconds=2, AttributeNames=["All"])
    check(len(d) == 1 and d[0]["Body"] == "poison", "dlq receive got %r" % [m["Body"] for m in d])
    srcs = sqs.list_dead_letter_source_queues(QueueUrl=dlq).get("queueUrls", [])
    check(srcs == [work], "ListDeadLetterSourceQueues=%r" % srcs)
    return "3rd receive empty after %.2fs; dlq MessageId %s; dlq ApproximateReceiveCount=%s; RedrivePolicy read back %s" % (
        t3, "same" if d[0]["MessageId"] == mid else "new", d[0].get("Attributes", {}).get("ApproximateReceiveCount"), rp)


def case_queue_attributes():
    url = mkq("qattr")
    sqs.send_message(QueueUrl=url, MessageBody="1")
    sqs.send_message(QueueUrl=url, MessageBody="2")
    a = qattrs(url, ["All"])
    check(a.get("ApproximateNumberOfMessages") == "2", "ApproximateNumberOfMessages %r" % a.get("ApproximateNumberOfMessages"))
    check(a.get("QueueArn", "").endswith(":" + qname("qattr")), "QueueArn %r" % a.get("QueueArn"))
    check("VisibilityTimeout" in a, "no VisibilityTimeout")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "1"})
    d = qattrs(url, ["DelaySeconds"]).get("DelaySeconds")
    check(d == "1", "DelaySeconds read back %r" % d)
    std = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed",
           "CreatedTimestamp", "LastModifiedTimestamp", "DelaySeconds", "MaximumMessageSize", "MessageRetentionPeriod",
           "QueueArn", "ReceiveMessageWaitTimeSeconds", "VisibilityTimeout", "SqsManagedSseEnabled"]
    missing = [x for x in std if x not in a]
    return "All=%s; arn=%s%s" % (",".join(sorted(a)), a["QueueArn"], ("; missing " + ",".join(missing)) if missing else "")


def case_list_queues():
    mkq("list")
    urls = sqs.list_queues(QueueNamePrefix=PREFIX).get("QueueUrls", [])
    want = set(created.values())
    check(set(urls) == want, "extra=%r missing=%r" % (sorted(set(urls) - want), sorted(want - set(urls))))
    return "%d queues" % len(urls)


def case_tags():
    url = mkq("tags")
    sqs.tag_queue(QueueUrl=url, Tags={"env": "test", "team": "core"})
    t = sqs.list_queue_tags(QueueUrl=url).get("Tags", {})
    check(t == {"env": "test", "team": "core"}, "after tag: %r" % t)
    sqs.untag_queue(QueueUrl=url, TagKeys=["team"])
    t = sqs.list_queue_tags(QueueUrl=url).get("Tags", {})
    check(t == {"env": "test"}, "after untag: %r" % t)


def case_sqs_contract():
    """Answers SQS gives that clients rely on (create an existing queue by name only, tags at create,
    a .fifo name without FifoQueue, a full last page, an empty batch, attribute values, a standard
    queue's message group)."""
    url = mkq("changed", {"VisibilityTimeout": "5"})
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "45"})
    again = sqs.create_queue(QueueName=qname("changed"))["QueueUrl"]
    check(again == url, "CreateQueue by name of a changed queue: %r != %r" % (again, url))
    name = qname("tagged")
    created[name] = sqs.create_queue(QueueName=name, tags={"team": "billing"})["QueueUrl"]
    t = sqs.list_queue_tags(QueueUrl=created[name]).get("Tags", {})
    check(t == {"team": "billing"}, "tags given at create: %r" % t)
    expect_error(sqs.create_queue, {"InvalidParameterValue"}, QueueName=qname("suffix-only.fifo"))
    prefix = qname("page-")
    for i in range(2):
        mkq("page-%d" % i)
    page = sqs.list_queues(QueueNamePrefix=prefix, MaxResults=2)
    check(len(page.get("QueueUrls", [])) == 2 and "NextToken" not in page, "full last page: %r" % page)
    loose = boto3.client("sqs", endpoint_url=ENDPOINT, region_name=REGION, aws_access_key_id=ACCESS_KEY,
                         aws_secret_access_key=SECRET_KEY, config=CFG.merge(Config(parameter_validation=False)))
    empty = expect_error(loose.send_message_batch, {"EmptyBatchRequest"}, QueueUrl=url, Entries=[])
    bad = expect_error(sqs.send_message, {"InvalidParameterValue"}, QueueUrl=url, MessageBody="x",
                       MessageAttributes={"n": {"DataType": "Number", "StringValue": "abc"}})
    expect_error(sqs.send_message, {"InvalidParameterValue"}, QueueUrl=url, MessageBody="x",
                 MessageAttributes={"s": {"DataType": "String", "StringValue": ""}})
    tenants = mkq("tenants")
    sqs.send_message(QueueUrl=tenants, MessageBody="of tenant a", MessageGroupId="tenant-a")
    got = receive(tenants, AttributeNames=["MessageGroupId"], WaitTimeSeconds=1)
    check([m.get("Attributes", {}).get("MessageGroupId") for m in got] == ["tenant-a"],
          "MessageGroupId of a standard queue's message: %r" % got)
    return "empty batch=%s, Number 'abc'=%s" % (empty, bad)


def case_purge():
    url = mkq("purge")
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody="p%d" % i)
    n = qattrs(url, ["ApproximateNumberOfMessages"]).get("ApproximateNumberOfMessages")
    check(n == "3", "before purge ApproximateNumberOfMessages %r" % n)
    sqs.purge_queue(QueueUrl=url)
    m = receive(url, WaitTimeSeconds=1)
    check(not m, "receive after purge got %d" % len(m))
    n = qattrs(url, ["ApproximateNumberOfMessages"]).get("ApproximateNumberOfMessages")
    check(n == "0", "after purge ApproximateNumberOfMessages %r" % n)


def case_nonexistent_queue():
    try:
        sqs.get_queue_url(QueueName=qname("does-not-exist"))
    except ClientError as e:
        c = code_of(e)
        st = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        check(c in ("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"), "code %s (HTTP %s)" % (c, st))
        return "code=%s HTTP %s" % (c, st)
    raise Fail("GetQueueUrl succeeded")


def case_bad_signature():
    if not CHECK_SIG:
        return "SKIP", "CHECK_SIGNATURES=0"
    res, errs = [], []
    for label, cl, codes in (("wrong secret", make_client(secret=SECRET_KEY + "-wrong"), {"SignatureDoesNotMatch"}),
                             ("unknown key", make_client(key="AKIAUNKNOWNKEY000000", secret=SECRET_KEY), {"InvalidClientTokenId"})):
        try:
            res.append("%s: %s" % (label, expect_error(cl.list_queues, codes)))
        except Fail as e:
            errs.append("%s: %s" % (label, e))
    check(not errs, "; ".join(errs))
    return "; ".join(res)


def case_delete_queue():
    if not created:
        return "SKIP", "no queues were created"
    errs = []
    for name, url in list(created.items()):
        try:
            sqs.delete_queue(QueueUrl=url)
            del created[name]
        except ClientError as e:
            errs.append("%s: %s" % (name, code_of(e)))
    check(not errs, "delete failed: " + "; ".join(errs))
    names = sorted(set(q for q in DELETED))
    still = []
    codes = set()
    for name in names:
        try:
            sqs.get_queue_url(QueueName=name)
            still.append(name)
        except ClientError as e:
            codes.add(code_of(e))
    check(not still, "GetQueueUrl still works for %s" % still)
    return "%d queues deleted; GetQueueUrl afterwards: %s" % (len(names), ",".join(sorted(codes)))


DELETED = []

CASES = [
    ("create-queue", case_create_queue),
    ("send-receive-attributes", case_send_receive_attributes),
    ("long-poll-wakes", case_long_poll_wakes),
    ("long-poll-empty", case_long_poll_empty),
    ("change-visibility", case_change_visibility),
    ("stale-receipt-handle", case_stale_receipt_handle),
    ("batches", case_batches),
    ("batches-duplicate-ids", case_batch_ids_not_distinct),
    ("batches-bad-handle", case_batch_delete_bad_handle),
    ("fifo-order", case_fifo_order),
    ("fifo-dedup", case_fifo_dedup),
    ("fifo-batch-sequence-number", case_fifo_batch_sequence_number),
    ("redrive", case_redrive),
    ("queue-attributes", case_queue_attributes),
    ("list-queues", case_list_queues),
    ("tags", case_tags),
    ("sqs-contract", case_sqs_contract),
    ("purge", case_purge),
    ("nonexistent-queue", case_nonexistent_queue),
    ("bad-signature", case_bad_signature),
    ("delete-queue", case_delete_queue),
]


def main():
    print("# boto3 %s botocore %s protocol=%s python=%s endpoint=%s prefix=%s" % (
        boto3.__version__, botocore.__version__, PROTOCOL, sys.version.split()[0], ENDPOINT, PREFIX))
    fails = 0
    t_start = time.time()
    for name, fn in CASES:
        if ONLY and name not in ONLY and name != "delete-queue":
            continue
        if name == "delete-queue":
            DELETED.extend(created)
        try:
            r = fn()
            if isinstance(r, tuple) and r and r[0] == "SKIP":
                print("SKIP %s: %s" % (name, r[1]))
            else:
                print("PASS %s%s" % (name, (": " + r) if r else ""))
        except Fail as e:
            fails += 1
            print("FAIL %s: %s" % (name, e))
        except ClientError as e:
            fails += 1
            print("FAIL %s: unexpected error %s: %s" % (name, code_of(e), e.response.get("Error", {}).get("Message")))
        except Exception as e:  # noqa
            fails += 1
            print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
        sys.stdout.flush()
    print("# %d failed, %.1fs" % (fails, time.time() - t_start))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
