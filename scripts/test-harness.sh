#!/bin/bash
# The runner's own tests: a job's status comes back, result files come back,
# and a failing job, an oops, a WARNING and a hang each fail the run.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export QUIET=1 MOUNT=0 EXTRA_MODULES=$top/qemu/harness/oops DISK_SIZE=256M

# expect <name> <wanted status> <job text> [VAR=value ...]
expect() {
	local name=$1 want=$2 body=$3 rc=0
	shift 3
	printf '%s\n' "$body" >"$work/$name.sh"
	env "$@" OUT="$work/$name" "$top/qemu/guest.sh" "$work/$name.sh" \
		>"$work/$name.out" 2>&1 || rc=$?
	if ((rc == want)); then
		echo "PASS harness-$name"
	else
		echo "FAIL harness-$name: status $rc, wanted $want"
		tail -n 15 "$work/$name.out" | sed 's/^/    /'
		return 1
	fi
}

fails=0
expect ok 0 'echo hello >/results/hello; grep -q twigfs /proc/filesystems' ||
	fails=$((fails + 1))
if [[ $(cat "$work/ok/hello" 2>/dev/null) == hello ]]; then
	echo "PASS harness-results-copied-back"
else
	echo "FAIL harness-results-copied-back: no /results/hello on the host"
	fails=$((fails + 1))
fi
expect job-fails 3 'exit 3' || fails=$((fails + 1))
expect oops 125 'insmod /lib/twigfs/twig_oops.ko mode=oops; exit 0' ||
	fails=$((fails + 1))
expect warning 125 'insmod /lib/twigfs/twig_oops.ko mode=warn; exit 0' ||
	fails=$((fails + 1))
expect hang 124 'sleep 100000' TIMEOUT=45 || fails=$((fails + 1))
((fails == 0))
