#!/bin/bash
# Test suite for mkfs.twigfs, fsck.twigfs and twigfs-dump.
#
#   run-tests.sh BINDIR
#
# Prints "PASS name" or "FAIL name: why" per test and, last, "N passed,
# M failed"; exits non-zero if anything failed.  Images are sparse files in
# a temporary directory under /tmp, removed on exit.
set -euo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 BINDIR" >&2
	exit 2
fi
BIN=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d /tmp/twigfs-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
MKFS=$BIN/mkfs.twigfs
FSCK=$BIN/fsck.twigfs
DUMP=$BIN/twigfs-dump
POPULATE=$BIN/twig-populate
passed=0
failed=0

pass() {
	echo "PASS $1"
	passed=$((passed + 1))
}

fail() {
	echo "FAIL $1: $2"
	failed=$((failed + 1))
}

# run CMD...: sets $rc, stdout in $TMP/out, stderr in $TMP/err; never aborts.
run() {
	rc=0
	"$@" < /dev/null > "$TMP/out" 2> "$TMP/err" || rc=$?
}

# The first line worth showing from the last run: stderr first.
why() {
	grep -h -m 1 -v '^=*$' "$TMP/err" "$TMP/out" | head -n 1 || true
}

# Fingerprint of a path, "absent" if it does not exist.
fingerprint() {
	if [ -e "$1" ]; then
		sha256sum < "$1"
	else
		echo absent
	fi
}

# expect_clean NAME IMAGE: fsck must exit 0 and print nothing.
expect_clean() {
	run "$FSCK" "$2"
	if [ "$rc" -ne 0 ]; then
		fail "$1" "fsck exit $rc: $(why)"
	elif [ -s "$TMP/out" ]; then
		fail "$1" "fsck printed output on a clean image"
	else
		pass "$1"
	fi
}

# ---- fresh images ----

test_fresh() {
	local name=$1 size=$2 nodesize=$3 img=$TMP/fresh.img

	rm -f "$img"
	run "$MKFS" -q -n "$nodesize" -b "$size" "$img"
	if [ "$rc" -ne 0 ]; then
		fail "$name" "mkfs exit $rc: $(cat "$TMP/err")"
		return
	fi
	expect_clean "$name" "$img"
	rm -f "$img"
}

for ns in 4K 8K 16K 32K 64K; do
	test_fresh "fresh-min-nodesize-$ns" 16M "$ns"
done
test_fresh fresh-1G 1G 16K
test_fresh fresh-64G 64G 16K
test_fresh fresh-64G-nodesize-4K 64G 4K
test_fresh fresh-odd-size 17000001 16K

test_summary() {
	local img=$TMP/summary.img

	rm -f "$img"
	run "$MKFS" -L mylabel -U 01234567-89ab-cdef-0123-456789abcdef -b 32M "$img"
	if [ "$rc" -ne 0 ] || ! grep -q "01234567-89ab-cdef-0123-456789abcdef" "$TMP/out"; then
		fail mkfs-summary "no summary with the uuid (exit $rc)"
		return
	fi
	run "$DUMP" "$img"
	if ! grep -q "label.*mylabel" "$TMP/out" ||
	   ! grep -q "fsid.*01234567-89ab-cdef-0123-456789abcdef" "$TMP/out" ||
	   ! grep -q "total_bytes.*33554432" "$TMP/out"; then
		fail mkfs-summary "label, uuid or size not in the superblock"
		return
	fi
	rm -f "$img"
	run "$MKFS" -q -b 32M "$img"
	if [ -s "$TMP/out" ]; then
		fail mkfs-summary "-q still printed"
		return
	fi
	pass mkfs-summary
}
test_summary

test_extend() {
	local img=$TMP/small.img size

	rm -f "$img"
	head -c 4096 /dev/zero > "$img"
	run "$MKFS" -q -b 20M "$img"
	size=$(stat -c %s "$img")
	if [ "$rc" -ne 0 ] || [ "$size" -ne $((20 << 20)) ]; then
		fail mkfs-extends-image "exit $rc, size $size"
		return
	fi
	expect_clean mkfs-extends-image "$img"
}
test_extend

test_mkfs_t() {
	local img=$TMP/mkfs-t.img

	rm -f "$img"
	truncate -s 16M "$img"
	if ! command -v mkfs > /dev/null; then
		fail mkfs-t-twigfs "util-linux mkfs not installed"
		return
	fi
	run env PATH="$BIN:$PATH" mkfs -t twigfs -q "$img"
	if [ "$rc" -ne 0 ]; then
		fail mkfs-t-twigfs "mkfs -t twigfs exit $rc: $(cat "$TMP/err")"
		return
	fi
	expect_clean mkfs-t-twigfs "$img"
}
test_mkfs_t

# ---- refusals: non-zero exit, one line on stderr, target unchanged ----

