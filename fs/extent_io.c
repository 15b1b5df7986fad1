// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs extent buffers: the cache of tree blocks and their I/O; every block
 * read passes the tree checker (tree-checker.c) before it is cached.
 *
 * The cache is an xarray indexed by sector number.  Lookups run under RCU
 * and take a reference with refcount_inc_not_zero(); the cache itself holds
 * one reference and the dirty list another, so an eb whose count is 1 is
 * clean and unused and the shrinker may drop it (under the xarray lock,
 * with refcount_dec_if_one(), so a concurrent lookup either got its
 * reference first or finds the slot empty and reads the block again).
 * Freed ebs go through call_rcu() because lookups may still be looking.
 *
 * A block's eb is never reused for a different block: when a freed address
 * is handed out again, twig_new_eb() replaces the old eb in the cache and
 * marks it stale, so a task still holding the old one keeps valid memory
 * with the old (consistent) contents.
 *
 * Without a block device (TWIG_FS_MEMONLY, for KUnit) the "device" is an
 * xarray of pages, fs->memdev; everything above twig_dev_read()/write() is
 * the same code.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/moduleparam.h>
#include <linux/list_sort.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <kunit/visibility.h>

#include "locking.h"

/* ---- the device: a block device, or pages in memory for tests ---- */

static int twig_memdev_rw(struct twig_fs_info *fs, u64 bytenr, void *buf,
			  size_t len, bool write)
{
	while (len) {
		unsigned long idx = bytenr >> PAGE_SHIFT;
		size_t off = offset_in_page(bytenr);
		size_t n = min_t(size_t, len, PAGE_SIZE - off);
		struct page *page = xa_load(&fs->memdev, idx);

		if (!page && write) {
			page = alloc_page(GFP_NOFS | __GFP_ZERO);
			if (!page)
				return -ENOMEM;
			if (xa_err(xa_store(&fs->memdev, idx, page, GFP_NOFS))) {
				__free_page(page);
				return -ENOMEM;
			}
		}
		if (write)
			memcpy_to_page(page, off, buf, n);
		else if (page)
			memcpy_from_page(buf, page, off, n);
		else
			memset(buf, 0, n);
		buf += n;
		bytenr += n;
		len -= n;
	}
	return 0;
}

void twig_memdev_free(struct twig_fs_info *fs)
{
	struct page *page;
	unsigned long idx;

	xa_for_each(&fs->memdev, idx, page)
		__free_page(page);
	xa_destroy(&fs->memdev);
}
EXPORT_SYMBOL_IF_KUNIT(twig_memdev_free);

static struct page *twig_buf_page(void *p)
{
	return is_vmalloc_addr(p) ? vmalloc_to_page(p) : virt_to_page(p);
}

/* Map [buf, buf + len) into @bio; returns the bytes added. */
static size_t twig_bio_add_buf(struct bio *bio, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		void *p = buf + done;
		size_t n = min_t(size_t, len - done,
				 PAGE_SIZE - offset_in_page(p));

		if (bio_add_page(bio, twig_buf_page(p), n,
				 offset_in_page(p)) != n)
			break;
		done += n;
	}
	return done;
}

/* Every synchronous bio of twigfs: a wait under a handle is counted. */
int twig_submit_bio_wait(struct twig_fs_info *fs, struct bio *bio)
{
	u64 start = twig_io_wait_start();
	int ret = submit_bio_wait(bio);

	twig_io_wait_end(fs, start);
	return ret;
}

/* One page of file data at @bytenr, read or written (@opf) and waited for. */
int twig_bio_page(struct twig_fs_info *fs, u64 bytenr, struct page *page,
		  blk_opf_t opf)
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

static int twig_bdev_rw(struct twig_fs_info *fs, u64 bytenr, void *buf,
			size_t len, blk_opf_t opf)
{
	while (len) {
		unsigned int vecs = min_t(size_t, BIO_MAX_VECS,
					  DIV_ROUND_UP(len, PAGE_SIZE) + 1);
		struct bio *bio = bio_alloc(fs->bdev, vecs, opf, GFP_NOFS);
		size_t n;
		int ret;

		bio->bi_iter.bi_sector = bytenr >> SECTOR_SHIFT;
		n = twig_bio_add_buf(bio, buf, len);
		ret = twig_submit_bio_wait(fs, bio);
		bio_put(bio);
		if (ret)
			return ret;
		buf += n;
		bytenr += n;
		len -= n;
	}
	return 0;
}

