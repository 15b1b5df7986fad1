#!/bin/sh
# O_DIRECT (fs/direct.c): GNU dd and fio round trips compared with buffered
# reads, coherence with the page cache both ways, writes past EOF, holes,
# misaligned I/O through the page cache, inline files through it too,
# O_DSYNC and fsync, direct, buffered and mapped I/O and truncates on one
# file at once, ENOSPC on a small twigfs, the data after a remount, and no
# bio waited for under a transaction handle; statx(STATX_DIOALIGN) gives
# the alignment, and a write aligned as it says works.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

tdir=/sys/fs/twigfs/$(basename "$DEV")
cs() { awk -v k="$1" '$1 == k { print $2 }' "$tdir/commit_stats"; }

# same NAME FILE1 FILE2: byte for byte
same() {
	if "$GNU/cmp" "$2" "$3" >/tmp/cmp.out 2>&1; then
		pass "$1"
	else
		fail "$1" "$(head -c 300 /tmp/cmp.out | tr '\n' ' ')"
	fi
}

# dwrite FILE OFF LEN SRC [dsync] / dread FILE OFF LEN DST: aligned buffers
dwrite() { "$HELPER" dio-write "$1" "$2" "$3" 0 "$4" ${5:+"$5"}; }
dread() { "$HELPER" dio-read "$1" "$2" "$3" 0 "$4"; }

# piece SRC SKIP LEN: LEN bytes of SRC from SKIP (4 KiB units) to stdout
piece() { "$GNU/dd" if="$1" bs=4096 skip="$2" count="$3" 2>/dev/null; }

fresh_twig commit=86400 || { fail setup "mount failed"; finish; }
have_helper || { fail setup "no twig-helper"; finish; }
cd "$MNT" || exit 1
echo 1 >"$tdir/commit_stats_reset"

head -c 4194304 /dev/urandom >/tmp/src
head -c 1048576 /dev/urandom >/tmp/src2
head -c 1048576 /dev/zero >/tmp/zero

# STATX_DIOALIGN: what a program asks before its first direct write; a
# regular file says 4096 (the sector) for memory and offset, anything else
# has no direct I/O and says nothing
: >dioalign
eq statx-dioalign-file "1 4096 4096" "$("$HELPER" statx-dio dioalign)"
mkdir dioalign-dir
eq statx-dioalign-dir "0 0 0" "$("$HELPER" statx-dio dioalign-dir)"
align=$("$HELPER" statx-dio dioalign | cut -d' ' -f3)
eq statx-dioalign-write "$align" "$(dwrite dioalign "$align" "$align" /tmp/src)"
rm -rf dioalign dioalign-dir

# ---- GNU dd round trips: 1 MiB mappings, smaller ones, larger writes ----
for bs in 4096 65536 1M 4M; do
	check "dd-write-$bs" "$GNU/dd" if=/tmp/src of="dd$bs" bs=$bs oflag=direct
	same "dd-write-$bs-buffered-read" /tmp/src "dd$bs"
	check "dd-read-$bs" "$GNU/dd" if="dd$bs" of=/tmp/back bs=$bs iflag=direct
	same "dd-read-$bs-data" /tmp/src /tmp/back
done
eq dd-size 4194304 "$(stat -c %s dd1M)"
# overwrite in place: CoW to new sectors, the old ones freed
check dd-overwrite "$GNU/dd" if=/tmp/src2 of=dd1M bs=64k seek=16 oflag=direct conv=notrunc
{ piece /tmp/src 0 256; cat /tmp/src2; piece /tmp/src 512 512; } >/tmp/exp
same dd-overwrite-data /tmp/exp dd1M
check dd-overwrite-direct-read "$GNU/dd" if=dd1M of=/tmp/back bs=1M iflag=direct
same dd-overwrite-direct-data /tmp/exp /tmp/back
check fcntl-setfl-odirect "$HELPER" dio-setfl dd1M