# refuse NAME TARGET MKFS-ARGS...
refuse() {
	local name=$1 target=$2 before after
	shift 2

	before=$(fingerprint "$target")
	run "$MKFS" "$@" "$target"
	after=$(fingerprint "$target")
	if [ "$rc" -eq 0 ]; then
		fail "$name" "mkfs accepted it"
	elif [ "$before" != "$after" ]; then
		fail "$name" "target changed"
	elif [ "$(wc -l < "$TMP/err")" -ne 1 ] || ! grep -q '^mkfs.twigfs: ' "$TMP/err"; then
		fail "$name" "not one 'mkfs.twigfs: ' line on stderr: $(tr '\n' '|' < "$TMP/err")"
	else
		pass "$name"
	fi
}

blank=$TMP/blank.img
truncate -s 32M "$blank"
absent=$TMP/absent.img
tiny=$TMP/tiny.img
truncate -s 8M "$tiny"
label64=$(printf 'x%.0s' $(seq 64))

refuse refuse-nodesize-2K "$blank" -n 2K
refuse refuse-nodesize-128K "$blank" -n 128K
refuse refuse-nodesize-12K "$blank" -n 12K
refuse refuse-nodesize-3000 "$blank" -n 3000
refuse refuse-nodesize-junk "$blank" -n 16Q
refuse refuse-size-too-small "$absent" -b 15M
refuse refuse-size-junk "$absent" -b 20X
refuse refuse-small-image "$tiny"
refuse refuse-missing-image-without-size "$absent"
refuse refuse-uuid-junk "$blank" -U not-a-uuid
refuse refuse-uuid-short "$blank" -U 01234567-89ab-cdef-0123-456789abcde
refuse refuse-uuid-nonhex "$blank" -U 01234567-89ab-cdef-0123-456789abcdeg
refuse refuse-uuid-dashes "$blank" -U 0123456789ab-cdef-0123-456789abcdef-
refuse refuse-label-64 "$blank" -L "$label64"

twig=$TMP/twig.img
"$MKFS" -q -b 32M "$twig"
refuse refuse-existing-twigfs "$twig"

ext4=$TMP/ext4.img
truncate -s 32M "$ext4"
if mkfs.ext4 -F -q "$ext4" > /dev/null 2>&1; then
	refuse refuse-existing-ext4 "$ext4"
else
	fail refuse-existing-ext4 "mkfs.ext4 failed or missing (apt-get install e2fsprogs)"
fi

btrfs=$TMP/btrfs.img
truncate -s 128M "$btrfs"
if mkfs.btrfs -f -q "$btrfs" > /dev/null 2>&1; then
	refuse refuse-existing-btrfs "$btrfs"
else
	fail refuse-existing-btrfs "mkfs.btrfs failed or missing (apt-get install btrfs-progs)"
fi

# -f overwrites what was refused above, and the result checks clean.
for fs in twig ext4 btrfs; do
	img=$TMP/$fs.img
	run "$MKFS" -q -f "$img"
	if [ "$rc" -ne 0 ]; then
		fail "force-over-$fs" "mkfs -f exit $rc: $(cat "$TMP/err")"
	elif [ "$fs" = ext4 ] && [ "$(od -An -tx2 -j 1080 -N2 "$img" | tr -d ' ')" = ef53 ]; then
		fail "force-over-$fs" "ext4 magic left behind"
	else
		expect_clean "force-over-$fs" "$img"
	fi
done

# ---- populated images: multi-level trees, hard links, extents ----

# test_populated NAME NODESIZE MIN-ROOT-LEVEL POPULATE-ARGS...
test_populated() {
	local name=$1 nodesize=$2 level=$3 img=$TMP/pop.img
	shift 3

	rm -f "$img"
	"$MKFS" -q -n "$nodesize" -b 64M "$img"
	run "$POPULATE" "$@" "$img"
	if [ "$rc" -ne 0 ]; then
		fail "$name" "populate exit $rc: $(cat "$TMP/err")"
		return
	fi
	if [ "$(awk '{ print $NF }' "$TMP/out")" -lt "$level" ]; then
		fail "$name" "tree not deep enough: $(cat "$TMP/out")"
		return
	fi
	expect_clean "$name" "$img"
}

test_populated populated-empty-root 16K 0 -n 0 -d 0
test_populated populated-16K 16K 1 -n 1500 -d 40
test_populated populated-64K 64K 1 -n 1500 -d 40
test_populated populated-deep-fanout-3 4K 4 -n 400 -d 30 -F 3
test_populated populated-4K-3-levels 4K 2 -n 1500 -d 40

