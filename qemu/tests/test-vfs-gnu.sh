#!/bin/sh
# twigfs under GNU userland ($GNU, /opt/gnu/bin), which trusts readdir's
# d_type, nanosecond times and st_blocks where busybox looks at little:
# rm -rf, cp -a and tar round trips compared with diff -r and a metadata
# listing, find -type, du, stat -c, ls; fallocate(2); and what twigfs does
# not support yet, with the errno a caller gets today (README's list).
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"
cd "$MNT" || exit 1
if [ ! -x "$GNU/cp" ] || ! have_helper; then
	fail tools "no GNU userland in $GNU or no twig-helper"
	finish
fi
export LC_ALL=C TZ=UTC

# meta DIR: one line per entry below DIR with everything cp -a and tar
# keep (a directory's size is left out: it is the filesystem's own count).
meta() {
	(cd "$1" && {
		"$GNU/find" . -mindepth 1 ! -type d \
			-printf '%p %y %m %U:%G %n %s %T@ %l\n'
		"$GNU/find" . -mindepth 1 -type d -printf '%p %y %m %U:%G %n - %T@\n'
		"$GNU/find" . -type b -exec "$GNU/stat" -c '%n rdev %t:%T' {} +
		"$GNU/find" . -type c -exec "$GNU/stat" -c '%n rdev %t:%T' {} +
	} | "$GNU/sort")
}

# same_tree NAME A B: diff -r finds no difference and the listings match.
# diff -r --no-dereference reports two FIFOs, and here two device nodes,
# as "is a fifo while file ... is a fifo": the listing compares those.
same_tree() {
	if ! "$GNU/diff" -r --no-dereference -x fifo -x chr -x blk "$2" "$3" \
		>/tmp/diff.out 2>&1; then
		fail "$1-diff" "$(head -c 300 /tmp/diff.out | tr '\n' ' ')"
	else
		pass "$1-diff"
	fi
	meta "$2" >/tmp/meta.a
	meta "$3" >/tmp/meta.b
	if [ ! -s /tmp/meta.a ]; then
		fail "$1-meta" "no listing of $2"
	elif "$GNU/diff" /tmp/meta.a /tmp/meta.b >/tmp/diff.out; then
		pass "$1-meta"
	else
		fail "$1-meta" "$(head -c 300 /tmp/diff.out | tr '\n' ' ')"
	fi
}

# ---- a tree of every kind of file ----
mkdir -p src/sub/subsub src/private src/sizes
head -c 100 /dev/urandom >src/small			# inline extent
head -c 3000 /dev/urandom >src/sub/mid
head -c 300000 /dev/urandom >src/sub/subsub/big
: >src/empty
dd if=/dev/urandom of=src/sparse bs=4096 seek=1000 count=2 2>/dev/null
echo linked >src/h1
ln src/h1 src/sub/h2
ln -s small src/l-file
ln -s sub src/l-dir
ln -s /nowhere src/l-dangling
ln -s "$(printf 't%.0s' $(seq 2000))" src/sub/l-long
mkfifo src/fifo
mknod src/chr c 1 3
mknod src/blk b 7 9
chmod 0700 src/private
chmod 4755 src/small
chmod 0600 src/sub/mid
chown 1234:5678 src/sub/mid src/private
head -c 1000 /dev/zero >src/sizes/a
head -c 5000 /dev/zero >src/sizes/bb
head -c 123456 /dev/zero >src/sizes/ccc
"$GNU/touch" -d '2001-02-03 04:05:06.123456789' src/small src/sub
"$GNU/touch" -h -d '2002-03-04 05:06:07.5' src/l-file
sync

# ---- find -type: counts by readdir's d_type ----
eq find-type-d 5 "$("$GNU/find" src -type d | wc -l)"
eq find-type-f 10 "$("$GNU/find" src -type f | wc -l)"
eq find-type-l 4 "$("$GNU/find" src -type l | wc -l)"
eq find-type-p 1 "$("$GNU/find" src -type p | wc -l)"
eq find-type-cb 2 "$("$GNU/find" src -type c -o -type b | wc -l)"
eq find-links2 "src/h1 src/sub/h2" "$("$GNU/find" src -links 2 -type f | "$GNU/sort" | tr '\n' ' ' | sed 's/ $//')"

