// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs inodes: INODE_ITEM <-> struct inode, creation, eviction,
 * setattr/getattr.
 *
 * The in-memory inode is the truth while it is cached; every change made by
 * a VFS operation is copied into the INODE_ITEM within the same transaction
 * handle (twig_update_inode()), and changes made by the VFS on its own (the
 * time and size updates of mark_inode_dirty()) are copied by ->dirty_inode.
 * A commit therefore always finds the items up to date and ->write_inode
 * has nothing left to do.
 *
 * Never call mark_inode_dirty() while holding a transaction handle: it joins
 * a transaction itself, and a commit waiting for the outer handle would
 * never let it in.
 */
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/pagemap.h>
#include <linux/writeback.h>
#include <linux/posix_acl.h>
#include "vfs.h"

static struct kmem_cache *twig_inode_cachep;

struct inode *twig_alloc_inode(struct super_block *sb)
{
	struct twig_inode_info *ti;

	/* new_inode() inside a handle: its memalloc_nofs_save() makes it NOFS */
	ti = alloc_inode_sb(sb, twig_inode_cachep, GFP_KERNEL);
	if (!ti)
		return NULL;
	ti->nbytes = 0;
	ti->next_index = TWIG_FIRST_DIR_INDEX;
	ti->generation = 0;
	ti->ns_transid = 0;
	ti->del_transid = 0;
	ti->flags = 0;
	ti->maybe_inline = false;
	ti->dio_write = NULL;
	ti->trunc_floor = 0;
	return &ti->vfs_inode;
}

void twig_free_inode(struct inode *inode)
{
	kmem_cache_free(twig_inode_cachep, TWIG_I(inode));
}

static void twig_inode_init_once(void *p)
{
	struct twig_inode_info *ti = p;

	mutex_init(&ti->extent_mutex);
	inode_init_once(&ti->vfs_inode);
}

int twig_inode_cache_init(void)
{
	twig_inode_cachep = kmem_cache_create("twig_inode_cache",
					      sizeof(struct twig_inode_info), 0,
					      SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
					      twig_inode_init_once);
	return twig_inode_cachep ? 0 : -ENOMEM;
}

void twig_inode_cache_exit(void)
{
	/* inodes are freed after an RCU grace period */
	rcu_barrier();
	kmem_cache_destroy(twig_inode_cachep);
}

/* ---- INODE_ITEM <-> struct inode ---- */

static struct timespec64 twig_get_time(const struct twig_timespec *d)
{
	return (struct timespec64){
		.tv_sec = le64_to_cpu(d->sec),
		.tv_nsec = le32_to_cpu(d->nsec),
	};
}

static void twig_put_time(struct twig_timespec *d, struct timespec64 ts)
{
	d->sec = cpu_to_le64(ts.tv_sec);
	d->nsec = cpu_to_le32(ts.tv_nsec);
}

/*
 * drop_nlink() for a count that came from the disk: a crafted image can
 * give an inode fewer links than names, and drop_nlink() WARNs (a kernel
 * bug) at zero.
 */
int twig_drop_nlink(struct inode *inode)
{
	if (!inode->i_nlink) {
		pr_err_ratelimited("twigfs: %s: inode %lu: nlink already 0\n",
				   inode->i_sb->s_id, inode->i_ino);
		return -EUCLEAN;
	}
	drop_nlink(inode);
	return 0;
}

void twig_set_nbytes(struct inode *inode, u64 nbytes)
{
	TWIG_I(inode)->nbytes = nbytes;
	inode->i_blocks = DIV_ROUND_UP_ULL(nbytes, 512);
}