int twig_dev_read(struct twig_fs_info *fs, u64 bytenr, void *buf, size_t len)
{
	if (test_bit(TWIG_FS_MEMONLY, &fs->flags))
		return twig_memdev_rw(fs, bytenr, buf, len, false);
	return twig_bdev_rw(fs, bytenr, buf, len, REQ_OP_READ);
}
EXPORT_SYMBOL_IF_KUNIT(twig_dev_read);

/*
 * Tests only (make crashpoints BREAK=1 must see it fail): superblock writes
 * lose their REQ_PREFLUSH | REQ_FUA, so a commit's blocks and an fsync's
 * log are no longer durable before the superblock that names them.
 */
static bool unordered_super;
module_param(unordered_super, bool, 0644);
MODULE_PARM_DESC(unordered_super, "tests only: write superblocks without flush or FUA");

/* @flags: extra REQ_* flags, e.g. REQ_PREFLUSH | REQ_FUA for the super. */
int twig_dev_write(struct twig_fs_info *fs, u64 bytenr, const void *buf,
		   size_t len, blk_opf_t flags)
{
	if (test_bit(TWIG_FS_MEMONLY, &fs->flags))
		return twig_memdev_rw(fs, bytenr, (void *)buf, len, true);
	if (unlikely(READ_ONCE(unordered_super)))
		flags &= ~(REQ_PREFLUSH | REQ_FUA);
	return twig_bdev_rw(fs, bytenr, (void *)buf, len,
			    REQ_OP_WRITE | REQ_SYNC | flags);
}
EXPORT_SYMBOL_IF_KUNIT(twig_dev_write);

int twig_dev_flush(struct twig_fs_info *fs)
{
	if (test_bit(TWIG_FS_MEMONLY, &fs->flags))
		return 0;
	return blkdev_issue_flush(fs->bdev);
}

/* ---- eb lifetime ---- */

static unsigned long twig_eb_index(u64 bytenr)
{
	return bytenr >> TWIG_SECTOR_SHIFT;
}

static struct twig_eb *twig_alloc_eb(struct twig_fs_info *fs, u64 bytenr,
				     int level, gfp_t extra)
{
	struct twig_eb *eb = kzalloc(sizeof(*eb), GFP_NOFS);

	if (!eb)
		return NULL;
	eb->data = kmalloc(fs->nodesize, GFP_NOFS | extra);
	if (!eb->data) {
		kfree(eb);
		return NULL;
	}
	eb->fs = fs;
	eb->start = bytenr;
	eb->len = fs->nodesize;
	eb->level = level;
	refcount_set(&eb->refs, 1);
	INIT_LIST_HEAD(&eb->dirty_list);
	twig_eb_lock_init(eb);
	return eb;
}

static void twig_free_eb_rcu(struct rcu_head *head)
{
	struct twig_eb *eb = container_of(head, struct twig_eb, rcu);

	kfree(eb->data);
	kfree(eb);
}

static void twig_free_eb(struct twig_eb *eb)
{
	atomic_long_dec(&eb->fs->eb_cached);
	call_rcu(&eb->rcu, twig_free_eb_rcu);
}

void twig_eb_get(struct twig_eb *eb)
{
	refcount_inc(&eb->refs);
}
EXPORT_SYMBOL_IF_KUNIT(twig_eb_get);

void twig_eb_put(struct twig_eb *eb)
{
	if (eb && refcount_dec_and_test(&eb->refs))
		twig_free_eb(eb);
}
EXPORT_SYMBOL_IF_KUNIT(twig_eb_put);

static struct twig_eb *twig_find_eb(struct twig_fs_info *fs, u64 bytenr)
{
	struct twig_eb *eb;

	rcu_read_lock();
	eb = xa_load(&fs->eb_cache, twig_eb_index(bytenr));
	if (eb && !refcount_inc_not_zero(&eb->refs))
		eb = NULL;
	rcu_read_unlock();
	return eb;
}

/*
 * Insert @eb (one reference, the caller's) into the cache.  Returns @eb with
 * a second reference for the cache, or the eb another task inserted first,
 * with a reference for the caller, after freeing @eb.
 */
static struct twig_eb *twig_cache_insert(struct twig_fs_info *fs,
					 struct twig_eb *eb)
{
	struct xarray *xa = &fs->eb_cache;
	struct twig_eb *old;

