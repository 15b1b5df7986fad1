// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs regular files: the page cache, EXTENT_DATA items and data CoW.
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
 * EXTENT_DATA items of one file change only under its extent_mutex.  Lock
 * order: page lock, then extent_mutex, then tree locks (inside the core).
 */
#include <linux/fs.h>
#include <linux/falloc.h>
#include <linux/pagemap.h>
#include <linux/mpage.h>
#include <linux/buffer_head.h>
#include <linux/writeback.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/uio.h>
#include <linux/sched/mm.h>
#include "vfs.h"

#define TWIG_WB_PAGES	(TWIG_VFS_MAX_EXTENT / PAGE_SIZE)
/*
 * Extent items a truncate or punch handle drops, at most: 3 more items are
 * reserved (a cut's new tail item, the inode, an inline cut), and fewer
 * when space is short (twig_start_transaction_shrink()).
 */
#define TWIG_DROP_BATCH	64
#define TWIG_RESERVED	((void *)1UL)

/* One EXTENT_DATA item, decoded. */
struct twig_fext {
	u64 start;		/* file offset (key offset) */
	u64 end;		/* start + num_bytes, or ram_bytes for inline */
	u64 disk;		/* regular: where start is, disk_bytenr + offset */
	u64 run;		/* regular: the run the item owns, disk_bytenr */
	u64 run_len;		/* regular: disk_num_bytes */
	u64 generation;
	u8 type;
};

static int twig_decode_fext(struct twig_eb *leaf, int slot,
			    const struct twig_key *key, struct twig_fext *x)
{
	struct twig_file_extent *fe = twig_item_ptr(leaf, slot);
	u32 size = twig_item_size(leaf, slot);

	if (size < TWIG_FILE_EXTENT_INLINE_START)
		return -EUCLEAN;
	x->type = fe->type;
	x->start = key->offset;
	x->generation = le64_to_cpu(fe->generation);
	if (fe->type == TWIG_FILE_EXTENT_INLINE) {
		x->end = key->offset + le64_to_cpu(fe->ram_bytes);
		x->disk = 0;
		x->run = 0;
		x->run_len = 0;
		return 0;
	}
	if ((fe->type != TWIG_FILE_EXTENT_REG &&
	     fe->type != TWIG_FILE_EXTENT_PREALLOC) || size < sizeof(*fe))
		return -EUCLEAN;
	x->run = le64_to_cpu(fe->disk_bytenr);
	x->run_len = le64_to_cpu(fe->disk_num_bytes);
	x->disk = x->run + le64_to_cpu(fe->offset);
	x->end = key->offset + le64_to_cpu(fe->num_bytes);
	return 0;
}

/*
 * Find the first extent of @ino that ends after @pos.  Returns 0 with *x
 * filled, 1 if there is none, <0 on error.  Regular extents are never
 * longer than TWIG_VFS_MAX_EXTENT, so the walk starts that far back.
 */
static int twig_find_extent(struct twig_fs_info *fs, u64 ino, u64 pos,
			    struct twig_fext *x)
{
	struct twig_key key = {
		ino, TWIG_EXTENT_DATA_KEY,
		pos >= TWIG_VFS_MAX_EXTENT ? pos - TWIG_VFS_MAX_EXTENT + 1 : 0
	};
	struct twig_path *path;
	struct twig_key found;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_walk_first(fs, &key, path);
	while (ret == 0) {
		twig_item_key(path->nodes[0], path->slots[0], &found);
		if (found.objectid != ino || found.type != TWIG_EXTENT_DATA_KEY) {
			ret = 1;
			break;
		}
		ret = twig_decode_fext(path->nodes[0], path->slots[0], &found, x);
		if (ret)
			break;
		if (x->end > pos || (x->type == TWIG_FILE_EXTENT_INLINE &&
				     pos < PAGE_SIZE))
			break;
		ret = twig_next_item(fs, path);
	}
	twig_free_path(path);
	if (ret == -EUCLEAN)
		pr_err("twigfs: %s: inode %llu: corrupt extent item\n",
		       fs->sb->s_id, ino);
	return ret;
}

