// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the twigfs tree checker: crafted blocks fed straight to
 * twig_tree_check().  Every case starts from a valid leaf (or node), which
 * must pass, breaks one thing, recomputes the checksum and expects exactly
 * the rule that names the damage; at least one case per rule.
 */
#include <kunit/test.h>
#include <linux/crc32c.h>
#include <linux/slab.h>

#include "../twigfs.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define TC_NODESIZE	4096
#define TC_DEV_BYTES	(64ULL << 20)
#define TC_ALLOC_START	TWIG_RESERVED_BYTES
#define TC_ALLOC_BYTES	4096ULL
#define TC_BLOCK	(2ULL << 20)	/* where the block under test sits */
#define TC_GEN		10		/* its generation, the newest one */
#define TC_DATA		(4ULL << 20)	/* the regular extent's data */

struct tc_env {
	struct twig_fs_info *fs;
	struct twig_eb *eb;
	u32 data_end;		/* leaf builder: where the next item ends */
	u8 expect_level;
	u64 parent_transid;
};

static struct tc_env *tc_env(struct kunit *test)
{
	struct tc_env *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, e);
	e->fs = kunit_kzalloc(test, sizeof(*e->fs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->fs);
	e->fs->super_copy = kunit_kzalloc(test, sizeof(*e->fs->super_copy),
					  GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->fs->super_copy);
	e->eb = kunit_kzalloc(test, sizeof(*e->eb), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->eb);
	e->eb->data = kunit_kzalloc(test, TC_NODESIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->eb->data);

	__set_bit(TWIG_FS_MEMONLY, &e->fs->flags);
	e->fs->nodesize = TC_NODESIZE;
	e->fs->sectorsize = TWIG_SECTORSIZE;
	e->fs->total_bytes = TC_DEV_BYTES;
	memset(e->fs->fsid, 0x5a, sizeof(e->fs->fsid));
	e->fs->generation = TC_GEN;
	e->fs->super_copy->alloc_start = cpu_to_le64(TC_ALLOC_START);
	e->fs->super_copy->alloc_bytes = cpu_to_le64(TC_ALLOC_BYTES);
	e->eb->fs = e->fs;
	e->eb->start = TC_BLOCK;
	e->eb->len = TC_NODESIZE;
	return e;
}

static struct twig_header *tc_hdr(struct tc_env *e)
{
	return twig_eb_header(e->eb);
}

static void tc_block_init(struct tc_env *e, u8 level)
{
	struct twig_header *h = tc_hdr(e);

	memset(e->eb->data, 0, TC_NODESIZE);
	memcpy(h->fsid, e->fs->fsid, sizeof(h->fsid));
	h->bytenr = cpu_to_le64(TC_BLOCK);
	h->generation = cpu_to_le64(TC_GEN);
	h->owner = cpu_to_le64(TWIG_FS_TREE_OBJECTID);
	h->level = level;
	e->eb->level = level;
	e->expect_level = level;
	e->parent_transid = TC_GEN;
	e->data_end = TC_NODESIZE;
}

/* Append an item of @size bytes (keys must come in order); its data. */
static void *tc_add(struct tc_env *e, u64 objectid, u8 type, u64 offset,
		    u32 size)
{
	u32 nr = twig_header_nritems(e->eb);
	struct twig_item *it = twig_item_nr(e->eb, nr);
	struct twig_key key = { objectid, type, offset };

	e->data_end -= size;
	twig_key_to_disk(&it->key, &key);
	it->offset = cpu_to_le32(e->data_end);
	it->size = cpu_to_le32(size);
	twig_set_header_nritems(e->eb, nr + 1);
	return e->eb->data + e->data_end;
}

static void tc_inode(struct tc_env *e, u64 ino, u32 mode, u32 nlink, u64 size)
{
	struct twig_inode_item *ii = tc_add(e, ino, TWIG_INODE_ITEM_KEY, 0,
					    sizeof(*ii));

	ii->generation = cpu_to_le64(1);
	ii->transid = cpu_to_le64(5);
	ii->size = cpu_to_le64(size);
	ii->nlink = cpu_to_le32(nlink);
	ii->mode = cpu_to_le32(mode);
	if (S_ISDIR(mode))
		ii->next_index = cpu_to_le64(4);
}

static void tc_dirent(struct tc_env *e, u64 dir, u8 type, u64 offset,
		      u64 ino, u8 ftype, const char *name)
{
	u32 len = strlen(name);
	struct twig_dir_entry *de = tc_add(e, dir, type, offset,
					   sizeof(*de) + len);

	de->ino = cpu_to_le64(ino);
	de->transid = cpu_to_le64(5);
	de->name_len = cpu_to_le16(len);
	de->type = ftype;
	memcpy(de + 1, name, len);
}

static void tc_ref(struct tc_env *e, u64 ino, u64 parent, u64 index,
		   const char *name)
{
	u32 len = strlen(name);
	struct twig_inode_ref *ref = tc_add(e, ino, TWIG_INODE_REF_KEY, parent,
					    sizeof(*ref) + len);

	ref->index = cpu_to_le64(index);
	ref->name_len = cpu_to_le16(len);
	memcpy(ref + 1, name, len);
}

/*
 * Two xattr names with one crc32c(~1) hash (found by a search), so the
 * template's XATTR_ITEM holds a collision as twigfs writes it.
 */
#define TC_XNAME1	"user.c1371838"
#define TC_XNAME2	"user.c2000402"
#define TC_XHASH	0x0cbf03c1

