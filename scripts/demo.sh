#!/usr/bin/env bash
# The README's first command (`make demo`): build connect-solace, start the
# embedded dev broker on 127.0.0.1, publish ten orders to topics with the
# solace output, then read them back from a queue with the solace input.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin/connect-solace}
SMF_ADDR=${DEMO_SMF_ADDR:-127.0.0.1:55555}
SEMP_ADDR=${DEMO_SEMP_ADDR:-127.0.0.1:8080}
export SOLACE_URL="tcp://$SMF_ADDR"
export SOLACE_USERNAME=demo
export SOLACE_PASSWORD=demo-password

[ -x "$BIN" ] || make build BIN="$BIN"

log=$(mktemp)
"$BIN" devbroker --smf-addr "$SMF_ADDR" --semp-addr "$SEMP_ADDR" \
	--user "$SOLACE_USERNAME:$SOLACE_PASSWORD" --queue 'demo-orders:demo/orders/>' 2>"$log" &
broker=$!
trap 'kill $broker 2>/dev/null; wait $broker 2>/dev/null; rm -f "$log"' EXIT

# Wait until the broker accepts TCP connections (bash's /dev/tcp, no extra tools).
for _ in $(seq 1 100); do
	if (exec 3<>"/dev/tcp/${SMF_ADDR%:*}/${SMF_ADDR##*:}") 2>/dev/null; then break; fi
	if ! kill -0 $broker 2>/dev/null; then cat "$log"; echo "devbroker failed to start" >&2; exit 1; fi
	sleep 0.1
done

echo "== devbroker up on $SMF_ADDR (SEMP on $SEMP_ADDR)"
echo "== publishing 10 orders to demo/orders/<id>"
"$BIN" run --log.level warn config/examples/demo-publish.yaml
echo "== consuming them from queue demo-orders"
"$BIN" run --log.level warn config/examples/demo-consume.yaml
echo "== done: 10 orders went generate -> solace output -> topic -> queue -> solace input -> stdout"
