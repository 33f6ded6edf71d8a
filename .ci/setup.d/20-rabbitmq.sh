# shellcheck shell=bash
# RabbitMQ with the AMQP 1.0 plugin, for the `jms` output's integration tests
# and benchmark.
#
# Sourced by .ci/run (bash, set -euo pipefail, on_exit available). Developers
# can run it by hand; the broker then keeps running after the shell exits:
#
#   bash -c 'source .ci/setup.d/20-rabbitmq.sh'
#
# and stop it later with the `kill <pid>` it prints. Running it again while the broker is up only re-exports
# the variables below, so it is idempotent.
#
# What it does:
#   - installs Debian's rabbitmq-server and python3-qpid-proton without letting
#     the package start the service (there is no systemd: policy-rc.d says no);
#   - enables rabbitmq_amqp1_0 offline, in a private enabled_plugins file;
#   - starts a node named rabbit@localhost as the rabbitmq user, with its own
#     data and log directories, listening on 127.0.0.1 only (AMQP 0-9-1 and
#     AMQP 1.0 share JMS_RABBITMQ_PORT, default 5672; epmd and the Erlang
#     distribution port are bound to loopback too);
#   - waits for it to be ready and creates the test user (no reject-publish
#     policy: RabbitMQ 3.10's AMQP 1.0 plugin crashes the session on a
#     publisher nack, so tests make the broker refuse an address instead);
#   - exports what the tests read (all have the same defaults in the tests, so
#     `go test` works without sourcing this file once the broker is up):
#       JMS_TEST_AMQP_URL      amqp://127.0.0.1:5672
#       JMS_TEST_USERNAME      connect-solace
#       JMS_TEST_PASSWORD      connect-solace-test
#       JMS_TEST_BROKER_STOP   command that stops the broker application
#       JMS_TEST_BROKER_START  command that starts it again and waits
#   - registers `on_exit` to stop the node by PID (and epmd, which it started).

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

_rmq_main() {
	local port="${JMS_RABBITMQ_PORT:-5672}"
	local dist_port=$((port + 20000))
	local base="${JMS_RABBITMQ_DIR:-/tmp/connect-solace-rabbitmq}"
	local node="rabbit@localhost"
	local user="connect-solace" pass="connect-solace-test"

	# Install once. A policy-rc.d that exits 101 stops the postinst from trying
	# to start a service through init scripts.
	if ! command -v rabbitmq-server >/dev/null 2>&1 || [ ! -d /usr/lib/python3/dist-packages/proton ]; then
		apt_install rabbitmq-server python3-qpid-proton
		# The package may still have spawned epmd; it is harmless, but a stray
		# node from a postinst would hold the port, so stop any such node.
		if pgrep -u rabbitmq -f 'beam.*-s rabbit' >/dev/null 2>&1; then
			local stray
			for stray in $(pgrep -u rabbitmq -f 'beam.*-s rabbit'); do kill "$stray" || true; done
		fi
	fi

	# Everything the node and the CLI tools must agree on.
	export RABBITMQ_NODENAME="$node"
	export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
	export RABBITMQ_NODE_PORT="$port"
	export RABBITMQ_DIST_PORT="$dist_port"
	export ERL_EPMD_ADDRESS=127.0.0.1
	export RABBITMQ_MNESIA_BASE="$base/mnesia"
	export RABBITMQ_LOG_BASE="$base/log"
	export RABBITMQ_ENABLED_PLUGINS_FILE="$base/enabled_plugins"
	export RABBITMQ_PID_FILE="$base/pid"
	export RABBITMQ_CONFIG_FILE="$base/rabbitmq"
	export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"

	local ctl="rabbitmqctl -q -n $node"
	local up=0
	if [ -s "$base/pid" ] && kill -0 "$(cat "$base/pid")" 2>/dev/null; then
		if $ctl status >/dev/null 2>&1; then
			up=1
			echo "rabbitmq: reusing running node (pid $(cat "$base/pid"))"
		elif $ctl eval 'ok.' >/dev/null 2>&1 &&
			timeout 120 $ctl start_app >/dev/null 2>&1 && $ctl await_startup >/dev/null 2>&1; then
			# The node was up with its app stopped (a broker-restart test
			# that did not get to start_app): start the app, keep its data.
			up=1
			echo "rabbitmq: started the app of running node (pid $(cat "$base/pid"))"
		else
			# A node that does not answer still holds the ports and its
			# data directory: stop it before starting afresh.
			local old
			old="$(cat "$base/pid")"
			kill "$old" 2>/dev/null || true
			for _i in $(seq 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.2; done
			kill -9 "$old" 2>/dev/null || true
		fi
	fi

	if [ "$up" = 0 ]; then
		rm -rf "$base"
		mkdir -p "$base/mnesia" "$base/log"
		# Loopback only, and no guest user we did not ask for; plain AMQP 1.0
		# without SASL is allowed for nobody (default_user is not used).
		cat >"$base/rabbitmq.conf" <<-EOF
			listeners.tcp.default = 127.0.0.1:$port
			loopback_users.guest = true
			log.console = false
			log.file.level = warning
		EOF
		chown -R rabbitmq:rabbitmq "$base"
		rabbitmq-plugins --offline enable rabbitmq_amqp1_0 >/dev/null
		chown rabbitmq:rabbitmq "$base/enabled_plugins"

		# setsid: detached, so a developer's shell can exit and leave it up.
		# The Debian wrapper in /usr/sbin switches to the rabbitmq user.
		setsid rabbitmq-server >"$base/log/stdout.log" 2>&1 </dev/null &
		if ! timeout 120 rabbitmqctl -n "$node" wait --timeout 120 "$base/pid" >/dev/null 2>&1; then
			echo "rabbitmq: node did not start; last log lines:" >&2
			tail -n 40 "$base/log/stdout.log" "$base"/log/*.log >&2 || true
			return 1
		fi
		$ctl await_startup >/dev/null

		$ctl add_user "$user" "$pass" >/dev/null
		$ctl set_permissions -p / "$user" '.*' '.*' '.*' >/dev/null
		echo "rabbitmq: node $node up on 127.0.0.1:$port (pid $(cat "$base/pid"), dir $base)"
	fi

	export JMS_TEST_AMQP_URL="amqp://127.0.0.1:$port"
	export JMS_TEST_USERNAME="$user"
	export JMS_TEST_PASSWORD="$pass"
	export JMS_TEST_BROKER_STOP="rabbitmqctl -q -n $node stop_app"
	export JMS_TEST_BROKER_START="rabbitmqctl -q -n $node start_app && rabbitmqctl -q -n $node await_startup"

	local pid
	pid="$(cat "$base/pid")"
	if declare -F on_exit >/dev/null; then
		# Stop by PID: SIGTERM makes the node shut down cleanly (it removes
		# its pid file, so the PID is captured now); then the epmd that came
		# up with it, unless another node still uses it.
		on_exit "kill $pid 2>/dev/null; for _i in \$(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done; epmd -names 2>/dev/null | grep -q '^name ' || epmd -kill >/dev/null 2>&1"
	else
		echo "rabbitmq: left running; stop it with: kill $pid"
	fi
}

_rmq_main
unset -f _rmq_main
