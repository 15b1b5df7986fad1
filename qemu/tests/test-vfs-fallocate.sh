#!/bin/sh
# fallocate(2) (fs/file.c): mode 0 and KEEP_SIZE preallocate (st_blocks
# grows, the range reads as zeros, a write CoWs over it), PUNCH_HOLE zeroes
# and frees, ZERO_RANGE zeroes and extends; inline files; extents left past
# EOF by KEEP_SIZE and dropped by truncate; the errnos of the VFS and of
# twigfs; ENOSPC on a 64 MiB filesystem changes nothing; fio's
# fallocate=native, keep and posix.  Data survives a remount, and fsck -n is
# clean after each phase.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"
if [ ! -x "$GNU/cmp" ] || ! have_helper; then
	fail tools "no GNU userland in $GNU or no twig-helper"
	finish
fi
cd "$MNT" || exit 1

fa() { "$HELPER" fallocate "$@"; }
blocks() { "$GNU/stat" -c %b "$1"; }
size() { "$GNU/stat" -c %s "$1"; }
# zeros NAME FILE OFF LEN: LEN bytes at OFF read as zeros
zeros() {
	if "$GNU/cmp" -i "$3:0" -n "$4" "$2" /dev/zero >/tmp/cmp.out 2>&1; then
		pass "$1"
	else
		fail "$1" "$(head -c 200 /tmp/cmp.out)"
	fi
}
# same NAME A B: the files are equal
same() {
	if "$GNU/cmp" "$2" "$3" >/tmp/cmp.out 2>&1; then
		pass "$1"
	else
		fail "$1" "$(head -c 200 /tmp/cmp.out)"
	fi
}
# holds NAME FILE OFF PATTERN: FILE has PATTERN's bytes at OFF
holds() {
	if "$GNU/cmp" -i "$3:0" -n "$(size "$4")" "$2" "$4" >/tmp/cmp.out 2>&1
	then
		pass "$1"
	else
		fail "$1" "$(head -c 200 /tmp/cmp.out)"
	fi
}
# words FILE: its lines joined by spaces
words() { tr '\n' ' ' <"$1" | sed 's/ $//'; }
# zero_into FILE OFF LEN: what zeroing that range must leave (the model)
zero_into() {
	"$GNU/dd" if=/dev/zero of="$1" bs=1 seek="$2" count="$3" \
		conv=notrunc status=none
}
# back_in NAME: cd back into $MNT after fsck_twig or remount_twig
back_in() { cd "$MNT" || { fail "$1" "cannot enter $MNT"; finish; }; }

# ---- mode 0: allocate, extend, read zeros, write over it ----
: >a
check mode0 fa 0 a 0 1048576
eq mode0-size 1048576 "$(size a)"
eq mode0-blocks 2048 "$(blocks a)"
zeros mode0-zeros a 0 1048576
eq mode0-seek-hole 0 "$("$HELPER" seek hole a 0)"
"$GNU/head" -c 8192 /dev/urandom >/tmp/pat
"$GNU/dd" if=/tmp/pat of=a bs=4096 seek=10 conv=notrunc status=none
sync
eq mode0-write-blocks 2048 "$(blocks a)"
eq mode0-write-size 1048576 "$(size a)"
holds mode0-write-data a 40960 /tmp/pat
zeros mode0-before-write a 0 40960
zeros mode0-after-write a 49152 999424
check mode0-mmap "$HELPER" mmap-write a 200000 hello
eq mode0-mmap-data hello "$("$GNU/dd" if=a bs=1 skip=200000 count=5 status=none)"
zeros mode0-mmap-rest a 200005 100000
# existing data stays; unaligned ranges cover whole sectors
check mode0-over-data fa 0 a 40000 20000
holds mode0-keeps-data a 40960 /tmp/pat
eq mode0-over-data-blocks 2048 "$(blocks a)"
: >b
check mode0-unaligned fa 0 b 100 5000
eq mode0-unaligned-size 5100 "$(size b)"
eq mode0-unaligned-blocks 16 "$(blocks b)"
# a smaller range than the size leaves the size
check mode0-inside fa 0 a 0 4096
eq mode0-inside-size 1048576 "$(size a)"
cp a /tmp/a.copy
fsck_twig mode0-fsck
back_in mode0-mount

