// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs regular files: the file and inode operations (read and write
 * through direct.c, mmap, fsync, llseek, splice).  The data itself: the
 * page cache and writeback in pagecache.c, the extent items in
 * file-item.c, fallocate in falloc.c.
 */
#include <linux/fs.h>
#include <linux/pagemap.h>
#include <linux/uio.h>
#include "vfs.h"

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

/* ---- fsync, llseek ---- */

/*
 * Log @file's inode (tree-log.c) under its i_rwsem and extent_mutex, so
 * that no write, truncate or name change of it runs meanwhile: 0 (done), 1
 * (commit instead) or -errno.  The data must have been written and waited
 * for.
 */
static int twig_log_file(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct twig_inode_info *ti = TWIG_I(inode);
	struct twig_log_target t = { .ino = inode->i_ino };
	struct dentry *parent;
	struct inode *dir;
	int ret;

	if (!S_ISREG(inode->i_mode))
		return 1;
	/* the directory of a new name: its dentry pins it while we look */
	parent = dget_parent(file_dentry(file));
	inode_lock(inode);
	mutex_lock(&ti->extent_mutex);
	t.generation = ti->generation;
	t.ns_transid = READ_ONCE(ti->ns_transid);
	t.del_transid = READ_ONCE(ti->del_transid);
	t.nlink = inode->i_nlink;
	dir = d_inode(parent);
	if (dir) {
		t.dir = dir->i_ino;
		t.dir_del_transid = READ_ONCE(TWIG_I(dir)->del_transid);
	}
	ret = twig_log_inode(twig_isb(inode), &t);
	mutex_unlock(&ti->extent_mutex);
	inode_unlock(inode);
	dput(parent);
	return ret;
}

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
	ret = twig_log_file(file);
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