# ---- coherence with the page cache ----
# dirty buffered data, then a direct read: the read sees it
head -c 1048576 /dev/urandom >/tmp/dirty
cp /tmp/dirty dirty
eq direct-read-of-dirty 1048576 "$(dread dirty 0 1048576 /tmp/back)"
same direct-read-of-dirty-data /tmp/dirty /tmp/back
# a buffered write over a direct one, then a direct write over that:
# the later write wins, read both ways
cp /tmp/src2 coh
sync
"$GNU/dd" if=/tmp/src bs=4096 count=16 of=coh seek=32 conv=notrunc 2>/dev/null
eq buffered-then-direct 65536 "$(dwrite coh 131072 65536 /tmp/zero)"
{ piece /tmp/src2 0 32; piece /tmp/zero 0 16; piece /tmp/src2 48 208; } >/tmp/exp
same buffered-then-direct-buffered-read /tmp/exp coh
dread coh 0 1048576 /tmp/back >/dev/null
same buffered-then-direct-direct-read /tmp/exp /tmp/back
# a direct write, then a buffered one over it (no sync in between)
eq direct-then-buffered 65536 "$(dwrite coh 262144 65536 /tmp/src)"
"$GNU/dd" if=/tmp/src2 bs=4096 count=8 of=coh seek=64 conv=notrunc 2>/dev/null
{ piece /tmp/src2 0 32; piece /tmp/zero 0 16; piece /tmp/src2 48 16
  piece /tmp/src2 0 8; piece /tmp/src 8 8; piece /tmp/src2 80 176; } >/tmp/exp
same direct-then-buffered-buffered-read /tmp/exp coh
dread coh 0 1048576 /tmp/back >/dev/null
same direct-then-buffered-direct-read /tmp/exp /tmp/back
# pages cached by a read are dropped by a direct write over them
cat coh >/dev/null
eq direct-over-cached 4096 "$(dwrite coh 0 4096 /tmp/zero)"
eq direct-over-cached-seen "$(piece /tmp/zero 0 1 | md5sum)" "$(piece coh 0 1 | md5sum)"

# ---- a fault in the user's buffer: nothing of the write stays ----
cp /tmp/src2 flt
sync
expect_err fault-write EFAULT "$HELPER" dio-write-fault flt 0
same fault-write-unchanged /tmp/src2 flt
# the source is a shared mapping of the file itself: no deadlock
eq self-same-range 8192 "$("$HELPER" dio-write-self flt 0)"
same self-same-range-data /tmp/src2 flt
eq self-copy 8192 "$("$HELPER" dio-write-self flt 65536)"
{ piece /tmp/src2 0 16; piece /tmp/src2 0 2; piece /tmp/src2 18 238; } >/tmp/exp
same self-copy-data /tmp/exp flt

# ---- past EOF ----
head -c 5000 /tmp/src >grow
sync
eq extend 8192 "$(dwrite grow 16384 8192 /tmp/src2)"
eq extend-size 24576 "$(stat -c %s grow)"
{ head -c 5000 /tmp/src; head -c 11384 /dev/zero; head -c 8192 /tmp/src2; } >/tmp/exp
same extend-buffered-read /tmp/exp grow
eq extend-direct-read 24576 "$(dread grow 0 32768 /tmp/back)"
same extend-direct-read-data /tmp/exp /tmp/back
# the same with the old tail still dirty in the page cache
head -c 5000 /tmp/src >grow2
eq extend-dirty-tail 4096 "$(dwrite grow2 8192 4096 /tmp/src2)"
{ head -c 5000 /tmp/src; head -c 3192 /dev/zero; head -c 4096 /tmp/src2; } >/tmp/exp
same extend-dirty-tail-data /tmp/exp grow2
# a new file written directly, at EOF each time
eq new-file 65536 "$(dwrite fresh 0 65536 /tmp/src)"
eq new-file-append 65536 "$(dwrite fresh 65536 65536 /tmp/src2)"
{ piece /tmp/src 0 16; piece /tmp/src2 0 16; } >/tmp/exp
same new-file-data /tmp/exp fresh
# on disk when write(2) returns: buffered data has no blocks until writeback
eq new-file-blocks 256 "$(stat -c %b fresh)"

# ---- holes and EOF ----
"$GNU/truncate" -s 1M sparse
eq hole-read 65536 "$(dread sparse 65536 65536 /tmp/back)"
piece /tmp/zero 0 16 >/tmp/exp
same hole-zeroes /tmp/exp /tmp/back
eq hole-write 4096 "$(dwrite sparse 524288 4096 /tmp/src)"
eq hole-around 1048576 "$(dread sparse 0 1048576 /tmp/back)"
{ piece /tmp/zero 0 128; piece /tmp/src 0 1; piece /tmp/zero 0 127; } >/tmp/exp
same hole-around-data /tmp/exp /tmp/back
eq past-eof 0 "$(dread sparse 1048576 4096 /tmp/back)"
eq past-eof-far 0 "$(dread sparse 8388608 4096 /tmp/back)"
head -c 5000 /tmp/src >short
sync
eq eof-short-read 5000 "$(dread short 0 8192 /tmp/back)"
same eof-short-read-data short /tmp/back
eq eof-short-read-2 904 "$(dread short 4096 8192 /tmp/back)"

