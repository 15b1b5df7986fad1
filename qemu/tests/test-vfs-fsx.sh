#!/bin/sh
# Random file operations checked against a model (twig-fsx, an fsx in the
# spirit of fstests): buffered, mapped and direct reads and writes,
# truncates, punch-hole, zero-range, fallocate, copy_file_range,
# SEEK_DATA/SEEK_HOLE and fsyncs on one file, with the page cache dropped
# now and then so reads come from the disk.  FSX_JOBS files of up to 1 MiB
# at once, one small file crossing the 2 KiB inline limit back and forth;
# then a remount, and every file must still equal its model.  4 KiB tree
# nodes (FSX_NODESIZE), as the bench uses.  (Writeback keeps extents few:
# seed 1's 1 MiB file ends in 20 extent items, one leaf; the fsx test
# checks the data paths, the B-tree's splits are the KUnit model's.)
#
# make test runs the fixed seeds below; `make fsx` (scripts/test-fsx.sh)
# sets FSX_OPS, FSX_SEED, FSX_JOBS and FSX_NODESIZE for longer runs.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

ops=${FSX_OPS:-4000}
seed=${FSX_SEED:-1}
jobs=${FSX_JOBS:-2}
FSX=$(dirname "$HELPER")/twig-fsx

cd / && umount "$MNT" 2>/dev/null
{ mkfs.twigfs -q -f -n "${FSX_NODESIZE:-4K}" "$DEV" && mount_twig; } ||
	{ fail setup "mkfs or mount failed"; finish; }
grep " $MNT " /proc/mounts | sed 's/^/    # /'
[ -x "$FSX" ] || { fail setup "no twig-fsx"; finish; }
mkdir "$MNT/fsx" || { fail setup "mkdir failed"; finish; }

# start NAME SEED ARGS...: one twig-fsx in the background, its model kept
start() {
	_n=$1
	_s=$2
	shift 2
	"$FSX" -N "$ops" -S "$_s" -m "/tmp/fsx-$_n.model" "$@" "$MNT/fsx/$_n" \
		>"/tmp/fsx-$_n.out" 2>&1 &
	runs="$runs $_n:$!"
	names="$names $_n"
}

names=
runs=
i=0
while [ "$i" -lt "$jobs" ]; do
	start "big$i" $((seed + i))
	i=$((i + 1))
done
start small $((seed + 1000)) -f 4096 -l 3000 -d 200

for r in $runs; do
	n=${r%:*}
	if wait "${r#*:}"; then
		pass "$n-seed-ops"
		tail -n 1 "/tmp/fsx-$n.out" | sed 's/^/    # /'
	else
		fail "$n-seed-ops" "twig-fsx failed"
		sed 's/^/    # /' "/tmp/fsx-$n.out" | head -n 60
	fi
done

# what the models say must be what a fresh mount reads
if remount_twig; then
	pass remount
	for n in $names; do
		[ -f "/tmp/fsx-$n.model" ] || continue
		if "$GNU/cmp" "/tmp/fsx-$n.model" "$MNT/fsx/$n" >/tmp/cmp.out 2>&1; then
			pass "$n-after-remount"
		else
			fail "$n-after-remount" "$(head -c 300 /tmp/cmp.out | tr '\n' ' ')"
		fi
	done
else
	fail remount "umount or mount failed"
fi
finish