# ---- KEEP_SIZE: extents past EOF, inline files, truncate drops them ----
echo hello >k
check keep-inline fa keep-size k 0 65536
eq keep-inline-size 6 "$(size k)"
eq keep-inline-data hello "$(cat k)"
eq keep-inline-blocks 128 "$(blocks k)"
echo world >>k
sync
eq keep-append-data "hello world" "$(words k)"
eq keep-append-blocks 128 "$(blocks k)"
: >e
check keep-empty fa keep-size e 0 1048576
eq keep-empty-size 0 "$(size e)"
eq keep-empty-blocks 2048 "$(blocks e)"
# not "printf x >e": O_TRUNC drops extents past EOF, as truncate does
printf x | "$GNU/dd" of=e conv=notrunc status=none
sync
eq keep-write-data x "$(cat e)"
eq keep-write-blocks 2048 "$(blocks e)"
fsck_twig keep-fsck
back_in keep-mount
eq keep-remount-data "hello world" "$(words k)"
eq keep-remount-blocks 128 "$(blocks k)"
# a truncate to the same size drops what lies past EOF
"$GNU/truncate" -s 12 k
eq keep-truncate-same-blocks 8 "$(blocks k)"
eq keep-truncate-same-data "hello world" "$(words k)"
"$GNU/truncate" -s 0 e
eq keep-truncate-blocks 0 "$(blocks e)"
rm e
fsck_twig keep-truncate-fsck
back_in keep-truncate-mount

# ---- PUNCH_HOLE ----
"$GNU/head" -c 65536 /dev/urandom >/tmp/p.orig
cp /tmp/p.orig p
sync
eq punch-before-blocks 128 "$(blocks p)"
check punch-aligned fa punch-hole p 4096 8192
cp /tmp/p.orig /tmp/p.want
zero_into /tmp/p.want 4096 8192
eq punch-size 65536 "$(size p)"
eq punch-blocks 112 "$(blocks p)"
same punch-aligned-data p /tmp/p.want
check punch-unaligned fa punch-hole p 20000 10000
zero_into /tmp/p.want 20000 10000
same punch-unaligned-data p /tmp/p.want
sync
# [20480, 28672) are whole sectors; the edges are rewritten
eq punch-unaligned-blocks 96 "$(blocks p)"
check punch-in-page fa punch-hole p 50001 7
zero_into /tmp/p.want 50001 7
same punch-in-page-data p /tmp/p.want
check punch-past-eof fa punch-hole p 60000 100000
zero_into /tmp/p.want 60000 5536
eq punch-past-eof-size 65536 "$(size p)"
eq punch-past-eof-blocks 88 "$(blocks p)"
same punch-past-eof-data p /tmp/p.want
# a hole punched into a preallocated range, and past EOF (KEEP_SIZE)
check punch-prealloc fa punch-hole a 524288 65536
eq punch-prealloc-blocks 1920 "$(blocks a)"
zeros punch-prealloc-zeros a 524288 65536
: >q
fa keep-size q 0 262144 >/dev/null
check punch-beyond-eof fa punch-hole q 131072 262144
eq punch-beyond-eof-blocks 256 "$(blocks q)"
# inline files
printf abcdefgh >s
check punch-inline fa punch-hole s 2 3
"$GNU/printf" 'ab\000\000\000fgh' >/tmp/s.want
same punch-inline-data s /tmp/s.want
eq punch-inline-size 8 "$(size s)"
check punch-inline-all fa punch-hole s 0 4096
zeros punch-inline-all-zeros s 0 8
eq punch-inline-all-size 8 "$(size s)"
eq punch-inline-all-blocks 0 "$(blocks s)"
fsck_twig punch-fsck
back_in punch-mount
same punch-remount-data p /tmp/p.want
eq punch-remount-blocks 88 "$(blocks p)"