	refcount_inc(&eb->refs);
	atomic_long_inc(&fs->eb_cached);
	xa_lock(xa);
	old = __xa_cmpxchg(xa, twig_eb_index(eb->start), NULL, eb, GFP_NOFS);
	if (old && !xa_is_err(old))
		refcount_inc(&old->refs);	/* cached: refs >= 1 */
	xa_unlock(xa);
	if (!old)
		return eb;
	kfree(eb->data);
	kfree(eb);
	atomic_long_dec(&fs->eb_cached);
	if (xa_is_err(old))
		return ERR_PTR(xa_err(old));
	return old;
}

/* Remove @eb from the cache if it is still there; drops the cache's ref. */
static void twig_cache_remove(struct twig_eb *eb)
{
	struct xarray *xa = &eb->fs->eb_cache;
	unsigned long idx = twig_eb_index(eb->start);
	bool removed = false;

	set_bit(TWIG_EB_STALE, &eb->bflags);
	xa_lock(xa);
	if (xa_load(xa, idx) == eb) {
		__xa_erase(xa, idx);
		removed = true;
	}
	xa_unlock(xa);
	if (removed)
		twig_eb_put(eb);
}

/* ---- verification: tree-checker.c ---- */

#define twig_eb_err(fs, bytenr, fmt, ...)				\
	pr_err_ratelimited("twigfs (%s): tree block %llu: " fmt "\n",	\
			   twig_fs_id(fs), (bytenr), ##__VA_ARGS__)

/* ---- reading ---- */

static int twig_read_and_verify(struct twig_eb *eb, u64 parent_transid,
				bool quiet)
{
	struct twig_fs_info *fs = eb->fs;
	int ret;

	if (!quiet && twig_should_fail(fs))
		ret = -EIO;
	else
		ret = twig_dev_read(fs, eb->start, eb->data, eb->len);
	if (ret) {
		if (!quiet)
			twig_eb_err(fs, eb->start, "read error %d", ret);
		return ret;
	}
	return twig_verify_read(fs, eb, eb->level, parent_transid, quiet);
}

/*
 * A cached, read @eb (with a reference) against what the parent pointer
 * promises (@parent_transid 0: unknown): @eb, or -EUCLEAN with the
 * reference dropped, logged unless @quiet.
 */
static struct twig_eb *twig_eb_check_cached(struct twig_eb *eb, int level,
					    u64 parent_transid, bool quiet)
{
	if (eb->level == level &&
	    (!parent_transid || twig_header_generation(eb) == parent_transid))
		return eb;
	if (!quiet)
		twig_eb_err(eb->fs, eb->start, "cached level %u gen %llu, expected %d %llu",
			    eb->level, twig_header_generation(eb), level,
			    parent_transid);
	twig_eb_put(eb);
	return ERR_PTR(-EUCLEAN);
}

/*
 * Concurrent readers of one block: the first inserts the eb with READING
 * set and does the I/O, the others wait for the bit.  @quiet: nothing is
 * logged and no fault is injected (twig_read_eb_unlocked()).
 */
static struct twig_eb *__twig_read_eb(struct twig_fs_info *fs, u64 bytenr,
				      int level, u64 parent_transid,
				      bool quiet)
{
	struct twig_eb *eb;
	int tries = 0;
	int ret;

again:
	eb = twig_find_eb(fs, bytenr);
	if (!eb) {
		struct twig_eb *new = twig_alloc_eb(fs, bytenr, level, 0);

		if (!new)
			return ERR_PTR(-ENOMEM);
		set_bit(TWIG_EB_READING, &new->bflags);
		eb = twig_cache_insert(fs, new);
		if (IS_ERR(eb))
			return eb;
		if (eb == new) {
			ret = twig_read_and_verify(eb, parent_transid, quiet);
			if (!ret)
				set_bit(TWIG_EB_UPTODATE, &eb->bflags);
			else
				twig_cache_remove(eb);
			clear_and_wake_up_bit(TWIG_EB_READING, &eb->bflags);
			if (ret) {
				twig_eb_put(eb);
				return ERR_PTR(ret);
			}
			return eb;
		}
	}
	wait_on_bit(&eb->bflags, TWIG_EB_READING, TASK_UNINTERRUPTIBLE);
	/*
	 * Another task's read failed and dropped the eb.  That read may have
	 * been a quiet one through a pointer gone stale (ctree.c), or for
	 * another generation: read it ourselves, once or twice, so that our
	 * own error is the one reported.
	 */
	if (!test_bit(TWIG_EB_UPTODATE, &eb->bflags) &&
	    test_bit(TWIG_EB_STALE, &eb->bflags) && tries++ < 2) {
		twig_eb_put(eb);
		goto again;
	}
	if (!test_bit(TWIG_EB_UPTODATE, &eb->bflags)) {
		twig_eb_put(eb);
		return ERR_PTR(-EIO);
	}
	return twig_eb_check_cached(eb, level, parent_transid, quiet);
}

/*
 * Get the eb of tree block @bytenr at @level, reading and verifying it if
 * it is not cached.  @parent_transid is the generation the parent pointer
 * records (0 when unknown); a cached eb is checked against it too, cheaply.
 */
struct twig_eb *twig_read_eb(struct twig_fs_info *fs, u64 bytenr, int level,
			     u64 parent_transid)
{
	return __twig_read_eb(fs, bytenr, level, parent_transid, false);
}
EXPORT_SYMBOL_IF_KUNIT(twig_read_eb);

/*
 * The eb of tree block @bytenr if it is cached and read, without
 * sleeping: NULL if not, -EUCLEAN if it is not at @level and
 * @parent_transid, as twig_read_eb() checks.
 */
struct twig_eb *twig_get_cached_eb(struct twig_fs_info *fs, u64 bytenr,
				   int level, u64 parent_transid)
{
	struct twig_eb *eb = twig_find_eb(fs, bytenr);

	if (!eb || !test_bit(TWIG_EB_UPTODATE, &eb->bflags)) {
		twig_eb_put(eb);
		return NULL;
	}
	return twig_eb_check_cached(eb, level, parent_transid, false);
}

/*
 * Read tree block @bytenr into the cache for a search that released its
 * locks first (twig_search_slot()), so no lock above it waits for the
 * disk, as btrfs's read_block_for_search().  With no lock held the
 * pointer may be gone by now: the block may have been freed, even
 * reused.  That is no error of the filesystem, so a block that does not
 * read or verify is dropped silently: the search restarts from the root
 * and, if it still needs the block, reads it under its locks, where
 * errors are reported as usual.  A stale copy left in the cache is
 * harmless: a block is reused only through twig_new_eb(), which replaces
 * it, and a read through a pointer checks the generation.  Returns 0 if
 * the block is now cached.
 */
int twig_read_eb_unlocked(struct twig_fs_info *fs, u64 bytenr, int level,
			  u64 parent_transid)
{
	struct twig_eb *eb = __twig_read_eb(fs, bytenr, level, parent_transid,
					    true);

	if (IS_ERR(eb))
		return PTR_ERR(eb);
	twig_eb_put(eb);
	return 0;
}

/*
 * A new, zeroed, up-to-date eb for a block just allocated at @level, with
 * the header filled in except the generation, which the caller sets.  Any
 * stale eb left in the cache for this address (the block was freed by an
 * earlier transaction) is replaced and marked stale.
 */
struct twig_eb *twig_new_eb(struct twig_fs_info *fs, u64 bytenr, int level)
{
	struct twig_eb *eb = twig_alloc_eb(fs, bytenr, level, __GFP_ZERO);
	struct xarray *xa = &fs->eb_cache;
	struct twig_header *h;
	struct twig_eb *old;

	if (!eb)
		return ERR_PTR(-ENOMEM);
	h = twig_eb_header(eb);
	memcpy(h->fsid, fs->fsid, sizeof(h->fsid));
	h->bytenr = cpu_to_le64(bytenr);
	h->owner = cpu_to_le64(TWIG_FS_TREE_OBJECTID);
	h->level = level;
	set_bit(TWIG_EB_UPTODATE, &eb->bflags);

	refcount_inc(&eb->refs);		/* the cache's */
	atomic_long_inc(&fs->eb_cached);
	xa_lock(xa);
	old = __xa_store(xa, twig_eb_index(bytenr), eb, GFP_NOFS);
	xa_unlock(xa);
	if (xa_is_err(old)) {
		atomic_long_dec(&fs->eb_cached);
		kfree(eb->data);
		kfree(eb);
		return ERR_PTR(xa_err(old));
	}
	if (old) {
		WARN_ON_ONCE(test_bit(TWIG_EB_DIRTY, &old->bflags));
		set_bit(TWIG_EB_STALE, &old->bflags);
		twig_eb_put(old);
	}
	return eb;
}

/*
 * The block of @eb was freed in the transaction that allocated it: it was
 * never written and may be handed out again at once, so drop it from the
 * dirty list and the cache now.
 */
void twig_eb_forget(struct twig_eb *eb)
{
	struct twig_fs_info *fs = eb->fs;
	bool was_dirty = false;

	spin_lock(&fs->dirty_lock);
	if (test_and_clear_bit(TWIG_EB_DIRTY, &eb->bflags)) {
		list_del_init(&eb->dirty_list);
		was_dirty = true;
	}
	spin_unlock(&fs->dirty_lock);
	if (was_dirty)
		twig_eb_put(eb);
	twig_cache_remove(eb);
}

/* Put a block of the running transaction on the list the commit writes. */
void twig_eb_mark_dirty(struct twig_eb *eb)
{
	struct twig_fs_info *fs = eb->fs;

	if (test_bit(TWIG_EB_DIRTY, &eb->bflags))
		return;
	spin_lock(&fs->dirty_lock);
	if (!test_and_set_bit(TWIG_EB_DIRTY, &eb->bflags)) {
		twig_eb_get(eb);
		list_add_tail(&eb->dirty_list, &fs->dirty_list);
	}
	spin_unlock(&fs->dirty_lock);
}

/*
 * Items of @eb changed.  Every eb changed in a transaction was CoW'd into
 * it, so it is mostly on the dirty list already; the call also marks the
 * handle as one an error must abort (twig_abort_transaction()).
 */
void twig_mark_buffer_dirty(struct twig_trans *trans, struct twig_eb *eb)
{
	WARN_ON_ONCE(twig_header_generation(eb) != trans->transid);
	twig_assert_tree_locked(eb);
	trans->dirty = true;
	twig_eb_mark_dirty(eb);
}
EXPORT_SYMBOL_IF_KUNIT(twig_mark_buffer_dirty);

/* ---- writing, at commit ---- */

struct twig_write_ctx {
	atomic_t pending;
	struct completion done;
	int err;
};

static void twig_write_end_io(struct bio *bio)
{
	struct twig_write_ctx *ctx = bio->bi_private;

	if (bio->bi_status)
		WRITE_ONCE(ctx->err, blk_status_to_errno(bio->bi_status));
	bio_put(bio);
	if (atomic_dec_and_test(&ctx->pending))
		complete(&ctx->done);
}

static void twig_submit_eb_write(struct twig_eb *eb,
				 struct twig_write_ctx *ctx)
{
	unsigned int vecs = DIV_ROUND_UP(eb->len, PAGE_SIZE) + 1;
	struct bio *bio;

	bio = bio_alloc(eb->fs->bdev, vecs, REQ_OP_WRITE, GFP_NOFS);
	bio->bi_iter.bi_sector = eb->start >> SECTOR_SHIFT;
	bio->bi_private = ctx;
	bio->bi_end_io = twig_write_end_io;
	WARN_ON(twig_bio_add_buf(bio, eb->data, eb->len) != eb->len);
	atomic_inc(&ctx->pending);
	submit_bio(bio);
}

static int twig_eb_cmp(void *priv, const struct list_head *a,
		       const struct list_head *b)
{
	const struct twig_eb *x = list_entry(a, struct twig_eb, dirty_list);
	const struct twig_eb *y = list_entry(b, struct twig_eb, dirty_list);

	return x->start > y->start;
}

static void twig_eb_csum(struct twig_eb *eb)
{
	twig_eb_header(eb)->csum = cpu_to_le32(twig_csum(eb->data + 4,
							 eb->len - 4));
}

/*
 * The commit froze its transaction (no handles open): take its dirty ebs.
 * Each keeps TWIG_EB_DIRTY and its reference until twig_write_ebs() has
 * written it: the next transaction never changes them (their generation
 * is not its transid, so it CoWs them) and never forgets them (only its
 * own blocks are forgotten when freed), and the shrinker leaves them.
 */
void twig_take_dirty_ebs(struct twig_fs_info *fs, struct list_head *list)
{
	spin_lock(&fs->dirty_lock);
	list_splice_init(&fs->dirty_list, list);
	spin_unlock(&fs->dirty_lock);
}

/*
 * Write the frozen transaction's ebs (@list, from twig_take_dirty_ebs())
 * and wait for all of them, in address order in one plug, each its own
 * bio.  Writers of the next transaction may copy them meanwhile (CoW,
 * under a read lock of theirs), racing with the checksum written into the
 * header here: harmless, as every copy gets its own checksum when it is
 * written, and the rest of the block does not change.
 */
int twig_write_ebs(struct twig_fs_info *fs, struct list_head *list)
{
	struct twig_write_ctx ctx;
	struct blk_plug plug;
	struct twig_eb *eb, *tmp;
	u64 wait_start;
	int ret = 0;

	list_sort(NULL, list, twig_eb_cmp);

	atomic_set(&ctx.pending, 1);
	init_completion(&ctx.done);
	ctx.err = 0;
	blk_start_plug(&plug);
	list_for_each_entry(eb, list, dirty_list) {
		twig_eb_csum(eb);
		ret = twig_verify_write(fs, eb);
		if (ret)
			break;
		if (test_bit(TWIG_FS_MEMONLY, &fs->flags)) {
			ret = twig_dev_write(fs, eb->start, eb->data, eb->len, 0);
			if (ret)
				break;
		} else {
			twig_submit_eb_write(eb, &ctx);
		}
	}
	blk_finish_plug(&plug);
	wait_start = twig_io_wait_start();
	if (!atomic_dec_and_test(&ctx.pending))
		wait_for_completion_io(&ctx.done);
	twig_io_wait_end(fs, wait_start);
	if (!ret)
		ret = READ_ONCE(ctx.err);

	list_for_each_entry_safe(eb, tmp, list, dirty_list) {
		list_del_init(&eb->dirty_list);
		clear_bit(TWIG_EB_DIRTY, &eb->bflags);
		twig_eb_put(eb);
	}
	if (ret)
		pr_err("twigfs (%s): writing tree blocks failed: %d\n",
		       twig_fs_id(fs), ret);
	return ret;
}

/* ---- the shrinker: drop clean ebs nobody uses ---- */

static unsigned long twig_eb_count(struct shrinker *s,
				   struct shrink_control *sc)
{
	struct twig_fs_info *fs = twig_shrinker_private(s);

	return max(atomic_long_read(&fs->eb_cached), 0L);
}

/*
 * Holds the xarray lock for at most nr_to_scan entries; starts where the
 * last scan stopped so repeated scans walk the whole cache.  Ebs held by
 * a path, or dirty (the dirty list's reference), have refs > 1 and stay.
 */
static unsigned long twig_eb_scan(struct shrinker *s,
				  struct shrink_control *sc)
{
	struct twig_fs_info *fs = twig_shrinker_private(s);
	XA_STATE(xas, &fs->eb_cache, fs->eb_shrink_cursor);
	unsigned long scanned = 0, freed = 0;
	struct twig_eb *eb;

	xas_lock(&xas);
	xas_for_each(&xas, eb, ULONG_MAX) {
		if (scanned++ >= sc->nr_to_scan)
			break;
		if (!refcount_dec_if_one(&eb->refs))
			continue;
		xas_store(&xas, NULL);
		set_bit(TWIG_EB_STALE, &eb->bflags);
		twig_free_eb(eb);
		freed++;
	}
	fs->eb_shrink_cursor = eb ? xas.xa_index : 0;
	xas_unlock(&xas);
	sc->nr_scanned = scanned;
	return freed;
}

int twig_eb_cache_init(struct twig_fs_info *fs)
{
	char name[64];

	xa_init(&fs->eb_cache);
	atomic_long_set(&fs->eb_cached, 0);
	spin_lock_init(&fs->dirty_lock);
	INIT_LIST_HEAD(&fs->dirty_list);
	snprintf(name, sizeof(name), "twigfs-eb:%s", twig_fs_id(fs));
	fs->eb_shrinker = twig_shrinker_create(fs, name, twig_eb_count,
					       twig_eb_scan);
	return fs->eb_shrinker ? 0 : -ENOMEM;
}

/*
 * Unmount: the last commit has written everything; after an error the
 * dirty ebs are dropped unwritten.  Waits for the RCU frees so the module
 * can go away.
 */
void twig_eb_cache_destroy(struct twig_fs_info *fs)
{
	struct twig_eb *eb, *tmp;
	unsigned long idx;

	if (fs->eb_shrinker)
		twig_shrinker_destroy(fs->eb_shrinker);
	fs->eb_shrinker = NULL;
	list_for_each_entry_safe(eb, tmp, &fs->dirty_list, dirty_list) {
		list_del_init(&eb->dirty_list);
		clear_bit(TWIG_EB_DIRTY, &eb->bflags);
		twig_eb_put(eb);
	}
	xa_for_each(&fs->eb_cache, idx, eb) {
		xa_erase(&fs->eb_cache, idx);
		WARN_ONCE(refcount_read(&eb->refs) != 1,
			  "twigfs: eb %llu leaked, refs %u\n", eb->start,
			  refcount_read(&eb->refs));
		twig_eb_put(eb);
	}
	xa_destroy(&fs->eb_cache);
	rcu_barrier();
}
