#!/bin/bash
# Boot the twigfs guest under QEMU and run one job in it.
#
#   run.sh [--shell] [script.sh]
#
# Environment: VCPUS (2), MEM (2048, MiB), ACCEL (tcg | kvm), TIMEOUT
# (seconds, 900), DISK (an existing image: attached as-is, not
# reformatted), DISK_SIZE (fresh image size, 4G), EXTRA_DISKS (number of
# extra blank images, /dev/vdb...), KEEP=1 (keep fresh images), OUT (host
# folder for results), KERNEL (bzImage), MODULES (space-separated .ko list,
# the first is twigfs.ko), MOUNT=0 (do not mount /dev/vda), MOUNT_OPTS,
# LOG_WRITES (a path: log every write and flush of /dev/vda there),
# GUEST_CMDLINE (more kernel parameters).
#
# Exit status: the job's, or 124 on timeout, 125 when the console shows a
# kernel oops, BUG, WARNING, lockdep, KASAN, hung-task or panic report.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TWIG_CACHE:-$HOME/.cache/twigfs}
job=run
if [[ ${1:-} == --shell ]]; then
	job=shell
	shift
fi
script=${1:-}
vcpus=${VCPUS:-2}
mem=${MEM:-2048}
accel=${ACCEL:-tcg}
timeout=${TIMEOUT:-900}
out=${OUT:-$cache/runs/$(date +%Y%m%d-%H%M%S)-$$}
kernel=${KERNEL:?KERNEL must name a bzImage}
read -r -a modules <<<"${MODULES:?MODULES must list twigfs.ko}"

mkdir -p "$out" "$cache/scratch"
out=$(cd "$out" && pwd)
rm -f "$out/status"
if [[ $job == run ]]; then
	[[ -f $script ]] || { echo "run.sh: no script '$script'" >&2; exit 2; }
	cp "$script" "$out/job.sh"
fi

fresh=()
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
	if [[ ${KEEP:-0} != 1 ]]; then
		rm -f "${fresh[@]}"
	elif ((${#fresh[@]})); then
		echo "run.sh: kept ${fresh[*]}" >&2
	fi
	rm -f "$initrd"
}
initrd=$(mktemp "$cache/scratch/initrd.XXXXXX")
trap cleanup EXIT
"$top/qemu/build-initramfs.sh" "$initrd" "${modules[@]}"

# Sets $img to a new sparse image that is removed at exit unless KEEP=1.
new_image() {
	img=$(mktemp "$cache/scratch/disk.XXXXXX.img")
	truncate -s "${DISK_SIZE:-4G}" "$img"
	fresh+=("$img")
}

disks=()
if [[ -n ${DISK:-} ]]; then
	[[ -f $DISK || -b $DISK ]] || { echo "run.sh: no disk '$DISK'" >&2; exit 2; }
	disks+=("$DISK")
else
	new_image
	"$top/mkfs/mkfs.twigfs" -q -f "$img"
	disks+=("$img")
fi
for ((i = 0; i < ${EXTRA_DISKS:-0}; i++)); do
	new_image
	disks+=("$img")
done

args=(-machine q35 -cpu max -smp "$vcpus" -m "$mem" -no-reboot
      -kernel "$kernel" -initrd "$initrd"
      -virtfs "local,path=$out,mount_tag=results,security_model=none,id=results")
if [[ $accel == kvm ]]; then
	args+=(-accel kvm)
else
	args+=(-accel 'tcg,thread=multi')
fi
for i in "${!disks[@]}"; do
	d=${disks[i]}
	if ((i == 0)) && [[ -n ${LOG_WRITES:-} ]]; then
		# Every write and flush of /dev/vda is logged (QEMU's blklogwrites,
		# dm-log-writes format, read by mkfs/twigfs-logwrites) to
		# $LOG_WRITES, starting from the copy $LOG_WRITES.base; the log's
		# superblock is updated after every entry, so a killed QEMU
		# leaves a readable log.
		cp --sparse=always "$d" "$LOG_WRITES.base"
		: >"$LOG_WRITES"
		args+=(-drive "driver=blklogwrites,file.driver=file,file.filename=$d,file.aio=threads,log.driver=file,log.filename=$LOG_WRITES,log-sector-size=512,log-super-update-interval=${LOG_SUPER_INTERVAL:-1},if=virtio,cache=none")
		continue
	fi
	args+=(-drive "file=$d,format=raw,if=virtio,cache=none,aio=threads")
done
append="console=ttyS0 panic=-1 oops=panic loglevel=5 random.trust_cpu=on twig.job=$job"
append+=" twig.mount=${MOUNT:-1}"
[[ -n ${MOUNT_OPTS:-} ]] && append+=" twig.opts=$MOUNT_OPTS"
# GUEST_CMDLINE: more kernel parameters (e.g. tsc=reliable: under TCG the
# guest marks its TSCs unsynchronized and keeps time with the emulated
# HPET, every clock read a trip out of the translated code)
[[ -n ${GUEST_CMDLINE:-} ]] && append+=" $GUEST_CMDLINE"
args+=(-append "$append")

console=$out/console.log
# Guests run one at a time: on a small host two TCG guests would skew each
# other's timings and double every timeout.  GUEST_LOCK=0 opts out.
if [[ ${GUEST_LOCK:-1} == 1 ]]; then
	exec 9>"$cache/guest.lock"
	if ! flock -n 9; then
		echo "run.sh: waiting for another guest to finish" >&2
		flock 9
	fi
fi
if [[ $job == shell ]]; then
	qemu-system-x86_64 "${args[@]}" -nographic 2>&1 | tee "$console"
	exit 0
fi

rc=0
timeout --kill-after=10 "$timeout" qemu-system-x86_64 "${args[@]}" \
	-display none -monitor none -serial stdio </dev/null >"$console" 2>&1 &
qpid=$!
if [[ ${QUIET:-0} != 1 ]]; then
	tail -n +1 -f --pid="$qpid" "$console" &
fi
wait "$qpid" || rc=$?
sleep 0.2

if ((rc == 124)); then
	echo "run.sh: timeout after $timeout s; console kept in $console" >&2
	exit 124
fi
pattern='^\[ *[0-9]+\.[0-9]+\] (.*(BUG:|WARNING:|Oops|Kernel panic|general protection fault|KASAN|UBSAN|possible recursive locking|circular locking dependency|inconsistent lock state|blocked for more than|soft lockup|hard LOCKUP|lockdep|INFO: trying to register non-static key))'
if grep -Eq "$pattern" "$console"; then
	echo "run.sh: kernel reported a problem; console kept in $console:" >&2
	grep -E "$pattern" "$console" | head -5 >&2
	exit 125
fi
if [[ ! -f $out/status ]]; then
	echo "run.sh: guest ended without a job status (qemu rc $rc); console in $console" >&2
	exit 126
fi
status=$(cat "$out/status")
echo "run.sh: job exited with $status; results in $out" >&2
exit "$status"
