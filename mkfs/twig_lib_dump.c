// SPDX-License-Identifier: GPL-2.0
/*
 * The tree dumper behind twigfs-dump and fsck.twigfs --dump, in the spirit of
 * btrfs inspect-internal dump-tree: the superblock, then every tree block in
 * depth-first order, every item decoded.  It prints what it can of a damaged
 * filesystem instead of giving up, so it validates as it goes.
 */
#include "twig_lib.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_VISITED	(1u << 20)

struct dumper {
	int fd;
	FILE *out;
	const struct twig_super_block *sb;
	uint32_t nodesize;
	uint64_t *visited;	/* block addresses already printed */
	size_t nvisited;
	uint64_t owner;		/* of the blocks being shown */
	uint64_t max_gen;	/* newest generation they may have */
};

static void dump_super(FILE *out, const struct twig_super_block *sb)
{
	char uuid[37];
	char label[TWIG_LABEL_SIZE];

	twig_uuid_unparse(sb->fsid, uuid);
	memcpy(label, sb->label, sizeof(label));
	label[sizeof(label) - 1] = '\0';
	fprintf(out, "superblock at %d\n", TWIG_SUPER_OFFSET);
	fprintf(out, "\tcsum\t\t\t0x%08x [%s]\n", le32toh(sb->csum),
		le32toh(sb->csum) == twig_super_csum(sb) ? "match" : "DON'T MATCH");
	fprintf(out, "\tversion\t\t\t%u\n", le32toh(sb->version));
	fprintf(out, "\tmagic\t\t\t0x%016" PRIx64 " [%s]\n",
		(uint64_t)le64toh(sb->magic),
		le64toh(sb->magic) == TWIG_MAGIC ? "match" : "DON'T MATCH");
	fprintf(out, "\tbytenr\t\t\t%" PRIu64 "\n", (uint64_t)le64toh(sb->bytenr));
	fprintf(out, "\tfsid\t\t\t%s\n", uuid);
	fprintf(out, "\tlabel\t\t\t%s\n", label);
	fprintf(out, "\tgeneration\t\t%" PRIu64 "\n", (uint64_t)le64toh(sb->generation));
	fprintf(out, "\tcompat_flags\t\t0x%" PRIx64 "\n", (uint64_t)le64toh(sb->compat_flags));
	fprintf(out, "\tcompat_ro_flags\t\t0x%" PRIx64 "\n", (uint64_t)le64toh(sb->compat_ro_flags));
	fprintf(out, "\tincompat_flags\t\t0x%" PRIx64 "\n", (uint64_t)le64toh(sb->incompat_flags));
	fprintf(out, "\tsectorsize\t\t%u\n", le32toh(sb->sectorsize));
	fprintf(out, "\tnodesize\t\t%u\n", le32toh(sb->nodesize));
	fprintf(out, "\ttotal_bytes\t\t%" PRIu64 "\n", (uint64_t)le64toh(sb->total_bytes));
	fprintf(out, "\tbytes_used\t\t%" PRIu64 "\n", (uint64_t)le64toh(sb->bytes_used));
	fprintf(out, "\troot\t\t\t%" PRIu64 "\n", (uint64_t)le64toh(sb->root));
	fprintf(out, "\troot_generation\t\t%" PRIu64 "\n", (uint64_t)le64toh(sb->root_generation));
	fprintf(out, "\troot_level\t\t%u\n", sb->root_level);
	fprintf(out, "\talloc_copy\t\t%u (%s)\n", sb->alloc_copy,
		sb->alloc_copy ? "B" : "A");
	fprintf(out, "\talloc_csum\t\t0x%08x\n", le32toh(sb->alloc_csum));
	fprintf(out, "\talloc_start\t\t%" PRIu64 "\n", (uint64_t)le64toh(sb->alloc_start));
	fprintf(out, "\talloc_bytes\t\t%" PRIu64 "\n", (uint64_t)le64toh(sb->alloc_bytes));
	fprintf(out, "\troot_dir_objectid\t%" PRIu64 "\n", (uint64_t)le64toh(sb->root_dir_objectid));
	fprintf(out, "\tlog_root\t\t%" PRIu64 "\n", (uint64_t)le64toh(sb->log_root));
	fprintf(out, "\tlog_generation\t\t%" PRIu64 "\n", (uint64_t)le64toh(sb->log_generation));
}

