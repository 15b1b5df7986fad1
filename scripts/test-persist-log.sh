#!/bin/bash
# Crash consistency of the fsync log (fs/tree-log.c) across boots, with a
# fixed seed (SEED, default 4242) choosing sizes and offsets:
#   boot A (commit=86400, so only fsync and the fallbacks commit): files
#     are written and synced, one is renamed and fsync'd (a fallback
#     commit) and logged after that, then files are rewritten, extended,
#     truncated and fsync'd (three in four; the others are written only),
#     new files are created and fsync'd (their names go in the log), an
#     old and a new file get xattrs and an ACL and are fsync'd, two
#     files get preallocated extents (fallocate: past EOF, written over,
#     punched) and are fsync'd, and the machine is reset right after the
#     last fsync returns;
#   host: fsck is clean and reports the log; twigfs-dump shows it (both
#     also under ASan/UBSan); a copy with one byte of the newest log block
#     flipped fails fsck;
#   boot B: the replay's commit fails before its superblock (the
#     replay_crash parameter: what a power cut there leaves); host: fsck is
#     still clean and the superblock names the same log;
#   boot C: the mount replays; every fsync'd byte, name and xattr is there,
#     and the preallocated extents (sizes and st_blocks) of two files;
#   host: fsck is clean and the log is gone.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export QUIET=1 TIMEOUT=${TIMEOUT:-600}
seed=${SEED:-4242}
img=$work/disk.img
truncate -s 1G "$img"
"$top/mkfs/mkfs.twigfs" -q "$img"

cat >"$work/write.sh" <<GUEST
seed=$seed
GUEST
cat >>"$work/write.sh" <<'GUEST'
set -e
H=/twig/twig-helper
cd /mnt
mkdir -p keep/d
# N lines "size offset len": initial size, then a rewrite at offset
awk -v s="$seed" 'BEGIN { srand(s); for (i = 0; i < 24; i++)
	printf "%d %d %d\n", int(rand() * 300000) + 1, int(rand() * 40) * 4096 + int(rand() * 100), int(rand() * 90000) + 1 }' >/tmp/plan
i=0
while read -r size off len; do
	head -c "$size" /dev/urandom >keep/d/f$i
	i=$((i + 1))
done </tmp/plan
echo small >keep/d/inline
: >keep/d/prealloc-keep
: >keep/d/prealloc-grow
sync
: >/results/sums
# a name change: fsync commits (a fallback), and the renamed file logs after
mv keep/d/f22 keep/d/renamed
$H fsync keep/d/renamed >/dev/null
echo after-rename >>keep/d/renamed
$H fsync keep/d/renamed >/dev/null
md5sum keep/d/renamed >>/results/sums
# unlink and create under the same name: a commit too
rm keep/d/f21
echo reborn >keep/d/f21
$H fsync keep/d/f21 >/dev/null
i=0
while read -r size off len; do
	[ -e keep/d/f$i ] || { i=$((i + 1)); continue; }
	head -c "$len" /dev/urandom | dd of=keep/d/f$i bs=1 seek="$off" conv=notrunc 2>/dev/null
	case $((i % 4)) in
	0) $H fsync keep/d/f$i >/dev/null; md5sum keep/d/f$i >>/results/sums
	   # a new name, logged with the file
	   head -c $((len + i)) /dev/urandom >keep/d/n$i
	   $H fsync keep/d/n$i >/dev/null; md5sum keep/d/n$i >>/results/sums ;;
	1) $H fdatasync keep/d/f$i >/dev/null; md5sum keep/d/f$i >>/results/sums ;;
	2) ;;	# written, never fsync'd: may be lost
	3) truncate -s $((off / 2)) keep/d/f$i
	   $H fsync keep/d/f$i >/dev/null; md5sum keep/d/f$i >>/results/sums ;;
	esac
	i=$((i + 1))
done </tmp/plan
# inline grows into a regular extent
head -c 20000 /dev/urandom >>keep/d/inline
$H fsync keep/d/inline >/dev/null
md5sum keep/d/inline >>/results/sums
# xattrs and an ACL set in the log's transaction are logged with the file
G=/opt/gnu/bin
$G/setfattr -n user.old -v kept-$seed keep/d/f1
$G/setfacl -m u:1234:r keep/d/f1
$H fsync keep/d/f1 >/dev/null
echo new-with-xattr >keep/d/x-new
$G/setfattr -n user.new -v born-$seed keep/d/x-new
$H fsync keep/d/x-new >/dev/null
$G/getfattr -d -m - --absolute-names keep/d/f1 keep/d/x-new >/results/xattrs
# preallocated extents (fallocate) are logged and replayed with the file:
# past EOF (KEEP_SIZE), written over in part, and cut by a punched hole
$H fallocate keep-size keep/d/prealloc-keep 0 262144 >/dev/null
printf over-prealloc | dd of=keep/d/prealloc-keep bs=1 seek=5000 conv=notrunc 2>/dev/null
$H fsync keep/d/prealloc-keep >/dev/null
$H fallocate 0 keep/d/prealloc-grow 0 1048576 >/dev/null
head -c 10000 /dev/urandom | dd of=keep/d/prealloc-grow bs=1 seek=300000 conv=notrunc 2>/dev/null
$H fallocate punch-hole keep/d/prealloc-grow 600000 65536 >/dev/null
$H fsync keep/d/prealloc-grow >/dev/null
md5sum keep/d/prealloc-keep keep/d/prealloc-grow >>/results/sums
$G/stat -c '%n %s %b' keep/d/prealloc-keep keep/d/prealloc-grow >/results/prealloc
# the newest log: one more rewrite of an fsync'd file
head -c 7000 /dev/urandom | dd of=keep/d/f0 bs=1 seek=123 conv=notrunc 2>/dev/null
$H fsync keep/d/f0 >/dev/null
grep -v ' keep/d/f0$' /results/sums >/tmp/s || true
md5sum keep/d/f0 >>/tmp/s
cp /tmp/s /results/sums
awk '{ print $1 " " $2 }' /sys/fs/twigfs/vda/commit_stats >/results/stats
find keep | sort >/results/names
echo b >/proc/sysrq-trigger
GUEST

