// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs B-tree: search with lock coupling, copy-on-write, split on the way
 * down for inserts, merge on the way down (and at the leaf) for deletes.
 *
 * Invariants
 * ==========
 *
 * - Keys are unique and sorted in every block; a node's key i is the first
 *   key of child i's subtree (exactly: inserts at slot 0 and deletes of slot
 *   0 fix the keys above, twig_fixup_low_keys()).
 * - The root is a leaf or a node with at least two children; other nodes
 *   have at least two children after a delete's descent balanced them;
 *   only the root leaf may be empty.
 * - A block is changed only if its generation is the running transid (it
 *   was allocated, or CoW'd, by this transaction and is not on disk yet).
 *   Every other block on a modifying path is copied first (twig_cow_block)
 *   and the parent pointer updated; the old block is freed, pinned until
 *   the commit.  A node is CoW'd before its children, so the parent is
 *   always changeable when a child needs its pointer updated.
 *
 * Locking (the order is in locking.c)
 * ===================================
 *
 * twig_search_slot() descends with lock coupling: the child is locked
 * before the parent is released, and the parent is released as soon as the
 * child cannot change it (btrfs's "lowest unlock"):
 *
 * - insert: nodes are split on the way down when nearly full, so once a
 *   child has room the parent is never touched again;
 * - delete: the leaf's parent stays locked (an emptied leaf is removed and
 *   a small one merged with a sibling); nodes are balanced on the way down,
 *   so above that only a node with very few children keeps its parent;
 * - a path at slot 0 may change its first key, which is its parent's key:
 *   the parent stays locked (and so on up while slots are 0).
 *
 * Read-only searches take read locks everywhere.  Modifying searches
 * write-lock levels up to write_lock_level (1 for inserts and deletes, 0
 * for in-place changes) and read-lock above it; when a higher node turns
 * out to need a change (CoW at the start of a transaction, a split, a
 * merge), the search releases everything and restarts with a higher
 * write_lock_level.  So the root is write-locked only when it really
 * changes, and concurrent writers share the upper levels (with lock=rwsem).
 *
 * Every tree lock is taken here, through a path, and only inside
 * twig_search_slot() (the root, the descent, and the new blocks and
 * siblings of its CoW, splits and merges).  The path read-holds the mount's
 * lock gate from there to twig_release_path(), which the switch of lock
 * strategy waits for (locking.c).  A task must never search with a second
 * path while its first holds the gate: a switch waiting between the two
 * would wait for the first, which waits for the second.  The gate is also
 * let go with the path before every unlocked read and restart.
 */
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "locking.h"

/* ---- paths ---- */

struct twig_path *twig_alloc_path(void)
{
	return kzalloc(sizeof(struct twig_path), GFP_NOFS);
}
EXPORT_SYMBOL_IF_KUNIT(twig_alloc_path);

static void twig_path_drop(struct twig_path *p, int level)
{
	twig_tree_unlock_rw(p->nodes[level], p->locks[level]);
	twig_eb_put(p->nodes[level]);
	p->nodes[level] = NULL;
	p->locks[level] = TWIG_NO_LOCK;
}

void twig_release_path(struct twig_path *p)
{
	int i;

	for (i = 0; i < TWIG_MAX_LEVEL; i++)
		if (p->nodes[i])
			twig_path_drop(p, i);
	p->have_next_key = false;
	twig_path_leave(p);
}
EXPORT_SYMBOL_IF_KUNIT(twig_release_path);

void twig_free_path(struct twig_path *p)
{
	if (!p)
		return;
	twig_release_path(p);
	kfree(p);
}
EXPORT_SYMBOL_IF_KUNIT(twig_free_path);

static bool twig_write_locked(struct twig_path *p, int level)
{
	return p->locks[level] == TWIG_WRITE_LOCK;
}

/* The parent of level @level is in the path (every non-root level's is). */
static bool twig_has_parent(struct twig_path *p, int level)
{
	return level + 1 < TWIG_MAX_LEVEL && p->nodes[level + 1];
}

/* ---- block contents ---- */

static void twig_set_node_ptr(struct twig_eb *eb, int slot,
			      const struct twig_key *key, u64 bytenr, u64 gen)
{
	struct twig_key_ptr *kp = twig_node_ptr(eb, slot);

	twig_key_to_disk(&kp->key, key);
	kp->blockptr = cpu_to_le64(bytenr);
	kp->generation = cpu_to_le64(gen);
}

static void twig_first_key(struct twig_eb *eb, struct twig_key *key)
{
	if (eb->level)
		twig_node_key(eb, 0, key);
	else
		twig_item_key(eb, 0, key);
}

/* Offset where item data begins (the lowest data byte in use). */
static u32 twig_leaf_data_end(const struct twig_eb *leaf)
{
	u32 nr = twig_header_nritems(leaf);

	return nr ? twig_item_offset(leaf, nr - 1) : leaf->len;
}

/* End of item @slot's data: where item @slot - 1's begins. */
static u32 twig_item_end(const struct twig_eb *leaf, int slot)
{
	return slot ? twig_item_offset(leaf, slot - 1) : leaf->len;
}

/* Bytes used by items [start, start + nr): headers and data. */
static u32 twig_leaf_used(const struct twig_eb *leaf, int start, int nr)
{
	if (!nr)
		return 0;
	return nr * sizeof(struct twig_item) + twig_item_end(leaf, start) -
	       twig_item_offset(leaf, start + nr - 1);
}

u32 twig_leaf_free_space(const struct twig_eb *leaf)
{
	return twig_leaf_data_size(leaf->fs) -
	       twig_leaf_used(leaf, 0, twig_header_nritems(leaf));
}
EXPORT_SYMBOL_IF_KUNIT(twig_leaf_free_space);

/* Append items [start, start + nr) of leaf @src to the end of leaf @dst. */
static void twig_leaf_append(struct twig_eb *dst, struct twig_eb *src,
			     int start, int nr)
{
	u32 dn = twig_header_nritems(dst);
	u32 src_lo, src_hi, dst_end;
	s64 shift;
	int i;

	if (!nr)
		return;
	src_hi = twig_item_end(src, start);
	src_lo = twig_item_offset(src, start + nr - 1);
	dst_end = twig_leaf_data_end(dst);
	shift = (s64)dst_end - src_hi;
	memcpy(dst->data + src_lo + shift, src->data + src_lo, src_hi - src_lo);
	memcpy(twig_item_nr(dst, dn), twig_item_nr(src, start),
	       nr * sizeof(struct twig_item));
	for (i = dn; i < dn + nr; i++) {
		struct twig_item *it = twig_item_nr(dst, i);

		it->offset = cpu_to_le32(le32_to_cpu(it->offset) + shift);
	}
	twig_set_header_nritems(dst, dn + nr);
}

/* Put items [start, start + nr) of leaf @src before the items of leaf @dst. */
static void twig_leaf_prepend(struct twig_eb *dst, struct twig_eb *src,
			      int start, int nr)
{
	u32 dn = twig_header_nritems(dst);
	u32 src_hi = twig_item_end(src, start);
	u32 src_lo = twig_item_offset(src, start + nr - 1);
	u32 bytes = src_hi - src_lo;
	u32 dst_end = twig_leaf_data_end(dst);
	s64 shift = (s64)dst->len - src_hi;
	int i;

	/* @dst's data moves down to make room at the top, its headers up */
	memmove(dst->data + dst_end - bytes, dst->data + dst_end,
		dst->len - dst_end);
	for (i = 0; i < dn; i++) {
		struct twig_item *it = twig_item_nr(dst, i);

		it->offset = cpu_to_le32(le32_to_cpu(it->offset) - bytes);
	}
	memmove(twig_item_nr(dst, nr), twig_item_nr(dst, 0),
		dn * sizeof(struct twig_item));
	memcpy(dst->data + src_lo + shift, src->data + src_lo, bytes);
	memcpy(twig_item_nr(dst, 0), twig_item_nr(src, start),
	       nr * sizeof(struct twig_item));
	for (i = 0; i < nr; i++) {
		struct twig_item *it = twig_item_nr(dst, i);

		it->offset = cpu_to_le32(le32_to_cpu(it->offset) + shift);
	}
	twig_set_header_nritems(dst, dn + nr);
}

/* Remove items [slot, slot + nr) of @leaf, closing the hole. */
static void twig_leaf_remove(struct twig_eb *leaf, int slot, int nr)
{
	u32 n = twig_header_nritems(leaf);
	u32 data_end = twig_leaf_data_end(leaf);
	u32 hi = twig_item_end(leaf, slot);
	u32 lo = twig_item_offset(leaf, slot + nr - 1);
	int i;

	/* data of items after the hole moves up, headers down */
	memmove(leaf->data + data_end + (hi - lo), leaf->data + data_end,
		lo - data_end);
	for (i = slot + nr; i < n; i++) {
		struct twig_item *it = twig_item_nr(leaf, i);

		it->offset = cpu_to_le32(le32_to_cpu(it->offset) + hi - lo);
	}
	memmove(twig_item_nr(leaf, slot), twig_item_nr(leaf, slot + nr),
		(n - slot - nr) * sizeof(struct twig_item));
	twig_set_header_nritems(leaf, n - nr);
}

static void twig_node_append(struct twig_eb *dst, struct twig_eb *src,
			     int start, int nr)
{
	u32 dn = twig_header_nritems(dst);

	memcpy(twig_node_ptr(dst, dn), twig_node_ptr(src, start),
	       nr * sizeof(struct twig_key_ptr));
	twig_set_header_nritems(dst, dn + nr);
}

/* Binary search: 0 and the slot if found, else 1 and the insert slot. */
static int twig_bin_search(struct twig_eb *eb, const struct twig_key *key,
			   int *slot)
{
	int lo = 0, hi = twig_header_nritems(eb);
	struct twig_key k;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int cmp;

		if (eb->level)
			twig_node_key(eb, mid, &k);
		else
			twig_item_key(eb, mid, &k);
		cmp = twig_key_cmp(&k, key);
		if (cmp < 0) {
			lo = mid + 1;
		} else if (cmp > 0) {
			hi = mid;
		} else {
			*slot = mid;
			return 0;
		}
	}
	*slot = lo;
	return 1;
}

