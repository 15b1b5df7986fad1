#!/bin/sh
# Persistence: a tree with known content survives umount/mount and a module
# reload with every byte, name, mode, size, link count and time intact.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"
cd "$MNT" || exit 1

mkdir -p top/a/b top/c
i=0
while [ $i -lt 40 ]; do
	head -c $((i * 997 + 1)) /dev/urandom >"top/a/f$i"
	i=$((i + 1))
done
head -c $((3 * 1024 * 1024 + 17)) /dev/urandom >top/c/large
dd if=/dev/urandom of=top/c/sparse bs=4096 seek=300 count=1 2>/dev/null
echo inline >top/a/b/small
ln top/a/b/small top/c/hard
ln -s ../a/b/small top/c/sym
mkfifo top/c/fifo
mknod top/c/chr c 4 5
chmod 0640 top/a/f3
chown 42:43 top/a/f4
touch -d '1999-12-31 23:59:58' top/a/f5
mkdir top/gone && rmdir top/gone
: >top/empty

# snapshot: name, type, mode, uid, gid, size, links, mtime, content hash
snapshot() {
	(cd "$MNT" && find top | sort | while read -r p; do
		if [ -f "$p" ] && [ ! -L "$p" ]; then
			h=$(md5sum <"$p" | cut -c1-32)
		elif [ -L "$p" ]; then
			h=$(readlink "$p")
		else
			h=-
		fi
		echo "$p $(stat -c '%F %a %u %g %s %h %Y' "$p") $h"
	done)
}
snapshot >/tmp/before
sync

remount_twig || { fail remount "mount failed"; finish; }
snapshot >/tmp/after1
if cmp -s /tmp/before /tmp/after1; then
	pass after-remount
else
	fail after-remount "$(diff /tmp/before /tmp/after1 | head -5 | tr '\n' ' ')"
fi

cd / || exit 1
umount "$MNT"
if fsck.twigfs -n "$DEV" >/tmp/fsck.out 2>&1; then
	pass fsck-between
else
	fail fsck-between "$(head -n 5 /tmp/fsck.out | tr '\n' ' ')"
fi
if rmmod twigfs && insmod "${TWIG_MODULE:-/lib/twigfs/twigfs.ko}"; then
	pass module-reload
else
	fail module-reload "rmmod/insmod failed"
fi
mount_twig || { fail mount-after-reload "mount failed"; finish; }
snapshot >/tmp/after2
if cmp -s /tmp/before /tmp/after2; then
	pass after-module-reload
else
	fail after-module-reload "$(diff /tmp/before /tmp/after2 | head -5 | tr '\n' ' ')"
fi
eq nlink-hard 2 "$(stat -c %h "$MNT/top/c/hard")"
eq sym-follow inline "$(cat "$MNT/top/c/sym")"

# change, sync with fsync only, remount: the change is there
echo changed >"$MNT/top/a/f1"
if [ -x "$HELPER" ]; then
	"$HELPER" fsync "$MNT/top/a/f1" >/dev/null
else
	sync
fi
remount_twig
eq fsync-persist changed "$(cat "$MNT/top/a/f1")"
finish