# ---- misaligned: through the page cache, on disk when the call returns ----
cp /tmp/src2 al
cp /tmp/src2 /tmp/exp
sync
for c in "512 4096 0" "0 1000 0" "0 4096 512" "4095 4097 0" "8192 512 512"; do
	# shellcheck disable=SC2086
	set -- $c
	eq "misaligned-write-$1-$2-$3" "$2" "$("$HELPER" dio-write al "$1" "$2" "$3" /tmp/src)"
	"$GNU/dd" if=/tmp/src of=/tmp/exp bs="$2" count=1 seek="$1" \
		oflag=seek_bytes conv=notrunc 2>/dev/null
	eq "misaligned-read-$1-$2-$3" "$2" "$("$HELPER" dio-read al "$1" "$2" "$3" /tmp/back)"
	"$GNU/dd" if=/tmp/exp of=/tmp/exp.piece bs="$2" count=1 skip="$1" \
		iflag=skip_bytes 2>/dev/null
	same "misaligned-read-$1-$2-$3-data" /tmp/exp.piece /tmp/back
done
# an aligned direct read sees the disk, not the page cache
eq misaligned-on-disk 1048576 "$(dread al 0 1048576 /tmp/back)"
same misaligned-on-disk-data /tmp/exp /tmp/back
check dd-misaligned "$GNU/dd" if=/tmp/src of=al bs=512 count=3 oflag=direct conv=notrunc
"$GNU/dd" if=/tmp/src of=/tmp/exp bs=512 count=3 conv=notrunc 2>/dev/null
same dd-misaligned-data /tmp/exp al
# fstests asks an O_TMPFILE file, and uses the device's 512 bytes if it
# cannot: twigfs's own 4096 must come back
eq min-dio-alignment 4096 "$("$HELPER" min-dio-align "$MNT" "$DEV")"

# ---- inline files go through the page cache ----
printf 'hello, inline\n' >inl
sync
eq inline-direct-read 14 "$(dread inl 0 4096 /tmp/back)"
same inline-direct-read-data inl /tmp/back
eq inline-direct-write 4096 "$(dwrite inl 4096 4096 /tmp/src)"
{ printf 'hello, inline\n'; head -c 4082 /dev/zero; piece /tmp/src 0 1; } >/tmp/exp
same inline-direct-write-data /tmp/exp inl
eq inline-overwrite 4096 "$(dwrite inl 0 4096 /tmp/src2)"
{ piece /tmp/src2 0 1; piece /tmp/src 0 1; } >/tmp/exp
same inline-overwrite-data /tmp/exp inl
printf 'dirty, small\n' >inl2
eq small-dirty-direct-write 4096 "$(dwrite inl2 8192 4096 /tmp/src)"
{ printf 'dirty, small\n'; head -c 8179 /dev/zero; piece /tmp/src 0 1; } >/tmp/exp
same small-dirty-direct-write-data /tmp/exp inl2

# ---- O_DIRECT on other file types: the VFS decides ----
mkdir d
expect_err direct-open-dir EINVAL "$HELPER" dio-read d 0 4096 0 /tmp/back

# ---- O_DSYNC and fsync after direct writes ----
f0=$(cs fsyncs)
eq dsync-write 65536 "$(dwrite dsync 0 65536 /tmp/src dsync)"
eq dsync-fsyncs $((f0 + 1)) "$(cs fsyncs)"
# the items the direct write swapped in are uncommitted: fsync logs them
# (or commits)
l0=$(($(cs log_syncs) + $(cs log_fallbacks)))
eq fsync-after-direct 4096 "$(dwrite dsync 65536 4096 /tmp/src2)"
check fsync "$HELPER" fsync dsync
eq fsync-after-direct-logged $((l0 + 1)) $(($(cs log_syncs) + $(cs log_fallbacks)))

# ---- fio: direct=1, sync and psync, crc32c verified ----
# fio_job NAME ENGINE RW BS [fio options]: the job, on $MNT/fio-NAME;
# fio_check runs it as check fio-NAME
fio_job() {
	_n=$1 _e=$2 _rw=$3 _bs=$4
	shift 4
	fio --name="$_n" --filename="$MNT/fio-$_n" --size=8M --direct=1 \
		--ioengine="$_e" --rw="$_rw" --bs="$_bs" --randseed=7 \
		--verify=crc32c --verify_fatal=1 "$@" >/tmp/fio.out 2>&1
}
fio_check() {
	_t=fio-$1
	[ -n "$TAG" ] && _t=$_t-$TAG
	if fio_job "$@"; then
		pass "$_t"
	else
		fail "$_t" "$(grep -i "err\|bad\|fail\|mismatch" /tmp/fio.out | head -n 5 | tr '\n' ' ')"
	fi
}
TAG=
if command -v fio >/dev/null 2>&1; then
	fio_check sync-rand sync randwrite 16k
	fio_check psync-rand psync randwrite 4k
	fio_check psync-seq psync write 1M
	fio_check sync-overwrite sync randwrite 64k --overwrite=1
