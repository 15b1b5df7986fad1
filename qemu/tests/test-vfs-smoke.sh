#!/bin/sh
# Smoke runs: dbench -t 30 10 and 8 parallel fio jobs creating 4 KiB files.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"
cd "$MNT" || exit 1

if command -v dbench >/dev/null; then
	mkdir -p "$MNT/dbench"
	if dbench -D "$MNT/dbench" -t 30 10 >/tmp/dbench.out 2>&1 &&
	   grep -q '^Throughput' /tmp/dbench.out; then
		pass "dbench-10: $(grep '^Throughput' /tmp/dbench.out)"
	else
		fail dbench-10 "$(grep -iE 'error|fail|Throughput' /tmp/dbench.out | head -3 | tr '\n' ' ')"
	fi
	if rm -rf "$MNT/dbench" 2>/tmp/rm.out && [ ! -e "$MNT/dbench" ]; then
		pass dbench-removed
	else
		fail dbench-removed "$(head -n 3 /tmp/rm.out | tr '\n' ' ')"
	fi
	fsck_twig fsck-after-dbench
else
	fail dbench-10 "dbench not installed in the guest"
fi

if command -v fio >/dev/null; then
	cd "$MNT" || exit 1
	mkdir -p "$MNT/fio"
	if fio --name=create4k --directory="$MNT/fio" --numjobs=8 \
		--nrfiles=100 --filesize=4k --bs=4k --rw=write \
		--openfiles=1 --file_service_type=sequential --create_on_open=1 \
		--fallocate=none --ioengine=sync --group_reporting \
		>/tmp/fio.out 2>&1 && ! grep -q 'err=[ ]*[1-9]' /tmp/fio.out; then
		n=$(find "$MNT/fio" -type f | wc -l)
		eq fio-8x4k-files 800 "$n"
		sz=$(find "$MNT/fio" -type f -size 4k | wc -l)
		eq fio-8x4k-sizes 800 "$sz"
	else
		fail fio-8x4k "$(grep -iE 'err|error' /tmp/fio.out | head -3 | tr '\n' ' ')"
	fi
	cd / || exit 1
	fsck_twig fsck-after-fio
else
	fail fio-8x4k "fio not installed in the guest"
fi

# ENOSPC on a small twigfs, which stays usable after deletes
if small_twig; then
	dd if=/dev/zero of=/tmp/smnt/fill bs=1M count=200 >/tmp/dd.out 2>&1
	if grep -q "No space left" /tmp/dd.out; then
		pass enospc
	else
		fail enospc "dd: $(tr '\n' ' ' </tmp/dd.out)"
	fi
	i=0
	while [ $i -lt 50 ] && echo x >"/tmp/smnt/small$i" 2>/dev/null; do
		i=$((i + 1))
	done
	rm -f /tmp/smnt/fill
	sync
	if dd if=/dev/zero of=/tmp/smnt/again bs=1M count=20 2>/tmp/dd2.out; then
		pass enospc-usable-after-delete
	else
		fail enospc-usable-after-delete "$(tr '\n' ' ' </tmp/dd2.out)"
	fi
	small_twig_done enospc-fsck
else
	fail enospc "no 64 MiB twigfs on a loop device"
fi
finish
