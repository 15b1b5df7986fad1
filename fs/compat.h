/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VFS interfaces that changed between the two kernel generations twigfs
 * builds against, linux-source-6.1 and linux-source-6.12, and nothing else.
 * The code is written against the newer interface; for an older kernel this
 * header supplies it in terms of the old one.  Each block names the release
 * that made the change, so a tree between the two (KERNEL_SRC=) gets the
 * right side of every block.  TWIG_LINUX is the tree's version as
 * major * 100 + minor (601, 612), passed by fs/Kbuild from the kernel
 * Makefile's VERSION and PATCHLEVEL.
 */
#ifndef TWIGFS_COMPAT_H
#define TWIGFS_COMPAT_H

#ifndef TWIG_LINUX
#error "TWIG_LINUX is set by fs/Kbuild"
#endif

#include <linux/fs.h>
#include <linux/pagemap.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/writeback.h>

/*
 * 6.3 passes the mount's idmap (struct mnt_idmap) where 6.1 passed its user
 * namespace.  twigfs supports no idmapped mounts, so it only hands on the
 * identity mapping.
 */
#if TWIG_LINUX >= 603
#define twig_idmap		mnt_idmap
#define TWIG_NOP_IDMAP		(&nop_mnt_idmap)
#else
#define twig_idmap		user_namespace
#define TWIG_NOP_IDMAP		(&init_user_ns)
#endif

/*
 * 6.7 hid the inode timestamps behind accessors, so that a filesystem can
 * use fine-grained timestamps.  The ctime ones came first (6.6) and are in
 * the 6.1.y stable series too (Debian's 6.1.192 has them); atime and mtime
 * are supplied here.
 */
#if TWIG_LINUX < 607
static inline struct timespec64 inode_get_atime(const struct inode *inode)
{
	return inode->i_atime;
}

static inline struct timespec64 inode_set_atime_to_ts(struct inode *inode,
						      struct timespec64 ts)
{
	inode->i_atime = ts;
	return ts;
}

static inline struct timespec64 inode_get_mtime(const struct inode *inode)
{
	return inode->i_mtime;
}

static inline struct timespec64 inode_set_mtime_to_ts(struct inode *inode,
						      struct timespec64 ts)
{
	inode->i_mtime = ts;
	return ts;
}

static inline struct timespec64 simple_inode_init_ts(struct inode *inode)
{
	struct timespec64 ts = inode_set_ctime_current(inode);

	inode_set_atime_to_ts(inode, ts);
	inode_set_mtime_to_ts(inode, ts);
	return ts;
}
#endif

/* 6.6 lets ->getattr pass the statx request mask on to generic_fillattr(). */
static inline void twig_generic_fillattr(u32 request_mask, struct inode *inode,
					 struct kstat *stat)
{
#if TWIG_LINUX >= 606
	generic_fillattr(TWIG_NOP_IDMAP, request_mask, inode, stat);
#else
	generic_fillattr(TWIG_NOP_IDMAP, inode, stat);
#endif
}

/*
 * 6.5 removed generic_file_splice_read() for filemap_splice_read(), which
 * reads the page cache without going through ->read_iter.
 */
#if TWIG_LINUX < 605
#define filemap_splice_read	generic_file_splice_read
#define TWIG_SPLICE_READS_ITER	1
#else
#define TWIG_SPLICE_READS_ITER	0
#endif

/*
 * 6.7 made shrinkers allocated objects carrying a private pointer; before,
 * the caller embedded one and found itself with container_of().  Both sides
 * here give an allocated, registered shrinker and its private pointer.
 */
#if TWIG_LINUX >= 607
static inline struct shrinker *
twig_shrinker_create(void *private_data, const char *name,
		     unsigned long (*count)(struct shrinker *,
					    struct shrink_control *),
		     unsigned long (*scan)(struct shrinker *,
					   struct shrink_control *))
{
	struct shrinker *s = shrinker_alloc(0, "%s", name);

	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	s->private_data = private_data;
	shrinker_register(s);
	return s;
}

