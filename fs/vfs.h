/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twigfs VFS side: in-memory inodes and the helpers shared by the files
 * that implement the VFS operations (super.c, inode.c, orphan.c, namei.c,
 * dir.c, xattr.c, acl.c, space.c, file.c, file-item.c, pagecache.c,
 * falloc.c, direct.c).  The tree, transactions, the allocator and the
 * log are declared in twigfs.h (the core's header), which never includes
 * this one.
 */
#ifndef _TWIGFS_VFS_H
#define _TWIGFS_VFS_H

#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/blk_types.h>
#include "compat.h"
#include "twigfs.h"

/*
 * Regular extents written by twigfs are at most this long, so the extent
 * covering a file offset starts less than this many bytes before it: a
 * forward walk from there finds it without stepping back through the tree.
 */
#define TWIG_VFS_MAX_EXTENT	TWIG_MAX_EXTENT

struct twig_inode_info {
	struct inode vfs_inode;
	/* serialises changes to this file's EXTENT_DATA items and nbytes */
	struct mutex extent_mutex;
	u64 nbytes;		/* inode item nbytes (exact, not 512-rounded) */
	u64 next_index;		/* directories: next DIR_INDEX, under i_rwsem */
	u64 generation;		/* transaction that created the inode */
	u64 flags;
	struct timespec64 otime;
	bool maybe_inline;	/* an inline extent may exist at offset 0 */
	/*
	 * Transaction that last changed a name of this inode (or, read from
	 * disk, its INODE_ITEM transid): the fsync log falls back to a
	 * commit when it is the running one (tree-log.c).
	 */
	u64 ns_transid;
	/* transaction that last removed a name of it (a directory: in it) */
	u64 del_transid;
	/*
	 * The direct write in progress (direct.c), under i_rwsem held
	 * exclusively: iomap's ->end_io finds its runs here.
	 */
	struct twig_dio_write *dio_write;
	/*
	 * While a truncate shrinks the file (file-item.c), where its drop
	 * of extents has reached: every INODE_ITEM written meanwhile says at
	 * least this size, so none is short of extents still there.  0
	 * otherwise.
	 */
	u64 trunc_floor;
};

/*
 * Completed VFS operations of a mount, by kind (/sys/fs/twigfs/<dev>/ops).
 * A benchmark samples the total every 100 ms to cut throughput into
 * windows finer than the workloads' own once-a-second reports.  Counted
 * where each operation finishes its work, failures included, so each
 * belongs to the window in which it finished; the early error returns
 * (a name too long, a directory that cannot be read, no memory) are not
 * counted: a benchmark's throughput is made of the others.
 */
enum twig_op {
	TWIG_OP_LOOKUP,
	TWIG_OP_CREATE,		/* create, mknod, mkdir, symlink */
	TWIG_OP_LINK,
	TWIG_OP_REMOVE,		/* unlink, rmdir */
	TWIG_OP_RENAME,
	TWIG_OP_OPEN,
	TWIG_OP_READ,		/* read_iter: one per read(2), any size */
	TWIG_OP_WRITE,
	TWIG_OP_FSYNC,		/* files and directories */
	TWIG_OP_READDIR,	/* one per iterate_shared call */
	TWIG_OP_GETATTR,
	TWIG_OP_SETATTR,
	TWIG_OP_NR,
};

struct twig_op_stats {
	u64 n[TWIG_OP_NR];
};

static inline void twig_op_done(struct twig_fs_info *fs, enum twig_op op)
{
	this_cpu_inc(fs->op_stats->n[op]);
}

static inline struct twig_inode_info *TWIG_I(struct inode *inode)
{
	return container_of(inode, struct twig_inode_info, vfs_inode);
}

static inline struct twig_fs_info *twig_isb(struct inode *inode)
{
	return twig_sb(inode->i_sb);
}

/* One mapped piece of a file, as found in its EXTENT_DATA items. */
struct twig_map {
	u64 start;		/* file offset */
	u64 len;		/* bytes; for a hole: up to the next extent */
	u64 disk_bytenr;	/* regular: disk address of @start */
	u8 kind;		/* TWIG_MAP_* */
};

enum { TWIG_MAP_HOLE, TWIG_MAP_REG, TWIG_MAP_INLINE };

/* space.c */
int twig_reserve_data(struct twig_fs_info *fs, u64 bytes);
void twig_release_data(struct twig_fs_info *fs, u64 bytes);

/* inode.c */
struct inode *twig_alloc_inode(struct super_block *sb);
void twig_free_inode(struct inode *inode);
void twig_evict_inode(struct inode *inode);
void twig_dirty_inode(struct inode *inode, int flags);
int twig_write_inode(struct inode *inode, struct writeback_control *wbc);
extern const struct inode_operations twig_file_inode_operations;
extern const struct inode_operations twig_symlink_inode_operations;
extern const struct inode_operations twig_special_inode_operations;
int twig_inode_cache_init(void);
void twig_inode_cache_exit(void);
struct inode *twig_iget(struct super_block *sb, u64 ino);
struct inode *twig_new_inode(struct twig_trans *trans, struct inode *dir,
			     umode_t mode, dev_t rdev);
int twig_update_inode(struct twig_trans *trans, struct inode *inode);
int twig_setattr(struct twig_idmap *idmap, struct dentry *dentry,
		 struct iattr *attr);
int twig_getattr(struct twig_idmap *idmap, const struct path *path,
		 struct kstat *stat, u32 request_mask, unsigned int flags);
void twig_set_nbytes(struct inode *inode, u64 nbytes);
int twig_drop_nlink(struct inode *inode);

/* orphan.c */
int twig_orphan_add(struct twig_trans *trans, struct inode *inode);
void twig_orphan_abort(struct twig_trans *trans, bool added, int err);
int twig_orphan_del(struct twig_trans *trans, u64 ino);
void twig_orphan_cleanup(struct twig_fs_info *fs);
int twig_delete_inode_items(struct twig_fs_info *fs, u64 ino);

/* namei.c */
extern const struct inode_operations twig_dir_inode_operations;

/* xattr.c */
extern const struct xattr_handler *twig_xattr_handlers[];
int twig_getxattr(struct inode *inode, const char *name, void *buf,
		  size_t size);
int twig_setxattr(struct twig_trans *trans, struct inode *inode,
		  const char *name, const void *value, size_t size, int flags);
int twig_setxattr_trans(struct inode *inode, const char *name,
			const void *value, size_t size, int flags);
ssize_t twig_listxattr(struct dentry *dentry, char *buf, size_t size);
int twig_init_security(struct twig_trans *trans, struct inode *inode,
		       struct inode *dir, const struct qstr *qstr);

/* acl.c, built with CONFIG_FS_POSIX_ACL (without it the VFS applies the umask) */
#ifdef CONFIG_FS_POSIX_ACL
struct posix_acl *twig_get_acl(struct inode *inode, int type, bool rcu);
int twig_set_acl(struct twig_idmap *idmap, struct twig_acl_target *target,
		 struct posix_acl *acl, int type);
int twig_acl_prepare(struct inode *dir, umode_t *mode,
		     struct posix_acl **default_acl, struct posix_acl **acl);
int twig_acl_init(struct twig_trans *trans, struct inode *inode,
		  struct posix_acl *default_acl, struct posix_acl *acl);
void twig_acl_release(struct posix_acl *default_acl, struct posix_acl *acl);
#else
#define twig_get_acl	NULL
#define twig_set_acl	NULL
static inline int twig_acl_prepare(struct inode *dir, umode_t *mode,
				   struct posix_acl **default_acl,
				   struct posix_acl **acl)
{
	*default_acl = NULL;
	*acl = NULL;
	return 0;
}

static inline int twig_acl_init(struct twig_trans *trans, struct inode *inode,
				struct posix_acl *default_acl,
				struct posix_acl *acl)
{
	return 0;
}

static inline void twig_acl_release(struct posix_acl *default_acl,
				    struct posix_acl *acl)
{
}
#endif

/* dir.c */
extern const struct file_operations twig_dir_operations;

/* file.c */
extern const struct file_operations twig_file_operations;
int twig_fsync(struct file *file, loff_t start, loff_t end, int datasync);

/* pagecache.c */
extern const struct address_space_operations twig_aops;

/*
 * A page's private pointer while it holds its one-sector data reservation
 * (space.c): set by write_begin, page_mkwrite and the zeroing of partial
 * pages, given back by writeback or when the page goes.
 */
#define TWIG_RESERVED	((void *)1UL)

/* falloc.c */
long twig_fallocate(struct file *file, int mode, loff_t offset, loff_t len);

/* file-item.c */
/*
 * Extent items a truncate or punch handle drops, at most: 3 more items are
 * reserved (a cut's new tail item, the inode, an inline cut), and fewer
 * when space is short (twig_start_transaction_shrink()).
 */
#define TWIG_DROP_BATCH	64

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

int twig_find_extent(struct twig_fs_info *fs, u64 ino, u64 pos,
		     struct twig_fext *x);
int twig_get_map(struct inode *inode, u64 pos, struct twig_map *map);
int twig_read_inline(struct inode *inode, void *buf, u32 max);
int twig_insert_fext(struct twig_trans *trans, struct inode *inode,
		     u8 type, u64 pos, u64 gen, u64 disk, u64 len);
int twig_drop_range(struct twig_trans *trans, struct inode *inode,
		    u64 start, u64 end, int max);
int twig_drop_extents(struct twig_trans *trans, struct inode *inode,
		      u64 start, u64 end);
int twig_write_inline(struct twig_trans *trans, struct inode *inode,
		      const void *data, u64 len);
int twig_convert_inline_locked(struct inode *inode);
int twig_convert_inline(struct inode *inode);
int twig_truncate_extents(struct inode *inode, u64 new_size);
int twig_swap_run(struct inode *inode, u64 pos, u64 bytes,
		  struct twig_data_alloc *data, u64 new_size);

/* direct.c */
int twig_file_open(struct inode *inode, struct file *file);
ssize_t twig_file_read_iter(struct kiocb *iocb, struct iov_iter *to);
ssize_t twig_file_write_iter(struct kiocb *iocb, struct iov_iter *from);

#endif /* _TWIGFS_VFS_H */
