#!/bin/sh
# Guest side of `make bench`: run the plan the host wrote, one run at a time,
# each on a freshly made filesystem, and leave raw outputs in the results
# share for the host (benchlib/collect.py) to read.  The create sizing
# (NFILES=auto) reads the warm-up's fio and fs_mark rates with
# create-rate.awk, the parse the collector runs too.
#
#   $R/params.env  the run's settings as bench.sh names them (sourced):
#                  CLIENTS DURATION NJOBS NFILES CREATE_SECS CREATE_PROBE
#                  CREATE_KEEP FSMARK_LOOPS NODESIZE LOOKUP_* SB_SECS
#                  SB_LEAD WINDOW SETTLE SAMPLE SEED ASLR BOOT; NFILES=auto
#                  sizes the create-shared and fs_mark runs from the
#                  warm-up pass so each lasts about CREATE_SECS on the
#                  baseline
#   $R/plan.txt    "<index> <workload> <config> <rep>" per line, in run order
#   $R/harness/    this script, the fio job files, twig-lookup, twig-create,
#                  twig-switch, fs_mark, configs.txt and configs.sh,
#                  create-rate.awk, wl/ (the workloads of their own:
#                  wl/<name>.sh)
#
#   $R/profile.txt the same for profiled runs (PROFILE=1), run last
#
# Writes $R/available.txt ("<config> yes|no <why>"), $R/guest-info.txt,
# $R/progress.log (one "[run i/N] ..." line per run, tailed by the host) and
# $R/raw/<index>-<workload>-<config>-r<rep>/{output,meta,twigfs-stats,
# mutex-stats}.txt.
R=${TWIG_RESULTS:-/results}
H=$R/harness
mnt=/mnt
twigdev=/dev/vda
refdev=/dev/vdb
knob=/proc/sys/kernel/mutex_spin
mstats=/sys/kernel/debug/mutex_stats
# shellcheck source=/dev/null
. "$R/params.env"
# The guest's init reports any task blocked for 30 s (tests want hangs
# found early).  A bench umount after a create run writes back some 300 MB
# of new files, and sync_inodes_sb() sleeps once for the flusher's whole
# pass: about 30 s under TCG, once reported as a hung umount.  Real hangs
# still show, later.
echo 300 >/proc/sys/kernel/hung_task_timeout_secs
# The guest's address-space randomisation (kernel.randomize_va_space, 2 by
# default): ASLR=0 places every process the same way in every boot, to
# measure how much of the spread between boots the layout makes.
[ -n "${ASLR:-}" ] && echo "$ASLR" >/proc/sys/kernel/randomize_va_space

say() { echo "$*" | tee -a "$R/progress.log"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
hms() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# What a configuration means, from the table (workloads/configs.txt):
# config_def <configuration> prints "<fs> <twigfs lock=> <spin=> <mutex
# spin policy>" (workloads/configs.sh).
config_table=$H/configs.txt
# shellcheck source=workloads/configs.sh
. "$H/configs.sh"

set_policy() {
	[ -e "$knob" ] || return 0
	echo "$1" >"$knob"
}

# Make and mount a fresh filesystem for configuration $1 at $mnt.
fresh_fs() {
	# shellcheck disable=SC2046
	set -- $(config_def "$1")
	grep -q " $mnt " /proc/mounts && umount "$mnt"
	case $1 in
	twigfs)
		mkfs.twigfs -q -f ${NODESIZE:+-n "$NODESIZE"} "$twigdev" &&
			mount -t twigfs -o "lock=$2,spin=$3" "$twigdev" "$mnt" ;;
	ext4)
		mkfs.ext4 -q -F -E nodiscard "$refdev" && mount -t ext4 "$refdev" "$mnt" ;;
	btrfs)
		mkfs.btrfs -q -f -K "$refdev" >/dev/null &&
			mount -t btrfs "$refdev" "$mnt" ;;
	tmpfs) mount -t tmpfs -o size=75% tmpfs "$mnt" ;;
	*) return 1 ;;
	esac
}