static void tc_xattr_entry(u8 *p, const char *name, const char *value)
{
	struct twig_xattr_entry *xe = (void *)p;
	u32 len = strlen(name);

	xe->transid = cpu_to_le64(5);
	xe->name_len = cpu_to_le16(len);
	xe->value_len = cpu_to_le16(strlen(value));
	memcpy(xe + 1, name, len);
	memcpy((u8 *)(xe + 1) + len, value, strlen(value));
}

static void tc_xattr(struct tc_env *e, u64 ino)
{
	u32 one = sizeof(struct twig_xattr_entry) + strlen(TC_XNAME1) + 3;
	u8 *p = tc_add(e, ino, TWIG_XATTR_ITEM_KEY, TC_XHASH, 2 * one);

	tc_xattr_entry(p, TC_XNAME1, "one");
	tc_xattr_entry(p + one, TC_XNAME2, "two");
}

/* Slots of the template leaf. */
enum {
	S_ORPHAN, S_ROOT, S_DIR_ITEM, S_INDEX_A, S_INDEX_L,
	S_FILE, S_FILE_REF, S_FILE_XATTR, S_FILE_EXT, S_LINK, S_LINK_REF,
	S_LINK_EXT, S_NR
};

/*
 * The root directory with a regular file "a" (inode 257, two colliding
 * xattrs, one 8 KiB extent) and a symlink "l" (258, inline "abc"), and an
 * orphan item.
 */
static void tc_leaf(struct tc_env *e)
{
	struct twig_file_extent *fe;

	tc_block_init(e, 0);
	tc_add(e, TWIG_ORPHAN_OBJECTID, TWIG_ORPHAN_ITEM_KEY, 300, 0);
	tc_inode(e, 256, S_IFDIR | 0755, 2, 4);
	tc_dirent(e, 256, TWIG_DIR_ITEM_KEY,
		  crc32c(TWIG_NAME_HASH_SEED, "a", 1), 257, TWIG_FT_REG_FILE,
		  "a");
	tc_dirent(e, 256, TWIG_DIR_INDEX_KEY, 2, 257, TWIG_FT_REG_FILE, "a");
	tc_dirent(e, 256, TWIG_DIR_INDEX_KEY, 3, 258, TWIG_FT_SYMLINK, "l");
	tc_inode(e, 257, S_IFREG | 0644, 1, 8192);
	tc_ref(e, 257, 256, 2, "a");
	tc_xattr(e, 257);
	fe = tc_add(e, 257, TWIG_EXTENT_DATA_KEY, 0, sizeof(*fe));
	fe->generation = cpu_to_le64(5);
	fe->ram_bytes = cpu_to_le64(8192);
	fe->type = TWIG_FILE_EXTENT_REG;
	fe->disk_bytenr = cpu_to_le64(TC_DATA);
	fe->disk_num_bytes = cpu_to_le64(8192);
	fe->num_bytes = cpu_to_le64(8192);
	tc_inode(e, 258, S_IFLNK | 0777, 1, 3);
	tc_ref(e, 258, 256, 3, "l");
	fe = tc_add(e, 258, TWIG_EXTENT_DATA_KEY, 0,
		    TWIG_FILE_EXTENT_INLINE_START + 3);
	fe->generation = cpu_to_le64(5);
	fe->ram_bytes = cpu_to_le64(3);
	fe->type = TWIG_FILE_EXTENT_INLINE;
	memcpy((u8 *)fe + TWIG_FILE_EXTENT_INLINE_START, "abc", 3);
}

#define TC_NODE_PTRS	3

/* A level-1 node with three children at 3 MiB, generations 10, 9, 8. */
static void tc_node(struct tc_env *e)
{
	int i;

	tc_block_init(e, 1);
	for (i = 0; i < TC_NODE_PTRS; i++) {
		struct twig_key_ptr *kp = twig_node_ptr(e->eb, i);
		struct twig_key key = { 256 + i, TWIG_INODE_ITEM_KEY, 0 };

		twig_key_to_disk(&kp->key, &key);
		kp->blockptr = cpu_to_le64((3ULL << 20) + i * TC_NODESIZE);
		kp->generation = cpu_to_le64(TC_GEN - i);
	}
	twig_set_header_nritems(e->eb, TC_NODE_PTRS);
}

static void tc_csum(struct tc_env *e)
{
	tc_hdr(e)->csum = cpu_to_le32(twig_csum(e->eb->data + 4,
						TC_NODESIZE - 4));
}

static int tc_check(struct tc_env *e, int *slot)
{
	return twig_tree_check(e->fs, e->eb, e->expect_level,
			       e->parent_transid, true, slot);
}

/* ---- accessors for the mutations ---- */

static struct twig_item *tc_it(struct tc_env *e, int slot)
{
	return twig_item_nr(e->eb, slot);
}

static void *tc_data(struct tc_env *e, int slot)
{
	return twig_item_ptr(e->eb, slot);
}

static struct twig_inode_item *tc_ii(struct tc_env *e, int slot)
{
	return tc_data(e, slot);
}

static struct twig_dir_entry *tc_de(struct tc_env *e, int slot)
{
	return tc_data(e, slot);
}

static struct twig_inode_ref *tc_iref(struct tc_env *e, int slot)
{
	return tc_data(e, slot);
}

static struct twig_file_extent *tc_fe(struct tc_env *e, int slot)
{
	return tc_data(e, slot);
}