cat >"$work/crash-replay.sh" <<'GUEST'
echo 1 >/sys/module/twigfs/parameters/replay_crash
if mount -t twigfs /dev/vda /mnt; then echo "mounted despite replay_crash"; exit 1; fi
dmesg | grep -q 'aborted' || { echo "no abort logged"; exit 1; }
exit 0
GUEST

cat >"$work/check.sh" <<'GUEST'
cd /mnt || exit 1
dmesg | grep -q 'replayed [0-9]* inode' || { echo "no replay logged"; exit 1; }
md5sum -c -s /results/sums || { md5sum -c /results/sums | grep -v ': OK'; echo "content differs"; exit 1; }
find keep | sort >/tmp/names
cmp /tmp/names /results/names || { echo "names differ"; exit 1; }
/opt/gnu/bin/getfattr -d -m - --absolute-names keep/d/f1 keep/d/x-new >/tmp/xattrs
grep -q 'user.new="born-' /tmp/xattrs || { echo "no xattr after replay"; exit 1; }
cmp /tmp/xattrs /results/xattrs || { echo "xattrs differ"; diff /tmp/xattrs /results/xattrs; exit 1; }
/opt/gnu/bin/stat -c '%n %s %b' keep/d/prealloc-keep keep/d/prealloc-grow >/tmp/prealloc
cmp /tmp/prealloc /results/prealloc || { echo "preallocated sizes or blocks differ"; diff /tmp/prealloc /results/prealloc; exit 1; }
echo after >keep/after
GUEST

check() {
	if "$@"; then echo "PASS $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
log_root() { "$top/mkfs/twigfs-dump" "$img" | awk '$1 == "log_root" && !n++ { print $2 }'; }
fails=0
rc=0
DISK=$img OUT=$work/a MOUNT_OPTS=commit=86400 "$top/qemu/guest.sh" "$work/write.sh" >"$work/a.log" 2>&1 || rc=$?
name=log-write-then-reset
check test "$rc" = 126 -a -s "$work/a/sums"
name=log-stats-logged
check grep -q '^log_syncs [1-9]' "$work/a/stats"
name=log-stats-fallback
check grep -q '^log_fallbacks [1-9]' "$work/a/stats"
name=log-fsck-before-replay
check "$top/mkfs/fsck.twigfs" -n "$img"
name=log-fsck-reports-log
check grep -q 'fsync log of transaction' <("$top/mkfs/fsck.twigfs" -n "$img")
root=$(log_root)
name=log-dump-shows-log
check grep -q '^fsync log of transaction' <("$top/mkfs/twigfs-dump" "$img")
# the log paths of fsck and dump under ASan/UBSan, on a real log
make -s -C "$top/mkfs" build-asan/fsck.twigfs build-asan/twigfs-dump
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
name=log-fsck-asan
check "$top/mkfs/build-asan/fsck.twigfs" -n -v "$img"
name=log-dump-asan
dump_quiet() { "$top/mkfs/build-asan/twigfs-dump" "$img" >/dev/null; }
check dump_quiet
cp "$img" "$work/bad.img"
printf '\xff' | dd of="$work/bad.img" bs=1 seek=$((root + 100)) conv=notrunc 2>/dev/null
name=log-fsck-finds-damaged-log
check test "$("$top/mkfs/build-asan/fsck.twigfs" -n "$work/bad.img" >/dev/null 2>&1; echo $?)" = 4
rm -f "$work/bad.img"

rc=0
DISK=$img OUT=$work/b MOUNT=0 "$top/qemu/guest.sh" "$work/crash-replay.sh" >"$work/b.log" 2>&1 || rc=$?
name=log-replay-crash
check test "$rc" = 0
name=log-fsck-after-replay-crash
check "$top/mkfs/fsck.twigfs" -n "$img"
name=log-still-there-after-replay-crash
check test "$(log_root)" = "$root" -a "$root" != 0

mkdir -p "$work/c"
cp "$work/a/sums" "$work/a/names" "$work/a/xattrs" "$work/a/prealloc" "$work/c/" 2>/dev/null || true
name=log-fsynced-data-and-names-survive
check env DISK="$img" OUT="$work/c" "$top/qemu/guest.sh" "$work/check.sh"
name=log-fsck-after-replay
check "$top/mkfs/fsck.twigfs" -n "$img"
name=log-gone-after-replay
check test "$(log_root)" = 0
if ((fails)); then
	tail -n 30 "$work/a.log" "$work/b.log" "$work/c/console.log" 2>/dev/null | sed 's/^/    /'
fi
((fails == 0))
