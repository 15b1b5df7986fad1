// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs extended attributes: XATTR_ITEMs in the fs tree, as btrfs keeps
 * them.
 *
 *   (ino, XATTR_ITEM, crc32c(~1, full name))
 *
 * holds one twig_xattr_entry + name + value per attribute with that hash,
 * back to back (the shape of a DIR_ITEM holding colliding names).  The
 * limits are in format.h: names up to 255 bytes, values up to
 * TWIG_XATTR_MAX_VALUE (one attribute always fits a leaf of the smallest
 * node size), TWIG_XATTR_MAX_TOTAL bytes of entries per inode.
 *
 * Every change runs in one transaction handle that also writes the new
 * ctime into the INODE_ITEM (twig_update_inode(); never mark_inode_dirty()
 * under a handle).  The VFS holds the inode's i_rwsem for setxattr and
 * removexattr (and set_acl), so the items of one inode do not change
 * between the read-only scan that checks the limits and flags and the
 * handle that changes them; a new inode's attributes (security label,
 * inherited ACLs) are written inside the handle that creates it.
 * Replacing a value rewrites the entry in place under one leaf lock, so a
 * reader (get_acl runs without i_rwsem) never sees the attribute missing.
 *
 * Eviction deletes every item of an inode, XATTR_ITEMs included
 * (twig_delete_inode_items()).
 */
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/xattr.h>
#include <linux/security.h>
#include <linux/posix_acl_xattr.h>
#include "vfs.h"

/* Entry size for a name and value. */
static u32 twig_xattr_entry_len(u32 name_len, u32 value_len)
{
	return sizeof(struct twig_xattr_entry) + name_len + value_len;
}

/*
 * Find @name in the XATTR_ITEM @data: the byte offset of its entry, or
 * -ENOENT, or -EUCLEAN for an entry running past the item (the tree
 * checker refuses those blocks; this keeps the code from trusting it).
 */
static int twig_xattr_find(const u8 *data, u32 size, const char *name,
			   u32 len)
{
	u32 pos = 0;

	while (pos + sizeof(struct twig_xattr_entry) <= size) {
		const struct twig_xattr_entry *xe = (const void *)(data + pos);
		u32 nlen = le16_to_cpu(xe->name_len);
		u32 elen = twig_xattr_entry_len(nlen, le16_to_cpu(xe->value_len));

		if (elen > size - pos)
			return -EUCLEAN;
		if (nlen == len && !memcmp(xe + 1, name, len))
			return pos;
		pos += elen;
	}
	return pos == size ? -ENOENT : -EUCLEAN;
}

static void twig_xattr_key(struct twig_key *key, struct inode *inode,
			   const char *name, u32 len)
{
	key->objectid = inode->i_ino;
	key->type = TWIG_XATTR_ITEM_KEY;
	key->offset = twig_name_hash(name, len);
}

static int twig_xattr_corrupt(struct inode *inode, int ret)
{
	if (ret == -EUCLEAN)
		pr_err_ratelimited("twigfs: %s: inode %lu: corrupt XATTR_ITEM\n",
				   inode->i_sb->s_id, inode->i_ino);
	return ret;
}

/*
 * getxattr: the value's length (copied to @buf if @size is not 0), or
 * -ENODATA, -ERANGE when @size is too small, -errno.
 */
int twig_getxattr(struct inode *inode, const char *name, void *buf,
		  size_t size)
{
	u32 len = strlen(name);
	struct twig_path *path;
	struct twig_key key;
	int ret;

	if (len > TWIG_XATTR_NAME_MAX)
		return -ENODATA;
	twig_xattr_key(&key, inode, name, len);
	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_search_slot(NULL, twig_isb(inode), &key, path, 0, 0);
	if (ret == 0) {
		struct twig_eb *leaf = path->nodes[0];
		int slot = path->slots[0];
		const u8 *data = twig_item_ptr(leaf, slot);
		const struct twig_xattr_entry *xe;
		u32 vlen;

		ret = twig_xattr_find(data, twig_item_size(leaf, slot), name,
				      len);
		if (ret >= 0) {
			xe = (const void *)(data + ret);
			vlen = le16_to_cpu(xe->value_len);
			ret = vlen;
			/* buf is a kernel buffer (the VFS copies it out) */
			if (size && vlen > size)
				ret = -ERANGE;
			else if (size)
				memcpy(buf, (const u8 *)(xe + 1) + len, vlen);
		} else if (ret == -ENOENT) {
			ret = -ENODATA;
		}
	} else if (ret > 0) {
		ret = -ENODATA;
	}
	twig_free_path(path);
	return twig_xattr_corrupt(inode, ret);
}

