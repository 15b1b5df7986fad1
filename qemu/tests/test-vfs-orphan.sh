#!/bin/sh
# Orphan items: an inode whose last name goes while it is still open is
# recorded in the tree (so a crash cannot leak it), stays readable, and is
# deleted with its orphan item on the last close; a mount finishes the
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
used=$(used_kib)
if [ "$used" -lt $((base + 1024)) ]; then
	pass last-close-frees
else
	fail last-close-frees "used ${used} KiB, ${base} KiB before the 4 MiB file"
fi

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
