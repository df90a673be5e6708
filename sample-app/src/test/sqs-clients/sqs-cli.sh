#!/usr/bin/env bash
# End-to-end SQS checks with the `aws sqs` CLI (v1 = JSON protocol in recent releases, Debian v2.9 = query protocol).
# Env: AWS_CLI (default aws), SQS_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (us-east-1),
#      QUEUE_PREFIX, CHECK_SIGNATURES (1|0), STALE_HANDLE (unused here), CLI_PARALLEL (1 = run cases concurrently, default),
#      CLI_JOBS (with CLI_PARALLEL=1, at most this many cases at once; default all), CASES (optional comma list).
# Output: PASS <case>[: detail] | FAIL <case>: reason | SKIP <case>: why. Exit 0 iff no FAIL.
set -u
AWS="${AWS_CLI:-aws}"
EP="${SQS_ENDPOINT:-http://127.0.0.1:9324}"
REGION="${AWS_REGION:-us-east-1}"
PREFIX="${QUEUE_PREFIX:-cli$(date +%s)$RANDOM}"
CHECK_SIG="${CHECK_SIGNATURES:-1}"
PARALLEL="${CLI_PARALLEL:-1}"
JOBS="${CLI_JOBS:-0}"
ONLY_CASES="${CASES:-}"   # optional comma list of case names (delete-queue always runs)
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-test}" AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-test}"
export AWS_PAGER="" AWS_DEFAULT_OUTPUT=json
unset AWS_PROFILE
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
: >"$TMP/queues"

