// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs tree checker: every tree block read from disk is verified here
 * before anyone sees it, and, with the verify_writes parameter, every
 * block again before it is written.
 *
 * A block whose checksum is right can still be crafted, or written by a
 * buggy kernel, so beyond the header and the block layout this checks, per
 * item type, everything the rest of twigfs relies on when it uses an item
 * (see the rules in format.h and fs/DESIGN.md "Tree checker").  All
 * arithmetic on disk values is u64 so that no sum wraps.  What needs more
 * than one block (link counts, a name's three items agreeing, extents not
 * overlapping) is fsck's; the code using the items copes with it.
 *
 * A failure refuses the block with -EUCLEAN and logs one rate-limited line
 * naming the device, the block, the item slot and the rule.
 */
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#define TWIG_WANT_RULE_TABLE	/* this file owns format.h's rule table */
#include "twigfs.h"

/*
 * On by default in the debug flavour, which is where a kernel bug that
 * builds a bad block should be caught before it reaches the disk.
 */
static bool verify_writes = IS_ENABLED(CONFIG_PROVE_LOCKING);
module_param(verify_writes, bool, 0644);
MODULE_PARM_DESC(verify_writes,
		 "run the tree checker on every tree block before it is written (default: on in debug kernels)");

const char *twig_tree_rule_name(int rule)
{
	if (rule < 0 || rule >= TWIG_RULE_NR)
		return "unknown";
	return twig_tree_rules[rule].name;
}
EXPORT_SYMBOL_IF_KUNIT(twig_tree_rule_name);

static const char *twig_tree_rule_desc(int rule)
{
	if (rule < 0 || rule >= TWIG_RULE_NR)
		return "unknown rule";
	return twig_tree_rules[rule].desc;
}

/* What a block under check is, for the item checks. */
struct twig_check {
	const struct twig_fs_info *fs;
	const struct twig_eb *eb;
	u64 gen;		/* the block's generation */
	bool log;		/* a log block (tree-log.c), not the fs tree */
	int slot;		/* item or pointer being checked, -1: header */
};

/* First byte after both bitmap copies: tree blocks and data live above. */
static u64 twig_data_start(const struct twig_fs_info *fs)
{
	const struct twig_super_block *sb = fs->super_copy;

	return le64_to_cpu(sb->alloc_start) + 2 * le64_to_cpu(sb->alloc_bytes);
}

/* [start, start + len) inside [data start, device end), without wrapping. */
static bool twig_in_data_area(const struct twig_fs_info *fs, u64 start,
			      u64 len)
{
	return start >= twig_data_start(fs) && len <= fs->total_bytes &&
	       start <= fs->total_bytes - len;
}

static bool twig_tree_block_ok(const struct twig_fs_info *fs, u64 bytenr)
{
	return IS_ALIGNED(bytenr, fs->sectorsize) &&
	       twig_in_data_area(fs, bytenr, fs->nodesize);
}

static bool twig_inode_objectid_ok(u64 ino)
{
	return ino >= TWIG_ROOT_DIR_OBJECTID && ino <= TWIG_MAX_OBJECTID;
}

/* A transaction id recorded in an item of the block being checked. */
static bool twig_transid_ok(const struct twig_check *c, u64 transid)
{
	return transid && transid <= c->gen;
}

static bool twig_dir_index_ok(u64 index)
{
	return index >= TWIG_FIRST_DIR_INDEX && index <= TWIG_MAX_DIR_INDEX;
}

/* Names are 1..TWIG_NAME_LEN bytes without '/' or NUL. */
static bool twig_name_ok(const char *name, u32 len)
{
	return len && len <= TWIG_NAME_LEN && !memchr(name, '/', len) &&
	       !memchr(name, '\0', len);
}

