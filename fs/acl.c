// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs POSIX ACLs (the 6.1 API: ->get_acl and ->set_acl), stored as the
 * xattrs system.posix_acl_access and system.posix_acl_default in the VFS's
 * xattr format (posix_acl_to_xattr()), as btrfs does.  The VFS's handlers
 * (posix_acl_access_xattr_handler, ..._default_...) reach them through
 * ->get_acl and ->set_acl; the VFS caches the result in i_acl.
 *
 * The ACLs a new inode inherits (posix_acl_create(), which also applies
 * the umask, SB_POSIXACL being set) are computed before the create handle
 * starts and written inside it; chmod rewrites the access ACL afterwards
 * (posix_acl_chmod() from setattr, its own handle).
 */
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/xattr.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include "vfs.h"

static const char *twig_acl_name(int type)
{
	return type == ACL_TYPE_ACCESS ? XATTR_NAME_POSIX_ACL_ACCESS :
					 XATTR_NAME_POSIX_ACL_DEFAULT;
}

struct posix_acl *twig_get_acl(struct inode *inode, int type, bool rcu)
{
	const char *name = twig_acl_name(type);
	struct posix_acl *acl;
	char *value = NULL;
	int size;

	if (rcu)
		return ERR_PTR(-ECHILD);
	size = twig_getxattr(inode, name, NULL, 0);
	if (size > 0) {
		value = kmalloc(size, GFP_KERNEL);
		if (!value)
			return ERR_PTR(-ENOMEM);
		size = twig_getxattr(inode, name, value, size);
	}
	if (size > 0)
		acl = posix_acl_from_xattr(&init_user_ns, value, size);
	else if (size == -ENODATA || size == 0)
		acl = NULL;
	else
		acl = ERR_PTR(size);
	kfree(value);
	return acl;
}

/*
 * Write (@acl NULL: remove) the ACL of @type inside @trans and cache it.
 * The caller updates the mode, ctime and the INODE_ITEM.
 */
static int twig_write_acl(struct twig_trans *trans, struct inode *inode,
			  struct posix_acl *acl, int type)
{
	char *value = NULL;
	size_t size = 0;
	int ret;

	if (type == ACL_TYPE_DEFAULT && !S_ISDIR(inode->i_mode))
		return acl ? -EINVAL : 0;
	if (acl) {
		size = posix_acl_xattr_size(acl->a_count);
		/* posix_acl_valid() bounds a_count; this is the fs limit */
		if (size > TWIG_XATTR_MAX_VALUE)
			return -E2BIG;
		value = kmalloc(size, GFP_NOFS);
		if (!value)
			return -ENOMEM;
		ret = posix_acl_to_xattr(&init_user_ns, acl, value, size);
		if (ret < 0)
			goto out;
	}
	ret = twig_setxattr(trans, inode, twig_acl_name(type), value, size, 0);
	/* removing an ACL that is not there is not an error */
	if (ret == -ENODATA && !acl)
		ret = 0;
out:
	kfree(value);
	if (!ret)
		set_cached_acl(inode, type, acl);
	return ret;
}

int twig_set_acl(struct twig_idmap *idmap, struct twig_acl_target *target,
		 struct posix_acl *acl, int type)
{
	struct inode *inode = twig_acl_inode(target);
	struct twig_fs_info *fs = twig_isb(inode);
	umode_t old_mode = inode->i_mode;
	umode_t mode = old_mode;
	struct twig_trans *trans;
	int ret;

	/* an access ACL equivalent to a mode becomes just the mode */
	if (type == ACL_TYPE_ACCESS && acl) {
		ret = posix_acl_update_mode(idmap, inode, &mode, &acl);
		if (ret)
			return ret;
	}
	/* a removal is a delete: it may use the reserve, as unlink does */
	trans = acl ? twig_start_transaction(fs, 2) :
		      twig_start_transaction_reserved(fs, 2);
	if (IS_ERR(trans))
		return PTR_ERR(trans);
	ret = twig_write_acl(trans, inode, acl, type);
	if (!ret) {
		inode->i_mode = mode;
		inode_set_ctime_current(inode);
		ret = twig_update_inode(trans, inode);
		if (ret)
			inode->i_mode = old_mode;
	}
	twig_end_transaction(trans);
	return ret;
}

/*
 * The ACLs @dir hands to a new inode of *@mode: call before the create
 * handle (allocations, and the umask applied to *@mode); release with
 * twig_acl_release().
 */
int twig_acl_prepare(struct inode *dir, umode_t *mode,
		     struct posix_acl **default_acl, struct posix_acl **acl)
{
	return posix_acl_create(dir, mode, default_acl, acl);
}

/* Inside the create handle: write what twig_acl_prepare() found. */
int twig_acl_init(struct twig_trans *trans, struct inode *inode,
		  struct posix_acl *default_acl, struct posix_acl *acl)
{
	int ret = 0;

	if (default_acl)
		ret = twig_write_acl(trans, inode, default_acl,
				     ACL_TYPE_DEFAULT);
	if (!ret && acl)
		ret = twig_write_acl(trans, inode, acl, ACL_TYPE_ACCESS);
	return ret;
}

void twig_acl_release(struct posix_acl *default_acl, struct posix_acl *acl)
{
	posix_acl_release(default_acl);
	posix_acl_release(acl);
}
