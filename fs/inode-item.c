// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs INODE_ITEMs read from the tree, for the VFS (inode.c, orphan.c)
 * and the fsync log (tree-log.c).  Core code: no in-memory inode here.
 */
#include <linux/string.h>

#include "twigfs.h"

/* Copy @ino's INODE_ITEM into @ii: 0, -ENOENT, -EUCLEAN or -errno. */
int twig_read_inode_item(struct twig_fs_info *fs, u64 ino,
			 struct twig_inode_item *ii)
{
	struct twig_key key = { ino, TWIG_INODE_ITEM_KEY, 0 };
	struct twig_path *path;
	int ret;

	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_search_slot(NULL, fs, &key, path, 0, 0);
	if (ret == 0) {
		struct twig_eb *leaf = path->nodes[0];
		int slot = path->slots[0];

		if (twig_item_size(leaf, slot) < sizeof(*ii))
			ret = -EUCLEAN;
		else
			memcpy(ii, twig_item_ptr(leaf, slot), sizeof(*ii));
	} else if (ret > 0) {
		ret = -ENOENT;
	}
	twig_free_path(path);
	return ret;
}
