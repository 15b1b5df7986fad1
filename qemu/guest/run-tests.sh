#!/bin/sh
# Guest side of `make test`: the KUnit suites, then every /twig/test-*.sh on
# a fresh twigfs at /mnt, with fsck.twigfs on the disk after each.
# Prints PASS/FAIL lines; the host counts them.
dev=${TWIG_DEV:-/dev/vda}
mnt=${TWIG_MNT:-/mnt}
rc=0

fresh_fs() {
	umount "$mnt" 2>/dev/null
	mkfs.twigfs -q -f "$dev" && mount -t twigfs "$dev" "$mnt"
}

# KUnit suites first, while the guest is quiet (the mutex spin-policy test
# measures whether a waiter spins): modules named *kunit*.ko print KTAP to
# the kernel log when loaded; every test case line is counted, and the
# suites' diagnostics ("# ..." lines) are shown.
for k in /lib/twigfs/*kunit*.ko; do
	[ -e "$k" ] || continue
	dmesg -c >/dev/null
	insmod "$k" || echo "FAIL $(basename "$k"): insmod failed"
	dmesg | sed -n 's/^\[[ 0-9.]*\] //p' >/tmp/kunit.out
	grep '^ *# ' /tmp/kunit.out
	# Indented lines are test cases; the unindented one sums the suite.
	grep -v '# SKIP' /tmp/kunit.out |
		sed -n 's/^ \{1,\}ok [0-9]* \(- \)\{0,1\}\(.*\)$/PASS kunit-\2/p;
			s/^ \{1,\}not ok [0-9]* \(- \)\{0,1\}\(.*\)$/FAIL kunit-\2/p'
	grep -q '^ *not ok' /tmp/kunit.out && rc=1
	rmmod "$k" 2>/dev/null
done
for t in /twig/test-*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	if ! fresh_fs; then
		echo "FAIL $name: cannot make and mount a fresh twigfs"
		rc=1
		continue
	fi
	echo "== $name"
	out=/tmp/$name.out
	sh "$t" >"$out" 2>&1
	st=$?
	cat "$out"
	if [ $st != 0 ] && ! grep -q '^FAIL ' "$out"; then
		echo "FAIL $name: exited with status $st"
	fi
	[ $st = 0 ] || rc=1
	umount "$mnt" 2>/dev/null
	if fsck.twigfs -n "$dev" >/tmp/fsck.out 2>&1; then
		echo "PASS $name-fsck-clean"
	else
		echo "FAIL $name-fsck-clean: fsck.twigfs found damage"
		head -n 20 /tmp/fsck.out | sed 's/^/    # fsck: /'
		rc=1
	fi
done

exit $rc