/* How @pos of @inode is stored: a hole, a regular extent or inline data. */
int twig_get_map(struct inode *inode, u64 pos, struct twig_map *map)
{
	struct twig_fext x;
	int ret;

	map->start = pos;
	ret = twig_find_extent(twig_isb(inode), inode->i_ino, pos, &x);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		map->kind = TWIG_MAP_HOLE;
		map->len = U64_MAX - pos;
	} else if (x.type == TWIG_FILE_EXTENT_INLINE) {
		map->kind = TWIG_MAP_INLINE;
		map->len = x.end > pos ? x.end - pos : 0;
	} else if (x.start > pos) {
		map->kind = TWIG_MAP_HOLE;
		map->len = x.start - pos;
	} else if (x.type == TWIG_FILE_EXTENT_PREALLOC) {
		/* never written: reads, SEEK_HOLE and zeroing see a hole */
		map->kind = TWIG_MAP_HOLE;
		map->len = x.end - pos;
	} else {
		map->kind = TWIG_MAP_REG;
		map->len = x.end - pos;
		map->disk_bytenr = x.disk + (pos - x.start);
	}
	return 0;
}

/* Copy the inline extent into @buf; returns its length, 0 if none. */
static int twig_read_inline(struct inode *inode, void *buf, u32 max)
{
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_key key = { inode->i_ino, TWIG_EXTENT_DATA_KEY, 0 };
	struct twig_path *path;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_search_slot(NULL, fs, &key, path, 0, 0);
	if (ret == 0) {
		struct twig_eb *leaf = path->nodes[0];
		struct twig_file_extent *fe = twig_item_ptr(leaf, path->slots[0]);
		u32 size = twig_item_size(leaf, path->slots[0]);
		u64 ram;

		if (size < TWIG_FILE_EXTENT_INLINE_START ||
		    fe->type != TWIG_FILE_EXTENT_INLINE) {
			ret = 0;
		} else {
			ram = le64_to_cpu(fe->ram_bytes);
			if (ram > max ||
			    size != TWIG_FILE_EXTENT_INLINE_START + ram) {
				ret = -EUCLEAN;
			} else {
				memcpy(buf, (u8 *)fe + TWIG_FILE_EXTENT_INLINE_START,
				       ram);
				ret = ram;
			}
		}
	} else if (ret > 0) {
		ret = 0;
	}
	twig_free_path(path);
	return ret;
}

static int twig_bio_page(struct twig_fs_info *fs, u64 bytenr,
			 struct page *page, blk_opf_t opf)
{
	struct bio *bio;
	int ret;

	bio = bio_alloc(fs->bdev, 1, opf, GFP_NOFS);
	bio->bi_iter.bi_sector = bytenr >> SECTOR_SHIFT;
	__bio_add_page(bio, page, PAGE_SIZE, 0);
	ret = twig_submit_bio_wait(fs, bio);
	bio_put(bio);
	return ret;
}

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

/* ---- changing EXTENT_DATA items (extent_mutex held) ---- */

static void twig_fill_reg(struct twig_file_extent *fe, u8 type, u64 gen,
			  u64 disk, u64 len)
{
	memset(fe, 0, sizeof(*fe));
	fe->generation = cpu_to_le64(gen);
	fe->ram_bytes = cpu_to_le64(len);
	fe->type = type;
	fe->disk_bytenr = cpu_to_le64(disk);
	/*
	 * A tail cut from an extent that ends mid-sector (images made by
	 * other tools) still owns whole sectors, as format.h says.
	 */
	fe->disk_num_bytes = cpu_to_le64(round_up(len, TWIG_SECTORSIZE));
	fe->offset = 0;
	fe->num_bytes = cpu_to_le64(len);
}

/* A regular or preallocated extent item. */
static int twig_insert_fext(struct twig_trans *trans, struct inode *inode,
			    u8 type, u64 pos, u64 gen, u64 disk, u64 len)
{
	struct twig_key key = { inode->i_ino, TWIG_EXTENT_DATA_KEY, pos };
	struct twig_file_extent fe;

	twig_fill_reg(&fe, type, gen, disk, len);
	return twig_insert_item(trans, trans->fs, &key, &fe, sizeof(fe));
}

static int twig_insert_reg(struct twig_trans *trans, struct inode *inode,
			   u64 pos, u64 gen, u64 disk, u64 len)
{
	return twig_insert_fext(trans, inode, TWIG_FILE_EXTENT_REG, pos, gen,
				disk, len);
}

