#!/bin/sh
# Run one guest test under each twigfs lock configuration of the table
# (/twig/configs.txt, read by /twig/configs.sh, both from workloads/:
# twigfs lock= and spin= x the kernel's mutex spin policy):
#   lock-matrix.sh /twig/test-vfs-concurrency.sh
# The test reads the mount options from $LOCKS ("mutex,spin=512"); the
# policy is set here.
test=$1
knob=/proc/sys/kernel/mutex_spin
rc=0
config_table=/twig/configs.txt
# shellcheck source=workloads/configs.sh
. /twig/configs.sh
config_rows | while read -r name fs def; do
	if [ "$fs" = twigfs ]; then echo "$name $def"; fi
done >/tmp/matrix.cfgs
[ -s /tmp/matrix.cfgs ] || { echo "FAIL matrix: no twigfs configurations in /twig/configs.txt"; exit 1; }
while read -r name lock spin policy; do
	if [ -w $knob ]; then
		echo "$policy" >$knob
	elif [ "$policy" != osq ]; then
		echo "FAIL matrix-$name: no $knob in this kernel"
		rc=1
		continue
	fi
	echo "== $name (lock=$lock,spin=$spin, mutex_spin=$policy)"
	LOCKS=$lock,spin=$spin sh "$test" </dev/null >/tmp/matrix.out 2>&1 || rc=1
	sed "s/^\(PASS\|FAIL\) /&$name-/" /tmp/matrix.out
done </tmp/matrix.cfgs
[ -w $knob ] && echo osq >$knob
exit $rc