/* ---- root ---- */

static void twig_set_root(struct twig_fs_info *fs, struct twig_eb *eb)
{
	struct twig_eb *old;

	twig_eb_get(eb);
	spin_lock(&fs->root_lock);
	old = fs->root;
	smp_store_release(&fs->root, eb);	/* pairs with twig_get_root() */
	WRITE_ONCE(fs->root_level, eb->level);
	spin_unlock(&fs->root_lock);
	twig_eb_put(old);
}

/*
 * A reference to the current root without any shared lock: ebs are freed
 * after an RCU grace period, and a root whose count already dropped to
 * zero has been replaced, so reading the pointer again makes progress.
 */
static struct twig_eb *twig_get_root(struct twig_fs_info *fs)
{
	struct twig_eb *eb;

	rcu_read_lock();
	do {
		eb = smp_load_acquire(&fs->root);	/* pairs with twig_set_root() */
	} while (!refcount_inc_not_zero(&eb->refs));
	rcu_read_unlock();
	return eb;
}

static bool twig_is_root(struct twig_fs_info *fs, struct twig_eb *eb)
{
	return READ_ONCE(fs->root) == eb;
}

/*
 * Lock the root: take a reference, lock, and make sure it is still the
 * root (only the holder of its write lock replaces it).
 */
static int twig_lock_root(struct twig_fs_info *fs, struct twig_path *p,
			  int write_lock_level)
{
	struct twig_eb *eb;

	for (;;) {
		eb = twig_get_root(fs);
		if (eb->level <= write_lock_level)
			twig_tree_lock(eb);
		else
			twig_tree_read_lock(eb);
		if (twig_is_root(fs, eb))
			break;
		if (eb->level <= write_lock_level)
			twig_tree_unlock(eb);
		else
			twig_tree_read_unlock(eb);
		twig_eb_put(eb);
	}
	p->nodes[eb->level] = eb;
	p->locks[eb->level] = eb->level <= write_lock_level ?
			      TWIG_WRITE_LOCK : TWIG_READ_LOCK;
	return eb->level;
}

/* ---- allocation of blocks ---- */

/* A new locked, dirty block at @level, owned by this transaction. */
static struct twig_eb *twig_alloc_block(struct twig_trans *trans, int level,
					enum twig_nesting nest)
{
	struct twig_fs_info *fs = trans->fs;
	struct twig_eb *eb;
	u64 bytenr;
	int ret;

	if (twig_should_fail(fs))
		return ERR_PTR(-ENOMEM);
	ret = twig_alloc_tree_block(trans, &bytenr);
	if (ret)
		return ERR_PTR(ret);
	eb = twig_new_eb(fs, bytenr, level);
	if (IS_ERR(eb)) {
		twig_free_data(fs, trans, bytenr, fs->nodesize);
		return eb;
	}
	twig_eb_header(eb)->generation = cpu_to_le64(trans->transid);
	twig_tree_lock_nested(eb, nest);
	twig_eb_mark_dirty(eb);		/* no item changed: trans->dirty stays */
	return eb;
}

static bool twig_should_cow(struct twig_trans *trans, struct twig_eb *eb)
{
	return twig_header_generation(eb) != trans->transid;
}

/*
 * Copy @buf (write-locked) into a new block of this transaction and free
 * @buf.  The caller points the parent (write-locked) or the root at the
 * copy; @buf stays locked for the caller to release.
 */
static struct twig_eb *twig_copy_block(struct twig_trans *trans,
				       struct twig_eb *buf,
				       enum twig_nesting nest)
{
	struct twig_eb *cow = twig_alloc_block(trans, buf->level, nest);
	struct twig_header *h;

	if (IS_ERR(cow))
		return cow;
	memcpy(cow->data, buf->data, buf->len);
	h = twig_eb_header(cow);
	h->bytenr = cpu_to_le64(cow->start);
	h->generation = cpu_to_le64(trans->transid);
	twig_free_tree_block(trans, buf);
	return cow;
}

