// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs fsync log: fsync(2) of a file without committing the transaction.
 *
 * The model
 * =========
 *
 * The log belongs to the running transaction T = G + 1 (G = the last
 * committed generation).  It is a chain of log blocks, newest first: each
 * is a leaf in the fs tree's format (struct twig_header, owner
 * TWIG_LOG_TREE_OBJECTID, generation T), whose first item is a struct
 * twig_log_prev naming the block written before it, followed by copies of
 * one inode's INODE_ITEM and EXTENT_DATA items (for a new file also its
 * INODE_REF and its name's DIR_INDEX item) as they are in the running
 * tree.  The superblock names the newest block (log_root, log_generation =
 * T, and the incompat bit TWIG_FEATURE_INCOMPAT_LOG); every other field is
 * the last commit's, so a crash finds G plus the log.
 *
 * fsync (twig_log_inode(), called by twig_fsync() in file.c after the
 * data is written and waited for, so the extent items naming it are in
 * the tree; what the log needs of the in-memory inode comes in a struct
 * twig_log_target, so this file knows nothing of the VFS):
 *   1. inode lock -> extent_mutex (taken by file.c) -> commit_mutex: no
 *      write, truncate or name change of this file, and no commit, can
 *      run meanwhile, so the copy is one consistent state of the inode in
 *      exactly the transaction that is running.  No transaction running
 *      means the last commit already has everything: nothing to do;
 *   2. copy the items (INODE_ITEM, XATTR_ITEMs, so an ACL or label set
 *      in T is durable with the file, EXTENT_DATA) into a new block,
 *      allocated free in both bitmaps and kept pending
 *      (twig_alloc_log_block()): never in a commit's bitmap, never
 *      reused until the commit of T is on disk.  From the first log
 *      block on, every free of T stays pinned until that commit
 *      (fs->log_pin), so no sector an extent in the log names is reused;
 *   3. write the block, then the superblock with REQ_PREFLUSH | REQ_FUA
 *      (the pre-flush makes the log block durable first), under
 *      commit_mutex, which also serialises it against the commit's own
 *      superblock write;
 *   4. the commit of T writes a superblock without the log and then frees
 *      the log blocks (twig_log_release(), transaction.c).
 *
 * A file created in T with one name, in a directory that existed at the
 * last commit and lost no name in T, is logged with its INODE_REF and the
 * name's DIR_INDEX item (twig_log_new_name()).  What the log cannot
 * express falls back to a full commit, counted in log_fallbacks: anything
 * but a regular file (directories commit, which POSIX allows), any other
 * name change in T (twig_inode_info.ns_transid > G: a link, rename or
 * unlink; del_transid: a new name in a directory that lost one in T, which
 * may be the same name in the last commit; an inode read from disk counts
 * its INODE_ITEM transid for both, so an evicted one is never mistaken
 * for unchanged), items that do not fit in one block, no space for a log
 * block, a failed log block write, or any other error of the copy
 * (ENOMEM, a tree block read) outside the error state.
 *
 * Replay (twig_log_replay(), at a read-write mount before anything reads
 * the tree, when the superblock names a log of generation G + 1):
 *   1. read the chain from log_root, verifying every block (tree checker,
 *      owner, generation T, LOG_PREV first) and claiming it as pending, so
 *      nothing the replay writes lands on the log before the log is
 *      obsolete;
 *   2. newest block first, the first copy of an inode wins; for each such
 *      inode, which must exist in the tree, claim the sectors of the
 *      logged regular and preallocated extents that its committed extents
 *      do not already hold (they must be free in the bitmap: -EUCLEAN
 *      otherwise), all before any tree block is allocated;
 *   3. in the transaction T: delete the inode's INODE_ITEM, XATTR_ITEM
 *      and EXTENT_DATA items, free the sectors of old extents that no logged
 *      one keeps, insert the logged items; then add each logged name the
 *      tree lacks (DIR_INDEX, DIR_ITEM entry, the directory's size and
 *      next_index), only for inodes new in T that this replay inserted;
 *   4. commit T, which clears the log from the superblock and frees the
 *      log blocks.
 * A crash before 4's superblock leaves G and the unchanged log: the next
 * mount replays again from the same state.  A read-only mount refuses a
 * filesystem with a log (super.c), as replaying needs to write and
 * ignoring it would show data older than what fsync promised.
 *
 * Lock order: i_rwsem -> extent_mutex -> commit_mutex -> tree locks.  A
 * task holding commit_mutex here never waits for a handle, and the log
 * path allocates under memalloc_nofs_save(), since reclaim could evict an
 * inode whose deletion waits for a commit, which waits for commit_mutex.
 */
