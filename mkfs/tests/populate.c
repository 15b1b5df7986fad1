// SPDX-License-Identifier: GPL-2.0
/*
 * twig-populate: test-only tool that fills a freshly made twigfs image with
 * directories, files (empty, inline, regular with holes), symlinks, device
 * nodes and hard links, writing a brand new fs tree bulk-loaded bottom-up so
 * it can be several levels deep.  With -D it damages the result in one
 * precise way, keeping checksums valid, so fsck must find the damage itself:
 * a named class (the tables item_damage and tree_damage, and the older
 * classes in damage_items() and damage_tree()), "fuzz-SEED" (random bytes
 * anywhere in one block) or "mutate-SEED" (-m bytes, else 1 to 8, of header
 * fields, item headers, key pointers and item bodies of random blocks).
 * With -U it adds the state a crash leaves in the middle of deleting an
 * unlinked inode (valid, fsck must accept it): "open" (nlink 0, all items
 * and an orphan item) or "headless" (INODE_ITEM already deleted, extents
 * and the orphan item left).
 *
 *   twig-populate [-n files] [-d dirs] [-F fanout] [-s seed] [-D damage]
 *                 [-m bytes] [-U open|headless] image
 *
 * Not a mkfs: it trusts the superblock it finds and rewrites the whole tree,
 * the data area and the allocation bitmap (into the other copy).
 */
#include "../twig_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG	"twig-populate"
#define GEN	2
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

struct pitem {
	struct twig_key key;
	uint8_t *data;
	uint32_t size;
};

struct pinode {
	uint64_t ino;
	uint32_t mode, nlink;
	uint64_t size, nbytes, next_index;
	bool headless;		/* no INODE_ITEM (a half-deleted orphan) */
};

struct block {
	uint64_t addr;
	uint8_t *buf;
	struct twig_key first;
};

struct pop {
	int fd;
	struct twig_super_block sb;
	uint32_t nodesize;
	uint64_t total_bytes, alloc_bytes, cursor;
	struct pitem *items;
	size_t nitems, items_cap;
	struct pinode *inodes;
	size_t ninodes;
	struct block *blocks;
	size_t nblocks;
	uint8_t *map;
	uint64_t rng;
	unsigned fanout;
	const char *damage;
	const char *unfinished;	/* -U */
	uint64_t first_extent;	/* disk address of the first regular extent */
	uint64_t data_end, tree_start;
	unsigned nextents;
	unsigned nxattr_files;
	unsigned mutations;	/* -m: bytes a mutate-SEED damage changes */
	uint64_t sb_generation;	/* what write_all() stores, GEN unless damaged */
	uint64_t sb_bytes_used;	/* non-zero: stored instead of the bitmap's count */
	uint64_t clear_block;	/* non-zero: a tree block left free in the bitmap */
	uint64_t offset_ino;	/* extoffset: the inode whose extent has offset */
};

#define die(...) twig_die(PROG, __VA_ARGS__)

static void *xzalloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

static uint64_t rnd(struct pop *p, uint64_t n)
{
	p->rng ^= p->rng << 13;
	p->rng ^= p->rng >> 7;
	p->rng ^= p->rng << 17;
	return n ? p->rng % n : 0;
}

static bool damage_is(const struct pop *p, const char *what)
{
	return p->damage && !strcmp(p->damage, what);
}

/* ---- the namespace model ---- */

static struct pitem *add_item(struct pop *p, uint64_t objectid, uint8_t type,
			      uint64_t offset, const void *data, uint32_t size)
{
	struct pitem *it;

	if (p->nitems == p->items_cap) {
		p->items_cap = p->items_cap ? 2 * p->items_cap : 1024;
		p->items = realloc(p->items, p->items_cap * sizeof(*p->items));
		if (!p->items)
			die("out of memory");
	}
	it = &p->items[p->nitems++];
	it->key = (struct twig_key){ objectid, type, offset };
	it->data = xzalloc(size);
	if (size)
		memcpy(it->data, data, size);
	it->size = size;
	return it;
}

static struct pinode *new_inode(struct pop *p, uint32_t mode)
{
	struct pinode *in = &p->inodes[p->ninodes];

	in->ino = TWIG_ROOT_DIR_OBJECTID + p->ninodes++;
	in->mode = mode;
	in->next_index = TWIG_FIRST_DIR_INDEX;
	if (S_ISDIR(mode))
		in->nlink = 2;
	return in;
}

static void add_dirent(struct pop *p, uint64_t dir, uint8_t type,
		       uint64_t offset, const struct pinode *in, const char *name)
{
	uint16_t len = (uint16_t)strlen(name);
	uint8_t buf[sizeof(struct twig_dir_entry) + TWIG_NAME_LEN];
	struct twig_dir_entry de = {
		.ino = htole64(in->ino),
		.transid = htole64(GEN),
		.name_len = htole16(len),
		.type = twig_mode_to_ft(in->mode),
	};

	memcpy(buf, &de, sizeof(de));
	memcpy(buf + sizeof(de), name, len);
	add_item(p, dir, type, offset, buf, (uint32_t)(sizeof(de) + len));
}

static void link_inode(struct pop *p, struct pinode *dir, struct pinode *in,
		       const char *name)
{
	uint16_t len = (uint16_t)strlen(name);
	uint64_t index = dir->next_index++;
	uint8_t buf[sizeof(struct twig_inode_ref) + TWIG_NAME_LEN];
	struct twig_inode_ref ref = {
		.index = htole64(index),
		.name_len = htole16(len),
	};

	add_dirent(p, dir->ino, TWIG_DIR_ITEM_KEY, twig_name_hash(name, len),
		   in, name);
	if (!damage_is(p, "noindex") || index != TWIG_FIRST_DIR_INDEX + 1)
		add_dirent(p, dir->ino, TWIG_DIR_INDEX_KEY, index, in, name);
	memcpy(buf, &ref, sizeof(ref));
	memcpy(buf + sizeof(ref), name, len);
	add_item(p, in->ino, TWIG_INODE_REF_KEY, dir->ino, buf,
		 (uint32_t)(sizeof(ref) + len));
	dir->size += 2 * len;
	if (S_ISDIR(in->mode))
		dir->nlink++;
	else
		in->nlink++;
}

/* Unique names of varying length, so leaves fill unevenly. */
static void make_name(struct pop *p, char *buf, const char *kind,
		      uint64_t ino, unsigned link)
{
	int n = sprintf(buf, "%s-%" PRIu64 "-%u-", kind, ino, link);
	unsigned pad = (unsigned)rnd(p, 40);

	for (unsigned i = 0; i < pad; i++)
		buf[n++] = (char)('a' + rnd(p, 26));
	buf[n] = '\0';
}

static void add_inline(struct pop *p, struct pinode *in, uint64_t len)
{
	uint8_t *buf = xzalloc(TWIG_FILE_EXTENT_INLINE_START + len);
	struct twig_file_extent fe = {
		.generation = htole64(GEN),
		.ram_bytes = htole64(len),
		.type = TWIG_FILE_EXTENT_INLINE,
	};

	memcpy(buf, &fe, TWIG_FILE_EXTENT_INLINE_START);
	for (uint64_t i = 0; i < len; i++)
		buf[TWIG_FILE_EXTENT_INLINE_START + i] = (uint8_t)('A' + i % 26);
	add_item(p, in->ino, TWIG_EXTENT_DATA_KEY, 0, buf,
		 (uint32_t)(TWIG_FILE_EXTENT_INLINE_START + len));
	free(buf);
	in->size = len;
	in->nbytes = len;
}

