#!/bin/bash
# Power cuts at seeded random moments of fsync-heavy work, across boots, on
# one image (the fsync log under crashes).
#
# Each of ROUNDS boots mounts the image (replaying the log the last cut
# left), checks that every file whose fsync returned before that cut has
# exactly its fsync'd contents and that every name whose removal was
# fsync'd is gone, unmounts, runs fsck.twigfs, mounts again and starts
# WRITERS processes of work (writes at random offsets, appends, truncates,
# new files, renames and unlinks, each followed by fsync of the file or its
# directory; some writes are not synced), in their own directories and one
# shared directory.  The host kills QEMU (SIGKILL: what QEMU acknowledged
# is on the image, nothing in flight or not yet issued is) a random
# 1..CUT_MAX seconds after the work starts, runs fsck.twigfs on the cut
# image (a log may be there: the next mount replays it) and, in about one
# round in three, first boots a guest whose replay is cut before its
# superblock (the replay_crash parameter), fsck again.  A last boot checks
# the last round.  The guest writes a record before each change and one
# after its fsync returns to the results folder (9p, on the host at
# once), so a change in flight at the cut is not checked.
#
# SEED (default 1) fixes the cut moments and the work; FLAVOUR=debug runs
# it on the lockdep + KASAN kernel, whose reports fail the round.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${ROUNDS:-2}
seed=${SEED:-1}
writers=${WRITERS:-4}
cut_max=${CUT_MAX:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export QUIET=1 TIMEOUT=${TIMEOUT:-600}
img=$work/disk.img
truncate -s 2G "$img"
"$top/mkfs/mkfs.twigfs" -q "$img"
RANDOM=$seed
fails=0
passes=0

ok() { echo "PASS crash-$1"; passes=$((passes + 1)); }
bad() {
	echo "FAIL crash-$1: $2"
	fails=$((fails + 1))
}
log_root() { "$top/mkfs/twigfs-dump" "$img" | awk '$1 == "log_root" && !n++ { print $2 }'; }

# The expected state after every round so far: per path, its last record
# ("S md5 path" synced, "G - path" gone, "B - path" changing: not checked).
# A line cut short by the power cut has fewer fields or a short md5.
expect() {
	local i
	for ((i = 1; i < $1; i++)); do
		cat "$work/r$i"/rec-* 2>/dev/null || true
	done | awk 'NF == 3 && ($2 == "-" || length($2) == 32) { last[$3] = $1 " " $2 }
		END { for (p in last) if (last[p] !~ /^B/) print last[p], p }' | sort -k3
}

cat >"$work/guest.sh" <<'GUEST'
# set by the host above: round, seed, writers, work (1: work until cut)
. /twig/crash-lib.sh
cd / || exit 1
mount -t twigfs $DEV /mnt || { echo "FAIL crash-r$round-mount"; exit 1; }
if dmesg | grep -q 'replayed [0-9]* inode'; then
	echo "# r$round: $(dmesg | grep -o 'replayed [0-9]* inode.*' | tail -n 1)"
fi
# verify FILE: n (paths checked) and lost (paths not as fsync'd left them)
verify() {
	n=0 lost=0
	while read -r t h f; do
		n=$((n + 1))
		case $t in
		S)	got=$(md5sum <"/mnt/$f" 2>/dev/null | cut -d' ' -f1)
			if [ "$got" != "$h" ]; then
				lost=$((lost + 1))
				[ $lost -le 5 ] && echo "# r$round: $f: ${got:-missing}, fsync'd $h"
			fi ;;
		G)	if [ -e "/mnt/$f" ]; then
				lost=$((lost + 1))
				[ $lost -le 5 ] && echo "# r$round: $f is back after its removal was fsync'd"
			fi ;;
		esac
	done <"$1"
}
verify /results/expect
if [ $lost = 0 ]; then
	echo "PASS crash-r$round-fsynced-survive ($n paths)"
else
	echo "FAIL crash-r$round-fsynced-survive: $lost of $n paths"
fi
# the check itself: a wrong md5 for a file that is there must count
if grep -q '^S ' /results/expect; then
	grep -m 1 '^S ' /results/expect | sed 's/^S [0-9a-f]*/S 0123456789abcdef0123456789abcdef/' >/tmp/forged
	verify /tmp/forged >/dev/null
	if [ $lost = 1 ]; then
		echo "PASS crash-r$round-check-sees-a-wrong-md5"
	else
		echo "FAIL crash-r$round-check-sees-a-wrong-md5: lost $lost"
	fi
fi
umount /mnt
if fsck.twigfs -n $DEV >/tmp/fsck.out 2>&1; then
	echo "PASS crash-r$round-fsck-after-replay"
else
	echo "FAIL crash-r$round-fsck-after-replay: $(head -n 5 /tmp/fsck.out | tr '\n' ' ')"
fi
[ "$work" = 1 ] || exit 0
mount -t twigfs -o commit=86400 $DEV /mnt || exit 1
cd /mnt || exit 1
crash_dirs "$writers"

