#!/bin/sh
# Extended attributes and POSIX ACLs on twigfs, through GNU attr and acl
# ($GNU) and twig-helper's raw calls: round trips, the flags, the limits of
# fs/FORMAT.md with the errnos a caller gets, listxattr, removal, colliding
# name hashes, persistence across umount/mount, ACL inheritance and chmod,
# cp -a and tar --xattrs --acls round trips, and that eviction deletes the
# attributes with their inode.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"
if [ ! -x "$GNU/setfattr" ] || ! have_helper; then
	fail tools "no GNU attr in $GNU or no twig-helper"
	finish
fi
export LC_ALL=C TZ=UTC
cd "$MNT" || exit 1

# names NAME FILE: the attribute names of FILE, one line, sorted
names() {
	"$GNU/getfattr" --absolute-names -m - "$1" 2>&1 | grep -v '^#' |
		sed '/^$/d' | sort | tr '\n' ' '
}
val() { "$GNU/getfattr" --absolute-names --only-values -n "$1" "$2" 2>&1; }

# ---- round trips and errnos ----
echo data >f
check set-user "$GNU/setfattr" -n user.a -v hello f
eq get-user hello "$(val user.a f)"
eq get-length 5 "$("$HELPER" getxattr f user.a 0)"
eq get-exact 5 "$("$HELPER" getxattr f user.a 5)"
expect_err get-erange ERANGE "$HELPER" getxattr f user.a 4
expect_err get-missing "No such attribute" "$GNU/getfattr" -n user.none f
expect_err get-missing-errno ENODATA "$HELPER" getxattr f user.none 0
expect_err create-exists EEXIST "$HELPER" setxattr f user.a x create
expect_err replace-missing ENODATA "$HELPER" setxattr f user.b x replace
check replace "$HELPER" setxattr f user.a world replace
eq replaced world "$(val user.a f)"
check create-new "$HELPER" setxattr f user.b bee create
check empty-value "$HELPER" setxattr f user.empty "" 0
eq empty-length 0 "$("$HELPER" getxattr f user.empty 0)"
check set-trusted "$GNU/setfattr" -n trusted.t -v tv f
check set-security "$GNU/setfattr" -n security.s -v sv f
eq get-trusted tv "$(val trusted.t f)"
eq list "security.s trusted.t user.a user.b user.empty " "$(names f)"
# 11 + 10 + 7 + 7 + 11 bytes with the NULs
eq list-length 46 "$("$HELPER" listxattr f 0)"
expect_err list-erange ERANGE "$HELPER" listxattr f 45
eq data-kept data "$(cat f)"

# ---- names no handler knows ----
expect_err prefix-unknown "Operation not supported" "$GNU/setfattr" -n foo.bar -v 1 f
expect_err prefix-unknown-get EOPNOTSUPP "$HELPER" getxattr f foo.bar 0
expect_err prefix-system EOPNOTSUPP "$HELPER" setxattr f system.foo 1 0
expect_err prefix-empty EINVAL "$HELPER" setxattr f user. 1 0

# ---- limits (fs/FORMAT.md) ----
n250=$(head -c 250 /dev/zero | tr '\0' n)
check name-255 "$HELPER" setxattr f "user.$n250" v 0
eq name-255-get v "$(val "user.$n250" f)"
expect_err name-256 ERANGE "$HELPER" setxattr f "user.${n250}n" v 0
check value-max "$HELPER" setxattr f user.big @3740 0
eq value-max-get 3740 "$("$HELPER" getxattr f user.big 0)"
expect_err value-over E2BIG "$HELPER" setxattr f user.big2 @3741 0
expect_err value-over-replace E2BIG "$HELPER" setxattr f user.big @3741 0
eq value-over-kept 3740 "$("$HELPER" getxattr f user.big 0)"
expect_err value-vfs E2BIG "$HELPER" setxattr f user.big2 @70000 0
# 64 KiB of entries (12 + name + value each) per inode: 9 of 3019 bytes
# and 12 of 3020 fit, the 22nd does not
: >g
i=1
while [ $i -le 30 ] && "$HELPER" setxattr g "user.t$i" @3000 0 >/dev/null; do
	i=$((i + 1))
done
eq total-count 22 "$i"
expect_err total-enospc ENOSPC "$HELPER" setxattr g user.t22 @3000 0
check total-shrink "$HELPER" setxattr g user.t21 @10 replace
check total-after-shrink "$HELPER" setxattr g user.t22 @2000 0