static int twig_check_inode_item(const struct twig_check *c,
				 const struct twig_key *key, const void *data,
				 u32 size)
{
	const struct twig_inode_item *ii = data;
	u32 mode, nlink;
	u64 isize, next;

	if (size != sizeof(*ii) || key->offset)
		return TWIG_RULE_INODE_ITEM_SIZE;
	mode = le32_to_cpu(ii->mode);
	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR:
	case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		break;
	default:
		return TWIG_RULE_INODE_MODE;
	}
	if (mode & ~(S_IFMT | S_IALLUGO))
		return TWIG_RULE_INODE_MODE;
	if (key->objectid == TWIG_ROOT_DIR_OBJECTID && !S_ISDIR(mode))
		return TWIG_RULE_INODE_MODE;
	isize = le64_to_cpu(ii->size);
	if (isize > TWIG_MAX_FILE_SIZE ||
	    (S_ISLNK(mode) && isize > TWIG_MAX_INLINE) ||
	    le64_to_cpu(ii->nbytes) > c->fs->total_bytes)
		return TWIG_RULE_INODE_SIZE;
	nlink = le32_to_cpu(ii->nlink);
	/* nlink 0 is an orphan being deleted; a directory has . and its name */
	if ((S_ISDIR(mode) && nlink == 1) ||
	    (key->objectid == TWIG_ROOT_DIR_OBJECTID && nlink < 2))
		return TWIG_RULE_INODE_NLINK;
	if (!twig_transid_ok(c, le64_to_cpu(ii->generation)) ||
	    !twig_transid_ok(c, le64_to_cpu(ii->transid)))
		return TWIG_RULE_INODE_TRANSID;
	next = le64_to_cpu(ii->next_index);
	if (S_ISDIR(mode) && (next < TWIG_FIRST_DIR_INDEX ||
			      next > TWIG_MAX_DIR_INDEX + 1))
		return TWIG_RULE_INODE_NEXT_INDEX;
	return TWIG_RULE_OK;
}

/* DIR_ITEM (one or more entries) and DIR_INDEX (exactly one). */
static int twig_check_dir_item(const struct twig_check *c,
			       const struct twig_key *key, const u8 *data,
			       u32 size)
{
	bool is_index = key->type == TWIG_DIR_INDEX_KEY;
	u64 pos = 0;

	if (is_index && !twig_dir_index_ok(key->offset))
		return TWIG_RULE_DIR_INDEX;
	if (!size)
		return TWIG_RULE_DIRENT_SIZE;
	while (pos < size) {
		const struct twig_dir_entry *de = (const void *)(data + pos);
		const char *name = (const char *)(de + 1);
		u64 ino;
		u32 len;

		if (size - pos < sizeof(*de))
			return TWIG_RULE_DIRENT_SIZE;
		len = le16_to_cpu(de->name_len);
		if (size - pos - sizeof(*de) < len)
			return TWIG_RULE_DIRENT_SIZE;
		if (!twig_name_ok(name, len))
			return TWIG_RULE_DIRENT_NAME;
		if (!de->type || de->type >= TWIG_FT_MAX)
			return TWIG_RULE_DIRENT_TYPE;
		ino = le64_to_cpu(de->ino);
		if (ino <= TWIG_ROOT_DIR_OBJECTID || ino > TWIG_MAX_OBJECTID ||
		    ino == key->objectid)
			return TWIG_RULE_DIRENT_INO;
		if (!twig_transid_ok(c, le64_to_cpu(de->transid)))
			return TWIG_RULE_DIRENT_TRANSID;
		if (!is_index &&
		    twig_name_hash(name, len) != key->offset)
			return TWIG_RULE_DIRENT_HASH;
		pos += sizeof(*de) + len;
		if (is_index && pos != size)
			return TWIG_RULE_DIRENT_SIZE;
	}
	return TWIG_RULE_OK;
}

