// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs names in items: the name hash (DIR_ITEM and XATTR_ITEM key
 * offsets) and the records of DIR_ITEM and INODE_REF items, runs of a
 * fixed header followed by the name, found, appended and removed under a
 * handle.  Core code: used by the names (namei.c), extended attributes
 * (xattr.c) and the log's replay (tree-log.c), as in btrfs.
 */
#include <linux/slab.h>
#include <linux/string.h>

#include "twigfs.h"

/*
 * Find @name in a DIR_ITEM (@is_dirent) or INODE_REF item: both are runs of
 * a fixed header followed by name_len bytes of name.  Returns the byte
 * offset of the record inside the item, or -ENOENT / -EUCLEAN.
 */
int twig_find_name(const u8 *data, u32 size, bool is_dirent,
		   const char *name, int len)
{
	u32 hdr = is_dirent ? sizeof(struct twig_dir_entry) :
			      sizeof(struct twig_inode_ref);
	u32 pos = 0;

	while (pos + hdr <= size) {
		const u8 *rec = data + pos;
		u16 nlen = is_dirent ?
			le16_to_cpu(((const struct twig_dir_entry *)rec)->name_len) :
			le16_to_cpu(((const struct twig_inode_ref *)rec)->name_len);

		if (pos + hdr + nlen > size)
			return -EUCLEAN;
		if (nlen == len && !memcmp(rec + hdr, name, len))
			return pos;
		pos += hdr + nlen;
	}
	return pos == size ? -ENOENT : -EUCLEAN;
}

/*
 * Append a record to the item at @key, creating the item if needed.
 * @rec is the fixed part, @name follows it.
 */
int twig_append_record(struct twig_trans *trans, const struct twig_key *key,
		       const void *rec, u32 rec_len, const char *name, int len,
		       bool is_dirent)
{
	struct twig_fs_info *fs = trans->fs;
	u32 add = rec_len + len;
	struct twig_path *path;
	u8 *buf;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_search_slot(trans, fs, key, path,
			       add + sizeof(struct twig_item), 1);
	if (ret == 0) {
		struct twig_eb *leaf = path->nodes[0];
		int slot = path->slots[0];
		u32 old = twig_item_size(leaf, slot);
		u8 *data = twig_item_ptr(leaf, slot);

		ret = twig_find_name(data, old, is_dirent, name, len);
		if (ret >= 0) {
			ret = -EEXIST;
		} else if (ret == -ENOENT) {
			ret = twig_extend_item(fs, path, old + add);
			if (!ret) {
				leaf = path->nodes[0];
				slot = path->slots[0];
				data = twig_item_ptr(leaf, slot);
				memcpy(data + old, rec, rec_len);
				memcpy(data + old + rec_len, name, len);
				twig_mark_buffer_dirty(trans, leaf);
			}
		}
		twig_free_path(path);
		return ret;
	}
	twig_free_path(path);
	if (ret < 0)
		return ret;
	buf = kmalloc(add, GFP_NOFS);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, rec, rec_len);
	memcpy(buf + rec_len, name, len);
	ret = twig_insert_item(trans, fs, key, buf, add);
	kfree(buf);
	return ret;
}

/*
 * Remove the record for @name from the item at @key (deleting the item if
 * it was the only one).  For an INODE_REF, *index receives its sequence.
 */
int twig_remove_record(struct twig_trans *trans, const struct twig_key *key,
		       const char *name, int len, bool is_dirent, u64 *index)
{
	struct twig_fs_info *fs = trans->fs;
	struct twig_path *path;
	struct twig_eb *leaf;
	u32 size, rec;
	int slot, pos;
	u8 *data;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_search_slot(trans, fs, key, path, -1, 1);
	if (ret) {
		ret = ret > 0 ? -EUCLEAN : ret;
		goto out;
	}
	leaf = path->nodes[0];
	slot = path->slots[0];
	size = twig_item_size(leaf, slot);
	data = twig_item_ptr(leaf, slot);
	pos = twig_find_name(data, size, is_dirent, name, len);
	if (pos < 0) {
		ret = pos == -ENOENT ? -EUCLEAN : pos;
		goto out;
	}
	if (is_dirent) {
		rec = sizeof(struct twig_dir_entry) + len;
	} else {
		const struct twig_inode_ref *ref = (const void *)(data + pos);

		if (index)
			*index = le64_to_cpu(ref->index);
		rec = sizeof(struct twig_inode_ref) + len;
	}
	if (rec == size) {
		ret = twig_del_item(trans, fs, path);
		goto out;
	}
	memmove(data + pos, data + pos + rec, size - pos - rec);
	twig_truncate_item(fs, path, size - rec);
	twig_mark_buffer_dirty(trans, path->nodes[0]);
	ret = 0;
out:
	twig_free_path(path);
	return ret;
}
