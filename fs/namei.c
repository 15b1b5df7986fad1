// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs names: lookup, create, mkdir, mknod, symlink, link, unlink,
 * rmdir, rename; O_TMPFILE, an inode made without one.
 *
 * A name is three items, all changed in one transaction handle:
 *   (dir, DIR_ITEM, crc32c hash)   entries with that hash, back to back
 *   (dir, DIR_INDEX, sequence)     the one entry, for readdir
 *   (ino, INODE_REF, dir)          the inode's names in dir, with sequence
 * The VFS holds the directory's i_rwsem exclusively for every change (and
 * both parents' for a rename), which also protects next_index.
 */
#include <linux/fs.h>
#include <linux/crc32c.h>
#include <linux/slab.h>
#include <linux/pagemap.h>
#include <linux/posix_acl.h>
#include "vfs.h"

static u8 twig_ftype(umode_t mode)
{
	return fs_umode_to_ftype(mode);
}

/* Look @name up in @dir: 0 with *ino and *type, -ENOENT, or <0. */
static int twig_lookup_name(struct inode *dir, const struct qstr *name,
			    u64 *ino, u8 *type)
{
	struct twig_fs_info *fs = twig_isb(dir);
	struct twig_key key = {
		dir->i_ino, TWIG_DIR_ITEM_KEY,
		twig_name_hash(name->name, name->len)
	};
	struct twig_dir_entry de;
	struct twig_path *path;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_search_slot(NULL, fs, &key, path, 0, 0);
	if (ret == 0) {
		struct twig_eb *leaf = path->nodes[0];
		int slot = path->slots[0];

		const u8 *data = twig_item_ptr(leaf, slot);

		ret = twig_find_name(data, twig_item_size(leaf, slot), true,
				     name->name, name->len);
		if (ret >= 0) {
			memcpy(&de, data + ret, sizeof(de));
			*ino = le64_to_cpu(de.ino);
			*type = de.type;
			ret = 0;
		}
	} else if (ret > 0) {
		ret = -ENOENT;
	}
	twig_free_path(path);
	if (ret == -EUCLEAN)
		pr_err("twigfs: %s: directory %lu: corrupt DIR_ITEM\n",
		       dir->i_sb->s_id, dir->i_ino);
	return ret;
}

static int twig_del_key(struct twig_trans *trans, const struct twig_key *key)
{
	struct twig_path *path;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_search_slot(trans, trans->fs, key, path, -1, 1);
	if (ret == 0)
		ret = twig_del_item(trans, trans->fs, path);
	else if (ret > 0)
		ret = -EUCLEAN;
	twig_free_path(path);
	return ret;
}

/* No index left for a new name: the one after it must be a readdir position. */
static bool twig_dir_full(struct inode *dir)
{
	u64 index = TWIG_I(dir)->next_index;

	return index < TWIG_FIRST_DIR_INDEX || index > TWIG_MAX_DIR_INDEX;
}

