#!/bin/bash
# The guest layer of `make test`: one boot runs qemu/tests/test-*.sh and the
# KUnit suites (qemu/guest/run-tests.sh); its PASS/FAIL lines are the result.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
export QUIET=1 MOUNT=0 TIMEOUT=${TIMEOUT:-2400}
out=${TEST_LOGS:-$(mktemp -d)}/guest-boot	# console.log stays for reading
mkdir -p "$out"
rc=0
OUT=$out "$top/qemu/guest.sh" "$top/qemu/guest/run-tests.sh" || rc=$?
grep -E '^(PASS|FAIL|==) |^ *# ' "$out/console.log" || true
exit "$rc"
