#!/bin/sh
# dupscan.sh: repeated code (runs of six or more lines of the same shape) in
# the non-test Go files alone, as issue #27 measures it. Run from anywhere in
# the repository; extra arguments go to duplicates (default: --seconds 60
# --most 100).
set -eu
cd "$(git rev-parse --show-toplevel)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
git ls-files '*.go' | grep -v '_test\.go$' | xargs -I{} cp --parents {} "$dir/"
if [ $# -eq 0 ]; then
	set -- --seconds 60 --most 100
fi
duplicates --repo "$dir" "$@"