# ---- stat -c ----
eq stat-ns "981173106.123456789 981173106.123456789" \
	"$("$GNU/stat" -c %.9Y src/small src/sub | tr '\n' ' ' | sed 's/ $//')"
eq stat-symlink-ns 1015218367.500000000 "$("$GNU/stat" -c %.9Y src/l-file)"
eq stat-file "regular file|100|1|4755|root|root" \
	"$("$GNU/stat" -c '%F|%s|%h|%a|%U|%G' src/small)"
eq stat-owner "1234:5678 600" "$("$GNU/stat" -c '%u:%g %a' src/sub/mid)"
eq stat-dir "directory|3|755" "$("$GNU/stat" -c '%F|%h|%a' src/sub)"
eq stat-symlink "symbolic link|5|'src/l-file' -> 'small'" \
	"$("$GNU/stat" -c '%F|%s|%N' src/l-file)"
eq stat-fifo fifo "$("$GNU/stat" -c %F src/fifo)"
eq stat-chr "character special file 1 3" "$("$GNU/stat" -c '%F %t %T' src/chr)"
eq stat-blk "block special file 7 9" "$("$GNU/stat" -c '%F %t %T' src/blk)"
eq stat-f-type 54574947 "$("$GNU/stat" -f -c %t .)"

# ---- ls ----
# -p marks directories from d_type alone, without a stat
eq ls-p "blk chr empty fifo h1 l-dangling l-dir l-file private/ sizes/ small sparse sub/" \
	"$("$GNU/ls" -p src | tr '\n' ' ' | sed 's/ $//')"
eq ls-l-hardlink "-rw-r--r-- 2 0 0 7" \
	"$("$GNU/ls" -ln src/h1 | awk '{print $1, $2, $3, $4, $5}')"
eq ls-l-dir "drwx------ 2 1234 5678" \
	"$("$GNU/ls" -lnd src/private | awk '{print $1, $2, $3, $4}')"
eq ls-l-symlink "lrwxrwxrwx src/l-file -> small" \
	"$("$GNU/ls" -l src/l-file | awk '{print $1, $(NF - 2), $(NF - 1), $NF}')"
eq ls-l-chr "crw-r--r-- 1, 3" \
	"$("$GNU/ls" -l src/chr | awk '{print $1, $5, $6}')"
eq ls-full-time "2001-02-03 04:05:06.123456789" \
	"$("$GNU/ls" -l --full-time src/small | awk '{print $6, $7}')"
eq ls-R-count 26 "$("$GNU/ls" -RA src | grep -vc '^$')"

# ---- du ----
# apparent sizes: three files and the directory (2 bytes per name byte)
eq du-apparent $((1000 + 5000 + 123456 + 2 * 6)) \
	"$("$GNU/du" -sb src/sizes | cut -f1)"
# 8 KiB of data at 4000 KiB: the hole holds no blocks
eq du-sparse 8 "$("$GNU/du" -k src/sparse | cut -f1)"
eq du-sparse-apparent $((1002 * 4096)) "$("$GNU/du" -b src/sparse | cut -f1)"
# a hard link is counted once
eq du-hardlink 7 "$("$GNU/du" -bc src/h1 src/sub/h2 | "$GNU/tail" -n 1 | cut -f1)"

# ---- cp -a: twigfs to twigfs, and a round trip through tmpfs ----
check cp-a "$GNU/cp" -a src copy
same_tree cp-a src copy
rm -rf /tmp/rt
check cp-a-to-tmpfs "$GNU/cp" -a src /tmp/rt
same_tree cp-a-to-tmpfs src /tmp/rt
check cp-a-back "$GNU/cp" -a /tmp/rt back
same_tree cp-a-back src back
rm -rf /tmp/rt
# st_blocks counts only written-back data (README)
sync
eq cp-a-sparse 8 "$("$GNU/du" -k back/sparse | cut -f1)"

