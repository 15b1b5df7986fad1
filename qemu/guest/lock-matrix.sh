#!/bin/sh
# Run one guest test under each of the five lock configurations of
# DESIGN.md section 1 (twigfs lock= strategy x kernel mutex spin policy):
#   lock-matrix.sh /twig/test-vfs-concurrency.sh
# The test reads the strategy from $LOCKS; the policy is set here.
test=$1
knob=/proc/sys/kernel/mutex_spin
rc=0
for cfg in mutex-nospin:mutex:none spin512:spin512:none mutex-owner:mutex:owner \
	mutex-osq:mutex:osq rwsem:rwsem:osq; do
	name=${cfg%%:*}
	lock=${cfg#*:}
	lock=${lock%%:*}
	policy=${cfg##*:}
	if [ -w $knob ]; then
		echo "$policy" >$knob
	elif [ "$policy" != osq ]; then
		echo "FAIL matrix-$name: no $knob in this kernel"
		rc=1
		continue
	fi
	echo "== $name (lock=$lock, mutex_spin=$policy)"
	LOCKS=$lock sh "$test" >/tmp/matrix.out 2>&1 || rc=1
	sed "s/^\(PASS\|FAIL\) /&$name-/" /tmp/matrix.out
done
[ -w $knob ] && echo osq >$knob
exit $rc
