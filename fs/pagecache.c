// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs file data in the page cache: the address_space operations.
 * Pages are read through the extent items (file-item.c).
 *
 * Writes land in the page cache; each dirty page holds a reservation of one
 * sector (PagePrivate) so that write(2) sees ENOSPC instead of losing data
 * at writeback.  Writeback copies every run of contiguous dirty pages (at
 * most TWIG_VFS_MAX_EXTENT bytes) to newly allocated sectors and waits for
 * the write with no handle open; only then does one transaction handle
 * replace the EXTENT_DATA items of that range and free the sectors they
 * owned (pinned until the commit).  An extent item thus never names data
 * that is not on the disk yet, and a commit never waits for data I/O.
 *
 * A commit may run between the allocation and the handle.  The run is
 * then pending in the allocator (twig_alloc_data(), see alloc.c): used in
 * memory, but left out of the bitmap that commit writes, so a power cut
 * finds neither the extent nor leaked sectors; twig_data_alloc_owned(),
 * under the handle that inserts the item, hands the run to that handle's
 * transaction, whose commit writes item and bits together.  A failed write
 * or swap drops the run (free at once: no commit recorded it).  Files of at
 * most TWIG_MAX_INLINE bytes keep their data inline in the tree instead, as
 * btrfs does; converting them follows the same order.
 *
 * The page lock comes before extent_mutex (file-item.c).
 */
#include <linux/fs.h>
#include <linux/pagemap.h>
#include <linux/mpage.h>
#include <linux/buffer_head.h>
#include <linux/writeback.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include "vfs.h"

#define TWIG_WB_PAGES	(TWIG_VFS_MAX_EXTENT / PAGE_SIZE)

/* ---- reading pages ---- */

/* Fill a locked page of @inode from disk; it stays locked. */
static int twig_fill_page(struct inode *inode, struct page *page)
{
	u64 pos = (u64)page->index << PAGE_SHIFT;
	struct twig_map map;
	void *kaddr;
	int ret;

	if (pos >= i_size_read(inode)) {
		zero_user(page, 0, PAGE_SIZE);
		return 0;
	}
	ret = twig_get_map(inode, pos, &map);
	if (ret)
		return ret;
	switch (map.kind) {
	case TWIG_MAP_REG:
		return twig_bio_page(twig_isb(inode), map.disk_bytenr, page,
				     REQ_OP_READ);
	case TWIG_MAP_INLINE:
		kaddr = kmap_local_page(page);
		ret = twig_read_inline(inode, kaddr, PAGE_SIZE);
		if (ret >= 0) {
			memset(kaddr + ret, 0, PAGE_SIZE - ret);
			ret = 0;
		}
		kunmap_local(kaddr);
		flush_dcache_page(page);
		return ret;
	default:
		zero_user(page, 0, PAGE_SIZE);
		return 0;
	}
}

static int twig_read_folio(struct file *file, struct folio *folio)
{
	struct page *page = &folio->page;
	int ret;

	ret = twig_fill_page(folio->mapping->host, page);
	if (!ret)
		SetPageUptodate(page);
	unlock_page(page);
	return ret;
}

static int twig_get_block(struct inode *inode, sector_t iblock,
			  struct buffer_head *bh, int create)
{
	struct twig_map map;
	int ret;

	if (create)
		return -EIO;
	ret = twig_get_map(inode, (u64)iblock << TWIG_SECTOR_SHIFT, &map);
	if (ret)
		return ret;
	if (map.kind == TWIG_MAP_INLINE)
		return -EIO;	/* readahead skips inline files */
	if (map.len < bh->b_size)
		bh->b_size = round_up(map.len, TWIG_SECTORSIZE);
	if (map.kind == TWIG_MAP_REG)
		map_bh(bh, inode->i_sb, map.disk_bytenr >> TWIG_SECTOR_SHIFT);
	return 0;
}

static void twig_readahead(struct readahead_control *rac)
{
	/* pages left unread here are read by ->read_folio one by one */
	if (TWIG_I(rac->mapping->host)->maybe_inline)
		return;
	mpage_readahead(rac, twig_get_block);
}

/* ---- writeback ---- */

struct twig_wb {
	struct page *pages[TWIG_WB_PAGES];
	int nr;
};

/*
 * Write @nr pages starting at @pages[0] (contiguous) as one new extent:
 * allocate and write the sectors with no handle open, then take a handle
 * only to swap the extent items (see alloc.c for why a commit in between
 * loses nothing and leaks nothing).
 */
