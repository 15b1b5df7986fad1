#!/bin/sh
# What real userland expects of a Linux filesystem beyond what the busybox
# tools look at: readdir's d_type, truncate(2)'s times, renameat2's flags.
# Needs twig-helper (readdir and the raw system calls).
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"
cd "$MNT" || exit 1
if ! have_helper; then
	fail helper "no twig-helper"
	finish
fi

# stat's name of a file type -> readdir's
stat_dtype() {
	case $(stat -c %F "$1") in
	directory) echo dir ;;
	regular*) echo reg ;;
	"symbolic link") echo lnk ;;
	"character special file") echo chr ;;
	"block special file") echo blk ;;
	fifo) echo fifo ;;
	socket) echo sock ;;
	*) echo "?" ;;
	esac
}

# dtypes_match NAME DIR: every entry's d_type is what lstat says it is.
dtypes_match() {
	if ! "$HELPER" dtypes "$2" >/tmp/dtypes.out; then
		fail "$1" "readdir of $2: $(cat /tmp/dtypes.out)"
		return
	fi
	_bad=
	while read -r _t _n; do
		_s=$(stat_dtype "$2/$_n")
		[ "$_t" = "$_s" ] || _bad="$_bad $_n:$_t/$_s"
	done </tmp/dtypes.out
	if [ -z "$_bad" ]; then
		pass "$1"
	else
		fail "$1" "d_type/stat differ:$(echo "$_bad" | head -c 300)"
	fi
}

# ---- readdir d_type ----
mkdir dt dt/d
echo x >dt/f
: >dt/empty
ln -s f dt/l
mkfifo dt/p
mknod dt/c c 1 3
mknod dt/b b 7 9
"$HELPER" mksock dt/s >/dev/null
eq dtype-each "blk b
chr c
dir .
dir ..
dir d
fifo p
lnk l
reg empty
reg f
sock s" "$("$HELPER" dtypes dt | sort)"
dtypes_match dtype-vs-stat dt
# more entries than one readdir buffer holds, half of them directories
mkdir dt/many
i=0
while [ $i -lt 300 ]; do
	mkdir "dt/many/d$i"
	: >"dt/many/f$i"
	i=$((i + 1))
done
eq dtype-many-dirs 302 "$("$HELPER" dtypes dt/many | grep -c '^dir ')"
eq dtype-many-files 300 "$("$HELPER" dtypes dt/many | grep -c '^reg ')"
remount_twig
cd "$MNT" || exit 1
dtypes_match dtype-after-remount dt
dtypes_match dtype-many-after-remount dt/many

# ---- truncate(2) by path sets mtime and ctime when the size changes ----
old=$(date -d '2001-02-03 04:05:06' +%s)
echo data >tt
touch -d '2001-02-03 04:05:06' tt
c0=$(stat -c %Z tt)
# stat shows whole seconds: after a second the new ctime must differ
sleep 1
check truncate-path-down "$HELPER" truncate tt 2
eq truncate-path-down-size 2 "$(stat -c %s tt)"
m1=$(stat -c %Y tt)
c1=$(stat -c %Z tt)
if [ "$m1" -gt "$old" ]; then
	pass truncate-path-down-mtime
else
	fail truncate-path-down-mtime "mtime $m1 still the old $old"
fi
if [ "$c1" -gt "$c0" ]; then
	pass truncate-path-down-ctime
else
	fail truncate-path-down-ctime "ctime $c1 not after $c0"
fi
eq truncate-path-down-mtime-is-ctime "$c1" "$m1"
touch -d '2001-02-03 04:05:06' tt
check truncate-path-up "$HELPER" truncate tt 100000
m2=$(stat -c %Y tt)
if [ "$m2" -gt "$old" ]; then
	pass truncate-path-up-mtime
else
	fail truncate-path-up-mtime "mtime $m2 still the old $old"
fi
touch -d '2001-02-03 04:05:06' tt
check truncate-path-same "$HELPER" truncate tt 100000
eq truncate-path-same-keeps-mtime "$old" "$(stat -c %Y tt)"
touch -d '2001-02-03 04:05:06' tt
check truncate-f truncate -s 7 tt
m3=$(stat -c %Y tt)
if [ "$m3" -gt "$old" ]; then
	pass ftruncate-mtime
else
	fail ftruncate-mtime "mtime $m3 still the old $old"
fi
remount_twig
cd "$MNT" || exit 1
eq truncate-mtime-persists "$m3" "$(stat -c %Y tt)"

# ---- renameat2 flags: combinations the VFS refuses ----
echo a >ra
echo b >rb
expect_err rename-noreplace-exchange EINVAL "$HELPER" rename2 noreplace,exchange ra rb
expect_err rename-whiteout-exchange EINVAL "$HELPER" rename2 whiteout,exchange ra rb
eq rename-refused-kept "a b" "$(cat ra) $(cat rb)"