/* CoW path->nodes[level]; it and its parent are write-locked. */
static int twig_cow_block(struct twig_trans *trans, struct twig_path *p,
			  int level)
{
	struct twig_eb *buf = p->nodes[level];
	struct twig_eb *cow;

	cow = twig_copy_block(trans, buf, TWIG_NESTING_COW);
	if (IS_ERR(cow))
		return PTR_ERR(cow);
	if (twig_has_parent(p, level)) {
		struct twig_eb *parent = p->nodes[level + 1];
		struct twig_key_ptr *kp;

		kp = twig_node_ptr(parent, p->slots[level + 1]);
		kp->blockptr = cpu_to_le64(cow->start);
		kp->generation = cpu_to_le64(trans->transid);
	} else {
		twig_set_root(trans->fs, cow);
	}
	twig_tree_unlock(buf);
	twig_eb_put(buf);
	p->nodes[level] = cow;
	p->locks[level] = TWIG_WRITE_LOCK;
	return 0;
}

/* Read child @slot of the locked node @parent. */
static struct twig_eb *twig_read_child(struct twig_eb *parent, int slot)
{
	return twig_read_eb(parent->fs, twig_node_blockptr(parent, slot),
			    parent->level - 1,
			    twig_node_ptr_generation(parent, slot));
}

/* ---- key pointers ---- */

/*
 * The first key of path->nodes[level - 1] became @key: update the parents
 * while the path is at their slot 0.  The search kept them write-locked.
 */
static void twig_fixup_low_keys(struct twig_path *p,
				const struct twig_key *key, int level)
{
	int i;

	for (i = level; i < TWIG_MAX_LEVEL && p->nodes[i]; i++) {
		if (WARN_ON_ONCE(!twig_write_locked(p, i)))
			return;
		twig_key_to_disk(&twig_node_ptr(p->nodes[i], p->slots[i])->key,
				 key);
		if (p->slots[i])
			break;
	}
}

static int twig_insert_ptr(struct twig_eb *node, int slot,
			   const struct twig_key *key, u64 bytenr, u64 gen)
{
	u32 nr = twig_header_nritems(node);

	if (WARN_ON_ONCE(nr >= twig_max_ptrs(node->fs)))
		return -EUCLEAN;
	memmove(twig_node_ptr(node, slot + 1), twig_node_ptr(node, slot),
		(nr - slot) * sizeof(struct twig_key_ptr));
	twig_set_node_ptr(node, slot, key, bytenr, gen);
	twig_set_header_nritems(node, nr + 1);
	return 0;
}

/* Remove pointer @slot of path->nodes[level]; it keeps at least one. */
static void twig_del_ptr(struct twig_path *p, int level, int slot)
{
	struct twig_eb *node = p->nodes[level];
	u32 nr = twig_header_nritems(node);
	struct twig_key key;

	WARN_ON_ONCE(nr < 2);
	memmove(twig_node_ptr(node, slot), twig_node_ptr(node, slot + 1),
		(nr - slot - 1) * sizeof(struct twig_key_ptr));
	twig_set_header_nritems(node, nr - 1);
	if (slot == 0) {
		twig_node_key(node, 0, &key);
		twig_fixup_low_keys(p, &key, level + 1);
	}
}

/* ---- siblings, locked under the parent (see locking.c) ---- */

/* Lock and read sibling @slot of path->nodes[level], under the parent. */
static struct twig_eb *twig_lock_sibling(struct twig_path *p, int level,
					 int slot)
{
	struct twig_eb *sib = twig_read_child(p->nodes[level + 1], slot);

	if (!IS_ERR(sib))
		twig_tree_lock_nested(sib, TWIG_NESTING_SIBLING);
	return sib;
}

/*
 * The same for leaf sibling @slot, only if it is in memory: NULL if not,
 * so a caller that can do without it never reads under the locks.
 */
static struct twig_eb *twig_lock_cached_sibling(struct twig_path *p, int slot)
{
	struct twig_eb *parent = p->nodes[1];
	struct twig_eb *sib;

	sib = twig_get_cached_eb(parent->fs, twig_node_blockptr(parent, slot),
				 0, twig_node_ptr_generation(parent, slot));
	if (!IS_ERR_OR_NULL(sib))
		twig_tree_lock_nested(sib, TWIG_NESTING_SIBLING);
	return sib;
}

/*
 * Make the locked sibling @slot writable before changing it.  On error the
 * sibling has been unlocked and released.
 */
static struct twig_eb *twig_cow_sibling(struct twig_trans *trans,
					struct twig_path *p, int level,
					int slot, struct twig_eb *sib)
{
	struct twig_key_ptr *kp;
	struct twig_eb *copy;

	if (!twig_should_cow(trans, sib))
		return sib;
	copy = twig_copy_block(trans, sib, TWIG_NESTING_SIBLING_COW);
	twig_tree_unlock(sib);
	twig_eb_put(sib);
	if (IS_ERR(copy))
		return copy;
	kp = twig_node_ptr(p->nodes[level + 1], slot);
	kp->blockptr = cpu_to_le64(copy->start);
	kp->generation = cpu_to_le64(trans->transid);
	return copy;
}

static void twig_unlock_put(struct twig_eb *eb)
{
	twig_tree_unlock(eb);
	twig_eb_put(eb);
}

/* Free the sibling @sib (locked, emptied into its neighbour). */
static void twig_drop_sibling(struct twig_trans *trans, struct twig_eb *sib)
{
	twig_free_tree_block(trans, sib);
	twig_unlock_put(sib);
}

/* ---- growing: new root, node split, leaf split ---- */

/* A new root at @level above the (write-locked) root at @level - 1. */
static int twig_insert_new_root(struct twig_trans *trans, struct twig_path *p,
				int level)
{
	struct twig_eb *lower = p->nodes[level - 1];
	struct twig_eb *root;
	struct twig_key key;

	if (level >= TWIG_MAX_LEVEL)
		return -EOVERFLOW;
	root = twig_alloc_block(trans, level, TWIG_NESTING_NEW_ROOT);
	if (IS_ERR(root))
		return PTR_ERR(root);
	twig_first_key(lower, &key);
	twig_set_node_ptr(root, 0, &key, lower->start, trans->transid);
	twig_set_header_nritems(root, 1);
	twig_set_root(trans->fs, root);
	p->nodes[level] = root;		/* with the allocation's reference */
	p->locks[level] = TWIG_WRITE_LOCK;
	p->slots[level] = 0;
	return 0;
}

/*
 * Move the upper half of path->nodes[level] (write-locked, as is its
 * parent unless it is the root) into a new right sibling; the path follows
 * @key.  Nothing changes unless every allocation succeeded, except that a
 * new root with a single child may stay, which is a valid tree.
 */
static int twig_split_node(struct twig_trans *trans, struct twig_path *p,
			   int level, const struct twig_key *key)
{
	struct twig_eb *node = p->nodes[level];
	struct twig_eb *right;
	struct twig_key rkey;
	u32 nr = twig_header_nritems(node);
	u32 mid = nr / 2;
	int ret;

	if (!twig_has_parent(p, level)) {
		ret = twig_insert_new_root(trans, p, level + 1);
		if (ret)
			return ret;
	}
	right = twig_alloc_block(trans, level, TWIG_NESTING_SPLIT);
	if (IS_ERR(right))
		return PTR_ERR(right);
	twig_node_key(node, mid, &rkey);
	ret = twig_insert_ptr(p->nodes[level + 1], p->slots[level + 1] + 1,
			      &rkey, right->start, trans->transid);
	if (ret) {
		twig_free_tree_block(trans, right);
		twig_tree_unlock(right);
		twig_eb_put(right);
		return ret;
	}
	twig_node_append(right, node, mid, nr - mid);
	twig_set_header_nritems(node, mid);

	if (twig_key_cmp(key, &rkey) >= 0) {
		twig_tree_unlock(node);
		twig_eb_put(node);
		p->nodes[level] = right;
		p->slots[level + 1]++;
	} else {
		twig_tree_unlock(right);
		twig_eb_put(right);
	}
	return 0;
}