static void twig_fill_item(struct twig_inode_item *ii, struct inode *inode,
			   u64 transid)
{
	struct twig_inode_info *ti = TWIG_I(inode);
	u64 size;

	/* the size and a truncate's floor change together under i_lock */
	spin_lock(&inode->i_lock);
	size = max_t(u64, i_size_read(inode), ti->trunc_floor);
	spin_unlock(&inode->i_lock);
	memset(ii, 0, sizeof(*ii));
	ii->generation = cpu_to_le64(ti->generation);
	ii->transid = cpu_to_le64(transid);
	ii->size = cpu_to_le64(size);
	ii->nbytes = cpu_to_le64(ti->nbytes);
	ii->next_index = cpu_to_le64(S_ISDIR(inode->i_mode) ?
				     ti->next_index : 0);
	ii->nlink = cpu_to_le32(inode->i_nlink);
	ii->uid = cpu_to_le32(i_uid_read(inode));
	ii->gid = cpu_to_le32(i_gid_read(inode));
	ii->mode = cpu_to_le32(inode->i_mode);
	ii->rdev = cpu_to_le64(new_encode_dev(inode->i_rdev));
	ii->flags = cpu_to_le64(ti->flags);
	twig_put_time(&ii->atime, inode_get_atime(inode));
	twig_put_time(&ii->ctime, inode_get_ctime(inode));
	twig_put_time(&ii->mtime, inode_get_mtime(inode));
	twig_put_time(&ii->otime, ti->otime);
}

static void twig_set_ops(struct inode *inode)
{
	switch (inode->i_mode & S_IFMT) {
	case S_IFREG:
		inode->i_op = &twig_file_inode_operations;
		inode->i_fop = &twig_file_operations;
		inode->i_mapping->a_ops = &twig_aops;
		break;
	case S_IFDIR:
		inode->i_op = &twig_dir_inode_operations;
		inode->i_fop = &twig_dir_operations;
		break;
	case S_IFLNK:
		inode->i_op = &twig_symlink_inode_operations;
		inode->i_mapping->a_ops = &twig_aops;
		inode_nohighmem(inode);
		break;
	default:
		inode->i_op = &twig_special_inode_operations;
		init_special_inode(inode, inode->i_mode, inode->i_rdev);
		break;
	}
}

static int twig_fill_inode(struct inode *inode, const struct twig_inode_item *ii)
{
	struct twig_inode_info *ti = TWIG_I(inode);
	umode_t mode = le32_to_cpu(ii->mode);

	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR:
	case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		break;
	default:
		return -EUCLEAN;
	}
	/* i_size is a loff_t: a "negative" size would break every user */
	if (le64_to_cpu(ii->size) > inode->i_sb->s_maxbytes)
		return -EUCLEAN;
	inode->i_mode = mode;
	set_nlink(inode, le32_to_cpu(ii->nlink));
	i_uid_write(inode, le32_to_cpu(ii->uid));
	i_gid_write(inode, le32_to_cpu(ii->gid));
	inode->i_size = le64_to_cpu(ii->size);
	inode->i_rdev = new_decode_dev(le64_to_cpu(ii->rdev));
	inode_set_atime_to_ts(inode, twig_get_time(&ii->atime));
	inode_set_ctime_to_ts(inode, twig_get_time(&ii->ctime));
	inode_set_mtime_to_ts(inode, twig_get_time(&ii->mtime));
	ti->otime = twig_get_time(&ii->otime);
	ti->generation = le64_to_cpu(ii->generation);
	/* a name may have changed in the transaction that wrote the item */
	ti->ns_transid = le64_to_cpu(ii->transid);
	ti->del_transid = ti->ns_transid;
	ti->next_index = le64_to_cpu(ii->next_index);
	if (S_ISDIR(mode) && ti->next_index < TWIG_FIRST_DIR_INDEX)
		ti->next_index = TWIG_FIRST_DIR_INDEX;
	ti->flags = le64_to_cpu(ii->flags);
	inode->i_generation = (u32)ti->generation;
	twig_set_nbytes(inode, le64_to_cpu(ii->nbytes));
	ti->maybe_inline = (S_ISREG(mode) || S_ISLNK(mode)) && ti->nbytes &&
			   inode->i_size <= TWIG_MAX_INLINE;
	twig_set_ops(inode);
	return 0;
}

struct inode *twig_iget(struct super_block *sb, u64 ino)
{
	struct twig_inode_item ii;
	struct inode *inode;
	int ret;

	inode = iget_locked(sb, ino);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (!(inode->i_state & I_NEW))
		return inode;

