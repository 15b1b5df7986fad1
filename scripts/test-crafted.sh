#!/bin/bash
# Damaged images against the module in a guest.
#
#   scripts/test-crafted.sh           the corpus of mkfs/tests/make-corpus.sh
#                                     (every crafted class, MUTATE_SEEDS=4
#                                     seeded mutations)
#   CLASSES="extsuper childloop" scripts/test-crafted.sh   only those images
#   FUZZ=N [SEED=S] scripts/test-crafted.sh   N random mutations, seeds S+1..S+N
#
# The images are made on the host, gzipped into the guest's results share
# and run by qemu/tests/test-crafted.sh, one boot for all of them.  A guest
# that dies (an oops panics it, a hung step reboots it) is booted again
# with the images after the one it was processing, which fails with what
# the console said.  One PASS/FAIL line per image, then the summary
# "crafted: N images, N refused at mount, N errors on access, N clean, N
# failures" ("fuzz: ..." with FUZZ).  Exits non-zero on any failure.
# Consoles and what fsck said before and after each image stay in
# $TEST_LOGS/crafted or a temporary folder (printed).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/twigfs-crafted.XXXXXX)
trap 'rm -rf "$work"' EXIT
logs=${TEST_LOGS:-$(mktemp -d /tmp/twigfs-crafted-logs.XXXXXX)}/crafted
mkdir -p "$logs"
bin=$top/mkfs
make -s -C "$bin" all twig-populate

share=$work/share
mkdir -p "$share/crafted"
list=()
if [[ -n ${FUZZ:-} ]]; then
	kind=fuzz
	for ((i = 1; i <= FUZZ; i++)); do
		name=mutate-$((${SEED:-0} + i))
		img=$work/$name.img
		"$bin/mkfs.twigfs" -q -n 4K -b 32M "$img"
		"$bin/twig-populate" -n 300 -d 20 -F 8 -D "$name" "$img" >/dev/null
		gzip -c "$img" >"$share/crafted/$name.img.gz"
		rm -f "$img"
		list+=("$name")
	done
else
	kind=crafted
	MUTATE_SEEDS=${MUTATE_SEEDS:-4} bash "$bin/tests/make-corpus.sh" "$bin" "$work/corpus" >/dev/null
	while read -r image _; do
		name=${image%.img}
		if [[ -n ${CLASSES:-} ]] && [[ " $CLASSES " != *" $name "* ]]; then
			continue
		fi
		gzip -c "$work/corpus/$image" >"$share/crafted/$name.img.gz"
		list+=("$name")
	done <"$work/corpus/MANIFEST"
	# the outcomes allowed for images the module must not take as they are
	while read -r image allowed; do
		echo "${image%.img} $allowed"
	done <"$work/corpus/EXPECT" >"$share/crafted/expect"
	rm -rf "$work/corpus"
fi
if ((${#list[@]} == 0)); then
	echo "test-crafted: no image matches CLASSES='${CLASSES:-}'" >&2
	exit 2
fi

# CRAFTED_CRASH=<name> panics the guest at that image: the harness's own test.
printf 'CRAFTED_DIR=/results/crafted CRAFTED_CRASH=%s sh /twig/test-crafted.sh\n' \
	"${CRAFTED_CRASH:-}" >"$work/job.sh"
# Kernel reports as run.sh matches them.
report='^\[ *[0-9]+\.[0-9]+\] (.*(BUG:|WARNING:|Oops|Kernel panic|general protection fault|KASAN|UBSAN|possible recursive locking|circular locking dependency|inconsistent lock state|blocked for more than|soft lockup|hard LOCKUP|lockdep|INFO: trying to register non-static key))'

# One lock for all boots: other guests between them would make a run with
# several boots wait in the queue once per boot.
if [[ ${GUEST_LOCK:-1} == 1 ]]; then
	exec 9>"${TWIG_CACHE:-$HOME/.cache/twigfs}/guest.lock"
	if ! flock -n 9; then
		echo "test-crafted: waiting for another guest to finish" >&2
		flock 9
	fi
	export GUEST_LOCK=0
fi

results=$work/results
: >"$results"
todo=("${list[@]}")
boot=0
while ((${#todo[@]})); do
	boot=$((boot + 1))
	printf '%s\n' "${todo[@]}" >"$share/crafted/todo"
	rm -f "$share/status" "$share/console.log"
	rc=0
	# Each image takes a few seconds; a hung one reboots after IMAGE_SECS.
	OUT=$share MOUNT=0 QUIET=1 TIMEOUT=$((300 + 20 * ${#todo[@]})) \
		"$top/qemu/guest.sh" "$work/job.sh" >"$work/guest.log" 2>&1 || rc=$?
	console=$logs/console-$boot.log
	cp "$share/console.log" "$console" 2>/dev/null || : >"$console"
	tr -d '\r' <"$console" >"$work/console"
	rest=()
	died=
	done_here=0
	for name in "${todo[@]}"; do
		if [[ -n $died ]]; then
			rest+=("$name")
		elif line=$(grep -m 1 -E "^(PASS|FAIL) crafted-$name(:| )" "$work/console"); then
			echo "$line" | tee -a "$results"
			done_here=$((done_here + 1))
		elif grep -q "^crafted: begin $name\$" "$work/console"; then
			# the guest died on this one: what did the kernel say after it began?
			why=$(sed -n "/^crafted: begin $name\$/,\$p" "$work/console" |
				grep -m 1 -E "$report" | sed 's/^\[[ 0-9.]*\] //' | cut -c1-160 || true)
			echo "FAIL crafted-$name: guest died (run.sh status $rc): ${why:-no kernel report; see $console}" |
				tee -a "$results"
			died=$name
			done_here=$((done_here + 1))
		else
			rest+=("$name")
			died=${died:-none}
		fi
	done
	if ((done_here == 0)); then
		# not one image began: the guest itself is broken
		for name in "${rest[@]}"; do
			echo "FAIL crafted-$name: not run: the guest did not start (run.sh status $rc, $console)" |
				tee -a "$results"
		done
		tail -n 5 "$work/guest.log" | sed 's/^/    /'
		break
	fi
	# Every image has a line, yet run.sh saw a report no image owned.
	if ((rc == 125)) && ((${#rest[@]} == 0)) && ! grep -q '^FAIL ' "$results"; then
		echo "FAIL crafted-boot-$boot: kernel report outside any image: $(grep -m 1 -E "$report" "$work/console" | cut -c1-160)" |
			tee -a "$results"
	fi
	todo=("${rest[@]+"${rest[@]}"}")
done

cp -r "$share/crafted/out" "$logs/fsck" 2>/dev/null || true
n=${#list[@]}
count() { grep -cE "$1" "$results" || true; }
echo "$kind: $n images, $(count '^PASS [^:]*: refused') refused at mount, $(count '^PASS [^:]*: errors') errors on access, $(count '^PASS [^:]*: clean') clean, $(count '^FAIL ') failures"
echo "test-crafted: $boot boot(s), consoles in $logs"
! grep -q '^FAIL ' "$results"
