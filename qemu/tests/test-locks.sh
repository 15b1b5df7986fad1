#!/bin/sh
# The locking laboratory's own instruments: the kernel's mutex spin policy
# really changes how mutex waiters behave (zero spins under "none"), and each
# twigfs lock strategy counts its own acquisitions in sysfs.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

knob=/proc/sys/kernel/mutex_spin
mstats=/sys/kernel/debug/mutex_stats
tdir=/sys/fs/twigfs/$(basename "$DEV")

mstat() { awk -v k="$1" '$1 == k { print $2 }' "$mstats"; }
# tstat COLUMN [MODE]: a lock_stats column summed over tree levels
tstat() {
	awk -v c="$1" -v m="${2:-}" \
		'NF == 8 && $3 ~ /^[0-9]+$/ && (m == "" || $2 == m) { s += $c }
		 END { print s + 0 }' "$tdir/lock_stats"
}
# tmax COLUMN: a lock_stats column's largest value over levels and modes
tmax() {
	awk -v c="$1" 'NF == 8 && $3 ~ /^[0-9]+$/ && $c > m { m = $c }
		END { printf "%.0f\n", m }' "$tdir/lock_stats"
}

# creators N: N processes creating files until /tmp/stop, each in its own
# directory: creates in one directory are serialised by its i_rwsem before
# they reach the tree, so only separate directories contend on tree nodes.
creators() {
	rm -f /tmp/stop
	n=0
	while [ $n -lt "$1" ]; do
		mkdir -p "$MNT/c$n"
		(i=0; while [ ! -e /tmp/stop ]; do
			: >"$MNT/c$n/p$i"; i=$((i + 1)); done) &
		n=$((n + 1))
	done
}
stop() { touch /tmp/stop; wait; }

# ok NAME WHY TEST...: PASS when the test holds
ok() {
	_n=$1 _w=$2
	shift 2
	if "$@"; then pass "$_n"; else fail "$_n" "$_w"; fi
}

for f in $knob $mstats; do
	[ -e "$f" ] || fail "instrument-$f" "missing (kernel without patches/?)"
done

if [ -w $knob ] && [ -e $mstats ]; then
	fresh_twig lock=mutex || fail setup "mount lock=mutex failed"
	creators 8
	for p in none owner osq; do
		echo $p >$knob
		sleep 2			# let waiters spinning under the old policy finish
		echo 0 >$mstats
		sleep 6
		slow=$(mstat slowpath)
		spun=$(mstat spin_acquired)
		gave=$(mstat spin_failed)
		slept=$(mstat sleeps)
		echo "policy $p: slowpath $slow spin_acquired $spun spin_failed $gave sleeps $slept"
		if [ "$p" = none ]; then
			eq "none-never-spins" "0 0" "$spun $gave"
			ok none-sleeps "no contended mutex slept" [ "$slept" -gt 0 ]
		else
			ok "$p-spins" "no acquisition while spinning" [ "$spun" -gt 0 ]
		fi
	done
	stop
	echo osq >$knob
	eq policy-restored osq "$(cat $knob)"
	ok knob-rejects-bogus "accepted 'bogus'" \
		sh -c "! echo bogus 2>/dev/null >$knob"
fi

for l in mutex spin512 rwsem; do
	fresh_twig "lock=$l" || { fail "mount-$l" "mount failed"; continue; }
	# lock=spin512 is lock=mutex with spin=512
	want=$l
	[ "$l" = spin512 ] && want=mutex
	eq "strategy-$l" "$want" "$(cat "$tdir/lock")"
	echo 1 >"$tdir/lock_stats_reset"
	eq "reset-$l" 0 "$(tstat 3)"
	t0=$(date +%s)
	creators 8
	sleep 8
	stop
	secs=$(($(date +%s) - t0 + 1))
	acq=$(tstat 3)
	cont=$(tstat 4)
	echo "lock=$l: acquired $acq contended $cont spun $(tstat 5) slept $(tstat 6) read $(tstat 3 read)"
	ok "counts-$l" "no acquisitions counted" [ "$acq" -gt 0 ]
	ok "contended-$l" "no contention seen" [ "$cont" -gt 0 ]
	# No single wait can outlast the creators' run (a clock read on two
	# CPUs once made a negative wait read as 2^63 ns).
	maxw=$(tmax 8)
	ok "max-wait-sane-$l" "max_wait_ns $maxw outlasts the ${secs} s run" \
		awk -v w="$maxw" -v s="$secs" 'BEGIN { exit !(w > 0 && w < s * 1e9) }'
	case $l in
	rwsem) ok rwsem-shared-readers "no read acquisitions" \
		[ "$(tstat 3 read)" -gt 0 ] ;;
	spin512) ok spin512-spins "no acquisition after spinning" \
		[ "$(tstat 5)" -gt 0 ] ;;
	esac
done
expect_err bad-strategy "Invalid argument" mount -t twigfs -o lock=nosuch "$DEV" "$MNT"
finish