static void tc_set_key(struct tc_env *e, int slot, u64 objectid, u8 type,
		       u64 offset)
{
	struct twig_key key = { objectid, type, offset };

	twig_key_to_disk(&tc_it(e, slot)->key, &key);
}

static void tc_set_offset(struct tc_env *e, int slot, u64 offset)
{
	tc_it(e, slot)->key.offset = cpu_to_le64(offset);
}

/* ---- the cases ---- */

struct tc_case {
	const char *what;
	int rule;
	bool node;		/* start from tc_node(), not tc_leaf() */
	bool keep_csum;		/* the mutation is the checksum */
	bool log;		/* checked as a log block (twig_log_check) */
	int slot;		/* the slot the failure must name */
	void (*mutate)(struct tc_env *e);
};

static void m_csum(struct tc_env *e)
{
	tc_hdr(e)->csum ^= cpu_to_le32(1);
}

static void m_bytenr(struct tc_env *e)
{
	tc_hdr(e)->bytenr = cpu_to_le64(TC_BLOCK + TC_NODESIZE);
}

static void m_addr_super(struct tc_env *e)
{
	e->eb->start = TWIG_SUPER_OFFSET;
	tc_hdr(e)->bytenr = cpu_to_le64(TWIG_SUPER_OFFSET);
}

static void m_addr_bitmap(struct tc_env *e)
{
	e->eb->start = TC_ALLOC_START + TC_ALLOC_BYTES;
	tc_hdr(e)->bytenr = cpu_to_le64(e->eb->start);
}

static void m_addr_end(struct tc_env *e)
{
	e->eb->start = TC_DEV_BYTES;
	tc_hdr(e)->bytenr = cpu_to_le64(TC_DEV_BYTES);
}

static void m_fsid(struct tc_env *e)
{
	tc_hdr(e)->fsid[3] ^= 1;
}

static void m_owner(struct tc_env *e)
{
	tc_hdr(e)->owner = cpu_to_le64(TWIG_FS_TREE_OBJECTID + 1);
}

/* an fs leaf claimed as a log block: slot 0 is no LOG_PREV item */
static void m_log_no_prev(struct tc_env *e)
{
	tc_hdr(e)->owner = cpu_to_le64(TWIG_LOG_TREE_OBJECTID);
}

static void m_level_parent(struct tc_env *e)
{
	e->expect_level = 1;
}

static void m_level_max(struct tc_env *e)
{
	tc_hdr(e)->level = TWIG_MAX_LEVEL;
	e->expect_level = TWIG_MAX_LEVEL;
}

static void m_gen_new(struct tc_env *e)
{
	tc_hdr(e)->generation = cpu_to_le64(TC_GEN + 1);
	e->parent_transid = 0;
}

static void m_gen_parent(struct tc_env *e)
{
	e->parent_transid = TC_GEN - 1;
}

static void m_gen_zero(struct tc_env *e)
{
	tc_hdr(e)->generation = 0;
	e->parent_transid = 0;
}

static void m_nritems(struct tc_env *e)
{
	u32 fit = (TC_NODESIZE - sizeof(struct twig_header)) /
		  sizeof(struct twig_item);

	twig_set_header_nritems(e->eb, fit + 1);
}

/* off + size == 4096 in u32: the old u32 leaf check let this through */
static void m_bounds_wrap(struct tc_env *e)
{
	tc_it(e, 0)->offset = cpu_to_le32(0x80000000);
	tc_it(e, 0)->size = cpu_to_le32(0x80001000);
}

static void m_bounds_array(struct tc_env *e)
{
	u32 third = sizeof(struct twig_header) + 2 * sizeof(struct twig_item);

	tc_it(e, S_LINK_EXT)->offset = cpu_to_le32(third);
}

static void m_bounds_gap(struct tc_env *e)
{
	le32_add_cpu(&tc_it(e, S_ROOT)->offset, -1);
}

static void m_key_order(struct tc_env *e)
{
	tc_set_offset(e, S_INDEX_L, 2);
}

static void m_key_type(struct tc_env *e)
{
	tc_it(e, S_LINK_EXT)->key.type = 200;
}

static void m_key_objectid(struct tc_env *e)
{
	tc_set_key(e, S_LINK_EXT, U64_MAX, TWIG_INODE_ITEM_KEY, 0);
}

static void m_key_orphan_oid(struct tc_env *e)
{
	tc_set_key(e, S_ORPHAN, 7, TWIG_ORPHAN_ITEM_KEY, 300);
}

static void m_key_oid6(struct tc_env *e)
{
	tc_set_key(e, S_ORPHAN, TWIG_ORPHAN_OBJECTID, TWIG_INODE_ITEM_KEY, 0);
}

static void m_ii_offset(struct tc_env *e)
{
	tc_set_offset(e, S_FILE, 1);
}

static void m_ii_mode(struct tc_env *e)
{
	tc_ii(e, S_FILE)->mode = cpu_to_le32(0170644);
}

static void m_ii_mode_bits(struct tc_env *e)
{
	tc_ii(e, S_FILE)->mode = cpu_to_le32(0x10000 | S_IFREG | 0644);
}

static void m_ii_root_mode(struct tc_env *e)
{
	tc_ii(e, S_ROOT)->mode = cpu_to_le32(S_IFREG | 0644);
}

static void m_ii_size(struct tc_env *e)
{
	tc_ii(e, S_FILE)->size = cpu_to_le64(1ULL << 63);
}

static void m_ii_symlink(struct tc_env *e)
{
	tc_ii(e, S_LINK)->size = cpu_to_le64(TWIG_MAX_INLINE + 1);
}