	ret = twig_read_inode_item(twig_sb(sb), ino, &ii);
	if (!ret)
		ret = twig_fill_inode(inode, &ii);
	if (ret) {
		if (ret == -ENOENT || ret == -EUCLEAN) {
			pr_err("twigfs: %s: inode %llu: %s\n", sb->s_id, ino,
			       ret == -ENOENT ? "no inode item" :
			       "corrupt inode item");
			ret = -EUCLEAN;
		}
		iget_failed(inode);
		return ERR_PTR(ret);
	}
	unlock_new_inode(inode);
	return inode;
}

/* Copy @inode into its INODE_ITEM, inside @trans. */
int twig_update_inode(struct twig_trans *trans, struct inode *inode)
{
	struct twig_fs_info *fs = trans->fs;
	struct twig_key key = { inode->i_ino, TWIG_INODE_ITEM_KEY, 0 };
	struct twig_inode_item ii;
	struct twig_path *path;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_search_slot(trans, fs, &key, path, 0, 1);
	if (ret == 0) {
		struct twig_eb *leaf = path->nodes[0];
		int slot = path->slots[0];

		if (twig_item_size(leaf, slot) < sizeof(ii)) {
			ret = -EUCLEAN;
		} else {
			twig_fill_item(&ii, inode, trans->transid);
			memcpy(twig_item_ptr(leaf, slot), &ii, sizeof(ii));
			twig_mark_buffer_dirty(trans, leaf);
		}
	} else if (ret > 0) {
		ret = -EUCLEAN;
	}
	twig_free_path(path);
	if (ret == -EUCLEAN)
		pr_err("twigfs: %s: inode %lu: inode item missing or short\n",
		       inode->i_sb->s_id, inode->i_ino);
	if (ret)
		twig_abort_transaction(trans, ret);
	return ret;
}

/*
 * A new inode, I_NEW and hashed, with its INODE_ITEM inserted in @trans.
 * On a later failure the caller ends the handle, clears nlink and calls
 * discard_new_inode(): eviction then deletes the item again.
 */
struct inode *twig_new_inode(struct twig_trans *trans, struct inode *dir,
			     umode_t mode, dev_t rdev)
{
	struct super_block *sb = dir->i_sb;
	struct twig_fs_info *fs = twig_sb(sb);
	struct twig_inode_info *ti;
	struct twig_inode_item ii;
	struct twig_key key;
	struct inode *inode;
	u64 ino;
	int ret;

	ret = twig_new_objectid(fs, &ino);
	if (ret)
		return ERR_PTR(ret);
	inode = new_inode(sb);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	ti = TWIG_I(inode);
	inode->i_ino = ino;
	inode_init_owner(TWIG_NOP_IDMAP, inode, dir, mode);
	inode->i_rdev = rdev;
	ti->otime = simple_inode_init_ts(inode);
	ti->generation = trans->transid;
	ti->ns_transid = trans->transid;
	inode->i_generation = (u32)trans->transid;
	set_nlink(inode, S_ISDIR(mode) ? 2 : 1);
	twig_set_ops(inode);

	ret = insert_inode_locked(inode);
	if (ret) {
		/* the number is in use: a corrupt tree or objectid counter */
		pr_err("twigfs: %s: inode number %llu already in use\n",
		       sb->s_id, ino);
		make_bad_inode(inode);
		iput(inode);
		return ERR_PTR(-EUCLEAN);
	}
	twig_fill_item(&ii, inode, trans->transid);
	key.objectid = ino;
	key.type = TWIG_INODE_ITEM_KEY;
	key.offset = 0;
	ret = twig_insert_item(trans, fs, &key, &ii, sizeof(ii));
	if (ret) {
		twig_abort_transaction(trans, ret);
		/* no item: eviction must not try to delete one */
		make_bad_inode(inode);
		discard_new_inode(inode);
		return ERR_PTR(ret);
	}
	return inode;
}

void twig_dirty_inode(struct inode *inode, int flags)
{
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_trans *trans;
	int ret;

	if (!(flags & (I_DIRTY_SYNC | I_DIRTY_DATASYNC)))
		return;
	if (is_bad_inode(inode) || test_bit(TWIG_FS_RDONLY, &fs->flags) ||
	    test_bit(TWIG_FS_ERROR, &fs->flags))
		return;
	trans = twig_start_transaction(fs, 1);
	if (IS_ERR(trans)) {
		pr_warn_ratelimited("twigfs: %s: inode %lu: cannot update: %ld\n",
				    inode->i_sb->s_id, inode->i_ino,
				    PTR_ERR(trans));
		return;
	}
	ret = twig_update_inode(trans, inode);
	twig_end_transaction(trans);
	if (ret)
		pr_warn_ratelimited("twigfs: %s: inode %lu: update failed: %d\n",
				    inode->i_sb->s_id, inode->i_ino, ret);
}

