#!/bin/bash
# Crash consistency across boots: one boot writes and syncs a set of files,
# writes more without syncing, unlinks a file it keeps open, and resets the
# machine; the host's fsck must find the image clean (the open file is an
# orphan item), and the next boot must find every synced byte and delete
# the orphan.  Then scripts/test-persist-log.sh: the same for fsync'd
# data through the fsync log, with a power cut during its replay; then two
# rounds of scripts/test-crash.sh (power cuts at seeded random moments of
# fsync-heavy work, fixed seed; `make crash` runs more), and a small
# scripts/test-crashpoints.sh (every flush of a logged workload; `make
# crashpoints` runs more) with its broken-order check.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export QUIET=1 TIMEOUT=${TIMEOUT:-600}
img=$work/disk.img
truncate -s 1G "$img"
"$top/mkfs/mkfs.twigfs" -q "$img"

cat >"$work/write.sh" <<'GUEST'
set -e
cd /mnt
mkdir -p keep/a/b keep/c
for i in $(seq 1 40); do
	head -c $((i * 997)) /dev/urandom >keep/a/f$i
	echo "small $i" >keep/c/s$i
done
head -c 3000000 /dev/urandom >keep/big
ln keep/c/s1 keep/a/b/hard
ln -s ../c/s2 keep/a/sym
sync
find keep -type f | sort | xargs md5sum >/results/sums
find keep | sort >/results/names
head -c 2000000 /dev/urandom >held
exec 3<held
rm held
sync
mkdir lost
for i in $(seq 1 20); do head -c 5000 /dev/urandom >lost/u$i; done
echo b >/proc/sysrq-trigger
GUEST

cat >"$work/check.sh" <<'GUEST'
cd /mnt || exit 1
md5sum -c -s /results/sums || { echo "content differs"; exit 1; }
find keep | sort >/tmp/names
cmp /tmp/names /results/names || { echo "names differ"; exit 1; }
[ "$(stat -c %h keep/c/s1)" = 2 ] || { echo "link count"; exit 1; }
[ "$(readlink keep/a/sym)" = ../c/s2 ] || { echo "symlink"; exit 1; }
dmesg | grep -q 'deleted 1 orphan inode' || { echo "orphan not deleted"; exit 1; }
rm -rf lost keep/a
echo after >keep/after
GUEST

check() {
	if "$@"; then echo "PASS $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
fails=0
rc=0
DISK=$img OUT=$work/a "$top/qemu/guest.sh" "$work/write.sh" >"$work/a.log" 2>&1 || rc=$?
name=persist-write-then-reset
check test "$rc" = 126 -a -s "$work/a/sums"
name=persist-fsck-after-reset
check "$top/mkfs/fsck.twigfs" -n "$img"
orphans() { "$top/mkfs/twigfs-dump" "$img" | grep -c 'item [0-9]* key ([0-9]* ORPHAN_ITEM' || true; }
name=persist-open-unlinked-is-orphan
check test "$(orphans)" = 1
mkdir -p "$work/b"
cp "$work/a/sums" "$work/a/names" "$work/b/" 2>/dev/null || true
name=persist-synced-data-survives
check env DISK="$img" OUT="$work/b" "$top/qemu/guest.sh" "$work/check.sh"
name=persist-fsck-final
check "$top/mkfs/fsck.twigfs" -n "$img"
name=persist-orphan-deleted
check test "$(orphans)" = 0
if ((fails)); then
	tail -n 20 "$work/a.log" "$work/b/console.log" 2>/dev/null | sed 's/^/    /'
fi
# the fsync log: power cuts after fsync and during replay (fixed seed)
"$top/scripts/test-persist-log.sh" || fails=$((fails + 1))
ROUNDS=2 SEED=1 WRITERS=4 CUT_MAX=20 "$top/scripts/test-crash.sh" || fails=$((fails + 1))
# every flush of a small logged workload, fsck'd, 30 of its states mounted
# and checked (make crashpoints runs more); then the broken order
# (superblocks without flush) must be seen
OPS=8 WRITERS=2 SAMPLE=30 BATCH=30 SEED=1 CASES=1 BREAK=0 "$top/scripts/test-crashpoints.sh" ||
	fails=$((fails + 1))
OPS=3 WRITERS=1 SAMPLE=4 BATCH=4 SEED=1 CASES=0 BREAK=1 "$top/scripts/test-crashpoints.sh" ||
	fails=$((fails + 1))
((fails == 0))