/* An extended attribute; names with one hash merge into one item. */
static void add_xattr(struct pop *p, uint64_t ino, const char *name,
		      const void *value, size_t vlen)
{
	size_t len = strlen(name);
	struct twig_xattr_entry xe = {
		.transid = htole64(GEN),
		.name_len = htole16((uint16_t)len),
		.value_len = htole16((uint16_t)vlen),
	};
	uint8_t *buf = xzalloc(sizeof(xe) + len + vlen);

	memcpy(buf, &xe, sizeof(xe));
	memcpy(buf + sizeof(xe), name, len);
	memcpy(buf + sizeof(xe) + len, value, vlen);
	add_item(p, ino, TWIG_XATTR_ITEM_KEY, twig_name_hash(name, len), buf,
		 (uint32_t)(sizeof(xe) + len + vlen));
	free(buf);
}

/*
 * Attributes on some files, chosen by inode number so that the random
 * stream (and every other class's image) stays as it was: every fifth
 * regular file one, the first of them also two names with one crc32c hash
 * (one item) and an ACL.
 */
static void add_file_xattrs(struct pop *p, struct pinode *in)
{
	/* an access ACL: version 2, user::rw- group::r-- other::r-- */
	static const char acl[] = "\x02\x00\x00\x00\x01\x00\x06\x00"
		"\xff\xff\xff\xff\x04\x00\x04\x00\xff\xff\xff\xff"
		"\x20\x00\x04\x00\xff\xff\xff\xff";
	char value[32];

	if (!S_ISREG(in->mode) || in->ino % 5)
		return;
	snprintf(value, sizeof(value), "value-%" PRIu64, in->ino);
	add_xattr(p, in->ino, "user.pop", value, strlen(value));
	if (p->nxattr_files++)
		return;
	add_xattr(p, in->ino, "user.c1371838", "one", 3);
	add_xattr(p, in->ino, "user.c2000402", "two", 3);
	add_xattr(p, in->ino, "system.posix_acl_access", acl, sizeof(acl) - 1);
}

/*
 * A regular extent of @len bytes at file offset @off, data written now.
 * With @skip, the run starts @skip bytes before the data (item offset
 * @skip), as FORMAT.md allows: valid, but not what the module writes.
 */
static void add_regular_at(struct pop *p, struct pinode *in, uint64_t off,
			   uint64_t len, uint64_t skip)
{
	uint64_t disk_len = twig_round_up(len, TWIG_SECTORSIZE);
	uint8_t *data = xzalloc(disk_len);
	struct twig_file_extent fe = {
		.generation = htole64(GEN),
		.ram_bytes = htole64(disk_len),
		.type = TWIG_FILE_EXTENT_REG,
		.disk_bytenr = htole64(p->cursor),
		.disk_num_bytes = htole64(skip + disk_len),
		.offset = htole64(skip),
		.num_bytes = htole64(len),
	};

	/* the second extent written claims the first one's sectors too */
	if (damage_is(p, "extoverlap") && p->nextents++ == 1)
		fe.disk_bytenr = htole64(p->first_extent);
	if (!p->first_extent)
		p->first_extent = p->cursor;
	memset(data, (int)(in->ino & 0xff), len);
	if (twig_pwrite_full(p->fd, data, disk_len, p->cursor + skip))
		die("write failed: %s", strerror(errno));
	free(data);
	p->cursor += skip + disk_len;
	if (p->cursor > p->total_bytes / 2)
		die("image too small for this much data");
	add_item(p, in->ino, TWIG_EXTENT_DATA_KEY, off, &fe, sizeof(fe));
	in->size = off + len;
	in->nbytes += skip + disk_len;
}

static void add_regular(struct pop *p, struct pinode *in, uint64_t off,
			uint64_t len)
{
	add_regular_at(p, in, off, len, 0);
}

static void add_file_data(struct pop *p, struct pinode *in, unsigned kind)
{
	switch (kind) {
	case 0:
		break;				/* empty */
	case 1:
	case 2:
		add_inline(p, in, 1 + rnd(p, TWIG_MAX_INLINE));
		break;
	case 3:
		/*
		 * extoffset: the first such file's run starts a sector before
		 * its data, and the next file's extent follows right after it.
		 */
		add_regular_at(p, in, 0, 1 + rnd(p, 3 * TWIG_SECTORSIZE),
			       damage_is(p, "extoffset") && !p->offset_ino ?
			       TWIG_SECTORSIZE : 0);
		if (damage_is(p, "extoffset") && !p->offset_ino)
			p->offset_ino = in->ino;
		break;
	default:				/* two extents around a hole */
		add_regular(p, in, 0, TWIG_SECTORSIZE);
		add_regular(p, in, 3 * TWIG_SECTORSIZE, 1 + rnd(p, 8192));
		break;
	}
}

static struct pinode *new_file(struct pop *p)
{
	static const uint32_t kinds[] = { S_IFREG, S_IFREG, S_IFREG, S_IFREG,
					  S_IFREG, S_IFLNK, S_IFIFO, S_IFCHR };
	uint32_t type = kinds[rnd(p, 8)];
	struct pinode *in = new_inode(p, type | (type == S_IFLNK ? 0777 : 0644));

	if (type == S_IFREG)
		add_file_data(p, in, (unsigned)rnd(p, 6));
	else if (type == S_IFLNK)
		add_inline(p, in, 1 + rnd(p, 100));
	add_file_xattrs(p, in);
	return in;
}

/* A file whose last name went, with its orphan item (see -U). */
static void add_unlinked(struct pop *p)
{
	struct pinode *in = new_inode(p, S_IFREG | 0644);

	add_regular(p, in, 0, 2 * TWIG_SECTORSIZE);
	add_regular(p, in, 4 * TWIG_SECTORSIZE, TWIG_SECTORSIZE);
	/* deleted after the INODE_ITEM, before the extents: may be left */
	add_xattr(p, in->ino, "user.dying", "1", 1);
	in->nlink = damage_is(p, "orphanlinked") ? 1 : 0;
	in->headless = p->unfinished && !strcmp(p->unfinished, "headless");
	add_item(p, TWIG_ORPHAN_OBJECTID, TWIG_ORPHAN_ITEM_KEY, in->ino, NULL, 0);
	if (damage_is(p, "orphanleftover")) {
		/* a name's item that deletion removes before any extent */
		struct twig_inode_ref ref = { .index = htole64(99), .name_len = htole16(1) };
		uint8_t buf[sizeof(ref) + 1];

		memcpy(buf, &ref, sizeof(ref));
		buf[sizeof(ref)] = 'x';
		add_item(p, in->ino, TWIG_INODE_REF_KEY, TWIG_ROOT_DIR_OBJECTID,
			 buf, sizeof(buf));
	}
}

