#!/bin/bash
# Every crash point of a recorded workload: one boot runs
# fsync-heavy work on a twigfs disk whose writes and flushes QEMU logs
# (blklogwrites, LOG_WRITES in qemu/run.sh); then the host rebuilds the
# image at every flush of the log (mkfs/twigfs-logwrites) and, after each,
# one torn state (the writes since that flush in a seeded subset, as a
# volatile write cache may leave them), runs fsck.twigfs -n on each, and
# mounts a seeded sample of them in guests (BATCH images a boot, through
# loop devices), which replays the fsync log, checks every file whose
# fsync had returned before that point, and runs fsck again.
#
# The oracle (scripts/crashpoints.py, tested by
# scripts/tests/test_crashpoints.py: the writers' plans, the states, the
# sample and what each state must show).  WRITERS processes each run OPS changes (writes at random
# offsets, appends, truncates up and down, new files, renames across
# directories, unlinks, hard links made and dropped, fallocate and punch,
# xattrs, O_DIRECT writes, unsynced writes) in their own directory and a
# shared one.  Around each change twig-crashcheck (qemu/tests) records
# "B" before it starts, and "S size:nlink:hash:xattr-hash" or "G" (gone)
# once its fsync (file, then directories) returned; after each record it
# writes a marker sector to the same disk past the filesystem's end.  A
# marker is logged after every write and flush the guest saw complete
# before it, so a record whose marker comes before flush entry F's next
# flush was made durable by F or earlier: at F, and in a torn state after
# F, each path whose last such record is S or G must be exactly so; a
# path whose last record is B is changing and is not checked.
#
# SEED (1), WRITERS (4), OPS (40 changes a writer), SAMPLE (200 states
# mounted and checked in guests; 0: all), BATCH (40 a boot), TORN (1: a
# torn state after each flush; 0: none), FS_MB (128), MOUNT_OPTS
# (commit=86400: the fsync log carries the fsyncs), BREAK=1 (loads twigfs
# with unordered_super=1: superblocks lose their flush and FUA; the run
# must then find broken states, and passes only if it does), CASES=0
# (leaves out the truncate cases, see cases() below),
# ABORT=0 (leaves out the abort round, see aborter() below), CP_KEEP=1
# (keep the work folder: log, records, images).
#
# Besides every flush point and its torn state, the end of the log is a
# state too: what the disk holds once the guest unmounted (after an abort:
# the aborted filesystem's last writes); it is always mounted and checked.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
seed=${SEED:-1}
writers=${WRITERS:-4}
ops=${OPS:-40}
sample=${SAMPLE:-200}
batch=${BATCH:-40}
torn=${TORN:-1}
fs_mb=${FS_MB:-128}
mopts=${MOUNT_OPTS:-commit=86400}
brk=${BREAK:-0}
cases=${CASES:-1}
abort=${ABORT:-1}
# the broken-order run counts failures of states only: no abort round
((brk)) && abort=0
lw=$top/mkfs/twigfs-logwrites
oracle=$top/scripts/crashpoints.py
fsck=$top/mkfs/fsck.twigfs
work=$(mktemp -d "${TMPDIR:-/var/tmp}/crashpoints.XXXXXX")
if [[ ${CP_KEEP:-0} == 1 ]]; then
	trap 'echo "# kept $work"' EXIT
else
	trap 'rm -rf "$work"' EXIT
fi
export QUIET=1 TIMEOUT=${TIMEOUT:-900}
unset MOUNT_OPTS
start=$SECONDS
passes=0
fails=0
# uptime_of CONSOLE: seconds the guest ran (its last kernel timestamp):
# the wait for another guest (run.sh's lock) is not the method's cost
uptime_of() { grep -ao '^\[ *[0-9]*' "$1" | tr -d '[ ' | tail -n 1 || echo 0; }
ok() { echo "PASS crashpoints-$1"; passes=$((passes + 1)); }
# with BREAK=1 failures are what the run looks for: shown, not FAIL lines
bad() {
	if ((brk)); then echo "# seen crashpoints-$1: $2"; else echo "FAIL crashpoints-$1: $2"; fi
	fails=$((fails + 1))
}
show() { if ((brk)); then sed 's/^FAIL /# seen /'; else cat; fi; }