/* What the read-only scan of an inode's attributes found. */
struct twig_xattr_scan {
	u64 total;		/* bytes of all entries of the inode */
	u32 old_len;		/* entry of the name, 0 if it has none */
	bool item;		/* an item with the name's hash exists */
	u32 item_size;
};

/* Walk every XATTR_ITEM of @inode, looking for @name (hash @hash). */
static int twig_xattr_scan(struct inode *inode, const char *name, u32 len,
			   u64 hash, struct twig_xattr_scan *s)
{
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_key key = { inode->i_ino, TWIG_XATTR_ITEM_KEY, 0 };
	struct twig_path *path;
	struct twig_key found;
	int ret;

	memset(s, 0, sizeof(*s));
	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	for (ret = twig_walk_first(fs, &key, path); ret == 0;
	     ret = twig_next_item(fs, path)) {
		struct twig_eb *leaf = path->nodes[0];
		int slot = path->slots[0];
		u32 size = twig_item_size(leaf, slot);

		twig_item_key(leaf, slot, &found);
		if (found.objectid != inode->i_ino ||
		    found.type != TWIG_XATTR_ITEM_KEY)
			break;
		s->total += size;
		if (found.offset == hash) {
			const u8 *data = twig_item_ptr(leaf, slot);
			const struct twig_xattr_entry *xe;
			u32 vlen;

			s->item = true;
			s->item_size = size;
			ret = twig_xattr_find(data, size, name, len);
			if (ret >= 0) {
				xe = (const void *)(data + ret);
				vlen = le16_to_cpu(xe->value_len);
				s->old_len = twig_xattr_entry_len(len, vlen);
			} else if (ret != -ENOENT) {
				break;
			}
		}
	}
	twig_free_path(path);
	return twig_xattr_corrupt(inode, ret < 0 ? ret : 0);
}

static void twig_xattr_fill(u8 *p, struct twig_trans *trans,
			    const char *name, u32 len, const void *value,
			    u32 size)
{
	struct twig_xattr_entry xe = {
		.transid = cpu_to_le64(trans->transid),
		.name_len = cpu_to_le16(len),
		.value_len = cpu_to_le16(size),
	};

	memcpy(p, &xe, sizeof(xe));
	memcpy(p + sizeof(xe), name, len);
	memcpy(p + sizeof(xe) + len, value, size);
}

/*
 * Change the item at @key: replace (or remove, @value NULL) the entry of
 * @name of @old_len bytes, or append it (@old_len 0).  The caller checked
 * that the item exists and that the result fits an item.
 */
static int twig_xattr_change(struct twig_trans *trans,
			     const struct twig_key *key, const char *name,
			     u32 len, const void *value, u32 size,
			     u32 old_len)
{
	struct twig_fs_info *fs = trans->fs;
	u32 new_len = value ? twig_xattr_entry_len(len, size) : 0;
	struct twig_path *path;
	struct twig_eb *leaf;
	u32 isize, tail;
	int slot, pos;
	int ins_len;
	u8 *data;
	int ret;

	if (new_len > old_len)
		ins_len = new_len - old_len + sizeof(struct twig_item);
	else
		ins_len = new_len < old_len ? -1 : 0;
	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_search_slot(trans, fs, key, path, ins_len, 1);
	if (ret) {
		ret = ret > 0 ? -EUCLEAN : ret;
		goto out;
	}
	leaf = path->nodes[0];
	slot = path->slots[0];
	isize = twig_item_size(leaf, slot);
	data = twig_item_ptr(leaf, slot);
	pos = twig_xattr_find(data, isize, name, len);
	if (pos == -ENOENT && !old_len) {
		pos = isize;
	} else if (pos < 0 || !old_len) {
		/* the scan under the same i_rwsem said otherwise */
		ret = pos < 0 && pos != -ENOENT ? pos : -EUCLEAN;
		goto out;
	}
	if (!new_len && old_len == isize) {
		ret = twig_del_item(trans, fs, path);
		goto out;
	}
	tail = isize - pos - old_len;
	if (new_len > old_len) {
		ret = twig_extend_item(fs, path, isize + new_len - old_len);
		if (ret)
			goto out;
		leaf = path->nodes[0];
		slot = path->slots[0];
		data = twig_item_ptr(leaf, slot);
	}
	/* the entries after this one move; memmove copes with overlap */
	memmove(data + pos + new_len, data + pos + old_len, tail);
	if (new_len)
		twig_xattr_fill(data + pos, trans, name, len, value, size);
	if (new_len < old_len)
		twig_truncate_item(fs, path, isize - old_len + new_len);
	twig_mark_buffer_dirty(trans, path->nodes[0]);
	ret = 0;
out:
	twig_free_path(path);
	return ret;
}

