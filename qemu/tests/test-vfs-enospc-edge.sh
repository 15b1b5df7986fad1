#!/bin/sh
# Reservations versus pinned sectors at the edge of ENOSPC: a 64 MiB
# twigfs is filled with data to within 1-2 MiB of what writes may use;
# then 4 writers rewrite 64 KiB chunks of their own 1 MiB file in place
# and grow it by up to 512 KiB, 2 with fsync after every write (each
# fsync logs, and from the first log block every freed sector stays pinned
# until the commit), 2 with an fsync after every 4 writes.  The writes need
# several times the free space, so they only fit while freed sectors come
# back, and the growth runs out of it.  ENOSPC is allowed from write(2) and
# fsync; a chunk whose write and fsync both succeeded must read back
# intact after dropping the caches and after a remount: no silent loss.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

S=/tmp/smnt
M=/tmp/edge-model
WRITERS=4
CHUNKS=16
SPAN=24
ROUNDS=24

if ! have_helper; then
	fail helper "no twig-helper"
	finish
fi
if ! small_twig; then
	fail mkfs "cannot make and mount a 64 MiB twigfs"
	finish
fi
rm -rf "$M"
dmesg -c >/dev/null

# pattern W R K: 64 KiB naming the writer, round and chunk, to /tmp/pat-W
pattern() {
	yes "writer $1 round $2 chunk $3 " | head -c 65536 >"/tmp/pat-$1"
}

sum() { md5sum | cut -c1-32; }

# writer W: ROUNDS rewrites; the model keeps each chunk's md5 once its write
# and an fsync after it succeeded, "unknown" after a failure.
writer() {
	w=$1
	f=$S/f$w
	pending=
	enospc=0
	r=1
	while [ $r -le $ROUNDS ]; do
		k=$(((r * 7 + w * 3) % SPAN))
		pattern "$w" "$r" "$k"
		if [ $((w % 2)) = 1 ]; then
			if dd if="/tmp/pat-$w" of="$f" bs=65536 seek="$k" count=1 \
				conv=notrunc,fsync 2>"/tmp/dd-$w"; then
				sum <"/tmp/pat-$w" >"$M/$w/$k"
			else
				echo unknown >"$M/$w/$k"
				enospc=$((enospc + 1))
			fi
		else
			if dd if="/tmp/pat-$w" of="$f" bs=65536 seek="$k" count=1 \
				conv=notrunc 2>"/tmp/dd-$w"; then
				sum <"/tmp/pat-$w" >"$M/$w/$k.pending"
			else
				echo unknown >"$M/$w/$k"
				rm -f "$M/$w/$k.pending"
				enospc=$((enospc + 1))
			fi
			pending="$pending $k"
			if [ $((r % 4)) = 0 ] || [ $r = $ROUNDS ]; then
				if "$HELPER" fsync "$f" >/dev/null 2>&1; then
					for p in $pending; do
						[ -f "$M/$w/$p.pending" ] &&
							mv "$M/$w/$p.pending" "$M/$w/$p"
					done
				else
					for p in $pending; do
						rm -f "$M/$w/$p.pending"
						echo unknown >"$M/$w/$p"
					done
					enospc=$((enospc + 1))
				fi
				pending=
			fi
		fi
		r=$((r + 1))
	done
	echo $enospc >"$M/$w/failures"
}

# verify WHEN: every known chunk of every file reads back as recorded.
verify() {
	bad=
	known=0
	w=1
	while [ $w -le $WRITERS ]; do
		k=0
		while [ $k -lt $SPAN ]; do
			want=$(cat "$M/$w/$k")
			if [ "$want" != unknown ]; then
				known=$((known + 1))
				got=$(dd if="$S/f$w" bs=65536 skip=$k count=1 2>/dev/null | sum)
				[ "$got" = "$want" ] || bad="$bad f$w:$k"
			fi
			k=$((k + 1))
		done
		w=$((w + 1))
	done
	if [ -z "$bad" ]; then
		pass "intact-$1 ($known chunks)"
	else
		fail "intact-$1" "chunks lost or stale:$bad"
	fi
}

# the writers' files first, then data up to ENOSPC, then 1-2 MiB back
w=1
while [ $w -le $WRITERS ]; do
	mkdir -p "$M/$w"
	: >"$S/f$w"
	k=0
	while [ $k -lt $CHUNKS ]; do
		pattern "$w" 0 "$k"
		dd if="/tmp/pat-$w" of="$S/f$w" bs=65536 seek="$k" count=1 \
			conv=notrunc 2>/dev/null
		sum <"/tmp/pat-$w" >"$M/$w/$k"
		k=$((k + 1))
	done
	while [ $k -lt $SPAN ]; do
		echo unknown >"$M/$w/$k"
		k=$((k + 1))
	done
	w=$((w + 1))
done
sync
i=0
while dd if=/dev/zero of="$S/fill$i" bs=1048576 count=1 2>/dev/null; do
	i=$((i + 1))
done
rm -f "$S/fill$i" "$S/fill$((i - 1))"
sync
echo "edge: $((i - 1)) MiB of filler, $(($(stat -f -c '%a' "$S") * 4)) KiB available"
verify start

w=1
while [ $w -le $WRITERS ]; do
	writer $w &
	w=$((w + 1))
done
wait
failures=0
for w in $(seq 1 $WRITERS); do
	failures=$((failures + $(cat "$M/$w/failures")))
done
echo "edge: $failures write or fsync failures of $((WRITERS * ROUNDS)) writes; dd said: $(cat /tmp/dd-* | grep -v records | sort -u | head -n 2 | tr '\n' ' ')"
if dmesg | grep -iE 'twigfs.*(error|fail|cannot)'; then
	fail kernel-quiet "$(dmesg | grep -m 1 -iE 'twigfs.*(error|fail|cannot)')"
else
	pass kernel-quiet
fi
sync
echo 3 >/proc/sys/vm/drop_caches
verify after-drop-caches
cd / || exit 1
umount "$S"
mount -t twigfs "$SMALL_LOOP" "$S"
verify after-remount
small_twig_done fsck
finish