make -s -C "$top/mkfs" all
img=$work/disk.img
mark_base=$((fs_mb * 2048))		# the first marker sector
truncate -s "${fs_mb}M" "$img"
"$top/mkfs/mkfs.twigfs" -q "$img"
truncate -s $((fs_mb + (writers + 1) * 32))M "$img"

cat >"$work/work.sh" <<'GUEST'
# set by the host above: seed writers ops base mopts brk cases abort
. /twig/crash-lib.sh
CC=/twig/twig-crashcheck
if [ "$brk" = 1 ]; then
	echo 1 >/sys/module/twigfs/parameters/unordered_super || exit 1
fi
mount -t twigfs -o "$mopts" $DEV /mnt || { echo "FAIL crashpoints-work-mount"; exit 1; }
cd /mnt || exit 1
crash_dirs "$writers"

# writer P ROUND: writer P's changes in ROUND, as the host planned them
# (scripts/crashpoints.py plan); each writer has 65536 marker sectors,
# half of them a round (so OPS stays below about 10000).  In
# round 1, the abort round, the fsyncs of "done" are made but recorded
# elsewhere: a data write that fail_after fails outside a handle aborts
# nothing, its pages stay clean and uptodate, and the next fsync, on a
# new descriptor, returns 0 (an error is reported once), so a record of
# what the page cache holds would not be a promise the disk made.  Round
# 1 thus only begins changes, and the paths it touches are not checked
# from then on; the paths fsync'd in round 0 and left alone must come
# through the abort.
writer() {
	p=$1
	rec=/results/rec-w$p
	drec=$rec
	[ "$2" = 1 ] && drec=/results/round1-w$p
	b0=$((base + p * 65536 + $2 * 32768))
	n=0
	while read -r op f a b; do
		n=$((n + 1)); s=$((b0 + n))
		case $op in
		r)	[ -f "$f" ] && [ "$f" != "$a" ] || continue
			$CC begin $rec $DEV $s "$f" "$a" || continue
			mv "$f" "$a"
			n=$((n + 1)); s=$((b0 + n))
			$CC done $drec $DEV $s "$a" "$(dirname "$a")" "$(dirname "$f")" || continue
			n=$((n + 1)); s=$((b0 + n))
			$CC done $drec $DEV $s "$f" "$(dirname "$f")"
			continue ;;
		u)	[ -f "$f" ] || continue
			$CC begin $rec $DEV $s "$f" || continue
			rm -f "$f"
			n=$((n + 1)); s=$((b0 + n))
			$CC done $drec $DEV $s "$f" "$(dirname "$f")"
			continue ;;
		l)	$CC begin $rec $DEV $s "$f" "$a" || continue
			head -c "$b" /dev/urandom >"$f"
			ln "$f" "$a"
			n=$((n + 1)); s=$((b0 + n))
			$CC done $drec $DEV $s "$f" "$(dirname "$f")" || continue
			n=$((n + 1)); s=$((b0 + n))
			$CC done $drec $DEV $s "$a" "$(dirname "$a")"
			continue ;;
		k)	[ -f "$f" ] && [ -f "$a" ] || continue
			$CC begin $rec $DEV $s "$f" "$a" || continue
			rm -f "$a"
			n=$((n + 1)); s=$((b0 + n))
			$CC done $drec $DEV $s "$a" "$(dirname "$a")" || continue
			n=$((n + 1)); s=$((b0 + n))
			$CC done $drec $DEV $s "$f"
			continue ;;
		esac
		$CC begin $rec $DEV $s "$f" || continue
		case $op in
		w|x|n|a|t) crash_change "$op" "$f" "$a" "$b" "$p" ;;
		F)	[ -f "$f" ] || continue
			case $((n % 3)) in
			0) $H fallocate 0 "$f" "$a" "$b" ;;
			1) $H fallocate keep-size "$f" "$a" "$b" ;;
			*) $H fallocate punch-hole "$f" "$a" "$b" ;;
			esac >/dev/null 2>&1 ;;
		s)	[ -f "$f" ] || continue
			$H setxattr "$f" user.cp "@$a" 0 >/dev/null ;;
		d)	head -c "$b" /dev/urandom >/tmp/buf$p
			$H dio-write "$f" "$a" "$b" 0 /tmp/buf$p >/dev/null ;;
		esac
		[ "$op" = x ] && continue
		n=$((n + 1)); s=$((b0 + n))
		$CC done $drec $DEV $s "$f" "$(dirname "$f")"
	done </results/plan-w$p-r$2
}
# The truncate cases, beside the writers (whose directory fsyncs
# commit): a truncate to mid-page committed without writeback of the
# zeroed tail (a "Z" record: the check extends the file and wants zeroes
# past the cut), and a truncate of a file of 1500 extent items, several
# handles with commits between them (fsck of every state sees an extent
# past i_size); and six truncates of 300 extents and 8 MiB to mid-page
# with a reader updating the atime and a sync(2) loop beside them (before
# trunc_floor, the tail's writeback or ->dirty_inode stored the new size
# before the first handle dropped anything, and a commit kept it).
cases() {
	p=$writers
	rec=/results/rec-w$p
	n=1; s=$((base + p * 65536 + n))
	mkdir -p crash/cases
	f=crash/cases/tail
	$CC begin $rec $DEV $s $f || return
	head -c 16384 /dev/urandom | tr '\0' z >$f
	n=$((n + 1)); s=$((base + p * 65536 + n))
	$CC done $rec $DEV $s $f crash/cases || return
	n=$((n + 1)); s=$((base + p * 65536 + n))
	$CC begin $rec $DEV $s $f || return
	$G/truncate -s 5000 $f
	n=$((n + 1)); s=$((base + p * 65536 + n))
	$CC ztail $rec $DEV $s $f 5000 crash/cases || return
	g=crash/cases/many
	n=$((n + 1)); s=$((base + p * 65536 + n))
	$CC begin $rec $DEV $s $g || return
	$CC spray $g 1500
	n=$((n + 1)); s=$((base + p * 65536 + n))
	$CC done $rec $DEV $s $g crash/cases || return
	n=$((n + 1)); s=$((base + p * 65536 + n))
	$CC begin $rec $DEV $s $g || return
	( while [ ! -e /tmp/cut-done ]; do $H fsync crash/cases >/dev/null; done ) &
	$G/truncate -s 0 $g
	touch /tmp/cut-done
	wait $!
	n=$((n + 1)); s=$((base + p * 65536 + n))
	$CC done $rec $DEV $s $g crash/cases || return
	# the race: a file of 300 extents cut to mid-page while a reader
	# updates its atime (->dirty_inode: an inode update taking neither
	# i_rwsem nor extent_mutex; a strictatime bind mount, so every read
	# does) and a sync(2) loop commits, before or between the handles
	h=crash/cases/race
	if ! mkdir -p /tmp/sa || ! mount --bind /mnt /tmp/sa ||
		! mount -o remount,bind,strictatime /tmp/sa; then
		echo "FAIL crashpoints-race-mount: no strictatime bind mount"
		return
	fi
	r=0
	while [ $r -lt 6 ]; do
		n=$((n + 1)); s=$((base + p * 65536 + n))
		$CC begin $rec $DEV $s $h || break
		$CC spray $h 300
		# 8 MiB of cached pages past the cut: truncate_setsize() takes
		# long to drop them after setting the new size
		tr '\0' r </dev/zero | head -c 8388608 >>$h
		n=$((n + 1)); s=$((base + p * 65536 + n))
		$CC done $rec $DEV $s $h crash/cases || break
		n=$((n + 1)); s=$((base + p * 65536 + n))
		$CC begin $rec $DEV $s $h || break
		rm -f /tmp/race-done
		( while [ ! -e /tmp/race-done ]; do sync; done ) &
		sp=$!
		( while [ ! -e /tmp/race-done ]; do head -c 1 /tmp/sa/$h >/dev/null; done ) &
		$G/truncate -s $((5000 + r * 4096)) $h
		touch /tmp/race-done
		wait $sp $!
		n=$((n + 1)); s=$((base + p * 65536 + n))
		$CC ztail $rec $DEV $s $h $((5000 + r * 4096)) crash/cases || break
		r=$((r + 1))
	done
	umount /tmp/sa
}
# Aborts are crash points too: a second round of the writers, half as
# long, while fail_after fails a step of some handle (a tree search or
# allocation, a block read or write, a commit) and so aborts its
# transaction.  From then on nothing may reach the disk but what the last
# commit and the fsync log hold: the checks at every later state, the end
# of the log among them, hold the aborted filesystem to the fsyncs of
# round 0 (round 1 records none, see writer()).  A step failed outside a
# handle aborts nothing, so the aborter arms it again, and makes changes
# of its own should the writers be done.  Its marker, written within a
# second after the abort, places it in the log (an upper bound).
aborter() {
	knob=/sys/fs/twigfs/$(basename $DEV)/fail_after
	i=0
	while [ $i -lt 60 ] && ! grep -q "^$DEV /mnt twigfs ro" /proc/mounts; do
		[ "$(cat $knob)" = 0 ] && echo $(((seed * 7 + i) % 12 + 1)) >$knob
		echo "$i" >crash/shared/abort-$i 2>/dev/null
		$H fsync crash/shared >/dev/null 2>&1
		i=$((i + 1))
		sleep 1
	done
	echo 0 >$knob
	if grep -q "^$DEV /mnt twigfs ro" /proc/mounts; then
		echo "# abort: after $i arms; $(dmesg | grep -m 1 'aborted (error' | sed 's/^\[[^]]*\] //')"
		$CC begin /results/abort-mark $DEV $((base + writers * 65536 + 65000)) abort
	else
		echo "FAIL crashpoints-abort: no transaction aborted after $i arms"
	fi
}
crash_writers "$writers" 0
[ "$cases" = 1 ] && cases &
wait
if [ "$abort" = 1 ]; then
	crash_writers "$writers" 1
	aborter &
	wait
