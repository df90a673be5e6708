#!/usr/bin/env bash
# Starts ElasticMQ (org.elasticmq:elasticmq-server_2.13 from Maven Central, an SQS-compatible server
# that keeps messages in memory) in the foreground, for side-by-side runs of the SQS client scripts
# (sample-app/src/test/sqs-clients) and of the benchmark's sqs workload.
# Usage: queue-benchmark/elasticmq/run-elasticmq.sh [PORT]   (default 9324)
# Queue URLs are http://127.0.0.1:PORT/000000000000/<name>; it does not check signatures.
set -euo pipefail
DIR="$(cd "$(dirname "$0")" && pwd)"
PORT="${1:-9324}"
if [ -z "$(ls "$DIR"/lib/*.jar 2>/dev/null)" ]; then
  "$DIR/../../mvnw" -q -B -f "$DIR/pom.xml" dependency:copy-dependencies -DoutputDirectory=lib -DincludeScope=runtime
fi
CONF="$DIR/lib/elasticmq-$PORT.conf"
cat > "$CONF" <<CONF
include classpath("application.conf")
node-address {
  protocol = "http"
  host = "127.0.0.1"
  port = $PORT
  context-path = ""
}
rest-sqs {
  enabled = true
  bind-port = $PORT
  bind-hostname = "127.0.0.1"
  sqs-limits = strict
}
aws {
  region = "us-east-1"
  accountId = "000000000000"
}
CONF
exec java -Dconfig.file="$CONF" -Dlogback.configurationFile="$DIR/logback.xml" -cp "$DIR/lib/*" org.elasticmq.server.Main
