// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs fallocate(2): preallocation, PUNCH_HOLE and ZERO_RANGE.
 *
 * fallocate(2), under i_rwsem, after the range's dirty pages are written
 * back.  Preallocation gives each hole of the range a preallocated extent
 * (format.h): it owns its sectors and reads as zeros, and writeback CoWs
 * over it as over a regular extent.  All of its space is reserved
 * (space.c) and allocated, pending as writeback's runs are, before any
 * item changes, so ENOSPC leaves the file as it was.  Holes only shrink
 * while i_rwsem is held (writeback fills them; truncate and punching take
 * i_rwsem), so the holes counted before the reservation are an upper
 * bound of those found under extent_mutex.
 */
#include <linux/fs.h>
#include <linux/falloc.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include "vfs.h"

/* A run allocated for a hole, not yet named by an item. */
struct twig_falloc_run {
	struct list_head list;
	u64 pos;			/* file offset */
	struct twig_data_alloc da;
};

/* Items inserted per handle while preallocating. */
#define TWIG_FALLOC_BATCH	32

/*
 * The first hole in [*pos, end) (sector aligned): 0 with the hole at
 * [*pos, *hole_end), 1 if there is none, <0 on error.
 */
static int twig_next_hole(struct inode *inode, u64 *pos, u64 end,
			  u64 *hole_end)
{
	struct twig_fext x;
	int ret;

	while (*pos < end) {
		ret = twig_find_extent(twig_isb(inode), inode->i_ino, *pos, &x);
		if (ret < 0)
			return ret;
		if (ret == 1 || x.start >= end) {
			*hole_end = end;
			return 0;
		}
		if (x.start > *pos) {
			*hole_end = x.start;
			return 0;
		}
		/* an inline extent, or a foreign tail, holds the whole sector */
		*pos = round_up(x.end, TWIG_SECTORSIZE);
	}
	return 1;
}

static int twig_hole_bytes(struct inode *inode, u64 pos, u64 end, u64 *bytes)
{
	u64 hole_end;
	int ret;

	*bytes = 0;
	while ((ret = twig_next_hole(inode, &pos, end, &hole_end)) == 0) {
		*bytes += hole_end - pos;
		pos = hole_end;
	}
	return ret < 0 ? ret : 0;
}

/*
 * Allocate up to @len bytes (whole sectors) at @pos: a shorter run if no
 * free run is that long.  Sectors freed in the running transaction come
 * back only with its commit, which needs no extent_mutex.
 */
static int twig_falloc_alloc(struct twig_fs_info *fs, u64 want,
			     struct twig_data_alloc *da, bool *committed)
{
	u64 len = want;
	int ret;

	for (;;) {
		ret = twig_alloc_data(fs, len, da);
		if (ret != -ENOSPC)
			return ret;
		if (len > TWIG_SECTORSIZE) {
			len = round_up(len / 2, TWIG_SECTORSIZE);
			continue;
		}
		if (*committed)
			return ret;
		*committed = true;
		ret = twig_commit_transaction(fs);
		if (ret)
			return ret;
		len = want;
	}
}

/*
 * Preallocate the holes of [start, end) (sector aligned), then raise
 * i_size to @new_size if it is larger and set the times.  The caller has
 * reserved @reserved bytes, which this gives back.
 */
