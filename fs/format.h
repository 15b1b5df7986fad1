/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twigfs on-disk format: the one contract between twigfs.ko and the
 * userspace tools in mkfs/.  Every field is little-endian and fixed width,
 * every structure has a static_assert on its size, and nothing here depends
 * on the host: the tools include this file unchanged.
 *
 * Layout of a device (byte offsets):
 *
 *   [0, 64 KiB)          unused (boot loaders, partition tables)
 *   64 KiB               superblock, 4 KiB, written last at every commit
 *   [1 MiB, ...)         two copies of the allocation bitmap (A and B)
 *   after that           tree blocks and file data, handed out by the bitmap
 *
 * Metadata lives in one copy-on-write B-tree (the fs tree), btrfs-style:
 * keys (objectid, type, offset) in lexicographic order; leaves hold an item
 * array growing from the front and item data growing from the back; internal
 * nodes hold (key, child address, child generation).
 *
 * The allocation bitmap has one bit per sector (sectorsize bytes) of the
 * device, set when the sector is in use (reserved area, superblock, both
 * bitmap copies, tree blocks, file data).  It is double-buffered: a commit
 * writes the new state to the copy the superblock does not point at, flushes,
 * then writes the superblock naming that copy.  A crash therefore always
 * leaves a bitmap that matches the trees of the committed superblock.
 *
 * Bitmap bit order (as the kernel's __set_bit_le()): sector n is bit (n % 8)
 * of byte n / 8 of the copy, counting from the least significant bit.  Only
 * the first DIV_ROUND_UP(total_bytes / sectorsize, 8) bytes of a copy carry
 * bits; they are what alloc_csum covers, and bits past the last sector are
 * zero.  alloc_bytes = round_up(those bytes, sectorsize).
 *
 * Tree blocks are nodesize bytes at sectorsize-aligned addresses (mkfs also
 * aligns them to nodesize); file data extents are sector-aligned.
 */
#ifndef _TWIGFS_FORMAT_H
#define _TWIGFS_FORMAT_H

#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/build_bug.h>
#else
#include <assert.h>	/* static_assert; the includer defines __packed */
#endif

#define TWIG_MAGIC		0x5F5346474957545FULL	/* "_TWIGFS_" */
#define TWIG_SUPER_MAGIC	0x54574947		/* statfs f_type, "GIWT" */
#define TWIG_FORMAT_VERSION	1

#define TWIG_SUPER_OFFSET	(64 * 1024)
#define TWIG_SUPER_SIZE		4096
#define TWIG_RESERVED_BYTES	(1024 * 1024)	/* first data: bitmap A */

#define TWIG_SECTORSIZE		4096
#define TWIG_MIN_NODESIZE	4096
#define TWIG_MAX_NODESIZE	65536
#define TWIG_DEFAULT_NODESIZE	16384
#define TWIG_MIN_DEVICE_BYTES	(16 * 1024 * 1024)

#define TWIG_LABEL_SIZE		64	/* including the terminating NUL */
#define TWIG_NAME_LEN		255
#define TWIG_MAX_INLINE		2048	/* largest file kept inline */
#define TWIG_MAX_LEVEL		8

/* Objectids. */
#define TWIG_FS_TREE_OBJECTID		5ULL	/* header.owner of fs tree */
#define TWIG_ORPHAN_OBJECTID		6ULL	/* key.objectid of orphan items */
#define TWIG_LOG_TREE_OBJECTID		7ULL	/* header.owner of log blocks */
#define TWIG_ROOT_DIR_OBJECTID		256ULL	/* first inode, the root dir */
#define TWIG_FIRST_FREE_OBJECTID	257ULL

/* Key types, in the order items of one objectid sort. */
#define TWIG_INODE_ITEM_KEY	1
#define TWIG_INODE_REF_KEY	12	/* offset: parent dir ino */
#define TWIG_XATTR_ITEM_KEY	24	/* offset: name hash */
#define TWIG_ORPHAN_ITEM_KEY	48	/* objectid ORPHAN, offset: ino; empty */
#define TWIG_DIR_ITEM_KEY	84	/* offset: name hash */
#define TWIG_DIR_INDEX_KEY	96	/* offset: directory sequence */
#define TWIG_EXTENT_DATA_KEY	108	/* offset: file offset */
#define TWIG_LOG_PREV_KEY	250	/* (LOG_TREE, LOG_PREV, 0): log blocks */

/*
 * Directory entry types: the kernel's FT_* values (fs_umode_to_ftype()),
 * not the DT_* values readdir reports; fs_ftype_to_dtype() converts.
 */
#define TWIG_FT_UNKNOWN		0
#define TWIG_FT_REG_FILE	1
#define TWIG_FT_DIR		2
#define TWIG_FT_CHRDEV		3
#define TWIG_FT_BLKDEV		4
#define TWIG_FT_FIFO		5
#define TWIG_FT_SOCK		6
#define TWIG_FT_SYMLINK		7
#define TWIG_FT_MAX		8

/* Feature flags: unknown incompat bits refuse the mount, unknown compat_ro
 * bits allow a read-only mount only, unknown compat bits are ignored.
 */
#define TWIG_FEATURE_COMPAT_SUPP	0ULL
#define TWIG_FEATURE_COMPAT_RO_SUPP	0ULL
/*
 * Set only while the superblock names an fsync log (log_root != 0), as
 * ext4's RECOVER: a module that cannot replay the log must not mount (it
 * would commit generation log_generation with the log still named).
 */
#define TWIG_FEATURE_INCOMPAT_LOG	0x1ULL
#define TWIG_FEATURE_INCOMPAT_SUPP	TWIG_FEATURE_INCOMPAT_LOG

/*
 * Checksums are CRC-32C (Castagnoli).  In terms of the kernel's raw
 * crc32c(seed, buf, len) from <linux/crc32c.h>, which applies no inversion:
 *
 *   block and superblock checksum = ~crc32c(~0, bytes after the csum field)
 *                                   (the standard CRC-32C value)
 *   directory name hash           =  crc32c(~1, name, name_len)  (as btrfs)
 *   extended attribute name hash  =  the same, over the full name
 */
#define TWIG_CSUM_SEED		0xFFFFFFFFU
#define TWIG_NAME_HASH_SEED	0xFFFFFFFEU

struct twig_disk_key {
	__le64 objectid;
	__u8 type;
	__le64 offset;
} __packed;
static_assert(sizeof(struct twig_disk_key) == 17);

struct twig_timespec {
	__le64 sec;
	__le32 nsec;
} __packed;
static_assert(sizeof(struct twig_timespec) == 12);

struct twig_super_block {
	__le32 csum;			/* over bytes [4, TWIG_SUPER_SIZE) */
	__le32 version;
	__le64 magic;
	__le64 bytenr;			/* TWIG_SUPER_OFFSET */
	__u8 fsid[16];
	__le64 generation;		/* of the last committed transaction */
	__le64 compat_flags;
	__le64 compat_ro_flags;
	__le64 incompat_flags;
	__le32 sectorsize;
	__le32 nodesize;
	__le64 total_bytes;		/* device size used, sector multiple */
	__le64 bytes_used;		/* set bits in the bitmap * sectorsize */
	__le64 root;			/* fs tree root block address */
	__le64 root_generation;		/* generation of that block */
	__u8 root_level;
	__u8 alloc_copy;		/* 0: bitmap A is current, 1: B */
	__u8 pad0[2];
	__le32 alloc_csum;		/* ~crc32c(~0) of the current bitmap */
	__le64 alloc_start;		/* address of bitmap A */
	__le64 alloc_bytes;		/* bytes reserved per copy; B follows A */
	__le64 root_dir_objectid;	/* TWIG_ROOT_DIR_OBJECTID */
	char label[TWIG_LABEL_SIZE];	/* NUL-terminated */
	/*
	 * The fsync log (fs/tree-log.c): newest log block, 0 if none, and
	 * the transaction it belongs to, generation + 1 (else it is stale).
	 */
	__le64 log_root;
	__le64 log_generation;
	__u8 reserved[3872];
} __packed;
static_assert(sizeof(struct twig_super_block) == TWIG_SUPER_SIZE);

/* Common header of every tree block; the checksum covers [4, nodesize). */
struct twig_header {
	__le32 csum;
	__le32 flags;
	__u8 fsid[16];
	__le64 bytenr;			/* the block's own address */
	__le64 generation;		/* transaction that wrote it */
	__le64 owner;			/* TWIG_FS_TREE_OBJECTID */
	__le32 nritems;
	__u8 level;			/* 0 for leaves */
	__u8 reserved[11];
} __packed;
static_assert(sizeof(struct twig_header) == 64);

/*
 * Leaf item: data lives at [offset, offset + size) counted from the start of
 * the block.  Item i's data lies below item i-1's, so data packs from the end
 * of the block towards the item array.
 */
struct twig_item {
	struct twig_disk_key key;
	__le32 offset;
	__le32 size;
} __packed;
static_assert(sizeof(struct twig_item) == 25);

/* Internal node pointer: @key is the smallest key in the child's subtree. */
struct twig_key_ptr {
	struct twig_disk_key key;
	__le64 blockptr;
	__le64 generation;
} __packed;
static_assert(sizeof(struct twig_key_ptr) == 33);

/*
 * TWIG_INODE_ITEM_KEY: (ino, INODE_ITEM, 0).
 *
 * Link counts: a non-directory's nlink is the number of directory entries
 * naming it; a directory's is 2 plus its number of subdirectories (as ext4).
 * A directory has exactly one INODE_REF (its ".." is that ref's parent)
 * except the root, which has none and is its own parent.  A directory's size
 * is twice the sum of its entries' name lengths, as btrfs.
 */
struct twig_inode_item {
	__le64 generation;		/* transaction that created it */
	__le64 transid;			/* transaction that last changed it */
	__le64 size;
	__le64 nbytes;			/* bytes of data blocks and inline data */
	__le64 next_index;		/* directories: next DIR_INDEX offset */
	__le32 nlink;
	__le32 uid;
	__le32 gid;
	__le32 mode;
	__le64 rdev;			/* new_encode_dev() of the device */
	__le64 flags;
	struct twig_timespec atime;
	struct twig_timespec ctime;
	struct twig_timespec mtime;
	struct twig_timespec otime;	/* birth time */
	__le64 reserved[4];
} __packed;
static_assert(sizeof(struct twig_inode_item) == 152);

/*
 * TWIG_DIR_ITEM_KEY (dir, DIR_ITEM, name hash) holds one or more of these
 * back to back, one per name with that hash; TWIG_DIR_INDEX_KEY (dir,
 * DIR_INDEX, sequence) holds exactly one.  The name follows the structure.
 * Directory indexes start at 2: readdir offsets 0 and 1 are "." and "..".
 */
struct twig_dir_entry {
	__le64 ino;
	__le64 transid;
	__le16 name_len;
	__u8 type;			/* TWIG_FT_* */
} __packed;
static_assert(sizeof(struct twig_dir_entry) == 19);

#define TWIG_FIRST_DIR_INDEX	2ULL

/*
 * TWIG_INODE_REF_KEY (ino, INODE_REF, parent ino) holds one of these per name
 * the inode has in that parent, back to back, each followed by its name.
 * @index is the DIR_INDEX offset of that name.
 */
struct twig_inode_ref {
	__le64 index;
	__le16 name_len;
} __packed;
static_assert(sizeof(struct twig_inode_ref) == 10);

/*
 * TWIG_EXTENT_DATA_KEY (ino, EXTENT_DATA, file offset).  An inline extent
 * stores its bytes right after @type (the item is then
 * TWIG_FILE_EXTENT_INLINE_START + ram_bytes long) and is the file's only
 * extent, at offset 0.  A regular extent maps [key.offset, key.offset +
 * num_bytes) of the file to [disk_bytenr + offset, ... + num_bytes) on disk,
 * inside the allocated run [disk_bytenr, disk_bytenr + disk_num_bytes).
 * No item means a hole.  Symlink targets are stored as inline extents.
 *
 * Extents are never shared: a regular item owns its sectors [disk_bytenr,
 * disk_bytenr + disk_num_bytes) alone, twigfs writes offset 0 and
 * disk_num_bytes = num_bytes rounded up to the sector size, and a partial
 * overwrite splits the item and frees the sectors no longer referenced.
 * The inode's nbytes is the sum of disk_num_bytes over its regular and
 * preallocated extents plus ram_bytes of its inline extent.
 *
 * A preallocated extent (fallocate(2)) has the regular layout and owns its
 * sectors the same way, but its data reads as zeros: the sectors were
 * never written.  Only preallocated extents may lie past i_size (rounded
 * up to the sector size), left there by FALLOC_FL_KEEP_SIZE.
 */
struct twig_file_extent {
	__le64 generation;
	__le64 ram_bytes;
	__u8 type;			/* TWIG_FILE_EXTENT_* */
	__le64 disk_bytenr;
	__le64 disk_num_bytes;
	__le64 offset;
	__le64 num_bytes;
} __packed;
static_assert(sizeof(struct twig_file_extent) == 49);

#define TWIG_FILE_EXTENT_INLINE		0
#define TWIG_FILE_EXTENT_REG		1
#define TWIG_FILE_EXTENT_PREALLOC	2
#define TWIG_FILE_EXTENT_INLINE_START	17	/* offsetof(disk_bytenr) */

/*
 * The fsync log (fs/tree-log.c, FORMAT.md "The fsync log").  A log block
 * is a leaf (struct twig_header with owner TWIG_LOG_TREE_OBJECTID, level
 * 0, generation = the superblock's log_generation) whose first item,
 * (TWIG_LOG_TREE_OBJECTID, TWIG_LOG_PREV_KEY, 0), is this structure; the
 * items after it are copies of one or more inodes' INODE_ITEM and
 * EXTENT_DATA items (for a file new in that transaction also its
 * INODE_REF and the DIR_INDEX item of its name), sorted as in the fs tree.  @prev links to the log
 * block written before this one (0 ends the chain), so the superblock's
 * log_root names the newest.
 */
struct twig_log_prev {
	__le64 prev;			/* older log block, 0: the first */
	__le64 prev_generation;		/* its generation (the same) */
	__le64 seq;			/* 1 for the first block, then +1 */
	__le64 reserved;
} __packed;
static_assert(sizeof(struct twig_log_prev) == 32);

/*
 * TWIG_XATTR_ITEM_KEY (ino, XATTR_ITEM, name hash) holds one or more of
 * these back to back, one per extended attribute of @ino whose full name
 * ("user.foo", "system.posix_acl_access") has that hash, as DIR_ITEM holds
 * colliding names.  The name follows the structure, the value the name.
 *
 * Limits: a name is 1..TWIG_XATTR_NAME_MAX bytes without NUL and starts with
 * "user.", "trusted." or "security." followed by at least one byte, or is
 * one of the two POSIX ACL names; a value is at most TWIG_XATTR_MAX_VALUE
 * bytes, so that one attribute alone always fits a leaf of the smallest
 * node size (the largest item there is 4096 - 64 - 25 bytes).  All entries
 * of one inode (header, name and value each) add up to at most
 * TWIG_XATTR_MAX_TOTAL bytes, so listxattr(2) always fits XATTR_LIST_MAX.
 */
struct twig_xattr_entry {
	__le64 transid;			/* transaction that set it */
	__le16 name_len;
	__le16 value_len;
} __packed;
static_assert(sizeof(struct twig_xattr_entry) == 12);

#define TWIG_XATTR_NAME_MAX	255
#define TWIG_XATTR_MAX_VALUE	3740
#define TWIG_XATTR_MAX_TOTAL	65536
static_assert(sizeof(struct twig_header) + sizeof(struct twig_item) +
	      sizeof(struct twig_xattr_entry) + TWIG_XATTR_NAME_MAX +
	      TWIG_XATTR_MAX_VALUE == TWIG_MIN_NODESIZE);

/*
 * Limits that the kernel relies on, checked on every block read (the tree
 * checker, fs/tree-checker.c) and by fsck.twigfs.
 *
 * TWIG_MAX_OBJECTID: the kernel refuses to hand out U64_MAX - 1 and above,
 * so the key after the last inode's items can always be formed.
 * TWIG_MAX_DIR_INDEX: readdir positions are loff_t; the index after the
 * last one must still be a non-negative loff_t.
 * TWIG_MAX_FILE_SIZE: i_size and file offsets are loff_t (MAX_LFS_FILESIZE
 * on 64-bit).
 * TWIG_MAX_EXTENT: a regular extent maps at most this many bytes; lookups
 * walk forward from (offset - TWIG_MAX_EXTENT + 1) to find the one
 * covering an offset.
 */
#define TWIG_MAX_OBJECTID	0xFFFFFFFFFFFFFFFDULL	/* U64_MAX - 2 */
#define TWIG_MAX_DIR_INDEX	0x7FFFFFFFFFFFFFFEULL	/* S64_MAX - 1 */
#define TWIG_MAX_FILE_SIZE	0x7FFFFFFFFFFFFFFFULL	/* S64_MAX */
#define TWIG_MAX_EXTENT		(1024 * 1024)

/*
 * The tree checker's rules (fs/tree-checker.c), shared by name with
 * fsck.twigfs; fs/DESIGN.md "Tree checker" explains each.  Every failure
 * is -EUCLEAN in the kernel.  Append new rules at the end: the names, not
 * the numbers, are what logs show.
 */
enum twig_tree_rule {
	TWIG_RULE_OK,		/* no rule failed */
	TWIG_RULE_CSUM,
	TWIG_RULE_BYTENR,
	TWIG_RULE_BLOCK_ADDR,
	TWIG_RULE_FSID,
	TWIG_RULE_OWNER,
	TWIG_RULE_LEVEL,
	TWIG_RULE_GENERATION,
	TWIG_RULE_LEAF_NRITEMS,
	TWIG_RULE_ITEM_BOUNDS,
	TWIG_RULE_KEY_ORDER,
	TWIG_RULE_KEY_TYPE,
	TWIG_RULE_INODE_ITEM_SIZE,
	TWIG_RULE_INODE_MODE,
	TWIG_RULE_INODE_SIZE,
	TWIG_RULE_INODE_NLINK,
	TWIG_RULE_INODE_TRANSID,
	TWIG_RULE_INODE_NEXT_INDEX,
	TWIG_RULE_DIRENT_SIZE,
	TWIG_RULE_DIRENT_NAME,
	TWIG_RULE_DIRENT_TYPE,
	TWIG_RULE_DIRENT_INO,
	TWIG_RULE_DIRENT_TRANSID,
	TWIG_RULE_DIRENT_HASH,
	TWIG_RULE_DIR_INDEX,
	TWIG_RULE_REF_SIZE,
	TWIG_RULE_REF_NAME,
	TWIG_RULE_REF_PARENT,
	TWIG_RULE_REF_INDEX,
	TWIG_RULE_ORPHAN,
	TWIG_RULE_EXTENT_SIZE,
	TWIG_RULE_EXTENT_TYPE,
	TWIG_RULE_EXTENT_GEN,
	TWIG_RULE_EXTENT_INLINE,
	TWIG_RULE_EXTENT_ALIGN,
	TWIG_RULE_EXTENT_LEN,
	TWIG_RULE_EXTENT_DISK,
	TWIG_RULE_NODE_NRITEMS,
	TWIG_RULE_NODE_PTR,
	TWIG_RULE_NODE_PTR_GEN,
	TWIG_RULE_LOG_PREV,
	TWIG_RULE_XATTR_SIZE,
	TWIG_RULE_XATTR_NAME,
	TWIG_RULE_XATTR_HASH,
	TWIG_RULE_XATTR_TRANSID,
	TWIG_RULE_NR
};

/*
 * The rules' names and one-line descriptions, indexed by enum
 * twig_tree_rule: pure data, defined in the one file that defines
 * TWIG_WANT_RULE_TABLE before including this header.
 */
struct twig_tree_rule_info {
	const char *name;
	const char *desc;
};

#ifdef TWIG_WANT_RULE_TABLE
static const struct twig_tree_rule_info twig_tree_rules[TWIG_RULE_NR] = {
	[TWIG_RULE_OK] = { "ok", "no rule failed" },
	[TWIG_RULE_CSUM] = { "csum",
		"block checksum does not match" },
	[TWIG_RULE_BYTENR] = { "bytenr",
		"header bytenr is not the block's address" },
	[TWIG_RULE_BLOCK_ADDR] = { "block-addr",
		"block unaligned, below the data area or past the device" },
	[TWIG_RULE_FSID] = { "fsid",
		"header fsid is not the filesystem's" },
	[TWIG_RULE_OWNER] = { "owner",
		"header owner is not the fs tree" },
	[TWIG_RULE_LEVEL] = { "level",
		"level too high or not the one the parent expects" },
	[TWIG_RULE_GENERATION] = { "generation",
		"generation 0, in the future or not the parent pointer's" },
	[TWIG_RULE_LEAF_NRITEMS] = { "leaf-nritems",
		"item array does not fit in the block" },
	[TWIG_RULE_ITEM_BOUNDS] = { "item-bounds",
		"item data over the item array, past the block or not packed" },
	[TWIG_RULE_KEY_ORDER] = { "key-order",
		"keys not strictly increasing" },
	[TWIG_RULE_KEY_TYPE] = { "key-type",
		"unknown item type or objectid invalid for the type" },
	[TWIG_RULE_INODE_ITEM_SIZE] = { "inode-item-size",
		"INODE_ITEM size not 152 or key offset not 0" },
	[TWIG_RULE_INODE_MODE] = { "inode-mode",
		"invalid file type or mode bits, or root not a directory" },
	[TWIG_RULE_INODE_SIZE] = { "inode-size",
		"i_size too large, symlink too long or nbytes past the device" },
	[TWIG_RULE_INODE_NLINK] = { "inode-nlink",
		"directory nlink 1 or root nlink below 2" },
	[TWIG_RULE_INODE_TRANSID] = { "inode-transid",
		"inode generation or transid 0 or newer than the block" },
	[TWIG_RULE_INODE_NEXT_INDEX] = { "inode-next-index",
		"directory next_index out of range" },
	[TWIG_RULE_DIRENT_SIZE] = { "dirent-size",
		"directory entry past its item, or bytes left over" },
	[TWIG_RULE_DIRENT_NAME] = { "dirent-name",
		"directory entry name empty, too long or has '/' or NUL" },
	[TWIG_RULE_DIRENT_TYPE] = { "dirent-type",
		"directory entry type 0 or >= TWIG_FT_MAX" },
	[TWIG_RULE_DIRENT_INO] = { "dirent-ino",
		"directory entry names the root, itself or a bad objectid" },
	[TWIG_RULE_DIRENT_TRANSID] = { "dirent-transid",
		"directory entry transid 0 or newer than the block" },
	[TWIG_RULE_DIRENT_HASH] = { "dirent-hash",
		"DIR_ITEM key offset is not the hash of the name" },
	[TWIG_RULE_DIR_INDEX] = { "dir-index",
		"DIR_INDEX offset below 2 or above TWIG_MAX_DIR_INDEX" },
	[TWIG_RULE_REF_SIZE] = { "ref-size",
		"INODE_REF empty, past its item, or bytes left over" },
	[TWIG_RULE_REF_NAME] = { "ref-name",
		"INODE_REF name empty, too long or has '/' or NUL" },
	[TWIG_RULE_REF_PARENT] = { "ref-parent",
		"INODE_REF of the root, or parent invalid or itself" },
	[TWIG_RULE_REF_INDEX] = { "ref-index",
		"INODE_REF index below 2 or above TWIG_MAX_DIR_INDEX" },
	[TWIG_RULE_ORPHAN] = { "orphan-item",
		"orphan item not empty, or names the root or a bad objectid" },
	[TWIG_RULE_EXTENT_SIZE] = { "extent-size",
		"EXTENT_DATA size wrong for its type" },
	[TWIG_RULE_EXTENT_TYPE] = { "extent-type",
		"EXTENT_DATA type not inline, regular or prealloc" },
	[TWIG_RULE_EXTENT_GEN] = { "extent-generation",
		"extent generation 0 or newer than the block" },
	[TWIG_RULE_EXTENT_INLINE] = { "extent-inline",
		"inline extent not at offset 0 or above TWIG_MAX_INLINE" },
	[TWIG_RULE_EXTENT_ALIGN] = { "extent-align",
		"regular/prealloc extent offsets or disk length not sector multiples" },
	[TWIG_RULE_EXTENT_LEN] = { "extent-len",
		"extent length 0, too long, outside its run or past max size" },
	[TWIG_RULE_EXTENT_DISK] = { "extent-disk",
		"extent disk run outside the data area" },
	[TWIG_RULE_NODE_NRITEMS] = { "node-nritems",
		"node with no pointers or more than fit" },
	[TWIG_RULE_NODE_PTR] = { "node-ptr",
		"child block unaligned, outside the data area or the node" },
	[TWIG_RULE_NODE_PTR_GEN] = { "node-ptr-generation",
		"child generation 0 or newer than the node's" },
	[TWIG_RULE_LOG_PREV] = { "log-prev",
		"log block without its LOG_PREV item first, or a bad one" },
	[TWIG_RULE_XATTR_SIZE] = { "xattr-size",
		"xattr entry past its item, bytes left over or value too long" },
	[TWIG_RULE_XATTR_NAME] = { "xattr-name",
		"xattr name empty, too long, has NUL or an unknown prefix" },
	[TWIG_RULE_XATTR_HASH] = { "xattr-hash",
		"XATTR_ITEM key offset is not the hash of the name" },
	[TWIG_RULE_XATTR_TRANSID] = { "xattr-transid",
		"xattr entry transid 0 or newer than the block" },
};
#endif

#endif /* _TWIGFS_FORMAT_H */