static void build_namespace(struct pop *p, unsigned nfiles, unsigned ndirs)
{
	struct pinode **dirs = xzalloc((ndirs + 1) * sizeof(*dirs));
	unsigned ndir = 0;
	char name[TWIG_NAME_LEN + 1];

	p->inodes = xzalloc((nfiles + ndirs + 2) * sizeof(*p->inodes));
	dirs[ndir++] = new_inode(p, S_IFDIR | 0755);
	for (unsigned i = 0; i < ndirs; i++) {
		struct pinode *parent = dirs[rnd(p, ndir)];
		struct pinode *d = new_inode(p, S_IFDIR | 0755);

		make_name(p, name, "dir", d->ino, 0);
		link_inode(p, parent, d, name);
		dirs[ndir++] = d;
	}
	for (unsigned i = 0; i < nfiles; i++) {
		struct pinode *f = new_file(p);
		unsigned links = i % 7 == 3 ? 3 : 1;	/* some hard links */

		for (unsigned l = 0; l < links; l++) {
			make_name(p, name, "file", f->ino, l);
			link_inode(p, dirs[rnd(p, ndir)], f, name);
		}
	}
	if (damage_is(p, "orphan"))
		new_inode(p, S_IFREG | 0644)->nlink = 1;
	else if (p->unfinished || damage_is(p, "orphanlinked"))
		add_unlinked(p);
	else if (damage_is(p, "orphanmissing"))
		add_item(p, TWIG_ORPHAN_OBJECTID, TWIG_ORPHAN_ITEM_KEY,
			 TWIG_ROOT_DIR_OBJECTID + nfiles + ndirs + 100, NULL, 0);
	free(dirs);
}

static void add_inode_items(struct pop *p)
{
	for (size_t i = 0; i < p->ninodes; i++) {
		const struct pinode *in = &p->inodes[i];
		struct twig_inode_item ii = {
			.generation = htole64(GEN),
			.transid = htole64(GEN),
			.size = htole64(in->size),
			.nbytes = htole64(in->nbytes),
			.next_index = htole64(in->next_index),
			.nlink = htole32(in->nlink),
			.mode = htole32(in->mode),
			.atime = { htole64(1700000000), 0 },
			.ctime = { htole64(1700000000), 0 },
			.mtime = { htole64(1700000000), 0 },
			.otime = { htole64(1700000000), 0 },
		};

		if (!in->headless)
			add_item(p, in->ino, TWIG_INODE_ITEM_KEY, 0, &ii, sizeof(ii));
	}
}

/* ---- item-level damage, before the tree is built ---- */

static struct pitem *find_type(struct pop *p, uint8_t type, unsigned nth)
{
	for (size_t i = 0; i < p->nitems; i++)
		if (p->items[i].key.type == type && !nth--)
			return &p->items[i];
	die("no item of type %u to damage", type);
}

static void damage_items(struct pop *p)
{
	struct twig_inode_item *ii;

	if (!p->damage)
		return;
	ii = (void *)find_type(p, TWIG_INODE_ITEM_KEY, 3)->data;
	if (damage_is(p, "nlink"))
		ii->nlink = htole32(le32toh(ii->nlink) + 1);
	else if (damage_is(p, "nbytes"))
		ii->nbytes = htole64(le64toh(ii->nbytes) + TWIG_SECTORSIZE);
	else if (damage_is(p, "dirsize")) {
		ii = (void *)find_type(p, TWIG_INODE_ITEM_KEY, 0)->data;
		ii->size = htole64(le64toh(ii->size) + 2);
	} else if (damage_is(p, "dirhash"))
		find_type(p, TWIG_DIR_ITEM_KEY, 2)->key.offset ^= 1;
	else if (damage_is(p, "dotdot"))
		find_type(p, TWIG_INODE_REF_KEY, 0)->key.offset = p->inodes[1].ino;
	else if (damage_is(p, "inodetransid"))
		ii->transid = htole64(GEN + 1);
	else if (damage_is(p, "inodegen"))
		ii->generation = htole64(GEN + 1);
	else if (damage_is(p, "direntgen")) {
		struct twig_dir_entry *de = (void *)find_type(p, TWIG_DIR_ITEM_KEY, 1)->data;

		de->transid = htole64(GEN + 1);
	} else if (damage_is(p, "extgen")) {
		struct twig_file_extent *fe = (void *)find_type(p, TWIG_EXTENT_DATA_KEY, 0)->data;

		fe->generation = htole64(GEN + 1);
	} else if (damage_is(p, "badname")) {
		struct pitem *it = find_type(p, TWIG_DIR_INDEX_KEY, 1);

		it->data[sizeof(struct twig_dir_entry)] = '/';
	}
}

/* ---- semantic damage: each class breaks one rule of the format ---- */

static struct pinode *pinode_of(struct pop *p, uint64_t ino)
{
	if (ino < TWIG_ROOT_DIR_OBJECTID ||
	    ino - TWIG_ROOT_DIR_OBJECTID >= p->ninodes)
		die("no inode %" PRIu64, ino);
	return &p->inodes[ino - TWIG_ROOT_DIR_OBJECTID];
}

static struct twig_inode_item *inode_item_of(struct pop *p, uint64_t ino)
{
	for (size_t i = 0; i < p->nitems; i++)
		if (p->items[i].key.objectid == ino &&
		    p->items[i].key.type == TWIG_INODE_ITEM_KEY)
			return (void *)p->items[i].data;
	die("inode %" PRIu64 " has no INODE_ITEM", ino);
}

/* The nth extent item of type @ext in an inode of type @fmt. */
static struct pitem *find_extent(struct pop *p, uint8_t ext, uint32_t fmt,
				 unsigned nth)
{
	for (size_t i = 0; i < p->nitems; i++) {
		struct pitem *it = &p->items[i];

		if (it->key.type == TWIG_EXTENT_DATA_KEY && it->data[16] == ext &&
		    (pinode_of(p, it->key.objectid)->mode & S_IFMT) == fmt &&
		    !nth--)
			return it;
	}
	die("no extent of type %u in an inode of type 0%o to damage", ext, fmt);
}

/* The nth inode other than the root of type @fmt with @nlink links (0: any). */
static struct pinode *find_pinode(struct pop *p, uint32_t fmt, uint32_t nlink,
				  unsigned nth)
{
	for (size_t i = 1; i < p->ninodes; i++) {
		struct pinode *in = &p->inodes[i];

		if ((in->mode & S_IFMT) == fmt && (!nlink || in->nlink == nlink) &&
		    !in->headless && !nth--)
			return in;
	}
	die("no inode of type 0%o with %u links to damage", fmt, nlink);
}

static struct twig_inode_item *nth_inode_item(struct pop *p, uint32_t fmt,
					      uint32_t nlink, unsigned nth)
{
	return inode_item_of(p, find_pinode(p, fmt, nlink, nth)->ino);
}

/* The INODE_REF item of @ino in @dir naming @name (one name each so far). */
static struct twig_inode_ref *ref_of(struct pop *p, uint64_t ino, uint64_t dir,
				     const uint8_t *name, uint16_t len)
{
	for (size_t i = 0; i < p->nitems; i++) {
		struct pitem *it = &p->items[i];
		struct twig_inode_ref *ref = (void *)it->data;

		if (it->key.objectid == ino && it->key.type == TWIG_INODE_REF_KEY &&
		    it->key.offset == dir && le16toh(ref->name_len) == len &&
		    !memcmp(it->data + sizeof(*ref), name, len))
			return ref;
	}
	die("no INODE_REF for inode %" PRIu64, ino);
}

static struct twig_file_extent *reg_extent(struct pop *p)
{
	return (void *)find_extent(p, TWIG_FILE_EXTENT_REG, S_IFREG, 0)->data;
}

static void ext_beyond(struct pop *p)
{
	reg_extent(p)->disk_bytenr = htole64(p->total_bytes + (1 << 20));
}

