#!/bin/bash
# `make bench`, `make aa` and `make compare`: boot the guest BOOTS times
# and run the workload matrix in each boot: the configurations that share
# one mount switched inside one run per workload (switchback,
# docs/switchback.md), the others in separate runs, REPEAT times, each
# repetition in an order drawn from SEED; then build the summary and the
# report (report.py).
#
#   bench.sh                      BOOTS boots (BOOTS_DEFAULT below), the
#                                 whole matrix in each
#   bench.sh --aa                 A/A: one configuration run as two sides
#   bench.sh --compare p.patch..  base kernel vs base + patches, alternating
#                                 boots (BOOTS per kernel); with
#                                 TOGGLE=/path:off,on, one patched kernel
#                                 switched off and on inside each run
#   bench.sh --report DIR         rebuild summary.txt, switchback.md and
#                                 report.md/json/csv/plots of DIR
#
# Variables (docs/benchmarks.md, docs/switchback.md): KERNELS ("6.1
# 6.12": the matrix on each) VCPUS MEM ACCEL CLIENTS DURATION REPEAT
# CONFIGS WORKLOADS QUICK=1 SWEEP FLAVOUR NJOBS NFILES CREATE_KEEP FSMARK_LOOPS
# NODESIZE LOOKUP_PROCS LOOKUP_SECS LOOKUP_FILES BOOTS RESULTS SEED (the
# run order) AA (0: no second baseline copy) ASLR PROFILE=1 (perf in
# separate runs) SWITCHBACK SB_SECS SB_LEAD WINDOW SETTLE SAMPLE
# CROSSCHECK.  The configurations are workloads/configs.txt, the
# workloads of their own workloads/wl/.  Results go to
# $RESULTS/<date>-<commit>[-mode]/.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
wl=$top/workloads
py=/usr/bin/python3
mode=bench
patches=()
case ${1:-} in
--aa) mode=aa ;;
--compare)
	mode=compare
	shift
	for p in "$@"; do patches+=("$(realpath "$p")"); done
	# TOGGLE=<path>:<off>,<on>: the patch's own switch, flipped in one boot
	[[ -z ${TOGGLE:-} ]] || mode=toggle
	((${#patches[@]})) || { echo "bench.sh: --compare needs a patch" >&2; exit 2; }
	;;
--report) exec "$py" "$wl/report.py" "${2:?--report needs a results folder}" ;;
"") ;;
*) echo "usage: bench.sh [--aa | --compare patch... | --report dir]" >&2; exit 2 ;;
esac

# The configurations: workloads/configs.txt, one table for every side,
# read through configs.sh (config_names, config_def).
config_table=$wl/configs.txt
# shellcheck source=workloads/configs.sh
. "$wl/configs.sh"
all_configs=$(config_names)
twig_configs=$(config_names twigfs)
# col <configuration> <n>: column n of its row in the table (1: its name)
col() {
	local row
	read -r -a row <<<"$(config_def "$1")"
	[[ ${row[0]} == unknown ]] || { row=("${1%%#*}" "${row[@]}"); echo "${row[$2 - 1]}"; }
}
# SWEEP=clients: every workload at SWEEP_POINTS clients/jobs (workload@N)
# in one boot; SWEEP=vcpus: one boot per SWEEP_POINTS vCPU count.  Both
# default to dbench on the twigfs configurations, 2 repetitions, no copy.
case ${SWEEP:-} in
"") ;;
clients | vcpus)
	[[ $mode == bench ]] || { echo "bench.sh: SWEEP is for make bench" >&2; exit 2; }
	: "${CONFIGS:=$twig_configs}" "${WORKLOADS:=dbench}" "${REPEAT:=2}" "${AA:=0}"
	: "${BOOTS_DEFAULT:=1}"
	[[ $SWEEP == clients ]] && : "${SWEEP_POINTS:=1 2 4 8 16 32 50}"
	[[ $SWEEP == vcpus ]] && : "${SWEEP_POINTS:=1 2 4 8}"
	;;
