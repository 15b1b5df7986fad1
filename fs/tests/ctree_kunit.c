// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the twigfs tree core, run against an in-memory device
 * (TWIG_FS_MEMONLY): every test builds a fresh empty filesystem with 4 KiB
 * nodes (so 100k keys make a three-level tree), drives it through the
 * public core API and checks it against a reference model and a full
 * structural walk.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "../locking.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define TK_NODESIZE	4096
#define TK_DEV_BYTES	(256ULL << 20)
#define TK_NKEYS	100000	/* the model's size: the most keys a test uses */
#define TK_TYPE		TWIG_EXTENT_DATA_KEY

/*
 * Keys for the big tests: 100k by default.  Lockdep and KASAN make the
 * tree about 15x slower in a TCG guest, and a case that runs longer than
 * the guest's hung-task timeout (30 s) gets insmod, which waits for it,
 * reported; so debug kernels use a fifth, unless nkeys= says otherwise.
 */
static unsigned int nkeys;
module_param(nkeys, uint, 0444);
MODULE_PARM_DESC(nkeys, "keys in the large tests (default 100000, 20000 on debug kernels)");

static u64 tk_nkeys(void)
{
	if (nkeys)
		return clamp_t(u64, nkeys, 1000, TK_NKEYS);
	if (IS_ENABLED(CONFIG_PROVE_LOCKING) || IS_ENABLED(CONFIG_KASAN))
		return TK_NKEYS / 5;
	return TK_NKEYS;
}

/* ---- an in-memory filesystem ---- */

static void tk_put_leaf(struct twig_fs_info *fs, u64 bytenr, u32 nodesize)
{
	struct twig_header *h = kzalloc(nodesize, GFP_KERNEL);

	memcpy(h->fsid, fs->fsid, 16);
	h->bytenr = cpu_to_le64(bytenr);
	h->generation = cpu_to_le64(1);
	h->owner = cpu_to_le64(TWIG_FS_TREE_OBJECTID);
	h->csum = cpu_to_le32(twig_csum((u8 *)h + 4, nodesize - 4));
	twig_dev_write(fs, bytenr, h, nodesize, 0);
	kfree(h);
}

/* What mkfs.twigfs does, into fs->memdev: super, bitmap A, empty root. */
static void tk_mkfs(struct twig_fs_info *fs, u32 nodesize, u64 bytes)
{
	struct twig_super_block *sb = kzalloc(TWIG_SUPER_SIZE, GFP_KERNEL);
	u64 nbits = bytes / TWIG_SECTORSIZE;
	u64 map_bytes = DIV_ROUND_UP(nbits, 8);
	u64 alloc_bytes = round_up(map_bytes, TWIG_SECTORSIZE);
	u64 root = round_up(TWIG_RESERVED_BYTES + 2 * alloc_bytes, nodesize);
	u8 *map = vzalloc(map_bytes);
	u64 i;

	get_random_bytes(fs->fsid, 16);
	for (i = 0; i < (root + nodesize) / TWIG_SECTORSIZE; i++)
		map[i / 8] |= 1 << (i % 8);
	twig_dev_write(fs, TWIG_RESERVED_BYTES, map, map_bytes, 0);
	tk_put_leaf(fs, root, nodesize);

	sb->version = cpu_to_le32(TWIG_FORMAT_VERSION);
	sb->magic = cpu_to_le64(TWIG_MAGIC);
	sb->bytenr = cpu_to_le64(TWIG_SUPER_OFFSET);
	memcpy(sb->fsid, fs->fsid, 16);
	sb->generation = cpu_to_le64(1);
	sb->sectorsize = cpu_to_le32(TWIG_SECTORSIZE);
	sb->nodesize = cpu_to_le32(nodesize);
	sb->total_bytes = cpu_to_le64(bytes);
	sb->root = cpu_to_le64(root);
	sb->root_generation = cpu_to_le64(1);
	sb->alloc_csum = cpu_to_le32(twig_csum(map, map_bytes));
	sb->alloc_start = cpu_to_le64(TWIG_RESERVED_BYTES);
	sb->alloc_bytes = cpu_to_le64(alloc_bytes);
	sb->root_dir_objectid = cpu_to_le64(TWIG_ROOT_DIR_OBJECTID);
	fs->super_copy = sb;
	vfree(map);
}

static struct twig_fs_info *tk_fs_lock(struct kunit *test, const char *lock)
{
	struct twig_fs_info *fs = kzalloc(sizeof(*fs), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, fs);
	__set_bit(TWIG_FS_MEMONLY, &fs->flags);
	/* the items hold test patterns, not twigfs items */
	__set_bit(TWIG_FS_OPAQUE_ITEMS, &fs->flags);
	xa_init(&fs->memdev);
	tk_mkfs(fs, TK_NODESIZE, TK_DEV_BYTES);
	fs->lock_ops = twig_lock_strategy_get(lock);
	KUNIT_ASSERT_NOT_NULL(test, fs->lock_ops);
	KUNIT_ASSERT_EQ(test, twig_core_open(fs), 0);
	return fs;
}

static struct twig_fs_info *tk_fs(struct kunit *test)
{
	return tk_fs_lock(test, "mutex");
}

static void tk_fs_free(struct twig_fs_info *fs)
{
	twig_core_close(fs);
	twig_memdev_free(fs);
	kfree(fs->super_copy);
	kfree(fs);
}

/* Commit, drop every in-memory structure, mount again from memdev. */
static void tk_remount(struct kunit *test, struct twig_fs_info *fs)
{
	KUNIT_ASSERT_EQ(test, twig_commit_transaction(fs), 0);
	twig_core_close(fs);
	KUNIT_ASSERT_EQ(test, twig_core_open(fs), 0);
}

/* ---- items with contents derived from the key ---- */

static void tk_key(struct twig_key *key, u64 i)
{
	key->objectid = TWIG_FIRST_FREE_OBJECTID + i;
	key->type = TK_TYPE;
	key->offset = i * 7;
}

static void tk_fill(u8 *p, u64 i, u32 size)
{
	u32 j;

	for (j = 0; j < size; j++)
		p[j] = (u8)(i * 31 + j);
}

