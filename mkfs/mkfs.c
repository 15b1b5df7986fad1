// SPDX-License-Identifier: GPL-2.0
/*
 * mkfs.twigfs: write an empty twigfs (root directory only) to an image file
 * or block device.  Every argument and the target are validated before the
 * target is opened for writing, so a refused run changes nothing.
 */
#include "twig_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROG "mkfs.twigfs"

/* Where other filesystems keep their magic, to refuse clobbering them. */
#define EXT_MAGIC_OFFSET	(1024 + 56)
#define EXT_MAGIC		0xEF53
#define BTRFS_MAGIC_OFFSET	(64 * 1024 + 64)
#define BTRFS_MAGIC		"_BHRfS_M"
#define PROBE_BYTES		(TWIG_SUPER_OFFSET + TWIG_SUPER_SIZE)

struct opts {
	bool force, quiet, have_uuid;
	const char *label;
	uint8_t uuid[16];
	uint32_t nodesize;
	uint64_t size;		/* -b, 0 if absent */
	const char *path;
};

struct layout {
	uint64_t total_bytes;
	uint64_t alloc_bytes;
	uint64_t root;		/* the single leaf */
};

#define die(...) twig_die(PROG, __VA_ARGS__)

static void usage(void)
{
	fprintf(stderr,
		"usage: " PROG " [-f] [-L label] [-U uuid] [-n nodesize] [-b size] [-q] device|image\n");
	exit(1);
}

