#!/bin/sh
# The dcache under the lookup benchmark.  twig-lookup stats a name nobody
# created at every operation.  With /sys/fs/twigfs/<dev>/negative_dentries
# at its default (1) each of those lookups leaves a negative dentry behind,
# as on any filesystem: the dcache grows by one dentry per operation for
# the whole run.  At 0 twigfs has the dcache forget them, so the dcache
# stays where it was however long the run, while every stat still reaches
# twigfs's lookup (the mount's lookup counter rises with the operations).
# The create-own creator (twig-create: a file created and the oldest
# removed, over and over) leaves a negative dentry per removed name the
# same way, and at 0 none.  Names that exist, are created after a failed
# lookup, or are removed must behave the same either way.
L=$(dirname "$0")/twig-lib.sh
[ -f "$L" ] || L=/twig/twig-lib.sh
# shellcheck source=qemu/tests/twig-lib.sh
. "$L"

LOOKUP=$HERE/twig-lookup
[ -x "$LOOKUP" ] || LOOKUP=/twig/twig-lookup
CREATE=$HERE/twig-create
[ -x "$CREATE" ] || CREATE=/twig/twig-create
sys=/sys/fs/twigfs/$(basename "$DEV")
knob=$sys/negative_dentries
secs=${LOOKUP_SECS:-20}
procs=50
files=1000

# dentry-state: nr_dentry nr_unused age_limit want_pages nr_negative dummy
dentries() { cut -f1 /proc/sys/fs/dentry-state; }
negatives() { cut -f5 /proc/sys/fs/dentry-state; }
fs_lookups() { awk '$1 == "lookup" { print $2 }' "$sys/ops"; }

# lookup_run <dir> <seconds>: sets d_dentries, d_negative, d_fs_lookups
# (the changes over the run) and lookups (twig-lookup's own count).
lookup_run() {
	mkdir -p "$1" || return 1
	sync
	n0=$(dentries) neg0=$(negatives) fl0=$(fs_lookups)
	"$LOOKUP" "$1" "$procs" "$2" "$files" >/tmp/lookup.out 2>&1 || return 1
	d_dentries=$(($(dentries) - n0))
	d_negative=$(($(negatives) - neg0))
	d_fs_lookups=$(($(fs_lookups) - fl0))
	lookups=$(awk '$1 == "lookups" { print $2 }' /tmp/lookup.out)
	echo "$(cat /tmp/lookup.out): dentries $n0 -> $((n0 + d_dentries)), negative $neg0 -> $((neg0 + d_negative)), twigfs lookups +$d_fs_lookups"
}

fresh_twig "$OPTS" || { fail mount "mkfs or mount failed"; finish; }
check knob-exists [ -w "$knob" ]
eq knob-default 1 "$(cat "$knob")"
expect_err knob-rejects-junk "invalid" sh -c "echo maybe >$knob"

echo 0 >"$knob"
eq knob-off 0 "$(cat "$knob")"
# The VFS's view of names with negative dentries dropped.
f=$MNT/appears
check missing-before [ ! -e "$f" ]
check create-after-miss touch "$f"
check present-after-create [ -e "$f" ]
check remove rm "$f"
check missing-after-remove [ ! -e "$f" ]

if lookup_run "$MNT/off" "$secs"; then
	pass run-off
	check off-many-lookups [ "${lookups:-0}" -ge 10000 ]
	# every stat went to twigfs (the files' creates add a lookup each)
	check off-reach-twigfs [ "$d_fs_lookups" -ge "$lookups" ]
	# the files' dentries and a few in flight: none per lookup
	check off-negative-bounded [ "$d_negative" -le "$procs" ]
	check off-dentries-bounded [ "$d_dentries" -le $((files + 2 * procs)) ]
else
	fail run-off "$(tail -n 3 /tmp/lookup.out | tr '\n' ' ')"
fi

# 10 creators for 10 s, 100 files each kept
n0=$(dentries) neg0=$(negatives)
if mkdir -p "$MNT/own" && "$CREATE" "$MNT/own" 10 10 100 >/tmp/create.out 2>&1; then
	d_dentries=$(($(dentries) - n0))
	d_negative=$(($(negatives) - neg0))
	creates=$(awk '$1 == "creates" { print $2 }' /tmp/create.out)
	echo "$(tail -n 1 /tmp/create.out): dentries $n0 -> $((n0 + d_dentries)), negative $neg0 -> $((neg0 + d_negative))"
	pass create-run
	check create-many [ "${creates:-0}" -ge 1000 ]
	eq create-kept 100 "$(find "$MNT/own/d9" -type f | wc -l)"
	check create-negative-bounded [ "$d_negative" -le 10 ]
	# the directories and their files, nothing per removed name
	check create-dentries-bounded [ "$d_dentries" -le $((10 * 101 + 20)) ]
else
	fail create-run "$(tail -n 3 /tmp/create.out | tr '\n' ' ')"
fi

# Back to the default: one negative dentry per lookup again, as before.
echo 1 >"$knob"
eq knob-on 1 "$(cat "$knob")"
if lookup_run "$MNT/on" $((secs / 2)); then
	pass run-on
	check on-negative-per-lookup [ "$d_negative" -ge $((lookups * 9 / 10)) ]
	# a name looked up again is answered by the dcache, not twigfs
	fl0=$(fs_lookups)
	stat "$MNT/on/miss.0.0" >/dev/null 2>&1
	eq on-cached-miss 0 $(($(fs_lookups) - fl0))
else
	fail run-on "$(tail -n 3 /tmp/lookup.out | tr '\n' ' ')"
fi
finish
