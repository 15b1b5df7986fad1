#!/bin/bash
# Build a corpus of small twigfs images, valid and damaged on purpose, for
# fsck's tests and later for the module's.
#
#   make-corpus.sh BINDIR OUTDIR
#
# BINDIR holds mkfs.twigfs, fsck.twigfs, twigfs-dump and twig-populate.
# OUTDIR gets one sparse image per case and a MANIFEST with one line each:
#   <image> <expected fsck exit: 0, 4, 8 or 4|8> <word fsck must print>
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BINDIR OUTDIR" >&2
	exit 2
fi
BIN=$1
OUT=$2
mkdir -p "$OUT"
: > "$OUT/MANIFEST"

# Nodes are 4 KiB and fanout small so that few files give a deep tree.
POPULATE=(-n 300 -d 20 -F 8)

fresh() {
	rm -f "$1"
	"$BIN/mkfs.twigfs" -q -n 4K -b 32M "$1"
}

# populated IMAGE [twig-populate options]
populated() {
	local img=$1
	shift
	fresh "$img"
	"$BIN/twig-populate" "${POPULATE[@]}" "$@" "$img" >/dev/null
}

record() {
	echo "$1 $2 $3" >> "$OUT/MANIFEST"
}

# Flip bit $3 of the byte at offset $2 of file $1, in place.
flip() {
	local byte oct
	byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	oct=$(printf '%03o' $((byte ^ (1 << $3))))
	printf '%b' "\\0$oct" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# A superblock field as twigfs-dump prints it.
sb_field() {
	"$BIN/twigfs-dump" "$1" | awk -v f="$2" '$1 == f { print $2; exit }'
}

first_leaf() {
	"$BIN/twigfs-dump" "$1" | awk '$1 == "leaf" { print $2; exit }'
}

img=$OUT/valid-fresh.img
fresh "$img"
record valid-fresh.img 0 -

img=$OUT/valid-populated.img
populated "$img"
record valid-populated.img 0 -

# What a crash leaves while an unlinked inode is being deleted: valid;
# but deletion goes in key order, so a name item never outlives the inode.
for state in open headless; do
	populated "$OUT/unlinked-$state.img" -U "$state"
	record "unlinked-$state.img" 0 -
	populated "$OUT/orphanleftover-$state.img" -U "$state" -D orphanleftover
	record "orphanleftover-$state.img" 4 "INODE_REF.*being.deleted"
done

img=$OUT/sb-bitflip.img
fresh "$img"
flip "$img" $((65536 + 200)) 3
record sb-bitflip.img 4 superblock:.checksum

img=$OUT/sb-magic.img
fresh "$img"
flip "$img" $((65536 + 8)) 0
record sb-magic.img 8 magic

img=$OUT/header-bitflip.img
populated "$img"
flip "$img" $(($(sb_field "$img" root) + 40)) 2
record header-bitflip.img 4 checksum

img=$OUT/item-bitflip.img
populated "$img"
flip "$img" $(($(first_leaf "$img") + 4095)) 5
record item-bitflip.img 4 checksum

img=$OUT/truncated.img
populated "$img"
truncate -s 2M "$img"
record truncated.img 4 truncated

img=$OUT/truncated-before-super.img
populated "$img"
truncate -s 32K "$img"
record truncated-before-super.img 8 superblock

img=$OUT/garbage.img
head -c 16M /dev/urandom > "$img"
record garbage.img 8 magic

img=$OUT/garbage-leaf.img
fresh "$img"
dd if=/dev/urandom of="$img" bs=4096 count=1 seek=$(($(sb_field "$img" root) / 4096)) \
	conv=notrunc status=none
record garbage-leaf.img 4 checksum

# Semantic damage with valid checksums, made by twig-populate -D.
while read -r damage word; do
	populated "$OUT/$damage.img" -D "$damage"
	record "$damage.img" 4 "$word"
done <<'EOF'
nlink link.count
nbytes nbytes
dirsize directory.size
dirhash hash
dotdot INODE_REF
badname invalid.name
noindex DIR_INDEX
extoverlap doubly.used
orphan unreachable
keyorder out.of.order
childptr referenced.twice
childgen generation
inodetransid inode.transid
inodegen inode.generation
direntgen entry.transid
extgen extent.generation
orphanlinked orphan.item.for.inode.*link.count
orphanmissing orphan.item.for.inode.*no.items
leak leaked
unaccounted unaccounted
EOF
