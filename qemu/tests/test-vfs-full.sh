#!/bin/sh
# A full filesystem must let rm, truncate and punch give space back (issue
# 27, point 2).  Metadata full: a 16 MiB twigfs filled with empty files of
# 200-byte names until a create gets ENOSPC; then a punch and a truncate of
# a data file, the unlink of a file held open, and rm of half the names
# must succeed, the kernel must delete every unlinked inode (no "cannot
# delete", no orphan item left after a remount), statfs must show the space
# back and creates must work again.  Data full: writes until ENOSPC, then
# truncate (to a size inside a sector) and punch must succeed and free
# space.  fsck clean after each.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

S=/tmp/smnt
NAMELEN=200
SMALL_SIZE=16M

# free_bytes: statfs f_bfree in bytes
free_bytes() {
	echo $(($(stat -f -c '%f' "$S") * $(stat -f -c '%S' "$S")))
}

# no_delete_errors NAME: the kernel logged no failed inode deletion.
no_delete_errors() {
	if dmesg | grep -q 'cannot delete'; then
		fail "$1" "$(dmesg | grep -c 'cannot delete') x '$(dmesg | grep -m 1 'cannot delete' | sed 's/^\[[ 0-9.]*\] //')'"
	else
		pass "$1"
	fi
}

if ! have_helper; then
	fail helper "no twig-helper"
	finish
fi

# ---- metadata full ----
dmesg -c >/dev/null
if ! small_twig; then
	fail meta-mkfs "cannot make and mount a 16 MiB twigfs"
	finish
fi
dd if=/dev/zero bs=65536 count=16 2>/dev/null | tr '\0' 'b' >"$S/big"
echo held >"$S/held"
sync
mkdir "$S/d"
out=$("$HELPER" fill "$S/d" $NAMELEN)
n=${out% *}
eq meta-fill-enospc ENOSPC "${out#* }"
if [ "$n" -gt 1000 ]; then
	pass meta-fill-count
else
	fail meta-fill-count "only $n files before ENOSPC"
fi
sync
free0=$(free_bytes)
# a file held open, unlinked: its space comes back at the close
exec 3<"$S/held"
check meta-unlink-open rm "$S/held"
check meta-punch "$HELPER" fallocate punch-hole "$S/big" 65536 262144
check meta-truncate "$HELPER" truncate "$S/big" 300001
half=$((n / 2))
check meta-rm "$HELPER" unfill "$S/d" $NAMELEN 1 $half
exec 3<&-
sync
no_delete_errors meta-rm-deletes-inodes
free1=$(free_bytes)
echo "full: $n names before ENOSPC; rm of $half freed $((free1 - free0)) bytes"
# each name held at least its INODE_ITEM, INODE_REF and DIR_INDEX: 600 bytes
want=$((half * 300))
if [ $((free1 - free0)) -ge $want ]; then
	pass meta-rm-frees
else
	fail meta-rm-frees "rm of $half names freed $((free1 - free0)) bytes, expected at least $want"
fi
eq meta-big-size 300001 "$(stat -c %s "$S/big")"
eq meta-big-content "$(dd if=/dev/zero bs=65536 count=1 2>/dev/null | tr '\0' 'b' | md5sum | cut -c1-32)" \
	"$(dd if="$S/big" bs=65536 count=1 2>/dev/null | md5sum | cut -c1-32)"
mkdir "$S/d2"
out=$("$HELPER" fill "$S/d2" $NAMELEN)
if [ "${out% *}" -gt $((half / 4)) ]; then
	pass meta-create-again
else
	fail meta-create-again "only '$out' after the rm"
fi
check meta-rm-again "$HELPER" unfill "$S/d2" $NAMELEN 1 "${out% *}"
umount "$S"
orphans=$(twigfs-dump "$SMALL_LOOP" | grep -c 'ORPHAN_ITEM')
eq meta-no-orphans 0 "$orphans"
check meta-remount mount -t twigfs "$SMALL_LOOP" "$S"
no_delete_errors meta-remount-deletes
small_twig_done meta-fsck

# ---- data full ----
dmesg -c >/dev/null
if ! small_twig; then
	fail data-mkfs "cannot make and mount a 16 MiB twigfs"
	finish
fi
dd if=/dev/zero bs=65536 count=32 2>/dev/null | tr '\0' 'a' >"$S/a"
sync
expect_err data-fill "No space left" dd if=/dev/zero of="$S/b" bs=65536
sync
expect_err data-full-write "No space left" dd if=/dev/zero of="$S/c" bs=65536 count=4
free0=$(free_bytes)
check data-truncate "$HELPER" truncate "$S/a" 1000001
check data-punch "$HELPER" fallocate punch-hole "$S/b" 0 1048576
sync
free1=$(free_bytes)
# 1 MiB of a and 1 MiB of b
if [ $((free1 - free0)) -ge 2000000 ]; then
	pass data-frees
else
	fail data-frees "truncate and punch freed $((free1 - free0)) bytes, expected 2 MiB"
fi
check data-write-again dd if=/dev/zero of="$S/c" bs=65536 count=16
eq data-a-content "$(dd if=/dev/zero bs=1000001 count=1 2>/dev/null | tr '\0' 'a' | md5sum | cut -c1-32)" \
	"$(md5sum <"$S/a" | cut -c1-32)"
no_delete_errors data-no-delete-errors
small_twig_done data-fsck
finish