/*
 * The item of @x is gone or cut: free its whole run, [disk_bytenr, +
 * disk_num_bytes), except the pieces the items left in its place own now
 * (@head bytes from x->disk, and @tail bytes from @tail_disk; 0 for none).
 * The run may start before x->disk (a non-zero offset: images of other
 * tools) and end after the mapped bytes; the tree checker keeps the
 * mapped bytes inside it.  Takes what was freed off nbytes.
 */
static int twig_free_run_except(struct twig_trans *trans, struct inode *inode,
				const struct twig_fext *x, u64 head,
				u64 tail_disk, u64 tail)
{
	struct twig_fs_info *fs = trans->fs;
	u64 keep[2][2] = { { x->disk, head }, { tail_disk, tail } };
	u64 at = x->run, end = x->run + x->run_len;
	int ret = 0, err;
	int i;

	for (i = 0; i < 2; i++) {
		if (!keep[i][1])
			continue;
		if (keep[i][0] > at) {
			err = twig_free_data(fs, trans, at, keep[i][0] - at);
			ret = ret ?: err;
		}
		at = keep[i][0] + keep[i][1];
	}
	if (end > at) {
		err = twig_free_data(fs, trans, at, end - at);
		ret = ret ?: err;
	}
	if (!ret)
		twig_set_nbytes(inode, TWIG_I(inode)->nbytes -
				(x->run_len - head - tail));
	return ret;
}

/*
 * Remove [start, end) (sector aligned, end may be U64_MAX) from the file's
 * extents: items inside are deleted, items across a boundary are cut, and
 * the sectors no longer referenced are freed; a cut preallocated extent
 * stays preallocated.  Every piece left owns exactly its sectors (offset
 * 0).  An inline extent is deleted when start is 0.  Stops with -EAGAIN
 * after @max items so that a long truncate can take a fresh handle.
 */
static int twig_drop_range(struct twig_trans *trans, struct inode *inode,
			   u64 start, u64 end, int max)
{
	struct twig_fs_info *fs = trans->fs;
	struct twig_inode_info *ti = TWIG_I(inode);
	struct twig_path *path;
	struct twig_fext x;
	struct twig_key key;
	int done = 0;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	for (;;) {
		struct twig_file_extent *fe;
		struct twig_eb *leaf;

		ret = twig_find_extent(fs, inode->i_ino, start, &x);
		if (ret) {
			ret = ret > 0 ? 0 : ret;
			break;
		}
		if (x.start >= end)
			break;
		if (x.type == TWIG_FILE_EXTENT_INLINE && start > 0)
			break;
		if (done++ >= max) {
			ret = -EAGAIN;
			break;
		}
		key.objectid = inode->i_ino;
		key.type = TWIG_EXTENT_DATA_KEY;
		key.offset = x.start;
		ret = twig_search_slot(trans, fs, &key, path, -1, 1);
		if (ret) {
			ret = ret > 0 ? -EUCLEAN : ret;
			break;
		}
		leaf = path->nodes[0];
		fe = twig_item_ptr(leaf, path->slots[0]);

		if (x.type == TWIG_FILE_EXTENT_INLINE) {
			ret = twig_del_item(trans, fs, path);
			twig_release_path(path);
			if (ret)
				break;
			twig_set_nbytes(inode, ti->nbytes - (x.end - x.start));
			continue;
		}
		if (x.start >= start && x.end <= end) {
			/* wholly inside: delete */
			ret = twig_del_item(trans, fs, path);
			twig_release_path(path);
			if (ret)
				break;
			ret = twig_free_run_except(trans, inode, &x, 0, 0, 0);
			if (ret)
				break;
			continue;
		}
		if (x.start < start) {
			/* keep the head [x.start, start) in place */
			u64 head = start - x.start;

			fe->disk_bytenr = cpu_to_le64(x.disk);
			fe->offset = 0;
			fe->num_bytes = cpu_to_le64(head);
			fe->disk_num_bytes = cpu_to_le64(head);
			fe->ram_bytes = cpu_to_le64(head);
			twig_mark_buffer_dirty(trans, leaf);
			twig_release_path(path);
			if (x.end > end) {
				/* and the tail [end, x.end) as its own item */
				u64 tail_disk = x.disk + (end - x.start);

				ret = twig_insert_fext(trans, inode, x.type,
						       end, x.generation,
						       tail_disk, x.end - end);
				if (ret)
					break;
				ret = twig_free_run_except(trans, inode, &x,
							   head, tail_disk,
							   round_up(x.end - end,
								    TWIG_SECTORSIZE));
				break;
			}
			ret = twig_free_run_except(trans, inode, &x, head, 0, 0);
			if (ret)
				break;
			continue;
		}
		/* x.start >= start, x.end > end: keep the tail [end, x.end) */
		ret = twig_del_item(trans, fs, path);
		twig_release_path(path);
		if (ret)
			break;
		ret = twig_insert_fext(trans, inode, x.type, end, x.generation,
				       x.disk + (end - x.start), x.end - end);
		if (ret)
			break;
		ret = twig_free_run_except(trans, inode, &x, 0,
					   x.disk + (end - x.start),
					   round_up(x.end - end, TWIG_SECTORSIZE));
		break;
	}
	twig_free_path(path);
	return ret;
}