fi
cd /
umount /mnt
echo "# work: $(cat /results/rec-w* | grep -c '^[SG]') fsyncs recorded, $(cat /results/rec-w* | grep -c '^B') changes begun"
GUEST

echo "== crashpoints: SEED=$seed WRITERS=$writers OPS=$ops SAMPLE=$sample BATCH=$batch TORN=$torn BREAK=$brk"
rc=0
{ echo "seed=$seed writers=$writers ops=$ops base=$mark_base mopts=$mopts brk=$brk cases=$cases abort=$abort"; cat "$work/work.sh"; } >"$work/job.sh"
# the writers' plans, read by the guest from /results
mkdir -p "$work/w"
for ((p = 0; p < writers; p++)); do
	"$oracle" plan "$seed" "$p" 0 "$ops" >"$work/w/plan-w$p-r0"
	if ((abort)); then
		"$oracle" plan "$seed" "$p" 1 $((ops / 2)) >"$work/w/plan-w$p-r1"
	fi
done
DISK=$img OUT=$work/w LOG_WRITES=$work/log MOUNT=0 "$top/qemu/guest.sh" "$work/job.sh" >"$work/w.log" 2>&1 || rc=$?
grep -aE '^(PASS|FAIL|#) ' "$work/w/console.log" || true
fails=$((fails + $(grep -ac '^FAIL ' "$work/w/console.log" || true)))
if ((rc != 0)); then
	bad work "the workload's guest exited $rc; $(tail -n 3 "$work/w.log" | tr '\n' ' ')"
	tail -n 20 "$work/w/console.log" 2>/dev/null | sed 's/^/    /'
	exit 1
