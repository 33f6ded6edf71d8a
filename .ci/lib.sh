# shellcheck shell=bash
# Shared by the .ci/setup.d scripts (each sources it, so each still runs by
# hand on its own).

# apt_install PKG...: installs Debian packages quietly without letting their
# postinst scripts start services (there is no init system on CI machines; a
# policy-rc.d that exits 101 says no). A policy-rc.d that was already there is
# left as it was.
apt_install() {
	local had_policy=0
	[ -e /usr/sbin/policy-rc.d ] && had_policy=1
	if [ "$had_policy" = 0 ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >/dev/null
	[ "$had_policy" = 0 ] && rm -f /usr/sbin/policy-rc.d
	return 0
}

# stop_at_exit NAME PID: under .ci/run (which defines on_exit), stops the
# server PID when the run ends, waiting up to 5 s for it to go; run by hand,
# says how to stop it.
stop_at_exit() {
	local name="$1" pid="$2"
	if declare -F on_exit >/dev/null; then
		on_exit "kill $pid 2>/dev/null; for _i in \$(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done"
	else
		echo "$name: left running; stop it with: kill $pid"
	fi
}
