#!/bin/sh
# Transaction abort and the error state (fs/transaction.c), and the tools
# refusing a mounted device.
#
# For each operation and k = 1, 2, ...: a fresh filesystem with committed
# files, the block caches dropped, then /sys/fs/twigfs/<dev>/fail_after = k
# fails the k-th tree search, tree-block allocation or read, data write or
# commit during the operation.  The operation may succeed or fail.  If the
# filesystem turned read-only: one "aborted" line in the log, every change
# gets EROFS, a remount read-write is refused, reads and statfs work, the
# superblock on disk is still the last commit's and the device (read as a
# power cut would leave it) passes fsck.  Always: umount works, fsck is
# clean, and after a fresh mount the committed files are intact and the
# operation happened completely or not at all (not at all if it failed or
# the filesystem went read-only: nothing after the abort is committed).
# The xattr operations: set a new name, replace a value with a longer one,
# remove one.
# k stops at the first value that fails nothing, or at TWIG_ABORT_K
# (default 24; larger for long runs).
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"
cd / || exit 1

K=${TWIG_ABORT_K:-24}
KNOB=/sys/fs/twigfs/$(basename "$DEV")/fail_after
BIG=1300000

# ---- mkfs and fsck on the mounted device ----

echo keep >"$MNT/keep"
sync
expect_err mkfs-mounted-refused "is mounted" mkfs.twigfs -q -f "$DEV"
expect_err mkfs-mounted-refused-noforce "is mounted" mkfs.twigfs -q "$DEV"
if fsck.twigfs -n "$DEV" >/tmp/fsck.out 2>&1; then
	if grep -q "mounted" /tmp/fsck.out; then
		pass fsck-mounted-warns
	else
		fail fsck-mounted-warns "no warning: $(tr '\n' ' ' </tmp/fsck.out)"
	fi
else
	fail fsck-mounted-warns "fsck -n failed: $(head -n 3 /tmp/fsck.out | tr '\n' ' ')"
fi
eq mkfs-mounted-fs-intact keep "$(cat "$MNT/keep" 2>&1)"
fsck_twig mkfs-mounted-fsck-clean
eq mkfs-mounted-data-after-remount keep "$(cat "$MNT/keep" 2>&1)"

# ---- the fault matrix ----

[ -w "$KNOB" ] || { fail knob "no $KNOB"; finish; }
head -c 200000 /dev/urandom >/tmp/f
head -c $BIG /dev/urandom >/tmp/big
FSUM=$(md5sum </tmp/f)
BIGSUM=$(md5sum </tmp/big)
# d/f after the write operation: 64 KiB of zeroes, then the rest of f
WSUM=$({ head -c 65536 /dev/zero; tail -c +65537 /tmp/f; } | md5sum)
# a truncate to 5000 that failed after zeroing the rest of page 1
TAILSUM=$({ head -c 5000 /tmp/big; head -c 3192 /dev/zero
	tail -c +8193 /tmp/big; } | md5sum)

setup() {
	fresh_twig commit=86400 || return 1
	mkdir "$MNT/d" "$MNT/e" &&
	echo keep >"$MNT/keep" &&
	cp /tmp/f "$MNT/d/f" &&
	cp /tmp/big "$MNT/d/big" &&
	"$HELPER" setxattr "$MNT/d/f" user.k keep 0 >/dev/null &&
	sync
}

do_op() {
	case $1 in
	create) touch "$MNT/d/new" ;;
	mkdir) mkdir "$MNT/d/sub" ;;
	link) ln "$MNT/d/f" "$MNT/d/lnk" ;;
	rename) mv "$MNT/d/f" "$MNT/e/g" ;;
	unlink) rm "$MNT/d/f" ;;
	truncate) truncate -s 5000 "$MNT/d/big" ;;
	write) dd if=/dev/zero of="$MNT/d/f" bs=4096 count=16 \
		conv=notrunc,fsync 2>&1 ;;
	xattr-set) "$HELPER" setxattr "$MNT/d/f" user.new @3000 create ;;
	xattr-replace) "$HELPER" setxattr "$MNT/d/f" user.k @2000 replace ;;
	xattr-remove) "$GNU/setfattr" -x user.k "$MNT/d/f" ;;
	esac
}