fi
wsecs=$(uptime_of "$work/w/console.log")
"$lw" list "$work/log" >"$work/entries"
tail -n 1 "$work/entries"
# the states: after each flush entry (the initial image counts as flushed
# at entry 0: with no flush for a long stretch, as with BREAK=1, the torn
# state after it is what breaks) and torn after it; markers, flushes,
# states and the seeded sample in $work
out=$("$oracle" states "$work" "$mark_base" "$torn" "$seed" "$sample")
read -r nr ndup <<<"$out"
if ((ndup > 0)); then
	bad markers "$ndup marker sectors were written twice"
fi
cat "$work"/w/rec-w* >"$work/records"
nrec=$(wc -l <"$work/records")
nmark=$(wc -l <"$work/markers")
if ((nmark < nrec / 2 || nrec == 0)); then
	bad markers "$nrec records but $nmark marker sectors in the log"
fi
nstates=$(wc -l <"$work/states")
if ((abort)); then
	out=$("$oracle" abort "$work" $((mark_base + writers * 65536 + 65000)))
	if [[ -z $out ]]; then
		bad abort "no abort in the log (no abort marker)"
	else
		read -r ab nab nin <<<"$out"
		echo "# abort: log entry $ab; crash states past it: $nab, and $nin spanning it, and the end of the log"
		ok "abort-in-the-log"
	fi
