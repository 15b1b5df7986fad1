// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs O_DIRECT, through iomap's direct I/O (iomap_dio_rw()), as btrfs.
 *
 * Reads map the EXTENT_DATA items: a regular extent is IOMAP_MAPPED, no
 * item (or past EOF) IOMAP_HOLE, which iomap fills with zeroes.  An inline
 * extent has no sectors to read: the mapping returns -ENOTBLK and the rest
 * of the read goes through the page cache.  A direct read holds i_rwsem
 * shared while it maps, but an asynchronous one (AIO, io_uring) returns
 * with its bios in flight and the lock dropped: so whatever frees a file's
 * sectors under i_rwsem (truncate, hole punch, a direct write's swap)
 * first waits for the inode's direct I/O (inode_dio_wait()), as ext4 and
 * XFS do.  Writeback, which swaps extents without i_rwsem, can still free
 * sectors under a read in flight; they stay pinned until the next commit,
 * and only an allocation after it and a write that completes first could
 * change what the read returns.
 *
 * Writes are copy-on-write exactly as writeback (pagecache.c): each mapping,
 * at most TWIG_VFS_MAX_EXTENT bytes, is a newly allocated run, pending in
 * the allocator (twig_alloc_data()), that iomap writes the user's pages to
 * with no handle open.  Only when every bio has completed does ->end_io
 * hand the runs to twig_swap_run(), writeback's own item swap (one handle
 * per run, which also moves i_size past EOF).  So an extent item never
 * names unwritten sectors, no handle waits for a bio, and a failed write
 * drops its runs and leaves the file's old data in place.
 *
 * A direct write holds i_rwsem exclusively and is always synchronous
 * (IOMAP_DIO_FORCE_WAIT): ->end_io then runs in the writer's task, before
 * iomap invalidates the page cache again, and finds the runs through the
 * inode (it gets no private pointer, and iocb->private is iomap's own).
 *
 * What goes through the page cache instead, written back and dropped
 * before the call returns: a write to a file of at most TWIG_MAX_INLINE
 * bytes (inline, or inline at its next writeback), a write on a
 * synchronous mount or inode (IS_SYNC: iomap would call ->fsync, which
 * takes i_rwsem, under ours), whatever iomap could not invalidate, and a
 * write whose offset, length or user buffer (any segment's address or
 * length) is not a multiple of TWIG_SECTORSIZE: a partial sector needs
 * the read-modify-write the page cache is for.  A read so misaligned is
 * read through the page cache too.  btrfs does the same; XFS and ext4
 * return -EINVAL, which fails programs that align to the device's
 * 512-byte logical blocks (dd bs=512 oflag=direct, fsx) rather than to
 * what STATX_DIOALIGN says.
 */
#include <linux/fs.h>
#include <linux/iomap.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include "vfs.h"

/* One mapping of a direct write: its sectors, written before the swap. */
struct twig_dio_run {
	struct list_head link;
	struct twig_data_alloc da;
	u64 pos;
	u64 len;
};

struct twig_dio_write {
	struct list_head runs;
	int error;		/* a mapping iomap did not write whole */
	bool short_write;	/* ->end_io swapped only the first runs */
};

static bool twig_dio_misaligned(struct kiocb *iocb, struct iov_iter *iter)
{
	return ((u64)iocb->ki_pos | iov_iter_count(iter) |
		iov_iter_alignment(iter)) & (TWIG_SECTORSIZE - 1);
}

static int twig_dio_read_begin(struct inode *inode, loff_t pos, loff_t length,
			       unsigned int flags, struct iomap *iomap,
			       struct iomap *srcmap)
{
	struct twig_map map;
	int ret;

	ret = twig_get_map(inode, pos, &map);
	if (ret)
		return ret;
	iomap->bdev = inode->i_sb->s_bdev;
	iomap->offset = pos;
	iomap->flags = 0;
	switch (map.kind) {
	case TWIG_MAP_INLINE:
		return -ENOTBLK;
	case TWIG_MAP_REG:
		iomap->type = IOMAP_MAPPED;
		iomap->addr = map.disk_bytenr;
		/*
		 * A file's tail may end mid-sector: the sector is read whole
		 * (as the page cache does) and iomap cuts the read at EOF.
		 */
		iomap->length = min_t(u64, length,
				      round_up(map.len, TWIG_SECTORSIZE));
		break;
	default:
		iomap->type = IOMAP_HOLE;
		iomap->addr = IOMAP_NULL_ADDR;
		iomap->length = min_t(u64, length, map.len);
		break;
	}
	return 0;
}

static const struct iomap_ops twig_dio_read_ops = {
	.iomap_begin	= twig_dio_read_begin,
};

/*
 * Sectors for @len bytes, counted against the same limit as dirty pages
 * (twig_reserve_data()), so a direct write neither takes the room of
 * pages already reserved nor the tree's slack.  Once allocated, the
 * pending run counts as allocated and the reservation goes.
 */
static int twig_dio_alloc(struct twig_fs_info *fs, u64 len,
			  struct twig_data_alloc *da)
{
	int ret;

	ret = twig_reserve_data(fs, len);
	if (ret)
		return ret;
	ret = twig_alloc_data(fs, len, da);
	twig_release_data(fs, len);
	return ret;
}

static int twig_dio_write_begin(struct inode *inode, loff_t pos,
				loff_t length, unsigned int flags,
				struct iomap *iomap, struct iomap *srcmap)
{
	struct iomap_iter *iter = container_of(iomap, struct iomap_iter, iomap);
	struct twig_dio_write *dw = iter->private;
	u64 len = min_t(u64, length, TWIG_VFS_MAX_EXTENT);
	struct twig_dio_run *run;
	int ret;

	run = kmalloc(sizeof(*run), GFP_NOFS);
	if (!run)
		return -ENOMEM;
	for (;;) {
		ret = twig_dio_alloc(twig_isb(inode), len, &run->da);
		if (ret != -ENOSPC || len <= TWIG_SECTORSIZE)
			break;
		/* no room or no contiguous run that long: map less */
		len = round_down(len / 2, TWIG_SECTORSIZE);
	}
	if (ret) {
		kfree(run);
		return ret;
	}
	run->pos = pos;
	run->len = len;
	list_add_tail(&run->link, &dw->runs);

	iomap->bdev = inode->i_sb->s_bdev;
	iomap->offset = pos;
	iomap->length = len;
	iomap->type = IOMAP_MAPPED;
	iomap->addr = run->da.bytenr;
	/* fresh sectors: iomap must not take the write for an overwrite */
	iomap->flags = IOMAP_F_NEW;
	return 0;
}

static int twig_dio_write_end(struct inode *inode, loff_t pos, loff_t length,
			      ssize_t written, unsigned int flags,
			      struct iomap *iomap)
{
	struct iomap_iter *iter = container_of(iomap, struct iomap_iter, iomap);
	struct twig_dio_write *dw = iter->private;

	/*
	 * A short mapping (a fault in the user's buffer) left sectors of
	 * its run unwritten, which no extent item may name.  iomap ignores
	 * an error returned here once anything was written.
	 */
	if (written < length && !dw->error)
		dw->error = -EFAULT;
	return 0;
}

static const struct iomap_ops twig_dio_write_ops = {
	.iomap_begin	= twig_dio_write_begin,
	.iomap_end	= twig_dio_write_end,
};

static void twig_dio_drop_runs(struct twig_fs_info *fs,
			       struct twig_dio_write *dw)
{
	struct twig_dio_run *run, *next;

	list_for_each_entry_safe(run, next, &dw->runs, link) {
		list_del(&run->link);
		twig_data_alloc_drop(fs, &run->da);
		kfree(run);
	}
}

/* Every bio of the write has completed (or failed); i_rwsem is held. */
static int twig_dio_end_io(struct kiocb *iocb, ssize_t size, int error,
			   unsigned int flags)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_dio_write *dw = TWIG_I(inode)->dio_write;
	struct twig_dio_run *run, *next;
	unsigned int nofs;
	u64 done = 0;

	if (!error)
		error = dw->error;
	/* fail_after counts a direct write as a data write, as writeback's */
	if (!error && twig_should_fail(fs))
		error = -EIO;
	if (error) {
		twig_dio_drop_runs(fs, dw);
		return error;
	}
	/* as writeback: reclaim must not enter twigfs under extent_mutex */
	nofs = memalloc_nofs_save();
	list_for_each_entry_safe(run, next, &dw->runs, link) {
		list_del(&run->link);
		if (!error)
			error = twig_swap_run(inode, run->pos, run->len,
					      &run->da, run->pos + run->len);
		else
			twig_data_alloc_drop(fs, &run->da);
		if (!error)
			done = run->pos + run->len - iocb->ki_pos;
		kfree(run);
	}
	memalloc_nofs_restore(nofs);
	/*
	 * The runs swapped before a failed swap (ENOSPC, an abort) are in
	 * the file, with i_size past them: a short write, as write(2) has
	 * to report it, not an error.  iomap passes a positive count on.
	 */
	if (error && done) {
		dw->short_write = true;
		return done;
	}
	return error;
}