static int twig_write_run(struct inode *inode, struct page **pages, int nr)
{
	struct twig_fs_info *fs = twig_isb(inode);
	u64 pos = (u64)pages[0]->index << PAGE_SHIFT;
	u64 bytes = (u64)nr << PAGE_SHIFT;
	struct twig_data_alloc data;
	struct bio *bio;
	int ret, err, i;

	ret = twig_alloc_data(fs, bytes, &data);
	if (ret == -ENOSPC && nr > 1) {
		/* no contiguous run that long: write it in halves */
		ret = twig_write_run(inode, pages, nr / 2);
		err = twig_write_run(inode, pages + nr / 2, nr - nr / 2);
		return ret ? ret : err;
	}
	if (ret)
		return ret;

	bio = bio_alloc(fs->bdev, nr, REQ_OP_WRITE, GFP_NOFS);
	bio->bi_iter.bi_sector = data.bytenr >> SECTOR_SHIFT;
	for (i = 0; i < nr; i++)
		__bio_add_page(bio, pages[i], PAGE_SIZE, 0);
	ret = twig_should_fail(fs) ? -EIO : twig_submit_bio_wait(fs, bio);
	bio_put(bio);
	if (ret) {
		twig_data_alloc_drop(fs, &data);
		return ret;
	}
	return twig_swap_run(inode, pos, bytes, &data, 0);
}

static int twig_flush_run(struct inode *inode, struct twig_wb *wb)
{
	int ret, i;

	if (!wb->nr)
		return 0;
	ret = twig_write_run(inode, wb->pages, wb->nr);
	for (i = 0; i < wb->nr; i++) {
		if (ret)
			mapping_set_error(inode->i_mapping, ret);
		end_page_writeback(wb->pages[i]);
	}
	if (ret)
		pr_warn_ratelimited("twigfs: %s: inode %lu: writeback failed: %d\n",
				    inode->i_sb->s_id, inode->i_ino, ret);
	wb->nr = 0;
	return ret;
}

/*
 * A small file's only page: keep it inline (page locked).  An inline
 * extent must be the file's only one, so with extents past the page
 * (preallocated beyond EOF by FALLOC_FL_KEEP_SIZE) this writes nothing and
 * returns 1: the page goes out as a regular extent.
 */
static int twig_write_inline_page(struct inode *inode, struct page *page,
				  u64 isize)
{
	struct twig_inode_info *ti = TWIG_I(inode);
	struct twig_trans *trans;
	struct twig_fext x;
	void *kaddr;
	int ret;

	mutex_lock(&ti->extent_mutex);
	ret = twig_find_extent(twig_isb(inode), inode->i_ino, PAGE_SIZE, &x);
	if (ret <= 0) {
		ret = ret ?: 1;
		goto out;
	}
	trans = twig_start_transaction(twig_isb(inode), 4);
	if (IS_ERR(trans)) {
		ret = PTR_ERR(trans);
		goto out;
	}
	kaddr = kmap_local_page(page);
	ret = twig_write_inline(trans, inode, kaddr, isize);
	kunmap_local(kaddr);
	if (!ret)
		ret = twig_update_inode(trans, inode);
	if (ret)
		twig_abort_transaction(trans, ret);
	twig_end_transaction(trans);
out:
	mutex_unlock(&ti->extent_mutex);
	return ret;
}

static void twig_unreserve_page(struct inode *inode, struct page *page)
{
	if (PagePrivate(page)) {
		detach_page_private(page);
		twig_release_data(twig_isb(inode), PAGE_SIZE);
	}
}

static int twig_write_one_page(struct page *page, struct writeback_control *wbc,
			       void *data)
{
	struct inode *inode = page->mapping->host;
	struct twig_wb *wb = data;
	u64 isize = i_size_read(inode);
	pgoff_t end_index = isize >> PAGE_SHIFT;
	unsigned int tail = isize & (PAGE_SIZE - 1);
	int ret = 0;

	twig_unreserve_page(inode, page);
	if (page->index > end_index || (page->index == end_index && !tail)) {
		/* wholly past EOF: truncate will drop it */
		unlock_page(page);
		return 0;
	}
	if (page->index == end_index)
		zero_user_segment(page, tail, PAGE_SIZE);

	if (wb->nr && (page->index != wb->pages[0]->index + wb->nr ||
		       wb->nr == TWIG_WB_PAGES))
		twig_flush_run(inode, wb);

	set_page_writeback(page);
	if (page->index == 0 && isize <= TWIG_MAX_INLINE) {
		ret = twig_write_inline_page(inode, page, isize);
		if (ret <= 0) {
			if (ret)
				mapping_set_error(page->mapping, ret);
			unlock_page(page);
			end_page_writeback(page);
			return 0;
		}
	}
	unlock_page(page);
	wb->pages[wb->nr++] = page;
	return 0;
}

static int twig_writepage_cb(struct twig_wbc_page *p,
			     struct writeback_control *wbc, void *data)
{
	return twig_write_one_page(twig_wbc_to_page(p), wbc, data);
}

