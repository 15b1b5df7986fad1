// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs transactions.
 *
 * The model
 * =========
 *
 * At most one transaction runs at a time; its id (transid) is the generation
 * its blocks carry and the superblock records when it commits: the last
 * committed generation plus one.  Every change to the tree is made by a
 * caller holding a handle (struct twig_trans) joined to the running
 * transaction; handles are counted in fs->num_writers.
 *
 * A commit:
 *   1. blocks new joiners (fs->commit_blocked), then waits for
 *      num_writers == 0: from here the tree and the bitmaps are still;
 *   2. writes every dirty tree block (each was CoW'd into this transaction,
 *      so none of them is referenced by the committed trees);
 *   3. writes the working bitmap into the copy the superblock does not
 *      name;
 *   4. writes the superblock (new generation, root, bitmap copy and its
 *      checksum) with REQ_PREFLUSH | REQ_FUA.  The pre-flush makes steps
 *      2-3, which have completed, durable before the superblock is written;
 *      FUA makes the superblock itself durable when the bio completes.  A
 *      separate flush between 3 and 4 would add nothing to that;
 *   5. unpins the blocks freed by the transaction (committed := working),
 *      ends the transaction and lets the joiners in; they start the next.
 *
 * A crash before 4 completes leaves the previous superblock, which names the
 * previous bitmap copy and root; nothing those reference was overwritten,
 * because freed blocks stay pinned until 5.
 *
 * join/commit is the only filesystem-wide serialization around tree
 * operations: fs->trans_lock is held for a few instructions per join and
 * end, never across tree work.  A task must not call
 * twig_commit_transaction() while it holds a handle (the commit would wait
 * for it forever).
 *
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
 *     finds it consistent;
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

#include "locking.h"

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
	if (!fs->running_transid)
		fs->running_transid = fs->generation + 1;
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

static struct twig_trans *twig_start(struct twig_fs_info *fs,
				     unsigned int items, bool use_reserve)
{
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
		ret = twig_reserve_meta(trans, items);
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
	return twig_start(fs, items, false);
}
EXPORT_SYMBOL_IF_KUNIT(twig_start_transaction);

/* For deletes: may use the global reserve, so freeing space always works. */
struct twig_trans *twig_start_transaction_reserved(struct twig_fs_info *fs,
						   unsigned int items)
{
	return twig_start(fs, items, true);
}
EXPORT_SYMBOL_IF_KUNIT(twig_start_transaction_reserved);

void twig_end_transaction(struct twig_trans *trans)
{
	unsigned int nofs = trans->nofs_flags;

	twig_trans_unmark_task(trans);
	twig_leave(trans);
	kfree(trans);
	memalloc_nofs_restore(nofs);
}
EXPORT_SYMBOL_IF_KUNIT(twig_end_transaction);

static const char *twig_fs_id(struct twig_fs_info *fs)
{
	return fs->sb ? fs->sb->s_id : "memdev";
}

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
 * Fault injection for tests: writing N to /sys/fs/twigfs/<dev>/fail_after
 * makes the N-th call from then on return true.  The callers are the
 * places an error must be survivable: tree searches and tree-block
 * allocation (-ENOMEM), tree-block reads (-EIO), data writes (-EIO) and
 * the commit's superblock write (-EIO).  A search is one step of an
 * operation, so k = 1, 2, ... fails each step in turn.
 */
bool twig_should_fail(struct twig_fs_info *fs)
{
	if (likely(atomic_read(&fs->fail_after) <= 0) ||
	    !atomic_dec_and_test(&fs->fail_after))
		return false;
	pr_info("twigfs (%s): fail_after: failing %pS\n", twig_fs_id(fs),
		__builtin_return_address(0));
	return true;
}

static int twig_write_super(struct twig_fs_info *fs, u64 transid, u8 copy,
			    u32 alloc_csum)
{
	struct twig_super_block *sb = fs->super_copy;
	struct twig_eb *root;

	spin_lock(&fs->root_lock);
	root = fs->root;
	sb->root = cpu_to_le64(root->start);
	sb->root_generation = cpu_to_le64(twig_header_generation(root));
	sb->root_level = root->level;
	spin_unlock(&fs->root_lock);
	sb->generation = cpu_to_le64(transid);
	/* the commit makes the log of @transid obsolete (tree-log.c) */
	sb->log_root = 0;
	sb->log_generation = 0;
	sb->incompat_flags &= ~cpu_to_le64(TWIG_FEATURE_INCOMPAT_LOG);
	sb->alloc_copy = copy;
	sb->alloc_csum = cpu_to_le32(alloc_csum);
	sb->bytes_used = cpu_to_le64(twig_bytes_used(fs));
	sb->csum = cpu_to_le32(twig_csum((u8 *)sb + 4, TWIG_SUPER_SIZE - 4));
	return twig_dev_write(fs, TWIG_SUPER_OFFSET, sb, TWIG_SUPER_SIZE,
			      REQ_PREFLUSH | REQ_FUA);
}

