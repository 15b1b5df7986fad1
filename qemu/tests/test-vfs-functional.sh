#!/bin/sh
# shellcheck disable=SC2010,SC2012,SC2045  # readdir is under test: ls is its reader
# Every VFS operation of twigfs and its error cases, on the mounted $MNT.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"
cd "$MNT" || exit 1

name255=$(printf 'n%.0s' $(seq 255))
name256=${name255}x

# ---- create, lookup, names ----
echo hello >f
eq create-content hello "$(cat f)"
eq create-size 6 "$(stat -c %s f)"
eq create-nlink 1 "$(stat -c %h f)"
check name-255 touch "$name255"
eq name-255-listed 1 "$(ls | grep -c "^$name255\$")"
expect_err name-256 "too long" touch "$name256"
expect_err lookup-missing "No such file" cat nothere
expect_err create-exists "File exists" mkdir f

# ---- name hash collisions: crc32c(~1, name) is 0xf63467db for both ----
echo first >c1371838
echo second >c2000402
eq hash-collision-a first "$(cat c1371838)"
eq hash-collision-b second "$(cat c2000402)"
eq hash-collision-listed 2 "$(ls | grep -c '^c[12][0-9]*$')"
check hash-collision-unlink rm c1371838
eq hash-collision-survivor second "$(cat c2000402)"
expect_err hash-collision-gone "No such file" cat c1371838
echo third >c1371838
check hash-collision-rename-over mv c1371838 c2000402
eq hash-collision-renamed third "$(cat c2000402)"
rm c2000402

# ---- mkdir, rmdir, link counts, directory size ----
root_links=$(stat -c %h .)
mkdir d
eq mkdir-nlink 2 "$(stat -c %h d)"
eq mkdir-parent-nlink $((root_links + 1)) "$(stat -c %h .)"
eq mkdir-size 0 "$(stat -c %s d)"
touch d/abc
eq dir-size-rule 6 "$(stat -c %s d)"
expect_err mkdir-exists "File exists" mkdir d
expect_err rmdir-notempty "not empty" rmdir d
rm d/abc
eq dir-size-after-unlink 0 "$(stat -c %s d)"
check rmdir-empty rmdir d
eq rmdir-parent-nlink "$root_links" "$(stat -c %h .)"
expect_err rmdir-file "Not a directory" rmdir f
mkdir -p a/b/c/d/e
check mkdir-deep test -d a/b/c/d/e
eq mkdir-deep-nlink 3 "$(stat -c %h a/b)"

# ---- mknod: fifo, socket, char and block devices ----
check mkfifo mkfifo p
eq fifo-type "fifo" "$(stat -c %F p)"
check mknod-chr mknod c c 1 3
eq chr-rdev "1 3" "$(stat -c '%t %T' c)"
check mknod-blk mknod b b 7 9
eq blk-type "block special file" "$(stat -c %F b)"
eq blk-rdev "7 9" "$(stat -c '%t %T' b)"
if have_helper; then
	check mksock "$HELPER" mksock s
	eq sock-type "socket" "$(stat -c %F s)"
fi

# ---- symlinks ----
check symlink ln -s f l
eq readlink f "$(readlink l)"
eq symlink-follow hello "$(cat l)"
eq symlink-size 1 "$(stat -c %s l)"
long=$(printf 't%.0s' $(seq 2000))
check symlink-long ln -s "$long" ll
eq readlink-long "$long" "$(readlink ll)"
check symlink-dangling ln -s /nowhere dl
expect_err symlink-dangling-open "No such file" cat dl

# ---- hard links ----
check link ln f f2
eq link-nlink 2 "$(stat -c %h f)"
eq link-same-inode "$(stat -c %i f)" "$(stat -c %i f2)"
check unlink rm f
eq unlink-keeps-data hello "$(cat f2)"
eq unlink-nlink 1 "$(stat -c %h f2)"
expect_err unlink-missing "No such file" rm nothere
expect_err link-dir "not permitted" ln a a2