# ---- tar: create from twigfs, extract onto twigfs ----
# the pax format keeps nanosecond times; the default one whole seconds
check tar-create "$GNU/tar" --format=posix -C src -cf /tmp/src.tar .
mkdir untar
check tar-extract "$GNU/tar" -C untar -xf /tmp/src.tar
same_tree tar src untar
check tar-compare "$GNU/tar" -C untar -df /tmp/src.tar
check tar-sparse "$GNU/tar" -C src -S -cf /tmp/sparse.tar sparse
mkdir untar-sparse
check tar-sparse-extract "$GNU/tar" -C untar-sparse -xf /tmp/sparse.tar
check tar-sparse-same "$GNU/cmp" src/sparse untar-sparse/sparse
rm -f /tmp/src.tar /tmp/sparse.tar

# ---- everything again from disk ----
remount_twig
cd "$MNT" || exit 1
same_tree remount-cp-a src copy
same_tree remount-tar src untar
eq remount-stat-ns 981173106.123456789 "$("$GNU/stat" -c %.9Y src/small)"

# ---- rm -rf of a deep and wide tree: it recurses by d_type ----
mkdir doomed
d=doomed
i=0
while [ $i -lt 40 ]; do
	d=$d/level$i
	mkdir "$d"
	echo $i >"$d/file"
	ln -s file "$d/link"
	i=$((i + 1))
done
mkdir doomed/wide
i=0
while [ $i -lt 300 ]; do
	mkdir "doomed/wide/d$i"
	: >"doomed/wide/d$i/f"
	i=$((i + 1))
done
eq deep-find-d 342 "$("$GNU/find" doomed -type d | wc -l)"
eq deep-find-f 340 "$("$GNU/find" doomed -type f | wc -l)"
eq deep-find-l 40 "$("$GNU/find" doomed -type l | wc -l)"
check rm-rf-deep "$GNU/rm" -rf doomed
check rm-rf-deep-gone test ! -e doomed
check rm-rf-trees "$GNU/rm" -rf src copy back untar untar-sparse
eq rm-rf-empty-root "" "$("$GNU/ls" -A .)"
eq rm-rf-root-size 0 "$("$GNU/stat" -c %s .)"

# ---- fallocate(2) as GNU tools see it (the details: test-vfs-fallocate) ----
: >fa
for mode in 0 keep-size punch-hole zero-range; do
	check "fallocate-$mode" "$HELPER" fallocate "$mode" fa 0 8192
done
eq fallocate-size 8192 "$("$GNU/stat" -c %s fa)"
eq fallocate-du 8 "$("$GNU/du" -k fa | cut -f1)"
check fallocate-zeros "$GNU/cmp" -n 8192 fa /dev/zero
expect_err fallocate-collapse EOPNOTSUPP "$HELPER" fallocate 0x8 fa 0 4096
rm fa

# ---- O_DIRECT, and what is not supported: the errno each caller gets (README) ----
echo x >ns
# extended attributes and POSIX ACLs: test-vfs-xattr
# O_DIRECT (test-vfs-direct): whole sectors direct, less through the
# page cache
check odirect-write "$GNU/dd" if=/dev/zero of=ns bs=4096 count=2 oflag=direct
eq odirect-read "$(head -c 8192 /dev/zero | md5sum)" \
	"$("$GNU/dd" if=ns bs=4096 iflag=direct 2>/dev/null | md5sum)"
check odirect-misaligned sh -c "printf x | $GNU/dd of=ns bs=512 count=1 oflag=direct conv=notrunc,sync"
eq odirect-misaligned-data "8192 1" "$(stat -c %s ns) $(tr -d '\0' <ns | wc -c)"
# O_TMPFILE (test-vfs-orphan), and linkat() through /proc/self/fd
check tmpfile "$HELPER" tmpfile .
check tmpfile-link "$HELPER" tmpfile-link . tmp-linked 5000
eq tmpfile-link-data "5000 1" "$(stat -c '%s %h' tmp-linked)"
rm -f tmp-linked
# deliberately not supported (README): the errno from the VFS
expect_err no-reflink EOPNOTSUPP "$HELPER" clone ns ns-clone
expect_err no-cp-reflink "not supported" "$GNU/cp" --reflink=always ns ns-cp
check cp-reflink-auto "$GNU/cp" --reflink=auto ns ns-cp
expect_err no-fiemap EOPNOTSUPP "$HELPER" ioctl fiemap ns
expect_err no-fibmap EINVAL "$HELPER" ioctl fibmap ns
expect_err no-inode-flags ENOTTY "$HELPER" ioctl getflags ns
rm -f ns ns-clone ns-cp
finish