static bool tk_check(const u8 *p, u64 i, u32 size)
{
	u32 j;

	for (j = 0; j < size; j++)
		if (p[j] != (u8)(i * 31 + j))
			return false;
	return true;
}

static int tk_insert(struct twig_fs_info *fs, u64 i, u32 size)
{
	struct twig_path *p = twig_alloc_path();
	struct twig_trans *trans;
	struct twig_key key;
	int ret;

	if (!p)
		return -ENOMEM;
	trans = twig_start_transaction(fs, 1);
	if (IS_ERR(trans)) {
		twig_free_path(p);
		return PTR_ERR(trans);
	}
	tk_key(&key, i);
	ret = twig_insert_empty_item(trans, fs, p, &key, size);
	if (!ret)
		tk_fill(twig_item_ptr(p->nodes[0], p->slots[0]), i, size);
	twig_free_path(p);
	twig_end_transaction(trans);
	return ret;
}

static int tk_delete(struct twig_fs_info *fs, u64 i)
{
	struct twig_path *p = twig_alloc_path();
	struct twig_trans *trans;
	struct twig_key key;
	int ret;

	if (!p)
		return -ENOMEM;
	trans = twig_start_transaction_reserved(fs, 1);
	if (IS_ERR(trans)) {
		twig_free_path(p);
		return PTR_ERR(trans);
	}
	tk_key(&key, i);
	ret = twig_search_slot(trans, fs, &key, p, -1, 1);
	if (ret == 0)
		ret = twig_del_item(trans, fs, p);
	else if (ret > 0)
		ret = -ENOENT;
	twig_free_path(p);
	twig_end_transaction(trans);
	return ret;
}

/* 0 and the item's size, or -ENOENT. */
static int tk_lookup(struct twig_fs_info *fs, u64 i, u32 *size, bool *good)
{
	struct twig_path *p = twig_alloc_path();
	struct twig_key key;
	int ret;

	tk_key(&key, i);
	ret = twig_search_slot(NULL, fs, &key, p, 0, 0);
	if (ret == 0) {
		*size = twig_item_size(p->nodes[0], p->slots[0]);
		*good = tk_check(twig_item_ptr(p->nodes[0], p->slots[0]), i,
				 *size);
	} else if (ret > 0) {
		ret = -ENOENT;
	}
	twig_free_path(p);
	return ret;
}

/* ---- checks ---- */

struct tk_walk {
	struct kunit *test;
	u64 leaves, nodes, items;
	int max_level;
};

/*
 * Every invariant of ctree.c, recursively, without locks (the test is
 * alone): sorted keys, parent key == first key of the child, generation
 * and level of every pointer, non-root nodes with >= 2 children, only the
 * root leaf may be empty.
 */
static void tk_walk_block(struct tk_walk *w, struct twig_fs_info *fs,
			  struct twig_eb *eb, const struct twig_key *first,
			  bool is_root)
{
	struct kunit *test = w->test;
	u32 nr = twig_header_nritems(eb);
	struct twig_key prev, k;
	u32 i;

	KUNIT_EXPECT_EQ(test, twig_header_level(eb), eb->level);
	KUNIT_EXPECT_LE(test, twig_header_generation(eb), fs->generation + 1);
	if (eb->level == 0) {
		w->leaves++;
		w->items += nr;
		KUNIT_EXPECT_TRUE(test, nr > 0 || is_root);
		for (i = 0; i < nr; i++) {
			twig_item_key(eb, i, &k);
			if (i)
				KUNIT_EXPECT_LT(test, twig_key_cmp(&prev, &k), 0);
			else if (first)
				KUNIT_EXPECT_EQ(test, twig_key_cmp(first, &k), 0);
			prev = k;
		}
		KUNIT_EXPECT_LE(test, twig_leaf_free_space(eb),
				twig_leaf_data_size(fs));
		return;
	}
	w->nodes++;
	KUNIT_EXPECT_GE(test, nr, is_root ? 1U : 2U);
	for (i = 0; i < nr; i++) {
		struct twig_eb *child;

		twig_node_key(eb, i, &k);
		if (i)
			KUNIT_EXPECT_LT(test, twig_key_cmp(&prev, &k), 0);
		else if (first)
			KUNIT_EXPECT_EQ(test, twig_key_cmp(first, &k), 0);
		prev = k;
		child = twig_read_eb(fs, twig_node_blockptr(eb, i),
				     eb->level - 1,
				     twig_node_ptr_generation(eb, i));
		KUNIT_ASSERT_FALSE(test, IS_ERR(child));
		tk_walk_block(w, fs, child, &k, false);
		twig_eb_put(child);
	}
}

static void tk_walk(struct kunit *test, struct twig_fs_info *fs,
		    struct tk_walk *w)
{
	memset(w, 0, sizeof(*w));
	w->test = test;
	w->max_level = fs->root->level;
	tk_walk_block(w, fs, fs->root, NULL, true);
}

/* Iterate the whole tree with next_item and compare with the model. */
static void tk_compare(struct kunit *test, struct twig_fs_info *fs,
		       const u16 *model, u64 n)
{
	struct twig_path *p = twig_alloc_path();
	struct twig_key key = { 0, 0, 0 }, want;
	u64 i = 0, seen = 0, bad = 0;
	int ret;

	ret = twig_search_slot(NULL, fs, &key, p, 0, 0);
	KUNIT_ASSERT_GE(test, ret, 0);
	if (p->slots[0] >= twig_header_nritems(p->nodes[0]))
		ret = twig_next_leaf(fs, p);
	else
		ret = 0;
	while (ret == 0) {
		struct twig_eb *leaf = p->nodes[0];
		int slot = p->slots[0];

		while (i < n && !model[i])
			i++;
		if (i == n) {
			bad++;
			break;
		}
		twig_item_key(leaf, slot, &key);
		tk_key(&want, i);
		if (twig_key_cmp(&key, &want) ||
		    twig_item_size(leaf, slot) != model[i] - 1 ||
		    !tk_check(twig_item_ptr(leaf, slot), i, model[i] - 1))
			bad++;
		seen++;
		i++;
		ret = twig_next_item(fs, p);
	}
	KUNIT_EXPECT_EQ(test, ret, 1);
	while (i < n && !model[i])
		i++;
	KUNIT_EXPECT_EQ(test, i, n);
	KUNIT_EXPECT_EQ(test, bad, 0ULL);
	twig_free_path(p);
}