static inline void twig_shrinker_destroy(struct shrinker *s)
{
	shrinker_free(s);
}

static inline void *twig_shrinker_private(struct shrinker *s)
{
	return s->private_data;
}
#else
struct twig_compat_shrinker {
	struct shrinker shrinker;
	void *private_data;
};

static inline struct shrinker *
twig_shrinker_create(void *private_data, const char *name,
		     unsigned long (*count)(struct shrinker *,
					    struct shrink_control *),
		     unsigned long (*scan)(struct shrinker *,
					   struct shrink_control *))
{
	struct twig_compat_shrinker *cs = kzalloc(sizeof(*cs), GFP_KERNEL);

	if (!cs)
		return NULL;
	cs->shrinker.count_objects = count;
	cs->shrinker.scan_objects = scan;
	cs->shrinker.seeks = DEFAULT_SEEKS;
	cs->private_data = private_data;
	if (register_shrinker(&cs->shrinker, "%s", name)) {
		kfree(cs);
		return NULL;
	}
	return &cs->shrinker;
}

static inline void twig_shrinker_destroy(struct shrinker *s)
{
	unregister_shrinker(s);
	kfree(container_of(s, struct twig_compat_shrinker, shrinker));
}

static inline void *twig_shrinker_private(struct shrinker *s)
{
	return container_of(s, struct twig_compat_shrinker,
			    shrinker)->private_data;
}
#endif

/*
 * 6.3 hands write_cache_pages() callbacks a folio, 6.12 hands write_begin
 * and write_end one; before, each took a page.  twigfs's page cache is
 * order-0 (it never enables large folios), so its implementations work on
 * the page and take the argument as the type named here, converting at the
 * entry.
 */
#if TWIG_LINUX >= 603
#define twig_wbc_page		folio

static inline struct page *twig_wbc_to_page(struct folio *folio)
{
	return &folio->page;
}
#else
#define twig_wbc_page		page

static inline struct page *twig_wbc_to_page(struct page *page)
{
	return page;
}
#endif

#if TWIG_LINUX >= 612
#define twig_write_page		folio

static inline struct page *twig_write_to_page(struct folio *folio)
{
	return &folio->page;
}

static inline struct folio *twig_page_to_write(struct page *page)
{
	return page_folio(page);
}
#else
#define twig_write_page		page

static inline struct page *twig_write_to_page(struct page *page)
{
	return page;
}

static inline struct page *twig_page_to_write(struct page *page)
{
	return page;
}
#endif

/*
 * 6.2 split ->get_acl into ->get_inode_acl (permission checks, maybe under
 * RCU) and a dentry-based ->get_acl, gave ->set_acl and posix_acl_chmod()
 * the dentry, and routes system.posix_acl_* to ->set_acl / ->get_acl
 * itself, so the xattr handlers of those names are listed no more.
 */
#if TWIG_LINUX >= 602
#define twig_acl_target		dentry
#define twig_acl_inode(target)	d_inode(target)
#define twig_acl_target_of(dentry)	(dentry)
#define TWIG_ACL_INODE_OPERATIONS					\
	.get_inode_acl	= twig_get_acl,					\
	.set_acl	= twig_set_acl
#define TWIG_POSIX_ACL_XATTR_HANDLERS
#else
#define twig_acl_target		inode
#define twig_acl_inode(target)	(target)
#define twig_acl_target_of(dentry)	d_inode(dentry)
#define TWIG_ACL_INODE_OPERATIONS					\
	.get_acl	= twig_get_acl,					\
	.set_acl	= twig_set_acl
#define TWIG_POSIX_ACL_XATTR_HANDLERS					\
	&posix_acl_access_xattr_handler,				\
	&posix_acl_default_xattr_handler,
#endif

static inline int twig_posix_acl_chmod(struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);

	return posix_acl_chmod(TWIG_NOP_IDMAP,
			       twig_acl_target_of(dentry), inode->i_mode);
}

#endif /* TWIGFS_COMPAT_H */
