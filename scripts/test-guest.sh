#!/bin/bash
# The guest layer of `make test`: one boot runs qemu/tests/test-*.sh and the
# KUnit suites (qemu/guest/run-tests.sh); its PASS/FAIL lines are the result.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
export QUIET=1 MOUNT=0 TIMEOUT=${TIMEOUT:-2400}
OUT=$(mktemp -d) "$top/qemu/guest.sh" "$top/qemu/guest/run-tests.sh" 2>&1 |
	sed -n 's/^\(PASS\|FAIL\|==\) /&/p; /^run.sh: /p'
exit "${PIPESTATUS[0]}"