static void dump_time(FILE *out, const char *name, const struct twig_timespec *t)
{
	fprintf(out, "\t\t%s %" PRIu64 ".%09u\n", name, (uint64_t)le64toh(t->sec),
		le32toh(t->nsec));
}

static void dump_inode(FILE *out, const uint8_t *data, uint32_t size)
{
	struct twig_inode_item ii;

	if (size != sizeof(ii)) {
		fprintf(out, "\t\tbad inode item size %u\n", size);
		return;
	}
	memcpy(&ii, data, sizeof(ii));
	fprintf(out, "\t\tgeneration %" PRIu64 " transid %" PRIu64 " size %" PRIu64 " nbytes %" PRIu64 "\n",
		(uint64_t)le64toh(ii.generation), (uint64_t)le64toh(ii.transid),
		(uint64_t)le64toh(ii.size), (uint64_t)le64toh(ii.nbytes));
	fprintf(out, "\t\tnext_index %" PRIu64 " nlink %u uid %u gid %u mode 0%o rdev %" PRIu64 " flags 0x%" PRIx64 "\n",
		(uint64_t)le64toh(ii.next_index), le32toh(ii.nlink),
		le32toh(ii.uid), le32toh(ii.gid), le32toh(ii.mode),
		(uint64_t)le64toh(ii.rdev), (uint64_t)le64toh(ii.flags));
	dump_time(out, "atime", &ii.atime);
	dump_time(out, "ctime", &ii.ctime);
	dump_time(out, "mtime", &ii.mtime);
	dump_time(out, "otime", &ii.otime);
}

/* Names may hold anything on a damaged disk; keep the output one line each. */
static void dump_name(FILE *out, const char *name, uint16_t len)
{
	for (uint16_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			fputc(c, out);
		else
			fprintf(out, "\\x%02x", c);
	}
}

static void dump_dir(FILE *out, const uint8_t *data, uint32_t size)
{
	struct twig_dirent de;
	uint32_t pos = 0;
	int r;

	while ((r = twig_dirent_next(data, size, &pos, &de)) > 0) {
		fprintf(out, "\t\tlocation %" PRIu64 " transid %" PRIu64 " type %s name_len %u name: ",
			de.ino, de.transid, twig_ft_name(de.type), de.name_len);
		dump_name(out, de.name, de.name_len);
		fputc('\n', out);
	}
	if (r < 0)
		fprintf(out, "\t\ttruncated directory entry at %u\n", pos);
}

static void dump_iref(FILE *out, const uint8_t *data, uint32_t size)
{
	struct twig_iref ref;
	uint32_t pos = 0;
	int r;

	while ((r = twig_iref_next(data, size, &pos, &ref)) > 0) {
		fprintf(out, "\t\tindex %" PRIu64 " name_len %u name: ",
			ref.index, ref.name_len);
		dump_name(out, ref.name, ref.name_len);
		fputc('\n', out);
	}
	if (r < 0)
		fprintf(out, "\t\ttruncated inode ref at %u\n", pos);
}

static void dump_xattr(FILE *out, const uint8_t *data, uint32_t size)
{
	struct twig_xattr xa;
	uint32_t pos = 0;
	int r;

	while ((r = twig_xattr_next(data, size, &pos, &xa)) > 0) {
		fprintf(out, "\t\ttransid %" PRIu64 " name_len %u value_len %u name: ",
			xa.transid, xa.name_len, xa.value_len);
		dump_name(out, xa.name, xa.name_len);
		fputs(" value: ", out);
		/* the first bytes: enough to recognise it, one line */
		dump_name(out, (const char *)xa.value,
			  xa.value_len < 64 ? xa.value_len : 64);
		if (xa.value_len > 64)
			fputs("...", out);
		fputc('\n', out);
	}
	if (r < 0)
		fprintf(out, "\t\ttruncated xattr entry at %u\n", pos);
}