static void m_ii_nbytes(struct tc_env *e)
{
	tc_ii(e, S_FILE)->nbytes = cpu_to_le64(TC_DEV_BYTES + 1);
}

static void m_ii_nlink_dir(struct tc_env *e)
{
	tc_ii(e, S_ROOT)->nlink = cpu_to_le32(1);
}

static void m_ii_nlink_root(struct tc_env *e)
{
	tc_ii(e, S_ROOT)->nlink = 0;
}

static void m_ii_transid(struct tc_env *e)
{
	tc_ii(e, S_FILE)->transid = cpu_to_le64(TC_GEN + 1);
}

static void m_ii_gen0(struct tc_env *e)
{
	tc_ii(e, S_FILE)->generation = 0;
}

static void m_ii_next_max(struct tc_env *e)
{
	tc_ii(e, S_ROOT)->next_index = cpu_to_le64(U64_MAX);
}

static void m_ii_next_low(struct tc_env *e)
{
	tc_ii(e, S_ROOT)->next_index = cpu_to_le64(1);
}

static void m_de_len(struct tc_env *e)
{
	tc_de(e, S_DIR_ITEM)->name_len = cpu_to_le16(2);
}

static void m_de_len_huge(struct tc_env *e)
{
	tc_de(e, S_INDEX_A)->name_len = cpu_to_le16(0xffff);
}

/* shrunk from the front so that it still ends where it did */
static void m_de_short(struct tc_env *e)
{
	tc_it(e, S_INDEX_L)->size = cpu_to_le32(10);
	le32_add_cpu(&tc_it(e, S_INDEX_L)->offset, 10);
}

static void m_de_slash(struct tc_env *e)
{
	*(char *)(tc_de(e, S_DIR_ITEM) + 1) = '/';
}

static void m_de_nul(struct tc_env *e)
{
	*(char *)(tc_de(e, S_INDEX_A) + 1) = '\0';
}

static void m_de_empty(struct tc_env *e)
{
	tc_de(e, S_INDEX_A)->name_len = 0;
}

static void m_de_type(struct tc_env *e)
{
	tc_de(e, S_INDEX_A)->type = TWIG_FT_MAX;
}

static void m_de_type0(struct tc_env *e)
{
	tc_de(e, S_INDEX_A)->type = TWIG_FT_UNKNOWN;
}

static void m_de_ino_root(struct tc_env *e)
{
	tc_de(e, S_INDEX_A)->ino = cpu_to_le64(256);
}

static void m_de_ino_max(struct tc_env *e)
{
	tc_de(e, S_INDEX_A)->ino = cpu_to_le64(U64_MAX);
}

static void m_de_transid(struct tc_env *e)
{
	tc_de(e, S_INDEX_A)->transid = cpu_to_le64(TC_GEN + 1);
}

static void m_de_hash(struct tc_env *e)
{
	tc_set_offset(e, S_DIR_ITEM, crc32c(TWIG_NAME_HASH_SEED, "a", 1) + 1);
}

static struct twig_xattr_entry *tc_xe(struct tc_env *e)
{
	return tc_data(e, S_FILE_XATTR);
}

/* The second entry's value runs past the item. */
static void m_xattr_len(struct tc_env *e)
{
	u32 one = sizeof(struct twig_xattr_entry) + strlen(TC_XNAME1) + 3;
	struct twig_xattr_entry *xe = (void *)((u8 *)tc_xe(e) + one);

	xe->value_len = cpu_to_le16(4);
}

static void m_xattr_value_max(struct tc_env *e)
{
	tc_xe(e)->value_len = cpu_to_le16(TWIG_XATTR_MAX_VALUE + 1);
}

static void m_xattr_empty(struct tc_env *e)
{
	tc_it(e, S_FILE_XATTR)->size = 0;
	/* the items after it move up by its size: keep them packed */
	tc_it(e, S_FILE_XATTR)->offset = tc_it(e, S_FILE_REF)->offset;
}

static void m_xattr_prefix(struct tc_env *e)
{
	((char *)(tc_xe(e) + 1))[0] = 'x';	/* "xser.c1371838" */
}

static void m_xattr_nul(struct tc_env *e)
{
	((char *)(tc_xe(e) + 1))[6] = '\0';
}

static void m_xattr_hash(struct tc_env *e)
{
	tc_set_offset(e, S_FILE_XATTR, TC_XHASH + 1);
}

static void m_xattr_transid(struct tc_env *e)
{
	tc_xe(e)->transid = cpu_to_le64(TC_GEN + 1);
}

static void m_index_max(struct tc_env *e)
{
	tc_set_offset(e, S_INDEX_L, U64_MAX);
}

static void m_index_low(struct tc_env *e)
{
	tc_set_offset(e, S_INDEX_A, 1);
}

static void m_ref_len(struct tc_env *e)
{
	tc_iref(e, S_FILE_REF)->name_len = cpu_to_le16(5);
}

static void m_ref_slash(struct tc_env *e)
{
	*(char *)(tc_iref(e, S_FILE_REF) + 1) = '/';
}

static void m_ref_self(struct tc_env *e)
{
	tc_set_offset(e, S_FILE_REF, 257);
}

static void m_ref_root(struct tc_env *e)
{
	tc_set_key(e, S_ROOT, 256, TWIG_INODE_REF_KEY, 255);
}