# ---- removal ----
check remove "$GNU/setfattr" -x user.b f
expect_err removed ENODATA "$HELPER" getxattr f user.b 0
expect_err remove-missing "No such attribute" "$GNU/setfattr" -x user.b f
eq remove-kept-others world "$(val user.a f)"

# ---- two names with one crc32c hash share an item ----
check collide-1 "$GNU/setfattr" -n user.c1371838 -v one f
check collide-2 "$GNU/setfattr" -n user.c2000402 -v two f
eq collide-get-1 one "$(val user.c1371838 f)"
eq collide-get-2 two "$(val user.c2000402 f)"
check collide-replace "$HELPER" setxattr f user.c1371838 @600 replace
eq collide-replaced 600 "$("$HELPER" getxattr f user.c1371838 0)"
eq collide-other two "$(val user.c2000402 f)"
check collide-remove "$GNU/setfattr" -x user.c1371838 f
eq collide-survivor two "$(val user.c2000402 f)"

# ---- ctime, directories, symlinks ----
c0=$("$GNU/stat" -c %.9Z f)
sleep 1
check ctime-set "$GNU/setfattr" -n user.ct -v 1 f
c1=$("$GNU/stat" -c %.9Z f)
if [ "$c1" != "$c0" ]; then
	pass ctime-moved
else
	fail ctime-moved "ctime $c0 -> $c1"
fi
mkdir d
check dir-set "$GNU/setfattr" -n user.dir -v dv d
eq dir-get dv "$(val user.dir d)"
ln -s f sl
expect_err symlink-user EPERM "$HELPER" setxattr sl user.x 1 0
check symlink-trusted "$HELPER" setxattr sl trusted.x 1 0

# ---- persistence ----
before=$("$GNU/getfattr" --absolute-names -d -m - -R . 2>&1)
check remount remount_twig
cd "$MNT" || exit 1
after=$("$GNU/getfattr" --absolute-names -d -m - -R . 2>&1)
eq persist "$before" "$after"
eq persist-big 3740 "$("$HELPER" getxattr f user.big 0)"
fsck_twig fsck-xattrs
cd "$MNT" || exit 1

# ---- POSIX ACLs ----
umask 022
acl() { "$GNU/getfacl" -cE "$@" 2>&1; }
: >plain
mkdir plaindir
eq umask-file 644 "$("$GNU/stat" -c %a plain)"
eq umask-dir 755 "$("$GNU/stat" -c %a plaindir)"
: >acl1
check setfacl "$GNU/setfacl" -m u:1234:r-x,g:99:rw- acl1
eq getfacl "user::rw- user:1234:r-x group::r-- group:99:rw- mask::rwx other::r-- " \
	"$(acl acl1 | sed '/^$/d' | tr '\n' ' ')"
eq acl-mode 674 "$("$GNU/stat" -c %a acl1)"
# posix_acl_xattr_header + 6 entries of 8 bytes
eq acl-xattr 52 "$("$HELPER" getxattr acl1 system.posix_acl_access 0)"
eq acl-listed "system.posix_acl_access " "$(names acl1)"
check chmod-acl chmod 640 acl1
eq chmod-mask "mask::r--" "$(acl acl1 | grep '^mask')"
eq chmod-other "other::---" "$(acl acl1 | grep '^other')"
eq chmod-named "user:1234:r-x" "$(acl acl1 | grep '^user:1234')"
: >acl2
check acl-equiv "$GNU/setfacl" -m u::rwx acl2
expect_err acl-equiv-no-xattr ENODATA "$HELPER" getxattr acl2 system.posix_acl_access 0
eq acl-equiv-mode 744 "$("$GNU/stat" -c %a acl2)"
mkdir dacl
check setfacl-default "$GNU/setfacl" -d -m u:1234:rwx,g:99:r-x dacl
: >dacl/new
eq inherit-file "user:1234:rwx" "$(acl dacl/new | grep '^user:1234')"
# the default ACL, not the umask, decides: group bits are the mask
eq inherit-mode 664 "$("$GNU/stat" -c %a dacl/new)"
mkdir dacl/sub
eq inherit-dir-default "default:user:1234:rwx" \
	"$(acl dacl/sub | grep '^default:user:1234')"
eq inherit-dir-access "user:1234:rwx" "$(acl dacl/sub | grep '^user:1234')"
mknod dacl/fifo p
eq inherit-fifo "user:1234:rwx" "$(acl dacl/fifo | grep '^user:1234')"
ln -s new dacl/link
eq inherit-symlink-none 0 "$("$HELPER" listxattr dacl/link 0)"
# 4 + 8 x 467 bytes fill a value (463 named users and the 4 others)
big=u:1:r
i=2
while [ $i -le 463 ]; do
	big="$big,u:$i:r"
	i=$((i + 1))