/* ---- tests ---- */

/* model[i]: 0 absent, else item size + 1 */
static u16 *tk_model(struct kunit *test)
{
	u16 *m = vzalloc(TK_NKEYS * sizeof(u16));

	KUNIT_ASSERT_NOT_NULL(test, m);
	return m;
}

static void tk_ordered(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	u16 *model = tk_model(test);
	u64 n = tk_nkeys();
	struct tk_walk w;
	u64 i;

	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, tk_insert(fs, i, 8), 0);
		model[i] = 9;
		if (i % 10000 == 9999)
			KUNIT_ASSERT_EQ(test, twig_commit_transaction(fs), 0);
	}
	KUNIT_EXPECT_EQ(test, tk_insert(fs, 5, 8), -EEXIST);
	tk_walk(test, fs, &w);
	KUNIT_EXPECT_EQ(test, w.items, n);
	KUNIT_EXPECT_GE(test, w.max_level, 2);
	kunit_info(test, "%llu ordered: %llu leaves, %llu nodes, root level %d",
		   n, w.leaves, w.nodes, w.max_level);
	tk_compare(test, fs, model, TK_NKEYS);

	tk_remount(test, fs);
	tk_compare(test, fs, model, TK_NKEYS);

	/* delete from the front: slot 0 and key fix-ups all the way up */
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, tk_delete(fs, i), 0);
		model[i] = 0;
		if (i % 10000 == 9999) {
			KUNIT_ASSERT_EQ(test, twig_commit_transaction(fs), 0);
			tk_walk(test, fs, &w);
			KUNIT_EXPECT_EQ(test, w.items, n - i - 1);
		}
	}
	KUNIT_EXPECT_EQ(test, tk_delete(fs, 5), -ENOENT);
	tk_walk(test, fs, &w);
	KUNIT_EXPECT_EQ(test, w.items, 0ULL);
	KUNIT_EXPECT_EQ(test, w.max_level, 0);
	tk_remount(test, fs);
	tk_compare(test, fs, model, TK_NKEYS);
	vfree(model);
	tk_fs_free(fs);
}

/* twig_prev_item() from past the last key visits keys n-1 .. 0. */
static void tk_backwards(struct kunit *test, struct twig_fs_info *fs, u64 n)
{
	struct twig_path *p = twig_alloc_path();
	struct twig_key key, want;
	u64 i = n;
	int ret;

	tk_key(&key, n);
	KUNIT_ASSERT_EQ(test, twig_search_slot(NULL, fs, &key, p, 0, 0), 1);
	while ((ret = twig_prev_item(fs, p)) == 0) {
		if (!i--)
			break;
		twig_item_key(p->nodes[0], p->slots[0], &key);
		tk_key(&want, i);
		KUNIT_EXPECT_EQ(test, twig_key_cmp(&key, &want), 0);
	}
	KUNIT_EXPECT_EQ(test, ret, 1);
	KUNIT_EXPECT_EQ(test, i, 0ULL);
	twig_free_path(p);
}

static void tk_reverse(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	u16 *model = tk_model(test);
	u64 n = tk_nkeys() / 4;
	struct tk_walk w;
	u64 i;

	/* descending inserts go to slot 0 of the leftmost leaf */
	for (i = n; i-- > 0;) {
		KUNIT_ASSERT_EQ(test, tk_insert(fs, i, 8), 0);
		model[i] = 9;
	}
	tk_walk(test, fs, &w);
	KUNIT_EXPECT_EQ(test, w.items, n);
	tk_compare(test, fs, model, TK_NKEYS);
	tk_backwards(test, fs, n);
	/* delete from the back */
	for (i = n; i-- > 0;) {
		KUNIT_ASSERT_EQ(test, tk_delete(fs, i), 0);
		model[i] = 0;
	}
	tk_walk(test, fs, &w);
	KUNIT_EXPECT_EQ(test, w.items, 0ULL);
	KUNIT_EXPECT_EQ(test, w.max_level, 0);
	vfree(model);
	tk_fs_free(fs);
}

/*
 * Keys @from, @from + @step, ... (@step may be negative) of 100 bytes
 * until the tree has three leaves; returns the last key inserted.
 */
static u64 tk_fill_leaves(struct kunit *test, struct twig_fs_info *fs,
			  u16 *model, u64 from, s64 step)
{
	struct tk_walk w;
	u64 i;

	for (i = from;; i += step) {
		KUNIT_ASSERT_EQ(test, tk_insert(fs, i, 100), 0);
		model[i] = 101;
		tk_walk(test, fs, &w);
		if (w.leaves == 3)
			return i;
	}
}

/*
 * A full leaf makes room in a sibling before it splits.  Ascending keys
 * leave full leaves behind (an append gets a fresh leaf), so the last
 * leaf has room: a key in the middle of the one before it pushes items
 * right instead of adding a leaf.  Descending keys are the mirror image:
 * the push goes left.
 */
static void tk_push(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	u16 *model = tk_model(test);
	struct tk_walk w;
	u64 last;

	last = tk_fill_leaves(test, fs, model, 0, 2);
	KUNIT_ASSERT_EQ(test, tk_insert(fs, last - 11, 100), 0);
	model[last - 11] = 101;
	tk_walk(test, fs, &w);
	KUNIT_EXPECT_EQ(test, w.leaves, 3ULL);
	tk_compare(test, fs, model, TK_NKEYS);
	KUNIT_ASSERT_EQ(test, twig_commit_transaction(fs), 0);
	tk_fs_free(fs);

	memset(model, 0, TK_NKEYS * sizeof(u16));
	fs = tk_fs(test);
	last = tk_fill_leaves(test, fs, model, 1000, -2);
	KUNIT_ASSERT_EQ(test, tk_insert(fs, last + 11, 100), 0);
	model[last + 11] = 101;
	tk_walk(test, fs, &w);
	KUNIT_EXPECT_EQ(test, w.leaves, 3ULL);
	tk_compare(test, fs, model, TK_NKEYS);
	vfree(model);
	tk_fs_free(fs);
}