static int twig_check_inode_ref(const struct twig_key *key, const u8 *data,
				u32 size)
{
	u64 pos = 0;

	if (key->objectid == TWIG_ROOT_DIR_OBJECTID ||
	    !twig_inode_objectid_ok(key->offset) ||
	    key->offset == key->objectid)
		return TWIG_RULE_REF_PARENT;
	if (!size)
		return TWIG_RULE_REF_SIZE;
	while (pos < size) {
		const struct twig_inode_ref *ref = (const void *)(data + pos);
		u32 len;

		if (size - pos < sizeof(*ref))
			return TWIG_RULE_REF_SIZE;
		len = le16_to_cpu(ref->name_len);
		if (size - pos - sizeof(*ref) < len)
			return TWIG_RULE_REF_SIZE;
		if (!twig_name_ok((const char *)(ref + 1), len))
			return TWIG_RULE_REF_NAME;
		if (!twig_dir_index_ok(le64_to_cpu(ref->index)))
			return TWIG_RULE_REF_INDEX;
		pos += sizeof(*ref) + len;
	}
	return TWIG_RULE_OK;
}

static int twig_check_file_extent(const struct twig_check *c,
				  const struct twig_key *key, const void *data,
				  u32 size)
{
	const struct twig_file_extent *fe = data;
	const struct twig_fs_info *fs = c->fs;
	u64 disk, disk_len, off, len;

	if (size < TWIG_FILE_EXTENT_INLINE_START)
		return TWIG_RULE_EXTENT_SIZE;
	if (fe->type != TWIG_FILE_EXTENT_INLINE &&
	    fe->type != TWIG_FILE_EXTENT_REG &&
	    fe->type != TWIG_FILE_EXTENT_PREALLOC)
		return TWIG_RULE_EXTENT_TYPE;
	if (!twig_transid_ok(c, le64_to_cpu(fe->generation)))
		return TWIG_RULE_EXTENT_GEN;
	if (fe->type == TWIG_FILE_EXTENT_INLINE) {
		len = le64_to_cpu(fe->ram_bytes);
		if (size - TWIG_FILE_EXTENT_INLINE_START != len)
			return TWIG_RULE_EXTENT_SIZE;
		if (key->offset || len > TWIG_MAX_INLINE)
			return TWIG_RULE_EXTENT_INLINE;
		return TWIG_RULE_OK;
	}
	/* a preallocated extent owns its run exactly as a regular one */
	if (size != sizeof(*fe))
		return TWIG_RULE_EXTENT_SIZE;
	disk = le64_to_cpu(fe->disk_bytenr);
	disk_len = le64_to_cpu(fe->disk_num_bytes);
	off = le64_to_cpu(fe->offset);
	len = le64_to_cpu(fe->num_bytes);
	/*
	 * num_bytes alone may end mid-sector (format.h: disk_num_bytes is
	 * num_bytes rounded up), as mkfs-side tools write a file's tail.
	 * The mapped bytes stay inside the run, which freeing a cut item's
	 * run relies on; len is compared first so that disk_len - len never
	 * wraps.
	 */
	if (!IS_ALIGNED(key->offset, fs->sectorsize) ||
	    !IS_ALIGNED(disk, fs->sectorsize) ||
	    !IS_ALIGNED(disk_len, fs->sectorsize) ||
	    !IS_ALIGNED(off, fs->sectorsize))
		return TWIG_RULE_EXTENT_ALIGN;
	if (!len || len > TWIG_MAX_EXTENT || !disk_len ||
	    disk_len > TWIG_MAX_EXTENT || len > disk_len ||
	    off > disk_len - len ||
	    key->offset > TWIG_MAX_FILE_SIZE - len)
		return TWIG_RULE_EXTENT_LEN;
	if (!twig_in_data_area(fs, disk, disk_len))
		return TWIG_RULE_EXTENT_DISK;
	return TWIG_RULE_OK;
}