/*
 * Split the leaf at @mid (items [mid, n) move to a new right leaf) and put
 * the path on the right leaf if @to_right.  @key is the key about to be
 * inserted: the right leaf's key in the parent when it starts out empty.
 */
static int twig_split_leaf_at(struct twig_trans *trans, struct twig_path *p,
			      const struct twig_key *key, int mid,
			      bool to_right)
{
	struct twig_eb *leaf = p->nodes[0];
	u32 nr = twig_header_nritems(leaf);
	struct twig_eb *right;
	struct twig_key rkey;
	int ret;

	if (!twig_has_parent(p, 0)) {
		ret = twig_insert_new_root(trans, p, 1);
		if (ret)
			return ret;
	}
	right = twig_alloc_block(trans, 0, TWIG_NESTING_SPLIT);
	if (IS_ERR(right))
		return PTR_ERR(right);
	if (mid < nr)
		twig_item_key(leaf, mid, &rkey);
	else
		rkey = *key;
	ret = twig_insert_ptr(p->nodes[1], p->slots[1] + 1, &rkey,
			      right->start, trans->transid);
	if (ret) {
		twig_free_tree_block(trans, right);
		twig_tree_unlock(right);
		twig_eb_put(right);
		return ret;
	}
	twig_leaf_append(right, leaf, mid, nr - mid);
	twig_set_header_nritems(leaf, mid);

	if (to_right) {
		twig_tree_unlock(leaf);
		twig_eb_put(leaf);
		p->nodes[0] = right;
		p->slots[0] -= mid;
		p->slots[1]++;
	} else {
		twig_tree_unlock(right);
		twig_eb_put(right);
	}
	return 0;
}

/*
 * Where to split a full leaf so the insert at path->slots[0] fits (or, if
 * @found, so the existing item there can grow).  Appends and prepends get
 * a fresh leaf to themselves (sequential inserts fill leaves completely);
 * others split in the middle by bytes, or at the slot if the middle does
 * not leave room; repeated splits end with the item alone in a leaf.
 */
static int twig_leaf_split_point(struct twig_eb *leaf, int slot, bool found,
				 u32 ins_len, int *mid, bool *to_right)
{
	u32 nr = twig_header_nritems(leaf);
	u32 room = twig_leaf_data_size(leaf->fs);
	u32 half, acc = 0;
	int i;

	if (found) {
		if (slot == 0 && nr == 1)
			return -EOVERFLOW;
		*mid = slot ? slot : 1;
		*to_right = slot > 0;
		return 0;
	}
	if (slot == nr || slot == 0) {
		*mid = slot;
		*to_right = slot == nr;
		return 0;
	}
	half = twig_leaf_used(leaf, 0, nr) / 2;
	for (i = 0; i < nr - 1 && acc < half; i++)
		acc += twig_leaf_used(leaf, i, 1);
	*mid = max(i, 1);
	*to_right = slot >= *mid;
	if (twig_leaf_used(leaf, 0, *mid) + (*to_right ? 0 : ins_len) > room ||
	    twig_leaf_used(leaf, *mid, nr - *mid) + (*to_right ? ins_len : 0) >
	    room) {
		*mid = slot;
		*to_right = true;
	}
	return 0;
}

/*
 * Room for an insert without a split (btrfs's push_leaf_left/right): move
 * items of the full leaf of @p into its left (or, if @right, its right)
 * sibling when that has room, the fewest that make @ins_len bytes free,
 * and then more while the sibling stays the emptier of the two, so leaves
 * stay dense and splits are rarer.  At most @max_items from the end that
 * faces the sibling, which the caller limits to items that do not move
 * the insert (or, if found, the item that grows) out of the leaf: the
 * path stays on it.  Only a sibling already in memory, so no disk read
 * happens under the locks.  The parent is write-locked (the search
 * restarts an insert that would split without it); the key it holds for
 * the leaf or the sibling changes, never its slot 0, so nothing above it
 * does.  Returns 0 if there is room now, 1 if not, or -errno.
 */
static int twig_push_leaf(struct twig_trans *trans, struct twig_path *p,
			  u32 ins_len, bool right, int max_items)
{
	struct twig_eb *leaf = p->nodes[0];
	struct twig_eb *parent = p->nodes[1];
	int sslot = p->slots[1] + (right ? 1 : -1);
	int nr = twig_header_nritems(leaf);
	u32 need = ins_len - twig_leaf_free_space(leaf);
	u32 used = twig_leaf_used(leaf, 0, nr);
	u32 moved = 0, sused, sfree, it;
	struct twig_eb *sib;
	struct twig_key key;
	int n;

	if (max_items < 1 || sslot < 0 || sslot >= twig_header_nritems(parent))
		return 1;
	sib = twig_lock_cached_sibling(p, sslot);
	if (IS_ERR_OR_NULL(sib))
		return sib ? PTR_ERR(sib) : 1;
	sfree = twig_leaf_free_space(sib);
	sused = twig_leaf_used(sib, 0, twig_header_nritems(sib));
	for (n = 0; n < max_items; n++) {
		it = twig_leaf_used(leaf, right ? nr - 1 - n : n, 1);
		if (moved + it > sfree ||
		    (moved >= need && sused + moved + it > used - moved - it))
			break;
		moved += it;
	}
	if (moved < need) {
		twig_unlock_put(sib);
		return 1;
	}
	sib = twig_cow_sibling(trans, p, 0, sslot, sib);
	if (IS_ERR(sib))
		return PTR_ERR(sib);
	if (right) {
		twig_leaf_prepend(sib, leaf, nr - n, n);
		twig_set_header_nritems(leaf, nr - n);
		twig_item_key(sib, 0, &key);
		twig_key_to_disk(&twig_node_ptr(parent, sslot)->key, &key);
		/* the sibling's first key, which the search saw */
		p->next_key = key;
	} else {
		twig_leaf_append(sib, leaf, 0, n);
		twig_leaf_remove(leaf, 0, n);
		twig_item_key(leaf, 0, &key);
		twig_key_to_disk(&twig_node_ptr(parent, sslot + 1)->key, &key);
		p->slots[0] -= n;
	}
	twig_unlock_put(sib);
	return 0;
}