static struct twig_fs_info *tk_race_fs;
static u64 tk_race_key;

/* twig_test_hooks.next_leaf: a writer inserts one key in the unlocked window */
static void tk_race_insert(struct twig_fs_info *fs)
{
	twig_test_hooks.next_leaf = NULL;
	WARN_ON(tk_insert(tk_race_fs, tk_race_key, 100));
}

/*
 * The first item >= a key that falls between two leaves is the next
 * leaf's first, even when a writer inserts an item below that key while
 * twig_next_leaf() holds no lock: keys 0, 4, 8, ... fill three leaves;
 * the walk asks for a + 2 (a the last key of a leaf, b the next leaf's
 * first) and the racing writer inserts a + 1.
 */
static void tk_walk_first_race(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	u16 *model = tk_model(test);
	struct twig_path *p = twig_alloc_path();
	struct twig_key key, found, want;
	struct twig_eb *leaf = NULL;
	u64 last, i, a = 0, b = 0;

	KUNIT_ASSERT_NOT_NULL(test, p);
	last = tk_fill_leaves(test, fs, model, 0, 4);
	for (i = 0; i <= last && !b; i += 4) {
		tk_key(&key, i);
		KUNIT_ASSERT_EQ(test, twig_search_slot(NULL, fs, &key, p, 0, 0), 0);
		if (leaf && p->nodes[0] != leaf)
			b = i;
		else
			a = i;
		leaf = p->nodes[0];
		twig_release_path(p);
	}
	KUNIT_ASSERT_NE(test, b, 0ULL);
	KUNIT_ASSERT_EQ(test, b, a + 4);

	tk_race_fs = fs;
	tk_race_key = a + 1;
	twig_test_hooks.next_leaf = tk_race_insert;
	tk_key(&key, a + 2);
	KUNIT_ASSERT_EQ(test, twig_walk_first(fs, &key, p), 0);
	twig_test_hooks.next_leaf = NULL;
	twig_item_key(p->nodes[0], p->slots[0], &found);
	twig_release_path(p);
	tk_key(&want, b);
	KUNIT_EXPECT_EQ(test, found.objectid, want.objectid);
	KUNIT_EXPECT_EQ(test, found.offset, want.offset);
	/* the writer did run: its key is there */
	model[a + 1] = 101;
	tk_compare(test, fs, model, TK_NKEYS);
	twig_free_path(p);
	vfree(model);
	tk_fs_free(fs);
}

/*
 * Random inserts and deletes of items of random sizes (up to a quarter of
 * a leaf), 100k operations, checked against the model along the way.
 */
static void tk_random(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	u16 *model = tk_model(test);
	struct rnd_state rnd;
	u64 ops, present = 0, n = tk_nkeys();
	struct tk_walk w;
	int max_level = 0;

	prandom_seed_state(&rnd, 0x7719f5);
	for (ops = 0; ops < n; ops++) {
		u64 i = prandom_u32_state(&rnd) % (n / 2);
		u32 size = prandom_u32_state(&rnd) % 1000 + 1;
		int ret;

		if (model[i]) {
			ret = tk_delete(fs, i);
			KUNIT_ASSERT_EQ(test, ret, 0);
			model[i] = 0;
			present--;
		} else {
			ret = tk_insert(fs, i, size);
			KUNIT_ASSERT_EQ(test, ret, 0);
			model[i] = size + 1;
			present++;
		}
		max_level = max_t(int, max_level, fs->root_level);
		if (ops % (n / 5) == n / 5 - 1) {
			KUNIT_ASSERT_EQ(test, twig_commit_transaction(fs), 0);
			tk_walk(test, fs, &w);
			KUNIT_EXPECT_EQ(test, w.items, present);
		}
	}
	KUNIT_EXPECT_GE(test, max_level, 2);
	tk_compare(test, fs, model, TK_NKEYS);
	tk_remount(test, fs);
	tk_compare(test, fs, model, TK_NKEYS);

	/* spot lookups */
	for (ops = 0; ops < 2000; ops++) {
		u64 i = prandom_u32_state(&rnd) % (n / 2);
		bool good = false;
		u32 size = 0;
		int ret = tk_lookup(fs, i, &size, &good);

		if (model[i]) {
			KUNIT_EXPECT_EQ(test, ret, 0);
			KUNIT_EXPECT_EQ(test, size + 1, (u32)model[i]);
			KUNIT_EXPECT_TRUE(test, good);
		} else {
			KUNIT_EXPECT_EQ(test, ret, -ENOENT);
		}
	}

	/* drain, the merges take the tree back to one leaf */
	for (ops = 0; ops < n; ops++) {
		if (model[ops]) {
			KUNIT_ASSERT_EQ(test, tk_delete(fs, ops), 0);
			model[ops] = 0;
		}
	}
	tk_walk(test, fs, &w);
	KUNIT_EXPECT_EQ(test, w.items, 0ULL);
	KUNIT_EXPECT_EQ(test, w.max_level, 0);
	vfree(model);
	tk_fs_free(fs);
}

