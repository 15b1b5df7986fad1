// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs readdir: DIR_INDEX items in sequence order.
 *
 * The readdir offset of an entry is its DIR_INDEX sequence, which never
 * changes and is never reused, so offsets stay valid while other tasks
 * create and remove names (0 and 1 are "." and "..").  Entries are copied
 * out of the leaf before dir_emit(): copying to user memory may fault, and
 * the fault must not happen under a tree lock.
 */
#include <linux/fs.h>
#include <linux/slab.h>
#include "vfs.h"

#define TWIG_READDIR_BUF	PAGE_SIZE

/* DIR_INDEX items store FT_* codes, which readdir must turn into DT_*. */
static_assert(TWIG_FT_REG_FILE == FT_REG_FILE && TWIG_FT_DIR == FT_DIR &&
	      TWIG_FT_SYMLINK == FT_SYMLINK && TWIG_FT_MAX == FT_MAX);

struct twig_rd_entry {
	u64 index;
	u64 ino;
	u16 len;
	u8 type;
	char name[];
};

/*
 * Copy entries with index >= *pos into @buf until it is full.  Returns the
 * number of bytes used; *end is set when no entries remain after them.
 */
static int twig_fill_entries(struct inode *dir, u64 pos, u8 *buf, bool *end)
{
	struct twig_fs_info *fs = twig_isb(dir);
	struct twig_key key = { dir->i_ino, TWIG_DIR_INDEX_KEY, pos };
	struct twig_path *path;
	struct twig_key found;
	u32 used = 0;
	int ret;

	*end = false;
	path = twig_alloc_path();
	if (!path)
		return -ENOMEM;
	ret = twig_walk_first(fs, &key, path);
	while (ret == 0) {
		struct twig_eb *leaf = path->nodes[0];
		int slot = path->slots[0];
		const struct twig_dir_entry *de = twig_item_ptr(leaf, slot);
		u32 size = twig_item_size(leaf, slot);
		struct twig_rd_entry *e;
		u16 len;

		twig_item_key(leaf, slot, &found);
		if (found.objectid != dir->i_ino ||
		    found.type != TWIG_DIR_INDEX_KEY) {
			ret = 1;
			break;
		}
		/*
		 * The tree checker refused such items; this stays so that
		 * the loop in twig_readdir() ends whatever the leaf says:
		 * ctx->pos must reach index + 1 as a non-negative loff_t.
		 */
		if (size < sizeof(*de) ||
		    size != sizeof(*de) + le16_to_cpu(de->name_len) ||
		    le16_to_cpu(de->name_len) > TWIG_NAME_LEN ||
		    found.offset < pos || found.offset > TWIG_MAX_DIR_INDEX) {
			pr_err("twigfs: %s: directory %lu: corrupt DIR_INDEX %llu\n",
			       dir->i_sb->s_id, dir->i_ino, found.offset);
			ret = -EUCLEAN;
			break;
		}
		len = le16_to_cpu(de->name_len);
		if (used + ALIGN(sizeof(*e) + len, 8) > TWIG_READDIR_BUF)
			break;
		e = (struct twig_rd_entry *)(buf + used);
		e->index = found.offset;
		e->ino = le64_to_cpu(de->ino);
		e->len = len;
		e->type = de->type;
		memcpy(e->name, de + 1, len);
		used += ALIGN(sizeof(*e) + len, 8);
		ret = twig_next_item(fs, path);
	}
	twig_free_path(path);
	if (ret < 0)
		return ret;
	*end = ret == 1;
	return used;
}

static int twig_readdir(struct file *file, struct dir_context *ctx)
{
	struct inode *dir = file_inode(file);
	bool end = false, full = false;
	u8 *buf;
	int used, off;

	if (!dir_emit_dots(file, ctx))
		return 0;
	buf = kmalloc(TWIG_READDIR_BUF, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	while (!end) {
		used = twig_fill_entries(dir, ctx->pos, buf, &end);
		if (used < 0) {
			kfree(buf);
			return used;
		}
		for (off = 0; off < used;) {
			struct twig_rd_entry *e = (void *)(buf + off);

			ctx->pos = e->index;
			if (!dir_emit(ctx, e->name, e->len, e->ino,
				      fs_ftype_to_dtype(e->type))) {
				full = true;	/* this one again next call */
				break;
			}
			off += ALIGN(sizeof(*e) + e->len, 8);
		}
		if (full || !used)
			break;
		ctx->pos++;
	}
	kfree(buf);
	twig_op_done(twig_isb(dir), TWIG_OP_READDIR);
	return 0;
}

const struct file_operations twig_dir_operations = {
	.llseek		= generic_file_llseek,
	.read		= generic_read_dir,
	.iterate_shared	= twig_readdir,
	.fsync		= twig_fsync,
};