static void dump_extent(FILE *out, const uint8_t *data, uint32_t size)
{
	struct twig_file_extent fe;

	if (size < TWIG_FILE_EXTENT_INLINE_START) {
		fprintf(out, "\t\tbad file extent size %u\n", size);
		return;
	}
	memset(&fe, 0, sizeof(fe));
	memcpy(&fe, data, size < sizeof(fe) ? size : sizeof(fe));
	fprintf(out, "\t\tgeneration %" PRIu64 " type %u (%s) ram_bytes %" PRIu64 "\n",
		(uint64_t)le64toh(fe.generation), fe.type,
		fe.type == TWIG_FILE_EXTENT_INLINE ? "inline" :
		fe.type == TWIG_FILE_EXTENT_REG ? "regular" :
		fe.type == TWIG_FILE_EXTENT_PREALLOC ? "prealloc" : "unknown",
		(uint64_t)le64toh(fe.ram_bytes));
	if (fe.type == TWIG_FILE_EXTENT_INLINE)
		fprintf(out, "\t\tinline data size %u\n",
			size - TWIG_FILE_EXTENT_INLINE_START);
	else if (size == sizeof(fe))
		fprintf(out, "\t\tdisk_bytenr %" PRIu64 " disk_num_bytes %" PRIu64 " offset %" PRIu64 " num_bytes %" PRIu64 "\n",
			(uint64_t)le64toh(fe.disk_bytenr),
			(uint64_t)le64toh(fe.disk_num_bytes),
			(uint64_t)le64toh(fe.offset),
			(uint64_t)le64toh(fe.num_bytes));
	else
		fprintf(out, "\t\tbad regular extent size %u\n", size);
}

static void dump_item(FILE *out, uint8_t type, const uint8_t *data, uint32_t size)
{
	switch (type) {
	case TWIG_INODE_ITEM_KEY:
		dump_inode(out, data, size);
		break;
	case TWIG_INODE_REF_KEY:
		dump_iref(out, data, size);
		break;
	case TWIG_XATTR_ITEM_KEY:
		dump_xattr(out, data, size);
		break;
	case TWIG_DIR_ITEM_KEY:
	case TWIG_DIR_INDEX_KEY:
		dump_dir(out, data, size);
		break;
	case TWIG_EXTENT_DATA_KEY:
		dump_extent(out, data, size);
		break;
	case TWIG_LOG_PREV_KEY:
		if (size == sizeof(struct twig_log_prev)) {
			struct twig_log_prev lp;

			memcpy(&lp, data, sizeof(lp));
			fprintf(out, "\t\tprev %" PRIu64 " prev_generation %" PRIu64 " seq %" PRIu64 "\n",
				(uint64_t)le64toh(lp.prev),
				(uint64_t)le64toh(lp.prev_generation),
				(uint64_t)le64toh(lp.seq));
		} else {
			fprintf(out, "\t\tbad LOG_PREV size %u\n", size);
		}
		break;
	default:
		fprintf(out, "\t\tunknown item type\n");
	}
}

static void dump_leaf(struct dumper *d, const uint8_t *blk, uint32_t nritems)
{
	for (uint32_t i = 0; i < nritems; i++) {
		const struct twig_item *it = twig_leaf_item(blk, i);
		const uint8_t *data;
		uint32_t size;
		struct twig_key key;
		char k[96];

		twig_key_from_disk(&key, &it->key);
		twig_key_str(k, sizeof(k), &key);
		fprintf(d->out, "\titem %u key %s itemoff %u itemsize %u\n", i, k,
			le32toh(it->offset), le32toh(it->size));
		if (twig_item_in_bounds(blk, d->nodesize, i, &data, &size))
			dump_item(d->out, key.type, data, size);
		else
			fprintf(d->out, "\t\titem data outside the block\n");
	}
}

static void print_warning(void *ctx, const char *msg)
{
	fprintf(ctx, "\tWARNING: %s\n", msg);
}

static bool visit(struct dumper *d, uint64_t addr)
{
	for (size_t i = 0; i < d->nvisited; i++)
		if (d->visited[i] == addr)
			return false;
	if (d->nvisited == MAX_VISITED)
		return false;
	d->visited[d->nvisited++] = addr;
	return true;
}