/* Resizing items in place: extend and truncate keep neighbours intact. */
static void tk_resize(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	u16 *model = tk_model(test);
	struct twig_trans *trans;
	struct twig_path *p;
	struct twig_key key;
	u64 i;

	for (i = 0; i < 2000; i++) {
		KUNIT_ASSERT_EQ(test, tk_insert(fs, i, 10), 0);
		model[i] = 11;
	}
	p = twig_alloc_path();
	for (i = 0; i < 2000; i += 3) {
		u32 new = 10 + (i % 200);

		trans = twig_start_transaction(fs, 1);
		KUNIT_ASSERT_FALSE(test, IS_ERR(trans));
		tk_key(&key, i);
		KUNIT_ASSERT_EQ(test,
				twig_search_slot(trans, fs, &key, p, new - 10, 1),
				0);
		KUNIT_ASSERT_EQ(test, twig_extend_item(fs, p, new), 0);
		tk_fill(twig_item_ptr(p->nodes[0], p->slots[0]), i, new);
		twig_mark_buffer_dirty(trans, p->nodes[0]);
		twig_release_path(p);
		twig_end_transaction(trans);
		model[i] = new + 1;
	}
	for (i = 1; i < 2000; i += 3) {
		trans = twig_start_transaction(fs, 1);
		KUNIT_ASSERT_FALSE(test, IS_ERR(trans));
		tk_key(&key, i);
		KUNIT_ASSERT_EQ(test, twig_search_slot(trans, fs, &key, p, 0, 1),
				0);
		twig_truncate_item(fs, p, 3);
		twig_mark_buffer_dirty(trans, p->nodes[0]);
		twig_release_path(p);
		twig_end_transaction(trans);
		model[i] = 4;
	}
	twig_free_path(p);
	tk_compare(test, fs, model, TK_NKEYS);
	tk_remount(test, fs);
	tk_compare(test, fs, model, TK_NKEYS);
	vfree(model);
	tk_fs_free(fs);
}

static bool tk_busy(struct twig_fs_info *fs, u64 bytenr)
{
	return test_bit_le(bytenr >> TWIG_SECTOR_SHIFT, fs->alloc_busy);
}

/*
 * CoW: a committed block is copied on first change, in place after that
 * within the transaction; the old block stays allocated (pinned) until the
 * commit and is free after it.
 */
static void tk_cow(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	u64 old_root, cow_root, gen;
	u64 i;

	for (i = 0; i < 10; i++)
		KUNIT_ASSERT_EQ(test, tk_insert(fs, i, 8), 0);
	KUNIT_ASSERT_EQ(test, twig_commit_transaction(fs), 0);
	gen = fs->generation;
	old_root = fs->root->start;
	KUNIT_EXPECT_EQ(test, twig_header_generation(fs->root), gen);

	KUNIT_ASSERT_EQ(test, tk_insert(fs, 100, 8), 0);
	cow_root = fs->root->start;
	KUNIT_EXPECT_NE(test, cow_root, old_root);
	KUNIT_EXPECT_EQ(test, twig_header_generation(fs->root), gen + 1);
	KUNIT_EXPECT_TRUE(test, tk_busy(fs, old_root));	/* pinned */

	KUNIT_ASSERT_EQ(test, tk_insert(fs, 101, 8), 0);
	KUNIT_EXPECT_EQ(test, fs->root->start, cow_root);	/* in place */

	KUNIT_ASSERT_EQ(test, twig_commit_transaction(fs), 0);
	KUNIT_EXPECT_EQ(test, fs->generation, gen + 1);
	KUNIT_EXPECT_FALSE(test, tk_busy(fs, old_root));	/* unpinned */
	KUNIT_EXPECT_EQ(test, le64_to_cpu(fs->super_copy->root), cow_root);

	/* an untouched transaction leaves the blocks alone */
	KUNIT_ASSERT_EQ(test, tk_delete(fs, 100), 0);
	KUNIT_EXPECT_NE(test, fs->root->start, cow_root);
	KUNIT_EXPECT_TRUE(test, tk_busy(fs, cow_root));
	tk_remount(test, fs);
	KUNIT_EXPECT_EQ(test, fs->generation, gen + 2);
	tk_fs_free(fs);
}

/*
 * A failed allocation at every step of a split (new root, new right half,
 * CoW copies): the operation fails with ENOSPC, the tree stays intact and
 * the same insert then succeeds.
 */
static void tk_failed_alloc(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	u16 *model = tk_model(test);
	u64 i, inserted = 0, failures = 0;
	struct tk_walk w;
	int nth;

	for (i = 0; i < 3000; i++) {
		KUNIT_ASSERT_EQ(test, tk_insert(fs, 2 * i, 100), 0);
		model[2 * i] = 101;
	}
	KUNIT_ASSERT_EQ(test, twig_commit_transaction(fs), 0);

	/* odd keys in the middle of full leaves: each insert splits */
	for (i = 0; i < 60; i++) {
		u64 k = 2 * ((i * 97) % 3000) + 1;
		int ret = -ENOSPC;

		for (nth = 1; nth < 8 && ret; nth++) {
			atomic_set(&fs->inject_alloc_fail, nth);
			ret = tk_insert(fs, k, 100);
			atomic_set(&fs->inject_alloc_fail, 0);
			if (ret) {
				KUNIT_ASSERT_EQ(test, ret, -ENOSPC);
				failures++;
				tk_walk(test, fs, &w);
				KUNIT_ASSERT_EQ(test, w.items, 3000 + inserted);
			}
		}
		if (ret)
			KUNIT_ASSERT_EQ(test, tk_insert(fs, k, 100), 0);
		model[k] = 101;
		inserted++;
		if (i % 20 == 19)
			KUNIT_ASSERT_EQ(test, twig_commit_transaction(fs), 0);
	}
	KUNIT_EXPECT_GT(test, failures, 60ULL);
	tk_compare(test, fs, model, TK_NKEYS);
	tk_remount(test, fs);
	tk_compare(test, fs, model, TK_NKEYS);
	vfree(model);
	tk_fs_free(fs);
}