static void m_ref_index(struct tc_env *e)
{
	tc_iref(e, S_FILE_REF)->index = cpu_to_le64(U64_MAX);
}

static void m_orphan_root(struct tc_env *e)
{
	tc_set_offset(e, S_ORPHAN, 256);
}

static void m_orphan_max(struct tc_env *e)
{
	tc_set_offset(e, S_ORPHAN, U64_MAX);
}

static void m_ext_inline_size(struct tc_env *e)
{
	tc_fe(e, S_LINK_EXT)->ram_bytes = cpu_to_le64(4);
}

/* the first 48 bytes moved up by one: the item still ends where it did */
static void m_ext_reg_size(struct tc_env *e)
{
	memmove(tc_data(e, S_FILE_EXT) + 1, tc_data(e, S_FILE_EXT), 48);
	tc_it(e, S_FILE_EXT)->size = cpu_to_le32(48);
	le32_add_cpu(&tc_it(e, S_FILE_EXT)->offset, 1);
}

static void m_ext_type(struct tc_env *e)
{
	tc_fe(e, S_FILE_EXT)->type = 3;
}

static void m_ext_gen(struct tc_env *e)
{
	tc_fe(e, S_FILE_EXT)->generation = cpu_to_le64(TC_GEN + 1);
}

static void m_ext_inline_off(struct tc_env *e)
{
	tc_set_offset(e, S_LINK_EXT, 4096);
}

static void m_ext_align(struct tc_env *e)
{
	le64_add_cpu(&tc_fe(e, S_FILE_EXT)->disk_bytenr, 512);
}

static void m_ext_align_key(struct tc_env *e)
{
	tc_set_offset(e, S_FILE_EXT, 100);
}

static void m_ext_len0(struct tc_env *e)
{
	tc_fe(e, S_FILE_EXT)->num_bytes = 0;
}

static void m_ext_len_run(struct tc_env *e)
{
	tc_fe(e, S_FILE_EXT)->offset = cpu_to_le64(4096);
}

/*
 * num_bytes past disk_num_bytes: disk_num_bytes - num_bytes wraps, so a
 * check of offset against it alone passes at offset 0.
 */
static void m_ext_len_past_run(struct tc_env *e)
{
	tc_fe(e, S_FILE_EXT)->num_bytes = cpu_to_le64(8192 + 4096);
}

/* num_bytes may end mid-sector, but not a byte past the run */
static void m_ext_len_byte_past(struct tc_env *e)
{
	tc_fe(e, S_FILE_EXT)->num_bytes = cpu_to_le64(8192 + 1);
}

static void m_ext_len_max(struct tc_env *e)
{
	tc_fe(e, S_FILE_EXT)->num_bytes = cpu_to_le64(TWIG_MAX_EXTENT + 4096);
	tc_fe(e, S_FILE_EXT)->disk_num_bytes = cpu_to_le64(TWIG_MAX_EXTENT + 4096);
}

static void m_ext_len_eof(struct tc_env *e)
{
	tc_set_offset(e, S_FILE_EXT, round_down(TWIG_MAX_FILE_SIZE, 4096));
}

static void m_ext_disk_super(struct tc_env *e)
{
	tc_fe(e, S_FILE_EXT)->disk_bytenr = cpu_to_le64(TWIG_SUPER_OFFSET);
}

static void m_ext_disk_bitmap(struct tc_env *e)
{
	tc_fe(e, S_FILE_EXT)->disk_bytenr = cpu_to_le64(TC_ALLOC_START);
}

static void m_ext_disk_end(struct tc_env *e)
{
	tc_fe(e, S_FILE_EXT)->disk_bytenr = cpu_to_le64(TC_DEV_BYTES - 4096);
}

static void m_ext_disk_wrap(struct tc_env *e)
{
	tc_fe(e, S_FILE_EXT)->disk_bytenr = cpu_to_le64(round_down(U64_MAX, 4096));
}

static void m_node_empty(struct tc_env *e)
{
	twig_set_header_nritems(e->eb, 0);
}

static void m_node_full(struct tc_env *e)
{
	twig_set_header_nritems(e->eb, twig_max_ptrs(e->fs) + 1);
}

static void m_ptr_align(struct tc_env *e)
{
	le64_add_cpu(&twig_node_ptr(e->eb, 1)->blockptr, 512);
}

static void m_ptr_super(struct tc_env *e)
{
	twig_node_ptr(e->eb, 1)->blockptr = cpu_to_le64(TWIG_SUPER_OFFSET);
}

static void m_ptr_end(struct tc_env *e)
{
	twig_node_ptr(e->eb, 1)->blockptr = cpu_to_le64(TC_DEV_BYTES);
}

static void m_ptr_self(struct tc_env *e)
{
	twig_node_ptr(e->eb, 1)->blockptr = cpu_to_le64(TC_BLOCK);
}

static void m_ptr_gen(struct tc_env *e)
{
	twig_node_ptr(e->eb, 1)->generation = cpu_to_le64(TC_GEN + 1);
}

static void m_ptr_gen0(struct tc_env *e)
{
	twig_node_ptr(e->eb, 1)->generation = 0;
}

static void m_node_order(struct tc_env *e)
{
	twig_node_ptr(e->eb, 2)->key = twig_node_ptr(e->eb, 1)->key;
}

