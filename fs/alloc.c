// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs block allocator: the on-disk bitmap (format.h), one bit per sector.
 *
 * Two bitmaps in memory: @alloc_committed is the state the last commit wrote,
 * @alloc_working carries the running transaction's allocations and frees.
 * A sector may be handed out only if it is clear in both (@alloc_busy is
 * their OR, kept up to date so a search is one bitmap walk): a block freed
 * by the running transaction is still referenced by the committed trees, so
 * it stays "pinned" until the commit that frees it is on disk.  After that
 * commit, committed := working.  A block allocated and freed in the same
 * transaction was never committed, so it is free again at once.
 *
 * A commit freezes its transaction T and lets writers into T + 1 before it
 * writes (transaction.c): twig_alloc_freeze() takes the bitmap T will
 * write (@alloc_written) and ORs it into @alloc_committed, so that while
 * T is being written a block T named counts as committed: T + 1 freeing
 * it pins it (it is still to be written, and T's superblock will name it),
 * and a block T + 1 allocates and frees is free at once, as before.  T's
 * own pins move to @pinned_committing.  When T's superblock is on disk,
 * twig_alloc_committed() sets committed := @alloc_written, which frees
 * T's pins and keeps T + 1's.
 *
 * Data is allocated outside any transaction: writeback allocates a run,
 * writes it, and only then opens a handle to insert the extent item that
 * names it, so no handle waits for data I/O.  Until that item is in a
 * transaction, the run is "pending" (struct twig_data_alloc, on
 * @data_pending): set in working, so nobody else gets it, but left out of
 * the bitmap a commit writes (@alloc_written) and of its bytes_used, and
 * clear in committed afterwards, because no committed extent names it.  A
 * crash then loses only the unsynced write, and fsck finds nothing leaked.
 * twig_data_alloc_owned(), under the handle that inserted the item, turns
 * the run into an ordinary allocation of that handle's transaction; the
 * commit waits for the handle, so it writes the item and the bits together.
 *
 * Space accounting: transactions reserve metadata space up front
 * (twig_reserve_meta(), a worst-case number of tree blocks per item), so a
 * tree operation rarely meets ENOSPC halfway; @global_reserve is kept back
 * from everyone except deletes (twig_start_transaction_reserved()), so that
 * freeing space still works on a full filesystem.  Commits allocate nothing:
 * the bitmap copies and the superblock have fixed places.
 */
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "twigfs.h"

static u64 twig_nodesects(struct twig_fs_info *fs)
{
	return fs->nodesize >> TWIG_SECTOR_SHIFT;
}

/* Worst case per item: CoW of the whole path plus a split at every level. */
static u64 twig_meta_per_item(struct twig_fs_info *fs)
{
	return 2ULL * (READ_ONCE(fs->root_level) + 3) * fs->nodesize;
}

/* KUnit fault injection: fail the Nth allocation from now. */
static bool twig_inject_fail(struct twig_fs_info *fs)
{
	return atomic_read(&fs->inject_alloc_fail) > 0 &&
	       atomic_dec_return(&fs->inject_alloc_fail) == 0;
}

/* First run of @n sectors clear in @busy, aligned to @align, in [from, to). */
static u64 twig_find_free(struct twig_fs_info *fs, u64 from, u64 to, u64 n,
			  u64 align)
{
	u64 pos = round_up(from, align);

	while (pos + n <= to) {
		u64 z = find_next_zero_bit_le(fs->alloc_busy, to, pos);
		u64 b;

		pos = round_up(z, align);
		if (pos + n > to)
			break;
		b = find_next_bit_le(fs->alloc_busy, pos + n, pos);
		if (b >= pos + n)
			return pos;
		pos = b + 1;
	}
	return U64_MAX;
}

static void twig_set_range(struct twig_fs_info *fs, u64 start, u64 n)
{
	u64 i;

	for (i = start; i < start + n; i++) {
		__set_bit_le(i, fs->alloc_working);
		__set_bit_le(i, fs->alloc_busy);
	}
	fs->free_sectors -= n;
}

/*
 * Allocate @n sectors aligned to @align, next-fit from *@hint.  The caller
 * has checked the space accounting; this can still fail on fragmentation.
 */
static int twig_alloc_sectors(struct twig_fs_info *fs, u64 n, u64 align,
			      u64 *hint, u64 *bytenr)
{
	u64 pos;

	pos = twig_find_free(fs, *hint, fs->alloc_nbits, n, align);
	if (pos == U64_MAX)
		pos = twig_find_free(fs, 0, min(*hint + n, fs->alloc_nbits),
				     n, align);
	if (pos == U64_MAX)
		return -ENOSPC;
	twig_set_range(fs, pos, n);
	*hint = pos + n;
	*bytenr = pos << TWIG_SECTOR_SHIFT;
	return 0;
}

/*
 * Clear [bytenr, bytenr + bytes) in the working bitmap, alloc_lock held.
 * The range comes from the tree (an extent item, a block pointer), so a
 * crafted or damaged disk can name sectors past the device or not allocated
 * in the bitmap: that is -EUCLEAN with nothing freed, not a kernel bug.
 */
static int __twig_free_sectors(struct twig_fs_info *fs, u64 bytenr,
			       u64 bytes)
{
	u64 start = bytenr >> TWIG_SECTOR_SHIFT;
	/* rounded up without round_up(), which would wrap at U64_MAX */
	u64 n = (bytes >> TWIG_SECTOR_SHIFT) +
		!!(bytes & (TWIG_SECTORSIZE - 1));
	u64 i;

	if (!IS_ALIGNED(bytenr, TWIG_SECTORSIZE) || n > fs->alloc_nbits ||
	    start > fs->alloc_nbits - n)
		return -EUCLEAN;
	for (i = start; i < start + n; i++)
		if (!test_bit_le(i, fs->alloc_working))
			return -EUCLEAN;
	for (i = start; i < start + n; i++) {
		__clear_bit_le(i, fs->alloc_working);
		/*
		 * Once the running transaction has an fsync log, the log
		 * may name what is freed now (an extent it copied): keep
		 * every free busy until the commit (tree-log.c).
		 */
		if (test_bit_le(i, fs->alloc_committed) || fs->log_pin) {
			fs->pinned_sectors++;
		} else {
			__clear_bit_le(i, fs->alloc_busy);
			fs->free_sectors++;
		}
	}
	return 0;
}

static int twig_free_sectors(struct twig_fs_info *fs, u64 bytenr, u64 bytes)
{
	int ret;

	spin_lock(&fs->alloc_lock);
	ret = __twig_free_sectors(fs, bytenr, bytes);
	spin_unlock(&fs->alloc_lock);
	if (ret)
		pr_err_ratelimited("twigfs (%s): freeing sectors [%llu, +%llu) not allocated in the bitmap\n",
				   twig_fs_id(fs), bytenr, bytes);
	return ret;
}

/* A tree block, nodesize-aligned, charged to the handle's reservation. */
int twig_alloc_tree_block(struct twig_trans *trans, u64 *bytenr)
{
	struct twig_fs_info *fs = trans->fs;
	int ret;

	if (twig_inject_fail(fs))
		return -ENOSPC;
	spin_lock(&fs->alloc_lock);
	ret = twig_alloc_sectors(fs, twig_nodesects(fs), twig_nodesects(fs),
				 &fs->alloc_hint_meta, bytenr);
	if (!ret) {
		u64 used = min_t(u64, trans->reserved, fs->nodesize);

		trans->reserved -= used;
		fs->meta_reserved -= used;
	}
	spin_unlock(&fs->alloc_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(twig_alloc_tree_block);

/*
 * Free the block of @eb.  One written by an earlier transaction stays
 * pinned until this one commits; one allocated by this very transaction
 * was never written and is forgotten now.
 */
int twig_free_tree_block(struct twig_trans *trans, struct twig_eb *eb)
{
	if (twig_header_generation(eb) == trans->transid)
		twig_eb_forget(eb);
	return twig_free_sectors(trans->fs, eb->start, eb->len);
}

/*
 * Space for data, in whole sectors, never eating reserved space; no handle
 * needed.  The run stays pending (left out of commits) until
 * twig_data_alloc_owned() or twig_data_alloc_drop().
 */
int twig_alloc_data(struct twig_fs_info *fs, u64 bytes,
		    struct twig_data_alloc *da)
{
	u64 n = DIV_ROUND_UP(bytes, fs->sectorsize);
	u64 keep;
	int ret;

	if (!n)
		return -EINVAL;
	if (twig_inject_fail(fs))
		return -ENOSPC;
	spin_lock(&fs->alloc_lock);
	keep = DIV_ROUND_UP(fs->meta_reserved + fs->global_reserve,
			    fs->sectorsize);
	if (fs->free_sectors < n + keep)
		ret = -ENOSPC;
	else
		ret = twig_alloc_sectors(fs, n, 1, &fs->alloc_hint_data,
					 &da->bytenr);
	if (!ret) {
		da->bytes = n << TWIG_SECTOR_SHIFT;
		list_add_tail(&da->list, &fs->data_pending);
		fs->pending_sectors += n;
	}
	spin_unlock(&fs->alloc_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(twig_alloc_data);

/* Under @trans, whose tree now names @da: commit it with @trans. */
void twig_data_alloc_owned(struct twig_trans *trans,
			   struct twig_data_alloc *da)
{
	struct twig_fs_info *fs = trans->fs;

	spin_lock(&fs->alloc_lock);
	list_del_init(&da->list);
	fs->pending_sectors -= da->bytes >> TWIG_SECTOR_SHIFT;
	spin_unlock(&fs->alloc_lock);
}
EXPORT_SYMBOL_IF_KUNIT(twig_data_alloc_owned);

/*
 * The write failed, or no extent will name @da: free it, with or without a
 * handle.  No commit wrote it, so it is free again at once; in one go with
 * leaving the list, or a commit in between would write it as used.  The
 * run is our own allocation, never read from disk: failing to free it is a
 * kernel bug.
 */
void twig_data_alloc_drop(struct twig_fs_info *fs, struct twig_data_alloc *da)
{
	int ret;

	spin_lock(&fs->alloc_lock);
	list_del_init(&da->list);
	fs->pending_sectors -= da->bytes >> TWIG_SECTOR_SHIFT;
	ret = __twig_free_sectors(fs, da->bytenr, da->bytes);
	spin_unlock(&fs->alloc_lock);
	WARN_ON_ONCE(ret);
}

/*
 * A log block (tree-log.c): nodesize-aligned, free in both bitmaps, kept
 * pending (never in a commit's bitmap) until the commit that makes the log
 * obsolete is on disk, then dropped.  From now until that commit every
 * free is pinned, so nothing the log names is reused.
 */
int twig_alloc_log_block(struct twig_fs_info *fs, struct twig_data_alloc *da)
{
	u64 keep;
	int ret;

	spin_lock(&fs->alloc_lock);
	keep = DIV_ROUND_UP(fs->meta_reserved + fs->global_reserve,
			    fs->sectorsize);
	if (fs->free_sectors < twig_nodesects(fs) + keep)
		ret = -ENOSPC;
	else
		ret = twig_alloc_sectors(fs, twig_nodesects(fs),
					 twig_nodesects(fs),
					 &fs->alloc_hint_meta, &da->bytenr);
	if (!ret) {
		da->bytes = fs->nodesize;
		list_add_tail(&da->list, &fs->data_pending);
		fs->pending_sectors += twig_nodesects(fs);
		fs->log_pin = true;
	}
	spin_unlock(&fs->alloc_lock);
	return ret;
}

/*
 * Log replay (tree-log.c): take [bytenr, bytenr + bytes), which must be
 * inside the device and free in both bitmaps, else -EUCLEAN.  With @da the
 * range stays pending like a log block; without, it is an ordinary
 * allocation of the running transaction (a logged extent).
 */
int twig_alloc_claim(struct twig_fs_info *fs, u64 bytenr, u64 bytes,
		     struct twig_data_alloc *da)
{
	u64 start = bytenr >> TWIG_SECTOR_SHIFT;
	u64 n = bytes >> TWIG_SECTOR_SHIFT;
	u64 i;
	int ret = 0;

	if (!n || !IS_ALIGNED(bytenr | bytes, TWIG_SECTORSIZE) ||
	    n > fs->alloc_nbits || start > fs->alloc_nbits - n)
		return -EUCLEAN;
	spin_lock(&fs->alloc_lock);
	for (i = start; i < start + n; i++)
		if (test_bit_le(i, fs->alloc_busy))
			ret = -EUCLEAN;
	if (!ret) {
		twig_set_range(fs, start, n);
		if (da) {
			da->bytenr = bytenr;
			da->bytes = bytes;
			list_add_tail(&da->list, &fs->data_pending);
			fs->pending_sectors += n;
		}
	}
	spin_unlock(&fs->alloc_lock);
	return ret;
}

int twig_free_data(struct twig_fs_info *fs, struct twig_trans *trans,
		   u64 bytenr, u64 bytes)
{
	return twig_free_sectors(fs, bytenr, bytes);
}
EXPORT_SYMBOL_IF_KUNIT(twig_free_data);

/* Reserve worst-case metadata space for @items item changes. */
int twig_reserve_meta(struct twig_trans *trans, unsigned int items)
{
	struct twig_fs_info *fs = trans->fs;
	u64 need = items * twig_meta_per_item(fs);
	u64 avail;
	int ret = 0;

	spin_lock(&fs->alloc_lock);
	avail = fs->free_sectors << TWIG_SECTOR_SHIFT;
	avail -= min(avail, fs->meta_reserved);
	if (!trans->use_reserve)
		avail -= min(avail, fs->global_reserve);
	if (need > avail) {
		ret = -ENOSPC;
	} else {
		fs->meta_reserved += need;
		trans->reserved += need;
	}
	spin_unlock(&fs->alloc_lock);
	return ret;
}

void twig_release_meta(struct twig_trans *trans)
{
	struct twig_fs_info *fs = trans->fs;

	spin_lock(&fs->alloc_lock);
	fs->meta_reserved -= trans->reserved;
	trans->reserved = 0;
	spin_unlock(&fs->alloc_lock);
}

/* Set in the working bitmap: neither free nor pinned (alloc_lock held). */
static u64 twig_working_sectors(struct twig_fs_info *fs)
{
	return fs->alloc_nbits - fs->free_sectors - fs->pinned_sectors -
	       fs->pinned_committing;
}

/*
 * What the trees name, as a commit records it: the working bitmap without
 * pending data runs.  Still during a commit even while data runs come and
 * go, since allocating or dropping one changes free and pending alike.
 */
u64 twig_bytes_used(struct twig_fs_info *fs)
{
	u64 used;

	spin_lock(&fs->alloc_lock);
	used = twig_working_sectors(fs) - fs->pending_sectors;
	spin_unlock(&fs->alloc_lock);
	return used << TWIG_SECTOR_SHIFT;
}

/* Free in both bitmaps, i.e. not counting blocks pinned until commit. */
u64 twig_bytes_free(struct twig_fs_info *fs)
{
	return READ_ONCE(fs->free_sectors) << TWIG_SECTOR_SHIFT;
}
EXPORT_SYMBOL_IF_KUNIT(twig_bytes_free);

u64 twig_bytes_avail(struct twig_fs_info *fs)
{
	u64 free = twig_bytes_free(fs);

	return free - min(free, fs->global_reserve);
}

/* Everything allocated, pending data runs included (space.c's limit). */
u64 twig_bytes_allocated(struct twig_fs_info *fs)
{
	u64 taken;

	spin_lock(&fs->alloc_lock);
	taken = twig_working_sectors(fs);
	spin_unlock(&fs->alloc_lock);
	return taken << TWIG_SECTOR_SHIFT;
}

/* ---- commit ---- */

/*
 * The commit froze its transaction (no handles open): take the bitmap it
 * will write, the working bitmap without the pending data runs, into
 * @alloc_written, and count it as committed for the frees of the next
 * transaction (see the top of this file).  Returns the bytes it names,
 * the superblock's bytes_used.
 */
u64 twig_alloc_freeze(struct twig_fs_info *fs)
{
	struct twig_data_alloc *da;
	u64 i, end, used;

	spin_lock(&fs->alloc_lock);
	used = twig_working_sectors(fs) - fs->pending_sectors;
	memcpy(fs->alloc_written, fs->alloc_working, fs->alloc_map_bytes);
	list_for_each_entry(da, &fs->data_pending, list) {
		end = (da->bytenr + da->bytes) >> TWIG_SECTOR_SHIFT;
		for (i = da->bytenr >> TWIG_SECTOR_SHIFT; i < end; i++)
			__clear_bit_le(i, fs->alloc_written);
	}
	bitmap_or(fs->alloc_committed, fs->alloc_committed, fs->alloc_written,
		  fs->alloc_map_longs * BITS_PER_LONG);
	fs->pinned_committing = fs->pinned_sectors;
	fs->pinned_sectors = 0;
	/* what the log of the frozen transaction names is pinned now */
	fs->log_pin = false;
	spin_unlock(&fs->alloc_lock);
	return used << TWIG_SECTOR_SHIFT;
}

/*
 * Write @alloc_written into the copy the superblock does not name.  It
 * stays still until the next freeze, which waits for this commit.
 */
int twig_alloc_write(struct twig_fs_info *fs, u8 *copy, u32 *csum)
{
	struct twig_super_block *sb = fs->super_copy;
	u8 next = !sb->alloc_copy;
	u64 at = le64_to_cpu(sb->alloc_start) +
		 next * le64_to_cpu(sb->alloc_bytes);

	*copy = next;
	*csum = twig_csum(fs->alloc_written, fs->alloc_map_bytes);
	return twig_dev_write(fs, at, fs->alloc_written, fs->alloc_map_bytes,
			      0);
}

/*
 * The superblock naming the new copy is on disk: committed := what was
 * written, which unpins the frozen transaction's frees and leaves pending
 * runs (still set in working, hence busy) uncommitted.
 */
void twig_alloc_committed(struct twig_fs_info *fs)
{
	spin_lock(&fs->alloc_lock);
	memcpy(fs->alloc_committed, fs->alloc_written, fs->alloc_map_bytes);
	bitmap_or(fs->alloc_busy, fs->alloc_committed, fs->alloc_working,
		  fs->alloc_map_longs * BITS_PER_LONG);
	fs->free_sectors += fs->pinned_committing;
	fs->pinned_committing = 0;
	spin_unlock(&fs->alloc_lock);
}

/* ---- mount ---- */

static int twig_alloc_load(struct twig_fs_info *fs)
{
	struct twig_super_block *sb = fs->super_copy;
	u64 start = le64_to_cpu(sb->alloc_start);
	u64 bytes = le64_to_cpu(sb->alloc_bytes);
	u64 at = start + sb->alloc_copy * bytes;
	unsigned int tail;
	u32 csum;
	u8 last;
	int ret;

	if (sb->alloc_copy > 1 || bytes < fs->alloc_map_bytes ||
	    start < TWIG_SUPER_OFFSET + TWIG_SUPER_SIZE ||
	    start + 2 * bytes > fs->total_bytes) {
		pr_err("twigfs (%s): allocation bitmap location invalid\n",
		       twig_fs_id(fs));
		return -EUCLEAN;
	}
	ret = twig_dev_read(fs, at, fs->alloc_committed, fs->alloc_map_bytes);
	if (ret)
		return ret;
	csum = twig_csum(fs->alloc_committed, fs->alloc_map_bytes);
	if (csum != le32_to_cpu(sb->alloc_csum)) {
		pr_err("twigfs (%s): allocation bitmap %c checksum %08x, expected %08x\n",
		       twig_fs_id(fs), 'A' + sb->alloc_copy,
		       csum, le32_to_cpu(sb->alloc_csum));
		return -EUCLEAN;
	}
	/*
	 * Bits past the last sector are counted by memweight() as sectors in
	 * use that do not exist: free_sectors would underflow on a full
	 * filesystem and every reservation succeed.
	 */
	tail = fs->alloc_nbits % 8;
	last = ((u8 *)fs->alloc_committed)[fs->alloc_map_bytes - 1];
	if (tail && last >> tail) {
		pr_err("twigfs (%s): allocation bitmap %c has bits set past the last sector (last byte %02x, %llu sectors)\n",
		       twig_fs_id(fs), 'A' + sb->alloc_copy, last,
		       fs->alloc_nbits);
		return -EUCLEAN;
	}
	return 0;
}

/*
 * The first MiB (superblock included) and both bitmap copies are never
 * handed out, whatever the bitmap says: a bitmap that frees them (its
 * checksum valid) would let a tree block land on the superblock, which
 * the next commit overwrites.  They are set in the committed bitmap (the
 * next commit writes them), as btrfs excludes its superblock copies from
 * every block group whatever its free-space cache says.
 */
static void twig_alloc_reserve_format(struct twig_fs_info *fs)
{
	struct twig_super_block *sb = fs->super_copy;
	u64 end = (le64_to_cpu(sb->alloc_start) +
		   2 * le64_to_cpu(sb->alloc_bytes)) >> TWIG_SECTOR_SHIFT;
	u64 i, n = 0;

	for (i = 0; i < end; i++)
		if (!__test_and_set_bit_le(i, fs->alloc_committed))
			n++;
	if (n)
		pr_warn("twigfs (%s): allocation bitmap: %llu sectors of the reserved area [0, %llu) (superblock, bitmaps) were free; marked in use\n",
			twig_fs_id(fs), n,
			end << TWIG_SECTOR_SHIFT);
}

int twig_alloc_init(struct twig_fs_info *fs)
{
	size_t longs;
	u64 used;
	int ret;

	spin_lock_init(&fs->alloc_lock);
	INIT_LIST_HEAD(&fs->data_pending);
	fs->pending_sectors = 0;
	fs->log_pin = false;
	fs->alloc_nbits = fs->total_bytes >> TWIG_SECTOR_SHIFT;
	fs->alloc_map_bytes = DIV_ROUND_UP(fs->alloc_nbits, 8);
	/* find_*_bit_le() and bitmap_or() read whole longs */
	fs->alloc_map_longs = DIV_ROUND_UP(fs->alloc_map_bytes, sizeof(long));
	longs = fs->alloc_map_longs * sizeof(long);
	fs->alloc_committed = kvzalloc(longs, GFP_KERNEL);
	fs->alloc_working = kvzalloc(longs, GFP_KERNEL);
	fs->alloc_busy = kvzalloc(longs, GFP_KERNEL);
	fs->alloc_written = kvzalloc(longs, GFP_KERNEL);
	if (!fs->alloc_committed || !fs->alloc_working || !fs->alloc_busy ||
	    !fs->alloc_written) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = twig_alloc_load(fs);
	if (ret)
		goto fail;
	twig_alloc_reserve_format(fs);
	memcpy(fs->alloc_working, fs->alloc_committed, fs->alloc_map_bytes);
	memcpy(fs->alloc_busy, fs->alloc_committed, fs->alloc_map_bytes);
	used = memweight(fs->alloc_committed, fs->alloc_map_bytes);
	fs->free_sectors = fs->alloc_nbits - used;
	fs->pinned_sectors = 0;
	fs->pinned_committing = 0;
	fs->meta_reserved = 0;
	fs->global_reserve = min_t(u64, 64ULL * fs->nodesize,
				   fs->total_bytes / 16);
	fs->alloc_hint_meta = 0;
	fs->alloc_hint_data = fs->alloc_nbits / 2;
	atomic_set(&fs->inject_alloc_fail, 0);
	return 0;
fail:
	twig_alloc_destroy(fs);
	return ret;
}

/*
 * Mount, before the first allocation: the tree names [@bytenr, + @bytes)
 * (twig_tree_claim()), so it is in use whatever the loaded bitmap says.
 * Returns how many of its sectors the bitmap had free.
 */
u64 twig_alloc_mark_used(struct twig_fs_info *fs, u64 bytenr, u64 bytes)
{
	u64 s = bytenr >> TWIG_SECTOR_SHIFT;
	u64 end = min(DIV_ROUND_UP(bytenr + bytes, TWIG_SECTORSIZE),
		      fs->alloc_nbits);
	u64 n = 0;

	spin_lock(&fs->alloc_lock);
	for (; s < end; s++) {
		if (__test_and_set_bit_le(s, fs->alloc_committed))
			continue;
		__set_bit_le(s, fs->alloc_working);
		__set_bit_le(s, fs->alloc_busy);
		n++;
	}
	fs->free_sectors -= n;
	spin_unlock(&fs->alloc_lock);
	return n;
}

void twig_alloc_destroy(struct twig_fs_info *fs)
{
	kvfree(fs->alloc_committed);
	kvfree(fs->alloc_working);
	kvfree(fs->alloc_busy);
	kvfree(fs->alloc_written);
	fs->alloc_committed = NULL;
	fs->alloc_working = NULL;
	fs->alloc_busy = NULL;
	fs->alloc_written = NULL;
}

/* ---- inode numbers ---- */

/*
 * The counter stops at TWIG_MAX_OBJECTID + 1 instead of wrapping: a number
 * is never handed out twice, even after the last one was refused.
 */
int twig_new_objectid(struct twig_fs_info *fs, u64 *objectid)
{
	s64 id = atomic64_read(&fs->next_objectid);

	do {
		if ((u64)id > TWIG_MAX_OBJECTID)
			return -EOVERFLOW;
	} while (!atomic64_try_cmpxchg(&fs->next_objectid, &id, id + 1));
	*objectid = id;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(twig_new_objectid);
