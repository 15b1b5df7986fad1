#!/bin/sh
# Orphan items: an inode whose last name goes while it is still open is
# recorded in the tree (so a crash cannot leak it), stays readable, and is
# deleted with its orphan item on the last close; an O_TMPFILE file is such
# an inode from the start until linkat() names it; a mount finishes the
# deletions a crash left behind (images written by twig-populate -U).
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"
POP=/twig/twig-populate
[ -x "$POP" ] || POP=$HERE/../../mkfs/twig-populate

# orphans: ORPHAN_ITEMs in the committed tree (the device read afresh)
orphans() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	twigfs-dump "$DEV" | grep -c 'item [0-9]* key ([0-9]* ORPHAN_ITEM'
}
used_kib() { df -k "$MNT" | awk 'NR == 2 { print $3 }'; }
# freed NAME BASE: a 4 MiB file's space is back (used within 1 MiB of BASE)
freed() {
	_used=$(used_kib)
	if [ "$_used" -lt $(($2 + 1024)) ]; then
		pass "$1"
	else
		fail "$1" "used ${_used} KiB, $2 KiB before the 4 MiB file"
	fi
}

cd "$MNT" || exit 1
base=$(used_kib)
head -c 4194304 /dev/urandom >held
sum=$(md5sum <held)
exec 3<held
rm held
eq unlinked-open-recorded 1 "$(orphans)"
eq unlinked-still-readable "$sum" "$(md5sum <&3)"
exec 3<&-
eq last-close-deletes 0 "$(orphans)"
freed last-close-frees "$base"

# a directory removed while it is some process's cwd, a file renamed over
mkdir cwd
(cd cwd && exec sleep 30) &
busy=$!
sleep 1
rmdir cwd
echo old >victim
exec 4<victim
echo new >incoming
mv incoming victim
eq rmdir-and-rename-recorded 2 "$(orphans)"
eq renamed-over-readable old "$(cat <&4)"
kill $busy
wait $busy 2>/dev/null
exec 4<&-
eq both-deleted 0 "$(orphans)"
fsck_twig fsck-after-unlinked-open

# O_TMPFILE: an orphan from the start, deleted at the last close, and
# taken off the list by linkat() through /proc/self/fd
cd "$MNT" || exit 1
base=$(used_kib)
"$HELPER" tmpfile-hold "$MNT" 4194304 20 >/tmp/hold.out 2>&1 &
hold=$!
n=0
while kill -0 $hold 2>/dev/null && [ "$(cat /tmp/hold.out)" != ok ] &&
	[ $n -lt 20 ]; do
	sleep 1
	n=$((n + 1))
done
eq tmpfile-open ok "$(cat /tmp/hold.out)"
eq tmpfile-recorded 1 "$(orphans)"
kill $hold
wait $hold 2>/dev/null
eq tmpfile-close-deletes 0 "$(orphans)"
freed tmpfile-close-frees "$base"
check tmpfile-link "$HELPER" tmpfile-link "$MNT" linked 65536
eq tmpfile-link-orphan-gone 0 "$(orphans)"
expect_err tmpfile-excl ENOENT "$HELPER" tmpfile-excl "$MNT" excl
eq tmpfile-excl-no-orphan 0 "$(orphans)"
fsck_twig fsck-after-tmpfile
cd "$MNT" || exit 1
eq tmpfile-linked-kept "65536 1" "$(stat -c '%s %h' linked)"
eq tmpfile-linked-data "$(head -c 65536 /dev/zero | tr '\0' t | md5sum)" \
	"$(md5sum <linked)"
rm -f linked

# States a crash leaves: the mount deletes the half-deleted inodes.
for state in open headless; do
	cd / || exit 1
	umount "$MNT"
	mkfs.twigfs -q -f "$DEV" && "$POP" -n 50 -d 5 -U "$state" "$DEV" >/dev/null
	eq "crash-$state-has-orphan" 1 "$(orphans)"
	dmesg -c >/dev/null
	if mount_twig; then
		pass "crash-$state-mount"
	else
		fail "crash-$state-mount" "mount failed"
		continue
	fi
	if dmesg | grep -q 'deleted 1 orphan inode'; then
		pass "crash-$state-cleanup-logged"
	else
		fail "crash-$state-cleanup-logged" "$(dmesg | tail -n 3 | tr '\n' ' ')"
	fi
	eq "crash-$state-orphan-gone" 0 "$(orphans)"
	fsck_twig "crash-$state-fsck"
done

# A read-only mount leaves the orphan alone; going read-write deletes it.
cd / || exit 1
umount "$MNT"
mkfs.twigfs -q -f "$DEV" && "$POP" -n 50 -d 5 -U open "$DEV" >/dev/null
if mount -t twigfs -o ro "$DEV" "$MNT"; then
	eq ro-mount-keeps-orphan 1 "$(orphans)"
	mount -o remount,rw "$MNT"
	eq remount-rw-deletes-orphan 0 "$(orphans)"
else
	fail ro-mount "mount -o ro failed"
fi
fsck_twig fsck-after-remount
finish