*) echo "bench.sh: SWEEP must be clients or vcpus" >&2; exit 2 ;;
esac
# The boot is a level of the design: make bench and make compare TOGGLE=
# run their switchback part once per boot and combine the boots
# (docs/switchback.md, "How a run goes"; docs/results.md, "Three boots");
# separate runs then repeat once per boot.
# Nine boots of 50 s a workload (Kalibera and Jones: repetitions per
# level from the variance components): five boots of 120 s measured a
# between-boot tau of up to 3% (lookup) against a within-boot variance of
# about 0.05-0.13 per second, so more boots of fewer seconds narrow the
# combined intervals (t on 8 degrees of freedom, 2.31, not 2.78) in less
# time: docs/results.md, "Boots against seconds".
if [[ ${QUICK:-0} == 1 ]]; then
	: "${BOOTS_DEFAULT:=1}"
	: "${REPEAT:=2}" "${DURATION:=6}" "${CREATE_SECS:=5}" "${LOOKUP_SECS:=2}"
else
	: "${BOOTS_DEFAULT:=9}"
	if [[ ${SWEEP:-} == "" && ${BOOTS:-$BOOTS_DEFAULT} -gt 1 && $mode == bench ]]; then
		: "${REPEAT:=1}"
	fi
	: "${REPEAT:=3}" "${DURATION:=20}" "${CREATE_SECS:=30}" "${LOOKUP_SECS:=10}"
fi
# CREATE_KEEP: create-own's files per directory, measured here (2 vCPUs,
# TCG, 4K nodes): 300 x 50 is a three-level tree (root level 2, 1830
# blocks) filled and synced in 9 s, whose 60 MB of dirty pages stay under
# the guest's background writeback threshold (183 MB) and whose files live
# about 6 s, under the 30 s after which dirty data is written back: no
# writeback comes and goes during the run.  At 1000, 200 MB and 25 s.
: "${NFILES:=auto}" "${CREATE_PROBE:=100}" "${CREATE_KEEP:=300}"
[[ $NFILES == auto || $NFILES =~ ^[1-9][0-9]*$ ]] ||
	{ echo "bench.sh: NFILES must be a number or 'auto'" >&2; exit 2; }
[[ $CREATE_KEEP =~ ^[1-9][0-9]*$ ]] ||
	{ echo "bench.sh: CREATE_KEEP must be a number of files" >&2; exit 2; }
case $mode in
bench) : "${CONFIGS:=$twig_configs}" "${BOOTS:=$BOOTS_DEFAULT}" ;;
aa) : "${CONFIGS:=mutex-nospin}" "${BOOTS:=1}" ;;
compare) : "${CONFIGS:=$twig_configs}" "${BOOTS:=2}" ;;
toggle) : "${CONFIGS:=mutex-nospin}" "${BOOTS:=$BOOTS_DEFAULT}" ;;
esac
# Switchback (docs/switchback.md): configurations that share one mount
# (twigfs lock=mutex: they differ only in spin= and the kernel's
# mutex_spin) run inside one long run per workload, switched every WINDOW
# ms in random blocks with a copy of the baseline; the rest run separately.
# WINDOW: chosen from the A/A half-width by window and settle measured
# here (docs/results.md, "Window and settle"); SETTLE empty: each
# workload's own (benchlib/defs.py, from the step table; the analysis
# applies it).
# SB_LEAD: seconds of the workload alone before the first switch.  At 10
# (a845991, SEED=51, 26 runs) the first quarter of the switching read
# like the other three: Q1 minus the rest -4.8 to +3.1 points per label,
# each within twice its standard error of 0.
if [[ ${QUICK:-0} == 1 ]]; then : "${SB_SECS:=60}"; else : "${SB_SECS:=50}"; fi
: "${SWITCHBACK:=1}" "${WINDOW:=300}" "${SETTLE:=}" "${SAMPLE:=50}" "${SB_LEAD:=10}"
[[ -n ${SWEEP:-} || ${PROFILE:-0} == 1 || $mode != bench ]] && SWITCHBACK=0
[[ $mode == toggle ]] && SWITCHBACK=1
for v in SB_SECS WINDOW SAMPLE SB_LEAD BOOTS; do
	[[ ${!v} =~ ^[0-9]+$ ]] || { echo "bench.sh: $v must be a number" >&2; exit 2; }
done
[[ -z $SETTLE || $SETTLE =~ ^[0-9]+$ ]] ||
	{ echo "bench.sh: SETTLE must be a number of ms (or empty: each workload's)" >&2; exit 2; }