#include <linux/blkdev.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "twigfs.h"

/*
 * Tests (scripts/test-persist.sh): fail the replay's commit at its
 * superblock write, leaving what a power cut there leaves: the replay's
 * tree blocks and bitmap written, the old superblock and log in place.
 */
static bool twig_replay_crash;
module_param_named(replay_crash, twig_replay_crash, bool, 0644);
MODULE_PARM_DESC(replay_crash,
		 "tests: fail log replay's commit before its superblock is written");

/* A log block under construction or read: the leaf layout of ctree.c. */
struct twig_log_buf {
	struct twig_fs_info *fs;
	void *data;
	u32 nr;
	u32 data_end;
};

static struct twig_item *twig_log_item(void *data, u32 slot)
{
	return (struct twig_item *)(data + sizeof(struct twig_header)) + slot;
}

/* Append an item (keys arrive sorted); false when the block is full. */
static bool twig_log_add(struct twig_log_buf *lb, const struct twig_key *key,
			 const void *item, u32 size)
{
	u32 items_end = sizeof(struct twig_header) +
			(lb->nr + 1) * sizeof(struct twig_item);
	struct twig_item *it;

	if (items_end > lb->data_end || lb->data_end - items_end < size)
		return false;
	lb->data_end -= size;
	memcpy(lb->data + lb->data_end, item, size);
	it = twig_log_item(lb->data, lb->nr++);
	twig_key_to_disk(&it->key, key);
	it->offset = cpu_to_le32(lb->data_end);
	it->size = cpu_to_le32(size);
	return true;
}

/*
 * Copy @ino's INODE_ITEM and EXTENT_DATA items from the running tree:
 * 0, 1 when they do not fit in one block, or -errno.
 */
static int twig_log_copy_inode(struct twig_log_buf *lb, u64 ino,
			       bool new_name)
{
	struct twig_fs_info *fs = lb->fs;
	struct twig_key key = { ino, TWIG_INODE_ITEM_KEY, 0 };
	struct twig_path *path;
	bool have_inode = false;
	bool full = false;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_walk_first(fs, &key, path);
	while (ret == 0) {
		struct twig_eb *leaf = path->nodes[0];
		int slot = path->slots[0];

		twig_item_key(leaf, slot, &key);
		if (key.objectid != ino)
			break;
		if (key.type == TWIG_INODE_ITEM_KEY ||
		    key.type == TWIG_XATTR_ITEM_KEY ||
		    key.type == TWIG_EXTENT_DATA_KEY ||
		    (new_name && key.type == TWIG_INODE_REF_KEY)) {
			if (!twig_log_add(lb, &key, twig_item_ptr(leaf, slot),
					  twig_item_size(leaf, slot))) {
				full = true;
				break;
			}
			have_inode |= key.type == TWIG_INODE_ITEM_KEY;
		}
		ret = twig_next_item(fs, path);
	}
	twig_release_path(path);
	twig_free_path(path);
	if (ret < 0)
		return ret;
	if (full)
		return 1;
	return have_inode ? 0 : -EUCLEAN;
}

/*
 * A file created in T with one name, in a directory that existed at the
 * last commit @gen: log that name's DIR_INDEX item (its DIR_ITEM entry is
 * the same bytes; replay rebuilds it).  0, 1 (not expressible) or -errno.
 */