static int twig_writepages(struct address_space *mapping,
			   struct writeback_control *wbc)
{
	struct twig_wb *wb;
	unsigned int nofs;
	int ret;

	wb = kmalloc(sizeof(*wb), GFP_NOFS);
	if (!wb)
		return -ENOMEM;
	wb->nr = 0;
	nofs = memalloc_nofs_save();
	ret = write_cache_pages(mapping, wbc, twig_writepage_cb, wb);
	twig_flush_run(mapping->host, wb);
	memalloc_nofs_restore(nofs);
	kfree(wb);
	return ret;
}

static int twig_writepage(struct page *page, struct writeback_control *wbc)
{
	struct twig_wb *wb;
	unsigned int nofs;

	/* reclaim: let the flusher threads write it */
	if (current->flags & PF_MEMALLOC) {
		redirty_page_for_writepage(wbc, page);
		unlock_page(page);
		return 0;
	}
	wb = kmalloc(sizeof(*wb), GFP_NOFS);
	if (!wb) {
		redirty_page_for_writepage(wbc, page);
		unlock_page(page);
		return -ENOMEM;
	}
	wb->nr = 0;
	nofs = memalloc_nofs_save();
	twig_write_one_page(page, wbc, wb);
	twig_flush_run(page->mapping->host, wb);
	memalloc_nofs_restore(nofs);
	kfree(wb);
	return 0;
}

/* ---- buffered writes ---- */

static int twig_write_begin(struct file *file, struct address_space *mapping,
			    loff_t pos, unsigned int len,
			    struct twig_write_page **pagep, void **fsdata)
{
	struct inode *inode = mapping->host;
	struct twig_fs_info *fs = twig_isb(inode);
	pgoff_t index = pos >> PAGE_SHIFT;
	struct page *page;
	int ret;

	/* reserve before taking the page lock: reserving may write back */
	ret = twig_reserve_data(fs, PAGE_SIZE);
	if (ret)
		return ret;
	page = grab_cache_page_write_begin(mapping, index);
	if (!page) {
		twig_release_data(fs, PAGE_SIZE);
		return -ENOMEM;
	}
	if (PagePrivate(page))
		twig_release_data(fs, PAGE_SIZE);
	else
		attach_page_private(page, TWIG_RESERVED);

	if (!PageUptodate(page) && len != PAGE_SIZE) {
		if ((u64)index << PAGE_SHIFT >= i_size_read(inode)) {
			/* all of it: a short copy must not expose old memory */
			zero_user(page, 0, PAGE_SIZE);
		} else {
			ret = twig_fill_page(inode, page);
			if (ret) {
				unlock_page(page);
				put_page(page);
				return ret;
			}
		}
		SetPageUptodate(page);
	}
	*pagep = twig_page_to_write(page);
	return 0;
}

static int twig_write_end(struct file *file, struct address_space *mapping,
			  loff_t pos, unsigned int len, unsigned int copied,
			  struct twig_write_page *wpage, void *fsdata)
{
	struct page *page = twig_write_to_page(wpage);
	struct inode *inode = mapping->host;
	bool grew = false;

	if (!PageUptodate(page)) {
		if (copied < len) {
			copied = 0;
			goto out;
		}
		SetPageUptodate(page);
	}
	if (pos + copied > inode->i_size) {
		i_size_write(inode, pos + copied);
		grew = true;
	}
	if (copied)
		set_page_dirty(page);
out:
	unlock_page(page);
	put_page(page);
	if (grew)
		mark_inode_dirty(inode);
	return copied;
}

static bool twig_dirty_folio(struct address_space *mapping,
			     struct folio *folio)
{
	return filemap_dirty_folio(mapping, folio);
}

static void twig_invalidate_folio(struct folio *folio, size_t offset,
				  size_t len)
{
	if (offset == 0 && len == folio_size(folio))
		twig_unreserve_page(folio->mapping->host, &folio->page);
}

static bool twig_release_folio(struct folio *folio, gfp_t gfp)
{
	if (folio_test_dirty(folio) || folio_test_writeback(folio))
		return false;
	twig_unreserve_page(folio->mapping->host, &folio->page);
	return true;
}

const struct address_space_operations twig_aops = {
	.read_folio		= twig_read_folio,
	.readahead		= twig_readahead,
	.writepage		= twig_writepage,
	.writepages		= twig_writepages,
	.write_begin		= twig_write_begin,
	.write_end		= twig_write_end,
	.dirty_folio		= twig_dirty_folio,
	.invalidate_folio	= twig_invalidate_folio,
	.release_folio		= twig_release_folio,
	.migrate_folio		= filemap_migrate_folio,
};