# ---- RENAME_NOREPLACE ----
mkdir rdir
expect_err noreplace-file EEXIST "$HELPER" rename2 noreplace ra rb
expect_err noreplace-dir EEXIST "$HELPER" rename2 noreplace ra rdir
eq noreplace-kept "a b" "$(cat ra) $(cat rb)"
check noreplace-new "$HELPER" rename2 noreplace ra rc
eq noreplace-moved a "$(cat rc)"
expect_err noreplace-old-gone "No such file" cat ra

# ---- RENAME_EXCHANGE ----
ino_b=$(stat -c %i rb)
ino_c=$(stat -c %i rc)
mkdir q1 q2 q1/da q2/db
echo in-a >q1/da/a
echo in-b >q2/db/b
echo file >q2/f
ctimes() { stat -c %Z rb rc q1/da q2/db q2/f q1 q2 | tr '\n' ' '; }
c0=$(ctimes)
nl1=$(stat -c %h q1)
nl2=$(stat -c %h q2)
sleep 1
check exchange-files "$HELPER" rename2 exchange rb rc
eq exchange-files-content "a b" "$(cat rb) $(cat rc)"
eq exchange-files-inodes "$ino_c $ino_b" "$(stat -c %i rb) $(stat -c %i rc)"
# two non-empty directories in different parents
check exchange-dirs "$HELPER" rename2 exchange q1/da q2/db
eq exchange-dirs-content "in-b in-a" "$(cat q1/da/b) $(cat q2/db/a)"
eq exchange-dirs-nlink "$nl1 $nl2" "$(stat -c %h q1) $(stat -c %h q2)"
eq exchange-dirs-dotdot "$(stat -c %i q1) $(stat -c %i q2)" \
	"$(stat -c %i q1/da/..) $(stat -c %i q2/db/..)"
# a directory and a file in different parents: the link counts move
check exchange-dir-file "$HELPER" rename2 exchange q1/da q2/f
eq exchange-dir-file-content "file in-b" "$(cat q1/da) $(cat q2/f/b)"
eq exchange-dir-file-nlink "$((nl1 - 1)) $((nl2 + 1))" \
	"$(stat -c %h q1) $(stat -c %h q2)"
c1=$(ctimes)
bad=
# shellcheck disable=SC2086 # one word per ctime
set -- $c1
for t in $c0; do
	[ "$1" -gt "$t" ] || bad="$bad $t->$1"
	shift
done
eq exchange-ctimes "" "$bad"
expect_err exchange-missing-target ENOENT "$HELPER" rename2 exchange rb nothere
expect_err exchange-missing-source ENOENT "$HELPER" rename2 exchange nothere rb
expect_err exchange-into-self EINVAL "$HELPER" rename2 exchange q2 q2/f/b
eq exchange-refused-kept "a b" "$(cat rb) $(cat rc)"

# ---- RENAME_WHITEOUT: a 0:0 character device takes the source's place ----
echo w >w1
check whiteout-new "$HELPER" rename2 whiteout w1 w2
eq whiteout-moved w "$(cat w2)"
eq whiteout-type "character special file 0 0" "$(stat -c '%F %t %T' w1)"
eq whiteout-mode 0 "$(stat -c %a w1)"
eq whiteout-nlink 1 "$(stat -c %h w1)"
eq whiteout-dtype "chr w1" "$("$HELPER" dtypes . | grep ' w1$')"
echo victim >w3
check whiteout-over "$HELPER" rename2 whiteout w2 w3
eq whiteout-over-moved w "$(cat w3)"
eq whiteout-over-type "character special file 0 0" "$(stat -c '%F %t %T' w2)"
echo x >w4
expect_err whiteout-noreplace EEXIST "$HELPER" rename2 whiteout,noreplace w4 w3
eq whiteout-noreplace-kept "x w" "$(cat w4) $(cat w3)"
check whiteout-noreplace-new "$HELPER" rename2 whiteout,noreplace w4 w5
eq whiteout-noreplace-new-type "character special file" "$(stat -c %F w4)"
mkdir wd1 wd2 wd1/sub
echo s >wd1/sub/s
nl1=$(stat -c %h wd1)
nl2=$(stat -c %h wd2)
check whiteout-dir "$HELPER" rename2 whiteout wd1/sub wd2/sub
eq whiteout-dir-moved s "$(cat wd2/sub/s)"
eq whiteout-dir-type "character special file 0 0" "$(stat -c '%F %t %T' wd1/sub)"
eq whiteout-dir-nlink "$((nl1 - 1)) $((nl2 + 1))" \
	"$(stat -c %h wd1) $(stat -c %h wd2)"
fsck_twig rename-fsck
cd "$MNT" || exit 1
eq whiteout-after-remount "character special file 0 0" "$(stat -c '%F %t %T' w1)"
eq exchange-after-remount "in-b in-a" "$(cat q2/f/b) $(cat q2/db/a)"
check whiteout-unlink rm -f w1 w2 w4 wd1/sub
expect_err whiteout-gone "No such file" stat w1
finish