static int twig_log_new_name(struct twig_log_buf *lb,
			     const struct twig_log_target *t, u64 gen,
			     u64 transid)
{
	u64 ino = t->ino;
	struct twig_fs_info *fs = lb->fs;
	struct twig_key key = { ino, TWIG_INODE_REF_KEY, 0 };
	struct twig_inode_item ii;
	struct twig_path *path;
	u64 parent = 0, index = 0;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_walk_first(fs, &key, path);
	if (ret == 0) {
		struct twig_eb *leaf = path->nodes[0];
		int slot = path->slots[0];
		const struct twig_inode_ref *ref = twig_item_ptr(leaf, slot);
		u32 size = twig_item_size(leaf, slot);

		twig_item_key(leaf, slot, &key);
		/* exactly one name (the checker vouches for the layout) */
		if (key.objectid != ino || key.type != TWIG_INODE_REF_KEY ||
		    size != sizeof(*ref) + le16_to_cpu(ref->name_len))
			ret = 1;
		parent = key.offset;
		index = le64_to_cpu(ref->index);
	}
	twig_release_path(path);
	if (ret)
		goto out;
	/*
	 * A name removed from the directory in T may be this very name in
	 * the last commit (unlink, then create): replay could not add it.
	 */
	if (!t->dir || t->dir != parent || t->dir_del_transid == transid) {
		ret = 1;
		goto out;
	}
	ret = twig_read_inode_item(fs, parent, &ii);
	if (ret)
		goto out;
	if (le64_to_cpu(ii.generation) > gen) {
		ret = 1;	/* the directory is new too */
		goto out;
	}
	key.objectid = parent;
	key.type = TWIG_DIR_INDEX_KEY;
	key.offset = index;
	ret = twig_search_slot(NULL, fs, &key, path, 0, 0);
	if (ret == 0 &&
	    !twig_log_add(lb, &key, twig_item_ptr(path->nodes[0],
						  path->slots[0]),
			  twig_item_size(path->nodes[0], path->slots[0])))
		ret = 1;
	else if (ret > 0)
		ret = -EUCLEAN;
	twig_release_path(path);
out:
	twig_free_path(path);
	return ret < 0 ? ret : !!ret;
}

/*
 * Write the block in @lb as the newest of the log of @transid and point
 * the superblock at it.  0, 1 (fall back to a commit: no space, or the
 * block write failed) or -errno (the superblock write failed: the error
 * state, as a failed commit).
 */
static int twig_log_write(struct twig_fs_info *fs, struct twig_log_buf *lb,
			  u64 transid)
{
	struct twig_super_block *sb = fs->super_copy;
	struct twig_header *h = lb->data;
	struct twig_log_prev *prev;
	struct twig_log_blk *blk;
	struct twig_eb eb = { };
	int ret;

	blk = kzalloc(sizeof(*blk), GFP_NOFS);
	if (!blk)
		return -ENOMEM;
	ret = twig_alloc_log_block(fs, &blk->da);
	if (ret) {
		kfree(blk);
		return 1;
	}
	/* item 0 was reserved by twig_log_inode() */
	prev = lb->data + le32_to_cpu(twig_log_item(lb->data, 0)->offset);
	prev->prev = sb->log_root;
	prev->prev_generation = sb->log_root ? cpu_to_le64(transid) : 0;
	prev->seq = cpu_to_le64(fs->log_seq + 1);
	prev->reserved = 0;
	memcpy(h->fsid, fs->fsid, sizeof(h->fsid));
	h->bytenr = cpu_to_le64(blk->da.bytenr);
	h->generation = cpu_to_le64(transid);
	h->owner = cpu_to_le64(TWIG_LOG_TREE_OBJECTID);
	h->nritems = cpu_to_le32(lb->nr);
	h->level = 0;
	h->csum = cpu_to_le32(twig_csum(lb->data + 4, fs->nodesize - 4));
	eb.start = blk->da.bytenr;
	eb.len = fs->nodesize;
	eb.data = lb->data;
	eb.fs = fs;
	/* what we built must be what replay accepts: a bug otherwise */
	ret = twig_log_check(fs, &eb, transid, true);
	if (WARN_ON_ONCE(ret) ||
	    twig_dev_write(fs, blk->da.bytenr, lb->data, fs->nodesize, 0)) {
		twig_data_alloc_drop(fs, &blk->da);
		kfree(blk);
		return 1;
	}
	list_add(&blk->link, &fs->log_blocks);
	fs->log_seq++;

	sb->log_root = cpu_to_le64(blk->da.bytenr);
	sb->log_generation = cpu_to_le64(transid);
	sb->incompat_flags |= cpu_to_le64(TWIG_FEATURE_INCOMPAT_LOG);
	sb->csum = cpu_to_le32(twig_csum((u8 *)sb + 4, TWIG_SUPER_SIZE - 4));
	ret = twig_dev_write(fs, TWIG_SUPER_OFFSET, sb, TWIG_SUPER_SIZE,
			     REQ_PREFLUSH | REQ_FUA);
	if (ret)
		__twig_fs_error(fs, __func__, __LINE__, transid, ret);
	return ret;
}