# Decide once per boot which configurations this kernel and module can run.
probe() {
	: >"$R/available.txt"
	{
		cat "$R/plan.txt" "$R/profile.txt" 2>/dev/null | cut -d' ' -f3
		sed -n 's/^mount //p' "$R/switchback.txt" 2>/dev/null
	} | grep -v '^switchback' | sed 's/#.*//' | sort -u >/tmp/configs
	while read -r c; do
		# shellcheck disable=SC2046
		set -- $(config_def "$c")
		why=
		if [ "$1" = unknown ]; then
			why="unknown configuration"
		elif [ "$4" != osq ] && [ ! -e "$knob" ]; then
			why="kernel has no $knob (spin policy patch absent)"
		elif [ -e "$knob" ] && ! set_policy "$4" 2>/dev/null; then
			why="kernel refused 'echo $4 >$knob'"
		elif [ "$1" = ext4 ] || [ "$1" = btrfs ] && [ ! -b "$refdev" ]; then
			why="no $refdev for the reference filesystems"
		elif ! fresh_fs "$c" </dev/null >/tmp/probe.out 2>&1; then
			why="mount failed: $(tail -n 1 /tmp/probe.out) $(dmesg | tail -n 1 | cut -c16-)"
		fi
		grep -q " $mnt " /proc/mounts && umount "$mnt"
		if [ -n "$why" ]; then
			echo "$c no $why" >>"$R/available.txt"
		elif [ "$1" = twigfs ] && [ "$4" = osq ] && [ ! -e "$knob" ]; then
			echo "$c yes kernel default mutex (mainline 6.1 osq spinning; no $knob)" >>"$R/available.txt"
		else
			echo "$c yes" >>"$R/available.txt"
		fi
	done </tmp/configs
}

# Reset every statistics file the module and kernel offer: any file named
# *reset* under /sys/fs/twigfs/<dev>/, and mutex_stats (written to reset).
reset_stats() {
	for d in /sys/fs/twigfs/*/; do
		[ -d "$d" ] || continue
		find "$d" -maxdepth 2 -type f -name '*reset*' | while read -r f; do
			echo 1 >"$f" 2>/dev/null
		done
	done
	[ -e "$mstats" ] && echo 0 >"$mstats" 2>/dev/null
	return 0
}

# Every readable file under /sys/fs/twigfs/<dev>/ as "== <path>" and its
# contents (report.py reads one-value files, "name value" lines and tables
# with a header line), and mutex_stats as it is.
dump_stats() {
	: >"$1/twigfs-stats.txt"
	for d in /sys/fs/twigfs/*/; do
		[ -d "$d" ] || continue
		find "$d" -type f | sort | while read -r f; do
			case $(basename "$f") in *reset*) continue ;; esac
			echo "== ${f#"$d"}"
			head -c 20000 "$f" 2>/dev/null
		done >>"$1/twigfs-stats.txt"
	done
	if [ -r "$mstats" ]; then
		cat "$mstats" >"$1/mutex-stats.txt"
	fi
}

# create_files_for <output> <workload>: files per job for CREATE_SECS of
# creating at the rate a warm-up run measured (create-rate.awk, the
# collector's parse too: fio's files over its slowest job's runtime,
# fs_mark's mean Files/sec), never fewer than CREATE_PROBE, and never more
# than half of the 4 GiB bench disk holds in 4 KiB files (5242 per job for
# 50 jobs).  Prints nothing when the run measured no rate.
create_files_for() {
	case $2 in fsmark-*) fmt=fs_mark ;; *) fmt=fio ;; esac
	rate=$(awk -v fmt="$fmt" -f "$H/create-rate.awk" "$1")
	case $rate in "ok "*) rate=${rate#ok } ;; *) return 0 ;; esac
	awk -v secs="$CREATE_SECS" -v jobs="$NJOBS" -v floor="$CREATE_PROBE" \
		-v rate="${rate%% *}" 'BEGIN {
			f = int(secs * rate / jobs + 0.999)
			cap = int(262144 / jobs)
			f = f > cap ? cap : f
			print (f < floor ? floor : f)
		}'
}