static void ext_long(struct pop *p)
{
	reg_extent(p)->disk_num_bytes = htole64(p->total_bytes);
}

static void ext_unaligned(struct pop *p)
{
	struct twig_file_extent *fe = reg_extent(p);

	fe->disk_bytenr = htole64(le64toh(fe->disk_bytenr) + 512);
}

static void ext_super(struct pop *p)
{
	reg_extent(p)->disk_bytenr = htole64(TWIG_SUPER_OFFSET);
}

/* The first leaf goes right after the data, at the next node boundary. */
static void ext_tree(struct pop *p)
{
	reg_extent(p)->disk_bytenr = htole64(twig_round_up(p->cursor, p->nodesize));
}

static void ext_wrap(struct pop *p)
{
	struct twig_file_extent *fe = reg_extent(p);

	fe->disk_bytenr = htole64(UINT64_MAX - TWIG_SECTORSIZE + 1);
	fe->disk_num_bytes = htole64(2 * TWIG_SECTORSIZE);
}

static void ext_zero(struct pop *p)
{
	struct twig_file_extent *fe = reg_extent(p);

	fe->disk_num_bytes = 0;
	fe->num_bytes = 0;
}

static void ext_range(struct pop *p)
{
	struct twig_file_extent *fe = reg_extent(p);

	fe->offset = fe->disk_num_bytes;
}

/*
 * A file's last extent maps a sector past its run, onto the next file's
 * data, with the size raised to cover it: a checker that computes
 * disk_num_bytes - num_bytes unsigned sees nothing wrong.
 */
static void ext_past_run(struct pop *p)
{
	for (size_t i = 0; i < p->nitems; i++) {
		struct pitem *it = &p->items[i];
		struct twig_file_extent *fe = (void *)it->data;
		uint64_t end;

		if (it->key.type != TWIG_EXTENT_DATA_KEY ||
		    fe->type != TWIG_FILE_EXTENT_REG)
			continue;
		end = le64toh(fe->disk_bytenr) + le64toh(fe->disk_num_bytes);
		for (size_t j = 0; j < p->nitems; j++) {
			struct pitem *next = &p->items[j];
			struct twig_file_extent *nfe = (void *)next->data;
			uint64_t len = le64toh(fe->disk_num_bytes) + TWIG_SECTORSIZE;

			if (next->key.type != TWIG_EXTENT_DATA_KEY ||
			    nfe->type != TWIG_FILE_EXTENT_REG ||
			    next->key.objectid == it->key.objectid ||
			    le64toh(nfe->disk_bytenr) != end)
				continue;
			fe->num_bytes = htole64(len);
			inode_item_of(p, it->key.objectid)->size =
				htole64(it->key.offset + len);
			printf("inode %" PRIu64 ": extent maps [%" PRIu64 ", +%" PRIu64
			       "), inode %" PRIu64 "'s data from %" PRIu64 "\n",
			       it->key.objectid, le64toh(fe->disk_bytenr), len,
			       next->key.objectid, end);
			return;
		}
	}
	die("no extent followed by another file's data");
}

static struct pitem *inline_extent(struct pop *p, uint32_t fmt)
{
	return find_extent(p, TWIG_FILE_EXTENT_INLINE, fmt, 0);
}

static void add_ram_bytes(struct pitem *it, uint64_t delta)
{
	struct twig_file_extent *fe = (void *)it->data;

	fe->ram_bytes = htole64(le64toh(fe->ram_bytes) + delta);
}

static void inline_big(struct pop *p)
{
	add_ram_bytes(inline_extent(p, S_IFREG), 1000);
}

static void symlink_item(struct pop *p)
{
	add_ram_bytes(inline_extent(p, S_IFLNK), 1000);
}

/* Item size 17 + ram_bytes holds only in 32 bits. */
static void inline_wrap32(struct pop *p)
{
	add_ram_bytes(inline_extent(p, S_IFREG), 1ULL << 32);
}

static void inline_isize(struct pop *p)
{
	struct pitem *it = inline_extent(p, S_IFREG);
	struct twig_inode_item *ii = inode_item_of(p, it->key.objectid);

	ii->size = htole64(le64toh(ii->size) / 2);
}

/* Replaces an inline extent by one of @len bytes, inode kept consistent. */
static void resize_inline(struct pop *p, struct pitem *it, uint64_t len)
{
	struct twig_inode_item *ii = inode_item_of(p, it->key.objectid);
	uint8_t *buf = xzalloc(TWIG_FILE_EXTENT_INLINE_START + len);
	struct twig_file_extent fe;

	memcpy(&fe, it->data, TWIG_FILE_EXTENT_INLINE_START);
	fe.ram_bytes = htole64(len);
	memcpy(buf, &fe, TWIG_FILE_EXTENT_INLINE_START);
	for (uint64_t i = 0; i < len; i++)
		buf[TWIG_FILE_EXTENT_INLINE_START + i] = (uint8_t)('a' + i % 26);
	free(it->data);
	it->data = buf;
	it->size = (uint32_t)(TWIG_FILE_EXTENT_INLINE_START + len);
	ii->size = htole64(len);
	ii->nbytes = htole64(len);
}

static uint64_t long_inline(const struct pop *p)
{
	/* longer than the limit, short enough for one leaf */
	return p->nodesize - sizeof(struct twig_header) - 4 * sizeof(struct twig_item) -
	       TWIG_FILE_EXTENT_INLINE_START - 300;
}

static void inline_max(struct pop *p)
{
	resize_inline(p, inline_extent(p, S_IFREG), long_inline(p));
}

static void symlink_long(struct pop *p)
{
	resize_inline(p, inline_extent(p, S_IFLNK), long_inline(p));
}

static void symlink_size(struct pop *p)
{
	struct pitem *it = inline_extent(p, S_IFLNK);
	struct twig_inode_item *ii = inode_item_of(p, it->key.objectid);

	ii->size = htole64(le64toh(ii->size) + 100);
}

static struct twig_inode_item *reg_inode(struct pop *p)
{
	return inode_item_of(p, find_extent(p, TWIG_FILE_EXTENT_REG, S_IFREG, 0)->key.objectid);
}

/* Only a preallocated extent may lie past EOF (FALLOC_FL_KEEP_SIZE). */
static void ext_past_eof(struct pop *p)
{
	reg_inode(p)->size = 0;
}

/* A preallocated extent owns its sectors as a regular one does. */
static void prealloc_beyond(struct pop *p)
{
	struct twig_file_extent *fe = reg_extent(p);

	fe->type = TWIG_FILE_EXTENT_PREALLOC;
	fe->disk_bytenr = htole64(p->total_bytes + (1 << 20));
}

static void prealloc_tree(struct pop *p)
{
	struct twig_file_extent *fe = reg_extent(p);

	fe->type = TWIG_FILE_EXTENT_PREALLOC;
	fe->disk_bytenr = htole64(twig_round_up(p->cursor, p->nodesize));
}

static void isize_neg(struct pop *p)
{
	reg_inode(p)->size = htole64(1ULL << 63);
}

static void isize_max(struct pop *p)
{
	reg_inode(p)->size = htole64(UINT64_MAX);
}

static void set_mode(struct twig_inode_item *ii, uint32_t type)
{
	ii->mode = htole32((le32toh(ii->mode) & 07777) | type);
}

static void mode_type(struct pop *p)
{
	set_mode(reg_inode(p), 0110000);	/* no such file type */
}

