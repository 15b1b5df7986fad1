// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs core setup and teardown: everything below the VFS that a mount
 * needs (the lock statistics, the extent buffer cache, the allocator, the
 * tree root), in the order it depends on, and its undoing at unmount.  As
 * btrfs's open_ctree() and close_ctree(); called by super.c and the KUnit
 * suites, which mount a memory device.
 */
#include <linux/log2.h>
#include <kunit/visibility.h>

#include "locking.h"

static int twig_core_check_super(struct twig_fs_info *fs)
{
	struct twig_super_block *sb = fs->super_copy;
	u32 nodesize = le32_to_cpu(sb->nodesize);

	if (le32_to_cpu(sb->sectorsize) != TWIG_SECTORSIZE ||
	    nodesize < TWIG_MIN_NODESIZE || nodesize > TWIG_MAX_NODESIZE ||
	    !is_power_of_2(nodesize) || sb->root_level >= TWIG_MAX_LEVEL ||
	    le64_to_cpu(sb->total_bytes) < TWIG_MIN_DEVICE_BYTES) {
		pr_err("twigfs (%s): superblock geometry invalid\n",
		       twig_fs_id(fs));
		return -EUCLEAN;
	}
	fs->nodesize = nodesize;
	fs->sectorsize = TWIG_SECTORSIZE;
	fs->total_bytes = le64_to_cpu(sb->total_bytes);
	memcpy(fs->fsid, sb->fsid, sizeof(fs->fsid));
	fs->generation = le64_to_cpu(sb->generation);
	fs->last_transid = fs->generation;
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
	init_waitqueue_head(&fs->commit_hold_wait);
	atomic_set(&fs->commit_hold, 0);
	fs->committing_transid = 0;
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
	ret = twig_tree_claim(fs);
	if (ret)
		goto close_tree;
	return 0;

close_tree:
	twig_tree_close(fs);
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
	twig_log_forget(fs);
	twig_tree_close(fs);
	twig_eb_cache_destroy(fs);
	twig_alloc_destroy(fs);
	twig_lock_stats_free(fs);
}
EXPORT_SYMBOL_IF_KUNIT(twig_core_close);