/* A corrupted block is refused with EUCLEAN, not handed to the tree. */
static void tk_corrupt(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	struct twig_eb *leaf;
	struct twig_key key;
	struct twig_path *p;
	u64 i, victim;
	u8 byte;

	for (i = 0; i < 2000; i++)
		KUNIT_ASSERT_EQ(test, tk_insert(fs, i, 8), 0);
	tk_remount(test, fs);
	KUNIT_ASSERT_GE(test, (int)fs->root->level, 1);
	victim = twig_node_blockptr(fs->root, 1);

	twig_core_close(fs);
	twig_dev_read(fs, victim + 200, &byte, 1);
	byte ^= 0x40;
	twig_dev_write(fs, victim + 200, &byte, 1, 0);
	KUNIT_ASSERT_EQ(test, twig_core_open(fs), 0);

	p = twig_alloc_path();
	twig_node_key(fs->root, 1, &key);
	KUNIT_EXPECT_EQ(test, twig_search_slot(NULL, fs, &key, p, 0, 0),
			-EUCLEAN);
	KUNIT_EXPECT_NULL(test, p->nodes[0]);
	/* the other leaves are fine */
	twig_node_key(fs->root, 0, &key);
	KUNIT_EXPECT_EQ(test, twig_search_slot(NULL, fs, &key, p, 0, 0), 0);
	leaf = p->nodes[0];
	KUNIT_EXPECT_NOT_NULL(test, leaf);
	twig_free_path(p);
	tk_fs_free(fs);
}

/*
 * A pointer at a block of the wrong level (a child pointing at an
 * ancestor, or a node at a leaf) is refused, cached or read from disk,
 * so a loop in the tree is never followed.
 */
static void tk_parent_check(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	struct twig_eb *eb;
	u64 leaf, gen;
	u64 i;

	for (i = 0; i < 2000; i++)
		KUNIT_ASSERT_EQ(test, tk_insert(fs, i, 8), 0);
	tk_remount(test, fs);
	KUNIT_ASSERT_EQ(test, (int)fs->root->level, 1);
	/* the root, cached, as its own child */
	eb = twig_read_eb(fs, fs->root->start, 0,
			  twig_header_generation(fs->root));
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(eb), -EUCLEAN);
	/* a leaf not read yet, expected as a node */
	leaf = twig_node_blockptr(fs->root, 0);
	gen = twig_node_ptr_generation(fs->root, 0);
	eb = twig_read_eb(fs, leaf, 1, gen);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(eb), -EUCLEAN);
	/* at the right level and generation it is fine */
	eb = twig_read_eb(fs, leaf, 0, gen);
	KUNIT_ASSERT_FALSE(test, IS_ERR(eb));
	twig_eb_put(eb);
	eb = twig_read_eb(fs, leaf, 0, gen + 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(eb), -EUCLEAN);
	tk_fs_free(fs);
}

/* Write a root leaf holding only the root directory's INODE_ITEM. */
static void tk_put_root_inode(struct twig_fs_info *fs, u32 mode)
{
	u64 bytenr = le64_to_cpu(fs->super_copy->root);
	struct twig_header *h = kzalloc(TK_NODESIZE, GFP_KERNEL);
	struct twig_item *it = (void *)(h + 1);
	struct twig_key key = { TWIG_ROOT_DIR_OBJECTID, TWIG_INODE_ITEM_KEY, 0 };
	struct twig_inode_item *ii;
	u32 off = TK_NODESIZE - sizeof(*ii);

	memcpy(h->fsid, fs->fsid, 16);
	h->bytenr = cpu_to_le64(bytenr);
	h->generation = fs->super_copy->root_generation;
	h->owner = cpu_to_le64(TWIG_FS_TREE_OBJECTID);
	h->nritems = cpu_to_le32(1);
	twig_key_to_disk(&it->key, &key);
	it->offset = cpu_to_le32(off);
	it->size = cpu_to_le32(sizeof(*ii));
	ii = (void *)h + off;
	ii->generation = h->generation;
	ii->transid = h->generation;
	ii->next_index = cpu_to_le64(TWIG_FIRST_DIR_INDEX);
	ii->nlink = cpu_to_le32(2);
	ii->mode = cpu_to_le32(mode);
	h->csum = cpu_to_le32(twig_csum((u8 *)h + 4, TK_NODESIZE - 4));
	twig_dev_write(fs, bytenr, h, TK_NODESIZE, 0);
	kfree(h);
}

/* The read path runs the item checks: a crafted item fails the mount. */
static void tk_read_checks_items(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);

	twig_core_close(fs);
	__clear_bit(TWIG_FS_OPAQUE_ITEMS, &fs->flags);
	/* a valid checksum over an inode item with no file type */
	tk_put_root_inode(fs, 0755);
	KUNIT_EXPECT_EQ(test, twig_core_open(fs), -EUCLEAN);
	tk_put_root_inode(fs, S_IFDIR | 0755);
	KUNIT_ASSERT_EQ(test, twig_core_open(fs), 0);
	tk_fs_free(fs);
}

/* The inode number counter stops at its limit, and stays there. */
static void tk_objectid_limit(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	u64 id = 0;

	atomic64_set(&fs->next_objectid, TWIG_MAX_OBJECTID);
	KUNIT_EXPECT_EQ(test, twig_new_objectid(fs, &id), 0);
	KUNIT_EXPECT_EQ(test, id, TWIG_MAX_OBJECTID);
	KUNIT_EXPECT_EQ(test, twig_new_objectid(fs, &id), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, twig_new_objectid(fs, &id), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, twig_new_objectid(fs, &id), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, (u64)atomic64_read(&fs->next_objectid),
			TWIG_MAX_OBJECTID + 1);
	tk_fs_free(fs);
}

/*
 * Freeing what the bitmap does not hold (a crafted extent) is -EUCLEAN
 * and frees nothing, without a WARNING.
 */
static void tk_free_unallocated(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	struct twig_data_alloc da;
	struct twig_trans *trans;
	u64 free, disk;

	trans = twig_start_transaction(fs, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(trans));
	KUNIT_ASSERT_EQ(test, twig_alloc_data(fs, 8192, &da), 0);
	/* as if an extent item named it */
	twig_data_alloc_owned(trans, &da);
	disk = da.bytenr;
	free = twig_bytes_free(fs);
	/* one allocated sector and one free one */
	KUNIT_EXPECT_EQ(test, twig_free_data(fs, trans, disk + 4096, 8192),
			-EUCLEAN);
	KUNIT_EXPECT_EQ(test, twig_free_data(fs, trans, TK_DEV_BYTES, 4096),
			-EUCLEAN);
	KUNIT_EXPECT_EQ(test, twig_free_data(fs, trans, disk, U64_MAX),
			-EUCLEAN);
	KUNIT_EXPECT_EQ(test, twig_free_data(fs, trans, disk + 1, 4096),
			-EUCLEAN);
	KUNIT_EXPECT_EQ(test, twig_bytes_free(fs), free);
	KUNIT_EXPECT_EQ(test, twig_free_data(fs, trans, disk, 8192), 0);
	KUNIT_EXPECT_EQ(test, twig_bytes_free(fs), free + 8192);
	/* twice */
	KUNIT_EXPECT_EQ(test, twig_free_data(fs, trans, disk, 8192), -EUCLEAN);
	KUNIT_EXPECT_EQ(test, twig_bytes_free(fs), free + 8192);
	twig_end_transaction(trans);
	tk_fs_free(fs);
}

