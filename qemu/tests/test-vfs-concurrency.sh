#!/bin/sh
# Several processes creating, renaming, unlinking and writing in one
# directory and in many, under every lock strategy (or those in $LOCKS);
# fsck after each.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

NPROC=${NPROC:-6}
ROUNDS=${ROUNDS:-150}

# worker ID DIR: create, write, rename, link, unlink, mkdir/rmdir in DIR
worker() {
	id=$1
	d=$2
	i=0
	while [ $i -lt "$ROUNDS" ]; do
		f=$d/w$id-$i
		echo "$id $i" >"$f" || return 1
		head -c $(((i % 7) * 1500)) /dev/zero >>"$f" || return 1
		mv "$f" "$f.r" || return 1
		ln "$f.r" "$f.l" || return 1
		if [ $((i % 3)) = 0 ]; then
			rm "$f.r" "$f.l" || return 1
		else
			rm "$f.l" || return 1
		fi
		mkdir "$d/dir$id-$i" && rmdir "$d/dir$id-$i" || return 1
		# cross-directory renames when DIR is shared
		if [ $((i % 5)) = 1 ] && [ -e "$f.r" ]; then
			mv "$f.r" "$MNT/x/moved-$id-$i" || return 1
		fi
		i=$((i + 1))
	done
	return 0
}

run_load() {
	mode=$1
	mkdir -p "$MNT/shared" "$MNT/x"
	pids=
	n=0
	while [ $n -lt "$NPROC" ]; do
		if [ "$mode" = one ]; then
			dir=$MNT/shared
		else
			dir=$MNT/own$n
			mkdir -p "$dir"
		fi
		(worker $n "$dir" || echo "worker $n failed" >>/tmp/conc.err) &
		pids="$pids $!"
		n=$((n + 1))
	done
	# a reader walks the tree meanwhile
	(j=0; while [ $j -lt 20 ]; do ls -lR "$MNT" >/dev/null 2>&1; j=$((j + 1)); done) &
	pids="$pids $!"
	for p in $pids; do
		wait "$p"
	done
}

# count of files that must be left: per worker, i%3 != 0, minus the moved
expected_left() {
	left=0
	i=0
	while [ $i -lt "$ROUNDS" ]; do
		[ $((i % 3)) != 0 ] && left=$((left + 1))
		i=$((i + 1))
	done
	echo $((left * NPROC))
}

for l in ${LOCKS:-mutex spin512 rwsem}; do
	if ! fresh_twig "lock=$l"; then
		fail "setup-$l" "mkfs/mount failed"
		continue
	fi
	for mode in one many; do
		rm -f /tmp/conc.err
		run_load $mode
		if [ -s /tmp/conc.err ]; then
			fail "$mode-dir-$l" "$(tr '\n' ' ' </tmp/conc.err)"
		else
			pass "$mode-dir-$l"
		fi
		total=$(find "$MNT/shared" "$MNT"/own* "$MNT/x" -type f 2>/dev/null | wc -l)
		eq "$mode-dir-count-$l" "$(expected_left)" "$total"
		rm -rf "${MNT:?}"/shared "${MNT:?}"/own* "${MNT:?}"/x
	done
	# parallel writers to one file region each, then verify
	n=0
	pids=
	while [ $n -lt 4 ]; do
		(head -c 1048576 /dev/zero | tr '\0' "$n" >"$MNT/data$n") &
		pids="$pids $!"
		n=$((n + 1))
	done
	for p in $pids; do wait "$p"; done
	sync
	echo 3 >/proc/sys/vm/drop_caches
	ok=1
	n=0
	while [ $n -lt 4 ]; do
		[ "$(tr -d "$n" <"$MNT/data$n" | wc -c)" = 0 ] || ok=0
		[ "$(stat -c %s "$MNT/data$n")" = 1048576 ] || ok=0
		n=$((n + 1))
	done
	if [ $ok = 1 ]; then pass "writers-$l"; else fail "writers-$l" "content mismatch"; fi
	fsck_twig "fsck-$l"
done
finish
