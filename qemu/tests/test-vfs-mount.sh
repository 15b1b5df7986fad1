#!/bin/sh
# Mount options, refused mounts, sysfs, statfs, show_options.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"
cd / || exit 1
umount "$MNT" 2>/dev/null

# mount_fails NAME ERRTEXT LOGTEXT [mount args...]: the mount must fail with
# ERRTEXT on stderr (busybox prints strerror) and LOGTEXT in the kernel log.
mount_fails() {
	_n=$1
	_e=$2
	_l=$3
	shift 3
	dmesg -c >/dev/null
	if mount -t twigfs "$@" >/tmp/mnt.out 2>&1; then
		fail "$_n" "mount $* succeeded"
		umount "$MNT"
		return
	fi
	if ! grep -qi -- "$_e" /tmp/mnt.out; then
		fail "$_n" "expected '$_e', got: $(tr '\n' ' ' </tmp/mnt.out)"
	elif ! dmesg | grep -qi -- "$_l"; then
		fail "$_n" "no kernel log line with '$_l'"
	else
		pass "$_n"
	fi
}

mount_fails bad-lock "Invalid argument" "unknown lock strategy" -o lock=bogus "$DEV" "$MNT"
mount_fails bad-commit-zero "Invalid argument" "commit" -o commit=0 "$DEV" "$MNT"
mount_fails bad-commit-text "Invalid argument" "commit" -o commit=soon "$DEV" "$MNT"
mount_fails unknown-option "Invalid argument" "Unknown parameter" -o frobnicate "$DEV" "$MNT"
mount_fails bad-spin-text "Invalid argument" "spin" -o spin=lots "$DEV" "$MNT"
# the trylock loop runs with the parents' locks held: at most 1024 rounds
mount_fails bad-spin-range "Invalid argument" "out of range" -o spin=1025 "$DEV" "$MNT"
mount_fails bad-spin-huge "Invalid argument" "out of range" -o spin=1048576 "$DEV" "$MNT"
mount_fails spin-rwsem "Invalid argument" "has no trylock loop" -o lock=rwsem,spin=8 "$DEV" "$MNT"

# A device that is not twigfs, and a twigfs with a damaged superblock.
dd if=/dev/zero of=/tmp/zero.img bs=1M count=32 2>/dev/null
loop=$(losetup -f)
losetup "$loop" /tmp/zero.img
mount_fails not-twigfs "Invalid argument" "not a twigfs" "$loop" "$MNT"
losetup -d "$loop"
mkfs.twigfs -q -f -b 32M /tmp/bad.img
# flip a byte of the label: the checksum no longer matches
printf 'X' | dd of=/tmp/bad.img bs=1 seek=$((65536 + 200)) conv=notrunc 2>/dev/null
losetup "$loop" /tmp/bad.img
mount_fails bad-csum "Structure needs cleaning" "checksum mismatch" "$loop" "$MNT"
losetup -d "$loop"
# Geometry with a valid checksum that the mount refuses: alloc_bytes + 2^63
# (twice and eight times it wrap to the true values), and bits set past
# the last sector in the bitmap's last byte (8191 sectors)
POP=/twig/twig-populate
[ -x "$POP" ] || POP=$HERE/../../mkfs/twig-populate
mkfs.twigfs -q -f -b 32M /tmp/bad.img &&
	"$POP" -n 50 -d 5 -D allocbytes /tmp/bad.img >/dev/null
losetup "$loop" /tmp/bad.img
mount_fails alloc-bytes-wrap "Structure needs cleaning" \
	"bad allocation bitmap location.*bytes 9223372036854" "$loop" "$MNT"
losetup -d "$loop"
rm -f /tmp/bad.img
mkfs.twigfs -q -f -b $((32 * 1024 * 1024 - 4096)) /tmp/bad.img &&
	"$POP" -n 50 -d 5 -D bitmappast /tmp/bad.img >/dev/null
losetup "$loop" /tmp/bad.img
mount_fails bitmap-bits-past-end "Structure needs cleaning" \
	"bits set past the last sector" "$loop" "$MNT"