#define R(x)	TWIG_RULE_##x
static const struct tc_case tc_cases[] = {
	{ "checksum", R(CSUM),
	  .keep_csum = true, .slot = -1, .mutate = m_csum },
	{ "bytenr", R(BYTENR), .slot = -1, .mutate = m_bytenr },
	{ "block at the superblock", R(BLOCK_ADDR),
	  .slot = -1, .mutate = m_addr_super },
	{ "block in bitmap B", R(BLOCK_ADDR),
	  .slot = -1, .mutate = m_addr_bitmap },
	{ "block past the device", R(BLOCK_ADDR),
	  .slot = -1, .mutate = m_addr_end },
	{ "fsid", R(FSID), .slot = -1, .mutate = m_fsid },
	{ "owner", R(OWNER), .slot = -1, .mutate = m_owner },
	{ "level not the parent's", R(LEVEL),
	  .slot = -1, .mutate = m_level_parent },
	{ "level too high", R(LEVEL),
	  .node = true, .slot = -1, .mutate = m_level_max },
	{ "generation in the future", R(GENERATION),
	  .slot = -1, .mutate = m_gen_new },
	{ "generation not the parent's", R(GENERATION),
	  .slot = -1, .mutate = m_gen_parent },
	{ "generation 0", R(GENERATION), .slot = -1, .mutate = m_gen_zero },
	{ "leaf nritems", R(LEAF_NRITEMS), .slot = -1, .mutate = m_nritems },
	{ "item bounds u32 wrap", R(ITEM_BOUNDS),
	  .slot = 0, .mutate = m_bounds_wrap },
	{ "item data over the array", R(ITEM_BOUNDS),
	  .slot = S_LINK_EXT, .mutate = m_bounds_array },
	{ "item data not packed", R(ITEM_BOUNDS),
	  .slot = S_ROOT, .mutate = m_bounds_gap },
	{ "leaf key order", R(KEY_ORDER),
	  .slot = S_INDEX_L, .mutate = m_key_order },
	{ "unknown key type", R(KEY_TYPE),
	  .slot = S_LINK_EXT, .mutate = m_key_type },
	{ "objectid U64_MAX", R(KEY_TYPE),
	  .slot = S_LINK_EXT, .mutate = m_key_objectid },
	{ "orphan item of objectid 7", R(KEY_TYPE),
	  .slot = S_ORPHAN, .mutate = m_key_orphan_oid },
	{ "inode item of objectid 6", R(KEY_TYPE),
	  .slot = S_ORPHAN, .mutate = m_key_oid6 },
	{ "inode item offset", R(INODE_ITEM_SIZE),
	  .slot = S_FILE, .mutate = m_ii_offset },
	{ "inode mode type", R(INODE_MODE),
	  .slot = S_FILE, .mutate = m_ii_mode },
	{ "inode mode stray bits", R(INODE_MODE),
	  .slot = S_FILE, .mutate = m_ii_mode_bits },
	{ "root not a directory", R(INODE_MODE),
	  .slot = S_ROOT, .mutate = m_ii_root_mode },
	{ "negative i_size", R(INODE_SIZE),
	  .slot = S_FILE, .mutate = m_ii_size },
	{ "symlink too long", R(INODE_SIZE),
	  .slot = S_LINK, .mutate = m_ii_symlink },
	{ "nbytes past the device", R(INODE_SIZE),
	  .slot = S_FILE, .mutate = m_ii_nbytes },
	{ "directory nlink 1", R(INODE_NLINK),
	  .slot = S_ROOT, .mutate = m_ii_nlink_dir },
	{ "root nlink 0", R(INODE_NLINK),
	  .slot = S_ROOT, .mutate = m_ii_nlink_root },
	{ "inode transid in the future", R(INODE_TRANSID),
	  .slot = S_FILE, .mutate = m_ii_transid },
	{ "inode generation 0", R(INODE_TRANSID),
	  .slot = S_FILE, .mutate = m_ii_gen0 },
	{ "next_index U64_MAX", R(INODE_NEXT_INDEX),
	  .slot = S_ROOT, .mutate = m_ii_next_max },
	{ "next_index 1", R(INODE_NEXT_INDEX),
	  .slot = S_ROOT, .mutate = m_ii_next_low },
	{ "dirent name past the item", R(DIRENT_SIZE),
	  .slot = S_DIR_ITEM, .mutate = m_de_len },
	{ "dirent name_len 65535", R(DIRENT_SIZE),
	  .slot = S_INDEX_A, .mutate = m_de_len_huge },
	{ "dirent shorter than its header", R(DIRENT_SIZE),
	  .slot = S_INDEX_L, .mutate = m_de_short },
	{ "dirent name with slash", R(DIRENT_NAME),
	  .slot = S_DIR_ITEM, .mutate = m_de_slash },
	{ "dirent name with NUL", R(DIRENT_NAME),
	  .slot = S_INDEX_A, .mutate = m_de_nul },
	{ "dirent empty name", R(DIRENT_NAME),
	  .slot = S_INDEX_A, .mutate = m_de_empty },
	{ "dirent type FT_MAX", R(DIRENT_TYPE),
	  .slot = S_INDEX_A, .mutate = m_de_type },
	{ "dirent type unknown", R(DIRENT_TYPE),
	  .slot = S_INDEX_A, .mutate = m_de_type0 },
	{ "dirent names the root", R(DIRENT_INO),
	  .slot = S_INDEX_A, .mutate = m_de_ino_root },
	{ "dirent ino U64_MAX", R(DIRENT_INO),
	  .slot = S_INDEX_A, .mutate = m_de_ino_max },
	{ "dirent transid in the future", R(DIRENT_TRANSID),
	  .slot = S_INDEX_A, .mutate = m_de_transid },
	{ "dir item hash", R(DIRENT_HASH),
	  .slot = S_DIR_ITEM, .mutate = m_de_hash },
	{ "xattr value past the item", R(XATTR_SIZE),
	  .slot = S_FILE_XATTR, .mutate = m_xattr_len },
	{ "xattr value above TWIG_XATTR_MAX_VALUE", R(XATTR_SIZE),
	  .slot = S_FILE_XATTR, .mutate = m_xattr_value_max },
	{ "xattr item empty", R(XATTR_SIZE),
	  .slot = S_FILE_XATTR, .mutate = m_xattr_empty },
	{ "xattr name unknown prefix", R(XATTR_NAME),
	  .slot = S_FILE_XATTR, .mutate = m_xattr_prefix },
	{ "xattr name with NUL", R(XATTR_NAME),
	  .slot = S_FILE_XATTR, .mutate = m_xattr_nul },
	{ "xattr item hash", R(XATTR_HASH),
	  .slot = S_FILE_XATTR, .mutate = m_xattr_hash },
	{ "xattr transid in the future", R(XATTR_TRANSID),
	  .slot = S_FILE_XATTR, .mutate = m_xattr_transid },
	{ "dir index U64_MAX", R(DIR_INDEX),
	  .slot = S_INDEX_L, .mutate = m_index_max },
	{ "dir index 1", R(DIR_INDEX),
	  .slot = S_INDEX_A, .mutate = m_index_low },
	{ "ref name past the item", R(REF_SIZE),
	  .slot = S_FILE_REF, .mutate = m_ref_len },
	{ "ref name with slash", R(REF_NAME),
	  .slot = S_FILE_REF, .mutate = m_ref_slash },
	{ "ref parent is itself", R(REF_PARENT),
	  .slot = S_FILE_REF, .mutate = m_ref_self },
	{ "ref of the root", R(REF_PARENT),
	  .slot = S_ROOT, .mutate = m_ref_root },
	{ "ref index U64_MAX", R(REF_INDEX),
	  .slot = S_FILE_REF, .mutate = m_ref_index },
	{ "orphan of the root", R(ORPHAN),
	  .slot = S_ORPHAN, .mutate = m_orphan_root },
	{ "orphan of U64_MAX", R(ORPHAN),
	  .slot = S_ORPHAN, .mutate = m_orphan_max },
	{ "inline size vs ram_bytes", R(EXTENT_SIZE),
	  .slot = S_LINK_EXT, .mutate = m_ext_inline_size },
	{ "regular extent 48 bytes", R(EXTENT_SIZE),
	  .slot = S_FILE_EXT, .mutate = m_ext_reg_size },
	{ "extent type 3", R(EXTENT_TYPE),
	  .slot = S_FILE_EXT, .mutate = m_ext_type },
	{ "extent generation in the future", R(EXTENT_GEN),
	  .slot = S_FILE_EXT, .mutate = m_ext_gen },
	{ "inline extent not at 0", R(EXTENT_INLINE),
	  .slot = S_LINK_EXT, .mutate = m_ext_inline_off },
	{ "disk_bytenr unaligned", R(EXTENT_ALIGN),
	  .slot = S_FILE_EXT, .mutate = m_ext_align },
	{ "file offset unaligned", R(EXTENT_ALIGN),
	  .slot = S_FILE_EXT, .mutate = m_ext_align_key },
	{ "num_bytes 0", R(EXTENT_LEN),
	  .slot = S_FILE_EXT, .mutate = m_ext_len0 },
	{ "extent outside its run", R(EXTENT_LEN),
	  .slot = S_FILE_EXT, .mutate = m_ext_len_run },
	{ "extent longer than its run", R(EXTENT_LEN),
	  .slot = S_FILE_EXT, .mutate = m_ext_len_past_run },
	{ "extent a byte past its run", R(EXTENT_LEN),
	  .slot = S_FILE_EXT, .mutate = m_ext_len_byte_past },
	{ "extent above TWIG_MAX_EXTENT", R(EXTENT_LEN),
	  .slot = S_FILE_EXT, .mutate = m_ext_len_max },
	{ "extent past the max file size", R(EXTENT_LEN),
	  .slot = S_FILE_EXT, .mutate = m_ext_len_eof },
	{ "extent on the superblock", R(EXTENT_DISK),
	  .slot = S_FILE_EXT, .mutate = m_ext_disk_super },
	{ "extent on bitmap A", R(EXTENT_DISK),
	  .slot = S_FILE_EXT, .mutate = m_ext_disk_bitmap },
	{ "extent past the device", R(EXTENT_DISK),
	  .slot = S_FILE_EXT, .mutate = m_ext_disk_end },
	{ "extent bytenr + len wraps", R(EXTENT_DISK),
	  .slot = S_FILE_EXT, .mutate = m_ext_disk_wrap },
	{ "node without pointers", R(NODE_NRITEMS),
	  .node = true, .slot = -1, .mutate = m_node_empty },
	{ "node overfull", R(NODE_NRITEMS),
	  .node = true, .slot = -1, .mutate = m_node_full },
	{ "child unaligned", R(NODE_PTR),
	  .node = true, .slot = 1, .mutate = m_ptr_align },
	{ "child is the superblock", R(NODE_PTR),
	  .node = true, .slot = 1, .mutate = m_ptr_super },
	{ "child past the device", R(NODE_PTR),
	  .node = true, .slot = 1, .mutate = m_ptr_end },
	{ "child is the node", R(NODE_PTR),
	  .node = true, .slot = 1, .mutate = m_ptr_self },
	{ "child newer than the node", R(NODE_PTR_GEN),
	  .node = true, .slot = 1, .mutate = m_ptr_gen },
	{ "child generation 0", R(NODE_PTR_GEN),
	  .node = true, .slot = 1, .mutate = m_ptr_gen0 },
	{ "node key order", R(KEY_ORDER),
	  .node = true, .slot = 2, .mutate = m_node_order },
	{ "log block without LOG_PREV first", R(LOG_PREV),
	  .log = true, .slot = 0, .mutate = m_log_no_prev },
};

