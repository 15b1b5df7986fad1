#!/bin/sh
# Damaged images against the module: scripts/test-crafted.sh
# puts gzipped images and a list of names to run ("todo") in $CRAFTED_DIR
# (/results/crafted).  Each image is loop-mounted read-only and walked, then
# read-write, walked, written, renamed and synced, unmounted, checked by
# fsck (while every file is still there), then mounted read-write again,
# emptied and synced; every step is bounded in time.  Allowed: refused at
# mount, errors on access, or correct behaviour.  A failure: a kernel
# report in dmesg (oops, WARNING, KASAN, lockup...), a step that does not
# finish, a failed umount, or, after either rw mount, fsck.twigfs finding a
# block or sector in use freed (more such problems than before), or any
# problem on an image that was clean.
# Images the corpus names in $CRAFTED_DIR/expect ("NAME OUTCOMES", an
# extended regex) fail with any other outcome.
# One line per image: "PASS crafted-NAME: refused|errors|clean (...)" or
# "FAIL crafted-NAME: why"; "crafted: begin NAME" before each, so that the
# host can name the image a dead guest was processing.  A step that never
# finishes reboots the guest (the host goes on from the next image).
# Without a corpus (the ordinary guest layer) it does nothing.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

DIR=${CRAFTED_DIR:-/results/crafted}
STEP_SECS=${STEP_SECS:-30}
IMAGE_SECS=${IMAGE_SECS:-150}
IMG=/tmp/crafted.img
STEPS=$(dirname "$L")/crafted-steps.sh
W=/tmp/crafted
# The kernel reports run.sh fails a run on.
REPORT='BUG:|WARNING:|Oops|general protection fault|KASAN|UBSAN|soft lockup|hard LOCKUP|blocked for more than|Kernel panic|possible recursive locking|circular locking dependency|inconsistent lock state|lockdep|trying to register non-static key'
# What fsck says when a block or sector in use was freed (and perhaps
# handed out again): more of these after the rw mount than before is a
# failure.
FREED='doubly used|referenced twice|checksum mismatch|unaccounted'

if [ ! -f "$DIR/todo" ]; then
	echo "test-crafted: no corpus in $DIR (scripts/test-crafted.sh makes one), nothing to do"
	exit 0
fi

# step NAME CMD...: runs CMD bounded by STEP_SECS, records "NAME STATUS".
step() {
	_s=$1
	shift
	echo "$_s" >"$W/step"
	timeout -s KILL "$STEP_SECS" "$@" >"$W/$_s.out" 2>&1
	_rc=$?
	echo "$_s $_rc" >>"$W/steps"
	return $_rc
}

# try MODE: losetup, mount, walk (and change, rw), umount; 0 unless a
# failure (not an error) was seen.
try() {
	mode=$1
	mnt=/tmp/crafted-$name-$mode
	mkdir -p "$mnt"
	ro=
	[ "$mode" = ro ] && ro=-r
	if ! loop=$(losetup -f) || ! losetup $ro "$loop" "$IMG"; then
		echo "cannot set up a loop device" >"$W/fail"
		return 1
	fi
	if step "$mode-mount" mount -t twigfs -o "$mode" "$loop" "$mnt"; then
		echo "$mode" >>"$W/mounted"
		step "$mode-walk" sh "$STEPS" walk "$mnt"
		if [ "$mode" = rw ]; then
			step rw-scribble sh "$STEPS" scribble "$mnt"
			step rw-sync sync
		fi
		umount_step "$mode" "$mnt"
	fi
	# the sectors every file still names must be in use: fsck now, then
	# empty the filesystem in a second rw mount
	if [ "$mode" = rw ] && grep -q rw "$W/mounted" 2>/dev/null && [ ! -s "$W/fail" ]; then
		echo fsck-mid >"$W/step"
		fsck.twigfs -n "$IMG" >"$W/fsck-mid" 2>&1
		compare_fsck "$W/fsck-mid" "the rw mount"
		if step rw2-mount mount -t twigfs -o rw "$loop" "$mnt"; then
			step rw2-remove sh "$STEPS" remove "$mnt"
			umount_step rw2 "$mnt"
		fi
	fi
	losetup -d "$loop" 2>/dev/null
	return 0
}

# umount_step MODE MNT
umount_step() {
	if ! step "$1-umount" umount "$2"; then
		echo "umount of the $1 mount failed: $(head -c 120 "$W/$1-umount.out"); users: $(users_of "$2")" >"$W/fail"
		umount -l "$2" 2>/dev/null
	fi
}

# compare_fsck FILE WHAT: a failure if fsck's FILE has more freed-in-use
# problems than before the rw mounts, or any problem on a clean image.
compare_fsck() {
	if [ "$(problems "$1" "$FREED")" -gt "$(problems "$W/fsck-before" "$FREED")" ]; then
		echo "a block in use was freed by $2: $(grep -m 1 -E "$FREED" "$1" | cut -c1-200)" >>"$W/fail"
	elif [ "$(problems "$W/fsck-before")" = 0 ] && [ "$(problems "$1")" != 0 ]; then
		echo "$2 damaged a clean image: $(head -n 1 "$1" | cut -c1-200)" >>"$W/fail"
	fi
}