static void dump_block(struct dumper *d, uint64_t addr, int depth)
{
	uint8_t *blk;
	const struct twig_header *h;
	uint32_t nritems;
	char uuid[37];

	if (depth >= TWIG_MAX_LEVEL || !visit(d, addr)) {
		fprintf(d->out, "block %" PRIu64 " already shown or too deep, skipped\n", addr);
		return;
	}
	blk = malloc(d->nodesize);
	if (!blk || twig_pread_full(d->fd, blk, d->nodesize, addr)) {
		fprintf(d->out, "block %" PRIu64 " cannot be read\n", addr);
		free(blk);
		return;
	}
	h = (const void *)blk;
	nritems = le32toh(h->nritems);
	twig_uuid_unparse(h->fsid, uuid);
	fprintf(d->out, "%s %" PRIu64 " level %u items %u generation %" PRIu64 " owner %" PRIu64 "\n",
		h->level ? "node" : "leaf", addr, h->level, nritems,
		(uint64_t)le64toh(h->generation), (uint64_t)le64toh(h->owner));
	fprintf(d->out, "\tcsum 0x%08x flags 0x%x fsid %s\n", le32toh(h->csum),
		le32toh(h->flags), uuid);
	if (twig_block_verify_owner(blk, d->nodesize, d->sb->fsid, addr,
				    d->max_gen, d->owner, print_warning,
				    d->out) &&
	    (h->level >= TWIG_MAX_LEVEL ||
	     nritems > twig_max_items(d->nodesize, h->level))) {
		free(blk);
		return;
	}
	if (!h->level) {
		dump_leaf(d, blk, nritems);
		free(blk);
		return;
	}
	for (uint32_t i = 0; i < nritems; i++) {
		const struct twig_key_ptr *p = twig_node_ptr(blk, i);
		struct twig_key key;
		char k[96];

		twig_key_from_disk(&key, &p->key);
		twig_key_str(k, sizeof(k), &key);
		fprintf(d->out, "\tkey %s block %" PRIu64 " gen %" PRIu64 "\n", k,
			(uint64_t)le64toh(p->blockptr), (uint64_t)le64toh(p->generation));
	}
	for (uint32_t i = 0; i < nritems; i++)
		dump_block(d, le64toh(twig_node_ptr(blk, i)->blockptr), depth + 1);
	free(blk);
}

/* The fsync log, newest block first, following each LOG_PREV item. */
static void dump_log(struct dumper *d)
{
	uint64_t addr = le64toh(d->sb->log_root);
	uint8_t *blk = malloc(d->nodesize);

	d->owner = TWIG_LOG_TREE_OBJECTID;
	d->max_gen = le64toh(d->sb->log_generation);
	fprintf(d->out, "fsync log of transaction %" PRIu64 "\n", d->max_gen);
	while (blk && addr && visit(d, addr)) {
		const struct twig_item *it;
		struct twig_log_prev lp;

		d->nvisited--;	/* dump_block() visits it */
		dump_block(d, addr, 0);
		if (twig_pread_full(d->fd, blk, d->nodesize, addr) ||
		    le32toh(((const struct twig_header *)blk)->nritems) == 0)
			break;
		it = twig_leaf_item(blk, 0);
		if (le32toh(it->size) != sizeof(lp) ||
		    le32toh(it->offset) > d->nodesize - sizeof(lp))
			break;
		memcpy(&lp, blk + le32toh(it->offset), sizeof(lp));
		addr = le64toh(lp.prev);
	}
	free(blk);
}

/* Returns -1 only when there is nothing twigfs-like to show. */
int twig_dump(int fd, FILE *out)
{
	struct twig_super_block sb;
	struct dumper d = { .fd = fd, .out = out, .sb = &sb };
	uint64_t size;

	if (twig_pread_full(fd, &sb, sizeof(sb), TWIG_SUPER_OFFSET)) {
		fprintf(stderr, "cannot read the superblock: %s\n", strerror(errno));
		return -1;
	}
	dump_super(out, &sb);
	if (le64toh(sb.magic) != TWIG_MAGIC) {
		fprintf(stderr, "bad magic, not a twigfs filesystem\n");
		return -1;
	}
	d.nodesize = le32toh(sb.nodesize);
	if (!twig_is_pow2(d.nodesize) || d.nodesize < TWIG_MIN_NODESIZE ||
	    d.nodesize > TWIG_MAX_NODESIZE) {
		fprintf(out, "invalid nodesize, tree not shown\n");
		return 0;
	}
	if (twig_device_size(fd, &size) == 0 && le64toh(sb.root) >= size)
		fprintf(out, "root %" PRIu64 " is beyond the end of the device\n",
			(uint64_t)le64toh(sb.root));
	d.visited = calloc(MAX_VISITED, sizeof(*d.visited));
	if (!d.visited)
		return -1;
	d.owner = TWIG_FS_TREE_OBJECTID;
	d.max_gen = le64toh(sb.generation);
	dump_block(&d, le64toh(sb.root), 0);
	if (sb.log_root)
		dump_log(&d);
	free(d.visited);
	return 0;
}