int twig_drop_extents(struct twig_trans *trans, struct inode *inode,
		      u64 start, u64 end)
{
	return twig_drop_range(trans, inode, start, end, INT_MAX);
}

/* Store @len bytes as the file's inline extent (replacing page 0). */
int twig_write_inline(struct twig_trans *trans, struct inode *inode,
		      const void *data, u64 len)
{
	struct twig_key key = { inode->i_ino, TWIG_EXTENT_DATA_KEY, 0 };
	struct twig_file_extent *fe;
	u32 size = TWIG_FILE_EXTENT_INLINE_START + len;
	int ret;

	ret = twig_drop_extents(trans, inode, 0, PAGE_SIZE);
	if (ret)
		return ret;
	fe = kzalloc(size, GFP_NOFS);
	if (!fe)
		return -ENOMEM;
	fe->generation = cpu_to_le64(trans->transid);
	fe->ram_bytes = cpu_to_le64(len);
	fe->type = TWIG_FILE_EXTENT_INLINE;
	memcpy((u8 *)fe + TWIG_FILE_EXTENT_INLINE_START, data, len);
	ret = twig_insert_item(trans, trans->fs, &key, fe, size);
	kfree(fe);
	if (ret)
		return ret;
	twig_set_nbytes(inode, TWIG_I(inode)->nbytes + len);
	TWIG_I(inode)->maybe_inline = true;
	return 0;
}

/*
 * Turning an inline extent into a one-sector regular extent takes two
 * steps, so that the data write happens outside any handle: this one,
 * under extent_mutex (which keeps the inline extent as it is until the
 * second), copies the inline bytes to a newly allocated sector; then
 * twig_inline_swap(), in a handle, replaces the items.  Returns 1 with @da
 * written, 0 if there is no inline extent, or an error.
 */
static int twig_inline_to_sector(struct inode *inode,
				 struct twig_data_alloc *da)
{
	struct twig_fs_info *fs = twig_isb(inode);
	struct page *page;
	void *kaddr;
	int len;
	int ret;

	page = alloc_page(GFP_NOFS | __GFP_ZERO);
	if (!page)
		return -ENOMEM;
	kaddr = kmap_local_page(page);
	len = twig_read_inline(inode, kaddr, PAGE_SIZE);
	kunmap_local(kaddr);
	if (len <= 0) {
		if (!len)
			TWIG_I(inode)->maybe_inline = false;
		ret = len;
		goto out;
	}
	ret = twig_alloc_data(fs, PAGE_SIZE, da);
	if (ret)
		goto out;
	ret = twig_bio_page(fs, da->bytenr, page, REQ_OP_WRITE);
	if (ret)
		twig_data_alloc_drop(fs, da);
	else
		ret = 1;
out:
	__free_page(page);
	return ret;
}

/* The second step: @da replaces the inline extent; dropped on failure. */
static int twig_inline_swap(struct twig_trans *trans, struct inode *inode,
			    struct twig_data_alloc *da)
{
	int ret;

	ret = twig_drop_extents(trans, inode, 0, PAGE_SIZE);
	if (!ret)
		ret = twig_insert_reg(trans, inode, 0, trans->transid,
				      da->bytenr, PAGE_SIZE);
	if (ret) {
		twig_data_alloc_drop(trans->fs, da);
		return ret;
	}
	twig_data_alloc_owned(trans, da);
	twig_set_nbytes(inode, TWIG_I(inode)->nbytes + PAGE_SIZE);
	TWIG_I(inode)->maybe_inline = false;
	return 0;
}