/*
 * Make the inode @t describes durable through the log; its fsync
 * (file.c) holds its i_rwsem and extent_mutex and has written and waited
 * for its data.  Returns 0 (done: logged, or nothing left to commit), 1
 * (the caller must commit) or -errno.
 */
int twig_log_inode(struct twig_fs_info *fs, const struct twig_log_target *t)
{
	struct twig_log_prev zero = { };
	struct twig_key key = { TWIG_LOG_TREE_OBJECTID, TWIG_LOG_PREV_KEY, 0 };
	struct twig_log_buf lb = { .fs = fs };
	unsigned int nofs;
	u64 transid, gen;
	bool new_file;
	int ret;

	nofs = memalloc_nofs_save();
	lb.data = kzalloc(fs->nodesize, GFP_NOFS);
	if (!lb.data) {
		memalloc_nofs_restore(nofs);
		return -ENOMEM;
	}
	lb.data_end = fs->nodesize;
	mutex_lock(&fs->commit_mutex);
	spin_lock(&fs->trans_lock);
	transid = fs->running_transid;
	gen = fs->generation;
	spin_unlock(&fs->trans_lock);
	/* created in T with one name, never removed: log the name too */
	new_file = transid && t->generation == transid;
	if (test_bit(TWIG_FS_ERROR, &fs->flags))
		ret = -EIO;
	else if (!transid)
		ret = 0;	/* the last commit holds everything */
	else if (t->ns_transid > gen &&
		 (t->generation != transid || t->nlink != 1 ||
		  t->del_transid == transid))
		ret = 1;	/* a name changed in T: not expressible */
	else if (!twig_log_add(&lb, &key, &zero, sizeof(zero)))
		ret = -EINVAL;
	else
		ret = (new_file ? twig_log_new_name(&lb, t, gen, transid) : 0) ?:
		      twig_log_copy_inode(&lb, t->ino, new_file) ?:
		      twig_log_write(fs, &lb, transid);
	/*
	 * A failed copy or block write (ENOMEM, a tree block read) leaves
	 * nothing behind: the commit can still make the file durable.
	 */
	if (ret < 0 && !test_bit(TWIG_FS_ERROR, &fs->flags))
		ret = 1;
	mutex_unlock(&fs->commit_mutex);
	kfree(lb.data);
	memalloc_nofs_restore(nofs);
	if (ret == 0 && transid)
		twig_stat_add(fs, TWIG_CS_LOG_SYNCS, 1);
	return ret;
}

/* ---- replay ---- */

/* One logged inode: where its items are in which block. */
struct twig_log_inode {
	u64 ino;
	void *data;			/* the log block */
	u32 first, nr;			/* its item slots */
	struct twig_key *old_keys;	/* its items in the tree */
	u64 (*old_ext)[2];		/* their extents' runs: bytenr, len */
	u32 n_old, n_old_ext;
	bool has_ref;			/* new in T: its name is logged */
};

/* A logged name: a DIR_INDEX item of a directory in some log block. */
struct twig_log_name {
	void *data;
	u32 slot;
};

static bool twig_range_has(u64 (*ext)[2], u32 n, u64 sector_byte)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (sector_byte >= ext[i][0] &&
		    sector_byte - ext[i][0] < ext[i][1])
			return true;
	return false;
}

static const struct twig_file_extent *twig_log_reg(void *data, u32 slot,
						   struct twig_key *key)
{
	struct twig_item *it = twig_log_item(data, slot);
	const struct twig_file_extent *fe;