static int twig_prealloc(struct inode *inode, u64 start, u64 end,
			 u64 new_size, u64 reserved)
{
	struct twig_inode_info *ti = TWIG_I(inode);
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_falloc_run *run, *tmp;
	bool committed = false;
	struct twig_trans *trans;
	LIST_HEAD(runs);
	u64 pos = start;
	u64 hole_end;
	bool last;
	int ret, n;

	mutex_lock(&ti->extent_mutex);
	if (ti->maybe_inline) {
		/* an inline extent must stay the file's only extent */
		ret = twig_convert_inline_locked(inode);
		if (ret)
			goto out;
	}
	while ((ret = twig_next_hole(inode, &pos, end, &hole_end)) == 0) {
		while (pos < hole_end) {
			u64 len = min_t(u64, hole_end - pos, TWIG_VFS_MAX_EXTENT);

			if (len > reserved) {
				ret = -ENOSPC;	/* the holes grew: see above */
				goto out_drop;
			}
			run = kmalloc(sizeof(*run), GFP_NOFS);
			if (!run) {
				ret = -ENOMEM;
				goto out_drop;
			}
			ret = twig_falloc_alloc(fs, len, &run->da, &committed);
			if (ret) {
				kfree(run);
				goto out_drop;
			}
			/* the reservation becomes the allocation */
			twig_release_data(fs, run->da.bytes);
			reserved -= run->da.bytes;
			run->pos = pos;
			list_add_tail(&run->list, &runs);
			pos += run->da.bytes;
		}
	}
	if (ret < 0)
		goto out_drop;
	ret = 0;

	do {
		trans = twig_start_transaction(fs, TWIG_FALLOC_BATCH + 1);
		if (IS_ERR(trans)) {
			ret = PTR_ERR(trans);
			goto out_drop;
		}
		for (n = 0; n < TWIG_FALLOC_BATCH && !list_empty(&runs); n++) {
			run = list_first_entry(&runs, struct twig_falloc_run,
					       list);
			ret = twig_insert_fext(trans, inode,
					       TWIG_FILE_EXTENT_PREALLOC,
					       run->pos, trans->transid,
					       run->da.bytenr, run->da.bytes);
			if (ret)
				break;
			twig_data_alloc_owned(trans, &run->da);
			twig_set_nbytes(inode, ti->nbytes + run->da.bytes);
			list_del(&run->list);
			kfree(run);
		}
		last = list_empty(&runs);
		if (!ret && last) {
			if (new_size > i_size_read(inode))
				i_size_write(inode, new_size);
			inode_set_mtime_to_ts(inode,
					      inode_set_ctime_current(inode));
		}
		if (!ret)
			ret = twig_update_inode(trans, inode);
		if (ret)
			twig_abort_transaction(trans, ret);
		twig_end_transaction(trans);
	} while (!ret && !last);

out_drop:
	list_for_each_entry_safe(run, tmp, &runs, list) {
		twig_data_alloc_drop(fs, &run->da);
		kfree(run);
	}
out:
	mutex_unlock(&ti->extent_mutex);
	twig_release_data(fs, reserved);
	return ret;
}

/*
 * Zero [from, to), inside one page, where the disk holds data: in the page
 * cache, dirtied, so that writeback CoWs the page.  A hole or preallocated
 * sector reads as zeros already, and truncate_pagecache_range() zeroes its
 * cached copy.
 */
static int twig_zero_partial(struct inode *inode, u64 from, u64 to)
{
	struct address_space *mapping = inode->i_mapping;
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_map map;
	struct folio *folio;
	bool reserved = true;
	int ret;

	if (from >= to || from >= i_size_read(inode))
		return 0;
	ret = twig_get_map(inode, from, &map);
	if (ret || map.kind == TWIG_MAP_HOLE)
		return ret;
	/* before the page lock: reserving may write back */
	ret = twig_reserve_data(fs, PAGE_SIZE);
	if (ret)
		return ret;
	folio = read_mapping_folio(mapping, from >> PAGE_SHIFT, NULL);
	if (IS_ERR(folio)) {
		twig_release_data(fs, PAGE_SIZE);
		return PTR_ERR(folio);
	}
	folio_lock(folio);
	if (folio->mapping == mapping) {
		folio_wait_stable(folio);
		folio_zero_range(folio, offset_in_folio(folio, from), to - from);
		if (!folio_test_private(folio)) {
			folio_attach_private(folio, TWIG_RESERVED);
			reserved = false;
		}
		folio_mark_dirty(folio);
	}
	folio_unlock(folio);
	folio_put(folio);
	if (reserved)
		twig_release_data(fs, PAGE_SIZE);
	return 0;
}

/*
 * Punch [start, end): the partial pages at its edges are zeroed in the page
 * cache, the whole sectors between lose their extents, as truncate drops
 * them: every free after the item change, in the same handle.
 * invalidate_lock keeps reads and faults from caching the old data again
 * between dropping the pages and dropping the items.
 */