# xattr_len NAME: the value's length on d/f, or the errno
xattr_len() { "$HELPER" getxattr "$MNT/d/f" "$1" 0; }

sum() { md5sum <"$1" 2>/dev/null; }

# Prints before, after or broken: what the tree says about the operation.
state() {
	d=$MNT/d
	case $1 in
	create) [ -e "$d/new" ] && echo after || echo before ;;
	mkdir) [ -d "$d/sub" ] && echo after || echo before ;;
	link)
		n=$(stat -c %h "$d/f")
		if [ -e "$d/lnk" ] && [ "$n" = 2 ]; then echo after
		elif [ ! -e "$d/lnk" ] && [ "$n" = 1 ]; then echo before
		else echo broken; fi ;;
	rename)
		if [ ! -e "$d/f" ] && [ "$(sum "$MNT/e/g")" = "$FSUM" ]; then
			echo after
		elif [ ! -e "$MNT/e/g" ] && [ "$(sum "$d/f")" = "$FSUM" ]; then
			echo before
		else echo broken; fi ;;
	unlink)
		if [ ! -e "$d/f" ]; then echo after
		elif [ "$(sum "$d/f")" = "$FSUM" ]; then echo before
		else echo broken; fi ;;
	truncate)
		s=$(stat -c %s "$d/big")
		if [ "$s" = 5000 ] &&
		   [ "$(sum "$d/big")" = "$(head -c 5000 /tmp/big | md5sum)" ]; then
			echo after
		elif [ "$s" = $BIG ] && [ "$(sum "$d/big")" = "$BIGSUM" ]; then
			echo before
		elif [ "$s" = $BIG ] && [ "$(sum "$d/big")" = "$TAILSUM" ]; then
			echo tailzero
		else echo broken; fi ;;
	xattr-set)
		case $(xattr_len user.new) in
		3000) echo after ;; ENODATA) echo before ;; *) echo broken ;;
		esac ;;
	xattr-replace)
		case $(xattr_len user.k) in
		2000) echo after ;; 4) echo before ;; *) echo broken ;;
		esac ;;
	xattr-remove)
		case $(xattr_len user.k) in
		ENODATA) echo after ;; 4) echo before ;; *) echo broken ;;
		esac ;;
	write)
		s=$(sum "$d/f")
		if [ "$s" = "$WSUM" ]; then echo after
		elif [ "$s" = "$FSUM" ]; then echo before
		else echo broken; fi ;;
	esac
}

mnt_mode() {
	awk -v m="$MNT" '$2 == m { split($4, o, ","); print o[1] }' /proc/mounts
}

# The superblock as on the disk, not through any cache.
super_sum() {
	dd if="$DEV" bs=4096 skip=16 count=1 iflag=direct 2>/dev/null | md5sum
}

n_cases=0 n_fired=0 n_aborted=0 n_failed=0
t0=$(date +%s)

# case_check NAME COND...: a failed check names the case.
case_check() {
	_n=$1
	shift
	if ! "$@" >/tmp/case.out 2>&1; then
		fail "$c-$_n" "$* failed: $(head -c 200 /tmp/case.out | tr '\n' ' ')"
		case_ok=0
	fi
}

# The checks of a read-only (aborted) filesystem; the fs is still mounted.
check_aborted() {
	n=$(dmesg | grep -c 'aborted (error')
	case_check one-abort-line [ "$n" = 1 ]
	if touch "$MNT/after" >/tmp/t.out 2>&1 ||
	   ! grep -q "Read-only file system" /tmp/t.out; then
		fail "$c-touch-erofs" "$(tr '\n' ' ' </tmp/t.out)"
		case_ok=0
	fi
	if (echo x >>"$MNT/keep") 2>/dev/null || mkdir "$MNT/newdir" 2>/dev/null; then
		fail "$c-change-erofs" "a change succeeded after the abort"
		case_ok=0
	fi
	dmesg -c >/dev/null
	if mount -o remount,rw "$MNT" 2>/dev/null; then
		fail "$c-remount-rw-refused" "remount rw succeeded"
		case_ok=0
	fi
	case_check remount-rw-logged \
		sh -c "dmesg | grep -q 'read-write after an error is not allowed'"
	case_check reads-work [ "$(cat "$MNT/keep")" = keep ]
	# names as the tree in memory has them (a half-done change may show
	# a name without its inode): readdir, not a stat of each name
	case " $(echo "$MNT"/d/*) " in
	*" $MNT/d/big "*) ;;
	*) fail "$c-readdir-works" "$(echo "$MNT"/d/*)"; case_ok=0 ;;
	esac
	case_check statfs-works stat -f "$MNT"
	case_check super-unchanged [ "$(super_sum)" = "$sb0" ]
	# what a power cut now would leave: the device without our caches
	echo 3 >/proc/sys/vm/drop_caches
	case_check powercut-fsck-clean fsck.twigfs -n "$DEV"
}