/* A full xattr name twigfs has a handler for (format.h). */
static bool twig_xattr_name_ok(const char *name, u32 len)
{
	static const char * const prefixes[] = {
		"user.", "trusted.", "security.",
	};
	static const char * const acls[] = {
		"system.posix_acl_access", "system.posix_acl_default",
	};
	int i;

	if (!len || len > TWIG_XATTR_NAME_MAX || memchr(name, '\0', len))
		return false;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		u32 plen = strlen(prefixes[i]);

		if (len > plen && !memcmp(name, prefixes[i], plen))
			return true;
	}
	for (i = 0; i < ARRAY_SIZE(acls); i++) {
		if (len == strlen(acls[i]) && !memcmp(name, acls[i], len))
			return true;
	}
	return false;
}

/* XATTR_ITEM: one or more entries whose names have the key's hash. */
static int twig_check_xattr_item(const struct twig_check *c,
				 const struct twig_key *key, const u8 *data,
				 u32 size)
{
	u64 pos = 0;

	if (!size)
		return TWIG_RULE_XATTR_SIZE;
	while (pos < size) {
		const struct twig_xattr_entry *xe = (const void *)(data + pos);
		const char *name = (const char *)(xe + 1);
		u32 len, vlen;

		if (size - pos < sizeof(*xe))
			return TWIG_RULE_XATTR_SIZE;
		len = le16_to_cpu(xe->name_len);
		vlen = le16_to_cpu(xe->value_len);
		if (vlen > TWIG_XATTR_MAX_VALUE ||
		    size - pos - sizeof(*xe) < (u64)len + vlen)
			return TWIG_RULE_XATTR_SIZE;
		if (!twig_xattr_name_ok(name, len))
			return TWIG_RULE_XATTR_NAME;
		if (twig_name_hash(name, len) != key->offset)
			return TWIG_RULE_XATTR_HASH;
		if (!twig_transid_ok(c, le64_to_cpu(xe->transid)))
			return TWIG_RULE_XATTR_TRANSID;
		pos += sizeof(*xe) + len + vlen;
	}
	return TWIG_RULE_OK;
}

static int twig_check_item(const struct twig_check *c,
			   const struct twig_key *key, const void *data,
			   u32 size)
{
	if (key->type == TWIG_ORPHAN_ITEM_KEY ||
	    key->objectid == TWIG_ORPHAN_OBJECTID) {
		if (key->type != TWIG_ORPHAN_ITEM_KEY ||
		    key->objectid != TWIG_ORPHAN_OBJECTID)
			return TWIG_RULE_KEY_TYPE;
		if (size || key->offset <= TWIG_ROOT_DIR_OBJECTID ||
		    key->offset > TWIG_MAX_OBJECTID)
			return TWIG_RULE_ORPHAN;
		return TWIG_RULE_OK;
	}
	if (!twig_inode_objectid_ok(key->objectid))
		return TWIG_RULE_KEY_TYPE;
	switch (key->type) {
	case TWIG_INODE_ITEM_KEY:
		return twig_check_inode_item(c, key, data, size);
	case TWIG_INODE_REF_KEY:
		return twig_check_inode_ref(key, data, size);
	case TWIG_XATTR_ITEM_KEY:
		return twig_check_xattr_item(c, key, data, size);
	case TWIG_DIR_ITEM_KEY:
	case TWIG_DIR_INDEX_KEY:
		return twig_check_dir_item(c, key, data, size);
	case TWIG_EXTENT_DATA_KEY:
		return twig_check_file_extent(c, key, data, size);
	default:
		return TWIG_RULE_KEY_TYPE;
	}
}

