#!/bin/sh
# /sys/fs/twigfs/<dev>/commit_stats: every counter is there, reset zeroes
# them, sync and fsync move exactly the ones they must, and buffered
# writeback keeps no handle open across a bio wait (handle_io_wait_ns stays
# 0), while a tree block read under a handle is counted (the instrument
# works), as are the blocks searches read with no tree lock held; a commit
# lets writers into the next transaction before it writes (commit_hold).
# commit=86400 keeps the commit timer out of the exact counts.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

tdir=/sys/fs/twigfs/$(basename "$DEV")
keys="commits commit_ns commit_max_ns fsyncs log_syncs log_fallbacks handles join_wait_ns handle_io_wait_ns commit_blocked_ns unlocked_reads"

cs() { awk -v k="$1" '$1 == k { print $2 }' "$tdir/commit_stats"; }
reset() { echo 1 >"$tdir/commit_stats_reset"; }
show() { echo "$1: $(tr '\n' ' ' <"$tdir/commit_stats")"; }
ok() {
	_n=$1 _w=$2
	shift 2
	if "$@"; then pass "$_n"; else fail "$_n" "$_w"; fi
}

fresh_twig commit=86400 || { fail setup "mount failed"; finish; }

missing=
for k in $keys; do
	v=$(cs "$k")
	case $v in '' | *[!0-9]*) missing="$missing $k=$v" ;; esac
done
eq keys-present "" "$missing"
eq keys-exactly "$(echo "$keys" | wc -w)" "$(wc -l <"$tdir/commit_stats")"

reset
eq reset-zeroes "0 0 0 0 0 0 0 0 0 0 0" "$(awk '{ printf "%s%s", s, $2; s = " " }' "$tdir/commit_stats")"

# Buffered writes only, then sync: multi-page runs, a 3 MiB file, small
# inline files, and an inline file written past its first page (only page
# 1 and 2 are dirty, so writeback converts the inline extent).
cd "$MNT" || exit 1
echo small >grow
sync
reset
head -c 3145728 /dev/urandom >big
i=0
while [ $i -lt 20 ]; do
	head -c $((i * 4099 + 10)) /dev/urandom >"f$i"
	i=$((i + 1))
done
head -c 8192 /dev/urandom | dd of=grow bs=4096 seek=1 conv=notrunc 2>/dev/null
sync
show buffered
eq buffered-no-io-under-handle 0 "$(cs handle_io_wait_ns)"
eq sync-commits-once 1 "$(cs commits)"
ok handles-counted "handles $(cs handles)" [ "$(cs handles)" -gt 20 ]
ok commit-time "commit_ns $(cs commit_ns) max $(cs commit_max_ns)" \
	test "$(cs commit_max_ns)" -gt 0 -a "$(cs commit_max_ns)" -le "$(cs commit_ns)"
ok commit-blocked-time "blocked $(cs commit_blocked_ns) of $(cs commit_ns)" \
	test "$(cs commit_blocked_ns)" -gt 0 -a "$(cs commit_blocked_ns)" -le "$(cs commit_ns)"
eq no-fsyncs 0 "$(cs fsyncs)"
eq no-log-yet "0 0" "$(cs log_syncs) $(cs log_fallbacks)"

# A sync with nothing to commit commits nothing.
c=$(cs commits)
sync
eq clean-sync-no-commit "$c" "$(cs commits)"

# fsync and fdatasync are counted; a dirty file's fsync makes it durable
# by a commit (or, once there is one, the log).
if have_helper; then
	reset
	echo more >>f3
	check fsync "$HELPER" fsync f3
	eq fsync-counted 1 "$(cs fsyncs)"
	eq fsync-commits-or-logs 1 $(($(cs commits) + $(cs log_syncs)))
	check fdatasync "$HELPER" fdatasync f4
	check fsync-clean "$HELPER" fsync f5
	eq fsyncs-counted 3 "$(cs fsyncs)"
	eq fsync-data-no-io-under-handle 0 "$(cs handle_io_wait_ns)"
	show fsync
else
	fail fsync "no twig-helper"
fi

# A commit lets writers into the next transaction before it writes: held
# (commit_hold) after letting joiners in and before writing anything, it
# must not stop a create, a write, an unlink and a mkdir, which would wait
# for it forever if it blocked joiners while writing.  Released, the held
# commit ends the sync; the next sync commits what ran beside it, and a
# remount finds both.
TO=timeout
[ -x "$GNU/timeout" ] && TO=$GNU/timeout
echo kept >held-before
reset
echo 1 >"$tdir/commit_hold"
sync &
syncpid=$!
i=0
while [ "$(cat "$tdir/commit_hold")" != 2 ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
eq commit-held 2 "$(cat "$tdir/commit_hold")"
check writers-during-commit "$TO" 60 sh -c \
	'echo during >held-during && rm f6 && mkdir held-dir && : >held-dir/x'
eq held-commit-not-done 0 "$(cs commits)"
echo 0 >"$tdir/commit_hold"
wait $syncpid
eq held-commit-done 1 "$(cs commits)"
sync
eq next-commit 2 "$(cs commits)"
show held
remount_twig || { fail remount "mount failed"; finish; }
cd "$MNT" || exit 1
eq held-before-durable kept "$(cat held-before)"
eq held-during-durable during "$(cat held-during)"
ok held-unlink-durable "f6 still there" [ ! -e f6 ]
ok held-mkdir-durable "no held-dir/x" [ -e held-dir/x ]
cd / || exit 1
fsck_twig held-fsck
cd "$MNT" || exit 1

# The instrument itself: with the tree blocks out of the cache (the
# mount's walk of the tree reads them all, so the cache is emptied after
# it), unlinking a name from the middle of a big directory reads its
# DIR_INDEX leaf inside the unlink's handle.
mkdir dir
i=0
while [ $i -lt 1500 ]; do
	: >"dir/n$i"
	i=$((i + 1))
done
remount_twig || { fail remount "mount failed"; finish; }
echo 3 >/proc/sys/vm/drop_caches
cd "$MNT" || exit 1
reset
rm dir/n750
show unlink-after-remount
ok tree-read-under-handle-counted "handle_io_wait_ns $(cs handle_io_wait_ns)" \
	[ "$(cs handle_io_wait_ns)" -gt 0 ]
# Searches read a missing child with no tree lock held and start over
# (unlocked_reads); the answers stay right on a cold cache.
remount_twig || { fail remount "mount failed"; finish; }
echo 3 >/proc/sys/vm/drop_caches
cd "$MNT" || exit 1
reset
eq cold-lookups "dir/n0 dir/n1499 dir/n751" "$(ls dir/n0 dir/n1499 dir/n751 | tr '\n' ' ' | sed 's/ $//')"
eq cold-readdir 1499 "$(ls dir | wc -l)"
rm dir/n751
ok cold-unlink "n751 still listed" [ ! -e dir/n751 ]
ok unlocked-reads-counted "unlocked_reads $(cs unlocked_reads)" \
	[ "$(cs unlocked_reads)" -gt 0 ]
show cold
cd / || exit 1
finish
