#!/bin/sh
# The mount's lock strategy switched mutex <-> rwsem thousands of times
# while dbench runs on it, as the switchback benchmark switches it at
# every window boundary.  Each write of sysfs "lock" drains the tree
# operations in flight (also a write of the strategy in use): dbench must
# end cleanly, every write must be counted as a drain, the tree locks must
# have been contended meanwhile, and fsck (run after every test) must find
# the filesystem whole.  On the debug kernel lockdep and KASAN watch: a
# node locked through one lock and unlocked through the other, or the gate
# taken twice by one task, is a report.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

sys=/sys/fs/twigfs/$(basename "$DEV")
secs=${SWITCH_SECS:-20}
fresh_twig lock=mutex || { fail mount "mount -o lock=mutex failed"; finish; }
echo 1 >"$sys/lock_stats_reset"
eq switches-reset "0 0 0" "$(cat "$sys/lock_switches")"
rm -f /tmp/dbench.rc
(
	cd "$MNT" &&
		dbench -c /usr/share/dbench/client.txt -D "$MNT" -t "$secs" 10 \
			>/tmp/dbench.out 2>&1
	echo $? >/tmp/dbench.rc
) &
n=0
bad=0
while [ ! -e /tmp/dbench.rc ]; do
	echo rwsem >"$sys/lock" || bad=$((bad + 1))
	echo mutex >"$sys/lock" || bad=$((bad + 1))
	echo 512 >"$sys/spin" || bad=$((bad + 1))
	echo mutex >"$sys/lock" || bad=$((bad + 1))
	echo 0 >"$sys/spin" || bad=$((bad + 1))
	n=$((n + 3))
done
wait
echo "switched $n times in $secs s of dbench 10: $(grep -a Throughput /tmp/dbench.out)"
eq dbench-status 0 "$(cat /tmp/dbench.rc)"
check dbench-throughput grep -q Throughput /tmp/dbench.out
eq writes-accepted 0 "$bad"
check switched-thousands [ "$n" -ge 1000 ]
read -r count drain max <"$sys/lock_switches"
echo "drains: $count, mean $((drain / (count > 0 ? count : 1))) ns, max $max ns"
eq every-write-drains "$n" "$count"
eq strategy-after mutex "$(cat "$sys/lock")"
cont=$(awk 'NF == 8 && $4 ~ /^[0-9]+$/ { s += $4 } END { print s + 0 }' "$sys/lock_stats")
echo "contended acquisitions meanwhile: $cont"
check contended [ "$cont" -gt 0 ]
# spin= belongs to lock=mutex: rwsem sets it to 0 and refuses another
echo 300 >"$sys/spin"
echo rwsem >"$sys/lock"
eq rwsem-spin-zero 0 "$(cat "$sys/spin")"
expect_err rwsem-spin-refused "Invalid argument" sh -c "echo 5 >$sys/spin"
case $(grep " $MNT " /proc/mounts) in
*lock=rwsem,spin=*) fail show-options-rwsem "$(grep " $MNT " /proc/mounts)" ;;
*lock=rwsem*) pass show-options-rwsem ;;
*) fail show-options-rwsem "$(grep " $MNT " /proc/mounts)" ;;
esac
expect_err unknown-strategy "Invalid argument" sh -c "echo spin512 >$sys/lock"
eq unknown-kept rwsem "$(cat "$sys/lock")"
finish