#undef R

static void tc_case_desc(const struct tc_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s: %s",
		 twig_tree_rule_name(c->rule), c->what);
}

KUNIT_ARRAY_PARAM(tc_rules, tc_cases, tc_case_desc);

static void tc_rule(struct kunit *test)
{
	const struct tc_case *c = test->param_value;
	struct tc_env *e = tc_env(test);
	int slot, rule;

	if (c->node)
		tc_node(e);
	else
		tc_leaf(e);
	tc_csum(e);
	/* the unbroken block passes: only the mutation can fail it */
	KUNIT_ASSERT_EQ(test, tc_check(e, &slot), (int)TWIG_RULE_OK);
	c->mutate(e);
	if (!c->keep_csum)
		tc_csum(e);
	if (c->log)
		rule = twig_log_tree_check(e->fs, e->eb, TC_GEN, true, &slot);
	else
		rule = tc_check(e, &slot);
	KUNIT_EXPECT_STREQ(test, twig_tree_rule_name(rule),
			   twig_tree_rule_name(c->rule));
	KUNIT_EXPECT_EQ(test, slot, c->slot);
}

/* Every rule in format.h has a name and at least one case above. */
static void tc_every_rule(struct kunit *test)
{
	bool seen[TWIG_RULE_NR] = { };
	size_t i;
	int r;

	for (i = 0; i < ARRAY_SIZE(tc_cases); i++)
		seen[tc_cases[i].rule] = true;
	for (r = TWIG_RULE_OK + 1; r < TWIG_RULE_NR; r++) {
		/* and a name: the table in format.h has no holes */
		KUNIT_EXPECT_NOT_NULL_MSG(test, twig_tree_rule_name(r),
					  "rule %d has no name", r);
		KUNIT_EXPECT_TRUE_MSG(test, seen[r], "rule %s has no case",
				      twig_tree_rule_name(r));
	}
}