run_case() {
	op=$1
	k=$2
	c=$op-$k
	case_ok=1
	n_cases=$((n_cases + 1))
	if ! setup; then
		fail "$c-setup" "cannot make the test filesystem"
		return 1
	fi
	sb0=$(super_sum)
	echo 3 >/proc/sys/vm/drop_caches
	dmesg -c >/dev/null
	echo "$k" >"$KNOB"
	if do_op "$op" >/tmp/op.out 2>&1; then ok=1; else ok=0; fi
	echo 0 >"$KNOB"
	fired=$(dmesg | grep -c 'fail_after: failing')
	[ "$fired" = 0 ] || n_fired=$((n_fired + 1))
	[ "$ok" = 1 ] || n_failed=$((n_failed + 1))
	mode=$(mnt_mode)
	if [ "$mode" = ro ]; then
		n_aborted=$((n_aborted + 1))
		# unlink may succeed and the eviction that follows abort
		if [ "$ok" = 1 ] && [ "$op" != unlink ]; then
			fail "$c-op-status" "succeeded, then read-only"
			case_ok=0
		fi
		check_aborted
	else
		case_check rw-no-abort-line \
			sh -c "! dmesg | grep -q 'aborted (error'"
		case_check rw-touch touch "$MNT/after"
		case_check rw-sync sync
	fi
	cd / || return 1
	if ! umount "$MNT"; then
		fail "$c-umount" "umount failed"
		return 1
	fi
	case_check fsck-clean fsck.twigfs -n "$DEV"
	if ! mount_twig; then
		fail "$c-mount" "mount failed"
		return 1
	fi
	case_check committed-keep [ "$(cat "$MNT/keep")" = keep ]
	st=$(state "$op")
	if [ "$mode" = ro ] || [ "$ok" = 0 ]; then want=before; else want=after; fi
	# A failed truncate may have zeroed the partial page past the new
	# size; or its items are done and setattr's own inode update (a
	# handle of its own, after them) failed.
	if [ "$op" = truncate ] && [ "$mode" = rw ] && [ "$ok" = 0 ]; then
		[ "$st" = tailzero ] && st=before
		[ "$st" = after ] && want=after
	fi
	if [ "$st" != "$want" ]; then
		fail "$c-atomic" "op ok=$ok mode=$mode: expected $want, found $st ($(head -c 150 /tmp/op.out | tr '\n' ' '))"
		case_ok=0
	fi
	echo "case $c: status $ok, fs $mode, found $st, $fired failure(s) injected"
	[ "$case_ok" = 1 ] && pass "$c"
	[ "$fired" != 0 ]
}

for op in create mkdir link rename unlink truncate write xattr-set \
	xattr-replace xattr-remove; do
	k=1
	while [ "$k" -le "$K" ]; do
		run_case "$op" "$k" || break
		k=$((k + 1))
	done
done
echo "abort matrix: $n_cases cases, $n_fired with an injected failure, $n_failed operations failed, $n_aborted aborted, $(($(date +%s) - t0)) s"
if [ "$n_aborted" -gt 0 ]; then
	pass matrix-saw-aborts
else
	fail matrix-saw-aborts "no case aborted"
fi
if [ "$n_failed" -gt "$n_aborted" ]; then
	pass matrix-saw-clean-failures
else
	fail matrix-saw-clean-failures "no operation failed without an abort"
fi
finish
