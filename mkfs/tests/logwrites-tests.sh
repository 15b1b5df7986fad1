#!/bin/bash
# Tests of twigfs-logwrites on logs written here, byte by byte, in the
# dm-log-writes format (see mkfs/logwrites.c): listing, flush points,
# replay to every entry, incremental replay, torn states, and damaged logs
# (each refused with a message, exit 1, the image untouched; random
# damage never crashes it).
#
#   logwrites-tests.sh BINDIR
set -euo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 BINDIR" >&2
	exit 2
fi
LW=$(cd "$1" && pwd)/twigfs-logwrites
TMP=$(mktemp -d /tmp/twigfs-lw.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
# verdict NAME WHY CMD...: PASS NAME when CMD succeeds, else FAIL NAME: WHY
verdict() {
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

# le N BYTES: N as BYTES little-endian bytes on stdout
le() {
	local v=$1 i
	for ((i = 0; i < $2; i++)); do
		# shellcheck disable=SC2059  # the format is the byte
		printf "\\x$(printf %02x $(((v >> (8 * i)) & 255)))"
	done
}
# sector CHAR: one 512-byte sector of CHAR
sector() { head -c 512 /dev/zero | tr '\0' "$1"; }
# header SECTOR NR FLAGS DATA_LEN [MARK]: one header sector
header() {
	{
		le "$1" 8; le "$2" 8; le "$3" 8; le "$4" 8
		printf '%s' "${5:-}"
	} >"$TMP/h"
	cat "$TMP/h"
	head -c $((512 - $(stat -c %s "$TMP/h"))) /dev/zero
}
super() { le $((0x6a736677736872)) 8; le "${2:-1}" 8; le "$1" 8; le "${3:-512}" 4; head -c 484 /dev/zero; }

# The log: entries 1..10
#  1 write 2+2 A   2 flush   3 write 0+1 B   4 write 2+1 C   5 flush
#  6 write 10+1 D  7 write 11+1 E  8 mark m1  9 write 12+1 F
# 10 discard 2+1
{
	super 10
	header 2 2 0 0; sector A; sector A
	header 0 0 1 0
	header 0 1 0 0; sector B
	header 2 1 0 0; sector C
	header 0 0 1 0
	header 10 1 0 0; sector D
	header 11 1 0 0; sector E
	header 0 0 8 2 m1
	header 12 1 0 0; sector F
	header 2 1 4 0
} >"$TMP/log"
truncate -s 64K "$TMP/base"

# state N: the expected image after entry N, built sector by sector
state() {
	local n=$1 out=$2
	cp "$TMP/base" "$out"
	put() { sector "$2" | dd of="$out" bs=512 seek="$1" conv=notrunc status=none; }
	((n >= 1)) && put 2 A && put 3 A
	((n >= 3)) && put 0 B
	((n >= 4)) && put 2 C
	((n >= 6)) && put 10 D
	((n >= 7)) && put 11 E
	((n >= 9)) && put 12 F
	((n >= 10)) && head -c 512 /dev/zero | dd of="$out" bs=512 seek=2 conv=notrunc status=none
	return 0
}

out=$("$LW" list "$TMP/log")
if [[ $(echo "$out" | tail -n 1) == "# sectorsize 512 entries 10 flushes 2 writes 6 bytes 3584" ]] &&
   echo "$out" | grep -qx '8 mark 0 0 m1' && echo "$out" | grep -qx '10 discard 2 1' &&
   echo "$out" | grep -qx '1 write 2 2'; then
	pass logwrites-list
else
	fail logwrites-list "$(echo "$out" | tr '\n' '|')"
fi
out=$("$LW" flushes "$TMP/log" | tr '\n' ' ')
verdict logwrites-flushes "$out" test "$out" = "2 5 "

bad=0
for n in 0 1 2 3 4 5 6 7 8 9 10; do
	cp "$TMP/base" "$TMP/img"
	state "$n" "$TMP/want"
	"$LW" replay "$TMP/log" "$TMP/img" --to "$n" >/dev/null
	cmp -s "$TMP/img" "$TMP/want" || { bad=1; fail "logwrites-replay-to-$n" "image differs"; }
done
((bad)) || pass "logwrites-replay-to-every-entry"

# incremental: 0 -> 2 -> 5 -> 9 -> 10 equals the whole replay
cp "$TMP/base" "$TMP/img"
prev=0
for n in 2 5 9 10; do
	"$LW" replay "$TMP/log" "$TMP/img" --from $prev --to $n >/dev/null
	prev=$n
done
state 10 "$TMP/want"
verdict logwrites-replay-incremental "image differs" cmp -s "$TMP/img" "$TMP/want"

# torn states after entry 9: everything to flush 5, then a subset of
# {6, 7, 9}; each seed gives one of the 8 states, the same one every time,
# and the seeds give more than one
declare -A seen=()
bad=0
for seed in $(seq 1 24); do
	state 5 "$TMP/img"
	"$LW" replay "$TMP/log" "$TMP/img" --from 5 --to 9 --torn "$seed" >"$TMP/torn.out"
	state 5 "$TMP/img2"
	"$LW" replay "$TMP/log" "$TMP/img2" --from 5 --to 9 --torn "$seed" >/dev/null
	cmp -s "$TMP/img" "$TMP/img2" || { bad=1; fail logwrites-torn-reproducible "seed $seed"; }
	key=""
	for s in 10 11 12; do
		c=$(dd if="$TMP/img" bs=512 skip=$s count=1 status=none | head -c 1 | tr '\0' 0)
		key+=$c
	done
	[[ $key =~ ^[D0][E0][F0]$ ]] || { bad=1; fail logwrites-torn-valid "seed $seed: $key"; }
	# below the flush, nothing is left out
	dd if="$TMP/img" bs=512 count=10 status=none | cmp -s - <(state 5 "$TMP/w5"; dd if="$TMP/w5" bs=512 count=10 status=none) ||
		{ bad=1; fail logwrites-torn-valid "seed $seed: flushed writes missing"; }
	seen[$key]=1
done
((bad)) || pass logwrites-torn-reproducible-and-valid
verdict "logwrites-torn-varies (${#seen[@]} of 8 states in 24 seeds)" "${!seen[*]}" test ${#seen[@]} -ge 4
cp "$TMP/base" "$TMP/img"
"$LW" replay "$TMP/log" "$TMP/img" --to 6 >/dev/null
rc=0
"$LW" replay "$TMP/log" "$TMP/img" --from 6 --to 9 --torn 1 >/dev/null 2>"$TMP/err" || rc=$?
verdict logwrites-torn-needs-the-flushed-state "rc $rc" grep -q 'last flush' "$TMP/err"

# refuse NAME WANT LOG [ARGS]: exit 1, WANT in the message, image untouched
refuse() {
	local name=$1 want=$2 log=$3 rc=0
	shift 3
	cp "$TMP/base" "$TMP/img"
	"$LW" replay "$log" "$TMP/img" --to "${1:-1}" >"$TMP/out" 2>"$TMP/err" || rc=$?
	if ((rc != 1)); then
		fail "logwrites-refuses-$name" "exit $rc: $(head -c 200 "$TMP/err")"
	elif ! grep -q -- "$want" "$TMP/err"; then
		fail "logwrites-refuses-$name" "message: $(head -c 200 "$TMP/err")"
	elif ! cmp -s "$TMP/img" "$TMP/base"; then
		fail "logwrites-refuses-$name" "image changed"
	else
		pass "logwrites-refuses-$name"
	fi
}
# mutate NAME OFFSET BYTES...: a copy of the log with bytes replaced
mutate() {
	local f=$TMP/$1 off=$2
	shift 2
	cp "$TMP/log" "$f"
	printf '%s' "$@" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
	echo "$f"
}
: >"$TMP/empty"
refuse empty-log 'too short' "$TMP/empty"
refuse bad-magic 'bad magic' "$(mutate m 0 X)"
refuse bad-version 'unsupported version' "$(mutate v 8 "$(printf '\x07')")"
refuse bad-sector-size 'bad sector size' "$(mutate s 25 "$(printf '\x03')")"	# 512 + 768
rc=0
"$LW" list "$(mutate c 23 "$(printf '\x7f')")" >/dev/null 2>"$TMP/err" || rc=$?
verdict logwrites-list-refuses-huge-count "rc $rc: $(head -c 200 "$TMP/err")" grep -q claims "$TMP/err"
refuse to-past-count 'asked for' "$TMP/log" 11
refuse unknown-flags 'unknown flags' "$(mutate f $((512 + 16)) "$(printf '\x40')")"
refuse overflowing-length 'overflow' "$(mutate o $((512 + 15)) "$(printf '\x7f')")"
refuse data-past-end 'data run past' "$(mutate d $((512 + 9)) "$(printf '\x01')")" 1	# 258 sectors
refuse write-past-image 'past the end of' "$(mutate w $((512 + 2)) "$(printf '\x01')")" 1	# sector 65538
head -c $((512 * 3 + 100)) "$TMP/log" >"$TMP/cut"
refuse cut-in-data 'past the end of the log' "$TMP/cut" 1
head -c $((512 * 4 + 100)) "$TMP/log" >"$TMP/cut2"
refuse cut-in-header 'header at byte' "$TMP/cut2" 2
refuse long-mark 'does not fit' "$(mutate k $((512 * 14 + 24)) "$(printf '\x02\x02')")" 8
rc=0
"$LW" replay "$TMP/log" "$TMP/img" --to x >/dev/null 2>&1 || rc=$?
"$LW" bogus >/dev/null 2>&1 || rc=$((rc * 10 + $?))
verdict logwrites-usage-errors "rc $rc" test $rc = 22

# random damage: a few bytes of the first 4 KiB changed, 200 times; the
# tool must list and replay or refuse (exit 0 or 1), never crash
RANDOM=28
bad=0
for i in $(seq 1 200); do
	cp "$TMP/log" "$TMP/r"
	for _ in 1 2 3; do
		le $((RANDOM % 256)) 1 |
			dd of="$TMP/r" bs=1 seek=$((RANDOM % 4096)) conv=notrunc status=none
	done
	((i % 10 == 0)) && truncate -s $((RANDOM % 6000)) "$TMP/r"
	for cmd in list replay; do
		rc=0
		cp "$TMP/base" "$TMP/img"
		if [[ $cmd == list ]]; then
			"$LW" list "$TMP/r" >/dev/null 2>&1 || rc=$?
		else
			"$LW" replay "$TMP/r" "$TMP/img" --to 3 >/dev/null 2>&1 || rc=$?
		fi
		((rc <= 1)) || { bad=$((bad + 1)); cp "$TMP/r" "/tmp/twigfs-lw-crash-$i"; }
	done
done
verdict logwrites-random-damage-200 "$bad crashes (logs kept in /tmp/twigfs-lw-crash-*)" test $bad = 0

echo "logwrites: $passed passed, $failed failed"
((failed == 0))