fi
echo "# $nr log entries, $(wc -l <"$work/flushes") flushes, $nstates crash states ($(grep -c ' 1$' "$work/states" || true) torn); all get fsck, $(wc -l <"$work/sample") sampled are mounted and checked in guests; $nrec records, $nmark markers"

cat >"$work/check.sh" <<'GUEST'
# set by the host above: fs_bytes
CC=/twig/twig-crashcheck
n=0 good=0 paths=0 forged=
while read -r slot name; do
	n=$((n + 1))
	if ! losetup -o $((slot * fs_bytes)) /dev/loop0 /dev/vda; then
		echo "FAIL crashpoints-$name: losetup"
		continue
	fi
	if ! mount -t twigfs /dev/loop0 /mnt 2>/tmp/err; then
		echo "FAIL crashpoints-$name: mount: $(cat /tmp/err) $(dmesg | tail -n 3 | tr '\n' ' ')"
		losetup -d /dev/loop0
		continue
	fi
	if out=$($CC verify /mnt /results/$slot.expect); then
		good=$((good + 1))
		paths=$((paths + $(echo "$out" | awk '/^checked/ { print $2 }')))
	else
		echo "FAIL crashpoints-$name: $(echo "$out" | tr '\n' ' ')"
	fi
	if [ -z "$forged" ] && grep -q '^S ' /results/$slot.expect; then
		forged=1
		grep -m 1 '^S ' /results/$slot.expect | awk '{ $3 = "0:0:0:-"; print }' >/tmp/forged
		if $CC verify /mnt /tmp/forged >/dev/null; then
			echo "FAIL crashpoints-check-sees-a-wrong-file: the forged record passed"
		else
			echo "PASS crashpoints-check-sees-a-wrong-file"
		fi
	fi
	umount /mnt
	if ! fsck.twigfs -n /dev/loop0 >/tmp/fsck.out 2>&1; then
		good=$((good - 1))
		echo "FAIL crashpoints-$name-fsck-after-replay: $(head -n 3 /tmp/fsck.out | tr '\n' ' ')"
	fi
	losetup -d /dev/loop0
done </results/slots
echo "# boot: $good of $n states replayed and checked, $paths paths"
[ "$good" = "$n" ] && echo "PASS crashpoints-replay-and-check ($n states, $paths fsync'd paths)"
exit 0
GUEST

guest_states=0
guest_good=0
gsecs=0
gwall=0
boots=0
# boot_check: mount and check the states packed so far
boot_check() {
	local out=$work/c$boots rc=0 t0=$SECONDS
	[[ -s $work/pack/slots ]] || return 0
	boots=$((boots + 1))
	{ echo "fs_bytes=$((fs_mb * 1048576))"; cat "$work/check.sh"; } >"$work/cjob.sh"
	DISK=$work/pack.img OUT=$work/pack MOUNT=0 "$top/qemu/guest.sh" "$work/cjob.sh" >"$work/c.log" 2>&1 || rc=$?
	grep -aE '^(PASS|FAIL) |^# ' "$work/pack/console.log" | grep -v '^PASS crashpoints-replay-and-check' | head -n 40 | show || true
	guest_states=$((guest_states + $(wc -l <"$work/pack/slots")))
	gsecs=$((gsecs + $(uptime_of "$work/pack/console.log")))
	guest_good=$((guest_good + $(grep -a '^# boot:' "$work/pack/console.log" | awk '{ print $3 }' || echo 0)))
	fails=$((fails + $(grep -ac '^FAIL ' "$work/pack/console.log" || true)))
	passes=$((passes + $(grep -ac '^PASS crashpoints-check' "$work/pack/console.log" || true)))
	if ((rc != 0)); then
		bad "check-boot-$boots" "guest exited $rc; $(tail -n 3 "$work/c.log" | tr '\n' ' ')"
		grep -aE 'BUG|WARNING|Oops|twigfs' "$work/pack/console.log" | head -n 10 | sed 's/^/    /'
	fi
	mkdir -p "$out"
	cp "$work/pack/console.log" "$out/" 2>/dev/null || true
	rm -rf "$work/pack" "$work/pack.img"
	gwall=$((gwall + SECONDS - t0))
}

