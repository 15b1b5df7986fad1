// SPDX-License-Identifier: GPL-2.0
/*
 * fsck.twigfs: read-only consistency checker.
 *
 * Pass 1 walks the fs tree from the superblock's root, verifying every block
 * and collecting every leaf item (sorted afterwards, so lookups work even
 * when the tree is damaged).  Pass 2 checks the items against each other:
 * directory entry triplets, link counts, reachability and file extents.
 * Pass 3 compares the allocation bitmap with the sectors passes 1 and 2
 * found in use.  Pass 4 checks the fsync log, if the superblock names one.
 * Nothing is ever written.
 */
#define TWIG_WANT_RULE_TABLE	/* names the tree checker's rules */
#include "twig_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG		"fsck.twigfs"
#define EXIT_CLEAN	0
#define EXIT_ERRORS	4
#define EXIT_OPERATIONAL 8
#define EXIT_USAGE	16
#define MAX_PRINTED	2000	/* error lines; the count goes on */

struct item {
	struct twig_key key;
	uint64_t block;
	uint64_t block_gen;		/* generation of the leaf holding it */
	uint32_t slot;
	uint32_t size;
	uint8_t *data;
};

struct inode {
	uint64_t ino;
	const struct item *ii;	/* NULL if the INODE_ITEM is missing */
	uint32_t mode, nlink;
	uint64_t size, nbytes, next_index;
	uint32_t names;		/* DIR_INDEX entries naming this inode */
	uint32_t subdirs;	/* directories among this dir's entries */
	uint64_t name_bytes;	/* sum of this dir's entries' name lengths */
	uint32_t ref_items, ref_names;
	uint64_t xattr_bytes;	/* XATTR_ITEM bytes, against the limit */
	bool reached;
	bool orphan;		/* an ORPHAN_ITEM names it: nameless, being deleted */
};

struct fsck {
	const char *path;
	int fd;
	bool verbose;
	uint64_t devsize;
	struct twig_super_block sb;
	uint32_t nodesize;
	uint64_t total_bytes, total_bits, generation, data_start;
	uint8_t *used;		/* sectors found in use */
	struct item *items;
	size_t nitems, items_cap;
	struct inode *inodes;
	size_t ninodes;
	unsigned long errors;
	uint64_t nblocks, nleaves, nextents;
	uint64_t err_block;	/* context for report_block() */
};

static void out_of_memory(void)
{
	fprintf(stderr, PROG ": out of memory\n");
	exit(EXIT_OPERATIONAL);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		out_of_memory();
	return p;
}

static void vproblem(struct fsck *f, const char *where, const char *fmt,
		     va_list ap)
{
	if (++f->errors > MAX_PRINTED)
		return;
	fprintf(stdout, PROG ": %s: ", where);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
}

static void problem(struct fsck *f, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct fsck *f, const char *where, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vproblem(f, where, fmt, ap);
	va_end(ap);
}