static int twig_check_leaf(struct twig_check *c, u32 nritems)
{
	const struct twig_eb *eb = c->eb;
	u64 items_end = sizeof(struct twig_header) +
			(u64)nritems * sizeof(struct twig_item);
	u64 data_end = c->fs->nodesize;
	bool opaque = test_bit(TWIG_FS_MEMONLY, &c->fs->flags) &&
		      test_bit(TWIG_FS_OPAQUE_ITEMS, &c->fs->flags);
	struct twig_key prev, key;
	u32 i;
	int rule;

	if (items_end > c->fs->nodesize)
		return TWIG_RULE_LEAF_NRITEMS;
	if (c->log && !nritems)
		return TWIG_RULE_LOG_PREV;
	for (i = 0; i < nritems; i++) {
		u64 off = twig_item_offset(eb, i);
		u64 size = twig_item_size(eb, i);

		c->slot = i;
		if (off < items_end || off + size != data_end)
			return TWIG_RULE_ITEM_BOUNDS;
		data_end = off;
		twig_item_key(eb, i, &key);
		if (i && twig_key_cmp(&prev, &key) >= 0)
			return TWIG_RULE_KEY_ORDER;
		prev = key;
		if (opaque)
			continue;
		if (c->log && i == 0) {
			/* the chain link; everything after it is fs items */
			if (key.objectid != TWIG_LOG_TREE_OBJECTID ||
			    key.type != TWIG_LOG_PREV_KEY || key.offset ||
			    size != sizeof(struct twig_log_prev))
				return TWIG_RULE_LOG_PREV;
			continue;
		}
		rule = twig_check_item(c, &key, eb->data + off, size);
		if (rule)
			return rule;
	}
	return TWIG_RULE_OK;
}

static int twig_check_node(struct twig_check *c, u32 nritems)
{
	const struct twig_eb *eb = c->eb;
	struct twig_key prev, key;
	u32 i;

	if (nritems == 0 || nritems > twig_max_ptrs(c->fs))
		return TWIG_RULE_NODE_NRITEMS;
	for (i = 0; i < nritems; i++) {
		u64 ptr = twig_node_blockptr(eb, i);
		u64 gen = twig_node_ptr_generation(eb, i);

		c->slot = i;
		if (!twig_tree_block_ok(c->fs, ptr) || ptr == eb->start)
			return TWIG_RULE_NODE_PTR;
		if (!gen || gen > c->gen)
			return TWIG_RULE_NODE_PTR_GEN;
		twig_node_key(eb, i, &key);
		if (i && twig_key_cmp(&prev, &key) >= 0)
			return TWIG_RULE_KEY_ORDER;
		prev = key;
	}
	return TWIG_RULE_OK;
}

/*
 * Check @eb, whose data holds the block at eb->start, against the rules.
 * @level is the level the parent pointer (or the superblock) promises,
 * @parent_transid the generation it records (0: unknown), @csum whether
 * the checksum is to be checked.  Returns TWIG_RULE_OK or the rule that
 * failed, with *slot the item or pointer (-1 for the header).
 */
static int __twig_tree_check(const struct twig_fs_info *fs,
			     const struct twig_eb *eb, u8 level,
			     u64 parent_transid, bool csum, u64 log_gen,
			     int *slot)
{
	const struct twig_header *h = twig_eb_header(eb);
	/*
	 * A block the running commit has just written may be evicted and
	 * read back before fs->generation moves: allow every transid handed
	 * out so far (one field, so no torn view of the commit's states).
	 */
	u64 newest = max(READ_ONCE(fs->generation),
			 READ_ONCE(fs->last_transid));
	struct twig_check c = {
		.fs = fs,
		.eb = eb,
		.gen = le64_to_cpu(h->generation),
		.log = log_gen != 0,
		.slot = -1,
	};
	u64 owner = log_gen ? TWIG_LOG_TREE_OBJECTID : TWIG_FS_TREE_OBJECTID;
	int rule;

	if (csum && le32_to_cpu(h->csum) !=
		    twig_csum(eb->data + 4, fs->nodesize - 4))
		rule = TWIG_RULE_CSUM;
	else if (le64_to_cpu(h->bytenr) != eb->start)
		rule = TWIG_RULE_BYTENR;
	else if (!twig_tree_block_ok(fs, eb->start))
		rule = TWIG_RULE_BLOCK_ADDR;
	else if (memcmp(h->fsid, fs->fsid, sizeof(h->fsid)))
		rule = TWIG_RULE_FSID;
	else if (le64_to_cpu(h->owner) != owner)
		rule = TWIG_RULE_OWNER;
	else if (h->level >= TWIG_MAX_LEVEL || h->level != level)
		rule = TWIG_RULE_LEVEL;
	else if (log_gen ? c.gen != log_gen :
		 !c.gen || c.gen > newest ||
		 (parent_transid && c.gen != parent_transid))
		rule = TWIG_RULE_GENERATION;
	else if (h->level)
		rule = twig_check_node(&c, le32_to_cpu(h->nritems));
	else
		rule = twig_check_leaf(&c, le32_to_cpu(h->nritems));
	*slot = c.slot;
	return rule;
}