/* Add the name @name -> @inode to @dir (items, dir size and times). */
static int twig_add_entry(struct twig_trans *trans, struct inode *dir,
			  const struct qstr *name, struct inode *inode)
{
	struct twig_inode_info *tdir = TWIG_I(dir);
	u64 index = tdir->next_index;
	struct twig_dir_entry de;
	struct twig_inode_ref ref;
	struct twig_key key;
	u8 *buf;
	int ret;

	if (twig_dir_full(dir))
		return -EOVERFLOW;
	/* names of both changed in this transaction: fsync must commit */
	WRITE_ONCE(TWIG_I(inode)->ns_transid, trans->transid);
	WRITE_ONCE(tdir->ns_transid, trans->transid);
	de.ino = cpu_to_le64(inode->i_ino);
	de.transid = cpu_to_le64(trans->transid);
	de.name_len = cpu_to_le16(name->len);
	de.type = twig_ftype(inode->i_mode);
	/* before the first item changes: ENOMEM here needs no abort */
	buf = kmalloc(sizeof(de) + name->len, GFP_NOFS);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &de, sizeof(de));
	memcpy(buf + sizeof(de), name->name, name->len);

	/* a failure after the DIR_ITEM would leave it dangling: abort */
	key.objectid = dir->i_ino;
	key.type = TWIG_DIR_ITEM_KEY;
	key.offset = twig_name_hash(name->name, name->len);
	ret = twig_append_record(trans, &key, &de, sizeof(de), name->name,
				 name->len, true);
	if (!ret) {
		key.type = TWIG_DIR_INDEX_KEY;
		key.offset = index;
		ret = twig_insert_item(trans, trans->fs, &key, buf,
				       sizeof(de) + name->len);
	}
	kfree(buf);
	if (!ret) {
		ref.index = cpu_to_le64(index);
		ref.name_len = cpu_to_le16(name->len);
		key.objectid = inode->i_ino;
		key.type = TWIG_INODE_REF_KEY;
		key.offset = dir->i_ino;
		ret = twig_append_record(trans, &key, &ref, sizeof(ref),
					 name->name, name->len, false);
	}
	if (ret) {
		twig_abort_transaction(trans, ret);
		return ret;
	}

	tdir->next_index = index + 1;
	i_size_write(dir, i_size_read(dir) + 2 * name->len);
	inode_set_mtime_to_ts(dir, inode_set_ctime_current(dir));
	return 0;
}

/* Remove the name @name -> @inode from @dir (items, dir size and times). */
static int twig_del_entry(struct twig_trans *trans, struct inode *dir,
			  const struct qstr *name, struct inode *inode)
{
	struct twig_key key;
	u64 index = 0;
	int ret;

	WRITE_ONCE(TWIG_I(inode)->ns_transid, trans->transid);
	WRITE_ONCE(TWIG_I(inode)->del_transid, trans->transid);
	WRITE_ONCE(TWIG_I(dir)->ns_transid, trans->transid);
	WRITE_ONCE(TWIG_I(dir)->del_transid, trans->transid);
	key.objectid = inode->i_ino;
	key.type = TWIG_INODE_REF_KEY;
	key.offset = dir->i_ino;
	ret = twig_remove_record(trans, &key, name->name, name->len, false,
				 &index);
	if (ret)
		goto out;
	key.objectid = dir->i_ino;
	key.type = TWIG_DIR_ITEM_KEY;
	key.offset = twig_name_hash(name->name, name->len);
	ret = twig_remove_record(trans, &key, name->name, name->len, true,
				 NULL);
	if (ret)
		goto out;
	key.type = TWIG_DIR_INDEX_KEY;
	key.offset = index;
	ret = twig_del_key(trans, &key);
	if (ret)
		goto out;
	i_size_write(dir, i_size_read(dir) - 2 * name->len);
	inode_set_mtime_to_ts(dir, inode_set_ctime_current(dir));
out:
	if (ret == -EUCLEAN)
		pr_err("twigfs: %s: directory %lu: items of '%.*s' missing\n",
		       dir->i_sb->s_id, dir->i_ino, name->len, name->name);
	if (ret)
		twig_abort_transaction(trans, ret);
	return ret;
}

static struct dentry *twig_lookup(struct inode *dir, struct dentry *dentry,
				  unsigned int flags)
{
	struct inode *inode = NULL;
	u64 ino;
	u8 type;
	int ret;

	if (dentry->d_name.len > TWIG_NAME_LEN)
		return ERR_PTR(-ENAMETOOLONG);
	ret = twig_lookup_name(dir, &dentry->d_name, &ino, &type);
	if (ret == 0) {
		inode = twig_iget(dir->i_sb, ino);
		if (IS_ERR(inode))
			return ERR_CAST(inode);
		/* a name must lead to a linked inode of the type it says */
		if (twig_ftype(inode->i_mode) != type || !inode->i_nlink) {
			pr_err_ratelimited("twigfs: %s: directory %lu: entry '%.*s' type %u names inode %lu of mode %o, nlink %u\n",
					   dir->i_sb->s_id, dir->i_ino,
					   dentry->d_name.len,
					   dentry->d_name.name, type,
					   inode->i_ino, inode->i_mode,
					   inode->i_nlink);
			iput(inode);
			return ERR_PTR(-EUCLEAN);
		}
	} else if (ret != -ENOENT) {
		return ERR_PTR(ret);
	}
	twig_op_done(twig_isb(dir), TWIG_OP_LOOKUP);
	return d_splice_alias(inode, dentry);
}