static void block_problem(struct fsck *f, uint64_t block, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void block_problem(struct fsck *f, uint64_t block, const char *fmt, ...)
{
	char where[64];
	va_list ap;

	snprintf(where, sizeof(where), "block %" PRIu64, block);
	va_start(ap, fmt);
	vproblem(f, where, fmt, ap);
	va_end(ap);
}

static void slot_problem(struct fsck *f, uint64_t block, uint32_t slot,
			 const struct twig_key *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void slot_problem(struct fsck *f, uint64_t block, uint32_t slot,
			 const struct twig_key *key, const char *fmt, ...)
{
	char where[160], k[96];
	va_list ap;

	twig_key_str(k, sizeof(k), key);
	snprintf(where, sizeof(where), "block %" PRIu64 " slot %u key %s",
		 block, slot, k);
	va_start(ap, fmt);
	vproblem(f, where, fmt, ap);
	va_end(ap);
}

#define item_problem(f, it, ...) \
	slot_problem(f, (it)->block, (it)->slot, &(it)->key, __VA_ARGS__)

static void report_block(void *ctx, const char *msg)
{
	struct fsck *f = ctx;

	block_problem(f, f->err_block, "%s", msg);
}

/* ---- superblock ---- */

/* Returns false when the geometry is too broken to look any further. */
static bool check_super(struct fsck *f)
{
	const struct twig_super_block *sb = &f->sb;
	uint64_t alloc_bytes;
	bool ok = true;

	if (le32toh(sb->csum) != twig_super_csum(sb))
		problem(f, "superblock", "checksum mismatch: stored 0x%08x, computed 0x%08x",
			le32toh(sb->csum), twig_super_csum(sb));
	if (le32toh(sb->version) != TWIG_FORMAT_VERSION)
		problem(f, "superblock", "unsupported version %u", le32toh(sb->version));
	if (le64toh(sb->bytenr) != TWIG_SUPER_OFFSET)
		problem(f, "superblock", "bytenr %" PRIu64 " is not %d",
			(uint64_t)le64toh(sb->bytenr), TWIG_SUPER_OFFSET);
	if (le64toh(sb->compat_flags) & ~TWIG_FEATURE_COMPAT_SUPP)
		problem(f, "superblock", "unknown compat features 0x%" PRIx64,
			(uint64_t)le64toh(sb->compat_flags));
	if (le64toh(sb->compat_ro_flags) & ~TWIG_FEATURE_COMPAT_RO_SUPP)
		problem(f, "superblock", "unknown compat_ro features 0x%" PRIx64,
			(uint64_t)le64toh(sb->compat_ro_flags));
	if (le64toh(sb->incompat_flags) & ~TWIG_FEATURE_INCOMPAT_SUPP)
		problem(f, "superblock", "unknown incompat features 0x%" PRIx64,
			(uint64_t)le64toh(sb->incompat_flags));
	if (le64toh(sb->root_dir_objectid) != TWIG_ROOT_DIR_OBJECTID)
		problem(f, "superblock", "root_dir_objectid %" PRIu64 " is not %llu",
			(uint64_t)le64toh(sb->root_dir_objectid), TWIG_ROOT_DIR_OBJECTID);
	if (!memchr(sb->label, '\0', sizeof(sb->label)))
		problem(f, "superblock", "label is not NUL-terminated");
	if (f->generation == 0)
		problem(f, "superblock", "generation 0");
	else if (f->generation == UINT64_MAX)
		problem(f, "superblock", "generation at U64_MAX: the next transaction would wrap it to 0");
	if (le64toh(sb->root_generation) > f->generation)
		problem(f, "superblock", "root_generation %" PRIu64 " newer than generation %" PRIu64,
			(uint64_t)le64toh(sb->root_generation), f->generation);
	if (sb->alloc_copy > 1)
		problem(f, "superblock", "alloc_copy %u is neither 0 nor 1", sb->alloc_copy);
	if (sb->root_level >= TWIG_MAX_LEVEL) {
		problem(f, "superblock", "root_level %u exceeds %d",
			sb->root_level, TWIG_MAX_LEVEL - 1);
		ok = false;
	}
	if (le32toh(sb->sectorsize) != TWIG_SECTORSIZE) {
		problem(f, "superblock", "sectorsize %u is not %d",
			le32toh(sb->sectorsize), TWIG_SECTORSIZE);
		ok = false;
	}
	if (!twig_is_pow2(f->nodesize) || f->nodesize < TWIG_MIN_NODESIZE ||
	    f->nodesize > TWIG_MAX_NODESIZE) {
		problem(f, "superblock", "invalid nodesize %u", f->nodesize);
		ok = false;
	}
	if (f->total_bytes < TWIG_MIN_DEVICE_BYTES ||
	    f->total_bytes % TWIG_SECTORSIZE) {
		problem(f, "superblock", "invalid total_bytes %" PRIu64, f->total_bytes);
		return false;
	}
	if (f->total_bytes > f->devsize)
		problem(f, "superblock", "total_bytes %" PRIu64 " exceeds the device size %" PRIu64 " (truncated?)",
			f->total_bytes, f->devsize);
	alloc_bytes = twig_alloc_bytes(f->total_bytes);
	if (le64toh(sb->alloc_start) != TWIG_RESERVED_BYTES ||
	    le64toh(sb->alloc_bytes) != alloc_bytes) {
		problem(f, "superblock", "allocation bitmap at %" PRIu64 " size %" PRIu64 ", expected %d size %" PRIu64,
			(uint64_t)le64toh(sb->alloc_start),
			(uint64_t)le64toh(sb->alloc_bytes),
			TWIG_RESERVED_BYTES, alloc_bytes);
		ok = false;
	}
	f->data_start = TWIG_RESERVED_BYTES + 2 * alloc_bytes;
	return ok;
}

/* ---- sector accounting ---- */

/* Marks [start, start + len) used; false (and nothing marked) on overlap. */
static bool claim(struct fsck *f, uint64_t start, uint64_t len)
{
	uint64_t first = start / TWIG_SECTORSIZE;
	uint64_t end = (start + len) / TWIG_SECTORSIZE;

	for (uint64_t s = first; s < end; s++)
		if (f->used[s / 8] & TWIG_BITMAP_BIT(s))
			return false;
	for (uint64_t s = first; s < end; s++)
		f->used[s / 8] |= TWIG_BITMAP_BIT(s);
	return true;
}

/* Whether [start, start + len) is sector-aligned and in the data area. */
static bool in_data_area(const struct fsck *f, uint64_t start, uint64_t len)
{
	return start % TWIG_SECTORSIZE == 0 && len % TWIG_SECTORSIZE == 0 &&
	       start >= f->data_start && len <= f->total_bytes &&
	       start <= f->total_bytes - len;
}

/* ---- pass 1: the tree ---- */

struct walk {
	uint64_t addr, gen;
	uint8_t level;
	bool is_root;
	const struct twig_key *lo, *hi;	/* hi exclusive, NULL if none */
};

static void add_item(struct fsck *f, uint64_t block, uint64_t block_gen,
		     uint32_t slot, const struct twig_key *key,
		     const uint8_t *data, uint32_t size)
{
	struct item *it;

	if (f->nitems == f->items_cap) {
		f->items_cap = f->items_cap ? 2 * f->items_cap : 1024;
		f->items = realloc(f->items, f->items_cap * sizeof(*f->items));
		if (!f->items)
			out_of_memory();
	}
	it = &f->items[f->nitems++];
	it->key = *key;
	it->block = block;
	it->block_gen = block_gen;
	it->slot = slot;
	it->size = size;
	it->data = malloc(size ? size : 1);
	if (!it->data)
		out_of_memory();
	memcpy(it->data, data, size);
}

/* Key order inside the block and against the range the parent gives it. */
static void check_key(struct fsck *f, const struct walk *w, uint32_t slot,
		      const struct twig_key *key, const struct twig_key *prev)
{
	char k[96];

	if (prev && twig_key_cmp(prev, key) >= 0)
		slot_problem(f, w->addr, slot, key, "key out of order: not greater than the previous key");
	if (slot == 0 && w->lo && twig_key_cmp(key, w->lo)) {
		twig_key_str(k, sizeof(k), w->lo);
		slot_problem(f, w->addr, slot, key, "first key does not match the parent key %s", k);
	} else if (w->lo && twig_key_cmp(key, w->lo) < 0) {
		slot_problem(f, w->addr, slot, key, "key out of order: below the parent's range");
	}
	if (w->hi && twig_key_cmp(key, w->hi) >= 0) {
		twig_key_str(k, sizeof(k), w->hi);
		slot_problem(f, w->addr, slot, key, "key out of order: not below the next parent key %s", k);
	}
}

static void check_leaf(struct fsck *f, const struct walk *w, const uint8_t *blk)
{
	uint32_t nritems = le32toh(((const struct twig_header *)blk)->nritems);
	uint32_t limit = f->nodesize;	/* data must lie below the previous item's */
	struct twig_key key, prev;

	f->nleaves++;
	if (nritems == 0 && !w->is_root)
		block_problem(f, w->addr, "empty leaf that is not the root");
	for (uint32_t i = 0; i < nritems; i++) {
		const struct twig_item *it = twig_leaf_item(blk, i);
		const uint8_t *data;
		uint32_t size;

		twig_key_from_disk(&key, &it->key);
		check_key(f, w, i, &key, i ? &prev : NULL);
		prev = key;
		if (!twig_item_in_bounds(blk, f->nodesize, i, &data, &size)) {
			slot_problem(f, w->addr, i, &key, "item data [%u, +%u) outside the block's data area",
				     le32toh(it->offset), le32toh(it->size));
			continue;
		}
		if (le32toh(it->offset) + size > limit)
			slot_problem(f, w->addr, i, &key, "item data [%u, +%u) overlaps the previous item's data",
				     le32toh(it->offset), size);
		else
			limit = le32toh(it->offset);
		add_item(f, w->addr, le64toh(((const struct twig_header *)blk)->generation),
			 i, &key, data, size);
	}
}

static void walk_block(struct fsck *f, const struct walk *w);

static void check_node(struct fsck *f, const struct walk *w, const uint8_t *blk)
{
	uint32_t nritems = le32toh(((const struct twig_header *)blk)->nritems);
	struct twig_key *keys = xcalloc(nritems, sizeof(*keys));

	for (uint32_t i = 0; i < nritems; i++) {
		twig_key_from_disk(&keys[i], &twig_node_ptr(blk, i)->key);
		check_key(f, w, i, &keys[i], i ? &keys[i - 1] : NULL);
	}
	for (uint32_t i = 0; i < nritems; i++) {
		const struct twig_key_ptr *p = twig_node_ptr(blk, i);
		uint64_t gen = le64toh(((const struct twig_header *)blk)->generation);
		struct walk child = {
			.addr = le64toh(p->blockptr),
			.gen = le64toh(p->generation),
			.level = (uint8_t)(w->level - 1),
			.lo = &keys[i],
			.hi = i + 1 < nritems ? &keys[i + 1] : w->hi,
		};

		if (!in_data_area(f, child.addr, f->nodesize)) {
			slot_problem(f, w->addr, i, &keys[i], "child pointer %" PRIu64 " outside the data area or misaligned",
				     child.addr);
			continue;
		}
		/* CoW copies a parent in every transaction that copies a child */
		if (child.gen > gen)
			slot_problem(f, w->addr, i, &keys[i], "child generation %" PRIu64 " newer than its parent's generation %" PRIu64,
				     child.gen, gen);
		walk_block(f, &child);
	}
	free(keys);
}

static void walk_block(struct fsck *f, const struct walk *w)
{
	uint8_t *blk;
	const struct twig_header *h;

	if (!claim(f, w->addr, f->nodesize)) {
		block_problem(f, w->addr, "tree block referenced twice or overlapping other used space (bad child pointer or cycle)");
		return;
	}
	f->nblocks++;
	blk = xcalloc(1, f->nodesize);
	h = (const void *)blk;
	if (twig_pread_full(f->fd, blk, f->nodesize, w->addr)) {
		block_problem(f, w->addr, "cannot read tree block: %s", strerror(errno));
		goto out;
	}
	f->err_block = w->addr;
	if (twig_block_verify(blk, f->nodesize, f->sb.fsid, w->addr,
			      f->generation, report_block, f))
		goto out;	/* nothing in it can be trusted */
	if (h->level != w->level) {
		block_problem(f, w->addr, "level %u, expected %u from its parent",
			      h->level, w->level);
		goto out;
	}
	if (le64toh(h->generation) != w->gen)
		block_problem(f, w->addr, "generation %" PRIu64 " does not match the parent's child generation %" PRIu64,
			      (uint64_t)le64toh(h->generation), w->gen);
	if (h->level)
		check_node(f, w, blk);
	else
		check_leaf(f, w, blk);
out:
	free(blk);
}

/* ---- pass 2: items ---- */

static int item_cmp(const void *a, const void *b)
{
	return twig_key_cmp(&((const struct item *)a)->key,
			    &((const struct item *)b)->key);
}

/* Index of the first item with key >= @key. */
static size_t lower_bound(const struct fsck *f, const struct twig_key *key)
{
	size_t lo = 0, hi = f->nitems;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (twig_key_cmp(&f->items[mid].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct item *find_item(const struct fsck *f, uint64_t objectid,
				    uint8_t type, uint64_t offset)
{
	struct twig_key key = { objectid, type, offset };
	size_t i = lower_bound(f, &key);

	if (i < f->nitems && !twig_key_cmp(&f->items[i].key, &key))
		return &f->items[i];
	return NULL;
}

static struct inode *find_inode(const struct fsck *f, uint64_t ino)
{
	size_t lo = 0, hi = f->ninodes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->inodes[mid].ino == ino)
			return &f->inodes[mid];
		if (f->inodes[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool is_dir(const struct inode *in)
{
	return in && (in->mode & S_IFMT) == S_IFDIR;
}

/*
 * A transaction id stored in an item: the transaction that wrote the item
 * also wrote (copied) the leaf holding it, and a later move only rewrites
 * the leaf again, so no stamp is zero or newer than its leaf's generation.
 */
static void check_stamp(struct fsck *f, const struct item *it,
			const char *what, uint64_t stamp)
{
	if (!stamp)
		item_problem(f, it, "%s is 0", what);
	else if (stamp > it->block_gen)
		item_problem(f, it, "%s %" PRIu64 " newer than its leaf's generation %" PRIu64,
			     what, stamp, it->block_gen);
}

static void load_inode(struct fsck *f, struct inode *in, const struct item *it)
{
	struct twig_inode_item ii;

	if (it->key.offset)
		item_problem(f, it, "inode item with non-zero key offset");
	if (it->size != sizeof(ii)) {
		item_problem(f, it, "inode item size %u, expected %zu",
			     it->size, sizeof(ii));
		return;
	}
	memcpy(&ii, it->data, sizeof(ii));
	check_stamp(f, it, "inode transid", le64toh(ii.transid));
	if (le64toh(ii.generation) > le64toh(ii.transid))
		item_problem(f, it, "inode generation %" PRIu64 " newer than its transid %" PRIu64,
			     (uint64_t)le64toh(ii.generation), (uint64_t)le64toh(ii.transid));
	else
		check_stamp(f, it, "inode generation", le64toh(ii.generation));
	in->ii = it;
	in->mode = le32toh(ii.mode);
	in->nlink = le32toh(ii.nlink);
	in->size = le64toh(ii.size);
	in->nbytes = le64toh(ii.nbytes);
	in->next_index = le64toh(ii.next_index);
	if (twig_mode_to_ft(in->mode) == TWIG_FT_UNKNOWN)
		item_problem(f, it, "invalid mode 0%o", in->mode);
	/* the kernel's MAX_LFS_FILESIZE: i_size is a signed loff_t */
	if (in->size > INT64_MAX)
		item_problem(f, it, "i_size %" PRIu64 " beyond the maximum file size %" PRId64,
			     in->size, INT64_MAX);
}

static bool is_orphan_item(const struct item *it)
{
	return it->key.objectid == TWIG_ORPHAN_OBJECTID &&
	       it->key.type == TWIG_ORPHAN_ITEM_KEY;
}

/*
 * An ORPHAN_ITEM names an inode whose last link went in a committed
 * transaction and whose items are still being deleted: it has nlink 0, or
 * its INODE_ITEM is already gone and only some later items remain.
 */
static void check_orphans(struct fsck *f)
{
	struct twig_key key = { TWIG_ORPHAN_OBJECTID, TWIG_ORPHAN_ITEM_KEY, 0 };

	for (size_t i = lower_bound(f, &key); i < f->nitems &&
	     is_orphan_item(&f->items[i]); i++) {
		const struct item *it = &f->items[i];
		const struct inode *in = find_inode(f, it->key.offset);

		if (it->size)
			item_problem(f, it, "orphan item of %u bytes, expected 0", it->size);
		if (!in)
			item_problem(f, it, "orphan item for inode %" PRIu64 " which has no items",
				     it->key.offset);
		else if (in->ii && in->nlink)
			item_problem(f, it, "orphan item for inode %" PRIu64 " with link count %u",
				     in->ino, in->nlink);
	}
}

/* One inode record per objectid seen; items are sorted by now. */
static void build_inodes(struct fsck *f)
{
	f->inodes = xcalloc(f->nitems, sizeof(*f->inodes));
	for (size_t i = 0; i < f->nitems; i++) {
		const struct item *it = &f->items[i];
		struct inode *in;

		if (is_orphan_item(it))
			continue;	/* check_orphans() */
		if (it->key.objectid < TWIG_ROOT_DIR_OBJECTID) {
			item_problem(f, it, "item for reserved objectid");
			continue;
		}
		/* the next objectid is the highest one + 1: it must not wrap */
		if (it->key.objectid >= UINT64_MAX - 1 &&
		    (!f->ninodes || f->inodes[f->ninodes - 1].ino != it->key.objectid))
			item_problem(f, it, "objectid %" PRIu64 " at the top of the range: the next objectid would overflow",
				     it->key.objectid);
		if (!f->ninodes || f->inodes[f->ninodes - 1].ino != it->key.objectid) {
			in = &f->inodes[f->ninodes++];
			in->ino = it->key.objectid;
			in->orphan = find_item(f, TWIG_ORPHAN_OBJECTID,
					       TWIG_ORPHAN_ITEM_KEY, in->ino) != NULL;
			if (it->key.type == TWIG_INODE_ITEM_KEY)
				load_inode(f, in, it);
			else if (!in->orphan)
				item_problem(f, it, "items of inode %" PRIu64 " without an INODE_ITEM",
					     in->ino);
		}
		if (!twig_key_type_name(it->key.type))
			item_problem(f, it, "unknown item type %u", it->key.type);
	}
}

static bool same_name(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && !memcmp(a, b, alen);
}

/* Whether DIR_ITEM (dir, hash(name)) lists @name for @ino. */
static bool dir_item_has(const struct fsck *f, uint64_t dir, const char *name,
			 uint16_t len, uint64_t ino)
{
	const struct item *it = find_item(f, dir, TWIG_DIR_ITEM_KEY,
					  twig_name_hash(name, len));
	struct twig_dirent de;
	uint32_t pos = 0;

	if (!it)
		return false;
	while (twig_dirent_next(it->data, it->size, &pos, &de) > 0)
		if (de.ino == ino && same_name(de.name, de.name_len, name, len))
			return true;
	return false;
}

/* Whether DIR_INDEX (dir, index) is @name for @ino. */
static bool dir_index_has(const struct fsck *f, uint64_t dir, uint64_t index,
			  const char *name, uint16_t len, uint64_t ino)
{
	const struct item *it = find_item(f, dir, TWIG_DIR_INDEX_KEY, index);
	struct twig_dirent de;
	uint32_t pos = 0;

	return it && twig_dirent_next(it->data, it->size, &pos, &de) > 0 &&
	       de.ino == ino && same_name(de.name, de.name_len, name, len);
}

/* The INODE_REF index of @name of @ino in @dir, or -1 if there is none. */
static int64_t inode_ref_index(const struct fsck *f, uint64_t ino,
			       uint64_t dir, const char *name, uint16_t len)
{
	const struct item *it = find_item(f, ino, TWIG_INODE_REF_KEY, dir);
	struct twig_iref ref;
	uint32_t pos = 0;

	if (!it)
		return -1;
	while (twig_iref_next(it->data, it->size, &pos, &ref) > 0)
		if (same_name(ref.name, ref.name_len, name, len))
			return (int64_t)(ref.index & INT64_MAX);
	return -1;
}

/* Checks shared by DIR_ITEM and DIR_INDEX entries; returns the target. */
static struct inode *check_dirent(struct fsck *f, const struct item *it,
				  const struct twig_dirent *de)
{
	struct inode *target;

	if (!twig_name_valid(de->name, de->name_len))
		item_problem(f, it, "invalid name (length %u) for inode %" PRIu64,
			     de->name_len, de->ino);
	check_stamp(f, it, "directory entry transid", de->transid);
	target = find_inode(f, de->ino);
	if (!target || !target->ii) {
		item_problem(f, it, "entry '%.*s' names missing inode %" PRIu64,
			     de->name_len, de->name, de->ino);
		return NULL;
	}
	if (de->type != twig_mode_to_ft(target->mode))
		item_problem(f, it, "entry '%.*s' has type %s but inode %" PRIu64 " is %s",
			     de->name_len, de->name, twig_ft_name(de->type),
			     de->ino, twig_ft_name(twig_mode_to_ft(target->mode)));
	return target;
}

static void check_dir_item(struct fsck *f, const struct item *it)
{
	struct twig_dirent de;
	uint32_t pos = 0;
	int r;

	while ((r = twig_dirent_next(it->data, it->size, &pos, &de)) > 0) {
		int64_t index;

		if (twig_name_hash(de.name, de.name_len) != it->key.offset)
			item_problem(f, it, "name hash of '%.*s' is 0x%08x, not the key offset",
				     de.name_len, de.name,
				     twig_name_hash(de.name, de.name_len));
		if (!check_dirent(f, it, &de))
			continue;
		index = inode_ref_index(f, de.ino, it->key.objectid, de.name,
					de.name_len);
		if (index < 0)
			item_problem(f, it, "entry '%.*s' has no matching INODE_REF in inode %" PRIu64,
				     de.name_len, de.name, de.ino);
		else if (!dir_index_has(f, it->key.objectid, (uint64_t)index,
					de.name, de.name_len, de.ino))
			item_problem(f, it, "entry '%.*s' has no matching DIR_INDEX %" PRId64,
				     de.name_len, de.name, index);
	}
	if (r < 0 || pos == 0)
		item_problem(f, it, "malformed DIR_ITEM: entry name_len runs past the item");
}

static void check_dir_index(struct fsck *f, const struct item *it,
			    struct inode *dir)
{
	struct twig_dirent de;
	struct inode *target;
	uint32_t pos = 0;
	int64_t index;

	if (twig_dirent_next(it->data, it->size, &pos, &de) <= 0 ||
	    pos != it->size) {
		item_problem(f, it, "malformed DIR_INDEX: must hold exactly one entry");
		return;
	}
	if (it->key.offset < TWIG_FIRST_DIR_INDEX)
		item_problem(f, it, "DIR_INDEX offset below %llu", TWIG_FIRST_DIR_INDEX);
	if (it->key.offset >= dir->next_index)
		item_problem(f, it, "DIR_INDEX offset not below the directory's next_index %" PRIu64,
			     dir->next_index);
	dir->name_bytes += de.name_len;
	target = check_dirent(f, it, &de);
	if (!target)
		return;
	target->names++;
	if (is_dir(target))
		dir->subdirs++;
	if (!dir_item_has(f, it->key.objectid, de.name, de.name_len, de.ino))
		item_problem(f, it, "entry '%.*s' has no matching DIR_ITEM",
			     de.name_len, de.name);
	index = inode_ref_index(f, de.ino, it->key.objectid, de.name, de.name_len);
	if (index < 0 || (uint64_t)index != it->key.offset)
		item_problem(f, it, "entry '%.*s' has no matching INODE_REF in inode %" PRIu64,
			     de.name_len, de.name, de.ino);
}

static void check_inode_ref(struct fsck *f, const struct item *it,
			    struct inode *in)
{
	const struct inode *parent = find_inode(f, it->key.offset);
	struct twig_iref ref;
	uint32_t pos = 0;
	int r;

	in->ref_items++;
	if (!is_dir(parent))
		item_problem(f, it, "INODE_REF parent %" PRIu64 " is not a directory",
			     it->key.offset);
	while ((r = twig_iref_next(it->data, it->size, &pos, &ref)) > 0) {
		in->ref_names++;
		if (!twig_name_valid(ref.name, ref.name_len))
			item_problem(f, it, "invalid name (length %u) in INODE_REF",
				     ref.name_len);
		else if (!dir_index_has(f, it->key.offset, ref.index, ref.name,
					ref.name_len, in->ino))
			item_problem(f, it, "INODE_REF name '%.*s' index %" PRIu64 " has no matching DIR_INDEX",
				     ref.name_len, ref.name, ref.index);
	}
	if (r < 0 || pos == 0)
		item_problem(f, it, "malformed INODE_REF: name_len runs past the item");
}

/*
 * XATTR_ITEM: the tree checker's rules (named as the kernel logs them), no
 * name twice in one item, and the inode's total (format.h).  Returns the
 * item's bytes for the total.
 */
#define rule_problem(f, it, rule, fmt, ...) \
	item_problem(f, it, "rule %s: " fmt, twig_tree_rules[rule].name, \
		     __VA_ARGS__)

static uint64_t check_xattr_item(struct fsck *f, const struct item *it)
{
	struct twig_xattr xa, other;
	uint32_t pos = 0, p2;
	int r;

	if (!it->size)
		rule_problem(f, it, TWIG_RULE_XATTR_SIZE, "%s", "empty XATTR_ITEM");
	while ((r = twig_xattr_next(it->data, it->size, &pos, &xa)) > 0) {
		if (xa.value_len > TWIG_XATTR_MAX_VALUE)
			rule_problem(f, it, TWIG_RULE_XATTR_SIZE,
				     "value of %u bytes above the limit %u",
				     xa.value_len, TWIG_XATTR_MAX_VALUE);
		if (!twig_xattr_name_known(xa.name, xa.name_len)) {
			rule_problem(f, it, TWIG_RULE_XATTR_NAME,
				     "invalid xattr name '%.*s' (length %u)",
				     xa.name_len, xa.name, xa.name_len);
		} else if (twig_name_hash(xa.name, xa.name_len) != it->key.offset) {
			rule_problem(f, it, TWIG_RULE_XATTR_HASH,
				     "name hash of '%.*s' is 0x%08x, not the key offset",
				     xa.name_len, xa.name,
				     twig_name_hash(xa.name, xa.name_len));
		}
		if (!xa.transid || xa.transid > it->block_gen)
			rule_problem(f, it, TWIG_RULE_XATTR_TRANSID,
				     "xattr transid %" PRIu64 " is 0 or newer than its leaf's generation %" PRIu64,
				     xa.transid, it->block_gen);
		for (p2 = pos; twig_xattr_next(it->data, it->size, &p2, &other) > 0; )
			if (same_name(xa.name, xa.name_len, other.name, other.name_len))
				item_problem(f, it, "xattr '%.*s' twice in one item",
					     xa.name_len, xa.name);
	}
	if (r < 0)
		rule_problem(f, it, TWIG_RULE_XATTR_SIZE,
			     "malformed XATTR_ITEM: entry at %u runs past the item",
			     pos);
	return it->size;
}

static void check_items(struct fsck *f)
{
	for (size_t i = 0; i < f->nitems; i++) {
		const struct item *it = &f->items[i];
		struct inode *in = find_inode(f, it->key.objectid);

		if (!in || !in->ii)
			continue;
		switch (it->key.type) {
		case TWIG_INODE_REF_KEY:
			check_inode_ref(f, it, in);
			break;
		case TWIG_XATTR_ITEM_KEY:
			in->xattr_bytes += check_xattr_item(f, it);
			if (in->xattr_bytes > TWIG_XATTR_MAX_TOTAL &&
			    in->xattr_bytes - it->size <= TWIG_XATTR_MAX_TOTAL)
				item_problem(f, it, "extended attributes of inode %" PRIu64 " above %u bytes",
					     in->ino, TWIG_XATTR_MAX_TOTAL);
			break;
		case TWIG_DIR_ITEM_KEY:
		case TWIG_DIR_INDEX_KEY:
			if (!is_dir(in)) {
				item_problem(f, it, "directory entry in inode %" PRIu64 " which is not a directory",
					     in->ino);
				break;
			}
			if (it->key.type == TWIG_DIR_ITEM_KEY)
				check_dir_item(f, it);
			else
				check_dir_index(f, it, in);
			break;
		}
	}
}

/* Breadth-first over DIR_INDEX items from the root directory. */
static void check_reachable(struct fsck *f)
{
	struct inode **queue = xcalloc(f->ninodes + 1, sizeof(*queue));
	struct inode *root = find_inode(f, TWIG_ROOT_DIR_OBJECTID);
	size_t head = 0, tail = 0;

	if (!is_dir(root) || !root->ii) {
		problem(f, "root directory", "inode %llu is missing or not a directory",
			TWIG_ROOT_DIR_OBJECTID);
		free(queue);
		return;
	}
	root->reached = true;
	queue[tail++] = root;
	while (head < tail) {
		struct inode *dir = queue[head++];
		struct twig_key key = { dir->ino, TWIG_DIR_INDEX_KEY, 0 };

		for (size_t i = lower_bound(f, &key); i < f->nitems &&
		     f->items[i].key.objectid == dir->ino &&
		     f->items[i].key.type == TWIG_DIR_INDEX_KEY; i++) {
			struct twig_dirent de;
			uint32_t pos = 0;
			struct inode *child;

			if (twig_dirent_next(f->items[i].data, f->items[i].size,
					     &pos, &de) <= 0)
				continue;
			child = find_inode(f, de.ino);
			if (!child || !child->ii)
				continue;
			if (is_dir(child) && child->reached) {
				item_problem(f, &f->items[i], "directory %" PRIu64 " reachable twice (hard-linked directory or loop)",
					     child->ino);
				continue;
			}
			if (is_dir(child))
				queue[tail++] = child;
			child->reached = true;
		}
	}
	free(queue);
}

struct extent_state {
	uint64_t end;		/* file offset the previous extent ended at */
	uint64_t nbytes;
	uint64_t inline_bytes;	/* ram_bytes of the inline extent */
	size_t count;
	bool inline_seen;
};

static void check_inline_extent(struct fsck *f, const struct item *it,
				const struct inode *in, struct extent_state *st)
{
	struct twig_file_extent fe;
	uint64_t ram;

	memcpy(&fe, it->data, TWIG_FILE_EXTENT_INLINE_START);
	check_stamp(f, it, "extent generation", le64toh(fe.generation));
	ram = le64toh(fe.ram_bytes);
	if (it->key.offset != 0 || st->count != 1)
		item_problem(f, it, "inline extent not at offset 0 or not the only extent");
	if (it->size != TWIG_FILE_EXTENT_INLINE_START + ram)
		item_problem(f, it, "inline extent item size %u does not match ram_bytes %" PRIu64,
			     it->size, ram);
	if (in->ii && ram > in->size)
		item_problem(f, it, "inline extent ram_bytes %" PRIu64 " beyond i_size %" PRIu64,
			     ram, in->size);
	if (ram > TWIG_MAX_INLINE && twig_mode_to_ft(in->mode) == TWIG_FT_SYMLINK)
		item_problem(f, it, "symlink target of %" PRIu64 " bytes longer than the limit %d",
			     ram, TWIG_MAX_INLINE);
	else if (ram > TWIG_MAX_INLINE)
		item_problem(f, it, "inline extent of %" PRIu64 " bytes longer than the limit %d",
			     ram, TWIG_MAX_INLINE);
	st->inline_seen = true;
	st->inline_bytes = ram;
	st->nbytes += ram;
	st->end = it->key.offset + ram;
}

static void check_reg_extent(struct fsck *f, const struct item *it,
			     const struct inode *in, struct extent_state *st)
{
	struct twig_file_extent fe;
	uint64_t disk, disk_len, off, len;

	if (it->size != sizeof(fe)) {
		item_problem(f, it, "regular extent item size %u, expected %zu",
			     it->size, sizeof(fe));
		return;
	}
	memcpy(&fe, it->data, sizeof(fe));
	check_stamp(f, it, "extent generation", le64toh(fe.generation));
	disk = le64toh(fe.disk_bytenr);
	disk_len = le64toh(fe.disk_num_bytes);
	off = le64toh(fe.offset);
	len = le64toh(fe.num_bytes);
	if (st->inline_seen)
		item_problem(f, it, "regular extent after an inline extent");
	if (!len || off > disk_len || len > disk_len - off)
		item_problem(f, it, "extent range offset %" PRIu64 " num_bytes %" PRIu64 " outside disk_num_bytes %" PRIu64,
			     off, len, disk_len);
	if (it->key.offset < st->end)
		item_problem(f, it, "extent overlaps the previous extent in the file (ends at %" PRIu64 ")",
			     st->end);
	/* FALLOC_FL_KEEP_SIZE leaves preallocated extents past EOF */
	if (in->ii && fe.type != TWIG_FILE_EXTENT_PREALLOC &&
	    it->key.offset >= twig_round_up(in->size, TWIG_SECTORSIZE))
		item_problem(f, it, "extent beyond i_size %" PRIu64, in->size);
	st->end = it->key.offset + len;
	st->nbytes += disk_len;
	f->nextents++;
	if (!disk_len || !in_data_area(f, disk, disk_len))
		item_problem(f, it, "disk range [%" PRIu64 ", +%" PRIu64 ") misaligned or outside the data area",
			     disk, disk_len);
	else if (!claim(f, disk, disk_len))
		item_problem(f, it, "disk range [%" PRIu64 ", +%" PRIu64 ") overlaps another extent or tree block (doubly used)",
			     disk, disk_len);
}

static void check_extents(struct fsck *f, const struct inode *in)
{
	struct twig_key key = { in->ino, TWIG_EXTENT_DATA_KEY, 0 };
	struct extent_state st = { 0 };
	uint32_t ft = twig_mode_to_ft(in->mode);

	for (size_t i = lower_bound(f, &key); i < f->nitems &&
	     f->items[i].key.objectid == in->ino &&
	     f->items[i].key.type == TWIG_EXTENT_DATA_KEY; i++) {
		const struct item *it = &f->items[i];

		st.count++;
		if (in->ii && ft != TWIG_FT_REG_FILE && ft != TWIG_FT_SYMLINK) {
			item_problem(f, it, "file extent in an inode that is not a file or symlink");
			continue;
		}
		if (it->size < TWIG_FILE_EXTENT_INLINE_START) {
			item_problem(f, it, "file extent item too small (%u bytes)", it->size);
			continue;
		}
		if (it->data[16] == TWIG_FILE_EXTENT_INLINE)
			check_inline_extent(f, it, in, &st);
		else if (it->data[16] == TWIG_FILE_EXTENT_REG ||
			 it->data[16] == TWIG_FILE_EXTENT_PREALLOC)
			check_reg_extent(f, it, in, &st);
		else
			item_problem(f, it, "unknown file extent type %u", it->data[16]);
	}
	if (in->ii && st.nbytes != in->nbytes)
		item_problem(f, in->ii, "nbytes %" PRIu64 ", extents add up to %" PRIu64,
			     in->nbytes, st.nbytes);
	if (in->ii && ft == TWIG_FT_SYMLINK && (!st.inline_seen || !in->size))
		item_problem(f, in->ii, "symlink without a target (no inline extent or i_size 0)");
	else if (in->ii && ft == TWIG_FT_SYMLINK && in->size != st.inline_bytes)
		item_problem(f, in->ii, "symlink i_size %" PRIu64 " does not match its target's length %" PRIu64,
			     in->size, st.inline_bytes);
}

/*
 * An orphan inode with no links, perhaps half deleted: it has no names
 * (they went with the last link), and deletion goes in key order, so
 * besides its INODE_ITEM only extended attributes and extents may be left.
 */
static void check_dying(struct fsck *f, const struct inode *in)
{
	struct twig_key key = { in->ino, 0, 0 };

	for (size_t i = lower_bound(f, &key); i < f->nitems &&
	     f->items[i].key.objectid == in->ino; i++) {
		uint8_t type = f->items[i].key.type;

		if (type != TWIG_INODE_ITEM_KEY && type != TWIG_XATTR_ITEM_KEY &&
		    type != TWIG_EXTENT_DATA_KEY)
			item_problem(f, &f->items[i], "%s item of an inode being deleted (orphan, no links)",
				     twig_key_type_name(type) ? twig_key_type_name(type) : "unknown");
	}
}

static void check_inode(struct fsck *f, struct inode *in)
{
	bool root = in->ino == TWIG_ROOT_DIR_OBJECTID;
	uint32_t want;

	if (in->orphan && (!in->ii || !in->nlink)) {
		check_dying(f, in);
		check_extents(f, in);
		return;
	}
	if (!in->ii)
		return;
	if (!in->reached)
		item_problem(f, in->ii, "inode %" PRIu64 " unreachable from the root directory",
			     in->ino);
	want = is_dir(in) ? 2 + in->subdirs : in->names;
	if (in->nlink != want)
		item_problem(f, in->ii, "wrong link count %u, expected %u",
			     in->nlink, want);
	if (in->ref_names != in->names)
		item_problem(f, in->ii, "%u INODE_REF names but %u directory entries",
			     in->ref_names, in->names);
	if (is_dir(in)) {
		if (root && (in->ref_items || in->names))
			item_problem(f, in->ii, "root directory has a name or INODE_REF");
		if (!root && (in->ref_items != 1 || in->ref_names != 1))
			item_problem(f, in->ii, "directory has %u names, expected exactly one (..)",
				     in->ref_names);
		if (in->size != 2 * in->name_bytes)
			item_problem(f, in->ii, "directory size %" PRIu64 ", expected %" PRIu64,
				     in->size, 2 * in->name_bytes);
		if (in->next_index < TWIG_FIRST_DIR_INDEX)
			item_problem(f, in->ii, "directory next_index %" PRIu64 " below %llu",
				     in->next_index, TWIG_FIRST_DIR_INDEX);
		else if (in->next_index == UINT64_MAX)
			item_problem(f, in->ii, "directory next_index at U64_MAX: readdir positions would wrap");
	}
	check_extents(f, in);
}

/* ---- pass 3: allocation bitmap ---- */

static void report_runs(struct fsck *f, const uint8_t *disk, bool leaked)
{
	uint64_t run = 0, start = 0;

	for (uint64_t s = 0; s <= f->total_bits; s++) {
		bool bad = false;

		if (s < f->total_bits) {
			bool on_disk = disk[s / 8] & TWIG_BITMAP_BIT(s);
			bool used = f->used[s / 8] & TWIG_BITMAP_BIT(s);

			bad = leaked ? on_disk && !used : used && !on_disk;
		}
		if (bad && !run++)
			start = s;
		if (!bad && run) {
			if (leaked)
				problem(f, "allocation bitmap", "sectors [%" PRIu64 ", +%" PRIu64 ") bytes marked in use but unreferenced (leaked)",
					start * TWIG_SECTORSIZE, run * TWIG_SECTORSIZE);
			else
				problem(f, "allocation bitmap", "sectors [%" PRIu64 ", +%" PRIu64 ") bytes in use but not marked (unaccounted)",
					start * TWIG_SECTORSIZE, run * TWIG_SECTORSIZE);
			run = 0;
		}
	}
}

static void check_bitmap(struct fsck *f)
{
	uint64_t bytes = twig_alloc_bytes(f->total_bytes);
	uint64_t used_bytes = twig_bitmap_used_bytes(f->total_bytes);
	uint64_t at = TWIG_RESERVED_BYTES + (f->sb.alloc_copy ? bytes : 0);
	uint8_t *disk = xcalloc(1, bytes);
	uint64_t count;

	if (twig_pread_full(f->fd, disk, bytes, at)) {
		problem(f, "allocation bitmap", "cannot read copy at %" PRIu64 ": %s",
			at, strerror(errno));
		free(disk);
		return;
	}
	if (twig_csum(disk, used_bytes) != le32toh(f->sb.alloc_csum))
		problem(f, "allocation bitmap", "checksum mismatch: superblock 0x%08x, computed 0x%08x",
			le32toh(f->sb.alloc_csum), twig_csum(disk, used_bytes));
	for (uint64_t b = f->total_bits; b < used_bytes * 8; b++)
		if (disk[b / 8] & TWIG_BITMAP_BIT(b)) {
			problem(f, "allocation bitmap", "bits set past the end of the device");
			break;
		}
	/*
	 * The kernel forces these in use at mount (fs/alloc.c), but a bitmap
	 * that frees them lets any other reader hand out the superblock.
	 */
	for (uint64_t s = 0; s < f->data_start / TWIG_SECTORSIZE; s++) {
		uint64_t e = s;

		if (disk[s / 8] & TWIG_BITMAP_BIT(s))
			continue;
		while (e < f->data_start / TWIG_SECTORSIZE &&
		       !(disk[e / 8] & TWIG_BITMAP_BIT(e)))
			e++;
		problem(f, "allocation bitmap", "reserved area (superblock, bitmaps) sectors [%" PRIu64 ", +%" PRIu64 ") bytes not marked in use",
			s * TWIG_SECTORSIZE, (e - s) * TWIG_SECTORSIZE);
		break;
	}
	report_runs(f, disk, true);
	report_runs(f, disk, false);
	count = twig_popcount(disk, f->total_bits);
	if (count * TWIG_SECTORSIZE != le64toh(f->sb.bytes_used))
		problem(f, "superblock", "bytes_used %" PRIu64 " but the bitmap has %" PRIu64 " bytes in use",
			(uint64_t)le64toh(f->sb.bytes_used), count * TWIG_SECTORSIZE);
	free(disk);
}

/* ---- pass 4: the fsync log ---- */

/*
 * The chain the superblock's log_root names (fs/tree-log.c): every block
 * a verified leaf of the log, of transaction generation + 1, its LOG_PREV
 * item first, sorted fs items after it (inodes the tree has, or new ones
 * with their INODE_REF, and the DIR_INDEX of a new name in a directory the
 * tree has), lying in space that is free in
 * the committed bitmap and in no tree block or extent.  A valid log is
 * not an error: the next read-write mount replays it.
 */
static void check_log(struct fsck *f)
{
	uint64_t log_gen = le64toh(f->sb.log_generation);
	uint64_t addr = le64toh(f->sb.log_root);
	bool flag = le64toh(f->sb.incompat_flags) & TWIG_FEATURE_INCOMPAT_LOG;
	uint64_t bytes = twig_alloc_bytes(f->total_bytes);
	uint64_t at = TWIG_RESERVED_BYTES + (f->sb.alloc_copy ? bytes : 0);
	uint8_t *disk, *blk, *seen;
	uint64_t nblocks = 0, nitems = 0;

	if (!addr) {
		if (log_gen || flag)
			problem(f, "superblock", "no log_root, but log_generation %" PRIu64 " or the LOG feature is set",
				log_gen);
		return;
	}
	if (!flag)
		problem(f, "superblock", "log_root set without the LOG incompat feature");
	if (log_gen != f->generation + 1) {
		problem(f, "superblock", "log_generation %" PRIu64 " is not generation + 1 (%" PRIu64 ")",
			log_gen, f->generation + 1);
		return;
	}
	disk = xcalloc(1, bytes);
	blk = xcalloc(1, f->nodesize);
	seen = xcalloc(1, f->total_bits / 8 + 1);
	if (twig_pread_full(f->fd, disk, bytes, at))
		memset(disk, 0, bytes);	/* check_bitmap() reported it */
	while (addr) {
		const struct twig_header *h = (const void *)blk;
		struct twig_log_prev lp;
		const uint8_t *data;
		uint32_t size, nritems;
		struct twig_key key, prev;
		uint64_t s = addr / TWIG_SECTORSIZE;

		if (!in_data_area(f, addr, f->nodesize)) {
			problem(f, "log", "block %" PRIu64 " outside the data area or misaligned", addr);
			break;
		}
		if (seen[s / 8] & TWIG_BITMAP_BIT(s)) {
			block_problem(f, addr, "log block chain loops");
			break;
		}
		twig_bitmap_set(seen, s, f->nodesize / TWIG_SECTORSIZE);
		for (uint64_t i = s; i < s + f->nodesize / TWIG_SECTORSIZE; i++) {
			if (f->used[i / 8] & TWIG_BITMAP_BIT(i)) {
				block_problem(f, addr, "log block overlaps a tree block or extent");
				break;
			}
			if (disk[i / 8] & TWIG_BITMAP_BIT(i)) {
				block_problem(f, addr, "log block is allocated in the committed bitmap");
				break;
			}
		}
		if (twig_pread_full(f->fd, blk, f->nodesize, addr)) {
			block_problem(f, addr, "cannot read log block: %s", strerror(errno));
			break;
		}
		f->err_block = addr;
		if (twig_block_verify_owner(blk, f->nodesize, f->sb.fsid, addr, log_gen,
					    TWIG_LOG_TREE_OBJECTID, report_block, f))
			break;
		nritems = le32toh(h->nritems);
		if (h->level || le64toh(h->generation) != log_gen || !nritems) {
			block_problem(f, addr, "log block level %u generation %" PRIu64 " items %u: not a leaf of transaction %" PRIu64 " with items",
				      h->level, (uint64_t)le64toh(h->generation), nritems, log_gen);
			break;
		}
		twig_key_from_disk(&key, &twig_leaf_item(blk, 0)->key);
		if (!twig_item_in_bounds(blk, f->nodesize, 0, &data, &size) ||
		    key.objectid != TWIG_LOG_TREE_OBJECTID || key.type != TWIG_LOG_PREV_KEY ||
		    key.offset || size != sizeof(lp)) {
			block_problem(f, addr, "log block does not start with its LOG_PREV item");
			break;
		}
		memcpy(&lp, data, sizeof(lp));
		prev = key;
		for (uint32_t i = 1; i < nritems; i++) {
			bool is_new = false;

			twig_key_from_disk(&key, &twig_leaf_item(blk, i)->key);
			/* a logged INODE_REF marks a file new in the log's transaction */
			for (uint32_t j = 1; j < nritems; j++) {
				struct twig_key k;

				twig_key_from_disk(&k, &twig_leaf_item(blk, j)->key);
				is_new |= k.objectid == key.objectid && k.type == TWIG_INODE_REF_KEY;
			}
			if (!twig_item_in_bounds(blk, f->nodesize, i, &data, &size))
				slot_problem(f, addr, i, &key, "item data outside the block's data area");
			else if (twig_key_cmp(&prev, &key) >= 0)
				slot_problem(f, addr, i, &key, "log items out of order");
			else if (key.type != TWIG_INODE_ITEM_KEY &&
				 key.type != TWIG_XATTR_ITEM_KEY &&
				 key.type != TWIG_EXTENT_DATA_KEY &&
				 key.type != TWIG_INODE_REF_KEY &&
				 key.type != TWIG_DIR_INDEX_KEY)
				slot_problem(f, addr, i, &key, "log holds an item it never writes");
			else if (key.type == TWIG_DIR_INDEX_KEY ?
				 !find_inode(f, key.objectid) || !is_dir(find_inode(f, key.objectid)) :
				 is_new == (find_inode(f, key.objectid) != NULL))
				slot_problem(f, addr, i, &key, is_new ?
					     "log has a new inode the tree already has" :
					     "log names an inode or directory the tree does not have");
			prev = key;
			nitems++;
		}
		nblocks++;
		addr = le64toh(lp.prev);
		if (addr && le64toh(lp.prev_generation) != log_gen) {
			block_problem(f, addr, "log block generation %" PRIu64 " in the chain of transaction %" PRIu64,
				      (uint64_t)le64toh(lp.prev_generation), log_gen);
			break;
		}
	}
	printf(PROG ": %s: fsync log of transaction %" PRIu64 ": %" PRIu64 " block(s), %" PRIu64 " item(s); the next read-write mount replays it\n",
	       f->path, log_gen, nblocks, nitems);
	free(seen);
	free(blk);
	free(disk);
}

/* ---- driver ---- */

static int open_fs(struct fsck *f)
{
	/* nothing is written, so a mounted device is checked, with a warning */
	f->fd = open(f->path, O_RDONLY | O_EXCL);
	if (f->fd < 0 && errno == EBUSY) {
		fprintf(stderr, PROG ": warning: %s is mounted or in use; the kernel may change it during the check\n",
			f->path);
		f->fd = open(f->path, O_RDONLY);
	}
	if (f->fd < 0) {
		fprintf(stderr, PROG ": cannot open %s: %s\n", f->path, strerror(errno));
		return -1;
	}
	if (twig_device_size(f->fd, &f->devsize)) {
		fprintf(stderr, PROG ": cannot get the size of %s: %s\n", f->path, strerror(errno));
		return -1;
	}
	if (twig_pread_full(f->fd, &f->sb, sizeof(f->sb), TWIG_SUPER_OFFSET)) {
		fprintf(stderr, PROG ": cannot read the superblock of %s: %s\n",
			f->path, strerror(errno));
		return -1;
	}
	if (le64toh(f->sb.magic) != TWIG_MAGIC) {
		fprintf(stderr, PROG ": %s: bad magic, not a twigfs filesystem\n", f->path);
		return -1;
	}
	f->nodesize = le32toh(f->sb.nodesize);
	f->total_bytes = le64toh(f->sb.total_bytes);
	f->generation = le64toh(f->sb.generation);
	return 0;
}

static void run_passes(struct fsck *f)
{
	struct walk root = {
		.addr = le64toh(f->sb.root),
		.gen = le64toh(f->sb.root_generation),
		.level = f->sb.root_level,
		.is_root = true,
	};

	f->total_bits = twig_total_bits(f->total_bytes);
	f->used = calloc(1, f->total_bits / 8 + 1);
	if (!f->used)
		out_of_memory();
	claim(f, 0, f->data_start);
	if (f->verbose)
		printf(PROG ": pass 1: tree blocks\n");
	if (in_data_area(f, root.addr, f->nodesize))
		walk_block(f, &root);
	else
		problem(f, "superblock", "root %" PRIu64 " outside the data area or misaligned",
			root.addr);
	if (f->nitems)
		qsort(f->items, f->nitems, sizeof(*f->items), item_cmp);
	if (f->verbose)
		printf(PROG ": pass 2: %zu items\n", f->nitems);
	build_inodes(f);
	check_orphans(f);
	check_items(f);
	check_reachable(f);
	for (size_t i = 0; i < f->ninodes; i++)
		check_inode(f, &f->inodes[i]);
	if (f->verbose)
		printf(PROG ": pass 3: allocation bitmap\n");
	check_bitmap(f);
	if (f->verbose)
		printf(PROG ": pass 4: fsync log\n");
	check_log(f);
}

static void free_fsck(struct fsck *f)
{
	for (size_t i = 0; i < f->nitems; i++)
		free(f->items[i].data);
	free(f->items);
	free(f->inodes);
	free(f->used);
	if (f->fd >= 0)
		close(f->fd);
}

static void usage(void)
{
	fprintf(stderr, "usage: " PROG " [-n] [-v] [--dump] device|image\n"
		"  -n      check only (the default: nothing is ever written)\n"
		"  -v      print progress and a summary\n"
		"  --dump  print the superblock and every tree block instead\n"
		"  -f, -p, -a, -y are accepted for fsck(8) and ignored\n");
	exit(EXIT_USAGE);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dump", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fsck f = { .fd = -1 };
	bool dump = false;
	int c;

	while ((c = getopt_long(argc, argv, "nvfpayh", longopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			f.verbose = true;
			break;
		case 'D':
			dump = true;
			break;
		case 'n': case 'f': case 'p': case 'a': case 'y':
			break;	/* read-only: there is nothing to repair */
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	f.path = argv[optind];
	if (dump) {
		f.fd = open(f.path, O_RDONLY);
		if (f.fd < 0) {
			fprintf(stderr, PROG ": cannot open %s: %s\n", f.path, strerror(errno));
			return EXIT_OPERATIONAL;
		}
		c = twig_dump(f.fd, stdout);
		free_fsck(&f);
		return c ? EXIT_OPERATIONAL : EXIT_CLEAN;
	}
	if (open_fs(&f)) {
		free_fsck(&f);
		return EXIT_OPERATIONAL;
	}
	if (f.verbose)
		printf(PROG ": checking %s\n", f.path);
	if (check_super(&f))
		run_passes(&f);
	if (f.errors > MAX_PRINTED)
		printf(PROG ": %lu more problems not shown\n", f.errors - MAX_PRINTED);
	if (f.verbose)
		printf(PROG ": %s: %" PRIu64 " tree blocks (%" PRIu64 " leaves), %zu items, %zu inodes, %" PRIu64 " extents, %lu problems\n",
		       f.path, f.nblocks, f.nleaves, f.nitems, f.ninodes,
		       f.nextents, f.errors);
	free_fsck(&f);
	return f.errors ? EXIT_ERRORS : EXIT_CLEAN;
}