# writer P: its plan, one operation a line, each recorded before ("B") and
# after its fsync returned ("S" with the md5, "G" for a removed name)
writer() {
	p=$1
	rec=/results/rec-w$p
	awk -v s=$((seed * 1000 + round * 10 + p)) -v p="$p" -v r="$round" 'BEGIN {
		srand(s)
		for (i = 0; i < 20000; i++) {
			d = rand() < 0.3 ? "crash/shared" : "crash/w" p
			f = d "/f" p "-" int(rand() * 12)
			x = rand()
			off = int(rand() * 64) * 4096 + (rand() < 0.5 ? int(rand() * 4096) : 0)
			len = int(rand() * 65536) + 1
			if (x < 0.35) print "w", f, off, len
			else if (x < 0.45) print "a", f, 0, int(rand() * 3000) + 1
			else if (x < 0.55) print "t", f, int(rand() * 300000), 0
			else if (x < 0.65) print "n", d "/n" p "-" r "-" i, 0, len
			else if (x < 0.75) print "r", f, d "/f" p "-" int(rand() * 12), 0
			else if (x < 0.85) print "u", f, 0, 0
			else print "x", f, off, len
		}
	}' | while read -r op f a b; do
		case $op in
		r)	[ -f "$f" ] && [ "$f" != "$a" ] || continue
			echo "B - $f" >>$rec
			echo "B - $a" >>$rec
			mv "$f" "$a"
			$H fsync "$a" >/dev/null && $H fsync "$(dirname "$a")" >/dev/null &&
				echo "G - $f" >>$rec &&
				echo "S $(md5sum <"$a" | cut -d' ' -f1) $a" >>$rec
			continue ;;
		u)	[ -f "$f" ] || continue
			echo "B - $f" >>$rec
			rm -f "$f"
			$H fsync "$(dirname "$f")" >/dev/null && echo "G - $f" >>$rec
			continue ;;
		esac
		echo "B - $f" >>$rec
		crash_change "$op" "$f" "$a" "$b" "$p"
		[ "$op" = x ] && continue
		$H fsync "$f" >/dev/null &&
			echo "S $(md5sum <"$f" | cut -d' ' -f1) $f" >>$rec
	done
}
crash_writers "$writers"
echo go >/results/started
wait
GUEST

# boot ROUND WORK: the check (and the work, cut at a random moment)
boot() {
	local r=$1 w=$2 out=$work/r$1 cut=$((RANDOM % cut_max + 1)) rc=0 t=0
	mkdir -p "$out"
	expect "$r" >"$out/expect"
	{ echo "round=$r seed=$seed writers=$writers work=$w"; cat "$work/guest.sh"; } >"$work/job.sh"
	DISK=$img OUT=$out MOUNT=0 "$top/qemu/guest.sh" "$work/job.sh" >"$out/host.log" 2>&1 &
	local gpid=$!
	if ((w)); then
		while [[ ! -e $out/started ]] && kill -0 "$gpid" 2>/dev/null && ((t < 3000)); do
			sleep 0.1
			t=$((t + 1))
		done
		if [[ -e $out/started ]]; then
			sleep "$cut"
			pkill -KILL -f -- "path=$out,mount_tag=results" || true
		fi
	fi
	wait "$gpid" || rc=$?
	grep -aE '^(PASS|FAIL) |^# ' "$out/console.log" || true
	passes=$((passes + $(grep -ac '^PASS ' "$out/console.log" || true)))
	fails=$((fails + $(grep -ac '^FAIL ' "$out/console.log" || true)))
	if ((w)); then
		if [[ -e $out/started ]] && ((rc == 126)); then
			ok "r$r-cut (${cut} s into the work, $(cat "$out"/rec-* 2>/dev/null | grep -c '^[SG]') fsyncs recorded)"
		else
			bad "r$r-cut" "guest.sh exited $rc before the cut; $(tail -n 3 "$out/host.log" | tr '\n' ' ')"
		fi
	elif ((rc != 0)); then
		bad "r$r-check" "guest.sh exited $rc; $(tail -n 3 "$out/host.log" | tr '\n' ' ')"
	fi
}

cat >"$work/replay-cut.sh" <<'GUEST'
echo 1 >/sys/module/twigfs/parameters/replay_crash
if mount -t twigfs /dev/vda /mnt; then
	umount /mnt	# nothing to replay
	echo "# no log to replay"
fi
exit 0
GUEST

for ((r = 1; r <= rounds + 1; r++)); do
	if ((r > 1)); then
		if "$top/mkfs/fsck.twigfs" -n "$img" >"$work/fsck.out" 2>&1; then
			ok "r$r-fsck-before-replay$(grep -q 'fsync log' "$work/fsck.out" && echo ' (a log to replay)')"
		else
			bad "r$r-fsck-before-replay" "$(head -n 5 "$work/fsck.out" | tr '\n' ' ')"
		fi
		if ((RANDOM % 3 == 0)); then
			root=$(log_root)
			rc=0
			DISK=$img OUT=$work/replay$r MOUNT=0 "$top/qemu/guest.sh" "$work/replay-cut.sh" >"$work/replay$r.log" 2>&1 || rc=$?
			if ((rc == 0)) && "$top/mkfs/fsck.twigfs" -n "$img" >/dev/null 2>&1 &&
			   [[ $(log_root) == "$root" ]]; then
				ok "r$r-replay-cut (fsck clean, the log still named)"
			else
				bad "r$r-replay-cut" "rc $rc, log_root $root -> $(log_root)"
			fi
		fi
	fi
	boot "$r" $((r <= rounds))
done
echo "crash: $passes passed, $fails failed (ROUNDS=$rounds SEED=$seed WRITERS=$writers)"
((fails == 0))
