// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs EXTENT_DATA items: how a file's bytes map to extents (reading
 * them: twig_find_extent(), twig_get_map(), the inline extent), and every
 * change of them: inserting, cutting and dropping a range with the sectors
 * it owned, inline extents and their conversion to a sector, the swap that
 * ends a CoW write (writeback in pagecache.c, O_DIRECT in direct.c) and
 * truncate.  btrfs keeps this layer apart from the page cache too; here
 * the page cache and writeback are in pagecache.c, fallocate in falloc.c.
 *
 * EXTENT_DATA items of one file change only under its extent_mutex.  Lock
 * order: page lock, then extent_mutex, then tree locks (inside the core).
 */
#include <linux/fs.h>
#include <linux/pagemap.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include "vfs.h"

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
int twig_find_extent(struct twig_fs_info *fs, u64 ino, u64 pos,
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
int twig_read_inline(struct inode *inode, void *buf, u32 max)
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
int twig_insert_fext(struct twig_trans *trans, struct inode *inode,
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
int twig_drop_range(struct twig_trans *trans, struct inode *inode,
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
int twig_convert_inline_locked(struct inode *inode)
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
 * reached (the floor, twig_inode_info.trunc_floor, which every INODE_ITEM
 * written during the truncate respects), as btrfs does: a commit between
 * two handles (the truncate of a file of many extents takes several)
 * then never has an extent past i_size, and leaves the file as it was up
 * to that size.
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

/* A shrinking truncate's floor (twig_inode_info.trunc_floor). */
static void twig_set_trunc_floor(struct inode *inode, u64 floor)
{
	spin_lock(&inode->i_lock);
	TWIG_I(inode)->trunc_floor = floor;
	spin_unlock(&inode->i_lock);
}

/*
 * The end of a shrinking truncate.  A failure leaves the file where the
 * drop reached (the old size if no round finished), which is what every
 * INODE_ITEM written since says: i_size goes back there, so that no later
 * update (a touch, an atime) stores the new size over extents still
 * there, and an extension never shows their data past it.
 */
static void twig_trunc_end(struct inode *inode, u64 new_size, int ret)
{
	struct twig_inode_info *ti = TWIG_I(inode);

	spin_lock(&inode->i_lock);
	if (ret && ti->trunc_floor > new_size)
		i_size_write(inode, ti->trunc_floor);
	ti->trunc_floor = 0;
	spin_unlock(&inode->i_lock);
}

/* setattr(ATTR_SIZE), under i_rwsem: resize the page cache and extents. */
int twig_truncate_extents(struct inode *inode, u64 new_size)
{
	struct twig_inode_info *ti = TWIG_I(inode);
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_trans *trans;
	u64 old_size = i_size_read(inode);
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
	/*
	 * Until its drop has reached them, the extents past the new size
	 * are still there: no INODE_ITEM written meanwhile (the tail's
	 * writeback, ->dirty_inode, another handle's update) may say less.
	 */
	twig_set_trunc_floor(inode, old_size);
	/* the same size: only what fallocate put past EOF goes */
	if (new_size != old_size) {
		truncate_setsize(inode, new_size);
		ret = twig_zero_tail(inode, new_size);
		/*
		 * The zeroed tail reaches the disk before the handles below:
		 * a commit of the new size without writeback (an fsync of the
		 * directory) would otherwise keep the old bytes past it in
		 * the last block, which growing the file after a crash shows
		 * (btrfs zeroes that block on the way up instead).
		 */
		if (!ret && (new_size & (PAGE_SIZE - 1)))
			ret = filemap_write_and_wait_range(inode->i_mapping,
							   new_size,
							   new_size | (PAGE_SIZE - 1));
		if (ret) {
			twig_trunc_end(inode, new_size, ret);
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
			int err;

			/*
			 * A commit now keeps the file up to where this
			 * handle's drop reached; the last one ends the floor.
			 */
			twig_set_trunc_floor(inode, ret ? min(from, old_size) : 0);
			err = twig_update_inode(trans, inode);
			if (err)
				ret = err;
		}
		if (ret && ret != -EAGAIN)
			twig_abort_transaction(trans, ret);
		twig_end_transaction(trans);
	} while (ret == -EAGAIN);
	twig_trunc_end(inode, new_size, ret);
	mutex_unlock(&ti->extent_mutex);
	return ret;
}

/* ---- the second half of a CoW write ---- */

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