/* Steps 2-5 of the commit; no writers are in the transaction. */
static int twig_commit_write(struct twig_fs_info *fs, u64 transid)
{
	u32 alloc_csum;
	u8 copy;
	int ret;

	ret = twig_write_dirty_ebs(fs);
	if (!ret)
		ret = twig_alloc_write(fs, &copy, &alloc_csum);
	if (!ret && twig_should_fail(fs))
		ret = -EIO;
	if (!ret)
		ret = twig_write_super(fs, transid, copy, alloc_csum);
	if (ret) {
		__twig_fs_error(fs, __func__, __LINE__, transid, ret);
		return ret;
	}
	twig_alloc_committed(fs);
	twig_log_committed(fs);
	return 0;
}

/*
 * Commit the running transaction, if any.  Never call with a handle held.
 * After an abort nothing is written: -EIO.
 */
int twig_commit_transaction(struct twig_fs_info *fs)
{
	u64 transid, start;
	int ret;

	mutex_lock(&fs->commit_mutex);
	spin_lock(&fs->trans_lock);
	transid = fs->running_transid;
	if (test_bit(TWIG_FS_ERROR, &fs->flags))
		transid = 0;
	if (transid)
		fs->commit_blocked = true;
	spin_unlock(&fs->trans_lock);
	if (!transid) {
		mutex_unlock(&fs->commit_mutex);
		return test_bit(TWIG_FS_ERROR, &fs->flags) ? -EIO : 0;
	}

	start = ktime_get_ns();
	wait_event(fs->writer_wait, twig_no_writers(fs));
	/* a handle that was still open may have aborted the transaction */
	if (test_bit(TWIG_FS_ERROR, &fs->flags))
		ret = -EIO;
	else
		ret = twig_commit_write(fs, transid);

	spin_lock(&fs->trans_lock);
	if (!ret) {
		fs->generation = transid;
		fs->running_transid = 0;
	}
	fs->commit_blocked = false;
	spin_unlock(&fs->trans_lock);
	wake_up_all(&fs->join_wait);
	twig_commit_stats_done(fs, ktime_get_ns() - start);
	mutex_unlock(&fs->commit_mutex);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(twig_commit_transaction);

/* ---- setup and teardown of the core ---- */

static int twig_core_check_super(struct twig_fs_info *fs)
{
	struct twig_super_block *sb = fs->super_copy;
	u32 nodesize = le32_to_cpu(sb->nodesize);

	if (le32_to_cpu(sb->sectorsize) != TWIG_SECTORSIZE ||
	    nodesize < TWIG_MIN_NODESIZE || nodesize > TWIG_MAX_NODESIZE ||
	    !is_power_of_2(nodesize) || sb->root_level >= TWIG_MAX_LEVEL ||
	    le64_to_cpu(sb->total_bytes) < TWIG_MIN_DEVICE_BYTES) {
		pr_err("twigfs (%s): superblock geometry invalid\n",
		       fs->sb ? fs->sb->s_id : "memdev");
		return -EUCLEAN;
	}
	fs->nodesize = nodesize;
	fs->sectorsize = TWIG_SECTORSIZE;
	fs->total_bytes = le64_to_cpu(sb->total_bytes);
	memcpy(fs->fsid, sb->fsid, sizeof(fs->fsid));
	fs->generation = le64_to_cpu(sb->generation);
	return 0;
}

/*
 * Everything the core needs at mount, after super.c has read and checked
 * the superblock into fs->super_copy and chosen fs->lock_ops.
 */
int twig_core_open(struct twig_fs_info *fs)
{
	int ret;

	spin_lock_init(&fs->root_lock);
	mutex_init(&fs->commit_mutex);
	spin_lock_init(&fs->trans_lock);
	init_waitqueue_head(&fs->join_wait);
	init_waitqueue_head(&fs->writer_wait);
	fs->running_transid = 0;
	fs->num_writers = 0;
	fs->commit_blocked = false;
	INIT_LIST_HEAD(&fs->log_blocks);
	fs->log_seq = 0;
	if (!fs->lock_ops)
		fs->lock_ops = twig_lock_strategy_get("mutex");

	ret = twig_core_check_super(fs);
	if (ret)
		return ret;
	ret = twig_lock_stats_alloc(fs);
	if (ret)
		return ret;
	ret = twig_eb_cache_init(fs);
	if (ret)
		goto free_stats;
	ret = twig_alloc_init(fs);
	if (ret)
		goto free_cache;
	ret = twig_tree_open(fs);
	if (ret)
		goto free_alloc;
	return 0;

free_alloc:
	twig_alloc_destroy(fs);
free_cache:
	twig_eb_cache_destroy(fs);
free_stats:
	twig_lock_stats_free(fs);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(twig_core_open);

/* After the last commit (or after an error, dropping what was not written). */
void twig_core_close(struct twig_fs_info *fs)
{
	twig_log_free(fs);
	twig_tree_close(fs);
	twig_eb_cache_destroy(fs);
	twig_alloc_destroy(fs);
	twig_lock_stats_free(fs);
}
EXPORT_SYMBOL_IF_KUNIT(twig_core_close);