/* Ends twig_create_begin()'s handle; after an error, drops the inode. */
static int twig_create_end(struct twig_trans *trans, struct inode *inode,
			   int ret)
{
	if (ret)
		twig_abort_transaction(trans, ret);
	twig_end_transaction(trans);
	if (ret) {
		clear_nlink(inode);
		discard_new_inode(inode);
	}
	return ret;
}

/*
 * A new inode in a handle with room for @items more items, with its
 * security label and the ACLs inherited from @dir.  The ACLs are made
 * before the handle: that allocates, and applies the umask to @mode.  On
 * success *@transp is open for the caller to finish with
 * twig_create_end().
 */
static struct inode *twig_create_begin(struct inode *dir, umode_t mode,
				       dev_t rdev, const struct qstr *name,
				       unsigned int items,
				       struct twig_trans **transp)
{
	struct posix_acl *default_acl, *acl;
	struct twig_trans *trans;
	struct inode *inode;
	int ret;

	ret = twig_acl_prepare(dir, &mode, &default_acl, &acl);
	if (ret)
		return ERR_PTR(ret);
	/* the inode; a label and two ACLs */
	trans = twig_start_transaction(twig_isb(dir), items + 4);
	if (IS_ERR(trans)) {
		inode = ERR_CAST(trans);
		goto out_acl;
	}
	inode = twig_new_inode(trans, dir, mode, rdev);
	if (IS_ERR(inode)) {
		twig_end_transaction(trans);
		goto out_acl;
	}
	ret = twig_init_security(trans, inode, dir, name);
	if (!ret)
		ret = twig_acl_init(trans, inode, default_acl, acl);
	if (ret) {
		twig_create_end(trans, inode, ret);
		inode = ERR_PTR(ret);
	} else {
		*transp = trans;
	}
out_acl:
	twig_acl_release(default_acl, acl);
	return inode;
}

/*
 * Create an inode and its name in one handle: symlinks get their target,
 * directories add their ".." link to @dir.
 */
static int twig_create_node(struct inode *dir, struct dentry *dentry,
			    umode_t mode, dev_t rdev, const char *symname)
{
	struct twig_fs_info *fs = twig_isb(dir);
	struct twig_trans *trans;
	struct inode *inode;
	int ret = 0;

	if (dentry->d_name.len > TWIG_NAME_LEN)
		return -ENAMETOOLONG;
	/* refused here, it needs no abort: the inode item goes in first */
	if (twig_dir_full(dir))
		return -EOVERFLOW;
	/* a name, the directory, a symlink's target */
	inode = twig_create_begin(dir, mode, rdev, &dentry->d_name, 5, &trans);
	if (IS_ERR(inode)) {
		ret = PTR_ERR(inode);
		goto out;
	}
	if (symname) {
		u32 len = strlen(symname);

		ret = twig_write_inline(trans, inode, symname, len);
		if (!ret)
			i_size_write(inode, len);
	}
	if (!ret)
		ret = twig_update_inode(trans, inode);
	if (!ret)
		ret = twig_add_entry(trans, dir, &dentry->d_name, inode);
	if (!ret) {
		if (S_ISDIR(mode))
			inc_nlink(dir);
		ret = twig_update_inode(trans, dir);
	}
	if (!twig_create_end(trans, inode, ret))
		d_instantiate_new(dentry, inode);
out:
	twig_op_done(fs, TWIG_OP_CREATE);
	return ret;
}

static int twig_create(struct twig_idmap *idmap, struct inode *dir,
		       struct dentry *dentry, umode_t mode, bool excl)
{
	return twig_create_node(dir, dentry, mode, 0, NULL);
}