/*
 * The shrinker drops clean, unused ebs (never dirty ones or the root); the
 * tree reads them back, verified, on the next search.
 */
static void tk_shrink(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	struct shrinker *s = fs->eb_shrinker;
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	u16 *model = tk_model(test);
	unsigned long before, freed;
	u64 i;

	for (i = 0; i < 20000; i++) {
		KUNIT_ASSERT_EQ(test, tk_insert(fs, i, 8), 0);
		model[i] = 9;
	}
	/*
	 * Dirty ebs are held by the dirty list: the only one to drop is the
	 * first root leaf, replaced by its CoW copy (its block is pinned).
	 */
	sc.nr_to_scan = ULONG_MAX;
	KUNIT_EXPECT_EQ(test, s->scan_objects(s, &sc), 1UL);

	KUNIT_ASSERT_EQ(test, twig_commit_transaction(fs), 0);
	before = s->count_objects(s, &sc);
	sc.nr_to_scan = ULONG_MAX;
	freed = s->scan_objects(s, &sc);
	KUNIT_EXPECT_EQ(test, freed, before - 1);	/* all but the root */
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), 1UL);
	tk_compare(test, fs, model, TK_NKEYS);

	for (i = 0; i < 20000; i += 2) {
		KUNIT_ASSERT_EQ(test, tk_delete(fs, i), 0);
		model[i] = 0;
		if (i % 4000 == 0) {
			sc.nr_to_scan = 64;
			s->scan_objects(s, &sc);
		}
	}
	tk_compare(test, fs, model, TK_NKEYS);
	tk_remount(test, fs);
	tk_compare(test, fs, model, TK_NKEYS);
	vfree(model);
	tk_fs_free(fs);
}

/* ---- concurrency: writers on their own ranges, readers, commits ---- */

#define TK_THREADS	4
#define TK_PER_THREAD	4000

struct tk_worker {
	struct twig_fs_info *fs;
	int id;
	bool reader;
	const bool *stop;	/* readers go on past TK_PER_THREAD until set */
	int errors;
	struct completion done;
};

static int tk_worker_fn(void *arg)
{
	struct tk_worker *wk = arg;
	u64 base = (u64)wk->id * TK_PER_THREAD;
	struct rnd_state rnd;
	u64 i;

	prandom_seed_state(&rnd, wk->id);
	for (i = 0; i < TK_PER_THREAD || (wk->reader && !READ_ONCE(*wk->stop));
	     i++) {
		u64 k = base + i;
		bool good;
		u32 size;

		if (wk->reader) {
			k = prandom_u32_state(&rnd) % (TK_THREADS * TK_PER_THREAD);
			if (tk_lookup(wk->fs, k, &size, &good) == 0 && !good)
				wk->errors++;
			continue;
		}
		if (tk_insert(wk->fs, k, 16 + k % 64))
			wk->errors++;
		/* delete every other key soon after inserting it */
		if (i >= 8 && (i & 1) && tk_delete(wk->fs, k - 8))
			wk->errors++;
		if (i % 1000 == 0 && wk->id == 0 &&
		    twig_commit_transaction(wk->fs))
			wk->errors++;
	}
	complete(&wk->done);
	return 0;
}

enum tk_flip { TK_FLIP_NONE, TK_FLIP_SPIN, TK_FLIP_LOCK };

/*
 * Switches made while the readers still run: they read on until then, so
 * the count does not depend on how fast the guest runs the workers.
 */
#define TK_MIN_FLIPS	200

/*
 * One switch of the test thread: spin= between 0 and 512, or the strategy
 * through mutex, rwsem, mutex with spin=512, rwsem (each a drain).
 */
static void tk_flip(struct kunit *test, struct twig_fs_info *fs,
		    enum tk_flip flip, u64 n)
{
	if (flip == TK_FLIP_SPIN) {
		WRITE_ONCE(fs->spin_rounds, n & 1 ? TWIG_SPIN512_ROUNDS : 0);
		return;
	}
	twig_lock_switch(fs, twig_lock_strategy_get(n & 1 ? "rwsem" : "mutex"));
	if (n & 1) {
		KUNIT_EXPECT_EQ(test, READ_ONCE(fs->spin_rounds), 0U);
		return;
	}
	KUNIT_EXPECT_STREQ(test, fs->lock_ops->name, "mutex");
	if (n & 2)
		WRITE_ONCE(fs->spin_rounds, TWIG_SPIN512_ROUNDS);
}

/*
 * @spin: lock=mutex's trylock loop (0, or 512 as lock=spin512); with
 * @flip, this thread switches the spin loop or the lock strategy (each
 * a drain) every 50-100 us until the workers are done and it has switched
 * TK_MIN_FLIPS times, as the switchback benchmark does under load.
 */
