#!/bin/bash
# Long runs of twig-fsx (random file operations checked against a model,
# qemu/tests/test-vfs-fsx.sh) in one guest: `make fsx`.
#
#   OPS (default 50000) operations per file, SEED (1) the first seed, JOBS
#   (4) files of up to 1 MiB at once beside the small inline-crossing one,
#   on NODESIZE (4K) tree nodes, mounted with MOUNT_OPTS (none; e.g.
#   "commit=1,lock=rwsem" or "sync"); FLAVOUR=debug runs it on the lockdep
#   + KASAN kernel.
#
# PASS/FAIL lines per file (its seed and op counts, or the failing operation
# with the last ones before it), a remount comparison, fsck.twigfs after,
# and "fsx: N passed, N failed".  The same OPS, SEED and JOBS give the same
# operations: a failure is repeated by running them again.
#
#   scripts/test-fsx.sh --host   the tool itself, on the host's filesystem
#                                (a reference: ext4 here), built with ASan
#                                and UBSan: 3 seeds of 2000 operations and
#                                the small-file mode (the fsx-host layer)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
if [[ ${1:-} == --host ]]; then
	# the program in /tmp, its files on a disk filesystem (/tmp may be
	# a tmpfs, /var/tmp noexec)
	bin=$(mktemp -d)
	dir=$(mktemp -d /var/tmp/twig-fsx.XXXXXX)
	trap 'rm -rf "$bin" "$dir"' EXIT
	cc -std=gnu11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
		-Wall -Wextra -Werror -o "$bin/twig-fsx" "$top/qemu/tests/twig-fsx.c"
	export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
	fails=0
	for run in "1" "2" "3" "1001 -f 4096 -l 3000"; do
		read -r s args <<<"$run"
		# shellcheck disable=SC2086 # args: options, split on purpose
		if "$bin/twig-fsx" -N 2000 -S "$s" -d 0 -m "$dir/model" $args "$dir/f" \
			>"$dir/out" 2>&1 && cmp -s "$dir/model" "$dir/f"; then
			echo "PASS fsx-host-seed-$s"
		else
			echo "FAIL fsx-host-seed-$s: $(grep -v '^ ' "$dir/out" | tail -n 3 | tr '\n' ' ')"
			sed 's/^/    /' "$dir/out" | tail -n 60
			fails=$((fails + 1))
		fi
	done
	((!fails))
	exit
fi
ops=${OPS:-50000}
seed=${SEED:-1}
jobs=${JOBS:-4}
nodesize=${NODESIZE:-4K}
[[ $nodesize =~ ^[0-9]+[Kk]?$ ]] || { echo "test-fsx: NODESIZE is a size like 4K or 16K" >&2; exit 2; }
opts=${MOUNT_OPTS:-}
[[ $opts =~ ^[A-Za-z0-9=,_]*$ ]] || { echo "test-fsx: MOUNT_OPTS is a comma list like commit=1,lock=rwsem" >&2; exit 2; }
for v in "$ops" "$seed" "$jobs"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "test-fsx: OPS, SEED and JOBS are numbers" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${TEST_LOGS:-$(mktemp -d)}/fsx	# console.log stays for reading
mkdir -p "$out"
cat >"$work/job.sh" <<JOB
#!/bin/sh
export FSX_OPS=$ops FSX_SEED=$seed FSX_JOBS=$jobs FSX_NODESIZE=$nodesize TWIG_OPTS=$opts
sh /twig/test-vfs-fsx.sh
st=\$?
umount /mnt 2>/dev/null
if fsck.twigfs -n /dev/vda >/tmp/fsck.out 2>&1; then
	echo "PASS fsx-fsck-clean"
else
	echo "FAIL fsx-fsck-clean: \$(head -n 8 /tmp/fsck.out | tr '\n' ' ')"
	st=1
fi
exit \$st
JOB
echo "fsx: OPS=$ops SEED=$seed JOBS=$jobs NODESIZE=$nodesize${opts:+ MOUNT_OPTS=$opts}${FLAVOUR:+ FLAVOUR=$FLAVOUR}; console in $out"
rc=0
QUIET=1 MOUNT=0 OUT=$out TIMEOUT=${TIMEOUT:-$((600 + ops / 10))} \
	"$top/qemu/guest.sh" "$work/job.sh" >"$out/host.log" 2>&1 || rc=$?
grep -E '^(PASS|FAIL) |^ *# ' "$out/console.log" || true
passed=$(grep -c '^PASS ' "$out/console.log" || true)
failed=$(grep -c '^FAIL ' "$out/console.log" || true)
if ((rc && !failed)); then
	echo "FAIL fsx-guest: the guest ended with status $rc (see $out/console.log)"
	tail -n 6 "$out/host.log" | sed 's/^/    /'
	failed=1
fi
echo "fsx: $passed passed, $failed failed"
((!failed))