static const struct iomap_dio_ops twig_dio_ops = {
	.end_io		= twig_dio_end_io,
};

/*
 * The write through the page cache, then on disk and out of the cache as
 * a direct write would be; i_rwsem held, @iocb's position checked.
 */
static ssize_t twig_dio_buffered(struct kiocb *iocb, struct iov_iter *from)
{
	struct address_space *mapping = iocb->ki_filp->f_mapping;
	loff_t pos = iocb->ki_pos;
	ssize_t ret;
	int err;

	iocb->ki_flags &= ~IOCB_DIRECT;
	ret = __generic_file_write_iter(iocb, from);
	iocb->ki_flags |= IOCB_DIRECT;
	if (ret <= 0)
		return ret;
	err = filemap_write_and_wait_range(mapping, pos, pos + ret - 1);
	if (err) {
		/* as direct_write_fallback(): how much is on disk is unknown */
		iocb->ki_pos -= ret;
		return err;
	}
	invalidate_mapping_pages(mapping, pos >> PAGE_SHIFT,
				 (pos + ret - 1) >> PAGE_SHIFT);
	return ret;
}

static ssize_t twig_dio_write(struct kiocb *iocb, struct iov_iter *from)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	struct twig_inode_info *ti = TWIG_I(inode);
	struct twig_dio_write dw = { .runs = LIST_HEAD_INIT(dw.runs) };
	bool dsync = iocb->ki_flags & IOCB_DSYNC;
	loff_t isize;
	ssize_t ret, done;

	if (iocb->ki_flags & IOCB_NOWAIT)
		return -EAGAIN;
	inode_lock(inode);
	/* an async direct read may still read sectors a swap here frees */
	inode_dio_wait(inode);
	ret = generic_write_checks(iocb, from);
	if (ret <= 0)
		goto out;
	isize = i_size_read(inode);
	if (twig_dio_misaligned(iocb, from) || ti->maybe_inline ||
	    (isize && isize <= TWIG_MAX_INLINE) || IS_SYNC(inode)) {
		ret = twig_dio_buffered(iocb, from);
		goto out;
	}
	ret = file_modified(iocb->ki_filp);
	if (ret)
		goto out;
	/*
	 * Past EOF: write back the old last page while i_size still ends
	 * there, so that its sector is zero past it (writeback zeroes the
	 * tail) before the gap becomes part of the file.
	 */
	if (iocb->ki_pos > isize) {
		ret = filemap_write_and_wait_range(inode->i_mapping, isize,
						   iocb->ki_pos - 1);
		if (ret)
			goto out;
	}

	/* iomap's O_DSYNC would call ->fsync, which takes i_rwsem: below */
	iocb->ki_flags &= ~IOCB_DSYNC;
	ti->dio_write = &dw;
	ret = iomap_dio_rw(iocb, from, &twig_dio_write_ops, &twig_dio_ops,
			   IOMAP_DIO_FORCE_WAIT, &dw, 0);
	ti->dio_write = NULL;
	if (dsync)
		iocb->ki_flags |= IOCB_DSYNC;
	/* runs of a write that failed before ->end_io */
	twig_dio_drop_runs(twig_isb(inode), &dw);

	/* -ENOTBLK: iomap could not drop the cached pages of the range */
	if (ret == -ENOTBLK)
		ret = 0;
	if (ret >= 0 && iov_iter_count(from) && !dw.short_write) {
		done = ret;
		ret = twig_dio_buffered(iocb, from);
		ret = ret < 0 ? (done ?: ret) : done + ret;
	}
