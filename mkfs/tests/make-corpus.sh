#!/bin/bash
# Build a corpus of small twigfs images, valid and damaged on purpose, for
# fsck's tests and later for the module's.
#
#   make-corpus.sh BINDIR OUTDIR
#
# BINDIR holds mkfs.twigfs, fsck.twigfs, twigfs-dump and twig-populate.
# OUTDIR gets one sparse image per case and a MANIFEST with one line each:
#   <image> <expected fsck exit: 0, 4, 8 or 4|8> <word fsck must print>
# (the word is an extended regex, "-" for none), and an EXPECT with one
# line for each image the module must not take as it is:
#   <image> <outcomes allowed in a guest, an extended regex of refused,
#   errors and clean>
# (qemu/tests/test-crafted.sh).  MUTATE_SEEDS (12) sets how many seeded
# random mutations are added.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BINDIR OUTDIR" >&2
	exit 2
fi
BIN=$1
OUT=$2
mkdir -p "$OUT"
: > "$OUT/MANIFEST"
: > "$OUT/EXPECT"

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

expect() {
	echo "$1 $2" >> "$OUT/EXPECT"
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

# A file's run starts a sector before its data (extent offset 4096, as
# FORMAT.md allows), and another file's extent follows right after it:
# valid, and a rw mount must free exactly the run the item names.
populated "$OUT/extoffset.img" -D extoffset
record extoffset.img 0 -

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
extbeyond disk.range.*outside.the.data.area
extlong disk.range.*outside.the.data.area
extunaligned disk.range.*misaligned
extsuper disk.range.\[65536,.*outside.the.data.area
exttree disk.range.*doubly.used
extwrap disk.range.\[18446744073709547520,.*outside.the.data.area
extzero num_bytes.0.outside.disk_num_bytes.0
extrange outside.disk_num_bytes
extpastrun offset.0.num_bytes.[0-9]+.outside.disk_num_bytes
inlinebig inline.extent.item.size.*does.not.match.ram_bytes
inlinewrap32 inline.extent.item.size.*does.not.match.ram_bytes.4294967
inlineisize inline.extent.ram_bytes.*beyond.i_size
inlinemax inline.extent.of.*longer.than.the.limit
symlinklong symlink.target.of.*longer.than.the.limit
symlinkitem inline.extent.item.size.*does.not.match.ram_bytes
symlinksize symlink.i_size.*does.not.match
extpasteof extent.beyond.i_size.0
preallocbeyond disk.range.*outside.the.data.area
prealloctree disk.range.*doubly.used
isizeneg i_size.9223372036854775808.beyond.the.maximum.file.size
isizemax i_size.18446744073709551615.beyond.the.maximum.file.size
modetype invalid.mode
modemismatch has.type.FIFO.but.inode.*is.SOCK
modedir has.type.REG_FILE.but.inode.*is.DIR
modedirreg has.type.DIR.but.inode.*is.REG_FILE
nlinkzero wrong.link.count.0,
nlinklow wrong.link.count.1,.expected.3
nlinkmax wrong.link.count.4294967295
inodegenmax inode.transid.18446744073709551615.newer
nextindexmax next_index.at.U64_MAX
dirindexmax DIR_INDEX.18446744073709551615.*not.below.the.directory.s.next_index
dirindexlow DIR_INDEX.offset.below.2
namelenbig malformed.DIR_INDEX
namelenmax malformed.DIR_INDEX
namelenitem malformed.DIR_ITEM
namelenref malformed.INODE_REF
nulname invalid.name
emptyname invalid.name..length.0.
dotname invalid.name..length.2.
direnttype has.type.INVALID
xattrhash rule.xattr-hash:.name.hash.of
xattrname rule.xattr-name:.invalid.xattr.name
xattrlen rule.xattr-size:.malformed.XATTR_ITEM
xattrtransid rule.xattr-transid:.xattr.transid.18446744073709551615
objectidmax next.objectid.would.overflow
genmax generation.at.U64_MAX
bytesused bytes_used.*but.the.bitmap
itemwrap item.data.*outside.the.block.s.data.area
itemhuge item.data.*\+2147483648.*outside.the.block.s.data.area
itemarray item.data.\[64,.*outside.the.block.s.data.area
itemsend nritems.171798692.does.not.fit
childlevel level.0,.expected.1.from.its.parent
childgennew child.generation.3.newer.than.its.parent
childoutside child.pointer.[0-9]+.outside.the.data.area
childsuper child.pointer.65536.outside.the.data.area
childzero child.pointer.0.outside.the.data.area
childbitmap child.pointer.1048576.outside.the.data.area
childdata checksum.mismatch
childloop referenced.twice.*cycle
childself referenced.twice.*cycle
bitmaptree unaccounted
bitmaproot unaccounted
bitmapreserved reserved.area.*not.marked.in.use
EOF

# An extent mapping a sector past its run, onto the next file's data: the
# tree checker must see it (reading or writing that file would reach the
# other file's sector, and a write of its head would free it).
expect extpastrun.img "refused|errors"

# Geometry a mount must refuse: alloc_bytes + 2^63 (its doubles and
# eightfolds wrap to the true ones), and bits set past the last sector in
# the bitmap's last byte (a size that is not a multiple of 8 sectors).
populated "$OUT/allocbytes.img" -D allocbytes
record allocbytes.img 4 "allocation.bitmap.at.1048576.size.9223372036854"
expect allocbytes.img refused
rm -f "$OUT/bitmappast.img"
"$BIN/mkfs.twigfs" -q -n 4K -b $((32 * 1024 * 1024 - 4096)) "$OUT/bitmappast.img"
"$BIN/twig-populate" "${POPULATE[@]}" -D bitmappast "$OUT/bitmappast.img" >/dev/null
record bitmappast.img 4 "bits.set.past.the.end.of.the.device"
expect bitmappast.img refused

# Seeded random mutations of header fields, item headers and item bodies,
# checksums valid: fsck may find them harmless (0) or not (4), never crash.
for seed in $(seq 1 "${MUTATE_SEEDS:-12}"); do
	populated "$OUT/mutate-$seed.img" -D "mutate-$seed"
	record "mutate-$seed.img" "0|4" -
done