	twig_disk_to_key(key, &it->key);
	if (key->type != TWIG_EXTENT_DATA_KEY)
		return NULL;
	fe = data + le32_to_cpu(it->offset);
	/* a preallocated extent owns its sectors as a regular one does */
	return fe->type == TWIG_FILE_EXTENT_REG ||
	       fe->type == TWIG_FILE_EXTENT_PREALLOC ? fe : NULL;
}

/* Collect the inode's INODE_ITEM and EXTENT_DATA keys in the tree. */
static int twig_log_old_items(struct twig_fs_info *fs,
			      struct twig_log_inode *li)
{
	struct twig_key key = { li->ino, TWIG_INODE_ITEM_KEY, 0 };
	struct twig_path *path;
	u32 cap = 16;
	bool have_inode = false;
	int ret;

	path = twig_alloc_path();
	li->old_keys = kmalloc_array(cap, sizeof(*li->old_keys), GFP_KERNEL);
	li->old_ext = kmalloc_array(cap, sizeof(*li->old_ext), GFP_KERNEL);
	if (!path || !li->old_keys || !li->old_ext) {
		twig_free_path(path);
		return -ENOMEM;
	}
	ret = twig_walk_first(fs, &key, path);
	while (ret == 0) {
		struct twig_eb *leaf = path->nodes[0];
		int slot = path->slots[0];

		twig_item_key(leaf, slot, &key);
		if (key.objectid != li->ino)
			break;
		if (key.type != TWIG_INODE_ITEM_KEY &&
		    key.type != TWIG_XATTR_ITEM_KEY &&
		    key.type != TWIG_EXTENT_DATA_KEY &&
		    (!li->has_ref || key.type != TWIG_INODE_REF_KEY))
			goto next;
		if (li->n_old == cap) {
			void *k, *e;

			cap *= 2;
			k = krealloc_array(li->old_keys, cap,
					   sizeof(*li->old_keys), GFP_KERNEL);
			if (k)
				li->old_keys = k;
			e = krealloc_array(li->old_ext, cap,
					   sizeof(*li->old_ext), GFP_KERNEL);
			if (e)
				li->old_ext = e;
			if (!k || !e) {
				ret = -ENOMEM;
				break;
			}
		}
		li->old_keys[li->n_old++] = key;
		have_inode |= key.type == TWIG_INODE_ITEM_KEY;
		if (key.type == TWIG_EXTENT_DATA_KEY &&
		    twig_item_size(leaf, slot) ==
		    sizeof(struct twig_file_extent)) {
			const struct twig_file_extent *fe =
				twig_item_ptr(leaf, slot);

			if (fe->type == TWIG_FILE_EXTENT_REG ||
			    fe->type == TWIG_FILE_EXTENT_PREALLOC) {
				li->old_ext[li->n_old_ext][0] =
					le64_to_cpu(fe->disk_bytenr);
				li->old_ext[li->n_old_ext][1] =
					le64_to_cpu(fe->disk_num_bytes);
				li->n_old_ext++;
			}
		}
next:
		ret = twig_next_item(fs, path);
	}
	twig_release_path(path);
	twig_free_path(path);
	if (ret < 0)
		return ret;
	/* a logged name means the inode is new: the last commit lacks it */
	if (have_inode == li->has_ref) {
		pr_err("twigfs (%s): log has inode %llu %s, but the tree %s it\n",
		       fs->sb->s_id, li->ino,
		       li->has_ref ? "as new" : "as existing",
		       have_inode ? "has" : "does not have");
		return -EUCLEAN;
	}
	return 0;
}

/* Claim the logged extents' sectors the old extents do not hold. */
static int twig_log_claim_data(struct twig_fs_info *fs,
			       struct twig_log_inode *li)
{
	struct twig_key key;
	u32 i;
	u64 off;
	int ret;

	for (i = li->first; i < li->first + li->nr; i++) {
		const struct twig_file_extent *fe =
			twig_log_reg(li->data, i, &key);
		u64 start, len;

		if (!fe)
			continue;
		start = le64_to_cpu(fe->disk_bytenr);
		len = le64_to_cpu(fe->disk_num_bytes);
		for (off = 0; off < len; off += TWIG_SECTORSIZE) {
			if (twig_range_has(li->old_ext, li->n_old_ext,
					   start + off))
				continue;
			ret = twig_alloc_claim(fs, start + off, TWIG_SECTORSIZE,
					       NULL);
			if (ret) {
				pr_err("twigfs (%s): logged extent of inode %llu at %llu overlaps allocated space\n",
				       fs->sb->s_id, li->ino, start + off);
				return ret;
			}
		}
	}
	return 0;
}