# a pyenv shim costs ~0.5 s per call: resolve it to the real script once
if [[ "$(command -v "$AWS" 2>/dev/null)" == */.pyenv/shims/* ]] && command -v pyenv >/dev/null; then
  AWS="$(pyenv which "$(basename "$AWS")")"
fi
VERSION="$("$AWS" --version 2>&1)"
BINFMT=()
case "$VERSION" in aws-cli/2*) BINFMT=(--cli-binary-format raw-in-base64-out) ;; esac

# sqs OP ARGS... : run the CLI, stdout = result; on error print "OP failed: <code>" to stderr and return 1
sqs() {
  local op="$1" err="$TMP/err.$BASHPID"
  if "$AWS" sqs "$@" --endpoint-url "$EP" --region "$REGION" 2>"$err"; then return 0; fi
  echo "$op failed: $(errcode "$err") $(tr '\n' ' ' <"$err" | cut -c1-200)" >&2
  return 1
}
errcode() { sed -n 's/.*An error occurred (\([^)]*\)).*/\1/p' "$1" | head -1; }
# expect_err "CODE1|CODE2" OP ARGS... : the call must fail with one of the codes (AWS.SimpleQueueService. prefix ignored)
expect_err() {
  local codes="$1" err="$TMP/xerr.$BASHPID"; shift
  if "$AWS" sqs "$@" --endpoint-url "$EP" --region "$REGION" >/dev/null 2>"$err"; then
    echo "$1: expected error $codes, call succeeded" >&2; return 1
  fi
  local c; c="$(errcode "$err")"
  if [[ "|$codes|" == *"|${c#AWS.SimpleQueueService.}|"* || "|$codes|" == *"|$c|"* ]]; then echo "$c"; return 0; fi
  echo "$1: expected error $codes, got '${c}': $(tr '\n' ' ' <"$err" | cut -c1-200)" >&2; return 1
}
fail() { echo "$*" >&2; return 1; }
mkq() { # mkq SUFFIX [--attributes ...] -> prints url, records it
  local name="$PREFIX-$1"; shift
  local url; url="$(sqs create-queue --queue-name "$name" "$@" --query QueueUrl --output text)" || return 1
  echo "$name $url" >>"$TMP/queues"
  echo "$url"
}

case_create_queue() {
  local name="$PREFIX-std" url got again c
  url="$(mkq std --attributes VisibilityTimeout=5)"
  [[ "$url" == */"$name" ]] || fail "QueueUrl $url does not end with /$name"
  got="$(sqs get-queue-url --queue-name "$name" --query QueueUrl --output text)"
  [ "$got" = "$url" ] || fail "get-queue-url $got != $url"
  again="$(sqs create-queue --queue-name "$name" --attributes VisibilityTimeout=5 --query QueueUrl --output text)"
  [ "$again" = "$url" ] || fail "re-create returned $again"
  c="$(expect_err "QueueAlreadyExists|QueueNameExists" create-queue --queue-name "$name" --attributes VisibilityTimeout=6)"
  echo "url=$url; different-attrs error=$c"
}

case_send_receive_attributes() {
  local url out body s n b cnt t0 t1
  url="$(mkq attrs)"
  sqs send-message --queue-url "$url" --message-body "hello attrs" "${BINFMT[@]}" \
    --message-attributes '{"s":{"DataType":"String","StringValue":"str-val"},"n":{"DataType":"Number","StringValue":"42.5"},"b":{"DataType":"Binary","BinaryValue":"bin"}}' \
    --query MD5OfMessageAttributes --output text >"$TMP/sra.md5"
  t0=$(date +%s.%N)
  out="$(sqs receive-message --queue-url "$url" --wait-time-seconds 2 --message-attribute-names All --attribute-names All \
    --query 'Messages[0].[Body,MessageAttributes.s.StringValue,MessageAttributes.n.StringValue,MessageAttributes.b.BinaryValue,Attributes.ApproximateReceiveCount,Attributes.SentTimestamp,MD5OfMessageAttributes]' --output text)"
  t1=$(date +%s.%N)
  IFS=$'\t' read -r body s n b cnt sent md5 <<<"$out"
  [ "$body" = "hello attrs" ] || fail "body '$body' (raw: $out)"
  [ "$s" = "str-val" ] && [ "$n" = "42.5" ] && [ "$b" = "$(printf bin | base64)" ] || fail "attributes s=$s n=$n b=$b"
  [ "$cnt" = "1" ] || fail "ApproximateReceiveCount $cnt"
  [ "$sent" != "None" ] || fail "no SentTimestamp"
  [ "$md5" = "$(cat "$TMP/sra.md5")" ] || fail "MD5OfMessageAttributes send $(cat "$TMP/sra.md5") != receive $md5"
  echo "receive took $(echo "$t1 - $t0" | bc | cut -c1-4)s incl. CLI start"
}

case_change_visibility_delete() {
  local url id h id2 h2 cnt out t0 t1 dt
  url="$(mkq vis)"
  sqs send-message --queue-url "$url" --message-body vis >/dev/null
  read -r id h <<<"$(sqs receive-message --queue-url "$url" --wait-time-seconds 2 --visibility-timeout 30 --query 'Messages[0].[MessageId,ReceiptHandle]' --output text)"
  [ -n "$h" ] && [ "$id" != "None" ] || fail "first receive got nothing"
  sqs change-message-visibility --queue-url "$url" --receipt-handle "$h" --visibility-timeout 0
  read -r id2 h2 cnt <<<"$(sqs receive-message --queue-url "$url" --wait-time-seconds 2 --attribute-names ApproximateReceiveCount --query 'Messages[0].[MessageId,ReceiptHandle,Attributes.ApproximateReceiveCount]' --output text)"
  [ "$id2" = "$id" ] || fail "second receive got '$id2' not $id"
  [ "$cnt" = "2" ] || fail "ApproximateReceiveCount $cnt"
  sqs delete-message --queue-url "$url" --receipt-handle "$h2"
  t0=$(date +%s.%N)
  out="$(sqs receive-message --queue-url "$url" --wait-time-seconds 2 --query 'length(Messages || `[]`)' --output text)"
  t1=$(date +%s.%N)
  [ "$out" = "0" ] || fail "message still there after delete"
  dt="$(echo "$t1 - $t0" | bc)"
  [ "$(echo "$dt >= 1.9" | bc)" = 1 ] || fail "empty receive with wait-time 2 returned after ${dt}s"
  echo "empty long poll (wait-time 2) took ${dt:0:4}s incl. CLI start"
}

case_batches() {
  local url entries ok failed c rows del
  url="$(mkq batch)"
  entries="$(for i in 0 1 2 3 4 5 6 7 8 9; do printf '{"Id":"m%d","MessageBody":"batch-%d"},' $i $i; done)"
  read -r ok failed <<<"$(sqs send-message-batch --queue-url "$url" --entries "[${entries%,}]" --query '[length(Successful || `[]`),length(Failed || `[]`)]' --output text)"
  [ "$ok" = 10 ] && [ "$failed" = 0 ] || fail "send batch ok=$ok failed=$failed"
  : >"$TMP/batch.rows"
  for _ in 1 2 3 4; do
    sqs receive-message --queue-url "$url" --max-number-of-messages 10 --wait-time-seconds 1 --visibility-timeout 30 \
      --query 'Messages[].[MessageId,ReceiptHandle]' --output text >>"$TMP/batch.rows"
    [ "$(sort -u -k1,1 "$TMP/batch.rows" | grep -vc '^None')" -ge 10 ] && break
  done
  rows="$(sort -u -k1,1 "$TMP/batch.rows" | grep -v '^None')"
  [ "$(wc -l <<<"$rows")" = 10 ] || fail "received $(wc -l <<<"$rows") distinct messages"
  del="$(awk '{printf "{\"Id\":\"d%d\",\"ReceiptHandle\":\"%s\"},", NR, $2}' <<<"$rows")"
  read -r ok failed <<<"$(sqs delete-message-batch --queue-url "$url" --entries "[${del%,}]" --query '[length(Successful || `[]`),length(Failed || `[]`)]' --output text)"
  [ "$ok" = 10 ] && [ "$failed" = 0 ] || fail "delete batch ok=$ok failed=$failed"
  c="$(expect_err BatchEntryIdsNotDistinct send-message-batch --queue-url "$url" --entries '[{"Id":"x","MessageBody":"1"},{"Id":"x","MessageBody":"2"}]')"
  echo "duplicate ids error=$c"
}

case_fifo_order() {
  local url seq r1 r2 r3 rest h
  url="$(mkq orders.fifo --attributes FifoQueue=true,ContentBasedDeduplication=true)"
  seq="$(sqs send-message-batch --queue-url "$url" --entries '[{"Id":"1","MessageBody":"a1","MessageGroupId":"A"},{"Id":"2","MessageBody":"b1","MessageGroupId":"B"},{"Id":"3","MessageBody":"a2","MessageGroupId":"A"},{"Id":"4","MessageBody":"a3","MessageGroupId":"A"},{"Id":"5","MessageBody":"b2","MessageGroupId":"B"}]' \
    --query 'length(Successful[?SequenceNumber])' --output text)" || fail "FIFO send-message-batch failed"
  # reported as its own case, so the ordering check still runs
  if [ "$seq" = 5 ]; then echo "PASS fifo-batch-sequence-number" >"$TMP/extra.fifo"
  else echo "FAIL fifo-batch-sequence-number: SendMessageBatch on a FIFO queue: $seq of 5 result entries have SequenceNumber" >"$TMP/extra.fifo"; fi
  r1="$(sqs receive-message --queue-url "$url" --max-number-of-messages 1 --visibility-timeout 30 --query 'Messages[0].[Body,ReceiptHandle]' --output text)"
  r2="$(sqs receive-message --queue-url "$url" --max-number-of-messages 1 --visibility-timeout 30 --query 'Messages[0].[Body,ReceiptHandle]' --output text)"
  r3="$(sqs receive-message --queue-url "$url" --max-number-of-messages 1 --visibility-timeout 30 --wait-time-seconds 1 --query 'Messages[0].Body' --output text)"
  local b1="${r1%%$'\t'*}" b2="${r2%%$'\t'*}"
  [ "$(printf '%s\n' "$b1" "$b2" | sort | tr '\n' ' ')" = "a1 b1 " ] && [ "$r3" = "None" ] ||
    fail "one-in-flight-per-group violated: first two receives '$b1' '$b2', third '$r3'"
  sqs delete-message-batch --queue-url "$url" --entries "[{\"Id\":\"x\",\"ReceiptHandle\":\"${r1#*$'\t'}\"},{\"Id\":\"y\",\"ReceiptHandle\":\"${r2#*$'\t'}\"}]" >/dev/null
  rest=""
  for _ in 1 2 3; do
    rest+="$(sqs receive-message --queue-url "$url" --max-number-of-messages 10 --visibility-timeout 30 --wait-time-seconds 1 --query 'Messages[].Body' --output text | tr '\t' ' ') "
    [ "$(echo $rest | wc -w)" -ge 3 ] && break
  done
  local a b
  a="$(printf '%s\n' $b1 $b2 $rest | grep '^a' | tr '\n' ' ')"
  b="$(printf '%s\n' $b1 $b2 $rest | grep '^b' | tr '\n' ' ')"
  [ "$a" = "a1 a2 a3 " ] && [ "$b" = "b1 b2 " ] || fail "per-group order A=[$a] B=[$b] (rest: $rest)"
  echo "after deleting a1,b1 the next receives returned: $rest"
}

case_redrive() {
  local dlq arn work n t0 t1 out srcs
  dlq="$(mkq dlq)"
  arn="$(sqs get-queue-attributes --queue-url "$dlq" --attribute-names QueueArn --query Attributes.QueueArn --output text)"
  [ -n "$arn" ] && [ "$arn" != None ] || fail "no QueueArn"
  work="$(mkq work --attributes "{\"VisibilityTimeout\":\"1\",\"RedrivePolicy\":\"{\\\"deadLetterTargetArn\\\":\\\"$arn\\\",\\\"maxReceiveCount\\\":\\\"2\\\"}\"}")"
  sqs send-message --queue-url "$work" --message-body poison >/dev/null
  n="$(sqs receive-message --queue-url "$work" --wait-time-seconds 2 --query 'length(Messages || `[]`)' --output text)"
  [ "$n" = 1 ] || fail "receive 1 got $n"
  sleep 1.2
  n="$(sqs receive-message --queue-url "$work" --wait-time-seconds 3 --query 'length(Messages || `[]`)' --output text)"
  [ "$n" = 1 ] || fail "receive 2 got $n"
  sleep 1.2
  t0=$(date +%s.%N)
  n="$(sqs receive-message --queue-url "$work" --wait-time-seconds 3 --query 'length(Messages || `[]`)' --output text)"
  t1=$(date +%s.%N)
  [ "$n" = 0 ] || fail "receive 3 from work got $n"
  out="$(sqs receive-message --queue-url "$dlq" --wait-time-seconds 2 --query 'Messages[0].Body' --output text)"
  [ "$out" = poison ] || fail "dlq receive got '$out'"
  srcs="$(sqs list-dead-letter-source-queues --queue-url "$dlq" --query 'queueUrls' --output text)"
  [ "$srcs" = "$work" ] || fail "list-dead-letter-source-queues: '$srcs'"
  echo "3rd receive empty after $(echo "$t1 - $t0" | bc | cut -c1-4)s incl. CLI start"
}

case_purge() {
  local url n
  url="$(mkq purge)"
  sqs send-message-batch --queue-url "$url" --entries '[{"Id":"1","MessageBody":"p1"},{"Id":"2","MessageBody":"p2"},{"Id":"3","MessageBody":"p3"}]' >/dev/null
  sqs purge-queue --queue-url "$url"
  n="$(sqs receive-message --queue-url "$url" --wait-time-seconds 1 --query 'length(Messages || `[]`)' --output text)"
  [ "$n" = 0 ] || fail "receive after purge got $n"
}

case_standard_message_group() {
  local url g
  url="$(mkq tenants)"
  sqs send-message --queue-url "$url" --message-body "of tenant a" --message-group-id tenant-a >/dev/null
  g="$(sqs receive-message --queue-url "$url" --attribute-names MessageGroupId --wait-time-seconds 1 \
    --query 'Messages[0].Attributes.MessageGroupId' --output text)"
  [ "$g" = tenant-a ] || fail "MessageGroupId of a standard queue's message: $g"
}

case_nonexistent_queue() {
  local c
  c="$(expect_err "QueueDoesNotExist|AWS.SimpleQueueService.NonExistentQueue" get-queue-url --queue-name "$PREFIX-does-not-exist")"
  echo "code=$c"
}

case_bad_signature() {
  [ "$CHECK_SIG" = 0 ] && { echo "CHECK_SIGNATURES=0"; return 3; }
  local c1 c2 rc=0
  c1="$(AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY-wrong" expect_err SignatureDoesNotMatch list-queues 2>&1)" || rc=1
  c2="$(AWS_ACCESS_KEY_ID=AKIAUNKNOWNKEY000000 expect_err InvalidClientTokenId list-queues 2>&1)" || rc=1
  echo "wrong secret: $c1; unknown key: $c2"
  return $rc
}

case_delete_queue() {
  local name url n c
  n=0
  while read -r name url; do
    sqs delete-queue --queue-url "$url" || return 1
    n=$((n + 1))
  done < <(sort -u "$TMP/queues")
  [ "$n" -gt 0 ] || { echo "no queues were created"; return 3; }
  c="$(expect_err "QueueDoesNotExist|AWS.SimpleQueueService.NonExistentQueue" get-queue-url --queue-name "$PREFIX-std")"
  echo "$n queues deleted; get-queue-url afterwards: $c"
}

CASES=(create-queue send-receive-attributes change-visibility-delete batches fifo-order redrive purge standard-message-group nonexistent-queue bad-signature)
FAILS=0
report() { # report NAME RC OUTFILE
  local last; last="$(grep -v '^$' "$3" | tail -1)"
  case "$2" in
    0) echo "PASS $1${last:+: $last}" ;;
    3) echo "SKIP $1: $last" ;;
    *) echo "FAIL $1: ${last:-exit $2}"; FAILS=$((FAILS + 1)) ;;
  esac
}
runcase() { ( set -e; "case_${1//-/_}" ) >"$TMP/out.$1" 2>&1; echo $? >"$TMP/rc.$1"; }

echo "# $VERSION endpoint=$EP prefix=$PREFIX parallel=$PARALLEL jobs=$JOBS"
START=$(date +%s)
if [ -n "${ONLY_CASES}" ]; then
  SEL=(); for c in "${CASES[@]}"; do [[ ",$ONLY_CASES," == *",$c,"* ]] && SEL+=("$c"); done; CASES=("${SEL[@]}")
fi
for c in "${CASES[@]}"; do
  if [ "$PARALLEL" = 1 ]; then
    while [ "$JOBS" -gt 0 ] && [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    runcase "$c" &
  else
    runcase "$c"
  fi
done
wait
for c in "${CASES[@]}"; do
  report "$c" "$(cat "$TMP/rc.$c")" "$TMP/out.$c"
  if [ "$c" = fifo-order ] && [ -f "$TMP/extra.fifo" ]; then
    cat "$TMP/extra.fifo"; grep -q '^FAIL' "$TMP/extra.fifo" && FAILS=$((FAILS + 1))
  fi
done
runcase delete-queue
report delete-queue "$(cat "$TMP/rc.delete-queue")" "$TMP/out.delete-queue"
echo "# $FAILS failed, $(($(date +%s) - START))s"
[ "$FAILS" = 0 ]
