#!/usr/bin/env bash
# Run Solace's own Go client test suite against the devbroker, as solacetest/doc.go
# records it: the shared harness (../shared/tools/solace-go-suite/run.sh, unpatched)
# plus the external services the suite reads from its environment, started here:
#   - an OAuth provider: the devbroker serves the suite's JWKS and userinfo fixtures
#     over https (--oauth-addr), and PUBSUB_OAUTHSERVER_* point the suite's OAuth
#     profiles at it (the suite skips its OAuth specs without them).
#   - toxiproxy (github.com/Shopify/toxiproxy/v2, built here with go install) on
#     127.0.0.1 behind scripts/toxiproxy-front, which keeps the proxies the suite
#     creates on loopback and maps the upstream ports the suite assumes (55555,
#     55003, 55443) to the devbroker's --extra-listener addresses; TOXIPROXY_* tell
#     the suite where it is (it skips its network-fault specs without them).
#   - a Kerberos KDC: Debian's MIT krb5-kdc with a throwaway realm on 127.0.0.1
#     (.ci/setup.d/30-krb5.sh, stopped at the end unless it was already running);
#     the suite's client gets a ticket for principal "app" (kinit from its keytab,
#     KRB5CCNAME, KRB5_CONFIG), the devbroker verifies tickets for solace/127.0.0.1
#     against the realm's keytab (--kerberos-keytab), and PUBSUB_KDC_HOSTNAME tells
#     the suite there is a KDC. The suite's remote test context never enables its
#     Kerberos specs (only its testcontainers context does, after starting a KDC
#     container), so a copy of the suite gets one change,
#     scripts/solace-go-suite-kerberos.diff: the remote context enables them when the
#     config names a KDC. The last line then counts kerberos_test.go in scope:
#       in-scope with Kerberos: P/T specs pass (F fail, H hang, S skipped)
#   - --semp-monitor-delay (SEMP_MONITOR_DELAY, default 30ms): a real broker's SEMP
#     monitor answers take tens of milliseconds, and the request-reply termination
#     specs depend on that (a request's 5 s reply timeout, started before a SEMP read,
#     must expire before a 5 s grace period started after it).
#   - DATA_DIR=DIR runs every broker start with a fresh --data-dir under DIR, so that
#     the suite measures the broker with persistence on (every ack waits for fsync).
#
# usage: scripts/solace-go-suite.sh [--out DIR] [--files "a_test.go ..."] [SUITE_TEST_DIR]
#   SUITE_TEST_DIR defaults to /tmp/solace-go-suite/test (see the harness README for
#   how to get it); other harness options go after --, e.g. -- --stall 60.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HARNESS=${SOLACE_GO_SUITE_HARNESS:-$ROOT/../shared/tools/solace-go-suite/run.sh}
[ -x "$HARNESS" ] || HARNESS=/work/shared/tools/solace-go-suite/run.sh
OUT=/tmp/sgs; FILES=""; SUITE=/tmp/solace-go-suite/test; EXTRA=()
while [ $# -gt 0 ]; do
	case "$1" in
	--out) OUT=$2; shift 2 ;;
	--files) FILES=$2; shift 2 ;;
	--) shift; EXTRA=("$@"); break ;;
	-h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) SUITE=$1; shift ;;
	esac
done
[ -f "$SUITE/main_test.go" ] || { echo "solace-go-suite.sh: $SUITE is not the suite's test/ folder" >&2; exit 2; }
F=$(cd "$SUITE/data/fixtures" && pwd)

TMP=$(mktemp -d)
# The suite with the one change that lets its remote context run the Kerberos specs.
mkdir -p "$TMP/suite" && cp -a "$SUITE/." "$TMP/suite/"
patch -p1 -d "$TMP/suite" --forward --batch --no-backup-if-mismatch <"$ROOT/scripts/solace-go-suite-kerberos.diff" >/dev/null
SUITE=$TMP/suite
BIN=$TMP/connect-solace
(cd "$ROOT" && go build -o "$BIN" ./cmd/connect-solace && go build -o "$TMP/toxiproxy-front" ./scripts/toxiproxy-front)
GOBIN=$TMP GOFLAGS= go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.3.0

# free_port prints a TCP port free on 127.0.0.1 now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

OAUTH_PORT=$(free_port)
export PUBSUB_OAUTHSERVER_HOSTNAME=127.0.0.1
export PUBSUB_OAUTHSERVER_JWKS_ENDPOINT=https://127.0.0.1:$OAUTH_PORT/jwks
export PUBSUB_OAUTHSERVER_USERINFO_ENDPOINT=https://127.0.0.1:$OAUTH_PORT/userinfo