static int twig_mknod(struct twig_idmap *idmap, struct inode *dir,
		      struct dentry *dentry, umode_t mode, dev_t rdev)
{
	return twig_create_node(dir, dentry, mode, rdev, NULL);
}

static int twig_symlink(struct twig_idmap *idmap, struct inode *dir,
			struct dentry *dentry, const char *symname)
{
	size_t len = strlen(symname);

	/* the target is an inline extent: it must fit one */
	if (len > TWIG_MAX_INLINE)
		return -ENAMETOOLONG;
	return twig_create_node(dir, dentry, S_IFLNK | 0777, 0, symname);
}

static int twig_mkdir(struct twig_idmap *idmap, struct inode *dir,
		      struct dentry *dentry, umode_t mode)
{
	return twig_create_node(dir, dentry, mode | S_IFDIR, 0, NULL);
}

/*
 * O_TMPFILE: an inode with no name, on the orphan list from its first
 * handle, as an unlinked open file is; its last close deletes it, a crash
 * leaves it to the next mount's orphan cleanup, and linkat() gives it a
 * name and takes it off the list (twig_link()).  The item says nlink 0
 * from the start; the in-memory count is 1 only until d_tmpfile() drops
 * it, as btrfs does.
 */
static int twig_tmpfile(struct twig_idmap *idmap, struct inode *dir,
			struct file *file, umode_t mode)
{
	struct twig_trans *trans;
	struct inode *inode;
	int ret;

	/* the orphan item */
	inode = twig_create_begin(dir, mode, 0, NULL, 1, &trans);
	if (IS_ERR(inode)) {
		ret = PTR_ERR(inode);
		goto out;
	}
	ret = twig_orphan_add(trans, inode);
	if (!ret) {
		clear_nlink(inode);
		ret = twig_update_inode(trans, inode);
	}
	if (!twig_create_end(trans, inode, ret)) {
		set_nlink(inode, 1);
		d_tmpfile(file, inode);
		unlock_new_inode(inode);
	}
out:
	twig_op_done(twig_isb(dir), TWIG_OP_CREATE);
	return finish_open_simple(file, ret);
}

static int twig_link(struct dentry *old_dentry, struct inode *dir,
		     struct dentry *dentry)
{
	struct inode *inode = d_inode(old_dentry);
	struct twig_fs_info *fs = twig_isb(dir);
	struct twig_trans *trans;
	/* an O_TMPFILE inode (the VFS links no other without a name) */
	bool first = !inode->i_nlink;
	bool dropped = false;
	int ret = 0;

	if (dentry->d_name.len > TWIG_NAME_LEN)
		return -ENAMETOOLONG;
	trans = twig_start_transaction(fs, first ? 5 : 4);
	if (IS_ERR(trans))
		return PTR_ERR(trans);
	if (first) {
		ret = twig_orphan_del(trans, inode->i_ino);
		dropped = !ret;
	}
	if (!ret)
		ret = twig_add_entry(trans, dir, &dentry->d_name, inode);
	if (!ret) {
		inc_nlink(inode);
		inode_set_ctime_current(inode);
		ret = twig_update_inode(trans, inode);
	}
	if (!ret)
		ret = twig_update_inode(trans, dir);
	/* the orphan item went first: nothing half done may be committed */
	if (ret && dropped)
		twig_abort_transaction(trans, ret);
	twig_end_transaction(trans);
	twig_op_done(fs, TWIG_OP_LINK);
	if (ret)
		return ret;
	ihold(inode);
	d_instantiate(dentry, inode);
	return 0;
}

static int twig_unlink(struct inode *dir, struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct twig_fs_info *fs = twig_isb(dir);
	struct twig_trans *trans;
	bool last = inode->i_nlink == 1;
	int ret = 0;

	/* three name items, the inode, the directory, the orphan item */
	trans = twig_start_transaction_reserved(fs, 6);
	if (IS_ERR(trans))
		return PTR_ERR(trans);
	if (last)
		ret = twig_orphan_add(trans, inode);
	if (!ret)
		ret = twig_del_entry(trans, dir, &dentry->d_name, inode);
	if (!ret) {
		inode_set_ctime_to_ts(inode, inode_get_ctime(dir));
		ret = twig_drop_nlink(inode);
	}
	if (!ret)
		ret = twig_update_inode(trans, inode);
	if (!ret)
		ret = twig_update_inode(trans, dir);
	twig_orphan_abort(trans, last, ret);
	twig_end_transaction(trans);
	twig_op_done(fs, TWIG_OP_REMOVE);
	return ret;
}