/* Valid blocks pass, with item checks: what twigfs writes is accepted. */
static void tc_valid(struct kunit *test)
{
	struct tc_env *e = tc_env(test);
	int slot;

	tc_leaf(e);
	tc_csum(e);
	KUNIT_EXPECT_EQ(test, tc_check(e, &slot), (int)TWIG_RULE_OK);
	/* the checksum is optional: blocks about to be written */
	tc_hdr(e)->csum = 0;
	KUNIT_EXPECT_EQ(test, twig_tree_check(e->fs, e->eb, 0, TC_GEN, false,
					      &slot), (int)TWIG_RULE_OK);
	/* fallocate(2)'s extents follow the regular extents' rules */
	tc_leaf(e);
	tc_fe(e, S_FILE_EXT)->type = TWIG_FILE_EXTENT_PREALLOC;
	tc_csum(e);
	KUNIT_EXPECT_EQ(test, tc_check(e, &slot), (int)TWIG_RULE_OK);
	/* a file's tail may end mid-sector, up to the last byte of its run */
	tc_leaf(e);
	tc_fe(e, S_FILE_EXT)->offset = cpu_to_le64(4096);
	tc_fe(e, S_FILE_EXT)->num_bytes = cpu_to_le64(4095);
	tc_csum(e);
	KUNIT_EXPECT_EQ(test, tc_check(e, &slot), (int)TWIG_RULE_OK);
	tc_node(e);
	tc_csum(e);
	KUNIT_EXPECT_EQ(test, tc_check(e, &slot), (int)TWIG_RULE_OK);
	/* an empty leaf is a valid root */
	tc_block_init(e, 0);
	tc_csum(e);
	KUNIT_EXPECT_EQ(test, tc_check(e, &slot), (int)TWIG_RULE_OK);
}

/* Item checks are skipped only for the tree-core tests' memory device. */
static void tc_opaque(struct kunit *test)
{
	struct tc_env *e = tc_env(test);
	int slot;

	tc_leaf(e);
	tc_ii(e, S_FILE)->mode = 0;
	tc_csum(e);
	__set_bit(TWIG_FS_OPAQUE_ITEMS, &e->fs->flags);
	KUNIT_EXPECT_EQ(test, tc_check(e, &slot), (int)TWIG_RULE_OK);
	__clear_bit(TWIG_FS_MEMONLY, &e->fs->flags);
	KUNIT_EXPECT_EQ(test, tc_check(e, &slot), (int)TWIG_RULE_INODE_MODE);
}

static struct kunit_case tc_test_cases[] = {
	KUNIT_CASE(tc_valid),
	KUNIT_CASE(tc_every_rule),
	KUNIT_CASE(tc_opaque),
	KUNIT_CASE_PARAM(tc_rule, tc_rules_gen_params),
	{}
};

static struct kunit_suite tc_suite = {
	.name = "twigfs-tree-checker",
	.test_cases = tc_test_cases,
};

kunit_test_suite(tc_suite);
