// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs transactions.
 *
 * The model
 * =========
 *
 * At most one transaction runs at a time; its id (transid) is the generation
 * its blocks carry and the superblock records when it commits.  Every change
 * to the tree is made by a caller holding a handle (struct twig_trans)
 * joined to the running transaction; handles are counted in
 * fs->num_writers.  While a commit writes transaction T, the next one,
 * T + 1, may already run beside it, as btrfs lets writers in once the
 * committing transaction's roots are frozen:
 *
 *   RUNNING    handles join T (fs->running_transid = T);
 *   BLOCKED    a commit set fs->commit_blocked: new joiners wait, the
 *              commit waits for num_writers == 0.  From here T's tree and
 *              bitmaps are still;
 *   FROZEN     the commit takes what it will write: T's dirty blocks
 *              (twig_take_dirty_ebs()), its root, its bitmap
 *              (twig_alloc_freeze(), which also counts T's blocks as
 *              committed for the frees of T + 1) and bytes_used.  Then
 *              fs->committing_transid = T, running_transid = 0 and the
 *              joiners are let in: the first opens T + 1;
 *   WRITING    the commit writes T's blocks, then its bitmap into the copy
 *              the superblock does not name, then the superblock (T, its
 *              root, bitmap copy and checksum) with REQ_PREFLUSH | REQ_FUA:
 *              the pre-flush makes the blocks and the bitmap durable first,
 *              FUA the superblock itself.  Handles of T + 1 work meanwhile:
 *              CoW keeps them off T's blocks (a block is changed only in
 *              the transaction of its generation), and a T block they free
 *              stays pinned, as it is T's to write and T's superblock will
 *              name it;
 *   DONE       fs->generation = T, committing_transid = 0, T's frees are
 *              unpinned (committed := T's bitmap) and its log is dropped.
 *
 * fs->commit_mutex is held from BLOCKED to DONE, so T + 1 freezes only
 * after T is on disk, and the fsync log (tree-log.c, under commit_mutex)
 * never sees a frozen transaction: it logs against the last commit.  A
 * crash before T's superblock is on disk leaves the previous superblock,
 * whose root and bitmap were never overwritten: what T freed stays pinned
 * until DONE, and T + 1 allocates nothing T or the last commit names.
 *
 * join/commit is the only filesystem-wide serialization around tree
 * operations: fs->trans_lock is held for a few instructions per join and
 * end, never across tree work.  A task must not call
 * twig_commit_transaction() while it holds a handle (the commit would wait
 * for it forever).  Lock order: commit_mutex -> trans_lock; a handle
 * holder never takes commit_mutex.

 * Every allocation inside a handle is GFP_NOFS: twig_start() enters a
 * memalloc_nofs_save() scope that twig_end_transaction() leaves, so
 * reclaim never re-enters twigfs (an eviction would start a transaction
 * that waits for a commit that waits for us).
 *
 * Abort and the error state
 * =========================
 *
 * An operation changes several items in one handle.  If a step fails after
 * the handle changed an item (trans->dirty: set when an item is inserted,
 * deleted or changed in place, not by CoW copies or splits, which keep the
 * same items), the tree in memory is half changed and must never reach the
 * disk.  The code that sees the error calls twig_abort_transaction(trans,
 * err), as btrfs does; that sets TWIG_FS_ERROR and SB_RDONLY and logs one
 * line with the function and errno.  From then on:
 *   - no commit writes anything (twig_commit_transaction() returns -EIO),
 *     so the disk keeps the last committed tree: a crash, or a power cut,
 *     finds it consistent.  A commit already writing the transaction
 *     before (FROZEN, which the aborted handle never joined) finishes:
 *     that transaction is complete;
 *   - new handles get -EROFS, and handles already open get -EROFS from
 *     their next modifying search; the VFS refuses writes (SB_RDONLY);
 *   - reads, lookups and statfs use the tree in memory, as it was left;
 *   - unmount drops the dirty blocks unwritten; a remount read-write is
 *     refused (super.c), a fresh mount reads the last commit.
 * A failed commit write takes the same state (__twig_fs_error()).  A
 * handle that changed nothing just fails its operation; the transaction
 * goes on.
 *
 * Reservations are worst cases, so ENOSPC from a tree-block allocation
 * inside a handle means the accounting is wrong: an abort like any other
 * error.  A reservation that does not fit first waits for a commit (space
 * comes back when the other handles end and when what the transaction
 * freed is unpinned), then tries once more.
 */
#include <linux/blkdev.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "twigfs.h"

static bool twig_no_writers(struct twig_fs_info *fs)
{
	bool ret;

	spin_lock(&fs->trans_lock);
	ret = fs->num_writers == 0;
	spin_unlock(&fs->trans_lock);
	return ret;
}

static void twig_join(struct twig_fs_info *fs, struct twig_trans *trans)
{
	u64 wait_start = 0;

	spin_lock(&fs->trans_lock);
	while (fs->commit_blocked) {
		spin_unlock(&fs->trans_lock);
		wait_start = wait_start ?: ktime_get_ns();
		wait_event(fs->join_wait, !READ_ONCE(fs->commit_blocked));
		spin_lock(&fs->trans_lock);
	}
	/* never one handed out before, even after a failed commit */
	if (!fs->running_transid)
		fs->running_transid = ++fs->last_transid;
	fs->num_writers++;
	trans->transid = fs->running_transid;
	spin_unlock(&fs->trans_lock);
	if (wait_start)
		twig_stat_add(fs, TWIG_CS_JOIN_WAIT_NS,
			      ktime_get_ns() - wait_start);
}

static void twig_leave(struct twig_trans *trans)
{
	struct twig_fs_info *fs = trans->fs;
	bool wake;

	twig_release_meta(trans);
	spin_lock(&fs->trans_lock);
	wake = --fs->num_writers == 0 && fs->commit_blocked;
	spin_unlock(&fs->trans_lock);
	if (wake)
		wake_up(&fs->writer_wait);
}

/*
 * Join and reserve *@items items, or, when that does not fit, fewer down to
 * @min_items (a delete that can go on in another handle); *@items is what
 * was reserved.
 */
static struct twig_trans *twig_start(struct twig_fs_info *fs,
				     unsigned int *items,
				     unsigned int min_items, bool use_reserve)
{
	unsigned int want = *items;
	struct twig_trans *trans;
	bool committed = false;
	unsigned int nofs;
	int ret;

	if (test_bit(TWIG_FS_RDONLY, &fs->flags) ||
	    test_bit(TWIG_FS_ERROR, &fs->flags))
		return ERR_PTR(-EROFS);
	nofs = memalloc_nofs_save();
	trans = kzalloc(sizeof(*trans), GFP_NOFS);
	if (!trans) {
		memalloc_nofs_restore(nofs);
		return ERR_PTR(-ENOMEM);
	}
	trans->fs = fs;
	trans->use_reserve = use_reserve;
	trans->nofs_flags = nofs;
	for (;;) {
		twig_join(fs, trans);
		*items = want;
		ret = twig_reserve_meta(trans, *items);
		while (ret == -ENOSPC && *items > min_items) {
			*items = max(*items / 2, min_items);
			ret = twig_reserve_meta(trans, *items);
		}
		/* a task inside another handle would wait for itself */
		if (ret != -ENOSPC || committed || current->journal_info)
			break;
		/*
		 * Other handles' reservations come back when they end, space
		 * the transaction freed when it commits: wait for the commit.
		 * That is safe without a handle: a handle holder never waits
		 * for what is taken before a handle (VFS and page locks,
		 * extent_mutex), so the commit's wait for writers ends.
		 */
		twig_leave(trans);
		trans->transid = 0;
		ret = twig_commit_transaction(fs);
		if (ret)
			break;
		committed = true;
	}
	if (ret) {
		if (trans->transid)
			twig_leave(trans);
		kfree(trans);
		memalloc_nofs_restore(nofs);
		return ERR_PTR(ret);
	}
	twig_stat_add(fs, TWIG_CS_HANDLES, 1);
	twig_trans_mark_task(trans);
	return trans;
}

struct twig_trans *twig_start_transaction(struct twig_fs_info *fs,
					  unsigned int items)
{
	return twig_start(fs, &items, items, false);
}
EXPORT_SYMBOL_IF_KUNIT(twig_start_transaction);

/* For deletes: may use the global reserve, so freeing space always works. */
struct twig_trans *twig_start_transaction_reserved(struct twig_fs_info *fs,
						   unsigned int items)
{
	return twig_start(fs, &items, items, true);
}
EXPORT_SYMBOL_IF_KUNIT(twig_start_transaction_reserved);

/*
 * For deletes that go on in as many handles as they need (eviction,
 * truncate, punch): like twig_start_transaction_reserved() with *@items,
 * but when that much does not fit, even after a commit, with fewer, down
 * to @min_items.  *@items is set to what the handle may change.  On a full
 * filesystem the worst case of many items can exceed the whole global
 * reserve; a few always fit, so space can always be given back.
 */
struct twig_trans *twig_start_transaction_shrink(struct twig_fs_info *fs,
						 unsigned int *items,
						 unsigned int min_items)
{
	return twig_start(fs, items, min(min_items, *items), true);
}
EXPORT_SYMBOL_IF_KUNIT(twig_start_transaction_shrink);

void twig_end_transaction(struct twig_trans *trans)
{
	unsigned int nofs = trans->nofs_flags;

	twig_trans_unmark_task(trans);
	twig_leave(trans);
	kfree(trans);
	memalloc_nofs_restore(nofs);
}
EXPORT_SYMBOL_IF_KUNIT(twig_end_transaction);

/*
 * Enter the error state (see the top of this file); only the first error
 * is logged.  @func and @line name where it was seen.
 */
void __twig_fs_error(struct twig_fs_info *fs, const char *func,
		     unsigned int line, u64 transid, int err)
{
	if (test_and_set_bit(TWIG_FS_ERROR, &fs->flags))
		return;
	/* as btrfs_handle_fs_error(): the VFS refuses writers from now on */
	if (fs->sb)
		fs->sb->s_flags |= SB_RDONLY;
	pr_err("twigfs (%s): %s:%u: transaction %llu aborted (error %d); the filesystem is read-only\n",
	       twig_fs_id(fs), func, line, transid, err);
}

void __twig_abort_transaction(struct twig_trans *trans, const char *func,
			      unsigned int line, int err)
{
	if (trans->dirty && err)
		__twig_fs_error(trans->fs, func, line, trans->transid, err);
}
EXPORT_SYMBOL_IF_KUNIT(__twig_abort_transaction);

/*
 * Tests: /sys/fs/twigfs/<dev>/commit_hold.  Writing 1 arms it; the next
 * commit, once it has let joiners into the next transaction, sets it to 2
 * and waits before writing anything until 0 is written (or the task is
 * killed; unmount disarms it).  A test can then show that handles start
 * and end while a commit is writing.
 */
static void twig_commit_hold_point(struct twig_fs_info *fs)
{
	if (atomic_cmpxchg(&fs->commit_hold, 1, 2) == 1)
		wait_event_killable(fs->commit_hold_wait,
				    !atomic_read(&fs->commit_hold));
}

void twig_commit_hold_set(struct twig_fs_info *fs, bool hold)
{
	if (hold) {
		atomic_cmpxchg(&fs->commit_hold, 0, 1);
	} else {
		atomic_set(&fs->commit_hold, 0);
		wake_up_all(&fs->commit_hold_wait);
	}
}

/* What a commit writes, taken while its transaction is frozen. */
struct twig_commit {
	u64 transid;
	u64 root, root_gen;
	u8 root_level;
	u64 bytes_used;
	struct list_head ebs;	/* the transaction's dirty tree blocks */
};

/* FROZEN: no handles are open; take what the commit will write. */
static void twig_commit_freeze(struct twig_fs_info *fs, struct twig_commit *c)
{
	struct twig_eb *root;

	twig_take_dirty_ebs(fs, &c->ebs);
	spin_lock(&fs->root_lock);
	root = fs->root;
	c->root = root->start;
	c->root_gen = twig_header_generation(root);
	c->root_level = root->level;
	spin_unlock(&fs->root_lock);
	c->bytes_used = twig_alloc_freeze(fs);
}

static int twig_write_super(struct twig_fs_info *fs, struct twig_commit *c,
			    u8 copy, u32 alloc_csum)
{
	struct twig_super_block *sb = fs->super_copy;

	sb->root = cpu_to_le64(c->root);
	sb->root_generation = cpu_to_le64(c->root_gen);
	sb->root_level = c->root_level;
	sb->generation = cpu_to_le64(c->transid);
	/* the commit makes the log of @transid obsolete (tree-log.c) */
	sb->log_root = 0;
	sb->log_generation = 0;
	sb->incompat_flags &= ~cpu_to_le64(TWIG_FEATURE_INCOMPAT_LOG);
	sb->alloc_copy = copy;
	sb->alloc_csum = cpu_to_le32(alloc_csum);
	sb->bytes_used = cpu_to_le64(c->bytes_used);
	sb->csum = cpu_to_le32(twig_csum((u8 *)sb + 4, TWIG_SUPER_SIZE - 4));
	return twig_dev_write(fs, TWIG_SUPER_OFFSET, sb, TWIG_SUPER_SIZE,
			      REQ_PREFLUSH | REQ_FUA);
}

/*
 * The commit of the log's transaction is on disk (commit_mutex held): the
 * log's blocks go back to the allocator.
 */
static void twig_log_release(struct twig_fs_info *fs)
{
	struct twig_log_blk *blk, *next;

	list_for_each_entry_safe(blk, next, &fs->log_blocks, link) {
		list_del(&blk->link);
		twig_data_alloc_drop(fs, &blk->da);
		kfree(blk->data);
		kfree(blk);
	}
	fs->log_seq = 0;
}

/*
 * Unmount without a commit (read-only, error, a failed replay), before
 * the allocator goes: forget the blocks, which stay free on disk.
 */
void twig_log_forget(struct twig_fs_info *fs)
{
	struct twig_log_blk *blk, *next;

	list_for_each_entry_safe(blk, next, &fs->log_blocks, link) {
		list_del(&blk->link);
		list_del(&blk->da.list);
		kfree(blk->data);
		kfree(blk);
	}
}

/* WRITING and DONE; handles of the next transaction may be open. */
static int twig_commit_write(struct twig_fs_info *fs, struct twig_commit *c)
{
	u32 alloc_csum;
	u8 copy;
	int ret;

	ret = twig_write_ebs(fs, &c->ebs);
	if (!ret)
		ret = twig_alloc_write(fs, &copy, &alloc_csum);
	if (!ret && twig_should_fail(fs))
		ret = -EIO;
	if (!ret)
		ret = twig_write_super(fs, c, copy, alloc_csum);
	if (ret) {
		__twig_fs_error(fs, __func__, __LINE__, c->transid, ret);
		return ret;
	}
	twig_alloc_committed(fs);
	twig_log_release(fs);
	return 0;
}

/*
 * Commit the running transaction, if any.  Never call with a handle held.
 * After an abort nothing is written: -EIO.
 */
int twig_commit_transaction(struct twig_fs_info *fs)
{
	struct twig_commit c = { .ebs = LIST_HEAD_INIT(c.ebs) };
	u64 start, frozen;
	int ret = 0;

	mutex_lock(&fs->commit_mutex);
	spin_lock(&fs->trans_lock);
	c.transid = fs->running_transid;
	if (test_bit(TWIG_FS_ERROR, &fs->flags))
		c.transid = 0;
	if (c.transid)
		fs->commit_blocked = true;
	spin_unlock(&fs->trans_lock);
	if (!c.transid) {
		mutex_unlock(&fs->commit_mutex);
		return test_bit(TWIG_FS_ERROR, &fs->flags) ? -EIO : 0;
	}

	start = ktime_get_ns();
	wait_event(fs->writer_wait, twig_no_writers(fs));
	/* a handle that was still open may have aborted the transaction */
	if (test_bit(TWIG_FS_ERROR, &fs->flags))
		ret = -EIO;
	else
		twig_commit_freeze(fs, &c);

	spin_lock(&fs->trans_lock);
	if (!ret) {
		fs->committing_transid = c.transid;
		fs->running_transid = 0;
	}
	fs->commit_blocked = false;
	spin_unlock(&fs->trans_lock);
	wake_up_all(&fs->join_wait);
	frozen = ktime_get_ns();
	twig_stat_add(fs, TWIG_CS_COMMIT_BLOCKED_NS, frozen - start);

	if (!ret) {
		twig_commit_hold_point(fs);
		ret = twig_commit_write(fs, &c);
		spin_lock(&fs->trans_lock);
		if (!ret)
			fs->generation = c.transid;
		fs->committing_transid = 0;
		spin_unlock(&fs->trans_lock);
	}
	twig_commit_stats_done(fs, ktime_get_ns() - start);
	mutex_unlock(&fs->commit_mutex);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(twig_commit_transaction);