int twig_write_inode(struct inode *inode, struct writeback_control *wbc)
{
	/* ->dirty_inode already copied it; a sync commits it */
	return 0;
}

void twig_evict_inode(struct inode *inode)
{
	struct twig_fs_info *fs = twig_isb(inode);
	int ret;

	truncate_inode_pages_final(&inode->i_data);
	if (!inode->i_nlink && !is_bad_inode(inode) &&
	    !test_bit(TWIG_FS_RDONLY, &fs->flags) &&
	    !test_bit(TWIG_FS_ERROR, &fs->flags)) {
		ret = twig_delete_inode_items(fs, inode->i_ino);
		if (ret)
			pr_err("twigfs: %s: inode %lu: cannot delete items: %d\n",
			       inode->i_sb->s_id, inode->i_ino, ret);
	}
	clear_inode(inode);
}

int twig_setattr(struct twig_idmap *idmap, struct dentry *dentry,
		 struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_trans *trans;
	int ret;

	ret = setattr_prepare(TWIG_NOP_IDMAP, dentry, attr);
	if (ret)
		return ret;
	/*
	 * The same size too: that drops the extents FALLOC_FL_KEEP_SIZE left
	 * past EOF, as btrfs and ext4 do.
	 */
	if ((attr->ia_valid & ATTR_SIZE) && S_ISREG(inode->i_mode)) {
		/*
		 * truncate(2) asks for no times (ftruncate and O_TRUNC do),
		 * yet a size change is a data change: as btrfs_setsize().
		 */
		if (attr->ia_size != i_size_read(inode) &&
		    !(attr->ia_valid & (ATTR_CTIME | ATTR_MTIME))) {
			inode_set_mtime_to_ts(inode,
					      inode_set_ctime_current(inode));
		}
		ret = twig_truncate_extents(inode, attr->ia_size);
		if (ret)
			return ret;
	}
	setattr_copy(TWIG_NOP_IDMAP, inode, attr);
	trans = twig_start_transaction(fs, 1);
	if (IS_ERR(trans))
		return PTR_ERR(trans);
	ret = twig_update_inode(trans, inode);
	twig_end_transaction(trans);
	/* after the handle: the access ACL follows the new mode */
	if (!ret && (attr->ia_valid & ATTR_MODE))
		ret = twig_posix_acl_chmod(dentry);
	twig_op_done(fs, TWIG_OP_SETATTR);
	return ret;
}

int twig_getattr(struct twig_idmap *idmap, const struct path *path,
		 struct kstat *stat, u32 request_mask, unsigned int flags)
{
	struct inode *inode = d_inode(path->dentry);
	struct twig_inode_info *ti = TWIG_I(inode);

	if (request_mask & STATX_BTIME) {
		stat->result_mask |= STATX_BTIME;
		stat->btime = ti->otime;
	}
	twig_generic_fillattr(request_mask, inode, stat);
	stat->blksize = TWIG_SECTORSIZE;
	/* direct.c: offset, length and every buffer segment in sectors */
	if ((request_mask & STATX_DIOALIGN) && S_ISREG(inode->i_mode)) {
		stat->result_mask |= STATX_DIOALIGN;
		stat->dio_mem_align = TWIG_SECTORSIZE;
		stat->dio_offset_align = TWIG_SECTORSIZE;
	}
	twig_op_done(twig_isb(inode), TWIG_OP_GETATTR);
	return 0;
}

const struct inode_operations twig_special_inode_operations = {
	.setattr	= twig_setattr,
	.getattr	= twig_getattr,
	.listxattr	= twig_listxattr,
	TWIG_ACL_INODE_OPERATIONS,
};

const struct inode_operations twig_symlink_inode_operations = {
	.get_link	= page_get_link,
	.setattr	= twig_setattr,
	.getattr	= twig_getattr,
	.listxattr	= twig_listxattr,
};