test_dump() {
	local img=$TMP/pop.img

	run "$DUMP" "$img"
	if [ "$rc" -ne 0 ] || [ -s "$TMP/err" ]; then
		fail dump-populated "exit $rc: $(head -n 3 "$TMP/err")"
		return
	fi
	cp "$TMP/out" "$TMP/dump1"
	for want in "^node " "^leaf " "INODE_ITEM" "INODE_REF" "DIR_ITEM" \
		    "DIR_INDEX" "EXTENT_DATA" "type 1 (regular)" "type 0 (inline)" \
		    "type SYMLINK" "alloc_copy.*1 (B)"; do
		if ! grep -q "$want" "$TMP/dump1"; then
			fail dump-populated "'$want' missing from the dump"
			return
		fi
	done
	if grep -q WARNING "$TMP/dump1"; then
		fail dump-populated "warnings on a clean image"
		return
	fi
	run "$FSCK" --dump "$img"
	if [ "$rc" -ne 0 ] || ! cmp -s "$TMP/out" "$TMP/dump1"; then
		fail dump-populated "fsck --dump differs from twigfs-dump"
		return
	fi
	pass dump-populated
}
test_dump

test_fsck_misc() {
	run "$FSCK" "$TMP/absent.img"
	[ "$rc" -eq 8 ] || { fail fsck-missing-file "exit $rc, want 8"; return; }
	run "$FSCK" -n -v "$TMP/pop.img"
	if [ "$rc" -ne 0 ] || ! grep -q "0 problems" "$TMP/out"; then
		fail fsck-verbose "exit $rc or no summary"
		return
	fi
	run "$FSCK" --bogus "$TMP/pop.img"
	[ "$rc" -eq 16 ] || { fail fsck-usage "exit $rc, want 16"; return; }
	pass fsck-options
}
test_fsck_misc

# ---- the damaged corpus ----

corpus=$TMP/corpus
if ! bash "$HERE/make-corpus.sh" "$BIN" "$corpus" > "$TMP/corpus.log" 2>&1; then
	fail make-corpus "$(tail -n 3 "$TMP/corpus.log" | tr '\n' ' ')"
else
	pass make-corpus
	while read -r image want word; do
		name=corpus-${image%.img}
		run "$FSCK" "$corpus/$image"
		if ! [[ "$rc" =~ ^($want)$ ]]; then
			fail "$name" "fsck exit $rc, want $want: $(why)"
		elif [ "$word" != - ] && ! grep -qE "$word" "$TMP/out" "$TMP/err"; then
			fail "$name" "fsck did not mention '$word': $(head -n 1 "$TMP/out")"
		elif [ "$rc" -eq 4 ] && grep -v '^fsck.twigfs: ' "$TMP/out" | grep -q .; then
			fail "$name" "a problem not on one 'fsck.twigfs: ' line"
		else
			run "$DUMP" "$corpus/$image"
			if [ "$rc" -ne 0 ] && [ "$rc" -ne 8 ]; then
				fail "$name" "twigfs-dump exit $rc"
			else
				pass "$name"
			fi
		fi
	done < "$corpus/MANIFEST"
fi

# ---- fuzzing: random bytes in a tree block with a valid checksum ----

# test_fuzz NAME DAMAGE SEEDS: DAMAGE-1 .. DAMAGE-SEEDS of twig-populate.
test_fuzz() {
	local name=$1 damage=$2 seeds=$3 img=$TMP/fuzz.img seed bad=""

	for seed in $(seq 1 "$seeds"); do
		rm -f "$img"
		"$MKFS" -q -n 4K -b 32M "$img"
		run "$POPULATE" -n 150 -d 10 -F 6 -D "$damage-$seed" "$img"
		[ "$rc" -eq 0 ] || { bad="populate seed $seed exit $rc"; break; }
		run "$FSCK" "$img"
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; then
			bad="fsck seed $seed exit $rc"
			break
		fi
		run "$DUMP" "$img"
		[ "$rc" -eq 0 ] || { bad="dump seed $seed exit $rc"; break; }
	done
	if [ -n "$bad" ]; then
		fail "$name" "$bad"
	else
		pass "$name"
	fi
}
test_fuzz fuzz-60-seeds fuzz 60
test_fuzz mutate-60-seeds mutate 60

test_populate_refuses() {
	run "$POPULATE" -D no-such-damage "$TMP/pop.img"
	if [ "$rc" -ne 1 ] || ! grep -q "unknown damage" "$TMP/err"; then
		fail populate-unknown-damage "exit $rc: $(why)"
	else
		pass populate-unknown-damage
	fi
}
test_populate_refuses

test_garbage() {
	local img=$TMP/garbage.img i bad=""

	for i in $(seq 1 10); do
		rm -f "$img"
		"$MKFS" -q -b 16M "$img"
		# random bytes over everything after the superblock, or all of it
		if [ $((i % 2)) -eq 0 ]; then
			dd if=/dev/urandom of="$img" bs=4096 seek=17 count=4000 \
				conv=notrunc status=none
		else
			truncate -s $((i * 7919)) "$img"
		fi
		run "$FSCK" "$img"
		if [ "$rc" -ne 4 ] && [ "$rc" -ne 8 ]; then
			bad="round $i: fsck exit $rc"
			break
		fi
		run "$DUMP" "$img"
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 8 ]; then
			bad="round $i: dump exit $rc"
			break
		fi
	done
	if [ -n "$bad" ]; then
		fail garbage-and-truncation "$bad"
	else
		pass garbage-and-truncation
	fi
}
test_garbage

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
