// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs orphan items: inodes whose last name is gone but whose items are
 * not deleted yet.
 *
 * An inode loses its last link in one transaction (unlink, rmdir, rename
 * over it), or is made without one (O_TMPFILE), but its items are deleted
 * only when the last reference goes away, in later transactions (eviction
 * deletes a bounded number of items per handle).  A crash in between
 * would leave an inode no name reaches and sectors nothing frees.  So the
 * transaction that drops nlink to 0 (or makes the inode) also inserts an
 * empty ORPHAN_ITEM (TWIG_ORPHAN_OBJECTID, ORPHAN_ITEM, ino), and the
 * handle that deletes the inode's last item, or links an O_TMPFILE inode,
 * deletes it.  Every committed tree therefore names each nameless inode,
 * even one half deleted, and a read-write mount (or a remount from
 * read-only) finishes their deletion before anyone can open a file.  The
 * deletion itself, twig_delete_inode_items(), is here too: eviction
 * (inode.c) and that cleanup run it.
 */
#include <linux/fs.h>
#include "vfs.h"

static void twig_orphan_key(struct twig_key *key, u64 ino)
{
	key->objectid = TWIG_ORPHAN_OBJECTID;
	key->type = TWIG_ORPHAN_ITEM_KEY;
	key->offset = ino;
}

/*
 * Called in the handle that will drop @inode's link count to 0, before
 * the name goes: if the insert fails, nothing has changed yet.  An item
 * already there (left by a cleanup that failed) names the same inode.
 */
int twig_orphan_add(struct twig_trans *trans, struct inode *inode)
{
	struct twig_path *path;
	struct twig_key key;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	twig_orphan_key(&key, inode->i_ino);
	ret = twig_insert_empty_item(trans, trans->fs, path, &key, 0);
	twig_free_path(path);
	return ret == -EEXIST ? 0 : ret;
}

/*
 * A name removal that failed with @err after twig_orphan_add(): the
 * handle is half applied (at least the orphan item is in), so it aborts
 * and nothing of it is committed; if the insert itself failed, nothing
 * changed and the abort does nothing.
 */
void twig_orphan_abort(struct twig_trans *trans, bool added, int err)
{
	if (added && err)
		twig_abort_transaction(trans, err);
}

/*
 * Called in the handle that deleted the last item of @ino, and in the
 * handle that gives an O_TMPFILE inode its first name: a committed tree
 * never names a linked inode as an orphan.
 */
int twig_orphan_del(struct twig_trans *trans, u64 ino)
{
	struct twig_path *path;
	struct twig_key key;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	twig_orphan_key(&key, ino);
	ret = twig_search_slot(trans, trans->fs, &key, path, -1, 1);
	if (ret == 0)
		ret = twig_del_item(trans, trans->fs, path);
	else if (ret > 0)
		ret = 0;	/* never orphaned: a create that failed */
	twig_free_path(path);
	return ret;
}

#define TWIG_DELETE_BATCH	16

/*
 * Delete every item of @ino (inode, refs, extents), freeing data sectors,
 * up to TWIG_DELETE_BATCH per transaction handle, fewer when space is short
 * (a handle may change one item more than it deletes: the orphan item).
 * A handle stops before a delete beyond its batch, never after the last
 * one, so the handle that deletes the inode's last item is the one that
 * sees nothing left and deletes the orphan item (twig_orphan_del()): no
 * commit can hold the orphan item without an item of its inode.
 */
