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
