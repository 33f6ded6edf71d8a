# shellcheck shell=bash
# Debian's headless Chromium driven by chromedriver (W3C WebDriver), for the
# devbroker console's browser test (solacetest/console_browser_test.go).
#
# Sourced by .ci/run (bash, set -euo pipefail, on_exit available) and by
# `make test-services`. By hand:
#
#   bash -c 'source .ci/setup.d/40-chromium.sh'
#
# leaves chromedriver running (it prints the `kill <pid>`); running it again
# while it answers only re-exports the variables below.
#
# What it does:
#   - installs Debian's chromium and chromium-driver (and curl, to ask
#     chromedriver whether it is ready) without starting anything;
#   - starts chromedriver on 127.0.0.1:CHROMEDRIVER_PORT (default 9515),
#     accepting connections from loopback only, logging to
#     CHROMEDRIVER_DIR (default /tmp/connect-solace-chromium);
#   - waits until its /status says ready;
#   - exports what the test reads (it has the same defaults, so `go test`
#     works without sourcing this file once chromedriver is up):
#       CHROMEDRIVER_URL   http://127.0.0.1:9515
#       CHROMIUM_BIN       /usr/bin/chromium
#   - registers `on_exit` to stop chromedriver by PID (the browsers it
#     started end with their sessions).

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

_chromium_main() {
	local port="${CHROMEDRIVER_PORT:-9515}"
	local dir="${CHROMEDRIVER_DIR:-/tmp/connect-solace-chromium}"
	local url="http://127.0.0.1:$port"

	if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 ||
		! command -v curl >/dev/null 2>&1; then
		apt_install chromium chromium-driver curl
	fi
	export CHROMEDRIVER_URL="$url"
	export CHROMIUM_BIN="${CHROMIUM_BIN:-$(command -v chromium)}"

	_chromedriver_ready() { curl -fsS --max-time 2 "$url/status" 2>/dev/null | grep -q '"ready": *true'; }

	if [ -s "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null && _chromedriver_ready; then
		echo "chromium: reusing running chromedriver (pid $(cat "$dir/pid"))"
	else
		if [ -s "$dir/pid" ]; then
			local old
			old="$(cat "$dir/pid")"
			kill "$old" 2>/dev/null || true
			for _i in $(seq 50); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
		fi
		rm -rf "$dir"
		mkdir -p "$dir"
		# setsid: detached, so a developer's shell can exit and leave it up.
		setsid chromedriver --port="$port" --allowed-ips=127.0.0.1 --log-path="$dir/chromedriver.log" \
			>"$dir/stdout.log" 2>&1 </dev/null &
		echo $! >"$dir/pid"
		local ok=0
		for _i in $(seq 100); do
			if _chromedriver_ready; then
				ok=1
				break
			fi
			sleep 0.1
		done
		if [ "$ok" = 0 ]; then
			echo "chromium: chromedriver did not become ready; its log:" >&2
			tail -n 40 "$dir/stdout.log" "$dir/chromedriver.log" >&2 || true
			return 1
		fi
		echo "chromium: chromedriver $(chromedriver --version | awk '{print $2}') up on $url (pid $(cat "$dir/pid"), dir $dir)"
	fi
	unset -f _chromedriver_ready
	stop_at_exit chromium "$(cat "$dir/pid")"
}

_chromium_main
unset -f _chromium_main