static void tk_concurrent(struct kunit *test, const char *lock,
			  unsigned int spin, enum tk_flip flip)
{
	struct twig_fs_info *fs = tk_fs_lock(test, lock);
	struct tk_worker wk[TK_THREADS + 2];
	u64 i, t, bad = 0, flips = 0;
	bool stop = flip == TK_FLIP_NONE;
	struct tk_walk w;
	char *buf;

	fs->spin_rounds = spin;

	for (t = 0; t < ARRAY_SIZE(wk); t++) {
		struct task_struct *task;

		wk[t].fs = fs;
		wk[t].id = t;
		wk[t].reader = t >= TK_THREADS;
		wk[t].stop = &stop;
		wk[t].errors = 0;
		init_completion(&wk[t].done);
		task = kthread_run(tk_worker_fn, &wk[t], "twig-kunit-%llu", t);
		KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	}
	for (t = 0; t < ARRAY_SIZE(wk); t++) {
		while (flip && (!completion_done(&wk[t].done) ||
				flips < TK_MIN_FLIPS)) {
			tk_flip(test, fs, flip, ++flips);
			if (flips >= TK_MIN_FLIPS)
				WRITE_ONCE(stop, true);
			usleep_range(50, 100);
		}
		wait_for_completion(&wk[t].done);
		KUNIT_EXPECT_EQ(test, wk[t].errors, 0);
	}
	tk_walk(test, fs, &w);
	for (t = 0; t < TK_THREADS; t++) {
		for (i = 0; i < TK_PER_THREAD; i++) {
			u64 k = t * TK_PER_THREAD + i;
			bool want = !(i >= TK_PER_THREAD - 8 ? false :
				      (i & 1) == 1);
			bool good = false;
			u32 size = 0;
			int ret = tk_lookup(fs, k, &size, &good);
			bool found = ret == 0;

			/* odd i < PER_THREAD - 8 were deleted */
			if (want != found || (found && !good))
				bad++;
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0ULL);
	buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	twig_lock_stats_show(fs, buf);
	kunit_info(test, "lock=%s spin=%u, %llu %s switches, %llu items, root level %d\n%s",
		   lock, spin, flips, flip == TK_FLIP_LOCK ? "lock" : "spin",
		   w.items, w.max_level, buf);
	if (flip)
		KUNIT_EXPECT_GE(test, flips, (u64)TK_MIN_FLIPS);
	if (flip == TK_FLIP_LOCK) {
		twig_lock_switches_show(fs, buf);
		kunit_info(test, "switches drain_ns max_drain_ns: %s", buf);
		KUNIT_EXPECT_EQ(test, fs->lock_switches, flips);
	}
	kfree(buf);
	tk_remount(test, fs);
	tk_walk(test, fs, &w);
	tk_fs_free(fs);
}

static void tk_concurrent_mutex(struct kunit *test)
{
	tk_concurrent(test, "mutex", 0, TK_FLIP_NONE);
}

static void tk_concurrent_spin512(struct kunit *test)
{
	tk_concurrent(test, "mutex", TWIG_SPIN512_ROUNDS, TK_FLIP_NONE);
}

/* waiters that began under one loop length finish under another */
static void tk_concurrent_spin_switch(struct kunit *test)
{
	tk_concurrent(test, "mutex", 0, TK_FLIP_SPIN);
}

/*
 * The strategy switched mutex <-> rwsem under the workers: every switch
 * drains, so no node is ever held through both of its locks (lockdep and
 * DEBUG_MUTEXES/RWSEMS on the debug kernel would see an unlock of a lock
 * not held), and the tree ends whole.
 */
static void tk_concurrent_lock_switch(struct kunit *test)
{
	tk_concurrent(test, "mutex", 0, TK_FLIP_LOCK);
}

static void tk_concurrent_rwsem(struct kunit *test)
{
	tk_concurrent(test, "rwsem", 0, TK_FLIP_NONE);
}

/*
 * What the lock gate adds to a search: one percpu_down_read() and
 * percpu_up_read() per path.  Reported next to the cost of the cached
 * read-only search it is part of (3-level tree, path reused), for
 * fs/DESIGN.md; the figures are TCG's, so only the ratio means much.
 */
static void tk_gate_cost(struct kunit *test)
{
	struct twig_fs_info *fs = tk_fs(test);
	const u64 keys = 2000, n = 200000;
	struct twig_path *p = twig_alloc_path();
	struct twig_key key;
	u64 i, found = 0, t0, t_search, t_gate;

	KUNIT_ASSERT_NOT_NULL(test, p);
	for (i = 0; i < keys; i++)
		KUNIT_ASSERT_EQ(test, tk_insert(fs, i, 100), 0);
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		tk_key(&key, (i * 7919) % keys);
		found += twig_search_slot(NULL, fs, &key, p, 0, 0) == 0;
		twig_release_path(p);
	}
	t_search = ktime_get_ns() - t0;
	KUNIT_EXPECT_EQ(test, found, n);
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		percpu_down_read(&fs->lock_gate);
		percpu_up_read(&fs->lock_gate);
	}
	t_gate = ktime_get_ns() - t0;
	kunit_info(test, "per search: %llu ns; gate pair: %llu ns (%llu.%llu%%)\n",
		   t_search / n, t_gate / n, 100 * t_gate / t_search,
		   1000 * t_gate / t_search % 10);
	twig_free_path(p);
	tk_fs_free(fs);
}

static struct kunit_case twig_ctree_cases[] = {
	KUNIT_CASE(tk_cow),
	KUNIT_CASE(tk_resize),
	KUNIT_CASE(tk_corrupt),
	KUNIT_CASE(tk_parent_check),
	KUNIT_CASE(tk_read_checks_items),
	KUNIT_CASE(tk_objectid_limit),
	KUNIT_CASE(tk_free_unallocated),
	KUNIT_CASE(tk_shrink),
	KUNIT_CASE(tk_failed_alloc),
	KUNIT_CASE(tk_reverse),
	KUNIT_CASE(tk_push),
	KUNIT_CASE(tk_walk_first_race),
	KUNIT_CASE(tk_ordered),
	KUNIT_CASE(tk_random),
	KUNIT_CASE(tk_concurrent_mutex),
	KUNIT_CASE(tk_concurrent_spin512),
	KUNIT_CASE(tk_concurrent_spin_switch),
	KUNIT_CASE(tk_concurrent_lock_switch),
	KUNIT_CASE(tk_concurrent_rwsem),
	KUNIT_CASE(tk_gate_cost),
	{}
};

static struct kunit_suite twig_ctree_suite = {
	.name = "twigfs-ctree",
	.test_cases = twig_ctree_cases,
};

kunit_test_suite(twig_ctree_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for the twigfs tree core");