# ---- rename ----
echo one >r1
echo two >r2
check rename-plain mv r1 r3
eq rename-plain-content one "$(cat r3)"
expect_err rename-plain-old "No such file" cat r1
check rename-over mv r3 r2
eq rename-over-content one "$(cat r2)"
mkdir p1 p2
mkdir p1/sub
echo x >p1/sub/x
check rename-dir-across mv p1/sub p2/sub
eq rename-dir-src-nlink 2 "$(stat -c %h p1)"
eq rename-dir-dst-nlink 3 "$(stat -c %h p2)"
eq rename-dir-content x "$(cat p2/sub/x)"
eq rename-dir-dotdot "$(stat -c %i p2)" "$(stat -c %i p2/sub/..)"
mkdir p1/empty p1/full
touch p1/full/f
if have_helper; then
	check rename-dir-over-empty "$HELPER" rename2 none p2/sub p1/empty
	eq rename-dir-over-empty-nlink 2 "$(stat -c %h p2)"
	eq rename-dir-over-empty-dst-nlink 4 "$(stat -c %h p1)"
	expect_err rename-dir-over-nonempty ENOTEMPTY "$HELPER" rename2 none p1/empty p1/full
	echo a >na
	echo b >nb
	expect_err rename-noreplace-exists EEXIST "$HELPER" rename2 noreplace na nb
	eq rename-noreplace-kept a "$(cat na)"
	check rename-noreplace-new "$HELPER" rename2 noreplace na nc
	eq rename-noreplace-moved a "$(cat nc)"
	check rename-exchange "$HELPER" rename2 exchange nb nc
	eq rename-exchange-a a "$(cat nb)"
	eq rename-exchange-b b "$(cat nc)"
	# a file and a directory in different parents swap places
	p1links=$(stat -c %h p1)
	rootl=$(stat -c %h .)
	check rename-exchange-dir "$HELPER" rename2 exchange nc p1/full
	eq rename-exchange-dir-file b "$(cat p1/full)"
	check rename-exchange-dir-dir test -f nc/f
	eq rename-exchange-src-nlink $((p1links - 1)) "$(stat -c %h p1)"
	eq rename-exchange-dst-nlink $((rootl + 1)) "$(stat -c %h .)"
	expect_err rename-exchange-missing ENOENT "$HELPER" rename2 exchange nb nothere
fi
expect_err rename-missing "No such file" mv nothere x
expect_err rename-into-self "Invalid argument" mv a a/b/inside

# ---- readdir: many entries, stable listing ----
mkdir many
i=0
while [ $i -lt 500 ]; do
	: >"many/file-$i"
	i=$((i + 1))
done
eq readdir-count 500 "$(ls many | wc -l)"
eq readdir-dots 502 "$(ls -a many | wc -l)"
eq readdir-unique 500 "$(ls many | sort -u | wc -l)"
i=0
while [ $i -lt 500 ]; do
	rm "many/file-$i"
	i=$((i + 2))