static int twig_rmdir(struct inode *dir, struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct twig_fs_info *fs = twig_isb(dir);
	struct twig_trans *trans;
	int ret;

	if (i_size_read(inode))
		return -ENOTEMPTY;
	/* three name items, the inode, the directory, the orphan item */
	trans = twig_start_transaction_reserved(fs, 6);
	if (IS_ERR(trans))
		return PTR_ERR(trans);
	ret = twig_orphan_add(trans, inode);
	if (!ret)
		ret = twig_del_entry(trans, dir, &dentry->d_name, inode);
	if (!ret) {
		inode_set_ctime_to_ts(inode, inode_get_ctime(dir));
		clear_nlink(inode);
		ret = twig_drop_nlink(dir);
	}
	if (!ret)
		ret = twig_update_inode(trans, inode);
	if (!ret)
		ret = twig_update_inode(trans, dir);
	twig_orphan_abort(trans, true, ret);
	twig_end_transaction(trans);
	twig_op_done(fs, TWIG_OP_REMOVE);
	return ret;
}

static int twig_rename_exchange(struct twig_trans *trans,
				struct inode *old_dir, struct dentry *old_dentry,
				struct inode *new_dir, struct dentry *new_dentry)
{
	struct inode *old_inode = d_inode(old_dentry);
	struct inode *new_inode = d_inode(new_dentry);
	int ret;

	ret = twig_del_entry(trans, old_dir, &old_dentry->d_name, old_inode);
	if (!ret)
		ret = twig_del_entry(trans, new_dir, &new_dentry->d_name,
				     new_inode);
	if (!ret)
		ret = twig_add_entry(trans, new_dir, &new_dentry->d_name,
				     old_inode);
	if (!ret)
		ret = twig_add_entry(trans, old_dir, &old_dentry->d_name,
				     new_inode);
	if (ret)
		return ret;
	if (old_dir != new_dir) {
		if (S_ISDIR(old_inode->i_mode) && !S_ISDIR(new_inode->i_mode)) {
			ret = twig_drop_nlink(old_dir);
			inc_nlink(new_dir);
		} else if (!S_ISDIR(old_inode->i_mode) &&
			   S_ISDIR(new_inode->i_mode)) {
			inc_nlink(old_dir);
			ret = twig_drop_nlink(new_dir);
		}
		if (ret)
			return ret;
	}
	inode_set_ctime_current(old_inode);
	inode_set_ctime_to_ts(new_inode, inode_get_ctime(old_inode));
	ret = twig_update_inode(trans, old_inode);
	if (!ret)
		ret = twig_update_inode(trans, new_inode);
	return ret;
}