# fs_mark, Chris Mason's create benchmark: NJOBS threads each creating
# NFILES 4 KiB files (no fsync, files kept) over FSMARK_LOOPS loops, in a
# directory per thread (-t 1 per -d) or all in one (-t NJOBS).
fsmark_run() {
	per=$(((NFILES + FSMARK_LOOPS - 1) / FSMARK_LOOPS))
	if [ "$1" = fsmark-own ]; then
		set --
		i=0
		while [ "$i" -lt "$NJOBS" ]; do
			mkdir -p "$mnt/fsm/d$i" && set -- "$@" -d "$mnt/fsm/d$i"
			i=$((i + 1))
		done
		set -- "$@" -t 1
	else
		mkdir -p "$mnt/fsm" && set -- -d "$mnt/fsm" -t "$NJOBS"
	fi
	"$H/fs_mark" "$@" -n "$per" -s 4096 -S 0 -k -L "$FSMARK_LOOPS" -l /tmp/fs_mark.log
}

# PROFILE=1: perf (copied with its libraries into $H/perf/ by the host)
# runs the workload itself: perf stat -a around perf lock record -a (the
# tracepoints lock:contention_begin/end) around this script's --workload
# mode, so no signal has to stop them (a background job of a script
# ignores SIGINT).  Both count system-wide; perf.data stays in the guest's
# /tmp and only the text reports come back.
perfx() { LD_LIBRARY_PATH=$H/perf/lib "$H/perf/perf" "$@"; }

profiled_workload() {
	[ -d /sys/kernel/tracing/events ] ||
		mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
	rm -f /tmp/perf-lock.data
	perfx stat -a -x, -e context-switches,cpu-migrations,task-clock \
		-o "$2/perf-stat.txt" -- \
		"$H/perf/perf" lock record -a \
		-o /tmp/perf-lock.data -- sh "$H/guest-bench.sh" --workload "$1" "$NFILES" \
		2>"$2/perf-lock-record.txt"
	st=$?
	# perf lock prints its table on stderr
	perfx lock contention -i /tmp/perf-lock.data -E 10 -k wait_total \
		>"$2/perf-lock.txt" 2>&1
	ls -l /tmp/perf-lock.data >>"$2/perf-lock-record.txt" 2>&1
	rm -f /tmp/perf-lock.data
	return $st
}

# twigfs's negative dentries off for a workload that makes one per
# operation (lookups of new names, unlinks), which would otherwise grow
# the dcache for the whole run and bring dentry reclaim in partway.
# Other filesystems keep theirs.
no_negative_dentries() {
	neg=/sys/fs/twigfs/$(basename "$twigdev")/negative_dentries
	[ ! -w "$neg" ] || echo 0 >"$neg"
}

# run_workload <workload>[@N]: @N (SWEEP=clients) runs N dbench clients,
# lookup processes or create jobs, the creates with the same total number
# of files as NJOBS jobs would make.  Runs in a subshell: nothing leaks.
run_workload() {
	case $1 in
	*@*)
		n=${1#*@}
		NFILES=$(((NFILES * NJOBS + n - 1) / n))
		CLIENTS=$n NJOBS=$n LOOKUP_PROCS=$n
		;;
	esac
	case ${1%@*} in
	dbench)
		dbench -c /usr/share/dbench/client.txt -D "$mnt" -t "$DURATION" \
			"$CLIENTS" ;;
	create-own)
		# CREATE_SECS of creating at a steady CREATE_KEEP files per
		# directory (its fill comes first, not timed)
		no_negative_dentries
		mkdir -p "$mnt/own" &&
			"$H/twig-create" "$mnt/own" "$NJOBS" "$CREATE_SECS" "$CREATE_KEEP" ;;
	create-shared)
		mkdir -p "$mnt/shared" &&
			DIR=$mnt/shared NJOBS=$NJOBS NFILES=$NFILES \
				fio ${FIO_RUNTIME:+--runtime=$FIO_RUNTIME} \
				--output-format=json "$H/create-shared.fio" ;;
	fsmark-own | fsmark-shared)
		fsmark_run "${1%@*}" ;;
	lookup)
		no_negative_dentries
		mkdir -p "$mnt/lookup" &&
			"$H/twig-lookup" "$mnt/lookup" "$LOOKUP_PROCS" "$LOOKUP_SECS" \
				"$LOOKUP_FILES" ;;
	*)
		# a workload of its own: workloads/wl/<name>.sh
		if [ -f "$H/wl/${1%@*}.sh" ]; then
			# shellcheck source=/dev/null
			. "$H/wl/${1%@*}.sh"
		else
			echo "unknown workload $1"
			return 2
		fi ;;
	esac
}