static void mode_mismatch(struct pop *p)
{
	set_mode(nth_inode_item(p, S_IFIFO, 0, 0), S_IFSOCK);
}

/* An empty regular file whose inode says directory. */
static void mode_dir(struct pop *p)
{
	for (size_t i = 1; i < p->ninodes; i++) {
		struct pinode *in = &p->inodes[i];

		if (S_ISREG(in->mode) && !in->size && in->nlink == 1) {
			set_mode(inode_item_of(p, in->ino), S_IFDIR);
			return;
		}
	}
	die("no empty file to damage");
}

/* A directory whose inode says regular file. */
static void mode_dir_reg(struct pop *p)
{
	set_mode(nth_inode_item(p, S_IFDIR, 0, 2), S_IFREG);
}

static void nlink_zero(struct pop *p)
{
	nth_inode_item(p, S_IFREG, 1, 0)->nlink = 0;
}

static void nlink_low(struct pop *p)
{
	nth_inode_item(p, S_IFREG, 3, 0)->nlink = htole32(1);
}

static void nlink_max(struct pop *p)
{
	nth_inode_item(p, S_IFREG, 1, 1)->nlink = htole32(UINT32_MAX);
}

static void inode_gen_max(struct pop *p)
{
	struct twig_inode_item *ii = nth_inode_item(p, S_IFREG, 1, 2);

	ii->generation = htole64(UINT64_MAX);
	ii->transid = htole64(UINT64_MAX);
}

static void next_index_max(struct pop *p)
{
	inode_item_of(p, TWIG_ROOT_DIR_OBJECTID)->next_index = htole64(UINT64_MAX);
}

static struct pitem *dir_index(struct pop *p)
{
	return find_type(p, TWIG_DIR_INDEX_KEY, 1);
}

/* Moves a DIR_INDEX and its INODE_REF's index to @index. */
static void move_index(struct pop *p, uint64_t index)
{
	struct pitem *it = dir_index(p);
	struct twig_dir_entry *de = (void *)it->data;

	ref_of(p, le64toh(de->ino), it->key.objectid, it->data + sizeof(*de),
	       le16toh(de->name_len))->index = htole64(index);
	it->key.offset = index;
}

static void dir_index_max(struct pop *p)
{
	move_index(p, UINT64_MAX);
}

static void dir_index_low(struct pop *p)
{
	move_index(p, 0);
}

static void add_name_len(struct pitem *it, size_t len_off, unsigned delta)
{
	__le16 *len = (void *)(it->data + len_off);

	*len = htole16((uint16_t)(le16toh(*len) + delta));
}

static void name_len_big(struct pop *p)
{
	add_name_len(dir_index(p), offsetof(struct twig_dir_entry, name_len), 100);
}

static void name_len_max(struct pop *p)
{
	struct twig_dir_entry *de = (void *)dir_index(p)->data;

	de->name_len = htole16(UINT16_MAX);
}

static void name_len_item(struct pop *p)
{
	add_name_len(find_type(p, TWIG_DIR_ITEM_KEY, 3),
		     offsetof(struct twig_dir_entry, name_len), 100);
}

static void name_len_ref(struct pop *p)
{
	add_name_len(find_type(p, TWIG_INODE_REF_KEY, 3),
		     offsetof(struct twig_inode_ref, name_len), 50);
}

static void nul_name(struct pop *p)
{
	dir_index(p)->data[sizeof(struct twig_dir_entry) + 1] = '\0';
}

static void rename_index(struct pop *p, const char *name)
{
	struct pitem *it = dir_index(p);
	struct twig_dir_entry *de = (void *)it->data;
	uint16_t len = (uint16_t)strlen(name);

	de->name_len = htole16(len);
	memcpy(it->data + sizeof(*de), name, len);
	it->size = (uint32_t)(sizeof(*de) + len);
}

static void empty_name(struct pop *p)
{
	rename_index(p, "");
}

static void dot_name(struct pop *p)
{
	rename_index(p, "..");
}

static struct pitem *xattr_item(struct pop *p)
{
	return find_type(p, TWIG_XATTR_ITEM_KEY, 0);
}

static void xattr_hash(struct pop *p)
{
	xattr_item(p)->key.offset ^= 1;
}

static void xattr_name(struct pop *p)
{
	xattr_item(p)->data[sizeof(struct twig_xattr_entry)] = 'x';
}

static void xattr_len(struct pop *p)
{
	((struct twig_xattr_entry *)xattr_item(p)->data)->value_len =
		htole16(0xffff);
}

static void xattr_transid(struct pop *p)
{
	((struct twig_xattr_entry *)xattr_item(p)->data)->transid =
		htole64(UINT64_MAX);
}

static void dirent_type(struct pop *p)
{
	((struct twig_dir_entry *)dir_index(p)->data)->type = 99;
}

/* The last inode becomes U64_MAX: the next objectid would wrap to 0. */
static void objectid_max(struct pop *p)
{
	uint64_t from = p->inodes[p->ninodes - 1].ino;

	for (size_t i = 0; i < p->nitems; i++) {
		struct pitem *it = &p->items[i];
		struct twig_dir_entry *de = (void *)it->data;

		if (it->key.objectid == from)
			it->key.objectid = UINT64_MAX;
		if ((it->key.type == TWIG_DIR_ITEM_KEY ||
		     it->key.type == TWIG_DIR_INDEX_KEY) && le64toh(de->ino) == from)
			de->ino = htole64(UINT64_MAX);
	}
}

static void sb_gen_max(struct pop *p)
{
	p->sb_generation = UINT64_MAX;
}

static void bytes_used_low(struct pop *p)
{
	p->sb_bytes_used = 16 * TWIG_SECTORSIZE;
}

static const struct {
	const char *name;
	void (*fn)(struct pop *p);
} item_damage[] = {
	{ "extbeyond", ext_beyond },
	{ "extlong", ext_long },
	{ "extunaligned", ext_unaligned },
	{ "extsuper", ext_super },
	{ "exttree", ext_tree },
	{ "extwrap", ext_wrap },
	{ "extzero", ext_zero },
	{ "extrange", ext_range },
	{ "extpastrun", ext_past_run },
	{ "inlinebig", inline_big },
	{ "inlinewrap32", inline_wrap32 },
	{ "inlineisize", inline_isize },
	{ "inlinemax", inline_max },
	{ "symlinklong", symlink_long },
	{ "symlinkitem", symlink_item },
	{ "symlinksize", symlink_size },
	{ "extpasteof", ext_past_eof },
	{ "preallocbeyond", prealloc_beyond },
	{ "prealloctree", prealloc_tree },
	{ "isizeneg", isize_neg },
	{ "isizemax", isize_max },
	{ "modetype", mode_type },
	{ "modemismatch", mode_mismatch },
	{ "modedir", mode_dir },
	{ "modedirreg", mode_dir_reg },
	{ "nlinkzero", nlink_zero },
	{ "nlinklow", nlink_low },
	{ "nlinkmax", nlink_max },
	{ "inodegenmax", inode_gen_max },
	{ "nextindexmax", next_index_max },
	{ "dirindexmax", dir_index_max },
	{ "dirindexlow", dir_index_low },
	{ "namelenbig", name_len_big },
	{ "namelenmax", name_len_max },
	{ "namelenitem", name_len_item },
	{ "namelenref", name_len_ref },
	{ "nulname", nul_name },
	{ "emptyname", empty_name },
	{ "dotname", dot_name },
	{ "direnttype", dirent_type },
	{ "xattrhash", xattr_hash },
	{ "xattrname", xattr_name },
	{ "xattrlen", xattr_len },
	{ "xattrtransid", xattr_transid },
	{ "objectidmax", objectid_max },
	{ "genmax", sb_gen_max },
	{ "bytesused", bytes_used_low },
};

