#!/bin/sh
# dupscan.sh: repeated code (runs of six or more lines of the same shape) in
# the non-test Go files alone, as issue #27 measures it. Run from anywhere in
# the repository; extra arguments go to duplicates (default: --seconds 60
# --most 100).
#
# duplicates passes over import lines, but only those that start with
# "import": the lines inside a grouped import ( ... ) block are bare strings
# to it, so two files that use the same six packages counted as a repeat.
# The copies scanned here blank those lines (keeping line numbers), so that
# imports are passed over in both forms. DUPSCAN_KEEP_IMPORTS=1 scans the
# files as they are.
set -eu
cd "$(git rev-parse --show-toplevel)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
git ls-files '*.go' | grep -v '_test\.go$' | xargs -I{} cp --parents {} "$dir/"
if [ "${DUPSCAN_KEEP_IMPORTS:-0}" != 1 ]; then
	find "$dir" -name '*.go' -exec sed -i '/^import ($/,/^)$/{/^import ($/!{/^)$/!s/.*//}}' {} +
fi
if [ $# -eq 0 ]; then
	set -- --seconds 60 --most 100
fi
duplicates --repo "$dir" "$@"
