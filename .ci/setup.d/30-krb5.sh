# shellcheck shell=bash
# An MIT Kerberos KDC with a throwaway realm on 127.0.0.1, for the Kerberos
# login tests (devbroker --kerberos-keytab, auth.scheme: kerberos) and the
# vendor suite's kerberos_test.go.
#
# Sourced by .ci/run (bash, set -euo pipefail, on_exit available) and by
# `make test-services`. By hand:
#
#   bash -c 'source .ci/setup.d/30-krb5.sh'
#
# leaves the KDC running (it prints the `kill <pid>`); running it again while
# the KDC is up only re-exports the variables below.
#
# What it does:
#   - installs Debian's krb5-kdc, krb5-admin-server (kadmin.local), krb5-user
#     (kinit) and libgssapi-krb5-2 (the GSS-API library the Solace C library
#     loads at run time) without starting their services;
#   - creates realm CONNECT-SOLACE.TEST in KRB5_TEST_DIR (default
#     /tmp/connect-solace-krb5) with its own kdc.conf and krb5.conf, and the
#     principals
#       app@REALM                   the client (password and keytab app.keytab)
#       solace/localhost@REALM      the broker's service principal, and
#       solace/127.0.0.1@REALM      (keytab solace.keytab)
#       other/localhost@REALM       a service the broker is not (other.keytab)
#   - starts krb5kdc on 127.0.0.1:KRB5_TEST_KDC_PORT (default 18088, UDP and
#     TCP);
#   - exports what the tests read:
#       KRB5_CONFIG               the realm's krb5.conf (no DNS lookups)
#       KRB5_TEST_REALM           CONNECT-SOLACE.TEST
#       KRB5_TEST_DIR             the directory with the keytabs
#       KRB5_TEST_CLIENT          app (its keytab: $KRB5_TEST_DIR/app.keytab)
#       KRB5_TEST_SERVICE_KEYTAB  $KRB5_TEST_DIR/solace.keytab
#   - registers `on_exit` to stop the KDC by PID.

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

_krb5_main() {
	local dir="${KRB5_TEST_DIR:-/tmp/connect-solace-krb5}"
	local port="${KRB5_TEST_KDC_PORT:-18088}"
	local realm="CONNECT-SOLACE.TEST"

	if ! command -v krb5kdc >/dev/null 2>&1 || ! command -v kadmin.local >/dev/null 2>&1 ||
		! command -v kinit >/dev/null 2>&1 || ! ls /usr/lib/*/libgssapi_krb5.so.2 >/dev/null 2>&1; then
		apt_install krb5-kdc krb5-admin-server krb5-user libgssapi-krb5-2
	fi

	export KRB5_CONFIG="$dir/krb5.conf"
	export KRB5_KDC_PROFILE="$dir/kdc.conf"
	export KRB5_TEST_REALM="$realm"
	export KRB5_TEST_DIR="$dir"
	export KRB5_TEST_CLIENT="app"
	export KRB5_TEST_SERVICE_KEYTAB="$dir/solace.keytab"

	# A KDC that is up and issues tickets is reused; one that does not answer
	# (it may be exiting) is stopped and replaced.
	if [ -s "$dir/kdc.pid" ] && kill -0 "$(cat "$dir/kdc.pid")" 2>/dev/null &&
		kinit -k -t "$dir/app.keytab" -c "FILE:$dir/probe.ccache" app >/dev/null 2>&1; then
		rm -f "$dir/probe.ccache"
		echo "krb5: reusing running KDC (pid $(cat "$dir/kdc.pid"))"
	else
		if [ -s "$dir/kdc.pid" ]; then
			local old
			old="$(cat "$dir/kdc.pid")"
			kill "$old" 2>/dev/null || true
			for _i in $(seq 50); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
		fi
		rm -rf "$dir"
		mkdir -p "$dir"
		cat >"$dir/kdc.conf" <<-EOF
			[kdcdefaults]
			    kdc_listen = 127.0.0.1:$port
			    kdc_tcp_listen = 127.0.0.1:$port
			[realms]
			    $realm = {
			        database_name = $dir/principal
			        key_stash_file = $dir/stash
			        acl_file = $dir/kadm5.acl
			        max_life = 10h
			        max_renewable_life = 0
			        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
			    }
			[logging]
			    kdc = FILE:$dir/kdc.log
		EOF
		cat >"$dir/krb5.conf" <<-EOF
			[libdefaults]
			    default_realm = $realm
			    dns_lookup_kdc = false
			    dns_lookup_realm = false
			    dns_canonicalize_hostname = false
			    rdns = false
			    udp_preference_limit = 1
			    default_ccache_name = FILE:$dir/ccache
			[realms]
			    $realm = {
			        kdc = 127.0.0.1:$port
			    }
			[domain_realm]
			    localhost = $realm
			    127.0.0.1 = $realm
		EOF
		: >"$dir/kadm5.acl"
		kdb5_util -r "$realm" -P "throwaway-master-key" create -s >/dev/null
		local p
		for p in app solace/localhost solace/127.0.0.1 other/localhost; do
			kadmin.local -r "$realm" -q "addprinc -randkey $p" >/dev/null 2>&1
		done
		kadmin.local -r "$realm" -q "ktadd -k $dir/app.keytab app" >/dev/null
		kadmin.local -r "$realm" -q "ktadd -k $dir/solace.keytab solace/localhost solace/127.0.0.1" >/dev/null
		kadmin.local -r "$realm" -q "ktadd -k $dir/other.keytab other/localhost" >/dev/null
		chmod 0644 "$dir"/*.keytab
		krb5kdc -r "$realm" -P "$dir/kdc.pid"
		local ok=0
		for _i in $(seq 50); do
			if kinit -k -t "$dir/app.keytab" -c "FILE:$dir/probe.ccache" app >/dev/null 2>&1; then
				ok=1
				break
			fi
			sleep 0.1
		done
		if [ "$ok" = 0 ]; then
			echo "krb5: the KDC does not issue tickets; its log:" >&2
			tail -n 40 "$dir/kdc.log" >&2 || true
			return 1
		fi
		rm -f "$dir/probe.ccache"
		echo "krb5: KDC for $realm up on 127.0.0.1:$port (pid $(cat "$dir/kdc.pid"), dir $dir)"
	fi

	local pid
	pid="$(cat "$dir/kdc.pid")"
	if declare -F on_exit >/dev/null; then
		on_exit "kill $pid 2>/dev/null; for _i in \$(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done"
	else
		echo "krb5: left running; stop it with: kill $pid"
	fi
}

_krb5_main
unset -f _krb5_main