static int pitem_cmp(const void *a, const void *b)
{
	return twig_key_cmp(&((const struct pitem *)a)->key,
			    &((const struct pitem *)b)->key);
}

/* Items sharing a key (hash collisions, two names in one dir) become one. */
static void sort_and_merge(struct pop *p)
{
	size_t out = 0;

	qsort(p->items, p->nitems, sizeof(*p->items), pitem_cmp);
	for (size_t i = 0; i < p->nitems; i++) {
		struct pitem *prev = out ? &p->items[out - 1] : NULL;
		struct pitem *it = &p->items[i];

		if (prev && !twig_key_cmp(&prev->key, &it->key)) {
			prev->data = realloc(prev->data, prev->size + it->size);
			if (!prev->data)
				die("out of memory");
			memcpy(prev->data + prev->size, it->data, it->size);
			prev->size += it->size;
			free(it->data);
			continue;
		}
		p->items[out++] = *it;
	}
	p->nitems = out;
}

/* ---- bulk-loading the tree ---- */

static struct block *new_block(struct pop *p, uint8_t level, uint32_t nritems)
{
	struct block *b = &p->blocks[p->nblocks++];
	struct twig_header *h;

	b->addr = p->cursor;
	p->cursor += p->nodesize;
	if (p->cursor > p->total_bytes)
		die("image too small for the tree");
	b->buf = xzalloc(p->nodesize);
	h = (void *)b->buf;
	memcpy(h->fsid, p->sb.fsid, 16);
	h->bytenr = htole64(b->addr);
	h->generation = htole64(GEN);
	h->owner = htole64(TWIG_FS_TREE_OBJECTID);
	h->nritems = htole32(nritems);
	h->level = level;
	return b;
}

/* Fills leaves front to back; returns the index of the first leaf. */
static size_t build_leaves(struct pop *p)
{
	size_t first = p->nblocks, i = 0;

	do {
		size_t n = 0, used = sizeof(struct twig_header);
		uint32_t off = p->nodesize;
		struct block *b;

		while (i + n < p->nitems && used + sizeof(struct twig_item) +
		       p->items[i + n].size <= p->nodesize) {
			used += sizeof(struct twig_item) + p->items[i + n].size;
			n++;
		}
		if (!n && i < p->nitems)
			die("item too large for a leaf");
		b = new_block(p, 0, (uint32_t)n);
		for (size_t s = 0; s < n; s++) {
			struct twig_item *it = (void *)twig_leaf_item(b->buf, (uint32_t)s);
			const struct pitem *pi = &p->items[i + s];

			off -= pi->size;
			twig_key_to_disk(&it->key, &pi->key);
			it->offset = htole32(off);
			it->size = htole32(pi->size);
			memcpy(b->buf + off, pi->data, pi->size);
		}
		if (n)
			b->first = p->items[i].key;
		i += n;
	} while (i < p->nitems);
	return first;
}

/* One level of internal nodes over blocks [first, first + count). */
static size_t build_level(struct pop *p, size_t first, size_t count,
			  uint8_t level)
{
	size_t nnodes = (count + p->fanout - 1) / p->fanout;
	size_t child = first;

	for (size_t n = 0; n < nnodes; n++) {
		/* spread evenly, as a series of splits would leave them */
		size_t take = count / nnodes + (n < count % nnodes);
		struct block *b = new_block(p, level, (uint32_t)take);

		b->first = p->blocks[child].first;
		for (size_t s = 0; s < take; s++, child++) {
			struct twig_key_ptr *kp = (void *)twig_node_ptr(b->buf, (uint32_t)s);

			twig_key_to_disk(&kp->key, &p->blocks[child].first);
			kp->blockptr = htole64(p->blocks[child].addr);
			kp->generation = htole64(GEN);
		}
	}
	return nnodes;
}

/* Returns the root block. */
static struct block *build_tree(struct pop *p)
{
	size_t max_blocks = 2 * (p->nitems + 1) + 16;
	size_t first, count;
	uint8_t level = 0;

	p->blocks = xzalloc(max_blocks * sizeof(*p->blocks));
	p->data_end = p->cursor;
	p->cursor = twig_round_up(p->cursor, p->nodesize);
	p->tree_start = p->cursor;
	first = build_leaves(p);
	count = p->nblocks - first;
	while (count > 1) {
		size_t next = p->nblocks;

		if (++level >= TWIG_MAX_LEVEL)
			die("tree too deep; raise the fanout");
		count = build_level(p, first, count, level);
		first = next;
	}
	return &p->blocks[first];
}

static void swap_keys(struct twig_disk_key *a, struct twig_disk_key *b)
{
	struct twig_disk_key t = *a;

	*a = *b;
	*b = t;
}

/* Damage that needs the built tree; checksums are set afterwards. */
static void damage_tree(struct pop *p, struct block *root)
{
	struct twig_key_ptr *kp;

	if (damage_is(p, "keyorder")) {
		for (size_t i = 0; i < p->nblocks; i++) {
			struct twig_header *h = (void *)p->blocks[i].buf;

			if (!h->level && le32toh(h->nritems) >= 3) {
				swap_keys((void *)twig_leaf_item(h, 1),
					  (void *)twig_leaf_item(h, 2));
				return;
			}
		}
		die("no leaf to reorder");
	}
	if (!damage_is(p, "childptr") && !damage_is(p, "childgen"))
		return;
	if (!root->buf[offsetof(struct twig_header, level)])
		die("tree has one level; populate more files");
	kp = (void *)twig_node_ptr(root->buf, 1);
	if (damage_is(p, "childptr"))
		kp->blockptr = twig_node_ptr(root->buf, 0)->blockptr;
	else
		kp->generation = htole64(GEN - 1);
}

static struct block *block_at(struct pop *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nblocks; i++)
		if (p->blocks[i].addr == addr)
			return &p->blocks[i];
	die("no tree block at %" PRIu64, addr);
}

static struct twig_header *hdr(struct block *b)
{
	return (void *)b->buf;
}

static struct twig_key_ptr *ptr(struct block *b, uint32_t slot)
{
	return (void *)twig_node_ptr(b->buf, slot);
}

/* A leaf other than the root with at least three items. */
static struct block *some_leaf(struct pop *p, struct block *root)
{
	for (size_t i = 0; i < p->nblocks; i++)
		if (&p->blocks[i] != root && !hdr(&p->blocks[i])->level &&
		    le32toh(hdr(&p->blocks[i])->nritems) >= 3)
			return &p->blocks[i];
	die("no leaf to damage; populate more files");
}

static struct twig_item *leaf_item(struct pop *p, struct block *root)
{
	return (void *)twig_leaf_item(some_leaf(p, root)->buf, 1);
}

/*
 * Item 1 starts 8 bytes into item 0's data and is 2^32 - 8 bytes long: in
 * 32 bits it ends exactly where item 0's data starts, so a check done in
 * u32 (size <= end - offset, offset + size == end) passes.
 */