/*
 * Set (or with @value NULL remove) the attribute @name of @inode inside
 * @trans.  XATTR_CREATE fails with -EEXIST on an existing name,
 * XATTR_REPLACE and removal with -ENODATA on a missing one.  Values over
 * TWIG_XATTR_MAX_VALUE are -E2BIG; going over TWIG_XATTR_MAX_TOTAL for
 * the inode, or over one item with colliding names, is -ENOSPC.  All of
 * that is decided before the first item changes; an error after it aborts
 * the transaction.  The caller updates ctime and the INODE_ITEM.
 */
int twig_setxattr(struct twig_trans *trans, struct inode *inode,
		  const char *name, const void *value, size_t size, int flags)
{
	struct twig_fs_info *fs = twig_isb(inode);
	u32 len = strlen(name);
	struct twig_xattr_scan s;
	struct twig_key key;
	u32 new_len;
	u8 *buf;
	int ret;

	if (!len || len > TWIG_XATTR_NAME_MAX)
		return -ERANGE;
	if (value && size > TWIG_XATTR_MAX_VALUE)
		return -E2BIG;
	twig_xattr_key(&key, inode, name, len);
	ret = twig_xattr_scan(inode, name, len, key.offset, &s);
	if (ret)
		return ret;
	if (s.old_len && (flags & XATTR_CREATE))
		return -EEXIST;
	if (!s.old_len && (!value || (flags & XATTR_REPLACE)))
		return -ENODATA;
	new_len = value ? twig_xattr_entry_len(len, size) : 0;
	if (new_len > s.old_len &&
	    (s.total - s.old_len + new_len > TWIG_XATTR_MAX_TOTAL ||
	     (s.item && s.item_size - s.old_len + new_len >
			twig_max_item_size(fs))))
		return -ENOSPC;

	if (s.item) {
		ret = twig_xattr_change(trans, &key, name, len, value, size,
					s.old_len);
	} else {
		buf = kmalloc(new_len, GFP_NOFS);
		if (!buf)
			return -ENOMEM;
		twig_xattr_fill(buf, trans, name, len, value, size);
		ret = twig_insert_item(trans, fs, &key, buf, new_len);
		kfree(buf);
	}
	if (ret) {
		twig_xattr_corrupt(inode, ret);
		twig_abort_transaction(trans, ret);
	}
	return ret;
}

/*
 * setxattr/removexattr from the VFS: one handle for the item and the
 * INODE_ITEM's new ctime.  A removal is a delete and may use the global
 * reserve, as unlink does.
 */
int twig_setxattr_trans(struct inode *inode, const char *name,
			const void *value, size_t size, int flags)
{
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_trans *trans;
	int ret;

	trans = value ? twig_start_transaction(fs, 2) :
			twig_start_transaction_reserved(fs, 2);
	if (IS_ERR(trans))
		return PTR_ERR(trans);
	ret = twig_setxattr(trans, inode, name, value, size, flags);
	if (!ret) {
		inode_set_ctime_current(inode);
		ret = twig_update_inode(trans, inode);
	}
	twig_end_transaction(trans);
	return ret;
}

/* Names the caller may see: trusted.* only with CAP_SYS_ADMIN, as ext4. */
static bool twig_xattr_listable(struct dentry *dentry, const char *name,
				u32 len)
{
	if (len > XATTR_TRUSTED_PREFIX_LEN &&
	    !memcmp(name, XATTR_TRUSTED_PREFIX, XATTR_TRUSTED_PREFIX_LEN))
		return capable(CAP_SYS_ADMIN);
	if (len > XATTR_SYSTEM_PREFIX_LEN &&
	    !memcmp(name, XATTR_SYSTEM_PREFIX, XATTR_SYSTEM_PREFIX_LEN))
		return IS_POSIXACL(d_inode(dentry));
	return true;
}

/*
 * listxattr: every name, NUL-terminated.  @buf is a kernel buffer, so the
 * names are copied under the leaf's read lock.
 */