/* twig_convert_inline() for a caller that holds extent_mutex. */
static int twig_convert_inline_locked(struct inode *inode)
{
	struct twig_data_alloc da;
	struct twig_trans *trans;
	int ret;

	ret = twig_inline_to_sector(inode, &da);
	if (ret <= 0)
		return ret;
	trans = twig_start_transaction(twig_isb(inode), 4);
	if (IS_ERR(trans)) {
		twig_data_alloc_drop(twig_isb(inode), &da);
		return PTR_ERR(trans);
	}
	ret = twig_inline_swap(trans, inode, &da);
	if (!ret)
		ret = twig_update_inode(trans, inode);
	if (ret)
		twig_abort_transaction(trans, ret);
	twig_end_transaction(trans);
	return ret;
}

int twig_convert_inline(struct inode *inode)
{
	struct twig_inode_info *ti = TWIG_I(inode);
	int ret;

	mutex_lock(&ti->extent_mutex);
	ret = twig_convert_inline_locked(inode);
	mutex_unlock(&ti->extent_mutex);
	return ret;
}

/* The partial last page after a truncate: rewrite it with zeroes past EOF. */
static int twig_zero_tail(struct inode *inode, u64 size)
{
	struct address_space *mapping = inode->i_mapping;
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_map map;
	struct folio *folio;
	bool reserved;
	int ret;

	if (!(size & (PAGE_SIZE - 1)))
		return 0;
	ret = twig_get_map(inode, size, &map);
	if (ret || map.kind != TWIG_MAP_REG)
		return ret;
	/*
	 * Before the page lock, as twig_zero_partial(): reserving may write
	 * back and commit.  A truncate must work on a full filesystem, so
	 * without a reservation the page is zeroed all the same.
	 */
	reserved = !twig_reserve_data(fs, PAGE_SIZE);
	folio = read_mapping_folio(mapping, size >> PAGE_SHIFT, NULL);
	if (IS_ERR(folio)) {
		if (reserved)
			twig_release_data(fs, PAGE_SIZE);
		return PTR_ERR(folio);
	}
	folio_lock(folio);
	if (folio->mapping == mapping) {
		folio_zero_segment(folio, offset_in_folio(folio, size),
				   folio_size(folio));
		if (reserved && !folio_test_private(folio)) {
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
 * A truncate drops extents from the end, at most @max items a handle, and
 * each handle but the last stores in the INODE_ITEM the size its drop
 * reached, as btrfs does: a commit between two handles (the truncate of a
 * file of many extents takes several) then never has an extent past
 * i_size, and leaves the file as it was up to that size (issue 28).
 * *@from: where the last @max extent items at or past @start begin, or
 * @start when there are no more than @max.  The walk is O(items) a round.
 */
static int twig_trunc_window(struct twig_fs_info *fs, u64 ino, u64 start,
			     unsigned int max, u64 *from)
{
	struct twig_key key = {
		ino, TWIG_EXTENT_DATA_KEY,
		start >= TWIG_VFS_MAX_EXTENT ? start - TWIG_VFS_MAX_EXTENT + 1 : 0
	};
	struct twig_path *path;
	struct twig_key found;
	struct twig_fext x;
	unsigned long n = 0;
	u64 *ring;
	int ret;

	*from = start;
	ring = kmalloc_array(max, sizeof(*ring), GFP_NOFS);
	path = twig_alloc_path();
	if (!ring || !path) {
		kfree(ring);
		twig_free_path(path);
		return -ENOMEM;
	}
	ret = twig_walk_first(fs, &key, path);
	while (ret == 0) {
		twig_item_key(path->nodes[0], path->slots[0], &found);
		if (found.objectid != ino || found.type != TWIG_EXTENT_DATA_KEY) {
			ret = 1;
			break;
		}
		ret = twig_decode_fext(path->nodes[0], path->slots[0], &found, &x);
		if (ret)
			break;
		if (x.end > start)
			ring[n++ % max] = max(x.start, start);
		ret = twig_next_item(fs, path);
	}
	twig_free_path(path);
	if (ret >= 0 && n > max)
		*from = ring[n % max];
	kfree(ring);
	return ret > 0 ? 0 : ret;
}

/* The INODE_ITEM's size alone, for a truncate still under way. */
static int twig_set_item_size(struct twig_trans *trans, struct inode *inode,
			      u64 size)
{
	struct twig_key key = { inode->i_ino, TWIG_INODE_ITEM_KEY, 0 };
	struct twig_path *path = twig_alloc_path();
	int ret;

	if (!path)
		return -ENOMEM;
	ret = twig_search_slot(trans, trans->fs, &key, path, 0, 1);
	if (ret == 0) {
		struct twig_eb *leaf = path->nodes[0];
		struct twig_inode_item *ii = twig_item_ptr(leaf, path->slots[0]);

		if (twig_item_size(leaf, path->slots[0]) < sizeof(*ii)) {
			ret = -EUCLEAN;
		} else {
			ii->size = cpu_to_le64(size);
			twig_mark_buffer_dirty(trans, leaf);
		}
	} else if (ret > 0) {
		ret = -EUCLEAN;
	}
	twig_free_path(path);
	return ret;
}

/* setattr(ATTR_SIZE), under i_rwsem: resize the page cache and extents. */
int twig_truncate_extents(struct inode *inode, u64 new_size)
{
	struct twig_inode_info *ti = TWIG_I(inode);
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_trans *trans;
	u64 old_size = i_size_read(inode);
	bool changed = false;
	int ret;

	if (new_size > old_size) {
		if (ti->maybe_inline && new_size > TWIG_MAX_INLINE) {
			ret = twig_convert_inline(inode);
			if (ret)
				return ret;
		}
		truncate_setsize(inode, new_size);
		return 0;
	}

	/* no async direct read (direct.c) may still read what goes */
	inode_dio_wait(inode);
	/* the same size: only what fallocate put past EOF goes */
	if (new_size != old_size) {
		truncate_setsize(inode, new_size);
		ret = twig_zero_tail(inode, new_size);
		/*
		 * The zeroed tail reaches the disk before the handles below:
		 * a commit of the new size without writeback (an fsync of the
		 * directory) would otherwise keep the old bytes past it in
		 * the last block, which growing the file after a crash shows
		 * (issue 28; btrfs zeroes that block on the way up instead).
		 */
		if (!ret && (new_size & (PAGE_SIZE - 1)))
			ret = filemap_write_and_wait_range(inode->i_mapping,
							   new_size,
							   new_size | (PAGE_SIZE - 1));
		if (ret) {
			/* as below: nothing changed */
			i_size_write(inode, old_size);
			return ret;
		}
	}

	mutex_lock(&ti->extent_mutex);
	do {
		unsigned int items = TWIG_DROP_BATCH + 3;
		u64 start = round_up(new_size, TWIG_SECTORSIZE), from = start;

		trans = twig_start_transaction_shrink(fs, &items, 4);
		if (IS_ERR(trans)) {
			ret = PTR_ERR(trans);
			break;
		}
		/* not the -EAGAIN of the last round, which skips the drop */
		ret = 0;
		if (ti->maybe_inline) {
			/* cut the inline extent to new_size */
			u8 *buf = kmalloc(PAGE_SIZE, GFP_NOFS);
			int len = buf ? twig_read_inline(inode, buf, PAGE_SIZE) :
				  -ENOMEM;

			ret = len < 0 ? len : 0;
			if (len > 0 && len > new_size) {
				ret = twig_drop_extents(trans, inode, 0, PAGE_SIZE);
				if (!ret && new_size)
					ret = twig_write_inline(trans, inode, buf,
								new_size);
			}
			kfree(buf);
		}
		/* the last items first; see twig_trunc_window() */
		if (!ret)
			ret = twig_trunc_window(fs, inode->i_ino, start,
						items - 3, &from);
		if (!ret)
			ret = twig_drop_range(trans, inode, from, U64_MAX,
					      items - 3);
		if (!ret && from > start)
			ret = -EAGAIN;
		if (!ret || ret == -EAGAIN) {
			int err = twig_update_inode(trans, inode);

			/* a commit now keeps the file up to where it reached */
			if (!err && from > start)
				err = twig_set_item_size(trans, inode,
							 min(from, old_size));
			if (err)
				ret = err;
		}
		if (ret && ret != -EAGAIN)
			twig_abort_transaction(trans, ret);
		changed |= trans->dirty;
		twig_end_transaction(trans);
	} while (ret == -EAGAIN);
	/*
	 * Failed before any item changed: a later inode update must not
	 * write the new size over extents that are still there.  The tail's
	 * writeback above may have stored it in the inode item already: put
	 * the old one back (a failure here aborts, and the disk keeps the
	 * last commit).
	 */
	if (ret && !changed) {
		i_size_write(inode, old_size);
		if (new_size & (PAGE_SIZE - 1)) {
			trans = twig_start_transaction_reserved(fs, 1);
			if (!IS_ERR(trans)) {
				int err = twig_update_inode(trans, inode);

				if (err)
					twig_abort_transaction(trans, err);
				twig_end_transaction(trans);
			}
		}
	}
	mutex_unlock(&ti->extent_mutex);
	return ret;
}

/* ---- writeback ---- */

struct twig_wb {
	struct page *pages[TWIG_WB_PAGES];
	int nr;
};

/*
 * The second half of a CoW write, for writeback and O_DIRECT (direct.c):
 * @data, allocated with twig_alloc_data() and already written, becomes the
 * file's extent for [pos, pos + bytes).  One handle replaces the range's
 * EXTENT_DATA items and frees the sectors they owned; @new_size, when past
 * i_size, becomes i_size in the same handle, so a commit never sees the
 * size without the data.  @data is dropped on failure.
 */
int twig_swap_run(struct inode *inode, u64 pos, u64 bytes,
		  struct twig_data_alloc *data, u64 new_size)
{
	struct twig_inode_info *ti = TWIG_I(inode);
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_data_alloc inline_data;
	struct twig_trans *trans;
	bool converting = false;
	int ret;

	mutex_lock(&ti->extent_mutex);
	if (ti->maybe_inline && pos > 0) {
		ret = twig_inline_to_sector(inode, &inline_data);
		if (ret < 0)
			goto out_drop;
		converting = ret;
	}
	trans = twig_start_transaction(fs, 8);
	if (IS_ERR(trans)) {
		ret = PTR_ERR(trans);
		goto out_drop;
	}
	ret = converting ? twig_inline_swap(trans, inode, &inline_data) : 0;
	if (!ret)
		ret = twig_drop_extents(trans, inode, pos, pos + bytes);
	if (!ret)
		ret = twig_insert_reg(trans, inode, pos, trans->transid,
				      data->bytenr, bytes);
	if (ret) {
		/* undoes the allocation; what the swap or drop_extents did, the abort */
		twig_data_alloc_drop(fs, data);
	} else {
		twig_data_alloc_owned(trans, data);
		twig_set_nbytes(inode, ti->nbytes + bytes);
		if (pos == 0)
			ti->maybe_inline = false;
		if (new_size > i_size_read(inode))
			i_size_write(inode, new_size);
		ret = twig_update_inode(trans, inode);
	}
	if (ret)
		twig_abort_transaction(trans, ret);
	twig_end_transaction(trans);
	mutex_unlock(&ti->extent_mutex);
	return ret;

out_drop:
	if (converting)
		twig_data_alloc_drop(fs, &inline_data);
	twig_data_alloc_drop(fs, data);
	mutex_unlock(&ti->extent_mutex);
	return ret;
}

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

/* ---- mmap ---- */

static vm_fault_t twig_page_mkwrite(struct vm_fault *vmf)
{
	struct page *page = vmf->page;
	struct inode *inode = file_inode(vmf->vma->vm_file);
	struct twig_fs_info *fs = twig_isb(inode);
	vm_fault_t ret = VM_FAULT_LOCKED;
	bool reserved;

	sb_start_pagefault(inode->i_sb);
	file_update_time(vmf->vma->vm_file);
	reserved = !twig_reserve_data(fs, PAGE_SIZE);
	lock_page(page);
	if (page->mapping != inode->i_mapping ||
	    page_offset(page) >= i_size_read(inode)) {
		unlock_page(page);
		ret = VM_FAULT_NOPAGE;
		goto out;
	}
	if (PagePrivate(page)) {
		/* already reserved */
	} else if (reserved) {
		attach_page_private(page, TWIG_RESERVED);
		reserved = false;
	} else {
		unlock_page(page);
		ret = VM_FAULT_SIGBUS;
		goto out;
	}
	set_page_dirty(page);
	wait_for_stable_page(page);
out:
	if (reserved)
		twig_release_data(fs, PAGE_SIZE);
	sb_end_pagefault(inode->i_sb);
	return ret;
}

static const struct vm_operations_struct twig_file_vm_ops = {
	.fault		= filemap_fault,
	.map_pages	= filemap_map_pages,
	.page_mkwrite	= twig_page_mkwrite,
};

static int twig_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	int ret = generic_file_mmap(file, vma);

	if (!ret)
		vma->vm_ops = &twig_file_vm_ops;
	return ret;
}

/* ---- fallocate ---- */

/*
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

static long twig_fallocate(struct file *file, int mode, loff_t offset,
			   loff_t len)
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

/* ---- fsync, llseek ---- */

static int twig_sync_file(struct file *file, loff_t start, loff_t end)
{
	struct inode *inode = file_inode(file);
	int ret;

	twig_stat_add(twig_isb(inode), TWIG_CS_FSYNCS, 1);
	ret = file_write_and_wait_range(file, start, end);
	if (ret)
		return ret;
	if (test_bit(TWIG_FS_RDONLY, &twig_isb(inode)->flags))
		return 0;
	/* the data is on disk: log the items that name it (tree-log.c) */
	ret = twig_log_inode(file);
	if (ret <= 0)
		return ret;
	twig_stat_add(twig_isb(inode), TWIG_CS_LOG_FALLBACKS, 1);
	return twig_commit_transaction(twig_isb(inode));
}

/* fdatasync is fsync: the log holds the inode item either way */
int twig_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	int ret = twig_sync_file(file, start, end);

	twig_op_done(twig_isb(file_inode(file)), TWIG_OP_FSYNC);
	return ret;
}

static loff_t twig_seek_data_hole(struct file *file, loff_t offset, int whence)
{
	struct inode *inode = file_inode(file);
	bool want_data = whence == SEEK_DATA;
	struct twig_map map;
	u64 pos = offset;
	bool is_data;
	u64 isize;
	int ret;

	inode_lock_shared(inode);
	ret = filemap_write_and_wait(inode->i_mapping);
	if (ret)
		goto out;
	isize = i_size_read(inode);
	if (offset < 0 || pos >= isize) {
		ret = -ENXIO;
		goto out;
	}
	for (;;) {
		ret = twig_get_map(inode, pos, &map);
		if (ret)
			goto out;
		if (map.kind == TWIG_MAP_INLINE && map.len == 0) {
			/* past the inline data: nothing else follows */
			map.kind = TWIG_MAP_HOLE;
			map.len = U64_MAX - pos;
		}
		is_data = map.kind != TWIG_MAP_HOLE;
		if (is_data == want_data)
			break;
		if (map.len >= isize - pos) {
			pos = isize;
			break;
		}
		pos += map.len;
	}
	if (pos >= isize) {
		if (whence == SEEK_DATA) {
			ret = -ENXIO;
			goto out;
		}
		pos = isize;
	}
	inode_unlock_shared(inode);
	return vfs_setpos(file, pos, inode->i_sb->s_maxbytes);
out:
	inode_unlock_shared(inode);
	return ret;
}

static loff_t twig_llseek(struct file *file, loff_t offset, int whence)
{
	switch (whence) {
	case SEEK_DATA:
	case SEEK_HOLE:
		return twig_seek_data_hole(file, offset, whence);
	default:
		return generic_file_llseek(file, offset, whence);
	}
}

/* sendfile(2), splice(2): a read, counted once whatever the kernel */
static ssize_t twig_splice_read(struct file *in, loff_t *ppos,
				struct pipe_inode_info *pipe, size_t len,
				unsigned int flags)
{
	ssize_t ret = filemap_splice_read(in, ppos, pipe, len, flags);

	if (!TWIG_SPLICE_READS_ITER)
		twig_op_done(twig_isb(file_inode(in)), TWIG_OP_READ);
	return ret;
}

const struct file_operations twig_file_operations = {
	.llseek		= twig_llseek,
	.read_iter	= twig_file_read_iter,
	.write_iter	= twig_file_write_iter,
	.mmap		= twig_file_mmap,
	.open		= twig_file_open,
	.fsync		= twig_fsync,
	.splice_read	= twig_splice_read,
	.splice_write	= iter_file_splice_write,
	.fallocate	= twig_fallocate,
};

const struct inode_operations twig_file_inode_operations = {
	.setattr	= twig_setattr,
	.getattr	= twig_getattr,
	.listxattr	= twig_listxattr,
	TWIG_ACL_INODE_OPERATIONS,
};
