#!/bin/sh
# A truncate that fails part way.  A file of NEXT extents (130:
# three handles of at most 64 extents; TRUNC_EXTENTS= for more) is cut to
# 5000 bytes while fail_after k fails the k-th search, tree-block
# allocation or read from the truncate on, for every third k (TRUNC_STEP=1
# for every one; 3 keeps make test's share to a minute and still lands in
# each run of four consecutive points where the bug showed) until the
# truncate no longer reaches it.  Whatever failed, the file is then touched (an
# inode update), synced, unmounted and checked: fsck must find no extent
# past i_size; the file must read as before up to its size but for
# [5000, 8192), which may read as zeros (fs/DESIGN.md, File data); and
# growing it back to its old size must show zeros past that size, never
# the old data.  Before the fix, a failure in the second handle left
# i_size at 5000 for the touch to store over extents past it.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

KNOB=/sys/fs/twigfs/$(basename "$DEV")/fail_after
NEXT=${TRUNC_EXTENTS:-130}
STEP=${TRUNC_STEP:-3}
SIZE=$((2 * NEXT * 4096))
CUT=5000

cd "$MNT" || exit 1
# 4 KiB of data every 8 KiB: one extent each
i=0
while [ $i -lt "$NEXT" ]; do
	dd if=/dev/urandom of=master bs=4096 count=1 seek=$((2 * i)) \
		conv=notrunc 2>/dev/null
	i=$((i + 1))
done
sync
OLD=$(stat -c %s master)

# how many fault points one such truncate passes
"$GNU/cp" --sparse=always master big && sync
echo 1000000 >"$KNOB"
truncate -s $CUT big
calls=$((1000000 - $(cat "$KNOB")))
echo 0 >"$KNOB"
rm -f big
if [ "$calls" -gt 0 ] && [ "$calls" -lt $((NEXT * 10)) ]; then
	pass "fault-points: $calls"
else
	fail fault-points "a truncate passed $calls fault points"
	finish
fi

# same PATH FROM TO: PATH's bytes [FROM, TO) are master's
same() {
	[ "$3" -le "$2" ] || "$GNU/cmp" -s -i "$2" -n $(($3 - $2)) "$1" master
}

k=1
failed=0
later=0
while [ $k -le "$calls" ]; do
	cd "$MNT" || exit 1
	"$GNU/cp" --sparse=always master big && sync
	dmesg -c >/dev/null
	echo $k >"$KNOB"
	st=0
	truncate -s $CUT big 2>/dev/null || st=1
	echo 0 >"$KNOB"
	aborted=0
	dmesg | grep -q 'aborted' && aborted=1
	touch big 2>/dev/null
	sync
	fsck_twig "k$k-fsck"
	cd "$MNT" || exit 1
	size=$(stat -c %s big)
	if [ "$st" = 1 ] && [ "$aborted" = 0 ]; then
		failed=$((failed + 1))
		[ "$size" -gt $CUT ] && [ "$size" -lt "$OLD" ] &&
			later=$((later + 1))
	fi
	if [ "$size" -lt $CUT ] || [ "$size" -gt "$OLD" ]; then
		fail "k$k-size" "size $size after a truncate from $OLD to $CUT"
	fi
	if same big 0 $CUT && same big 8192 "$size"; then
		pass "k$k-data"
	else
		fail "k$k-data" "size $size: bytes other than [$CUT, 8192) changed"
	fi
	truncate -s $SIZE big
	if "$GNU/cmp" -s -i "$size:0" -n $((SIZE - size)) big /dev/zero; then
		pass "k$k-zeros-past-size"
	else
		fail "k$k-zeros-past-size" "size $size: old bytes past it after growing the file"
	fi
	rm -f big
	k=$((k + STEP))
done
echo "# $failed truncates failed without an abort, $later of them after a handle had dropped extents"
# the sweep must reach past the first handle, where the bug was
if [ "$later" -gt 0 ]; then
	pass "failed-in-a-later-handle"
else
	fail "failed-in-a-later-handle" "no failure came after a handle had dropped extents"
fi
rm -f master
finish