/* Whether a logged extent of @li names the sector at @byte. */
static bool twig_log_keeps(struct twig_log_inode *li, u64 byte)
{
	struct twig_key key;
	u32 i;

	for (i = li->first; i < li->first + li->nr; i++) {
		const struct twig_file_extent *fe =
			twig_log_reg(li->data, i, &key);
		u64 start;

		if (!fe)
			continue;
		start = le64_to_cpu(fe->disk_bytenr);
		if (byte >= start &&
		    byte - start < le64_to_cpu(fe->disk_num_bytes))
			return true;
	}
	return false;
}

/* Replace @li's items in the tree by the logged ones, in one handle. */
static int twig_log_replay_inode(struct twig_fs_info *fs,
				 struct twig_log_inode *li)
{
	struct twig_trans *trans;
	struct twig_path *path;
	u32 i;
	u64 off;
	int ret = 0;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	trans = twig_start_transaction_reserved(fs, li->n_old + li->nr);
	if (IS_ERR(trans)) {
		twig_free_path(path);
		return PTR_ERR(trans);
	}
	for (i = 0; i < li->n_old && !ret; i++) {
		ret = twig_search_slot(trans, fs, &li->old_keys[i], path, -1, 1);
		if (ret > 0)
			ret = -EUCLEAN;
		if (!ret)
			ret = twig_del_item(trans, fs, path);
		twig_release_path(path);
	}
	for (i = 0; i < li->n_old_ext && !ret; i++) {
		for (off = 0; off < li->old_ext[i][1] && !ret;
		     off += TWIG_SECTORSIZE)
			if (!twig_log_keeps(li, li->old_ext[i][0] + off))
				ret = twig_free_data(fs, trans,
						     li->old_ext[i][0] + off,
						     TWIG_SECTORSIZE);
	}
	for (i = li->first; i < li->first + li->nr && !ret; i++) {
		struct twig_item *it = twig_log_item(li->data, i);
		struct twig_key key;

		twig_disk_to_key(&key, &it->key);
		ret = twig_insert_item(trans, fs, &key,
				       li->data + le32_to_cpu(it->offset),
				       le32_to_cpu(it->size));
	}
	if (ret)
		twig_abort_transaction(trans, ret);
	twig_end_transaction(trans);
	twig_free_path(path);
	return ret;
}

/*
 * Add a logged name to its directory unless the tree has it (an older
 * block logged it too): the DIR_INDEX item, the same entry appended to
 * the DIR_ITEM of its hash, and the directory's size and next_index.
 * The caller checked that the entry names a new inode this replay
 * inserted.
 */
static int twig_log_replay_name(struct twig_fs_info *fs,
				const struct twig_log_name *ln)
{
	struct twig_item *it = twig_log_item(ln->data, ln->slot);
	const struct twig_dir_entry *de = ln->data + le32_to_cpu(it->offset);
	u32 size = le32_to_cpu(it->size);
	u32 len = le16_to_cpu(de->name_len);
	const char *name = (const char *)(de + 1);
	struct twig_inode_item *ii;
	struct twig_trans *trans;
	struct twig_path *path;
	struct twig_key key;
	u64 index;
	int ret;

	twig_disk_to_key(&key, &it->key);
	index = key.offset;
	/* the checker vouched for one entry filling the item */
	if (key.type != TWIG_DIR_INDEX_KEY || size != sizeof(*de) + len ||
	    de->type == TWIG_FT_DIR)
		return -EUCLEAN;
	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_search_slot(NULL, fs, &key, path, 0, 0);
	twig_release_path(path);
	if (ret <= 0) {
		twig_free_path(path);
		return ret;	/* there already (0), or an error */
	}
	trans = twig_start_transaction_reserved(fs, 3);
	if (IS_ERR(trans)) {
		twig_free_path(path);
		return PTR_ERR(trans);
	}
	ret = twig_insert_item(trans, fs, &key, de, size);
	if (!ret) {
		key.type = TWIG_DIR_ITEM_KEY;
		key.offset = twig_name_hash(name, len);
		ret = twig_append_record(trans, &key, de, sizeof(*de), name,
					 len, true);
	}
	if (!ret) {
		key.type = TWIG_INODE_ITEM_KEY;
		key.offset = 0;
		ret = twig_search_slot(trans, fs, &key, path, 0, 1);
		if (ret > 0)
			ret = -EUCLEAN;
	}
	if (!ret) {
		ii = twig_item_ptr(path->nodes[0], path->slots[0]);
		if (!S_ISDIR(le32_to_cpu(ii->mode))) {
			ret = -EUCLEAN;
		} else {
			le64_add_cpu(&ii->size, 2ULL * len);
			if (le64_to_cpu(ii->next_index) <= index)
				ii->next_index = cpu_to_le64(index + 1);
			ii->transid = cpu_to_le64(trans->transid);
			twig_mark_buffer_dirty(trans, path->nodes[0]);
		}
	}
	twig_release_path(path);
	if (ret)
		twig_abort_transaction(trans, ret);
	twig_end_transaction(trans);
	twig_free_path(path);
	return ret;
}