# Toxiproxy and its front, stopped by PID when this script ends.
PIDS=()
# It keeps the script's exit status: the wait for a child it has just
# stopped returns 143, which under set -e would end the script with it.
cleanup() {
	local rc=$?
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	[ -n "${KDC_STOP:-}" ] && { eval "$KDC_STOP" || true; }
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
wait_tcp() { # wait_tcp PORT PID: until 127.0.0.1:PORT accepts, or PID died
	for _ in $(seq 1 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || { echo "solace-go-suite.sh: process $2 died before listening on $1" >&2; return 1; }
		sleep 0.1
	done
	echo "solace-go-suite.sh: nothing listens on 127.0.0.1:$1" >&2; return 1
}
TOXI_API=$(free_port); FRONT=$(free_port)
UP_SMF=$(free_port); UP_COMP=$(free_port); UP_TLS=$(free_port)
"$TMP/server" -host 127.0.0.1 -port "$TOXI_API" >"$OUT.toxiproxy.log" 2>&1 &
PIDS+=($!); wait_tcp "$TOXI_API" "$!"
"$TMP/toxiproxy-front" -listen "127.0.0.1:$FRONT" -toxiproxy "127.0.0.1:$TOXI_API" \
	-map "55555=127.0.0.1:$UP_SMF" -map "55003=127.0.0.1:$UP_COMP" -map "55443=127.0.0.1:$UP_TLS" >>"$OUT.toxiproxy.log" 2>&1 &
PIDS+=($!); wait_tcp "$FRONT" "$!"
export TOXIPROXY_HOST=127.0.0.1 TOXIPROXY_PORT=$FRONT TOXIPROXY_UPSTREAM=127.0.0.1
export TOXIPROXY_PLAINTEXT_PORT=$(free_port) TOXIPROXY_COMPRESSED_PORT=$(free_port) TOXIPROXY_SECURE_PORT=$(free_port)

# With DATA_DIR, the broker command is a wrapper that gives each start its own
# data directory: the harness restarts the broker per file and after stalls.
BROKER=("$BIN" devbroker)
if [ -n "${DATA_DIR:-}" ]; then
	mkdir -p "$DATA_DIR"
	DATA_DIR=$(cd "$DATA_DIR" && pwd)
	printf '#!/bin/sh\nexec "%s" devbroker --data-dir "$(mktemp -d "%s/start.XXXXXX")" "$@"\n' "$BIN" "$DATA_DIR" >"$TMP/devbroker-data-dir"
	chmod +x "$TMP/devbroker-data-dir"
	BROKER=("$TMP/devbroker-data-dir")
fi

# The KDC, and a ticket for the suite's client in a cache of this run's own.
KDC_DIR=${KRB5_TEST_DIR:-/tmp/connect-solace-krb5}
if [ -s "$KDC_DIR/kdc.pid" ] && kill -0 "$(cat "$KDC_DIR/kdc.pid")" 2>/dev/null; then
	on_exit() { :; } # someone else's KDC: leave it running
else
	on_exit() { KDC_STOP=$1; }
fi
KDC_STOP=""
# shellcheck source=/dev/null
source "$ROOT/.ci/setup.d/30-krb5.sh" >>"$OUT.krb5.log"
unset -f on_exit
export KRB5CCNAME=FILE:$TMP/krb5cc
kinit -k -t "$KRB5_TEST_DIR/app.keytab" app
export PUBSUB_KDC_HOSTNAME=127.0.0.1 PUBSUB_DOMAIN=$KRB5_TEST_REALM

args=(--out "$OUT")
[ -n "$FILES" ] && args+=(--files "$FILES")
set +e
"$HARNESS" "${args[@]}" "${EXTRA[@]}" "$SUITE" -- \
	"${BROKER[@]}" --smf-addr '127.0.0.1:{smf}' --semp-addr '127.0.0.1:{semp}' \
	--health-addr '127.0.0.1:{health}' --smf-tls-addr '127.0.0.1:{secure}' \
	--compressed-addr '127.0.0.1:{compressed}' --web-addr '127.0.0.1:{web}' \
	--secure-web-addr '127.0.0.1:{secure_web}' --tls-cert "$F/api-server.pem" \
	--tls-key-passphrase-file "$F/api-server-passphrase.txt" --tls-max-version 1.2 \
	--oauth-addr "127.0.0.1:$OAUTH_PORT" --oauth-jwks-file "$F/jwks_key_endpoint.json" \
	--oauth-userinfo-file "$F/userinfo.json" --extra-listener "smf=127.0.0.1:$UP_SMF" \
	--extra-listener "compressed=127.0.0.1:$UP_COMP" --extra-listener "smf-tls=127.0.0.1:$UP_TLS" \
	--semp-monitor-delay "${SEMP_MONITOR_DELAY:-30ms}" --kerberos-keytab "$KRB5_TEST_SERVICE_KEYTAB" \
	--log-level debug | tee "$OUT.report.txt"
rc=${PIPESTATUS[0]}
set -e
# The harness counts kerberos_test.go out of scope (it assumes no KDC); with one,
# it is in scope: add its row to the harness's in-scope row.
awk -F'|' '
	$1 ~ /^in scope / { for (i = 2; i <= 6; i++) s[i] += $i; seen = 1 }
	$1 ~ /^kerberos_test.go / { for (i = 2; i <= 6; i++) s[i] += $i }
	END { if (seen) printf "in-scope with Kerberos: %d/%d specs pass (%d fail, %d hang, %d skipped)\n", s[3], s[2], s[4], s[5], s[6] }
' "$OUT.report.txt"
exit "$rc"