# setup_workload <workload>: what a workload prepares before it is timed,
# done apart from it where a switchback run must not see it: create-own's
# fill (twig-create then finds the files and starts at once).
setup_workload() {
	case ${1%@*} in
	create-own)
		no_negative_dentries
		mkdir -p "$mnt/own" &&
			"$H/twig-create" "$mnt/own" "$NJOBS" 0 "$CREATE_KEEP" ;;
	esac
}

# Milliseconds of a fixed CPU-bound loop (md5 of 32 MiB of zeroes), run
# before every run: how much the host itself varies from run to run.
calibrate() {
	c0=$(uptime_s)
	head -c 33554432 /dev/zero | md5sum >/dev/null
	c1=$(uptime_s)
	awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%d", (b - a) * 1000 }'
}

# run_begin <dir> <configuration>: a fresh filesystem for it, caches
# dropped, the host calibrated, statistics reset; sets t0.  Fails (and
# says so in meta.txt) when the filesystem cannot be made or mounted.
run_begin() {
	if ! fresh_fs "$2" >"$1/output.txt" 2>&1; then
		echo "status mkfs-or-mount-failed" >>"$1/meta.txt"
		return 1
	fi
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo "calib_ms $(calibrate)" >>"$1/meta.txt"
	reset_stats
	echo "loadavg_start $(cat /proc/loadavg)" >>"$1/meta.txt"
	t0=$(uptime_s)
}

# run_end <dir> <status> <fs>: statistics and times into <dir>, unmount,
# and fsck a twigfs.
run_end() {
	t1=$(uptime_s)
	dump_stats "$1"
	{
		echo "loadavg_end $(cat /proc/loadavg)"
		echo "start $t0"
		echo "end $t1"
		echo "status $2"
	} >>"$1/meta.txt"
	# A task that has just exited may hold the mount a moment longer; one
	# that outlived its run (a workload's child after a timeout) is killed,
	# named in meta.txt: a check of a mounted filesystem would be no check.
	tries=0
	while ! umount "$mnt" 2>/tmp/umount.err; do
		tries=$((tries + 1))
		if [ "$tries" -ge 5 ]; then
			users=$(mnt_users)
			echo "umount failed: $(cat /tmp/umount.err); killed:$users" >>"$1/meta.txt"
			for sig in TERM KILL; do
				for p in $users; do kill -"$sig" "${p%%:*}" 2>/dev/null; done
				sleep 1
			done
			umount "$mnt" 2>>"$1/meta.txt" || {
				echo "fsck not-run-still-mounted" >>"$1/meta.txt"
				return
			}
			break
		fi
		sleep 1
	done
	if [ "$3" = twigfs ] && command -v fsck.twigfs >/dev/null; then
		fsck.twigfs -n "$twigdev" >"$1/fsck.txt" 2>&1
		echo "fsck $?" >>"$1/meta.txt"
	fi
}