static void item_wrap(struct pop *p, struct block *root)
{
	struct block *b = some_leaf(p, root);
	struct twig_item *it = (void *)twig_leaf_item(b->buf, 1);

	it->offset = htole32(le32toh(twig_leaf_item(b->buf, 0)->offset) + 8);
	it->size = htole32(0u - 8u);
}

static void item_huge(struct pop *p, struct block *root)
{
	leaf_item(p, root)->size = htole32(0x80000000u);
}

static void item_array(struct pop *p, struct block *root)
{
	leaf_item(p, root)->offset = htole32(sizeof(struct twig_header));
}

/* nritems * sizeof(item) wraps to 4 in 32 bits. */
static void items_end(struct pop *p, struct block *root)
{
	hdr(some_leaf(p, root))->nritems = htole32(0x0A3D70A4u);
}

static void need_levels(struct block *root, uint8_t levels)
{
	if (hdr(root)->level < levels)
		die("tree has %u levels, this damage needs %u; populate more files",
		    hdr(root)->level + 1, levels + 1);
}

/* The root points at a grandchild: level skips one. */
static void child_level(struct pop *p, struct block *root)
{
	struct block *child;

	need_levels(root, 2);
	child = block_at(p, le64toh(ptr(root, 0)->blockptr));
	ptr(root, 0)->blockptr = ptr(child, 0)->blockptr;
}

static void child_gen_new(struct pop *p, struct block *root)
{
	struct block *child;

	need_levels(root, 1);
	child = block_at(p, le64toh(ptr(root, 1)->blockptr));
	hdr(child)->generation = htole64(GEN + 1);
	ptr(root, 1)->generation = htole64(GEN + 1);
	p->sb_generation = GEN + 1;
}

static void set_child(struct block *root, uint64_t addr)
{
	need_levels(root, 1);
	ptr(root, 1)->blockptr = htole64(addr);
}

static void child_outside(struct pop *p, struct block *root)
{
	set_child(root, twig_round_up(p->total_bytes, p->nodesize) + 16 * p->nodesize);
}

static void child_super(struct pop *p, struct block *root)
{
	(void)p;
	set_child(root, TWIG_SUPER_OFFSET);
}

static void child_zero(struct pop *p, struct block *root)
{
	(void)p;
	set_child(root, 0);
}

static void child_bitmap(struct pop *p, struct block *root)
{
	(void)p;
	set_child(root, TWIG_RESERVED_BYTES);
}

static void child_data(struct pop *p, struct block *root)
{
	if (!p->first_extent)
		die("no data extent to point at");
	set_child(root, twig_round_up(p->first_extent, p->nodesize));
}

/* A grandchild of the root points back at the root. */
static void child_loop(struct pop *p, struct block *root)
{
	struct block *child;

	need_levels(root, 2);
	child = block_at(p, le64toh(ptr(root, 0)->blockptr));
	ptr(child, 1)->blockptr = htole64(root->addr);
}

static void child_self(struct pop *p, struct block *root)
{
	(void)p;
	set_child(root, root->addr);
}

/* A live tree block marked free: the allocator may hand it out again. */
static void bitmap_tree(struct pop *p, struct block *root)
{
	need_levels(root, 1);
	p->clear_block = le64toh(ptr(root, 1)->blockptr);
}

/* The root marked free: the first CoW of it may be given its own address. */
static void bitmap_root(struct pop *p, struct block *root)
{
	p->clear_block = root->addr;
}

static const struct {
	const char *name;
	void (*fn)(struct pop *p, struct block *root);
} tree_damage[] = {
	{ "itemwrap", item_wrap },
	{ "itemhuge", item_huge },
	{ "itemarray", item_array },
	{ "itemsend", items_end },
	{ "childlevel", child_level },
	{ "childgennew", child_gen_new },
	{ "childoutside", child_outside },
	{ "childsuper", child_super },
	{ "childzero", child_zero },
	{ "childbitmap", child_bitmap },
	{ "childdata", child_data },
	{ "childloop", child_loop },
	{ "childself", child_self },
	{ "bitmaptree", bitmap_tree },
	{ "bitmaproot", bitmap_root },
};

/*
 * N bytes (-m, else 1 to 8) of header fields, item headers, key pointers
 * and item bodies of random blocks, made 0, 0xff, a flipped bit or random;
 * the checksums are set afterwards.
 */
static void damage_mutate(struct pop *p, uint64_t seed)
{
	unsigned n;

	p->rng = (seed + 1) * 0x9E3779B97F4A7C15ull;
	n = p->mutations ? p->mutations : 1 + (unsigned)rnd(p, 8);
	for (unsigned i = 0; i < n; i++) {
		struct block *b = &p->blocks[rnd(p, p->nblocks)];
		struct twig_header *h = hdr(b);
		size_t each = h->level ? sizeof(struct twig_key_ptr) : sizeof(struct twig_item);
		uint64_t nr = le32toh(h->nritems), at;
		uint8_t *byte;

		if (nr > (p->nodesize - sizeof(*h)) / each)
			nr = (p->nodesize - sizeof(*h)) / each;
		switch (rnd(p, 4)) {
		case 0:
			at = 4 + rnd(p, sizeof(*h) - 4);
			break;
		case 1:
			at = sizeof(*h) + rnd(p, nr * each);
			break;
		default:
			at = sizeof(*h) + rnd(p, nr * each);
			if (!h->level && nr) {
				const struct twig_item *it = twig_leaf_item(b->buf, (uint32_t)rnd(p, nr));
				uint64_t off = le32toh(it->offset), size = le32toh(it->size);

				if (size && off >= sizeof(*h) && off + size <= p->nodesize)
					at = off + rnd(p, size);
			}
			break;
		}
		byte = &b->buf[at];
		switch (rnd(p, 4)) {
		case 0: *byte = 0; break;
		case 1: *byte = 0xff; break;
		case 2: *byte ^= (uint8_t)(1u << rnd(p, 8)); break;
		default: *byte = (uint8_t)rnd(p, 256); break;
		}
	}
}

/* Random bytes in one random block, checksum made valid again. */
static void damage_fuzz(struct pop *p, uint64_t seed)
{
	struct block *b;
	unsigned n;

	p->rng = seed * 2654435761u + 1;
	b = &p->blocks[rnd(p, p->nblocks)];
	n = 1 + (unsigned)rnd(p, 16);
	for (unsigned i = 0; i < n; i++) {
		uint32_t at = 4 + (uint32_t)rnd(p, p->nodesize - 4);

		b->buf[at] = (uint8_t)rnd(p, 256);
	}
}

/* ---- writing ---- */