losetup -d "$loop"
rm -f /tmp/zero.img /tmp/bad.img

# Every strategy mounts, shows itself and keeps statistics; lock=spin512
# is lock=mutex with the 2009 trylock loop (spin=512).
for l in mutex spin512 rwsem; do
	if ! mount -t twigfs -o lock=$l,commit=7 "$DEV" "$MNT"; then
		fail "lock-$l" "mount -o lock=$l failed"
		continue
	fi
	pass "lock-$l"
	shown=$l spin=0
	[ $l = spin512 ] && shown=mutex,spin=512 spin=512
	opts=$(grep " $MNT " /proc/mounts)
	case $opts in
	*lock=$shown,commit=7*) pass "show-options-$l" ;;
	*) fail "show-options-$l" "/proc/mounts: $opts" ;;
	esac
	sys=/sys/fs/twigfs/$(basename "$DEV")
	eq "sysfs-lock-$l" "${shown%%,*}" "$(cat "$sys/lock" 2>&1)"
	eq "sysfs-spin-$l" "$spin" "$(cat "$sys/spin" 2>&1)"
	eq "sysfs-commit-$l" 7 "$(cat "$sys/commit" 2>&1)"
	mkdir "$MNT/d-$l" && touch "$MNT/d-$l/f"
	if [ -s "$sys/lock_stats" ]; then
		pass "sysfs-lock-stats-$l"
	else
		fail "sysfs-lock-stats-$l" "empty or missing $sys/lock_stats"
	fi
	check "sysfs-reset-$l" sh -c "echo 1 >$sys/lock_stats_reset"
	umount "$MNT"
done

mount_twig || exit 1
sys=/sys/fs/twigfs/$(basename "$DEV")
check sysfs-commit-write sh -c "echo 5 >$sys/commit"
eq sysfs-commit-read 5 "$(cat "$sys/commit")"
expect_err sysfs-commit-zero "Invalid argument" sh -c "echo 0 >$sys/commit"
check remount-commit mount -o remount,commit=9 "$MNT"
eq remount-commit-sysfs 9 "$(cat "$sys/commit")"
# lock=: a remount switches the strategy as a write of sysfs "lock" does
check remount-lock-change mount -o remount,lock=rwsem,commit=9 "$MNT"
eq remount-lock-sysfs rwsem "$(cat "$sys/lock")"
expect_err remount-lock-spin "Invalid argument" mount -o remount,lock=rwsem,spin=5 "$MNT"
expect_err remount-rwsem-spin-refused "Invalid argument" sh -c "echo 5 >$sys/spin"
check sysfs-lock-write sh -c "echo mutex >$sys/lock"
eq sysfs-lock-read mutex "$(cat "$sys/lock")"
expect_err sysfs-lock-unknown "Invalid argument" sh -c "echo btree >$sys/lock"
# spin=: a mount option, a remount option and a sysfs value, all one
check sysfs-spin-write sh -c "echo 300 >$sys/spin"
eq sysfs-spin-read 300 "$(cat "$sys/spin")"
check sysfs-spin-max sh -c "echo 1024 >$sys/spin"
expect_err sysfs-spin-range "Invalid argument" sh -c "echo 1025 >$sys/spin"
expect_err sysfs-spin-huge "Invalid argument" sh -c "echo 1048576 >$sys/spin"
check sysfs-spin-back sh -c "echo 300 >$sys/spin"
expect_err sysfs-spin-text "Invalid argument" sh -c "echo many >$sys/spin"
eq sysfs-spin-kept 300 "$(cat "$sys/spin")"
case $(grep " $MNT " /proc/mounts) in
*lock=mutex,spin=300*) pass show-options-spin ;;
*) fail show-options-spin "/proc/mounts: $(grep " $MNT " /proc/mounts)" ;;
esac
# a switch to rwsem sets spin to 0; back to mutex it stays 0
check sysfs-switch-rwsem sh -c "echo rwsem >$sys/lock"
eq sysfs-switch-rwsem-spin 0 "$(cat "$sys/spin")"
check sysfs-switch-mutex sh -c "echo mutex >$sys/lock"
eq sysfs-switch-mutex-spin 0 "$(cat "$sys/spin")"
check sysfs-spin-again sh -c "echo 300 >$sys/spin"
expect_err remount-spin-range "Invalid argument" mount -o remount,spin=1025 "$MNT"
check remount-spin mount -o remount,spin=0 "$MNT"
eq remount-spin-sysfs 0 "$(cat "$sys/spin")"
check remount-spin512 mount -o remount,lock=spin512 "$MNT"
eq remount-spin512-sysfs 512 "$(cat "$sys/spin")"
# an explicit spin= wins over lock=spin512's 512 wherever it stands
check remount-spin-first mount -o remount,spin=3,lock=spin512 "$MNT"
eq remount-spin-first-sysfs 3 "$(cat "$sys/spin")"
check remount-spin-last mount -o remount,lock=spin512,spin=5 "$MNT"
eq remount-spin-last-sysfs 5 "$(cat "$sys/spin")"
check remount-spin-kept mount -o remount,commit=9 "$MNT"
eq remount-spin-kept-sysfs 5 "$(cat "$sys/spin")"
check remount-spin-zero mount -o remount,spin=0 "$MNT"
# ops: completed VFS operations by kind, "total" first and their sum
check ops-reset sh -c "echo 1 >$sys/ops_reset"
eq ops-zero "total 0" "$(head -n 1 "$sys/ops")"
mkdir "$MNT/ops" && echo x >"$MNT/ops/f" && cat "$MNT/ops/f" >/dev/null &&
	ls -l "$MNT/ops" >/dev/null && mv "$MNT/ops/f" "$MNT/ops/g" &&
	rm "$MNT/ops/g" && rmdir "$MNT/ops"