# " pid:name" for each task whose cwd, root or an open file is on $mnt
# (busybox has no fuser).
mnt_users() {
	for d in /proc/[0-9]*; do
		for l in "$d/cwd" "$d/root" "$d"/fd/*; do
			case $(readlink "$l" 2>/dev/null) in
			"$mnt" | "$mnt"/*)
				printf ' %s:%s' "${d#/proc/}" "$(cat "$d/comm" 2>/dev/null)"
				break
				;;
			esac
		done
	done
}

one_run() {
	idx=$1 wl=$2 cfg=$3 rep=$4
	dir=${RAW:-$R/raw}/$(printf %03d "$idx")-$wl-$cfg-r$rep
	mkdir -p "$dir"
	# shellcheck disable=SC2046
	set -- $(config_def "$cfg")
	set_policy "$4"
	{
		echo "workload $wl"
		echo "config $cfg"
		echo "rep $rep"
		echo "fs $1"
		echo "lock $2"
		echo "spin $3"
		echo "policy $([ -e "$knob" ] && cat "$knob" || echo absent)"
	} >"$dir/meta.txt"
	run_begin "$dir" "$cfg" || return
	if [ -n "${PROFILE_RUN:-}" ]; then
		profiled_workload "$wl" "$dir" >>"$dir/output.txt"
	else
		(cd "$mnt" && run_workload "$wl") >>"$dir/output.txt" 2>&1
	fi
	run_end "$dir" $? "$1"
}

# sb_run <index> <workload> <seconds> <rep>: a switchback run.  One fresh
# mount of $R/switchback.txt's "mount <configuration>", one long run of
# the workload, and twig-switch (workloads/twig-switch.c) switching between
# the configurations listed there ("<label> <path>=<value> ...") every
# WINDOW ms for <seconds>, after SB_LEAD seconds of the workload alone,
# sampling the mount's count of completed VFS operations every SAMPLE
# ms.  The workload is sized to outlast the controller; should it end
# first, it stops the controller (the analysis drops the cut block).
sb_run() {
	idx=$1 wl=$2 secs=$3 rep=$4
	dir=$R/switchback/$(printf %03d "$idx")-$wl-r$rep
	mkdir -p "$dir"
	mcfg=$(sed -n 's/^mount //p' "$R/switchback.txt")
	# shellcheck disable=SC2046
	set -- $(config_def "$mcfg")
	# Patches 0001 turn their static key on at the first policy other
	# than osq and leave it on: take that one patch of kernel text now,
	# at idle, so that every window of the run runs the same code.
	set_policy none
	set_policy "$4"
	wsecs=$((SB_LEAD + secs + 10))
	{
		echo "workload $wl"
		echo "mount_config $mcfg"
		echo "fs $1"
		echo "lock $2"
		echo "window_ms $WINDOW"
		echo "settle_ms ${SETTLE:-per-workload}"
		echo "sample_ms $SAMPLE"
		echo "duration $secs"
		echo "lead $SB_LEAD"
		echo "rep $rep"
	} >"$dir/meta.txt"
	run_begin "$dir" "$mcfg" || return
	# Only configurations whose every setting exists on this kernel.
	: >/tmp/sb.cf
	grep -v '^mount ' "$R/switchback.txt" | while read -r label sets; do
		miss=
		for kv in $sets; do
			[ -w "${kv%%=*}" ] || miss="${kv%%=*}"
		done
		if [ -n "$miss" ]; then
			echo "switchback:$label no $miss missing" >>"$R/available.txt"
		else
			echo "$label $sets" >>/tmp/sb.cf
		fi
	done
	if [ "$(grep -c . /tmp/sb.cf)" -lt 2 ]; then
		echo "switchback: fewer than two configurations can run" >>"$dir/output.txt"
		run_end "$dir" too-few-configurations twigfs
		return
	fi
	counter=/sys/fs/twigfs/$(basename "$twigdev")/ops
	# before the workload and its lead: no window sees the setup
	if ! (cd "$mnt" && setup_workload "$wl") >>"$dir/output.txt" 2>&1; then
		run_end "$dir" setup-failed twigfs
		return
	fi
	rm -f /tmp/sb.pid
	# fs_mark has no time limit and fio's is a cap: timeout bounds all.
	(
		# not from $mnt: busybox timeout leaves a watcher behind, in
		# its cwd, for up to a second after the workload (which goes
		# to $mnt itself), and a switchback run's umount failed on it
		WL_SECS=$wsecs timeout $((wsecs + 60)) \
			sh "$H/guest-bench.sh" --workload "$wl" "$((262144 / NJOBS))"
		echo "workload_status $?" >>"$dir/meta.txt"
		[ -s /tmp/sb.pid ] && kill "$(cat /tmp/sb.pid)" 2>/dev/null
	) >>"$dir/output.txt" 2>&1 &
	wpid=$!
	sleep "$SB_LEAD"
	st=workload-ended-before-switching
	if kill -0 "$wpid" 2>/dev/null; then
		"$H/twig-switch" -f /tmp/sb.cf -c "$counter" -o "$dir/switch.log" \
			-w "$WINDOW" -i "$SAMPLE" -t "$secs" \
			-s "$((SEED + 7919 * ${BOOT:-1} + idx))" \
			-b "$(head -n 1 /tmp/sb.cf | cut -d' ' -f1)" 2>>"$dir/output.txt" &
		echo $! >/tmp/sb.pid
		wait "$!"
		st=$?
	fi
	rm -f /tmp/sb.pid
	wait "$wpid"
	cat "$counter" >"$dir/ops.txt"
	run_end "$dir" "$st" twigfs
}

# Called by profiled_workload under perf: just the workload, in $mnt.
if [ "${1:-}" = --workload ]; then
	# the create size the warm-up chose, not params.env's "auto"
	NFILES=$3
	# a switchback run's length, for every workload that has one
	# (dbench 4.00 runs a warm-up of a fifth of -t before its -t seconds,
	# and has no option for it: -t is 5/6 of the run)
	if [ -n "${WL_SECS:-}" ]; then
		DURATION=$(((WL_SECS * 5 + 5) / 6)) LOOKUP_SECS=$WL_SECS CREATE_SECS=$WL_SECS
		FIO_RUNTIME=$WL_SECS
	fi
	exec 2>&1
	cd "$mnt" && run_workload "$2"
	exit
fi

{
	echo "uname $(uname -r)"
	echo "uname_v $(uname -v)"
	echo "cpus $(grep -c ^processor /proc/cpuinfo)"
	echo "mem_kb $(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)"
	echo "cpu_model $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
	# what a boot may differ in (the spread between boots): its clock
	# and its calibrated delay loop
	echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "bogomips $(sed -n 's/^bogomips[^:]*: //p' /proc/cpuinfo | tr '\n' ' ')"
	echo "knob $([ -e "$knob" ] && echo present || echo absent)"
	echo "mutex_stats $([ -e "$mstats" ] && echo present || echo absent)"
	echo "dbench $(dbench --help 2>&1 | head -n 1)"
	echo "fio $(fio --version)"
} >"$R/guest-info.txt"
mkdir -p "$R/raw"
: >"$R/progress.log"
probe
say "bench: $(grep -c '^[^ ]* yes' "$R/available.txt") configurations available, $(grep -c '^[^ ]* no ' "$R/available.txt") unavailable"
grep '^[^ ]* no ' "$R/available.txt" | sed 's/^/bench: unavailable: /' | tee -a "$R/progress.log"

total=$(grep -c . "$R/plan.txt")
runnable=0
while read -r idx wl cfg rep; do
	case $cfg in switchback:*) runnable=$((runnable + 1)); continue ;; esac
	grep -q "^${cfg%%#*} yes" "$R/available.txt" && runnable=$((runnable + 1))
done <"$R/plan.txt"
# Warm-up, discarded (raw outputs in warmup/): the first runs of a boot pay
# for cold caches (dbench and its load file, fio, the module's code), and
# without this they would always be the first configuration's.  It uses
# the plan's first available configuration (mutex-nospin by default).
# Switchback runs need none: every label shares the run, and its lead
# (SB_LEAD) is the warm-up; a boot of switchback runs alone skips it.
cat "$R/plan.txt" "$R/profile.txt" 2>/dev/null | grep -v ' switchback:' >/tmp/allruns || :
wcfg=$(while read -r idx wl cfg rep; do
	if grep -q "^${cfg%%#*} yes" "$R/available.txt"; then
		echo "${cfg%%#*}"
		break
	fi
done </tmp/allruns)
grep -q '^mutex-nospin yes' "$R/available.txt" && wcfg=mutex-nospin
sized=$NFILES
if [ -n "$wcfg" ]; then
	RAW=$R/warmup
	# one warm-up per workload, at the default size (a sweep's @N dropped)
	awk '{ sub(/@.*/, "", $2) } !seen[$2]++ { print $2 }' /tmp/allruns >/tmp/workloads
	while read -r wl; do
		case $wl:$NFILES in
		create-shared:auto | fsmark-*:auto)
			NFILES=$CREATE_PROBE
			say "[warm-up] $wl $wcfg, $NJOBS x $NFILES files to size the runs, discarded"
			one_run 0 "$wl" "$wcfg" 0 </dev/null
			n=$(create_files_for "$R/warmup/000-$wl-$wcfg-r0/output.txt" "$wl")
			# A small tree creates faster than the grown one of a
			# real run (measured: 2.5x), so size again from a
			# second warm-up at a third of that estimate.
			if [ -n "$n" ] && [ $((n / 3)) -gt "$CREATE_PROBE" ]; then
				NFILES=$((n / 3))
				say "[warm-up] $wl $wcfg, $NJOBS x $NFILES files to size again, discarded"
				one_run 0 "$wl" "$wcfg" 1 </dev/null
				n=$(create_files_for "$R/warmup/000-$wl-$wcfg-r1/output.txt" "$wl")
			fi
			NFILES=auto
			# The slowest create workload sets the size for both.
			if [ -n "$n" ] && { [ "$sized" = auto ] || [ "$n" -lt "$sized" ]; }; then
				sized=$n
			fi
			;;
		*)
			say "[warm-up] $wl $wcfg, discarded"
			one_run 0 "$wl" "$wcfg" 0 </dev/null
			;;
		esac
	done </tmp/workloads
	unset RAW