((SAMPLE > 0 && WINDOW % SAMPLE == 0 && ${SETTLE:-0} < WINDOW && BOOTS > 0)) ||
	{ echo "bench.sh: WINDOW must be a multiple of SAMPLE, SETTLE below WINDOW, BOOTS above 0" >&2; exit 2; }
: "${BOOTS:=1}" "${CLIENTS:=50}" "${NJOBS:=50}" "${LOOKUP_PROCS:=50}"
# The default matrix's time here: docs/testing.md, "Time on this
# machine".  CONFIGS=all and WORKLOADS=all are everything, the workloads
# of their own (workloads/wl/<name>.sh) among them.
all_workloads="dbench create-own create-shared fsmark-own fsmark-shared lookup"
for w in "$wl"/wl/*.sh; do
	if [[ -e $w ]]; then all_workloads+=" $(basename "$w" .sh)"; fi
done
: "${LOOKUP_FILES:=1000}" "${WORKLOADS:=dbench create-own lookup}"
[[ $CONFIGS == all ]] && CONFIGS=$all_configs
[[ $WORKLOADS == all ]] && WORKLOADS=$all_workloads
# ASLR: the guest's kernel.randomize_va_space.  Off by default: with the
# guest's default (2) three boots of one bench disagreed on lookup and
# dbench far beyond their intervals (between boots tau 6.3% and 4.1%),
# with it off three boots agreed (1.0% and 0.9%) (docs/results.md,
# "Three boots").
: "${FSMARK_LOOPS:=4}" "${NODESIZE:=4K}" "${ASLR:=0}"
[[ $ASLR =~ ^[0-2]$ ]] || { echo "bench.sh: ASLR must be 0, 1 or 2" >&2; exit 2; }
[[ $NODESIZE =~ ^(4|8|16|32|64)[Kk]$ ]] ||
	{ echo "bench.sh: NODESIZE must be 4K, 8K, 16K, 32K or 64K" >&2; exit 2; }
: "${VCPUS:=2}" "${MEM:=2048}" "${ACCEL:=tcg}"
export VCPUS MEM ACCEL
: "${SEED:=$((RANDOM * 32768 + RANDOM))}" "${AA:=1}" "${PROFILE:=0}"
read -r -a configs <<<"${CONFIGS//,/ }"
read -r -a workloads <<<"${WORKLOADS//,/ }"
read -r -a points <<<"${SWEEP_POINTS:-}"
for n in "${points[@]}"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: bad SWEEP_POINTS entry '$n'" >&2; exit 2; }
done
if [[ ${SWEEP:-} == clients ]]; then
	swept=()
	for w in "${workloads[@]}"; do
		for n in "${points[@]}"; do swept+=("$w@$n"); done
	done
	workloads=("${swept[@]}")
elif [[ ${SWEEP:-} == vcpus ]]; then
	BOOTS=${#points[@]}
fi
for c in "${configs[@]}"; do
	[[ -n $(col "$c" 1) ]] || { echo "bench.sh: unknown configuration '$c' (see $config_table)" >&2; exit 2; }
done
# The switchback set and its file: "mount <configuration>", then
# "<label> <path>=<value> ..." per configuration (twig-switch's input).
sb_lines=()
if [[ $mode == toggle ]]; then
	[[ $TOGGLE =~ ^(/[^:]+):([^,]+),([^,]+)$ ]] ||
		{ echo "bench.sh: TOGGLE must be /path:off,on (e.g. /proc/sys/kernel/x:0,1)" >&2; exit 2; }
	sb_mount=${configs[0]}
	sb_lines=("off ${BASH_REMATCH[1]}=${BASH_REMATCH[2]}"
		"on ${BASH_REMATCH[1]}=${BASH_REMATCH[3]}"
		"off#B ${BASH_REMATCH[1]}=${BASH_REMATCH[2]}")
	configs=()
elif ((SWITCHBACK)); then
	# CROSSCHECK: switchable configurations that also run separately,
	# so that one boot measures their difference both ways.
	# The baseline first; a "#B" copy in CONFIGS is the switchback's own.
	# lock=rwsem joins when the module's sysfs "lock" is writable (each
	# write drains the tree operations, fs/locking.c); every label then
	# writes its lock=, so every window starts after the same pause.
	sb=(mutex-nospin) rest=() sb_locks=mutex
	if grep -q '^TWIG_ATTR(lock, 0644, lock_show, lock_store)' "${FS_SRC:-$top/fs}/super.c"; then
		sb_locks="mutex rwsem"
	fi
	for c in "${configs[@]}"; do
		if [[ $c == mutex-nospin || $c == *#* ]]; then
			continue
		elif [[ $(col "$c" 2) == twigfs && " $sb_locks " == *" $(col "$c" 3) "* ]]; then
			sb+=("$c")
			[[ " ${CROSSCHECK:-} " == *" $c "* && $c != mutex-nospin ]] && rest+=("$c")
		else
			[[ $(col "$c" 2) == twigfs ]] &&
				echo "bench: $c runs separately: this module's sysfs lock cannot switch lock=$(col "$c" 3) under load" >&2
			rest+=("$c")
		fi
	done
	if ((${#sb[@]} >= 2)) && [[ " ${configs[*]} " == *" mutex-nospin "* ]]; then
		sb_mount=mutex-nospin
		for c in "${sb[@]}" mutex-nospin#B; do
			sets=/sys/fs/twigfs/vda/spin=$(col "$c" 4)
			[[ $sb_locks == mutex ]] || sets="/sys/fs/twigfs/vda/lock=$(col "$c" 3) $sets"
			sb_lines+=("$c /proc/sys/kernel/mutex_spin=$(col "$c" 5) $sets")
		done
		# the separate runs keep their baseline for the ratios
		configs=("${rest[@]}")
		((${#rest[@]} == 0)) || configs=(mutex-nospin "${rest[@]}")
	else
		SWITCHBACK=0
	fi
fi
# A workload of its own joins a switchback run only if its description
# says it can be time-bounded ("switchback yes" in wl/<name>.txt).
if ((${#sb_lines[@]})); then
	for w in "${workloads[@]}"; do
		d=$wl/wl/${w%@*}.txt
		[[ ! -f $d || $(sed -n 's/^switchback[[:space:]]\{1,\}//p' "$d") == yes ]] ||
			{ echo "bench.sh: $w cannot be time-bounded for switchback ($d): leave it out or set SWITCHBACK=0" >&2; exit 2; }
	done
fi
if [[ $mode == aa ]]; then
	((${#configs[@]} == 1)) || { echo "bench.sh: --aa takes one CONFIGS entry" >&2; exit 2; }
	configs=("${configs[0]}#A" "${configs[0]}#B")
elif [[ $mode == bench && $AA == 1 && " ${configs[*]} " == *" mutex-nospin "* ]]; then
	# A second, interleaved copy of the baseline: every report measures
	# the smallest difference its own run could detect.
	configs+=("mutex-nospin#B")
fi

commit=$(git -C "$top" rev-parse --short=12 HEAD)
dirty=
if git -C "$top" status --porcelain -- fs mkfs qemu workloads patches | grep -q .; then
	dirty=-dirty
fi
out=${RESULTS:-$top/results}/$(date +%Y%m%d-%H%M%S)-$commit$dirty
[[ $mode == bench ]] || out+=-$mode
mkdir -p "$out/harness"
out=$(cd "$out" && pwd)

# The harness that goes into every boot: this script's guest side, the job
# files and the lookup and create programs (static, so they run in the
# initramfs).
cp "$wl/guest-bench.sh" "$wl"/*.fio "$wl/create-rate.awk" "$out/harness/"
cp -r "$wl/wl" "$out/harness/"
for p in twig-lookup twig-create; do
	gcc -std=gnu99 -O2 -Wall -Wextra -Werror -static -o "$out/harness/$p" "$wl/$p.c"
done
gcc -std=gnu99 -O2 -Wall -Wextra -Werror -static -o "$out/harness/twig-switch" "$wl/twig-switch.c"
cp "$config_table" "$wl/configs.sh" "$out/harness/"
# Debian's fs_mark needs only libc, which the guest has.
cp /usr/bin/fs_mark "$out/harness/"
# PROFILE=1: Debian's perf (linux-perf, the guest kernel's version) and its
# libraries, run in the guest with LD_LIBRARY_PATH.
if [[ $PROFILE == 1 ]]; then
	perf=$(command -v perf) || { echo "bench.sh: PROFILE=1 needs perf (linux-perf)" >&2; exit 2; }
	mkdir -p "$out/harness/perf/lib"
	cp "$(readlink -f "$perf")" "$out/harness/perf/perf"
	ldd "$perf" | awk '$3 ~ /^\// { print $3 }' | while read -r lib; do
		cp -L "$lib" "$out/harness/perf/lib/"
	done
fi

# Each kernel is resolved (and built if needed) once; build-kernel.sh
# returns a cached tree at once and builds one kernel at a time (a lock),
# as two builds on a 2-core host would each take twice as long.
kernel_dir() {
	local flav=()
	[[ ${FLAVOUR:-default} == debug ]] && flav=(debug)
	dirname "$("$top/qemu/build-kernel.sh" "${flav[@]}" "$@" | tail -n 1)"
}
# KERNELS="6.1 6.12": the matrix on each generation, one boot each per
# BOOTS round, kernels A, B, ... in that order.
read -r -a gens <<<"${KERNELS:-${KERNEL:-6.1}}"
if ((${#gens[@]} > 1)); then
	[[ $mode == bench && -z ${KERNEL_SRC:-} ]] ||
		{ echo "bench.sh: KERNELS is for make bench on Debian's kernels" >&2; exit 2; }
	kdirs=() labels=()
	abc=(A B C D E F)
	for k in "${!gens[@]}"; do
		kdirs+=("$(KERNEL=${gens[$k]} kernel_dir)")
		labels+=("${abc[$k]}")
	done
else
	kdirs=("$(KERNEL=${gens[0]} kernel_dir)")
	labels=(A)
	if [[ $mode == compare ]]; then
		kdirs+=("$(KERNEL=${gens[0]} kernel_dir "${patches[@]}")")
		labels+=(B)
	elif [[ $mode == toggle ]]; then
		# one boot of the patched kernel: off and on inside each run
		kdirs=("$(KERNEL=${gens[0]} kernel_dir "${patches[@]}")")
		labels=(B)
	fi
fi

# plan <boot>: "<index> <workload> <config> <rep>" lines.  Within each
# repetition of each workload the configurations run in a random order drawn
# from SEED, the boot and the repetition, so no configuration always runs
# first or next to the same neighbour, and the same SEED replays the plan.
write_plan() {
	local boot=$1 rep w c idx=0 wi=0
	if ((${#sb_lines[@]})); then
		for w in "${workloads[@]}"; do
			idx=$((idx + 1))
			echo "$idx $w switchback:$SB_SECS 1"
		done
	fi
	((${#configs[@]})) || return 0
	for ((rep = 1; rep <= REPEAT; rep++)); do
		wi=0
		for w in "${workloads[@]}"; do
			wi=$((wi + 1))
			while read -r c; do
				idx=$((idx + 1))
				echo "$idx $w $c $rep"
			done < <(printf '%s\n' "${configs[@]}" |
				awk -v s="$((SEED + 7919 * boot + 104729 * rep + 13 * wi))" \
					'BEGIN { srand(s) } { printf "%.9f %s\n", rand(), $0 }' |
				sort -k1,1 -s | cut -d' ' -f2)
		done
	done
}

# profile plan: one profiled run per workload and configuration (not the
# baseline's second copy), after the counted ones.
write_profile_plan() {
	local w c idx=0
	for w in "${workloads[@]}"; do
		for c in "${configs[@]}"; do
			[[ $c == *#B ]] && continue
			idx=$((idx + 1))
			echo "$idx $w ${c%#A} 1"
		done
	done
}

# The host's steal time in seconds since it booted, all CPUs (this host
# may itself be a virtual machine whose CPUs are shared).
steal_s() {
	awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%.2f", $9 / hz; exit }' /proc/stat
}

# hoststat <boot dir>: the host's /proc/stat cpu line, 1-minute load and
# the boot's QEMU's own CPU ticks (utime + stime; 0 before it starts) once
# a second with the wall clock, for as long as this script runs (the boot
# kills it at its end): whether steal, or something beside the guest,
# took the host's CPU under a run.  The guest's switch.log maps its times
# to the wall clock (param realtime_us).  The QEMU is the one sharing the
# boot's directory (qemu/run.sh: -virtfs path=<dir>,...), not its timeout.
hoststat() {
	local u n s i w q sq st l1 qpid="" qt=0 f
	echo "# epoch_s user nice system idle iowait irq softirq steal load1 qemu" \
		"(/proc/stat cpu: ticks of 1/$(getconf CLK_TCK) s summed over $(nproc) CPUs)"
	while kill -0 "$$" 2>/dev/null; do
		read -r _ u n s i w q sq st _ </proc/stat
		read -r l1 _ </proc/loadavg
		[[ -n $qpid && -e /proc/$qpid ]] || qpid=$(pgrep -f -- "^qemu-system[^ ]* .*path=$1,") || true
		if [[ -n $qpid ]] && read -r -a f <"/proc/$qpid/stat" 2>/dev/null; then
			qt=$((f[13] + f[14]))
		fi
		echo "${EPOCHREALTIME/,/.} $u $n $s $i $w $q $sq $st $l1 $qt"
		sleep 1
	done
}

# The settings the guest runs with, one name each: params.env has them as
# NAME=value (sourced by guest-bench.sh, plus BOOT), host-info.txt as
# "name value" (read by the report).  SETTLE empty: each workload's own
# (benchlib/defs.py).
settings=(CLIENTS DURATION NJOBS NFILES CREATE_SECS CREATE_PROBE CREATE_KEEP FSMARK_LOOPS
	NODESIZE LOOKUP_PROCS LOOKUP_SECS LOOKUP_FILES SB_SECS SB_LEAD WINDOW SETTLE SAMPLE SEED ASLR)
{
	echo "mode $mode"
	echo "date $(date -Is)"
	echo "twigfs_commit $(git -C "$top" rev-parse HEAD)$dirty"
	echo "host_cpus $(nproc)"
	echo "host_cpu_model $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
	echo "host_load_start $(cut -d' ' -f1-3 /proc/loadavg)"
	# what tells one host of this kind from another
	echo "host_kernel $(uname -r)"
	echo "host_qemu $(qemu-system-x86_64 --version | head -n 1)"
	echo "host_cpu_flags_hash $(sed -n 's/^flags[^:]*: //p' /proc/cpuinfo | head -n 1 |
		sha256sum | cut -c1-12)"
	echo "host_steal_start_s $(steal_s)"
	echo "vcpus $VCPUS"
	echo "mem_mib $MEM"
	echo "accel $ACCEL"
	echo "guest_cmdline ${GUEST_CMDLINE:-}"
	echo "flavour ${FLAVOUR:-default}"
	echo "repeat $REPEAT"
	echo "boots $BOOTS"
	for v in "${settings[@]}"; do echo "${v,,} ${!v}"; done
	# workloads run with twigfs's negative dentries off (guest-bench.sh)
	echo "negative_dentries_off lookup create-own"
	echo "quick ${QUICK:-0}"
	echo "profile $PROFILE"
	echo "sweep ${SWEEP:-none}"
	echo "sweep_points ${points[*]}"
	echo "configs ${configs[*]}"
	echo "switchback $SWITCHBACK"
	echo "switchback_configs $(printf '%s\n' "${sb_lines[@]}" | cut -d' ' -f1 | tr '\n' ' ')"
	echo "switchback_mount ${sb_mount:-}"
	echo "toggle ${TOGGLE:-}"
	echo "workloads ${workloads[*]}"
	for k in "${!kdirs[@]}"; do
		d=${kdirs[$k]}
		echo "kernel_${labels[$k]}_dir $d"
		echo "kernel_${labels[$k]}_generation ${gens[$k]:-${gens[0]}}"
		echo "kernel_${labels[$k]}_config_hash $(cat "$d/config-hash" 2>/dev/null || echo unknown)"
		echo "kernel_${labels[$k]}_patches $(xargs -r -n 1 basename <"$d/patches" 2>/dev/null | tr '\n' ' ')"
	done
	if [[ $mode == compare || $mode == toggle ]]; then
		echo "compare_patches ${patches[*]}"
	fi
} >"$out/host-info.txt"

nruns=$((REPEAT * ${#workloads[@]} * ${#configs[@]}))
sb_runs=0
((${#sb_lines[@]})) && sb_runs=${#workloads[@]}
[[ $PROFILE == 1 ]] && nruns=$((nruns + ${#workloads[@]} * ${#configs[@]}))
longest=$((DURATION > CREATE_SECS ? DURATION : CREATE_SECS))
per_run=$((longest * 3 + 40))
timeout=$((nruns * per_run + sb_runs * (SB_SECS + SB_LEAD + 120) + 600))
if ((sb_runs)); then
	echo "bench: switchback, ${#sb_lines[@]} configurations (${sb_lines[*]%% *}) switched every $WINDOW ms inside one ${SB_SECS} s run per workload: $sb_runs runs"
fi
echo "bench: $mode, ${#configs[@]} configurations x ${#workloads[@]} workloads x $REPEAT repetitions = $nruns separate runs per boot, ${#labels[@]}x$BOOTS boots; results in $out"

# boot <n> <label> <kernel index>
boot() {
	local n=$1 label=$2 k=$3 dir gpid hpid rc=0 extra=()
	dir=$out/boot-$n-$label
	mkdir -p "$dir"
	cp -r "$out/harness" "$dir/"
	write_plan "$n" >"$dir/plan.txt"
	: >"$dir/profile.txt"
	[[ $PROFILE == 1 ]] && write_profile_plan >"$dir/profile.txt"
	{
		for v in "${settings[@]}"; do echo "$v=${!v}"; done
		echo "BOOT=$n"
	} >"$dir/params.env"
	if ((${#sb_lines[@]})); then
		{
			echo "mount $sb_mount"
			printf '%s\n' "${sb_lines[@]}"
		} >"$dir/switchback.txt"
	fi
	: >"$dir/progress.log"
	[[ $label == B ]] && extra=("${patches[@]}")
	echo "bench: boot $n ($label: ${kdirs[$k]##*/})"
	echo "start $(date +%s) $(cut -d' ' -f1-3 /proc/loadavg)" >"$dir/hostload.txt"
	hoststat "$dir" >"$dir/hoststat.txt" &
	hpid=$!
	KERNEL=${gens[$k]:-${gens[0]}} PATCHES="${extra[*]}" OUT=$dir MOUNT=0 EXTRA_DISKS=1 QUIET=1 \
		TIMEOUT=$timeout "$top/qemu/guest.sh" "$wl/guest-bench.sh" \
		>"$dir/guest.log" 2>&1 &
	gpid=$!
	# The live progress line, and the host load when each run starts.
	tail -n +1 -F --pid="$gpid" "$dir/progress.log" 2>/dev/null |
		while IFS= read -r line; do
			echo "$line"
			if [[ $line =~ ^\[run\ ([0-9]+)/ ]]; then
				echo "${BASH_REMATCH[1]} $(date +%s) $(cut -d' ' -f1-3 /proc/loadavg)" \
					>>"$dir/hostload.txt"
			fi
		done
	wait "$gpid" || rc=$?
	echo "end $(date +%s) $(cut -d' ' -f1-3 /proc/loadavg)" >>"$dir/hostload.txt"
	kill "$hpid" 2>/dev/null || true
	wait "$hpid" 2>/dev/null || true
	if ((rc != 0)); then
		echo "bench: boot $n exited with status $rc; see $dir/guest.log and $dir/console.log" >&2
		tail -n 5 "$dir/guest.log" >&2
	fi
	return 0
}

start=$SECONDS
n=0
for ((b = 0; b < BOOTS; b++)); do
	[[ ${SWEEP:-} == vcpus ]] && export VCPUS=${points[$b]}
	for k in "${!labels[@]}"; do
		n=$((n + 1))
		boot "$n" "${labels[$k]}" "$k"
	done
done
{
	echo "host_load_end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "host_steal_end_s $(steal_s)"
	echo "wall_seconds $((SECONDS - start))"
} >>"$out/host-info.txt"
# summary.txt (the switchback and the separate runs, paste-able) and
# report.md, which begins with it, in one pass
"$py" "$wl/report.py" "$out" >/dev/null ||
	echo "bench.sh: report.py failed; rerun: workloads/bench.sh --report $out" >&2
reports=("$out/report.md")
((sb_runs == 0)) || reports+=("$out/switchback.md")
echo "bench: took $((SECONDS - start)) s; report: ${reports[*]}"
[[ ! -s $out/summary.txt ]] || { echo; cat "$out/summary.txt"; }