static int twig_punch_hole(struct inode *inode, u64 start, u64 end)
{
	struct address_space *mapping = inode->i_mapping;
	struct twig_inode_info *ti = TWIG_I(inode);
	struct twig_fs_info *fs = twig_isb(inode);
	u64 lo = round_up(start, TWIG_SECTORSIZE);
	u64 hi = round_down(end, TWIG_SECTORSIZE);
	struct twig_trans *trans;
	int ret, err;

	if (lo > hi) {
		ret = twig_zero_partial(inode, start, end);
	} else {
		ret = twig_zero_partial(inode, start, lo);
		if (!ret)
			ret = twig_zero_partial(inode, hi, end);
	}
	if (ret)
		return ret;

	filemap_invalidate_lock(mapping);
	truncate_pagecache_range(inode, start, end - 1);
	mutex_lock(&ti->extent_mutex);
	inode_set_mtime_to_ts(inode, inode_set_ctime_current(inode));
	do {
		unsigned int items = TWIG_DROP_BATCH + 3;

		trans = twig_start_transaction_shrink(fs, &items, 4);
		if (IS_ERR(trans)) {
			ret = PTR_ERR(trans);
			break;
		}
		ret = lo < hi ? twig_drop_range(trans, inode, lo, hi,
						items - 3) : 0;
		if (!ret || ret == -EAGAIN) {
			err = twig_update_inode(trans, inode);
			if (err)
				ret = err;
		}
		if (ret && ret != -EAGAIN)
			twig_abort_transaction(trans, ret);
		twig_end_transaction(trans);
	} while (ret == -EAGAIN);
	mutex_unlock(&ti->extent_mutex);
	filemap_invalidate_unlock(mapping);
	return ret;
}

long twig_fallocate(struct file *file, int mode, loff_t offset, loff_t len)
{
	struct inode *inode = file_inode(file);
	struct twig_fs_info *fs = twig_isb(inode);
	u64 end = offset + len;
	u64 start = round_down(offset, TWIG_SECTORSIZE);
	u64 alloc_end = round_up(end, TWIG_SECTORSIZE);
	u64 new_size = 0;
	u64 bytes;
	int ret;

	/* no COLLAPSE_RANGE, INSERT_RANGE or UNSHARE_RANGE (nothing shared) */
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE |
		     FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;

	inode_lock(inode);
	/* a punch frees sectors an async direct read may still read */
	inode_dio_wait(inode);
	if (!(mode & (FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE)) &&
	    end > i_size_read(inode)) {
		ret = inode_newsize_ok(inode, end);
		if (ret)
			goto out;
		new_size = end;
	}
	ret = file_modified(file);
	if (ret)
		goto out;
	/* writeback replaces the range's items: none may run meanwhile */
	ret = filemap_write_and_wait_range(inode->i_mapping, offset, end - 1);
	if (ret)
		goto out;

	if (mode & FALLOC_FL_PUNCH_HOLE) {
		ret = twig_punch_hole(inode, offset, end);
	} else if (mode & FALLOC_FL_ZERO_RANGE) {
		/*
		 * As btrfs: reserve for the whole range first, so that ENOSPC
		 * comes before the punch; the punched sectors stay pinned
		 * until a commit, so the space needed is not yet back then.
		 */
		bytes = alloc_end - start;
		ret = twig_reserve_data(fs, bytes);
		if (ret)
			goto out;
		ret = twig_punch_hole(inode, offset, end);
		if (ret)
			twig_release_data(fs, bytes);
		else
			ret = twig_prealloc(inode, start, alloc_end, new_size,
					    bytes);
	} else {
		ret = twig_hole_bytes(inode, start, alloc_end, &bytes);
		if (!ret)
			ret = twig_reserve_data(fs, bytes);
		if (!ret)
			ret = twig_prealloc(inode, start, alloc_end, new_size,
					    bytes);
	}
out:
	inode_unlock(inode);
	return ret;
}