/* Decimal number with an optional K/M/G/T suffix (powers of 1024). */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'i' && shift)
		end++;
	if ((*end == 'b' || *end == 'B') && shift)
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->nodesize = TWIG_DEFAULT_NODESIZE;
	o->label = "";
	while ((c = getopt(argc, argv, "fL:U:n:b:qh")) != -1) {
		uint64_t v;

		switch (c) {
		case 'f':
			o->force = true;
			break;
		case 'L':
			if (strlen(optarg) >= TWIG_LABEL_SIZE)
				die("label '%s' is longer than %d bytes",
				    optarg, TWIG_LABEL_SIZE - 1);
			o->label = optarg;
			break;
		case 'U':
			if (twig_uuid_parse(optarg, o->uuid))
				die("invalid UUID '%s'", optarg);
			o->have_uuid = true;
			break;
		case 'n':
			if (parse_size(optarg, &v) || !twig_is_pow2(v) ||
			    v < TWIG_MIN_NODESIZE || v > TWIG_MAX_NODESIZE)
				die("invalid node size '%s': must be a power of two from %d to %d",
				    optarg, TWIG_MIN_NODESIZE, TWIG_MAX_NODESIZE);
			o->nodesize = (uint32_t)v;
			break;
		case 'b':
			if (parse_size(optarg, &v))
				die("invalid size '%s'", optarg);
			if (v < TWIG_MIN_DEVICE_BYTES)
				die("size %s is too small: the minimum is %d bytes",
				    optarg, TWIG_MIN_DEVICE_BYTES);
			o->size = v;
			break;
		case 'q':
			o->quiet = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	o->path = argv[optind];
}

/* Reads what exists of the first PROBE_BYTES; a short file reads as zeros. */
static void probe_read(int fd, uint8_t *buf)
{
	size_t got = 0;

	memset(buf, 0, PROBE_BYTES);
	while (got < PROBE_BYTES) {
		ssize_t n = pread(fd, buf + got, PROBE_BYTES - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("cannot read: %s", strerror(errno));
		if (n == 0)
			break;
		got += (size_t)n;
	}
}

/* Name of the filesystem found on the target, or NULL. */
static const char *probe_fs(const uint8_t *buf)
{
	const struct twig_super_block *sb =
		(const void *)(buf + TWIG_SUPER_OFFSET);
	uint16_t ext;

	if (le64toh(sb->magic) == TWIG_MAGIC)
		return "twigfs";
	if (!memcmp(buf + BTRFS_MAGIC_OFFSET, BTRFS_MAGIC, 8))
		return "btrfs";
	memcpy(&ext, buf + EXT_MAGIC_OFFSET, 2);
	if (le16toh(ext) == EXT_MAGIC)
		return "ext2/3/4";
	return NULL;
}

/*
 * Open the target with O_EXCL: the kernel refuses that with EBUSY on a
 * block device that is mounted or otherwise claimed, whatever -f says.
 * (On an existing regular file O_EXCL without O_CREAT changes nothing.)
 */
static int open_target(const struct opts *o, int flags)
{
	int fd = open(o->path, flags | O_EXCL, 0644);

	if (fd < 0 && errno == EBUSY)
		die("%s is mounted or in use by the system; will not make a filesystem here!",
		    o->path);
	return fd;
}

/*
 * Decide the filesystem size from -b and the target; refuse anything that
 * would need a write to find out.  Returns true if the target exists.
 */
static bool check_target(const struct opts *o, uint64_t *total, bool *had_ext)
{
	struct stat st;
	uint64_t devsize;
	uint8_t *buf;
	const char *fs;
	int fd;

	*had_ext = false;
	if (stat(o->path, &st) < 0) {
		if (errno != ENOENT)
			die("cannot stat %s: %s", o->path, strerror(errno));
		if (!o->size)
			die("%s does not exist; give -b size to create an image",
			    o->path);
		*total = o->size;
		return false;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		die("%s is not a regular file or block device", o->path);
	fd = open_target(o, O_RDONLY);
	if (fd < 0)
		die("cannot open %s: %s", o->path, strerror(errno));
	if (twig_device_size(fd, &devsize))
		die("cannot get the size of %s: %s", o->path, strerror(errno));
	buf = malloc(PROBE_BYTES);
	if (!buf)
		die("out of memory");
	probe_read(fd, buf);
	close(fd);
	fs = probe_fs(buf);
	if (fs && !o->force)
		die("%s already contains a %s filesystem; use -f to overwrite it",
		    o->path, fs);
	*had_ext = fs && !strcmp(fs, "ext2/3/4");
	free(buf);
	if (S_ISBLK(st.st_mode) && o->size > devsize)
		die("size %" PRIu64 " is larger than the device (%" PRIu64 " bytes)",
		    o->size, devsize);
	*total = o->size ? o->size : devsize;
	return true;
}

static void compute_layout(const struct opts *o, uint64_t size, struct layout *l)
{
	l->total_bytes = size / TWIG_SECTORSIZE * TWIG_SECTORSIZE;
	if (l->total_bytes < TWIG_MIN_DEVICE_BYTES)
		die("%s is too small: %" PRIu64 " bytes, the minimum is %d",
		    o->path, size, TWIG_MIN_DEVICE_BYTES);
	l->alloc_bytes = twig_alloc_bytes(l->total_bytes);
	l->root = twig_round_up(TWIG_RESERVED_BYTES + 2 * l->alloc_bytes,
				o->nodesize);
	if (l->root + o->nodesize > l->total_bytes)
		die("%s is too small for the metadata", o->path);
}

static void set_time(struct twig_timespec *t, const struct timespec *now)
{
	t->sec = htole64((uint64_t)now->tv_sec);
	t->nsec = htole32((uint32_t)now->tv_nsec);
}

/* The fs tree: one leaf holding the root directory's inode item. */
static uint8_t *build_root_leaf(const struct opts *o, const struct layout *l)
{
	uint8_t *blk = calloc(1, o->nodesize);
	struct twig_header *h = (void *)blk;
	struct twig_item *it = (void *)(blk + sizeof(*h));
	struct twig_inode_item *ii;
	struct twig_key key = { TWIG_ROOT_DIR_OBJECTID, TWIG_INODE_ITEM_KEY, 0 };
	struct timespec now;
	uint32_t off = o->nodesize - sizeof(*ii);

	if (!blk)
		die("out of memory");
	clock_gettime(CLOCK_REALTIME, &now);
	memcpy(h->fsid, o->uuid, 16);
	h->bytenr = htole64(l->root);
	h->generation = htole64(1);
	h->owner = htole64(TWIG_FS_TREE_OBJECTID);
	h->nritems = htole32(1);
	h->level = 0;
	twig_key_to_disk(&it->key, &key);
	it->offset = htole32(off);
	it->size = htole32(sizeof(*ii));
	ii = (void *)(blk + off);
	ii->generation = htole64(1);
	ii->transid = htole64(1);
	ii->next_index = htole64(TWIG_FIRST_DIR_INDEX);
	ii->nlink = htole32(2);
	ii->mode = htole32(S_IFDIR | 0755);
	set_time(&ii->atime, &now);
	set_time(&ii->ctime, &now);
	set_time(&ii->mtime, &now);
	set_time(&ii->otime, &now);
	twig_block_csum_set(blk, o->nodesize);
	return blk;
}

static uint8_t *build_bitmap(const struct opts *o, const struct layout *l)
{
	uint8_t *map = calloc(1, l->alloc_bytes);

	if (!map)
		die("out of memory");
	twig_bitmap_set(map, 0, TWIG_RESERVED_BYTES);
	twig_bitmap_set(map, TWIG_RESERVED_BYTES, 2 * l->alloc_bytes);
	twig_bitmap_set(map, l->root, o->nodesize);
	return map;
}

static void build_super(const struct opts *o, const struct layout *l,
			const uint8_t *map, struct twig_super_block *sb)
{
	uint64_t used = twig_popcount(map, twig_total_bits(l->total_bytes));

	memset(sb, 0, sizeof(*sb));
	sb->version = htole32(TWIG_FORMAT_VERSION);
	sb->magic = htole64(TWIG_MAGIC);
	sb->bytenr = htole64(TWIG_SUPER_OFFSET);
	memcpy(sb->fsid, o->uuid, 16);
	sb->generation = htole64(1);
	sb->sectorsize = htole32(TWIG_SECTORSIZE);
	sb->nodesize = htole32(o->nodesize);
	sb->total_bytes = htole64(l->total_bytes);
	sb->bytes_used = htole64(used * TWIG_SECTORSIZE);
	sb->root = htole64(l->root);
	sb->root_generation = htole64(1);
	sb->root_level = 0;
	sb->alloc_copy = 0;
	sb->alloc_csum = htole32(twig_csum(map,
				 twig_bitmap_used_bytes(l->total_bytes)));
	sb->alloc_start = htole64(TWIG_RESERVED_BYTES);
	sb->alloc_bytes = htole64(l->alloc_bytes);
	sb->root_dir_objectid = htole64(TWIG_ROOT_DIR_OBJECTID);
	strcpy(sb->label, o->label);
	twig_super_csum_set(sb);
}

static void write_or_die(int fd, const void *buf, size_t len, uint64_t off)
{
	if (twig_pwrite_full(fd, buf, len, off))
		die("write at %" PRIu64 " failed: %s", off, strerror(errno));
}

static void sync_or_die(int fd)
{
	if (fsync(fd))
		die("fsync failed: %s", strerror(errno));
}

/*
 * Order matters for crash safety: kill any old superblock first, then write
 * tree and bitmaps, flush, and only then the superblock that points at them.
 */
static void write_fs(const struct opts *o, const struct layout *l,
		     bool existed, bool had_ext)
{
	struct twig_super_block *sb = calloc(1, sizeof(*sb));
	uint8_t *map = build_bitmap(o, l);
	uint8_t *leaf = build_root_leaf(o, l);
	uint8_t *zero = calloc(1, l->alloc_bytes);
	uint64_t devsize;
	int fd;

	if (!sb || !zero)
		die("out of memory");
	build_super(o, l, map, sb);
	/* O_EXCL again: the device may have been mounted since the probe */
	fd = open_target(o, O_WRONLY | (existed ? 0 : O_CREAT));
	if (fd < 0)
		die("cannot open %s for writing: %s", o->path, strerror(errno));
	if (twig_device_size(fd, &devsize))
		die("cannot get the size of %s: %s", o->path, strerror(errno));
	if (devsize < l->total_bytes && ftruncate(fd, (off_t)l->total_bytes))
		die("cannot extend %s: %s", o->path, strerror(errno));
	write_or_die(fd, zero, TWIG_SUPER_SIZE, TWIG_SUPER_OFFSET);
	if (had_ext) {
		uint16_t z = 0;

		write_or_die(fd, &z, 2, EXT_MAGIC_OFFSET);
	}
	sync_or_die(fd);
	write_or_die(fd, map, l->alloc_bytes, TWIG_RESERVED_BYTES);
	write_or_die(fd, zero, l->alloc_bytes,
		     TWIG_RESERVED_BYTES + l->alloc_bytes);
	write_or_die(fd, leaf, o->nodesize, l->root);
	sync_or_die(fd);
	write_or_die(fd, sb, sizeof(*sb), TWIG_SUPER_OFFSET);
	sync_or_die(fd);
	if (close(fd))
		die("close failed: %s", strerror(errno));
	free(sb);
	free(map);
	free(leaf);
	free(zero);
}

static void print_summary(const struct opts *o, const struct layout *l)
{
	char uuid[37];

	twig_uuid_unparse(o->uuid, uuid);
	printf("twigfs on %s\n", o->path);
	printf("  label:       %s\n", *o->label ? o->label : "(none)");
	printf("  uuid:        %s\n", uuid);
	printf("  size:        %" PRIu64 " bytes (%" PRIu64 " MiB)\n",
	       l->total_bytes, l->total_bytes >> 20);
	printf("  node size:   %u\n", o->nodesize);
	printf("  sector size: %d\n", TWIG_SECTORSIZE);
	printf("  bitmap:      2 x %" PRIu64 " bytes at %d\n",
	       l->alloc_bytes, TWIG_RESERVED_BYTES);
	printf("  root leaf:   %" PRIu64 "\n", l->root);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct layout l;
	uint64_t size;
	bool existed, had_ext;

	parse_args(argc, argv, &o);
	existed = check_target(&o, &size, &had_ext);
	compute_layout(&o, size, &l);
	if (!o.have_uuid && twig_uuid_random(o.uuid))
		die("cannot get random bytes: %s", strerror(errno));
	write_fs(&o, &l, existed, had_ext);
	if (!o.quiet)
		print_summary(&o, &l);
	return 0;
}