ssize_t twig_listxattr(struct dentry *dentry, char *buf, size_t size)
{
	struct inode *inode = d_inode(dentry);
	struct twig_fs_info *fs = twig_isb(inode);
	struct twig_key key = { inode->i_ino, TWIG_XATTR_ITEM_KEY, 0 };
	struct twig_path *path;
	struct twig_key found;
	size_t total = 0;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	for (ret = twig_walk_first(fs, &key, path); ret == 0;
	     ret = twig_next_item(fs, path)) {
		struct twig_eb *leaf = path->nodes[0];
		int slot = path->slots[0];
		const u8 *data = twig_item_ptr(leaf, slot);
		u32 isize = twig_item_size(leaf, slot);
		u32 pos = 0;

		twig_item_key(leaf, slot, &found);
		if (found.objectid != inode->i_ino ||
		    found.type != TWIG_XATTR_ITEM_KEY)
			break;
		while (pos < isize) {
			const struct twig_xattr_entry *xe;
			u32 nlen, elen;

			if (isize - pos < sizeof(*xe)) {
				ret = -EUCLEAN;
				goto out;
			}
			xe = (const void *)(data + pos);
			nlen = le16_to_cpu(xe->name_len);
			elen = twig_xattr_entry_len(nlen,
						    le16_to_cpu(xe->value_len));
			if (elen > isize - pos) {
				ret = -EUCLEAN;
				goto out;
			}
			pos += elen;
			if (!twig_xattr_listable(dentry, (const char *)(xe + 1),
						 nlen))
				continue;
			if (size) {
				if (total + nlen + 1 > size) {
					ret = -ERANGE;
					goto out;
				}
				memcpy(buf + total, xe + 1, nlen);
				buf[total + nlen] = '\0';
			}
			total += nlen + 1;
		}
	}
out:
	twig_free_path(path);
	if (ret < 0)
		return twig_xattr_corrupt(inode, ret);
	return total;
}

static int twig_xattr_handler_get(const struct xattr_handler *handler,
				  struct dentry *unused, struct inode *inode,
				  const char *name, void *buffer, size_t size)
{
	return twig_getxattr(inode, xattr_full_name(handler, name), buffer,
			     size);
}

static int twig_xattr_handler_set(const struct xattr_handler *handler,
				  struct twig_idmap *idmap,
				  struct dentry *unused, struct inode *inode,
				  const char *name, const void *value,
				  size_t size, int flags)
{
	/* "user." alone: the VFS passes an empty suffix through */
	if (!*name)
		return -EINVAL;
	return twig_setxattr_trans(inode, xattr_full_name(handler, name),
				   value, size, flags);
}

static const struct xattr_handler twig_user_xattr_handler = {
	.prefix	= XATTR_USER_PREFIX,
	.get	= twig_xattr_handler_get,
	.set	= twig_xattr_handler_set,
};

static const struct xattr_handler twig_trusted_xattr_handler = {
	.prefix	= XATTR_TRUSTED_PREFIX,
	.get	= twig_xattr_handler_get,
	.set	= twig_xattr_handler_set,
};

static const struct xattr_handler twig_security_xattr_handler = {
	.prefix	= XATTR_SECURITY_PREFIX,
	.get	= twig_xattr_handler_get,
	.set	= twig_xattr_handler_set,
};

/* Unknown prefixes find no handler: the VFS returns -EOPNOTSUPP. */
const struct xattr_handler *twig_xattr_handlers[] = {
	&twig_user_xattr_handler,
	&twig_trusted_xattr_handler,
	&twig_security_xattr_handler,
#ifdef CONFIG_FS_POSIX_ACL
	/* system.posix_acl_*: through ->get_acl and ->set_acl (acl.c) */
	TWIG_POSIX_ACL_XATTR_HANDLERS
#endif
	NULL
};

/* security_inode_init_security()'s callback: inside the create handle. */
static int twig_initxattrs(struct inode *inode, const struct xattr *xattrs,
			   void *trans)
{
	const struct xattr *xattr;
	char *name;
	int ret = 0;

	for (xattr = xattrs; xattr->name; xattr++) {
		name = kasprintf(GFP_NOFS, "%s%s", XATTR_SECURITY_PREFIX,
				 xattr->name);
		if (!name)
			return -ENOMEM;
		ret = twig_setxattr(trans, inode, name, xattr->value,
				    xattr->value_len, XATTR_CREATE);
		kfree(name);
		if (ret)
			break;
	}
	return ret;
}

/* The security module's label of a new inode, as ext4 and btrfs write it. */
int twig_init_security(struct twig_trans *trans, struct inode *inode,
		       struct inode *dir, const struct qstr *qstr)
{
	return security_inode_init_security(inode, dir, qstr,
					    twig_initxattrs, trans);
}
