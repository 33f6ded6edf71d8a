#!/usr/bin/env bash
# Run Solace's own Go client test suite against the devbroker, as solacetest/doc.go
# records it: the shared harness (../shared/tools/solace-go-suite/run.sh, unpatched)
# plus the external services the suite reads from its environment, started here:
#   - an OAuth provider: the devbroker serves the suite's JWKS and userinfo fixtures
#     over https (--oauth-addr), and PUBSUB_OAUTHSERVER_* point the suite's OAuth
#     profiles at it (the suite skips its OAuth specs without them).
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
	-h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) SUITE=$1; shift ;;
	esac
done
[ -f "$SUITE/main_test.go" ] || { echo "solace-go-suite.sh: $SUITE is not the suite's test/ folder" >&2; exit 2; }
F=$(cd "$SUITE/data/fixtures" && pwd)

BIN=$(mktemp -d)/connect-solace
(cd "$ROOT" && go build -o "$BIN" ./cmd/connect-solace)

# free_port prints a TCP port free on 127.0.0.1 now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

OAUTH_PORT=$(free_port)
export PUBSUB_OAUTHSERVER_HOSTNAME=127.0.0.1
export PUBSUB_OAUTHSERVER_JWKS_ENDPOINT=https://127.0.0.1:$OAUTH_PORT/jwks
export PUBSUB_OAUTHSERVER_USERINFO_ENDPOINT=https://127.0.0.1:$OAUTH_PORT/userinfo

args=(--out "$OUT")
[ -n "$FILES" ] && args+=(--files "$FILES")
exec "$HARNESS" "${args[@]}" "${EXTRA[@]}" "$SUITE" -- \
	"$BIN" devbroker --smf-addr '127.0.0.1:{smf}' --semp-addr '127.0.0.1:{semp}' \
	--health-addr '127.0.0.1:{health}' --smf-tls-addr '127.0.0.1:{secure}' \
	--compressed-addr '127.0.0.1:{compressed}' --web-addr '127.0.0.1:{web}' \
	--secure-web-addr '127.0.0.1:{secure_web}' --tls-cert "$F/api-server.pem" \
	--tls-key-passphrase-file "$F/api-server-passphrase.txt" --tls-max-version 1.2 \
	--oauth-addr "127.0.0.1:$OAUTH_PORT" --oauth-jwks-file "$F/jwks_key_endpoint.json" \
	--oauth-userinfo-file "$F/userinfo.json" --log-level debug