done
eq readdir-after-unlink 250 "$(ls many | wc -l)"
sz=0
for n in $(ls many); do sz=$((sz + 2 * ${#n})); done
eq readdir-dir-size "$sz" "$(stat -c %s many)"

# ---- attributes ----
touch attr
check chmod chmod 4751 attr
eq chmod-mode 4751 "$(stat -c %a attr)"
check chown chown 1234:5678 attr
eq chown-ids "1234 5678" "$(stat -c '%u %g' attr)"
check touch-date touch -d '2001-02-03 04:05:06' attr
eq mtime "$(date -d '2001-02-03 04:05:06' +%s)" "$(stat -c %Y attr)"
eq chown-clears-suid 751 "$(stat -c %a attr)"
check chmod-sgid chmod 2751 attr

# ---- regular data: inline, growth, truncate ----
head -c 100 /dev/urandom >small
cp small small.ref
eq inline-size 100 "$(stat -c %s small)"
check inline-content cmp small small.ref
head -c 3000 /dev/urandom >>small
cat small >small.ref
check inline-grow cmp small small.ref
check truncate-down truncate -s 50 small
head -c 50 small.ref >small.ref50
check truncate-down-content cmp small small.ref50
check truncate-up truncate -s 10000 small
eq truncate-up-size 10000 "$(stat -c %s small)"
head -c 50 small.ref >small.ref2
head -c 9950 /dev/zero >>small.ref2
check truncate-up-zeroes cmp small small.ref2
head -c 20000 /dev/urandom >mid
check truncate-mid truncate -s 5000 mid
check truncate-mid-grow truncate -s 9000 mid
sync
echo 3 >/proc/sys/vm/drop_caches
eq truncate-mid-tail-zero 0 "$(tail -c 4000 mid | tr -d '\0' | wc -c)"
check truncate-zero truncate -s 0 mid
eq truncate-zero-size 0 "$(stat -c %s mid)"

# A truncate that drops more extent items than one handle takes (64):
# 150 one-sector extents with holes between them, so none merge.
i=0
while [ $i -lt 150 ]; do
	dd if=/dev/urandom of=frag bs=4096 seek=$((2 * i)) count=1 \
		conv=notrunc 2>/dev/null
	i=$((i + 1))
done
sync
head -c 4096 frag >frag.ref
within 120 truncate -s 4096 frag
eq truncate-many-extents "0 4096" "$? $(stat -c %s frag)"
check truncate-many-extents-content cmp frag frag.ref

head -c $((5 * 1024 * 1024 + 123)) /dev/urandom >big
sum_big=$(md5sum <big)
sync
echo 3 >/proc/sys/vm/drop_caches
eq big-read-after-drop "$sum_big" "$(md5sum <big)"
dd if=/dev/urandom of=big bs=4096 seek=10 count=3 conv=notrunc 2>/dev/null
sum_big=$(md5sum <big)
sync
echo 3 >/proc/sys/vm/drop_caches
eq overwrite-cow "$sum_big" "$(md5sum <big)"

# ---- sparse files, SEEK_DATA/SEEK_HOLE, 8 GiB ----
dd if=/dev/urandom of=sparse bs=4096 seek=1000 count=2 2>/dev/null
eq sparse-size $((1002 * 4096)) "$(stat -c %s sparse)"
eq sparse-hole-zero 0 "$(head -c 4096000 sparse | tr -d '\0' | wc -c)"
if have_helper; then
	eq seek-data $((1000 * 4096)) "$("$HELPER" seek data sparse 0)"
	eq seek-hole 0 "$("$HELPER" seek hole sparse 0)"
	eq seek-hole-end $((1002 * 4096)) "$("$HELPER" seek hole sparse 4096000)"
	expect_err seek-data-eof ENXIO "$HELPER" seek data sparse $((1002 * 4096))
	eq seek-data-inline 0 "$("$HELPER" seek data small 0)"
fi
gib8=$((8 * 1024 * 1024 * 1024))
dd if=/dev/urandom of=/tmp/tail.bin bs=4096 count=2 2>/dev/null
check file-8g dd if=/tmp/tail.bin of=huge bs=4096 seek=$((gib8 / 4096 + 5)) conv=notrunc
eq file-8g-size $((gib8 + 7 * 4096)) "$(stat -c %s huge)"
sync
echo 3 >/proc/sys/vm/drop_caches
eq file-8g-tail "$(md5sum </tmp/tail.bin)" \
	"$(dd if=huge bs=4096 skip=$((gib8 / 4096 + 5)) 2>/dev/null | md5sum)"
eq file-8g-hole 0 "$(dd if=huge bs=4096 skip=$((gib8 / 4096 - 3)) count=3 2>/dev/null | tr -d '\0' | wc -c)"

# ---- mmap, fsync, fdatasync ----
head -c 10000 /dev/zero >mm
if have_helper; then
	check mmap-write "$HELPER" mmap-write mm 5000 MAPPED
	eq mmap-read MAPPED "$(dd if=mm bs=1 skip=5000 count=6 2>/dev/null)"
	check fsync "$HELPER" fsync mm
	check fdatasync "$HELPER" fdatasync big
fi

# ---- statfs ----
eq statfs-type 54574947 "$(stat -f -c %t .)"
eq statfs-namelen 255 "$(stat -f -c %l .)"
blocks=$(stat -f -c %b .)
devbytes=$(blockdev --getsize64 "$DEV")
eq statfs-blocks $((devbytes / 4096)) "$blocks"
free=$(stat -f -c %f .)
if [ "$free" -gt 0 ] && [ "$free" -lt "$blocks" ]; then
	pass statfs-free
else
	fail statfs-free "free $free of $blocks"
fi

# ---- read-only remount ----
check remount-ro mount -o remount,ro "$MNT"
expect_err ro-create "Read-only" touch rofile
check remount-rw mount -o remount,rw "$MNT"
check rw-create touch rwfile

# ---- everything again after a remount ----
remount_twig
cd "$MNT" || exit 1
eq remount-link hello "$(cat f2)"
eq remount-symlink-long "$long" "$(readlink ll)"
eq remount-chr "1 3" "$(stat -c '%t %T' c)"
eq remount-mode 2751 "$(stat -c %a attr)"
eq remount-mtime "$(date -d '2001-02-03 04:05:06' +%s)" "$(stat -c %Y attr)"
eq remount-big "$sum_big" "$(md5sum <big)"
check remount-small cmp small small.ref2
eq remount-8g-tail "$(md5sum </tmp/tail.bin)" \
	"$(dd if=huge bs=4096 skip=$((gib8 / 4096 + 5)) 2>/dev/null | md5sum)"
eq remount-readdir 250 "$(ls many | wc -l)"
if have_helper; then
	eq remount-mmap MAPPED "$(dd if=mm bs=1 skip=5000 count=6 2>/dev/null)"
fi

# ---- deleting everything leaves an empty root ----
cd / || exit 1
rm -rf "${MNT:?}"/*
eq empty-root "" "$(ls -A "$MNT")"
eq empty-root-size 0 "$(stat -c %s "$MNT")"
eq empty-root-nlink 2 "$(stat -c %h "$MNT")"
fsck_twig fsck-after-delete
finish