out:
	inode_unlock(inode);
	if (ret > 0)
		ret = generic_write_sync(iocb, ret);
	return ret;
}

static ssize_t twig_dio_read(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	ssize_t ret, done;

	if (!iov_iter_count(to))
		return 0;
	if (twig_dio_misaligned(iocb, to)) {
		done = 0;
		goto buffered;
	}
	if (iocb->ki_flags & IOCB_NOWAIT)
		return -EAGAIN;
	inode_lock_shared(inode);
	ret = iomap_dio_rw(iocb, to, &twig_dio_read_ops, NULL, 0, NULL, 0);
	inode_unlock_shared(inode);
	if (ret < 0 || !iov_iter_count(to) ||
	    iocb->ki_pos >= i_size_read(inode))
		return ret;
	/* stopped at an inline extent (-ENOTBLK): the page cache has it */
	done = ret;
buffered:
	iocb->ki_flags &= ~IOCB_DIRECT;
	ret = generic_file_read_iter(iocb, to);
	iocb->ki_flags |= IOCB_DIRECT;
	return ret < 0 ? (done ?: ret) : done + ret;
}

ssize_t twig_file_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	ssize_t ret;

	if (iocb->ki_flags & IOCB_DIRECT)
		ret = twig_dio_read(iocb, to);
	else
		ret = generic_file_read_iter(iocb, to);
	twig_op_done(twig_isb(file_inode(iocb->ki_filp)), TWIG_OP_READ);
	return ret;
}

ssize_t twig_file_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	ssize_t ret;

	if (iocb->ki_flags & IOCB_DIRECT)
		ret = twig_dio_write(iocb, from);
	else
		ret = generic_file_write_iter(iocb, from);
	twig_op_done(twig_isb(file_inode(iocb->ki_filp)), TWIG_OP_WRITE);
	return ret;
}

int twig_file_open(struct inode *inode, struct file *file)
{
	/* open(2) and fcntl(F_SETFL) refuse O_DIRECT without it */
	int ret;

	file->f_mode |= FMODE_CAN_ODIRECT;
	ret = generic_file_open(inode, file);
	twig_op_done(twig_isb(inode), TWIG_OP_OPEN);
	return ret;
}
