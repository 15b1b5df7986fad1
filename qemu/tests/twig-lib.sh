# shellcheck shell=sh
# Shared by the guest tests (POSIX sh, busybox ash); sourced, not run.
# Every check prints "PASS <name>" or "FAIL <name>: why"; finish() exits
# non-zero if any check failed.
MNT=${TWIG_MNT:-/mnt}
DEV=${TWIG_DEV:-/dev/vda}
OPTS=${TWIG_OPTS:-}
HERE=$(cd "$(dirname "$0")" && pwd)
HELPER=$HERE/twig-helper
[ -x "$HELPER" ] || HELPER=/twig/twig-helper
# GNU coreutils, findutils, diffutils, tar, attr and acl, off the PATH (the
# guest's commands are busybox): call them as "$GNU/cp".
# shellcheck disable=SC2034 # used by the tests that source this
GNU=/opt/gnu/bin
T=$(basename "$0" .sh)
T=${T#test-}
nfail=0

pass() { echo "PASS $T-$1"; }
fail() {
	echo "FAIL $T-$1: $2"
	nfail=$((nfail + 1))
}

# check NAME CMD...: CMD must succeed.
check() {
	_n=$1
	shift
	if "$@" >/tmp/check.out 2>&1; then
		pass "$_n"
	else
		fail "$_n" "$* failed: $(head -c 300 /tmp/check.out | tr '\n' ' ')"
	fi
}

# expect_err NAME TEXT CMD...: CMD must fail with TEXT (an strerror text or
# an errno name from twig-helper) in its output.
expect_err() {
	_n=$1
	_t=$2
	shift 2
	if "$@" >/tmp/check.out 2>&1; then
		fail "$_n" "$* succeeded; expected '$_t'"
	elif grep -qi -- "$_t" /tmp/check.out; then
		pass "$_n"
	else
		fail "$_n" "$* failed without '$_t': $(head -c 300 /tmp/check.out | tr '\n' ' ')"
	fi
}

# eq NAME EXPECTED ACTUAL
eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "expected '$2', got '$3'"
	fi
}

have_helper() { [ -x "$HELPER" ]; }

# within SECS CMD...: CMD's status, or 124 if it still runs after SECS
# seconds (a hang in the kernel: it is left running, a kill would not
# reach it).  Output goes to /tmp/within.out.
within() {
	_s=$1
	shift
	"$@" >/tmp/within.out 2>&1 &
	_p=$!
	while kill -0 "$_p" 2>/dev/null && [ "$_s" -gt 0 ]; do
		sleep 1
		_s=$((_s - 1))
	done
	kill -0 "$_p" 2>/dev/null && return 124
	wait "$_p"
}

mount_twig() {
	mount -t twigfs ${OPTS:+-o "$OPTS"} "$DEV" "$MNT"
}

remount_twig() {
	cd / || return 1
	umount "$MNT" && mount_twig
}

# fsck_twig NAME: unmount, fsck -n, mount again.
fsck_twig() {
	cd / || return 1
	if ! umount "$MNT"; then
		fail "$1" "umount failed"
		return 1
	fi
	if fsck.twigfs -n "$DEV" >/tmp/fsck.out 2>&1; then
		pass "$1"
	else
		fail "$1" "fsck.twigfs: $(head -n 12 /tmp/fsck.out | tr '\n' ' ')"
		# what the module said, for whoever reads the run's output
		dmesg | grep -iE 'twigfs|busy inodes|VFS:' | tail -n 8 |
			sed 's/^/    # dmesg: /'
		# what fsck knows of each unreachable inode's item (mode, nlink)
		for _ino in $(sed -n 's/.*inode \([0-9]*\) unreachable.*/\1/p' /tmp/fsck.out | head -n 2); do
			twigfs-dump "$DEV" 2>/dev/null | grep -A3 "($_ino INODE_ITEM 0)" |
				head -n 4 | sed 's/^/    # dump: /'
		done
	fi
	mount_twig
}

# fresh_twig [mount options]: a new filesystem on $DEV mounted at $MNT.
fresh_twig() {
	cd / || return 1
	umount "$MNT" 2>/dev/null
	mkfs.twigfs -q -f "$DEV" || return 1
	mount -t twigfs ${1:+-o "$1"} "$DEV" "$MNT"
}

# small_twig: a fresh twigfs of $SMALL_SIZE (64M) on a loop device
# ($SMALL_LOOP), mounted at /tmp/smnt, for ENOSPC tests.
small_twig() {
	rm -f /tmp/small.img
	mkfs.twigfs -q -f -b "${SMALL_SIZE:-64M}" /tmp/small.img || return 1
	SMALL_LOOP=$(losetup -f) || return 1
	losetup "$SMALL_LOOP" /tmp/small.img || return 1
	mkdir -p /tmp/smnt
	mount -t twigfs "$SMALL_LOOP" /tmp/smnt
}

# small_twig_done <name>: unmount it, check it with fsck (PASS/FAIL
# <name>), free the loop device and the image.
small_twig_done() {
	umount /tmp/smnt
	if fsck.twigfs -n "$SMALL_LOOP" >/tmp/fsck.out 2>&1; then
		pass "$1"
	else
		fail "$1" "$(head -n 5 /tmp/fsck.out | tr '\n' ' ')"
	fi
	losetup -d "$SMALL_LOOP"
	rm -f /tmp/small.img
}

finish() {
	[ "$nfail" = 0 ]
	exit $?
}
