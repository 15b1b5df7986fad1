#!/bin/sh
# Load a KUnit module N times in one boot and count its cases, to show a
# test does not flake:
#
#   make run SCRIPT=qemu/guest/kunit-repeat.sh MOUNT=0
#   KUNIT_MODULE=mutex_spin_kunit KUNIT_RUNS=50 (the defaults)
#
# Prints one line per failing run and "kunit-repeat: <module> N runs,
# P passed, F failed cases" last; exits 1 if any case failed.
mod=/lib/twigfs/${KUNIT_MODULE:-mutex_spin_kunit}.ko
runs=${KUNIT_RUNS:-50}
[ -e "$mod" ] || { echo "kunit-repeat: no $mod"; exit 2; }
pass=0
fail=0
i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	dmesg -c >/dev/null
	insmod "$mod" || { echo "kunit-repeat: run $i: insmod failed"; exit 2; }
	dmesg | sed -n 's/^\[[ 0-9.]*\] //p' >/tmp/kunit.out
	rmmod "$mod"
	p=$(grep -c '^ \{1,\}ok ' /tmp/kunit.out)
	f=$(grep -c '^ \{1,\}not ok ' /tmp/kunit.out)
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$f" -gt 0 ]; then
		echo "kunit-repeat: run $i: $f failed"
		grep -B 12 '^ \{1,\}not ok ' /tmp/kunit.out
	fi
	# the counts of the last run, for whoever reads the log
	[ "$i" -eq "$runs" ] && grep '^ *# .*rounds\|^ *# .*delta' /tmp/kunit.out
done
echo "kunit-repeat: $(basename "$mod" .ko) $runs runs, $pass passed, $fail failed cases"
[ "$fail" -eq 0 ]