else
	fail fio "fio not installed in the guest"
fi

# ---- direct, buffered and mapped I/O and truncates on one file ----
# fio jobs of each kind on one file at once (no verify: they race), then
# 64 KiB direct writes racing truncates to mid-page sizes: both end, and
# fsck (below) finds the tree and the bitmap consistent.
within 300 fio --filename="$MNT/mixed" --size=4M --bs=4k --rw=randwrite \
	--randseed=11 --number_ios=256 \
	--name=direct --direct=1 --ioengine=psync \
	--name=buffered --direct=0 --ioengine=psync \
	--name=mapped --ioengine=mmap
eq mixed-fio 0 "$?"
within 300 "$HELPER" dio-truncate-race race 7 300
eq dio-truncate-race "0" "$?"
eq dio-truncate-race-counts "300 300" "$(cat /tmp/within.out)"
# async (io_submit) direct reads in flight while the file is truncated,
# committed, and its sectors written by another file: the truncate waits
# for them, so each read returns the old data whole
within 300 "$HELPER" aio-read-truncate aioa aiob 20
eq aio-read-truncate "0" "$?"
eq aio-read-truncate-counts "20 320" "$(cat /tmp/within.out)"
rm -f mixed race aioa aiob

# ---- no handle waited for a bio ----
eq no-io-under-handle 0 "$(cs handle_io_wait_ns)"

# ---- the data after a remount (dropping every cache) ----
for f in dd4096 dd1M coh grow fresh sparse inl dirty; do
	cp "$f" "/tmp/keep-$f"
done
if remount_twig; then
	cd "$MNT" || exit 1
	for f in dd4096 dd1M coh grow fresh sparse inl dirty; do
		same "remount-$f" "/tmp/keep-$f" "$f"
		s=$(stat -c %s "$f")
		eq "remount-$f-direct" "$s" "$(dread "$f" 0 $(((s + 4095) / 4096 * 4096)) /tmp/back)"
		same "remount-$f-direct-data" "/tmp/keep-$f" /tmp/back
	done
	rm -f /tmp/keep-*
	# fio reads back what it wrote before the remount
	if command -v fio >/dev/null 2>&1; then
		TAG=remount
		fio_check sync-rand sync randwrite 16k --verify_only=1
		fio_check psync-rand psync randwrite 4k --verify_only=1
		fio_check psync-seq psync write 1M --verify_only=1
	fi
else
	fail remount "umount or mount failed"
fi

fsck_twig fsck

# ---- ENOSPC on a small twigfs: nothing leaks, space comes back ----
small=/tmp/small.img
rm -f "$small"
if mkfs.twigfs -q -f -b 64M "$small"; then
	loop=$(losetup -f)
	losetup "$loop" "$small"
	mkdir -p /tmp/smnt
	mount -t twigfs "$loop" /tmp/smnt
	"$GNU/dd" if=/dev/zero of=/tmp/smnt/fill bs=4M count=50 oflag=direct >/tmp/dd.out 2>&1
	if grep -q "No space left" /tmp/dd.out; then
		pass enospc
	else
		fail enospc "dd: $(tr '\n' ' ' </tmp/dd.out)"
	fi
	s=$(stat -c %s /tmp/smnt/fill)
	ok=$((s > 0 && s % 4194304 == 0))
	eq enospc-whole-writes 1 "$ok"
	rm -f /tmp/smnt/fill
	sync
	if "$GNU/dd" if=/dev/zero of=/tmp/smnt/again bs=1M count=20 oflag=direct 2>/tmp/dd2.out; then
		pass enospc-usable-after-delete
	else
		fail enospc-usable-after-delete "$(tr '\n' ' ' </tmp/dd2.out)"
	fi
	umount /tmp/smnt
	if fsck.twigfs -n "$loop" >/tmp/fsck.out 2>&1; then
		pass enospc-fsck
	else
		fail enospc-fsck "$(head -n 5 /tmp/fsck.out | tr '\n' ' ')"
	fi
	losetup -d "$loop"
	rm -f "$small"
else
	fail enospc "mkfs.twigfs -b 64M failed"
fi
rm -f /tmp/src /tmp/src2 /tmp/zero /tmp/exp /tmp/back /tmp/dirty
finish