static int twig_log_add_name(struct twig_log_name **names, u32 *n, u32 *cap,
			     void *data, u32 slot)
{
	if (*n == *cap) {
		void *p;

		*cap = *cap ? 2 * *cap : 16;
		p = krealloc_array(*names, *cap, sizeof(**names), GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		*names = p;
	}
	(*names)[*n].data = data;
	(*names)[(*n)++].slot = slot;
	return 0;
}

/* Read and verify the chain, claiming every block (newest first). */
static int twig_log_read_chain(struct twig_fs_info *fs, u64 log_gen)
{
	u64 bytenr = le64_to_cpu(fs->super_copy->log_root);
	u64 left = fs->total_bytes / fs->nodesize;
	struct twig_eb eb = { };
	int ret;

	while (bytenr) {
		struct twig_log_blk *blk;
		const struct twig_log_prev *prev;

		if (!left--)
			return -EUCLEAN;
		blk = kzalloc(sizeof(*blk), GFP_KERNEL);
		if (!blk)
			return -ENOMEM;
		blk->data = kmalloc(fs->nodesize, GFP_KERNEL);
		if (!blk->data) {
			kfree(blk);
			return -ENOMEM;
		}
		/* free in the committed bitmap, and never taken twice */
		ret = twig_alloc_claim(fs, bytenr, fs->nodesize, &blk->da);
		if (ret) {
			pr_err("twigfs (%s): log block %llu is not free space\n",
			       fs->sb->s_id, bytenr);
			kfree(blk->data);
			kfree(blk);
			return ret;
		}
		list_add_tail(&blk->link, &fs->log_blocks);
		ret = twig_dev_read(fs, bytenr, blk->data, fs->nodesize);
		if (ret)
			return ret;
		eb.start = bytenr;
		eb.len = fs->nodesize;
		eb.data = blk->data;
		eb.fs = fs;
		ret = twig_log_check(fs, &eb, log_gen, true);
		if (ret)
			return ret;
		prev = blk->data + le32_to_cpu(twig_log_item(blk->data, 0)->offset);
		bytenr = le64_to_cpu(prev->prev);
		if (bytenr && le64_to_cpu(prev->prev_generation) != log_gen)
			return -EUCLEAN;
		fs->log_seq++;
	}
	return 0;
}

/*
 * Replay the log the superblock names, if it is the running
 * transaction's, and commit.  Called by super.c before anything else
 * reads the tree, read-write only.
 */
int twig_log_replay(struct twig_fs_info *fs)
{
	u64 log_gen = le64_to_cpu(fs->super_copy->log_generation);
	struct twig_log_inode *lis = NULL;
	struct twig_log_name *names = NULL;
	u32 n_names = 0, names_cap = 0;
	struct twig_log_blk *blk;
	struct xarray seen;
	u32 n = 0, cap = 0, i;
	u64 blocks;
	int ret;

	if (log_gen != fs->generation + 1) {
		pr_err("twigfs (%s): log of transaction %llu, but the last commit is %llu\n",
		       fs->sb->s_id, log_gen, fs->generation);
		return -EUCLEAN;
	}
	xa_init(&seen);
	ret = twig_log_read_chain(fs, log_gen);
	if (ret)
		goto out;
	/* newest block first: the first copy of an inode is its last state */
	list_for_each_entry(blk, &fs->log_blocks, link) {
		u32 nr = le32_to_cpu(((struct twig_header *)blk->data)->nritems);
		u32 slot = 1;

		while (slot < nr) {
			struct twig_key key;
			u32 end = slot;
			u64 ino;

			twig_disk_to_key(&key, &twig_log_item(blk->data, slot)->key);
			ino = key.objectid;
			while (end < nr) {
				twig_disk_to_key(&key,
						 &twig_log_item(blk->data, end)->key);
				if (key.objectid != ino)
					break;
				end++;
			}
			twig_disk_to_key(&key, &twig_log_item(blk->data, slot)->key);
			if (key.type == TWIG_DIR_INDEX_KEY) {
				/* names of new files, one item each */
				for (; slot < end && !ret; slot++)
					ret = twig_log_add_name(&names, &n_names,
								&names_cap,
								blk->data, slot);
				if (ret)
					goto out;
				continue;
			}
			if (!xa_load(&seen, ino)) {
				ret = xa_err(xa_store(&seen, ino, xa_mk_value(1),
						      GFP_KERNEL));
				if (ret)
					goto out;
				if (n == cap) {
					void *p;

					cap = cap ? 2 * cap : 16;
					p = krealloc_array(lis, cap, sizeof(*lis),
							   GFP_KERNEL | __GFP_ZERO);
					if (!p) {
						ret = -ENOMEM;
						goto out;
					}
					lis = p;
					memset(lis + n, 0, (cap - n) * sizeof(*lis));
				}
				lis[n].ino = ino;
				lis[n].data = blk->data;
				lis[n].first = slot;
				lis[n].nr = end - slot;
				for (i = slot; i < end; i++) {
					twig_disk_to_key(&key,
							 &twig_log_item(blk->data, i)->key);
					if (key.type == TWIG_INODE_REF_KEY)
						lis[n].has_ref = true;
				}
				n++;
			}
			slot = end;
		}
	}
	/* every claim before the first tree block is allocated */
	for (i = 0; i < n && !ret; i++)
		ret = twig_log_old_items(fs, &lis[i]) ?:
		      twig_log_claim_data(fs, &lis[i]);
	for (i = 0; i < n && !ret; i++)
		ret = twig_log_replay_inode(fs, &lis[i]);
	/* names only for inodes this replay created (seen = 2) */
	for (i = 0; i < n && !ret; i++)
		if (lis[i].has_ref)
			ret = xa_err(xa_store(&seen, lis[i].ino,
					      xa_mk_value(2), GFP_KERNEL));
	for (i = 0; i < n_names && !ret; i++) {
		struct twig_item *it = twig_log_item(names[i].data,
						     names[i].slot);
		const struct twig_dir_entry *de =
			names[i].data + le32_to_cpu(it->offset);

		if (xa_to_value(xa_load(&seen, le64_to_cpu(de->ino))) != 2)
			ret = -EUCLEAN;
		else
			ret = twig_log_replay_name(fs, &names[i]);
	}
	/* new inodes may be above the highest objectid the tree had */
	for (i = 0; i < n; i++)
		if (atomic64_read(&fs->next_objectid) <= lis[i].ino)
			atomic64_set(&fs->next_objectid, lis[i].ino + 1);
	blocks = fs->log_seq;
	if (!ret && twig_replay_crash) {
		/* tests: a power cut before the replay's superblock */
		atomic_set(&fs->fail_after, 1);
	}
	if (!ret)
		ret = twig_commit_transaction(fs);
	if (!ret)
		pr_info("twigfs (%s): replayed %u inode(s) from %llu log block(s)\n",
			fs->sb->s_id, n, blocks);
out:
	for (i = 0; i < n; i++) {
		kfree(lis[i].old_keys);
		kfree(lis[i].old_ext);
	}
	kfree(lis);
	kfree(names);
	xa_destroy(&seen);
	return ret;
}