static void write_all(struct pop *p, const struct block *root)
{
	uint64_t data_start = TWIG_RESERVED_BYTES + 2 * p->alloc_bytes;
	uint64_t bits = twig_total_bits(p->total_bytes);
	struct twig_super_block *sb = &p->sb;

	p->map = xzalloc(p->alloc_bytes);
	twig_bitmap_set(p->map, 0, data_start);
	twig_bitmap_set(p->map, data_start, p->data_end - data_start);
	twig_bitmap_set(p->map, p->tree_start, p->cursor - p->tree_start);
	if (damage_is(p, "leak"))
		twig_bitmap_set(p->map, p->total_bytes - TWIG_SECTORSIZE, TWIG_SECTORSIZE);
	if (damage_is(p, "unaccounted") && p->first_extent)
		p->map[p->first_extent / TWIG_SECTORSIZE / 8] &=
			(uint8_t)~TWIG_BITMAP_BIT(p->first_extent / TWIG_SECTORSIZE);
	/* the superblock and both bitmap copies free, checksum valid */
	if (damage_is(p, "bitmapreserved"))
		for (uint64_t s = TWIG_SUPER_OFFSET / TWIG_SECTORSIZE;
		     s < data_start / TWIG_SECTORSIZE; s++)
			p->map[s / 8] &= (uint8_t)~TWIG_BITMAP_BIT(s);
	for (uint64_t s = p->clear_block / TWIG_SECTORSIZE;
	     p->clear_block && s < (p->clear_block + p->nodesize) / TWIG_SECTORSIZE; s++)
		p->map[s / 8] &= (uint8_t)~TWIG_BITMAP_BIT(s);
	/* the last byte's bits past the last sector, counted by a popcount */
	if (damage_is(p, "bitmappast")) {
		if (!(bits % 8))
			die("bitmappast needs a size that is not a multiple of 8 sectors");
		twig_bitmap_set(p->map, bits * TWIG_SECTORSIZE,
				(8 - bits % 8) * TWIG_SECTORSIZE);
	}
	for (size_t i = 0; i < p->nblocks; i++) {
		twig_block_csum_set(p->blocks[i].buf, p->nodesize);
		if (twig_pwrite_full(p->fd, p->blocks[i].buf, p->nodesize,
				     p->blocks[i].addr))
			die("write failed: %s", strerror(errno));
	}
	sb->alloc_copy = !sb->alloc_copy;
	/*
	 * allocbytes: alloc_bytes + 2^63, which 2 * and 8 * alloc_bytes
	 * cannot tell from the true value; copy A, so that the mount reads
	 * the bitmap and only the first commit's write goes astray.
	 */
	if (damage_is(p, "allocbytes")) {
		sb->alloc_copy = 0;
		sb->alloc_bytes = htole64(p->alloc_bytes + (1ULL << 63));
	}
	if (twig_pwrite_full(p->fd, p->map, p->alloc_bytes, TWIG_RESERVED_BYTES +
			     sb->alloc_copy * p->alloc_bytes))
		die("write failed: %s", strerror(errno));
	sb->alloc_csum = htole32(twig_csum(p->map,
				 twig_bitmap_used_bytes(p->total_bytes)));
	sb->bytes_used = htole64(p->sb_bytes_used ? p->sb_bytes_used :
				 twig_popcount(p->map, bits) * TWIG_SECTORSIZE);
	sb->generation = htole64(p->sb_generation);
	sb->root = htole64(root->addr);
	sb->root_generation = htole64(GEN);
	sb->root_level = root->buf[offsetof(struct twig_header, level)];
	twig_super_csum_set(sb);
	if (fsync(p->fd) ||
	    twig_pwrite_full(p->fd, sb, sizeof(*sb), TWIG_SUPER_OFFSET) ||
	    fsync(p->fd))
		die("write failed: %s", strerror(errno));
}

static void free_all(struct pop *p)
{
	for (size_t i = 0; i < p->nitems; i++)
		free(p->items[i].data);
	for (size_t i = 0; i < p->nblocks; i++)
		free(p->blocks[i].buf);
	free(p->items);
	free(p->blocks);
	free(p->inodes);
	free(p->map);
}

/* Damage classes handled by damage_items() and damage_tree(). */
static const char *const other_damage[] = {
	"nlink", "nbytes", "dirsize", "dirhash", "dotdot", "inodetransid",
	"inodegen", "direntgen", "extgen", "badname", "noindex", "extoverlap",
	"orphan", "orphanlinked", "orphanmissing", "orphanleftover", "leak",
	"unaccounted", "keyorder", "childptr", "childgen", "extoffset",
	"bitmapreserved", "bitmappast", "allocbytes",
};

static bool known_damage(const char *name)
{
	if (!strncmp(name, "fuzz-", 5) || !strncmp(name, "mutate-", 7))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(other_damage); i++)
		if (!strcmp(name, other_damage[i]))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(item_damage); i++)
		if (!strcmp(name, item_damage[i].name))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(tree_damage); i++)
		if (!strcmp(name, tree_damage[i].name))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct pop p = { .rng = 88172645463325252ull, .sb_generation = GEN };
	unsigned nfiles = 100, ndirs = 10;
	struct block *root;
	int c;

	while ((c = getopt(argc, argv, "n:d:F:s:D:U:m:")) != -1) {
		switch (c) {
		case 'n': nfiles = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'd': ndirs = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'F': p.fanout = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': p.rng += strtoull(optarg, NULL, 0); break;
		case 'D': p.damage = optarg; break;
		case 'U': p.unfinished = optarg; break;
		case 'm': p.mutations = (unsigned)strtoul(optarg, NULL, 0); break;
		default:
			die("usage: " PROG " [-n files] [-d dirs] [-F fanout] [-s seed] [-D damage] [-m bytes] [-U open|headless] image");
		}
	}
	if (p.unfinished && strcmp(p.unfinished, "open") &&
	    strcmp(p.unfinished, "headless"))
		die("-U takes open or headless, not '%s'", p.unfinished);
	if (p.damage && !known_damage(p.damage))
		die("unknown damage '%s'", p.damage);
	if (optind != argc - 1)
		die("no image given");
	p.fd = open(argv[optind], O_RDWR);
	if (p.fd < 0 || twig_pread_full(p.fd, &p.sb, sizeof(p.sb), TWIG_SUPER_OFFSET))
		die("cannot read %s: %s", argv[optind], strerror(errno));
	if (le64toh(p.sb.magic) != TWIG_MAGIC)
		die("%s is not twigfs", argv[optind]);
	p.nodesize = le32toh(p.sb.nodesize);
	p.total_bytes = le64toh(p.sb.total_bytes);
	p.alloc_bytes = twig_alloc_bytes(p.total_bytes);
	p.cursor = TWIG_RESERVED_BYTES + 2 * p.alloc_bytes;
	if (!p.fanout || p.fanout > twig_max_items(p.nodesize, 1))
		p.fanout = twig_max_items(p.nodesize, 1);
	if (p.fanout < 2)
		die("fanout must be at least 2");
	build_namespace(&p, nfiles, ndirs);
	add_inode_items(&p);
	damage_items(&p);
	for (size_t i = 0; i < ARRAY_SIZE(item_damage); i++)
		if (damage_is(&p, item_damage[i].name))
			item_damage[i].fn(&p);
	sort_and_merge(&p);
	root = build_tree(&p);
	damage_tree(&p, root);
	for (size_t i = 0; i < ARRAY_SIZE(tree_damage); i++)
		if (damage_is(&p, tree_damage[i].name))
			tree_damage[i].fn(&p, root);
	if (p.damage && !strncmp(p.damage, "fuzz-", 5))
		damage_fuzz(&p, strtoull(p.damage + 5, NULL, 10));
	if (p.damage && !strncmp(p.damage, "mutate-", 7))
		damage_mutate(&p, strtoull(p.damage + 7, NULL, 10));
	write_all(&p, root);
	printf("%zu items, %zu tree blocks, root level %u\n", p.nitems,
	       p.nblocks, p.sb.root_level);
	if (p.offset_ino)
		printf("inode %" PRIu64 ": extent with offset %u\n",
		       p.offset_ino, TWIG_SECTORSIZE);
	free_all(&p);
	close(p.fd);
	return 0;
}