int twig_delete_inode_items(struct twig_fs_info *fs, u64 ino)
{
	struct twig_key key = { ino, 0, 0 };
	struct twig_key found;
	struct twig_trans *trans;
	struct twig_path *path;
	u64 disk, disk_len = 0;
	unsigned int batch;
	int ret = 0;
	int n;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	for (;;) {
		batch = TWIG_DELETE_BATCH + 1;
		trans = twig_start_transaction_shrink(fs, &batch, 2);
		if (IS_ERR(trans)) {
			ret = PTR_ERR(trans);
			break;
		}
		for (n = 0; ; ) {
			struct twig_eb *leaf;
			int slot;

			ret = twig_search_slot(trans, fs, &key, path, -1, 1);
			if (ret < 0)
				break;
			leaf = path->nodes[0];
			slot = path->slots[0];
			if (slot >= twig_header_nritems(leaf)) {
				/* first item of ino may be in the next leaf */
				twig_release_path(path);
				ret = twig_walk_first(fs, &key, path);
				if (ret == 0)
					twig_item_key(path->nodes[0],
						      path->slots[0], &found);
				twig_release_path(path);
				if (ret)
					break;
				if (found.objectid != ino) {
					ret = 1;
					break;
				}
				key = found;
				continue;
			}
			twig_item_key(leaf, slot, &found);
			if (found.objectid != ino) {
				twig_release_path(path);
				ret = 1;
				break;
			}
			if (n == batch - 1) {
				twig_release_path(path);
				ret = 0;	/* more to delete */
				break;
			}
			disk = 0;
			if (found.type == TWIG_EXTENT_DATA_KEY) {
				struct twig_file_extent *fe = twig_item_ptr(leaf, slot);

				if (twig_item_size(leaf, slot) >= sizeof(*fe) &&
				    (fe->type == TWIG_FILE_EXTENT_REG ||
				     fe->type == TWIG_FILE_EXTENT_PREALLOC)) {
					disk = le64_to_cpu(fe->disk_bytenr);
					disk_len = le64_to_cpu(fe->disk_num_bytes);
				}
			}
			/* free only what the tree no longer names */
			ret = twig_del_item(trans, fs, path);
			twig_release_path(path);
			if (ret)
				break;
			if (disk)
				twig_free_data(fs, trans, disk, disk_len);
			n++;
			key.type = 0;
			key.offset = 0;
		}
		if (ret == 1)
			ret = twig_orphan_del(trans, ino) ?: 1;
		if (ret < 0)
			twig_abort_transaction(trans, ret);
		twig_end_transaction(trans);
		if (ret == 1) {
			ret = 0;
			break;
		}
		if (ret)
			break;
	}
	twig_free_path(path);
	return ret;
}

/* The first orphan item naming an inode >= @ino: 0 and *found, 1 if none. */
static int twig_orphan_next(struct twig_fs_info *fs, u64 ino, u64 *found)
{
	struct twig_path *path;
	struct twig_key key;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	twig_orphan_key(&key, ino);
	ret = twig_walk_first(fs, &key, path);
	if (ret == 0) {
		twig_item_key(path->nodes[0], path->slots[0], &key);
		if (key.objectid == TWIG_ORPHAN_OBJECTID &&
		    key.type == TWIG_ORPHAN_ITEM_KEY)
			*found = key.offset;
		else
			ret = 1;
	}
	twig_free_path(path);
	return ret;
}

/* An orphan item whose inode still has links: drop only the item. */
static int twig_orphan_drop(struct twig_fs_info *fs, u64 ino)
{
	struct twig_trans *trans;
	int ret;

	trans = twig_start_transaction_reserved(fs, 1);
	if (IS_ERR(trans))
		return PTR_ERR(trans);
	ret = twig_orphan_del(trans, ino);
	if (ret)
		twig_abort_transaction(trans, ret);
	twig_end_transaction(trans);
	return ret;
}

/* Finish one orphan: 0, or -errno (logged by the caller). */
static int twig_orphan_reap(struct twig_fs_info *fs, u64 ino)
{
	struct twig_inode_item ii;
	int ret;

	ret = twig_read_inode_item(fs, ino, &ii);
	if (!ret && le32_to_cpu(ii.nlink)) {
		pr_warn("twigfs: %s: orphan item for linked inode %llu dropped\n",
			fs->sb->s_id, ino);
		return twig_orphan_drop(fs, ino);
	}
	if (ret && ret != -ENOENT)
		return ret;
	return twig_delete_inode_items(fs, ino) ?: 1;
}

/*
 * Delete every inode an orphan item names.  Runs before the first
 * read-write use of the tree (fill_super, remount rw): no such inode can
 * be open then, and one already in the inode cache is left to its own
 * eviction.  An inode that cannot be deleted is logged and skipped; its
 * item stays for the next mount, and its number is never handed out again
 * (only the last key of the tree sets the next inode number).
 */
void twig_orphan_cleanup(struct twig_fs_info *fs)
{
	struct super_block *sb = fs->sb;
	unsigned long done = 0;
	u64 ino = 0;
	int ret;

	while (!(ret = twig_orphan_next(fs, ino, &ino))) {
		struct inode *cached = ilookup(sb, ino);

		if (atomic64_read(&fs->next_objectid) <= ino)
			atomic64_set(&fs->next_objectid, ino + 1);
		if (cached) {
			iput(cached);
		} else {
			ret = twig_orphan_reap(fs, ino);
			if (ret > 0)
				done++;
			else if (ret < 0)
				pr_err("twigfs: %s: cannot delete orphan inode %llu: %d\n",
				       sb->s_id, ino, ret);
			if (ret == -EROFS)
				break;
		}
		if (ino == U64_MAX) {
			ret = 1;
			break;
		}
		ino++;
	}
	if (ret < 0 && ret != -EROFS)
		pr_err("twigfs: %s: cannot walk the orphan items: %d\n",
		       sb->s_id, ret);
	if (done)
		pr_info("twigfs: %s: deleted %lu orphan inode%s\n", sb->s_id,
			done, done == 1 ? "" : "s");
}
