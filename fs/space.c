// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs data reservations: dirty page cache that will need sectors at
 * writeback.
 *
 * Every dirty page holds one sector of fs->data_reserved (attached as
 * PagePrivate, TWIG_RESERVED in vfs.h), taken in write_begin / page_mkwrite and before the
 * zeroing of a partial page (truncate, punch), always before the page
 * lock, so that write(2) gets ENOSPC instead of writeback losing data.  The
 * limit leaves a metadata slack (1/64 of the device, at least
 * TWIG_META_SLACK_MIN) for the tree blocks the extent items need.
 *
 * This sits above the allocator (it reads its counts) and the transactions
 * (when space is short it writes back and commits, which gives freed
 * sectors back), and below its callers: pagecache.c (buffered writes),
 * file.c (mmap), file-item.c (truncate), falloc.c and direct.c (direct
 * writes).
 */
#include <linux/writeback.h>

#include "vfs.h"

/* Room kept free for tree blocks when reserving space for dirty data. */
#define TWIG_META_SLACK_MIN	(8ULL * 1024 * 1024)

static u64 twig_data_limit(struct twig_fs_info *fs)
{
	u64 total = fs->total_bytes;
	u64 slack = max_t(u64, TWIG_META_SLACK_MIN, total >> 6);

	return total > slack ? total - slack : 0;
}

/* With no handle or page lock held: it may write back and commit. */
int twig_reserve_data(struct twig_fs_info *fs, u64 bytes)
{
	int tries;

	for (tries = 0; tries < 2; tries++) {
		u64 reserved = atomic64_add_return(bytes, &fs->data_reserved);

		/* a pending run (alloc.c) has given its reservation up */
		if (twig_bytes_allocated(fs) + reserved <= twig_data_limit(fs))
			return 0;
		atomic64_sub(bytes, &fs->data_reserved);
		if (tries)
			break;
		/*
		 * Freed sectors come back only when the commit that freed
		 * them is on disk, and reserved pages only when written.
		 */
		try_to_writeback_inodes_sb(fs->sb, WB_REASON_FS_FREE_SPACE);
		if (twig_commit_transaction(fs))
			break;
	}
	return -ENOSPC;
}

void twig_release_data(struct twig_fs_info *fs, u64 bytes)
{
	atomic64_sub(bytes, &fs->data_reserved);
}