for k in create write read readdir getattr rename remove lookup open; do
	n=$(awk -v k=$k '$1 == k { print $2 }' "$sys/ops")
	check "ops-$k" [ "${n:-0}" -gt 0 ]
done
eq ops-total-sum "$(awk 'NR > 1 { s += $2 } END { print s }' "$sys/ops")" \
	"$(awk '$1 == "total" { print $2 }' "$sys/ops")"
check statfs-df df "$MNT"
umount "$MNT"
if [ -d "$sys" ]; then
	fail sysfs-removed "$sys still exists after umount"
else
	pass sysfs-removed
fi
check mount-ro mount -t twigfs -o ro "$DEV" "$MNT"
expect_err ro-write "Read-only" touch "$MNT/x"
umount "$MNT"

# What a mount allocates goes back at unmount.  Per-CPU memory is seen
# only in whole pages (Percpu in /proc/meminfo), so count many cycles:
# the per-mount operation counters alone are 96 bytes a CPU, and a leak
# of them would grow Percpu by twice the limit below.
percpu_kb() { awk '$1 == "Percpu:" { print $2 }' /proc/meminfo; }
cycles() {
	_i=0
	while [ "$_i" -lt "$1" ]; do
		mount_twig || return 1
		umount "$MNT" || return 1
		_i=$((_i + 1))
	done
}
ncpu=$(grep -c '^processor' /proc/cpuinfo)
leak_cycles=400
if cycles 20; then
	before=$(percpu_kb)
	if cycles $leak_cycles; then
		grown=$(($(percpu_kb) - before))
		limit=$((leak_cycles * 96 * ncpu / 2 / 1024))
		if [ "$grown" -lt "$limit" ]; then
			pass "umount-percpu: ${grown} kB after $leak_cycles mounts (limit $limit)"
		else
			fail umount-percpu "Percpu grew by $grown kB in $leak_cycles mount/umount cycles (limit $limit kB)"
		fi
	else
		fail umount-percpu "a mount/umount cycle failed"
	fi
else
	fail umount-percpu "a mount/umount cycle failed"
fi
mount_twig
finish
