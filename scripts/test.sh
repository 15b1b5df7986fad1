#!/bin/bash
# `make test`: every test layer, then one line "N passed, N failed".
#
# Layers: the userspace tools' tests (ASan/UBSan), the report generator's
# tests, the switchback analysis's, the crash-points oracle's, twig-fsx on
# the host's own filesystem (ASan/UBSan), the harness's own tests (a
# failing job, an oops, a WARNING and a hang must each fail a run), the
# guest suite (KUnit and qemu/tests/*.sh, one boot; again on
# linux-source-6.12 when the run is on 6.1), crash consistency across
# boots, the damaged-image corpus (every crafted class and a few fixed
# mutation seeds), and the concurrency test under the five lock
# configurations on the lockdep + KASAN kernel.  Each layer reports
# PASS/FAIL lines; a layer that dies without reporting counts as one
# failure.  KERNEL=6.12 runs every layer on 6.12.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
logs=${TWIG_CACHE:-$HOME/.cache/twigfs}/runs/test-$(date +%Y%m%d-%H%M%S)
mkdir -p "$logs"
export TEST_LOGS=$logs
passed=0
failed=0

# count <log>: add the log's PASS and FAIL lines to the totals.
count() {
	local p f
	p=$(grep -c '^PASS ' "$1" || true)
	f=$(grep -c '^FAIL ' "$1" || true)
	passed=$((passed + p))
	failed=$((failed + f))
	echo "== $(basename "$1" .log): $p passed, $f failed"
}

layer() {
	local name=$1 log=$logs/$1.log rc=0
	shift
	echo "== $name: $*"
	"$@" >"$log" 2>&1 || rc=$?
	grep -E '^(PASS|FAIL) ' "$log" || true
	if ((rc != 0)) && ! grep -q '^FAIL ' "$log"; then
		echo "FAIL $name: exited with status $rc (log: $log)" | tee -a "$log"
		tail -n 20 "$log" | sed 's/^/    /'
	fi
	count "$log"
}

start=$SECONDS
layer tools make -C "$top/mkfs" test
layer report /usr/bin/python3 "$top/workloads/tests/test_report.py"
layer switchback /usr/bin/python3 "$top/workloads/tests/test_switchback.py"
layer crashpoints-oracle /usr/bin/python3 "$top/scripts/tests/test_crashpoints.py"
layer fsx-host "$top/scripts/test-fsx.sh" --host
layer harness "$top/scripts/test-harness.sh"
layer guest "$top/scripts/test-guest.sh"
# The second kernel generation's guest layer (default flavour), unless the
# whole run is already on another kernel.
if [[ ${KERNEL:-6.1} == 6.1 && -z ${KERNEL_SRC:-} ]]; then
	layer guest-6.12 env KERNEL=6.12 "$top/scripts/test-guest.sh"
fi
layer persist "$top/scripts/test-persist.sh"
layer crafted env -u CLASSES -u FUZZ "$top/scripts/test-crafted.sh"
layer debug "$top/scripts/test-debug.sh"
echo "logs in $logs; took $((SECONDS - start)) s"
echo "$passed passed, $failed failed"
((failed == 0))
