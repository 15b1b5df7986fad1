#!/bin/sh
# The allocation bitmap is not trusted at mount: every tree block and data
# run the tree names is marked in use, so a bitmap with a valid checksum
# that frees a live block (twig-populate -D bitmaproot: the root, whose
# first CoW next-fit would give its own address; bitmaptree: a child of
# the root; unaccounted: a file's data) cannot have it handed out again.
# After files are written, appended to and removed, fsck finds the
# filesystem clean: the commit wrote the repaired bitmap.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"
POP=/twig/twig-populate
[ -x "$POP" ] || POP=$HERE/../../mkfs/twig-populate

cd / || exit 1
umount "$MNT" 2>/dev/null
for d in bitmaproot bitmaptree unaccounted; do
	mkfs.twigfs -q -f "$DEV" && "$POP" -n 300 -d 20 -D "$d" "$DEV" >/dev/null
	if fsck.twigfs -n "$DEV" >/tmp/fsck.out 2>&1; then
		fail "$d-damaged" "fsck finds nothing wrong with the image"
	else
		pass "$d-damaged"
	fi
	dmesg -c >/dev/null
	if ! mount_twig; then
		fail "$d-mount" "mount failed: $(dmesg | tail -n 2 | tr '\n' ' ')"
		continue
	fi
	if dmesg | grep -q 'sectors the tree uses were free; marked in use'; then
		pass "$d-marked"
	else
		fail "$d-marked" "no line in the kernel log: $(dmesg | grep twigfs | tail -n 2 | tr '\n' ' ')"
	fi
	# allocate tree blocks and data, and free some
	mkdir "$MNT/new"
	i=0
	while [ $i -lt 200 ]; do
		echo "$i" >"$MNT/new/f$i"
		i=$((i + 1))
	done
	head -c 1048576 /dev/urandom >"$MNT/new/big"
	find "$MNT" -type f ! -path "$MNT/new/*" >/tmp/files
	while read -r f; do
		echo more >>"$f"
	done </tmp/files
	head -n 50 /tmp/files | while read -r f; do rm -f "$f"; done
	sync
	fsck_twig "$d-fsck-after-writes"
	cd / || exit 1
	umount "$MNT"
done
mkfs.twigfs -q -f "$DEV"
mount_twig
finish