static int twig_rename(struct twig_idmap *idmap,
		       struct inode *old_dir, struct dentry *old_dentry,
		       struct inode *new_dir, struct dentry *new_dentry,
		       unsigned int flags)
{
	struct twig_fs_info *fs = twig_isb(old_dir);
	struct inode *old_inode = d_inode(old_dentry);
	struct inode *new_inode = d_inode(new_dentry);
	struct inode *whiteout = NULL;
	struct twig_trans *trans;
	bool victim_last = false;
	int ret;

	/*
	 * The VFS has checked the combinations (EINVAL for EXCHANGE with
	 * either other flag), returned EEXIST for NOREPLACE over a name and
	 * ENOENT for EXCHANGE with a missing target, and checked CAP_MKNOD
	 * for WHITEOUT.
	 */
	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
		return -EINVAL;
	if (new_dentry->d_name.len > TWIG_NAME_LEN)
		return -ENAMETOOLONG;
	if (new_inode && S_ISDIR(new_inode->i_mode) &&
	    !(flags & RENAME_EXCHANGE) && i_size_read(new_inode))
		return -ENOTEMPTY;

	/*
	 * Items changed, a name being three and an inode one: EXCHANGE
	 * removes two names, adds two and updates four inodes (16); a plain
	 * rename over a victim removes two names, adds one, inserts the
	 * orphan item and updates four inodes (14); a whiteout adds its
	 * inode item and a name (+4).
	 */
	trans = twig_start_transaction_reserved(fs, flags & RENAME_WHITEOUT ?
						18 : 16);
	if (IS_ERR(trans))
		return PTR_ERR(trans);
	if (flags & RENAME_EXCHANGE) {
		ret = twig_rename_exchange(trans, old_dir, old_dentry,
					   new_dir, new_dentry);
		goto update_dirs;
	}

	/* first, so that its failure leaves every name as it was */
	if (flags & RENAME_WHITEOUT) {
		whiteout = twig_new_inode(trans, old_dir,
					  S_IFCHR | WHITEOUT_MODE,
					  WHITEOUT_DEV);
		if (IS_ERR(whiteout)) {
			ret = PTR_ERR(whiteout);
			whiteout = NULL;
			goto out;
		}
	}
	victim_last = new_inode && (S_ISDIR(new_inode->i_mode) ||
				    new_inode->i_nlink == 1);
	if (victim_last) {
		ret = twig_orphan_add(trans, new_inode);
		if (ret)
			goto out;
	}
	ret = twig_del_entry(trans, old_dir, &old_dentry->d_name, old_inode);
	if (ret)
		goto out;
	if (whiteout) {
		ret = twig_add_entry(trans, old_dir, &old_dentry->d_name,
				     whiteout);
		if (ret)
			goto out;
	}
	if (new_inode) {
		ret = twig_del_entry(trans, new_dir, &new_dentry->d_name,
				     new_inode);
		if (ret)
			goto out;
		inode_set_ctime_current(new_inode);
		if (S_ISDIR(new_inode->i_mode)) {
			clear_nlink(new_inode);
			ret = twig_drop_nlink(new_dir);
		} else {
			ret = twig_drop_nlink(new_inode);
		}
		if (!ret)
			ret = twig_update_inode(trans, new_inode);
		if (ret)
			goto out;
	}
	ret = twig_add_entry(trans, new_dir, &new_dentry->d_name, old_inode);
	if (ret)
		goto out;
	if (S_ISDIR(old_inode->i_mode) && old_dir != new_dir) {
		ret = twig_drop_nlink(old_dir);
		if (ret)
			goto out;
		inc_nlink(new_dir);
	}
	inode_set_ctime_current(old_inode);
	ret = twig_update_inode(trans, old_inode);
update_dirs:
	if (!ret)
		ret = twig_update_inode(trans, old_dir);
	if (!ret && new_dir != old_dir)
		ret = twig_update_inode(trans, new_dir);
out:
	if (new_inode)
		twig_orphan_abort(trans, victim_last, ret);
	twig_end_transaction(trans);
	if (whiteout) {
		/* no dentry: a lookup of the old name finds it on disk */
		if (ret) {
			clear_nlink(whiteout);
			discard_new_inode(whiteout);
		} else {
			unlock_new_inode(whiteout);
			iput(whiteout);
		}
	}
	twig_op_done(fs, TWIG_OP_RENAME);
	return ret;
}

const struct inode_operations twig_dir_inode_operations = {
	.lookup		= twig_lookup,
	.create		= twig_create,
	.mknod		= twig_mknod,
	.symlink	= twig_symlink,
	.mkdir		= twig_mkdir,
	.link		= twig_link,
	.tmpfile	= twig_tmpfile,
	.unlink		= twig_unlink,
	.rmdir		= twig_rmdir,
	.rename		= twig_rename,
	.setattr	= twig_setattr,
	.getattr	= twig_getattr,
	.listxattr	= twig_listxattr,
	TWIG_ACL_INODE_OPERATIONS,
};
