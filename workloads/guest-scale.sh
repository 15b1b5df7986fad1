#!/bin/sh
# Filesystem scale runs (figures, not pass/fail tests): $FILES (100k)
# empty files in one directory and in 100 directories ($SCALE_DIRS) with
# the create rate at 10k and at the end, a readdir of them all, then dbench
# 50 for $DBENCH_SECS s (0: none) on twigfs, ext4 and btrfs in this same
# guest; fsck.twigfs after every twigfs run.
#   make run SCRIPT=workloads/guest-scale.sh EXTRA_DISKS=1 MOUNT=0
# The guest gets no environment: to change a variable, put its assignment
# in front of a copy of this script.
FILES=${FILES:-100000}
SCALE_DIRS=${SCALE_DIRS:-1 100}
DBENCH_SECS=${DBENCH_SECS:-60}
twig=/dev/vda
ref=/dev/vdb
rc=0

now() { cut -d' ' -f1 /proc/uptime; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }

fresh_twig() {
	umount /mnt 2>/dev/null
	mkfs.twigfs -q -f $twig && mount -t twigfs $twig /mnt
}
check_twig() {
	umount /mnt
	if fsck.twigfs -n $twig >/tmp/fsck.out 2>&1; then
		echo "fsck after $1: clean"
	else
		echo "fsck after $1: ERRORS"; head -5 /tmp/fsck.out; rc=1
	fi
}

# creates DIRS: FILES empty files spread over DIRS directories
creates() {
	dirs=$1
	fresh_twig || { echo "mount failed"; return 1; }
	d=0
	while [ $d -lt "$dirs" ]; do mkdir /mnt/d$d; d=$((d + 1)); done
	per=$((FILES / dirs))
	t0=$(now)
	i=0
	while [ $i -lt "$per" ]; do
		d=0
		while [ $d -lt "$dirs" ]; do
			: >/mnt/d$d/f$i || { echo "create failed at $i"; return 1; }
			d=$((d + 1))
		done
		i=$((i + 1))
		n=$((i * dirs))
		if [ $n = 10000 ]; then
			t10=$(now)
		fi
	done
	t1=$(now)
	echo "creates in $dirs dir(s): first 10000 at $(rate 10000 "$t0" "$t10")/s," \
		"all $n at $(rate "$n" "$t0" "$t1")/s," \
		"last $((n - 10000)) at $(rate $((n - 10000)) "$t10" "$t1")/s"
	t0=$(now)
	found=$(find /mnt -type f | wc -l)
	t1=$(now)
	echo "files found: $found of $n (readdir at $(rate "$found" "$t0" "$t1")/s)"
	[ "$found" = "$n" ] || rc=1
	check_twig "creates-$dirs"
}

for dirs in $SCALE_DIRS; do
	creates "$dirs"
done

[ "$DBENCH_SECS" -gt 0 ] || exit $rc
for fs in twigfs ext4 btrfs; do
	case $fs in
	twigfs) fresh_twig; dev=$twig ;;
	ext4) mkfs.ext4 -q -F $ref && mount -t ext4 $ref /mnt; dev=$ref ;;
	btrfs) mkfs.btrfs -q -f $ref && mount -t btrfs $ref /mnt; dev=$ref ;;
	esac
	echo "== dbench 50 on $fs ($dev), $DBENCH_SECS s"
	(cd /mnt && dbench -c /usr/share/dbench/client.txt -t "$DBENCH_SECS" 50) \
		>/tmp/dbench.out 2>&1 || rc=1
	grep -E "Throughput|Operation|NTCreateX|ERROR|error" /tmp/dbench.out | head -5
	if [ $fs = twigfs ]; then check_twig dbench; else umount /mnt; fi
done
exit $rc