# users_of MNT: the processes using MNT, "pid:comm ...".
users_of() {
	for _d in /proc/[0-9]*; do
		for _l in "$_d/cwd" "$_d"/fd/*; do
			case $(readlink "$_l" 2>/dev/null) in
			"$1" | "$1"/*)
				printf '%s:%s ' "${_d#/proc/}" "$(cat "$_d/comm" 2>/dev/null)"
				break
				;;
			esac
		done
	done
}

# problems FILE [REGEX]: how many fsck problems (matching REGEX) FILE has,
# "-" if there is no such file.
problems() {
	if [ -f "$1" ]; then
		grep '^fsck.twigfs: ' "$1" | grep -cE "${2:-.}"
	else
		echo -
	fi
}

# One image, run in the background under the watchdog.
work() {
	fsck.twigfs -n "$IMG" >"$W/fsck-before" 2>&1
	try ro
	try rw
	if grep -q rw "$W/mounted" 2>/dev/null; then
		echo fsck-after >"$W/step"
		fsck.twigfs -n "$IMG" >"$W/fsck-after" 2>&1
		[ -s "$W/fail" ] || compare_fsck "$W/fsck-after" "emptying it"
	fi
}

# verdict NAME: the PASS/FAIL line from what work() left in $W.
verdict() {
	dmesg | sed 's/^\[[ 0-9.]*\] //' >"$W/dmesg"
	if grep -qE "$REPORT" "$W/dmesg"; then
		echo "kernel report: $(grep -m 1 -E "$REPORT" "$W/dmesg" | cut -c1-160)" >>"$W/fail"
	fi
	timeouts=$(awk '$2 == 137 { printf "%s%s", s, $1; s = " " }' "$W/steps" 2>/dev/null)
	[ -n "$timeouts" ] && echo "step did not finish in $STEP_SECS s: $timeouts" >>"$W/fail"
	steps=$(awk '{ printf "%s%s=%s", s, $1, $2; s = " " }' "$W/steps" 2>/dev/null)
	if [ -s "$W/fail" ]; then
		fail "$1" "$(head -n 1 "$W/fail") [$steps]"
		# what is left running or mounted would skew the next images
		if [ -n "$timeouts" ] || grep -q umount "$W/fail"; then
			echo "test-crafted: rebooting for a clean kernel"
			echo b >/proc/sysrq-trigger
			sleep 10
		fi
		return
	fi
	if [ ! -s "$W/mounted" ]; then
		outcome=refused
	elif awk '$2 != 0 { bad = 1 } END { exit !bad }' "$W/steps"; then
		outcome=errors
	else
		outcome=clean
	fi
	# a damage the module must see (the corpus's EXPECT): taking the
	# image as it is fails, whatever fsck says afterwards
	allowed=$(awk -v n="$1" '$1 == n { print $2 }' "$DIR/expect" 2>/dev/null)
	if [ -n "$allowed" ] && ! echo "$outcome" | grep -qxE "$allowed"; then
		fail "$1" "$outcome, expected $allowed [$steps]"
		return
	fi
	pass "$1: $outcome (fsck $(problems "$W/fsck-before") problems before, $(problems "$W/fsck-mid") after the rw mount, $(problems "$W/fsck-after") after emptying; $steps)"
}

while read -r name; do
	[ -n "$name" ] || continue
	echo "crafted: begin $name"
	echo "twig-crafted: begin $name" >/dev/kmsg
	[ "$name" = "${CRAFTED_CRASH:-}" ] && echo c >/proc/sysrq-trigger
	rm -rf "$W" "$IMG"
	mkdir -p "$W"
	if ! zcat "$DIR/$name.img.gz" >"$IMG"; then
		fail "$name" "cannot unpack $DIR/$name.img.gz"
		continue
	fi
	# A fresh module: a WARN_ON_ONCE that fired on an earlier image would
	# not report this one.
	if ! grep -q ' twigfs ' /proc/mounts && rmmod twigfs 2>/dev/null; then
		insmod "${TWIG_MODULE:-/lib/twigfs/twigfs.ko}" ||
			echo "test-crafted: cannot reload twigfs"
	fi
	dmesg -c >/dev/null
	work &
	pid=$!
	(
		sleep "$IMAGE_SECS"
		echo "FAIL crafted-$name: hang: step '$(cat "$W/step")' still running after $IMAGE_SECS s; rebooting"
		echo "twig-crafted: $name hung in $(cat "$W/step")" >/dev/kmsg
		echo b >/proc/sysrq-trigger
	) &
	dog=$!
	wait "$pid"
	kill "$dog" 2>/dev/null
	verdict "$name"
	# for reading later: what fsck said before and after
	mkdir -p "$DIR/out"
	{
		echo "== fsck before"
		head -n 20 "$W/fsck-before"
		echo "== fsck after the rw mount"
		head -n 20 "$W/fsck-mid" 2>/dev/null
		echo "== fsck after emptying it"
		head -n 20 "$W/fsck-after" 2>/dev/null
	} >"$DIR/out/$name.fsck"
done <"$DIR/todo"
rm -f "$IMG"
finish