int twig_tree_check(const struct twig_fs_info *fs, const struct twig_eb *eb,
		    u8 level, u64 parent_transid, bool csum, int *slot)
{
	return __twig_tree_check(fs, eb, level, parent_transid, csum, 0, slot);
}
EXPORT_SYMBOL_IF_KUNIT(twig_tree_check);

/*
 * A log block (tree-log.c) of transaction @log_gen, built or read: owner
 * LOG_TREE, a leaf, generation exactly @log_gen, its LOG_PREV item first
 * and fs-tree items after it.  Returns the rule that failed.
 */
int twig_log_tree_check(const struct twig_fs_info *fs,
			const struct twig_eb *eb, u64 log_gen, bool csum,
			int *slot)
{
	return __twig_tree_check(fs, eb, 0, 0, csum, log_gen, slot);
}
EXPORT_SYMBOL_IF_KUNIT(twig_log_tree_check);

/* twig_log_tree_check(): 0 or -EUCLEAN (logged). */
int twig_log_check(struct twig_fs_info *fs, struct twig_eb *eb, u64 log_gen,
		   bool csum)
{
	int slot;
	int rule = twig_log_tree_check(fs, eb, log_gen, csum, &slot);

	if (rule == TWIG_RULE_OK)
		return 0;
	pr_err_ratelimited("twigfs (%s): log block %llu: slot %d: rule %s failed: %s\n",
			   twig_fs_id(fs), eb->start, slot,
			   twig_tree_rule_name(rule), twig_tree_rule_desc(rule));
	return -EUCLEAN;
}

static int twig_verify(struct twig_fs_info *fs, struct twig_eb *eb,
		       u8 level, u64 parent_transid, bool csum,
		       const char *when)
{
	int slot;
	int rule = twig_tree_check(fs, eb, level, parent_transid, csum, &slot);

	if (rule == TWIG_RULE_OK)
		return 0;
	pr_err_ratelimited("twigfs (%s): tree block %llu%s: slot %d: rule %s failed: %s\n",
			   twig_fs_id(fs), eb->start, when,
			   slot, twig_tree_rule_name(rule),
			   twig_tree_rule_desc(rule));
	return -EUCLEAN;
}

/*
 * A block just read into @eb: 0 or -EUCLEAN, logged unless @quiet (a read
 * with no tree lock held, whose pointer may be gone: extent_io.c).
 */
int twig_verify_read(struct twig_fs_info *fs, struct twig_eb *eb, u8 level,
		     u64 parent_transid, bool quiet)
{
	int slot;

	if (quiet)
		return twig_tree_check(fs, eb, level, parent_transid, true,
				       &slot) == TWIG_RULE_OK ? 0 : -EUCLEAN;
	return twig_verify(fs, eb, level, parent_transid, true, "");
}

/*
 * A dirty block about to be written, checksum already set: 0 or -EUCLEAN
 * (logged), which fails the commit.  Off unless verify_writes is set.
 */
int twig_verify_write(struct twig_fs_info *fs, struct twig_eb *eb)
{
	if (!READ_ONCE(verify_writes))
		return 0;
	return twig_verify(fs, eb, eb->level, 0, true, " before write");
}