# ---- ZERO_RANGE ----
"$GNU/head" -c 65536 /dev/urandom >/tmp/z.want
cp /tmp/z.want z
sync
check zero-aligned fa zero-range z 4096 8192
zero_into /tmp/z.want 4096 8192
same zero-aligned-data z /tmp/z.want
eq zero-aligned-blocks 128 "$(blocks z)"
check zero-unaligned fa zero-range z 100 5000
zero_into /tmp/z.want 100 5000
same zero-unaligned-data z /tmp/z.want
check zero-extend fa zero-range z 65536 65536
eq zero-extend-size 131072 "$(size z)"
zero_into /tmp/z.want 65536 65536
same zero-extend-data z /tmp/z.want
sync
eq zero-extend-blocks 256 "$(blocks z)"
# ZERO_RANGE | KEEP_SIZE
check zero-keep fa 0x11 z 131072 8192
eq zero-keep-size 131072 "$(size z)"
eq zero-keep-blocks 272 "$(blocks z)"
printf '0123456789' >zi
check zero-inline fa zero-range zi 3 4
"$GNU/printf" '012\000\000\000\000789' >/tmp/zi.want
same zero-inline-data zi /tmp/zi.want
fsck_twig zero-fsck
back_in zero-mount
same zero-remount-data z /tmp/z.want
same zero-remount-inline zi /tmp/zi.want
same remount-mode0 a /tmp/a.copy

# ---- errors: the VFS's and twigfs's ----
expect_err err-collapse EOPNOTSUPP fa 0x8 a 0 4096
expect_err err-insert EOPNOTSUPP fa 0x20 a 0 4096
expect_err err-unshare EOPNOTSUPP fa 0x40 a 0 4096
expect_err err-punch-no-keep EOPNOTSUPP fa 0x2 a 0 4096
expect_err err-punch-zero EOPNOTSUPP fa 0x13 a 0 4096
expect_err err-len-0 EINVAL fa 0 a 0 0
expect_err err-negative EINVAL fa 0 a -4096 4096
expect_err err-too-big EFBIG fa 0 a 9223372036854771712 8192
mkdir dir
expect_err err-dir EISDIR fa 0 dir 0 4096
mkfifo fifo
expect_err err-fifo ESPIPE fa 0 fifo 0 4096
mknod chr c 1 3
expect_err err-chr ENODEV fa 0 chr 0 4096
eq err-nothing-changed 1048576 "$(size a)"
rm -r dir fifo chr

# ---- ENOSPC on a 64 MiB filesystem: nothing half done ----
if small_twig; then
	: >/tmp/smnt/big
	expect_err enospc-mode0 ENOSPC fa 0 /tmp/smnt/big 0 104857600
	eq enospc-size 0 "$(size /tmp/smnt/big)"
	eq enospc-blocks 0 "$(blocks /tmp/smnt/big)"
	: >/tmp/smnt/f1
	check enospc-fits fa 0 /tmp/smnt/f1 0 31457280
	eq enospc-fits-blocks 61440 "$(blocks /tmp/smnt/f1)"
	: >/tmp/smnt/f2
	expect_err enospc-second ENOSPC fa keep-size /tmp/smnt/f2 0 31457280
	eq enospc-second-blocks 0 "$(blocks /tmp/smnt/f2)"
	expect_err enospc-zero-range ENOSPC fa zero-range /tmp/smnt/f1 0 31457280
	eq enospc-zero-range-blocks 61440 "$(blocks /tmp/smnt/f1)"
	check enospc-smaller fa keep-size /tmp/smnt/f2 0 8388608
	"$GNU/dd" if=/tmp/pat of=/tmp/smnt/f1 bs=4096 seek=100 conv=notrunc \
		status=none
	sync
	holds enospc-write-over /tmp/smnt/f1 409600 /tmp/pat
	rm /tmp/smnt/f1
	sync
	check enospc-after-delete fa 0 /tmp/smnt/big 0 20971520
	small_twig_done enospc-fsck
else
	fail enospc "no 64 MiB twigfs on a loop device"
fi

# ---- fio creates its files with fallocate(2) ----
if command -v fio >/dev/null 2>&1; then
	for how in native keep posix; do
		mkdir "fio-$how"
		if fio --name="fa-$how" --directory="$MNT/fio-$how" --size=8M \
			--nrfiles=2 --bs=64k --rw=write --fallocate="$how" \
			--ioengine=sync --verify=crc32c --do_verify=1 \
			>/tmp/fio.out 2>&1; then
			pass "fio-$how"
		else
			fail "fio-$how" "$(tail -c 300 /tmp/fio.out | tr '\n' ' ')"
		fi
	done
	eq fio-native-blocks 16384 "$("$GNU/find" fio-native -type f \
		-exec "$GNU/stat" -c %b {} + | awk '{ s += $1 } END { print s }')"
else
	fail fio "fio not installed in the guest"
fi
fsck_twig final-fsck
finish