static int twig_split_leaf(struct twig_trans *trans, struct twig_path *p,
			   const struct twig_key *key, u32 ins_len, bool found)
{
	int slot = p->slots[0], nr = twig_header_nritems(p->nodes[0]);
	int tries, mid, ret;
	bool to_right;

	/*
	 * Appends and prepends get a fresh leaf (twig_leaf_split_point()),
	 * which sequential inserts fill; the rest first try the siblings.
	 */
	if (twig_has_parent(p, 0) && (found || (slot > 0 && slot < nr))) {
		ret = twig_push_leaf(trans, p, ins_len, false,
				     found ? slot : slot - 1);
		if (ret == 1)
			ret = twig_push_leaf(trans, p, ins_len, true,
					     found ? nr - slot - 1 : nr - slot);
		if (ret <= 0)
			return ret;
	}
	for (tries = 0; twig_leaf_free_space(p->nodes[0]) < ins_len; tries++) {
		if (tries == 3)
			return -EOVERFLOW;
		ret = twig_leaf_split_point(p->nodes[0], p->slots[0], found,
					    ins_len, &mid, &to_right);
		if (!ret)
			ret = twig_split_leaf_at(trans, p, key, mid, to_right);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- shrinking: root collapse, node balancing ---- */

/*
 * The root (write-locked, one child) gives way to its child, which becomes
 * the root: CoW'd, locked for writing, at path->nodes[level - 1].
 */
static int twig_collapse_root(struct twig_trans *trans, struct twig_path *p,
			      int level)
{
	struct twig_eb *root = p->nodes[level];
	struct twig_eb *child = twig_read_child(root, 0);
	int ret;

	if (IS_ERR(child))
		return PTR_ERR(child);
	twig_tree_lock(child);
	p->nodes[level - 1] = child;
	p->locks[level - 1] = TWIG_WRITE_LOCK;
	p->slots[level] = 0;
	if (twig_should_cow(trans, child)) {
		ret = twig_cow_block(trans, p, level - 1);
		if (ret)
			return ret;	/* the path holds the child: released */
	}
	twig_set_root(trans->fs, p->nodes[level - 1]);
	twig_free_tree_block(trans, root);
	twig_path_drop(p, level);
	return 0;
}

/*
 * Delete descent: path->nodes[level] (not the root) has few children.
 * Merge it with a sibling if they fit together with room to spare, else
 * move pointers over from a sibling.  Both it and the parent are
 * write-locked; siblings are locked under the parent (see locking.c).
 */
static int twig_balance_node(struct twig_trans *trans, struct twig_path *p,
			     int level)
{
	struct twig_eb *node = p->nodes[level];
	struct twig_eb *parent = p->nodes[level + 1];
	int pslot = p->slots[level + 1];
	u32 max = twig_max_ptrs(trans->fs);
	u32 nr = twig_header_nritems(node);
	struct twig_eb *sib;
	struct twig_key key;
	u32 sn, move;

	if (pslot > 0) {
		sib = twig_lock_sibling(p, level, pslot - 1);
		if (!IS_ERR(sib))
			sib = twig_cow_sibling(trans, p, level, pslot - 1, sib);
		if (IS_ERR(sib))
			return PTR_ERR(sib);
		sn = twig_header_nritems(sib);
		if (sn + nr <= max - max / 4) {
			/* merge into the left sibling, which the path takes */
			twig_node_append(sib, node, 0, nr);
			twig_del_ptr(p, level + 1, pslot);
			twig_free_tree_block(trans, node);
			twig_unlock_put(node);
			p->nodes[level] = sib;
			p->slots[level + 1] = pslot - 1;
			return 0;
		}
		move = (sn - nr) / 2;
		memmove(twig_node_ptr(node, move), twig_node_ptr(node, 0),
			nr * sizeof(struct twig_key_ptr));
		memcpy(twig_node_ptr(node, 0), twig_node_ptr(sib, sn - move),
		       move * sizeof(struct twig_key_ptr));
		twig_set_header_nritems(node, nr + move);
		twig_set_header_nritems(sib, sn - move);
		twig_node_key(node, 0, &key);
		twig_key_to_disk(&twig_node_ptr(parent, pslot)->key, &key);
		twig_unlock_put(sib);
		return 0;
	}
	if (pslot + 1 >= twig_header_nritems(parent))
		return 0;	/* an only child: the root collapses instead */
	sib = twig_lock_sibling(p, level, pslot + 1);
	if (IS_ERR(sib))
		return PTR_ERR(sib);
	sn = twig_header_nritems(sib);
	if (sn + nr <= max - max / 4) {
		/* merge the right sibling in: it is freed, no need to CoW it */
		twig_node_append(node, sib, 0, sn);
		twig_del_ptr(p, level + 1, pslot + 1);
		twig_drop_sibling(trans, sib);
		return 0;
	}
	sib = twig_cow_sibling(trans, p, level, pslot + 1, sib);
	if (IS_ERR(sib))
		return PTR_ERR(sib);
	move = (sn - nr) / 2;
	twig_node_append(node, sib, 0, move);
	memmove(twig_node_ptr(sib, 0), twig_node_ptr(sib, move),
		(sn - move) * sizeof(struct twig_key_ptr));
	twig_set_header_nritems(sib, sn - move);
	twig_node_key(sib, 0, &key);
	twig_key_to_disk(&twig_node_ptr(parent, pslot + 1)->key, &key);
	twig_unlock_put(sib);
	return 0;
}

/* ---- search ---- */

/*
 * Release the path above @level where no longer needed (lowest unlock):
 * levels below @lowest_unlock stay; a level stays if the one below it
 * needs it (@keep for the current level: it may still split or merge
 * into its parent), or may change its first key (slot 0 of a modifying
 * search), and so on up.
 */
static void twig_unlock_up(struct twig_path *p, int level, int lowest_unlock,
			   int ins_len, bool keep)
{
	int i;

	keep = keep || (ins_len && p->slots[level] == 0);
	for (i = level + 1; i < TWIG_MAX_LEVEL && p->nodes[i]; i++) {
		bool keep_this = i < lowest_unlock || keep;

		if (!keep_this)
			twig_path_drop(p, i);
		keep = keep_this && ins_len && p->slots[i] == 0;
	}
}

/*
 * Bring node path->nodes[level] into shape for the operation before
 * descending through it: the root collapses on deletes when it has one
 * child; nodes split when nearly full (inserts) or are balanced when
 * nearly empty (deletes).  -EAGAIN: restart with *@wll raised, because a
 * node that must change is only read-locked.
 */
static int twig_prepare_node(struct twig_trans *trans, struct twig_path *p,
			     int level, const struct twig_key *key,
			     int ins_len, int *wll)
{
	struct twig_eb *node = p->nodes[level];
	u32 nr = twig_header_nritems(node);
	u32 max = twig_max_ptrs(trans->fs);
	bool root = !twig_has_parent(p, level);
	bool change;

	if (ins_len > 0)
		change = nr >= max - 3;
	else if (ins_len < 0)
		change = root ? nr == 1 : nr < max / 4;
	else
		change = false;
	if (!change)
		return 0;
	if (!twig_write_locked(p, level) ||
	    (!root && !twig_write_locked(p, level + 1))) {
		*wll = max(*wll, level + 1);
		return -EAGAIN;
	}
	if (ins_len > 0)
		return twig_split_node(trans, p, level, key);
	if (root)
		return twig_collapse_root(trans, p, level);
	return twig_balance_node(trans, p, level);
}

/*
 * Find @key.  Returns 0 if found, 1 if not (path->slots[0] is where it
 * would go), <0 on error with the path released.
 *
 * @ins_len > 0: the leaf will have @ins_len bytes free (insert or extend);
 * @ins_len < 0: an item will be deleted (merge underfull nodes, keep the
 * leaf's parent locked); @cow: every block on the path is made writable in
 * @trans and write-locked up to the level that changes; !@cow: read locks,
 * nothing changes, @trans may be NULL.
 */
int twig_search_slot(struct twig_trans *trans, struct twig_fs_info *fs,
		     const struct twig_key *key, struct twig_path *p,
		     int ins_len, int cow)
{
	int unlocked_reads = 2 * TWIG_MAX_LEVEL;
	int wll, lowest_unlock = 1;
	int level, slot, ret;
	struct twig_eb *b, *child;
	u64 bytenr, gen;

	if (WARN_ON_ONCE(cow && !trans) || WARN_ON_ONCE(!cow && ins_len))
		return -EINVAL;
	/* aborted: handles still open must not change the tree any more */
	if (cow && test_bit(TWIG_FS_ERROR, &fs->flags))
		return -EROFS;
	/* as if the memory for a step of the operation were not there */
	if (twig_should_fail(fs))
		return -ENOMEM;
	/*
	 * btrfs write-locks two levels for deletes; here a delete starts like
	 * an insert (the leaf and its parent) and restarts with more only if
	 * a node above really has to change (twig_prepare_node()).  The
	 * leaf's parent stays locked for twig_balance_leaf().
	 */
	wll = ins_len != 0;
	if (ins_len < 0)
		lowest_unlock = 2;
	if (!cow)
		wll = -1;
again:
	p->have_next_key = false;
	twig_path_enter(fs, p);
	level = twig_lock_root(fs, p, wll);
	for (;;) {
		b = p->nodes[level];
		if (cow && twig_should_cow(trans, b)) {
			if (!twig_write_locked(p, level) ||
			    (twig_has_parent(p, level) &&
			     !twig_write_locked(p, level + 1))) {
				wll = max(wll, level + 1);
				twig_release_path(p);
				goto again;
			}
			ret = twig_cow_block(trans, p, level);
			if (ret)
				goto fail;
		}
		if (level == 0)
			break;

		if (cow) {
			ret = twig_prepare_node(trans, p, level, key, ins_len,
						&wll);
			if (ret == -EAGAIN) {
				twig_release_path(p);
				goto again;
			}
			if (ret)
				goto fail;
			if (!p->nodes[level]) {
				/* the root collapsed into its child */
				level--;
				continue;
			}
			b = p->nodes[level];
		}
		if (twig_bin_search(b, key, &slot) && slot > 0)
			slot--;
		p->slots[level] = slot;
		if (slot + 1 < twig_header_nritems(b)) {
			twig_node_key(b, slot + 1, &p->next_key);
			p->have_next_key = true;
		}
		/* A changed first key must reach the parent: write-lock it. */
		if (cow && ins_len && slot == 0 && twig_has_parent(p, level) &&
		    !twig_write_locked(p, level + 1)) {
			wll = max(wll, level + 1);
			twig_release_path(p);
			goto again;
		}
		twig_unlock_up(p, level, lowest_unlock, ins_len,
			       ins_len < 0 && twig_header_nritems(b) <= 2);

		/*
		 * A child that is not cached is read with no lock held
		 * (btrfs's read_block_for_search()), then the search starts
		 * over; a bounded number of times, then under the locks.
		 */
		bytenr = twig_node_blockptr(b, slot);
		gen = twig_node_ptr_generation(b, slot);
		child = twig_get_cached_eb(fs, bytenr, level - 1, gen);
		if (!child && unlocked_reads) {
			twig_release_path(p);
			unlocked_reads--;
			twig_stat_add(fs, TWIG_CS_UNLOCKED_READS, 1);
			if (twig_read_eb_unlocked(fs, bytenr, level - 1, gen))
				unlocked_reads = 0;
			/* the fault point of the read the locks would have done */
			else if (twig_should_fail(fs))
				return -EIO;
			goto again;
		}
		b = child ?: twig_read_child(b, slot);
		if (IS_ERR(b)) {
			ret = PTR_ERR(b);
			goto fail;
		}
		level--;
		if (level <= wll)
			twig_tree_lock(b);
		else
			twig_tree_read_lock(b);
		p->nodes[level] = b;
		p->locks[level] = level <= wll ? TWIG_WRITE_LOCK :
				  TWIG_READ_LOCK;
	}

	ret = twig_bin_search(b, key, &slot);
	p->slots[0] = slot;
	if (ins_len > 0 && twig_leaf_free_space(b) < ins_len) {
		if (!twig_write_locked(p, 1) && twig_has_parent(p, 0)) {
			wll = max(wll, 1);
			twig_release_path(p);
			goto again;
		}
		ret = twig_split_leaf(trans, p, key, ins_len, !ret) ?: ret;
		if (ret < 0)
			goto fail;
	}
	twig_unlock_up(p, 0, lowest_unlock, ins_len, false);
	return ret;

fail:
	twig_release_path(p);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(twig_search_slot);

/* ---- items ---- */

/*
 * Insert an item of @size bytes at @key and leave the path on it (leaf
 * write-locked) for the caller to fill in.  -EEXIST if the key exists.
 */
int twig_insert_empty_item(struct twig_trans *trans, struct twig_fs_info *fs,
			   struct twig_path *p, const struct twig_key *key,
			   u32 size)
{
	u32 ins_len = size + sizeof(struct twig_item);
	struct twig_eb *leaf;
	u32 nr, data_end, end;
	int slot, i, ret;

	if (size > twig_max_item_size(fs))
		return -EOVERFLOW;
	ret = twig_search_slot(trans, fs, key, p, ins_len, 1);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		twig_release_path(p);
		return -EEXIST;
	}
	leaf = p->nodes[0];
	slot = p->slots[0];
	nr = twig_header_nritems(leaf);
	data_end = twig_leaf_data_end(leaf);
	end = twig_item_end(leaf, slot);

	/* data of items [slot, nr) moves down by size, headers up by one */
	memmove(leaf->data + data_end - size, leaf->data + data_end,
		end - data_end);
	for (i = slot; i < nr; i++) {
		struct twig_item *it = twig_item_nr(leaf, i);

		it->offset = cpu_to_le32(le32_to_cpu(it->offset) - size);
	}
	memmove(twig_item_nr(leaf, slot + 1), twig_item_nr(leaf, slot),
		(nr - slot) * sizeof(struct twig_item));
	twig_key_to_disk(&twig_item_nr(leaf, slot)->key, key);
	twig_item_nr(leaf, slot)->offset = cpu_to_le32(end - size);
	twig_item_nr(leaf, slot)->size = cpu_to_le32(size);
	twig_set_header_nritems(leaf, nr + 1);
	memset(leaf->data + end - size, 0, size);
	if (slot == 0)
		twig_fixup_low_keys(p, key, 1);
	twig_mark_buffer_dirty(trans, leaf);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(twig_insert_empty_item);

int twig_insert_item(struct twig_trans *trans, struct twig_fs_info *fs,
		     const struct twig_key *key, const void *data, u32 size)
{
	struct twig_path *p = twig_alloc_path();
	int ret;

	if (!p)
		return -ENOMEM;
	ret = twig_insert_empty_item(trans, fs, p, key, size);
	if (!ret)
		memcpy(twig_item_ptr(p->nodes[0], p->slots[0]), data, size);
	twig_free_path(p);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(twig_insert_item);

/*
 * After a delete: remove an emptied leaf from its parent, or merge a leaf
 * that is less than a quarter full into a sibling.  The parent is
 * write-locked (deletes keep it); the siblings are locked under it.
 */
static int twig_balance_leaf(struct twig_trans *trans, struct twig_path *p)
{
	struct twig_eb *leaf = p->nodes[0];
	struct twig_eb *parent = p->nodes[1];
	u32 room = twig_leaf_data_size(trans->fs);
	u32 nr = twig_header_nritems(leaf);
	u32 used = twig_leaf_used(leaf, 0, nr);
	int pslot = p->slots[1];
	struct twig_eb *sib;
	u32 pn;

	if (!parent || used >= room / 4)
		return 0;
	if (WARN_ON_ONCE(!twig_write_locked(p, 1)))
		return 0;
	pn = twig_header_nritems(parent);
	if (pn < 2)
		return 0;	/* the root collapses at the next delete */
	if (nr == 0) {
		twig_del_ptr(p, 1, pslot);
		twig_free_tree_block(trans, leaf);
		return 0;
	}
	if (pslot > 0) {
		sib = twig_lock_sibling(p, 0, pslot - 1);
		if (IS_ERR(sib))
			return PTR_ERR(sib);
		if (twig_leaf_free_space(sib) >= used) {
			sib = twig_cow_sibling(trans, p, 0, pslot - 1, sib);
			if (IS_ERR(sib))
				return PTR_ERR(sib);
			twig_leaf_append(sib, leaf, 0, nr);
			twig_del_ptr(p, 1, pslot);
			twig_free_tree_block(trans, leaf);
			twig_unlock_put(sib);
			return 0;
		}
		twig_unlock_put(sib);
	}
	if (pslot + 1 < pn) {
		sib = twig_lock_sibling(p, 0, pslot + 1);
		if (IS_ERR(sib))
			return PTR_ERR(sib);
		used = twig_leaf_used(sib, 0, twig_header_nritems(sib));
		if (twig_leaf_free_space(leaf) >= used) {
			twig_leaf_append(leaf, sib, 0,
					 twig_header_nritems(sib));
			twig_del_ptr(p, 1, pslot + 1);
			twig_drop_sibling(trans, sib);
			return 0;
		}
		twig_unlock_put(sib);
	}
	return 0;
}

/*
 * Delete items [slot, slot + nr) of the leaf of a path from a delete
 * search (ins_len < 0, cow).  The path must be released afterwards.
 */
int twig_del_items(struct twig_trans *trans, struct twig_fs_info *fs,
		   struct twig_path *p, int slot, int nr)
{
	struct twig_eb *leaf = p->nodes[0];
	u32 n = twig_header_nritems(leaf);
	struct twig_key key;

	if (WARN_ON_ONCE(slot < 0 || nr <= 0 || slot + nr > n ||
			 !twig_write_locked(p, 0)))
		return -EINVAL;
	twig_leaf_remove(leaf, slot, nr);
	twig_mark_buffer_dirty(trans, leaf);

	if (slot == 0 && n > nr) {
		twig_item_key(leaf, 0, &key);
		twig_fixup_low_keys(p, &key, 1);
	}
	return twig_balance_leaf(trans, p);
}
EXPORT_SYMBOL_IF_KUNIT(twig_del_items);

int twig_del_item(struct twig_trans *trans, struct twig_fs_info *fs,
		  struct twig_path *p)
{
	return twig_del_items(trans, fs, p, p->slots[0], 1);
}
EXPORT_SYMBOL_IF_KUNIT(twig_del_item);

/*
 * Grow the item at the path to @new_size bytes; the new bytes (zeroed) are
 * at its end.  The search must have asked for the room (ins_len).
 */
int twig_extend_item(struct twig_fs_info *fs, struct twig_path *p,
		     u32 new_size)
{
	struct twig_eb *leaf = p->nodes[0];
	int slot = p->slots[0];
	u32 old = twig_item_size(leaf, slot);
	u32 add = new_size - old;
	u32 data_end = twig_leaf_data_end(leaf);
	u32 off = twig_item_offset(leaf, slot);
	u32 n = twig_header_nritems(leaf);
	int i;

	if (new_size < old || twig_leaf_free_space(leaf) < add)
		return -EOVERFLOW;
	memmove(leaf->data + data_end - add, leaf->data + data_end,
		off + old - data_end);
	for (i = slot; i < n; i++) {
		struct twig_item *it = twig_item_nr(leaf, i);

		it->offset = cpu_to_le32(le32_to_cpu(it->offset) - add);
	}
	twig_item_nr(leaf, slot)->size = cpu_to_le32(new_size);
	memset(leaf->data + off - add + old, 0, add);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(twig_extend_item);

/* Shrink the item at the path to its first @new_size bytes. */
void twig_truncate_item(struct twig_fs_info *fs, struct twig_path *p,
			u32 new_size)
{
	struct twig_eb *leaf = p->nodes[0];
	int slot = p->slots[0];
	u32 old = twig_item_size(leaf, slot);
	u32 cut = old - new_size;
	u32 data_end = twig_leaf_data_end(leaf);
	u32 off = twig_item_offset(leaf, slot);
	u32 n = twig_header_nritems(leaf);
	int i;

	if (WARN_ON_ONCE(new_size > old))
		return;
	memmove(leaf->data + data_end + cut, leaf->data + data_end,
		off + new_size - data_end);
	for (i = slot; i < n; i++) {
		struct twig_item *it = twig_item_nr(leaf, i);

		it->offset = cpu_to_le32(le32_to_cpu(it->offset) + cut);
	}
	twig_item_nr(leaf, slot)->size = cpu_to_le32(new_size);
}
EXPORT_SYMBOL_IF_KUNIT(twig_truncate_item);

/* ---- iteration (read-only paths) ---- */

static bool twig_key_next(struct twig_key *k)
{
	if (k->offset != U64_MAX) {
		k->offset++;
	} else if (k->type != U8_MAX) {
		k->type++;
		k->offset = 0;
	} else if (k->objectid != U64_MAX) {
		k->objectid++;
		k->type = 0;
		k->offset = 0;
	} else {
		return false;
	}
	return true;
}

static bool twig_key_prev(struct twig_key *k)
{
	if (k->offset) {
		k->offset--;
	} else if (k->type) {
		k->type--;
		k->offset = U64_MAX;
	} else if (k->objectid) {
		k->objectid--;
		k->type = U8_MAX;
		k->offset = U64_MAX;
	} else {
		return false;
	}
	return true;
}

/*
 * Move to the first item after the current leaf's last one.  The path
 * keeps no locks above the leaf, so this searches again from the root for
 * the successor of the last key; if that lands past the end of a leaf
 * (the next item starts the next leaf), it follows the smallest key right
 * of the path that the search recorded, which is the next leaf's first.
 */
struct twig_test_hooks twig_test_hooks;
EXPORT_SYMBOL_IF_KUNIT(twig_test_hooks);

int twig_next_leaf(struct twig_fs_info *fs, struct twig_path *p)
{
	struct twig_eb *leaf = p->nodes[0];
	u32 nr = twig_header_nritems(leaf);
	struct twig_key key;
	int ret;

	if (nr) {
		twig_item_key(leaf, nr - 1, &key);
		if (!twig_key_next(&key))
			return 1;
	} else if (p->have_next_key) {
		key = p->next_key;
	} else {
		return 1;
	}
	for (;;) {
		twig_release_path(p);
		if (unlikely(twig_test_hooks.next_leaf))
			twig_test_hooks.next_leaf(fs);
		ret = twig_search_slot(NULL, fs, &key, p, 0, 0);
		if (ret < 0)
			return ret;
		if (p->slots[0] < twig_header_nritems(p->nodes[0]))
			return 0;
		if (!p->have_next_key)
			return 1;
		key = p->next_key;
	}
}
EXPORT_SYMBOL_IF_KUNIT(twig_next_leaf);

/*
 * Position @p at the first item >= @key: 0, 1 if there is none, or <0.
 * Past the end of a leaf, twig_next_leaf() searches again from that
 * leaf's last key with no lock held, so an item inserted meanwhile
 * between that key and @key can come first: step over it.  Taken for the
 * first item >= @key, such an item once ended twig_delete_inode_items()
 * early (another inode's new extent, right below the dying inode's
 * INODE_ITEM at the start of the next leaf): the orphan item went and
 * the INODE_ITEM stayed, an inode that nothing reaches.
 */
int twig_walk_first(struct twig_fs_info *fs, const struct twig_key *key,
		    struct twig_path *p)
{
	struct twig_key found;
	int ret;

	ret = twig_search_slot(NULL, fs, key, p, 0, 0);
	if (ret < 0)
		return ret;
	for (;;) {
		if (p->slots[0] >= twig_header_nritems(p->nodes[0])) {
			ret = twig_next_leaf(fs, p);
			if (ret)
				return ret;
		}
		twig_item_key(p->nodes[0], p->slots[0], &found);
		if (twig_key_cmp(&found, key) >= 0)
			return 0;
		p->slots[0]++;
	}
}
EXPORT_SYMBOL_IF_KUNIT(twig_walk_first);

int twig_next_item(struct twig_fs_info *fs, struct twig_path *p)
{
	if (++p->slots[0] < twig_header_nritems(p->nodes[0]))
		return 0;
	return twig_next_leaf(fs, p);
}
EXPORT_SYMBOL_IF_KUNIT(twig_next_item);

/* Move to the item before the current one, searching again if needed. */
int twig_prev_item(struct twig_fs_info *fs, struct twig_path *p)
{
	struct twig_key key;
	int ret;

	if (p->slots[0] > 0) {
		p->slots[0]--;
		return 0;
	}
	if (!twig_header_nritems(p->nodes[0]))
		return 1;
	twig_item_key(p->nodes[0], 0, &key);
	if (!twig_key_prev(&key))
		return 1;
	twig_release_path(p);
	ret = twig_search_slot(NULL, fs, &key, p, 0, 0);
	if (ret <= 0)
		return ret;
	if (p->slots[0] == 0)
		return 1;
	p->slots[0]--;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(twig_prev_item);

/* ---- mount ---- */

int twig_tree_open(struct twig_fs_info *fs)
{
	struct twig_super_block *sb = fs->super_copy;
	struct twig_key key = { U64_MAX, U8_MAX, U64_MAX };
	u64 next = TWIG_FIRST_FREE_OBJECTID;
	struct twig_path *p;
	struct twig_eb *root;
	int ret;

	root = twig_read_eb(fs, le64_to_cpu(sb->root), sb->root_level,
			    le64_to_cpu(sb->root_generation));
	if (IS_ERR(root))
		return PTR_ERR(root);
	fs->root = root;
	fs->root_level = root->level;

	/* The last key holds the highest objectid in use. */
	p = twig_alloc_path();
	if (!p) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = twig_search_slot(NULL, fs, &key, p, 0, 0);
	if (ret >= 0 && p->slots[0] > 0) {
		twig_item_key(p->nodes[0], p->slots[0] - 1, &key);
		/*
		 * The tree checker bounds objectids, but the counter must not
		 * wrap to a used number even so: at the limit it stays there
		 * and twig_new_objectid() refuses with -EOVERFLOW.
		 */
		if (key.objectid > TWIG_MAX_OBJECTID)
			next = TWIG_MAX_OBJECTID + 1;
		else
			next = max(next, key.objectid + 1);
	}
	twig_free_path(p);
	if (ret < 0)
		goto fail;
	atomic64_set(&fs->next_objectid, next);
	return 0;
fail:
	twig_eb_put(fs->root);
	fs->root = NULL;
	return ret;
}

/* @eb's own sectors and, in a leaf, every data run its extents name. */
static int twig_claim_block(struct twig_fs_info *fs, struct twig_eb *eb,
			    u64 *unmarked, u64 *bad)
{
	bool opaque = test_bit(TWIG_FS_MEMONLY, &fs->flags) &&
		      test_bit(TWIG_FS_OPAQUE_ITEMS, &fs->flags);
	u32 nr = twig_header_nritems(eb);
	struct twig_key key;
	u32 i;
	int ret;

	*unmarked += twig_alloc_mark_used(fs, eb->start, eb->len);
	for (i = 0; i < nr && !eb->level && !opaque; i++) {
		const struct twig_file_extent *fe = twig_item_ptr(eb, i);

		twig_item_key(eb, i, &key);
		if (key.type != TWIG_EXTENT_DATA_KEY ||
		    fe->type == TWIG_FILE_EXTENT_INLINE)
			continue;
		*unmarked += twig_alloc_mark_used(fs, le64_to_cpu(fe->disk_bytenr),
					  le64_to_cpu(fe->disk_num_bytes));
	}
	for (i = 0; i < nr && eb->level; i++) {
		struct twig_eb *child;

		/* a child that fails its check still holds its address */
		*unmarked += twig_alloc_mark_used(fs, twig_node_blockptr(eb, i),
					  fs->nodesize);
		child = twig_read_child(eb, i);
		if (IS_ERR(child)) {
			if (PTR_ERR(child) != -EUCLEAN)
				return PTR_ERR(child);
			(*bad)++;
			continue;
		}
		ret = twig_claim_block(fs, child, unmarked, bad);
		twig_eb_put(child);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Mount, before anything allocates: every tree block and data run the
 * tree names is set in the allocation bitmap, whatever the loaded copy
 * says.  A checksum-valid bitmap that frees a live block would let the
 * next-fit allocator hand it out again (the first CoW of the root could
 * be given the root's own address) and two owners write one sector; btrfs
 * and ext4's block_validity do not trust their free-space maps blindly
 * either.  It reads the whole tree once, with no locks (nothing else runs
 * yet); a block that fails its check is left to fail where it is used.
 */
int twig_tree_claim(struct twig_fs_info *fs)
{
	u64 unmarked = 0, bad = 0;
	int ret;

	ret = twig_claim_block(fs, fs->root, &unmarked, &bad);
	if (ret)
		return ret;
	if (unmarked)
		pr_warn("twigfs (%s): allocation bitmap: %llu sectors the tree uses were free; marked in use\n",
			twig_fs_id(fs), unmarked);
	if (bad)
		pr_warn("twigfs (%s): %llu tree blocks failed their check at mount; what they name stays as the bitmap says\n",
			twig_fs_id(fs), bad);
	return 0;
}

void twig_tree_close(struct twig_fs_info *fs)
{
	twig_eb_put(fs->root);
	fs->root = NULL;
}
