#!/bin/bash
# The debug layer of `make test`: the concurrency test under all five lock
# configurations, the spin settings and the lock strategy switched under
# dbench, then the orphan test, on the lockdep + KASAN kernel.  Any
# lockdep or KASAN report fails the boot (run.sh), and with it this layer.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
export QUIET=1 MOUNT=0 FLAVOUR=debug TIMEOUT=${TIMEOUT:-2400}
export DISK_SIZE=2G
job=$(mktemp)
trap 'rm -f "$job"' EXIT
cat >"$job" <<'GUEST'
mkfs.twigfs -q -f /dev/vda || exit 1
ROUNDS=${ROUNDS:-40} sh /twig/lock-matrix.sh /twig/test-vfs-concurrency.sh || rc=1
# The spin loop and the mutex spin policy switched under dbench.
SWITCH_SECS=30 sh /twig/test-spin-switch.sh || rc=1
# The lock strategy switched mutex <-> rwsem under dbench (each a drain).
umount /mnt 2>/dev/null
SWITCH_SECS=30 sh /twig/test-lock-switch.sh || rc=1
umount /mnt 2>/dev/null
fsck.twigfs -n /dev/vda >/tmp/fsck.out 2>&1 && echo "PASS lock-switch-debug-fsck-clean" ||
	{ echo "FAIL lock-switch-debug-fsck-clean: $(head -n 5 /tmp/fsck.out | tr '\n' ' ')"; rc=1; }
# Orphan deletion at last close, at mount and at remount rw, under lockdep.
umount /mnt 2>/dev/null
mkfs.twigfs -q -f /dev/vda && mount -t twigfs /dev/vda /mnt &&
	sh /twig/test-vfs-orphan.sh || rc=1
exit ${rc:-0}
GUEST
out=${TEST_LOGS:-$(mktemp -d)}/debug-boot	# console.log stays for reading
mkdir -p "$out"
rc=0
OUT=$out "$top/qemu/guest.sh" "$job" || rc=$?
grep -E '^(PASS|FAIL|==) ' "$out/console.log" || true
exit "$rc"
