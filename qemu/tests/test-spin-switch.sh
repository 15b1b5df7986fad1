#!/bin/sh
# What the switchback benchmark does, as a test: the tree lock's trylock
# loop (sysfs "spin") and the kernel's mutex spin policy switched thousands
# of times while dbench runs on the mount.  Waiters that began under one
# setting finish under another: dbench must end cleanly, the tree locks
# must have been contended meanwhile, and fsck (run after every test) must
# find the filesystem whole.  On the debug kernel lockdep and KASAN watch.
#
# The kernel policy goes through none, owner and osq at the loop's pace.
# The static key behind it (patches 0001) is enabled at the first switch
# away from osq and stays on, so only that first switch patches kernel
# text: a key flipped at every switch crashed TCG guests with an int3
# oops in __mutex_lock (docs/switchback.md).
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

knob=/proc/sys/kernel/mutex_spin
sys=/sys/fs/twigfs/$(basename "$DEV")
secs=${SWITCH_SECS:-20}
fresh_twig lock=mutex || { fail mount "mount -o lock=mutex failed"; finish; }
echo 1 >"$sys/lock_stats_reset"
# The one text patch, done before the load starts.
[ -w $knob ] && echo none >$knob && echo osq >$knob
rm -f /tmp/dbench.rc
(
	cd "$MNT" &&
		dbench -c /usr/share/dbench/client.txt -D "$MNT" -t "$secs" 10 \
			>/tmp/dbench.out 2>&1
	echo $? >/tmp/dbench.rc
) &
n=0
while [ ! -e /tmp/dbench.rc ]; do
	echo 512 >"$sys/spin"
	echo 0 >"$sys/spin"
	echo 7 >"$sys/spin"
	if [ -w $knob ]; then
		echo owner >$knob
		echo none >$knob
		echo osq >$knob
	fi
	n=$((n + 3))
done
wait
echo 0 >"$sys/spin"
[ -w $knob ] && echo osq >$knob
echo "switched $n times in $secs s of dbench 10: $(grep -a Throughput /tmp/dbench.out)"
eq dbench-status 0 "$(cat /tmp/dbench.rc)"
check dbench-throughput grep -q Throughput /tmp/dbench.out
check switched-thousands [ "$n" -ge 1000 ]
cont=$(awk 'NF == 8 && $4 ~ /^[0-9]+$/ { s += $4 } END { print s + 0 }' "$sys/lock_stats")
echo "contended acquisitions meanwhile: $cont"
check contended [ "$cont" -gt 0 ]
finish