done
check acl-max "$GNU/setfacl" -m "$big" acl2
eq acl-max-size 3740 "$("$HELPER" getxattr acl2 system.posix_acl_access 0)"
expect_err acl-too-big "Argument list too long" "$GNU/setfacl" -m "$big,u:464:r" acl2
check acl-max-undo "$GNU/setfacl" -b acl2
check setfacl-b "$GNU/setfacl" -b acl1
expect_err setfacl-b-gone ENODATA "$HELPER" getxattr acl1 system.posix_acl_access 0
check setfacl-k "$GNU/setfacl" -k dacl/sub
expect_err setfacl-k-gone ENODATA "$HELPER" getxattr dacl/sub system.posix_acl_default 0
check setfacl-again "$GNU/setfacl" -m u:77:rw acl2
acls_before=$("$GNU/getfacl" -R . 2>&1)
check acl-remount remount_twig
cd "$MNT" || exit 1
eq acl-persist "$acls_before" "$("$GNU/getfacl" -R . 2>&1)"
eq acl-persist-mode 664 "$("$GNU/stat" -c %a dacl/new)"

# ---- cp -a and tar --xattrs --acls round trips ----
mkdir -p src/sub
echo one >src/one
echo two >src/sub/two
"$GNU/setfattr" -n user.k1 -v v1 src/one
"$GNU/setfattr" -n user.k2 -v v2 src/sub/two
"$GNU/setfattr" -n trusted.k3 -v v3 src/sub
"$GNU/setfattr" -n user.k4 -v v4 src
"$GNU/setfacl" -m u:1234:rw src/one
"$GNU/setfacl" -d -m g:99:rx src/sub
# dump DIR: every attribute and ACL below DIR, with relative paths
dump() {
	(cd "$1" && "$GNU/getfattr" -R -d -m - . 2>&1 &&
		"$GNU/getfacl" -R . 2>&1)
}
check cp-a "$GNU/cp" -a src copy
check cp-a-diff "$GNU/diff" -r src copy
eq cp-a-xattrs "$(dump src)" "$(dump copy)"
check tar-c "$GNU/tar" --xattrs --xattrs-include='*' --acls -cf /tmp/x.tar -C src .
mkdir untar
check tar-x "$GNU/tar" --xattrs --xattrs-include='*' --acls -xf /tmp/x.tar -C untar
check tar-diff "$GNU/diff" -r src untar
eq tar-xattrs "$(dump src)" "$(dump untar)"
if dump src | grep -q k3 && dump src | grep -q 'default:group:99'; then
	pass dump-nonempty
else
	fail dump-nonempty "getfattr -R listed nothing"
fi

# ---- concurrency: four setters on one inode, a reader during replaces ----
: >conc
rm -f /tmp/conc.err
for j in 1 2 3 4; do
	(
		i=0
		while [ $i -lt 50 ]; do
			"$HELPER" setxattr conc "user.j$j.$i" @100 create >/dev/null ||
				echo "set user.j$j.$i" >>/tmp/conc.err
			i=$((i + 1))
		done
	) &
done
wait
eq conc-errors "" "$(cat /tmp/conc.err 2>/dev/null)"
eq conc-count 200 "$(names conc | wc -w)"
# a replace between sizes is done in place: a reader never sees ENODATA
check conc-seed "$HELPER" setxattr conc user.r @100 0
(
	i=0
	while [ $i -lt 100 ]; do
		"$HELPER" setxattr conc user.r @3000 replace >/dev/null
		"$HELPER" setxattr conc user.r @100 replace >/dev/null
		i=$((i + 1))
	done
) &
w=$!
missing=0
while kill -0 "$w" 2>/dev/null; do
	case $("$HELPER" getxattr conc user.r 0) in
	100 | 3000) ;;
	*) missing=$((missing + 1)) ;;
	esac
done
wait
eq conc-replace-never-missing 0 "$missing"
fsck_twig fsck-conc
cd "$MNT" || exit 1

# ---- eviction deletes the attributes with the inode ----
cd / || exit 1
rm -rf "${MNT:?}"/*
sync
umount "$MNT"
n=$(twigfs-dump "$DEV" | grep -c XATTR_ITEM)
eq evicted-xattrs 0 "$n"
check evicted-fsck fsck.twigfs -n "$DEV"
mount_twig
finish