fi
if [ "$sized" = auto ]; then
	sized=$CREATE_PROBE
	grep -q ' \(create-shared\|fsmark-\)' /tmp/allruns &&
		say "bench: could not size the create runs; using $sized files per job"
fi
NFILES=$sized
echo "nfiles $NFILES" >>"$R/guest-info.txt"
grep -q ' \(create-shared\|fsmark-\)' /tmp/allruns &&
	say "bench: create runs: $NJOBS jobs x $NFILES files of 4 KiB (about ${CREATE_SECS} s on $wcfg)"
grep -q ' create-own' /tmp/allruns &&
	say "bench: create-own: $NJOBS directories of $CREATE_KEEP files of 4 KiB, a file created and the oldest removed at a time, ${CREATE_SECS} s a separate run"
start=$(uptime_s)
done_runs=0
while read -r idx wl cfg rep; do
	case $cfg in
	switchback:*) mcfg=$(sed -n 's/^mount //p' "$R/switchback.txt") ;;
	*) mcfg=$cfg ;;
	esac
	if ! grep -q "^${mcfg%%#*} yes" "$R/available.txt"; then
		say "[run $idx/$total] $wl $cfg rep $rep — unavailable, skipped"
		continue
	fi
	el=$(echo "$(uptime_s) $start" | awk '{printf "%d", $1 - $2}')
	left="~? left"
	if [ $done_runs -gt 0 ]; then
		left="~$(hms $((el * (runnable - done_runs) / done_runs))) left"
	fi
	say "[run $idx/$total] $wl $cfg rep $rep — elapsed $(hms "$el"), $left"
	case $cfg in
	switchback:*)
		sb_run "$idx" "$wl" "${cfg#switchback:}" "$rep" </dev/null ;;
	*) one_run "$idx" "$wl" "$cfg" "$rep" </dev/null ;;
	esac
	done_runs=$((done_runs + 1))
done <"$R/plan.txt"
# Profiled runs come after every counted one and go to profile/, so perf's
# own cost never touches a throughput figure.
if [ -s "$R/profile.txt" ]; then
	ptotal=$(grep -c . "$R/profile.txt")
	RAW=$R/profile
	PROFILE_RUN=1
	while read -r idx wl cfg rep; do
		if ! grep -q "^${cfg%%#*} yes" "$R/available.txt"; then
			say "[profile $idx/$ptotal] $wl $cfg — unavailable, skipped"
			continue
		fi
		say "[profile $idx/$ptotal] $wl $cfg (perf lock contention, perf stat; not counted)"
		one_run "$idx" "$wl" "$cfg" "$rep" </dev/null
	done <"$R/profile.txt"
	unset RAW PROFILE_RUN
fi
echo "clocksource_end $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \
	>>"$R/guest-info.txt"
dmesg >"$R/dmesg.txt" 2>&1 || true
say "bench: done in $(hms "$(echo "$(uptime_s) $start" | awk '{printf "%d", $1 - $2}')")"