declare -A sampled=()
while read -r f nx t; do sampled["$f $t"]=1; done <"$work/sample"
cur=$work/cur.img
cp --sparse=always "$work/log.base" "$cur"
at=0
fsck_ok=0
fsck_bad=0
nstate=0
slot=0
# state NAME NEXT: fsck the image as it is; pack it when sampled
state() {
	local name=$1 nx=$2 key=$3
	nstate=$((nstate + 1))
	if "$fsck" -n "$cur" >"$work/fsck.out" 2>&1; then
		fsck_ok=$((fsck_ok + 1))
	else
		fsck_bad=$((fsck_bad + 1))
		if ((fsck_bad <= 10)); then
			bad "$name-fsck" "$(head -n 3 "$work/fsck.out" | tr '\n' ' ')"
		else
			fails=$((fails + 1))
		fi
	fi
	[[ -n ${sampled[$key]:-} ]] || return 0
	mkdir -p "$work/pack"
	dd if="$cur" of="$work/pack.img" bs=1M count="$fs_mb" seek=$((slot * fs_mb)) \
		conv=sparse,notrunc status=none
	"$oracle" expect "$work" "$nx" >"$work/pack/$slot.expect"
	echo "$slot $name" >>"$work/pack/slots"
	slot=$((slot + 1))
	if ((slot == batch)); then
		boot_check
		slot=0
	fi
}
hstart=$SECONDS
while read -r f nx t; do
	if ((t == 0)); then
		"$lw" replay "$work/log" "$cur" --from "$at" --to "$f" >/dev/null
		at=$f
		state "at-$f" "$nx" "$f 0"
	else
		"$lw" replay "$work/log" "$cur" --from "$f" --to $((nx - 1)) --torn $((seed * 100000 + f)) >/dev/null
		state "torn-after-$f" "$nx" "$f 1"
		# all of those writes in order: the state before the next flush
		"$lw" replay "$work/log" "$cur" --from "$f" --to $((nx - 1)) >/dev/null
		at=$((nx - 1))
	fi
done <"$work/states"
# the end of the log: the disk as the guest left it
"$lw" replay "$work/log" "$cur" --from "$at" --to "$nr" >/dev/null
sampled[end]=1
state end $((nr + 1)) end
hsecs=$((SECONDS - hstart - gwall))
boot_check
secs=$((SECONDS - start))
echo "# $nstate crash states: fsck clean on $fsck_ok, not on $fsck_bad; $guest_good of $guest_states mounted, replayed and checked in $boots guest boots"
busy=$((hsecs + wsecs + gsecs))
echo "# time: $secs s in all; busy $busy s (host state building and fsck $hsecs s; guests ran $wsecs s of work and $gsecs s of checks; waits for other guests excluded); per busy minute $((nstate * 60 / (busy ? busy : 1))) states fsck'd, $((guest_states * 60 / (gsecs ? gsecs : 1))) states mounted and checked per guest minute"
if ((fsck_bad == 0)); then
	ok "fsck-every-state ($nstate states)"
fi
if ((guest_states > 0 && guest_good == guest_states)); then
	ok "replay-and-check ($guest_states states)"
fi
if ((brk)); then
	# the broken order must be seen: invert the verdict
	if ((fails > 0)); then
		echo "PASS crashpoints-break-order-seen ($fails failures with unordered_super=1)"
		exit 0
	fi
	echo "FAIL crashpoints-break-order-seen: no state broke with unordered_super=1"
	exit 1
fi
echo "crashpoints: $passes passed, $fails failed"
((fails == 0))
