#!/bin/sh
# The fsync log (fs/tree-log.c): fsync of a file whose names did not change
# since the last commit writes a log block and the superblock, not a
# commit (log_syncs grows, commits do not); what the log cannot express
# (a rename, a new file in a new directory, a directory) commits and
# counts log_fallbacks; a new file in an old directory logs its name;
# the logged state survives a remount and fsck is clean once committed.
# commit=86400 keeps the commit timer out of the exact counts.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

tdir=/sys/fs/twigfs/$(basename "$DEV")
cs() { awk -v k="$1" '$1 == k { print $2 }' "$tdir/commit_stats"; }
reset() { echo 1 >"$tdir/commit_stats_reset"; }
counts() { echo "$(cs commits) $(cs log_syncs) $(cs log_fallbacks)"; }

have_helper || { fail helper "no twig-helper"; finish; }
fresh_twig commit=86400 || { fail setup "mount failed"; finish; }
cd "$MNT" || exit 1
mkdir d
echo one >d/a
head -c 100000 /dev/urandom >d/big
echo keep >d/b
sync

# commits log_syncs log_fallbacks
reset
echo two >>d/a
check fsync-a "$HELPER" fsync d/a
eq fsync-logs "0 1 0" "$(counts)"
head -c 50000 /dev/urandom | dd of=d/big bs=4096 seek=5 conv=notrunc 2>/dev/null
check fdatasync-big "$HELPER" fdatasync d/big
eq fdatasync-logs "0 2 0" "$(counts)"
md5sum d/big >/tmp/big.sum
check fsync-again "$HELPER" fsync d/a
eq fsync-again-logs "0 3 0" "$(counts)"

# names changed in this transaction: a commit
mv d/b d/c
check fsync-renamed "$HELPER" fsync d/c
eq rename-falls-back "1 3 1" "$(counts)"
# a new file in a directory of the last commit: the log has its name
echo new >d/new
check fsync-new "$HELPER" fsync d/new
eq new-file-logs "1 4 1" "$(counts)"
# ... but not in a new directory, nor after a rename of a new file
mkdir d/nd
echo x >d/nd/f
check fsync-new-in-new-dir "$HELPER" fsync d/nd/f
eq new-dir-falls-back "2 4 2" "$(counts)"
echo y >d/new2
mv d/new2 d/new3
check fsync-new-renamed "$HELPER" fsync d/new3
eq new-renamed-falls-back "3 4 3" "$(counts)"
mkdir d/sub
check fsync-dir "$HELPER" fsync d
eq dir-falls-back "4 4 4" "$(counts)"

# after the commit, the renamed file logs again; nothing to do when clean
echo more >>d/c
check fsync-after-commit "$HELPER" fsync d/c
eq after-commit-logs "4 5 4" "$(counts)"
sync
check fsync-clean "$HELPER" fsync d/c
eq clean-fsync-nothing "5 5 4" "$(counts)"
eq fsyncs-counted 10 "$(cs fsyncs)"

# unlink, then a new file under the same name: the last commit still has
# the old name, which the log cannot replace: a commit
echo old >d/reuse
sync
reset
rm d/reuse
echo newer >d/reuse
check fsync-reused-name "$HELPER" fsync d/reuse
eq reused-name-falls-back "1 0 1" "$(counts)"

# a log, then umount (which commits): content and fsck
echo three >>d/a
check fsync-before-umount "$HELPER" fsync d/a
fsck_twig fsck-after-log-and-commit
cd "$MNT" || exit 1
eq content-a "one two three" "$(tr '\n' ' ' <d/a | sed 's/ $//')"
if md5sum -c -s /tmp/big.sum; then pass content-big; else fail content-big "md5 differs"; fi
eq content-c "keep more" "$(tr '\n' ' ' <d/c | sed 's/ $//')"
eq content-new new "$(cat d/new)"
eq content-reuse newer "$(cat d/reuse)"

# many log blocks in one transaction, then sync: every block freed
reset
i=0
while [ $i -lt 30 ]; do
	echo "x$i" >>d/a
	"$HELPER" fsync d/a >/dev/null || fail "fsync-$i" "failed"
	i=$((i + 1))
done
eq many-logs "0 30 0" "$(counts)"
fsck_twig fsck-after-many-logs
cd / || exit 1
finish
