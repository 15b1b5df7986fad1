// SPDX-License-Identifier: GPL-2.0
/* Shared helpers for the twigfs userspace tools; see twig_lib.h. */
#include "twig_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

/* ---- CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) ---- */

static uint32_t crc_table[256];
static bool crc_ready;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
		crc_table[i] = c;
	}
	crc_ready = true;
}

/* Raw update with no inversion, like the kernel's crc32c(seed, buf, len). */
uint32_t twig_crc32c(uint32_t seed, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!crc_ready)
		crc_init();
	while (len--)
		seed = crc_table[(seed ^ *p++) & 0xff] ^ (seed >> 8);
	return seed;
}

uint32_t twig_csum(const void *buf, size_t len)
{
	return ~twig_crc32c(TWIG_CSUM_SEED, buf, len);
}

uint32_t twig_name_hash(const char *name, size_t len)
{
	return twig_crc32c(TWIG_NAME_HASH_SEED, name, len);
}

uint32_t twig_block_csum(const void *block, uint32_t nodesize)
{
	return twig_csum((const uint8_t *)block + 4, nodesize - 4);
}

void twig_block_csum_set(void *block, uint32_t nodesize)
{
	struct twig_header *h = block;

	h->csum = htole32(twig_block_csum(block, nodesize));
}

uint32_t twig_super_csum(const struct twig_super_block *sb)
{
	return twig_csum((const uint8_t *)sb + 4, TWIG_SUPER_SIZE - 4);
}

void twig_super_csum_set(struct twig_super_block *sb)
{
	sb->csum = htole32(twig_super_csum(sb));
}

/* ---- geometry ---- */

uint64_t twig_round_up(uint64_t x, uint64_t align)
{
	return (x + align - 1) / align * align;
}

bool twig_is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

uint64_t twig_total_bits(uint64_t total_bytes)
{
	return total_bytes / TWIG_SECTORSIZE;
}

/* Bytes of a bitmap copy that carry bits (and are covered by alloc_csum). */
uint64_t twig_bitmap_used_bytes(uint64_t total_bytes)
{
	return (twig_total_bits(total_bytes) + 7) / 8;
}

uint64_t twig_alloc_bytes(uint64_t total_bytes)
{
	return twig_round_up(twig_bitmap_used_bytes(total_bytes),
			     TWIG_SECTORSIZE);
}

uint64_t twig_popcount(const uint8_t *map, uint64_t nbits)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < nbits; i++)
		n += !!(map[i / 8] & TWIG_BITMAP_BIT(i));
	return n;
}

void twig_bitmap_set(uint8_t *map, uint64_t start, uint64_t len)
{
	for (uint64_t s = start / TWIG_SECTORSIZE;
	     s < (start + len) / TWIG_SECTORSIZE; s++)
		map[s / 8] |= TWIG_BITMAP_BIT(s);
}

/* ---- errors ---- */

static void twig_vwarn(const char *prog, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void twig_warn(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	twig_vwarn(prog, fmt, ap);
	va_end(ap);
}

void twig_die(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	twig_vwarn(prog, fmt, ap);
	va_end(ap);
	exit(1);
}

/* ---- keys ---- */

void twig_key_from_disk(struct twig_key *k, const struct twig_disk_key *d)
{
	k->objectid = le64toh(d->objectid);
	k->type = d->type;
	k->offset = le64toh(d->offset);
}

void twig_key_to_disk(struct twig_disk_key *d, const struct twig_key *k)
{
	d->objectid = htole64(k->objectid);
	d->type = k->type;
	d->offset = htole64(k->offset);
}

/* Key order, as the module's twig_key_cmp() (fs/twigfs.h). */
int twig_key_cmp(const struct twig_key *a, const struct twig_key *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

const char *twig_key_type_name(uint8_t type)
{
	switch (type) {
	case TWIG_INODE_ITEM_KEY:	return "INODE_ITEM";
	case TWIG_INODE_REF_KEY:	return "INODE_REF";
	case TWIG_XATTR_ITEM_KEY:	return "XATTR_ITEM";
	case TWIG_ORPHAN_ITEM_KEY:	return "ORPHAN_ITEM";
	case TWIG_DIR_ITEM_KEY:		return "DIR_ITEM";
	case TWIG_DIR_INDEX_KEY:	return "DIR_INDEX";
	case TWIG_EXTENT_DATA_KEY:	return "EXTENT_DATA";
	case TWIG_LOG_PREV_KEY:		return "LOG_PREV";
	default:			return NULL;
	}
}

int twig_key_str(char *buf, size_t len, const struct twig_key *k)
{
	const char *name = twig_key_type_name(k->type);

	if (name)
		return snprintf(buf, len, "(%" PRIu64 " %s %" PRIu64 ")",
				k->objectid, name, k->offset);
	return snprintf(buf, len, "(%" PRIu64 " UNKNOWN.%u %" PRIu64 ")",
			k->objectid, k->type, k->offset);
}

/* ---- I/O ---- */

/* Loops over short transfers; a transfer of 0 bytes (EOF) is EIO. */
static int full_io(int fd, uint8_t *buf, size_t len, uint64_t off, bool write)
{
	while (len) {
		ssize_t n = write ? pwrite(fd, buf, len, (off_t)off)
				  : pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		buf += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int twig_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	return full_io(fd, buf, len, off, false);
}

int twig_pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	/* full_io only reads from @buf when writing */
	return full_io(fd, (uint8_t *)(uintptr_t)buf, len, off, true);
}

int twig_device_size(int fd, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, size) < 0 ? -1 : 0;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

/* ---- uuids ---- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Accepts only the canonical 8-4-4-4-12 form. */
int twig_uuid_parse(const char *s, uint8_t out[16])
{
	static const int dash[] = { 8, 13, 18, 23 };
	int n = 0;

	if (strlen(s) != 36)
		return -1;
	for (int i = 0; i < 4; i++)
		if (s[dash[i]] != '-')
			return -1;
	for (int i = 0; i < 36; i += 2) {
		int hi, lo;

		if (s[i] == '-')
			i++;
		hi = hexval(s[i]);
		lo = hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
	}
	return n == 16 ? 0 : -1;
}

void twig_uuid_unparse(const uint8_t u[16], char out[37])
{
	char *p = out;

	for (int i = 0; i < 16; i++) {
		p += sprintf(p, "%02x", u[i]);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			*p++ = '-';
	}
	*p = '\0';
}

/* Random version-4 UUID. */
int twig_uuid_random(uint8_t out[16])
{
	if (getrandom(out, 16, 0) != 16)
		return -1;
	out[6] = (out[6] & 0x0f) | 0x40;
	out[8] = (out[8] & 0x3f) | 0x80;
	return 0;
}

/* ---- tree blocks ---- */

const struct twig_item *twig_leaf_item(const void *block, uint32_t slot)
{
	return (const struct twig_item *)((const uint8_t *)block +
		sizeof(struct twig_header) + slot * sizeof(struct twig_item));
}

const struct twig_key_ptr *twig_node_ptr(const void *block, uint32_t slot)
{
	return (const struct twig_key_ptr *)((const uint8_t *)block +
		sizeof(struct twig_header) + slot * sizeof(struct twig_key_ptr));
}

uint32_t twig_max_items(uint32_t nodesize, uint8_t level)
{
	size_t each = level ? sizeof(struct twig_key_ptr)
			    : sizeof(struct twig_item);

	return (uint32_t)((nodesize - sizeof(struct twig_header)) / each);
}

static void reportf(twig_report_fn report, void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void reportf(twig_report_fn report, void *ctx, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report(ctx, msg);
}

/*
 * The checks that need nothing but the block itself and the superblock.
 * Returns the number of problems; callers must not trust nritems or level
 * unless it returned 0.
 */
int twig_block_verify(const void *block, uint32_t nodesize,
		      const uint8_t fsid[16], uint64_t addr, uint64_t max_gen,
		      twig_report_fn report, void *ctx)
{
	return twig_block_verify_owner(block, nodesize, fsid, addr, max_gen,
				       TWIG_FS_TREE_OBJECTID, report, ctx);
}

/* The same for a block of tree @owner (the fs tree or the fsync log). */
int twig_block_verify_owner(const void *block, uint32_t nodesize,
			    const uint8_t fsid[16], uint64_t addr,
			    uint64_t max_gen, uint64_t owner,
			    twig_report_fn report, void *ctx)
{
	const struct twig_header *h = block;
	uint32_t csum = twig_block_csum(block, nodesize);
	uint32_t nritems = le32toh(h->nritems);
	int bad = 0;

	if (le32toh(h->csum) != csum) {
		reportf(report, ctx, "checksum mismatch: stored 0x%08x, computed 0x%08x",
			le32toh(h->csum), csum);
		bad++;
	}
	if (le64toh(h->bytenr) != addr) {
		reportf(report, ctx, "header bytenr %" PRIu64 " is not the block address",
			(uint64_t)le64toh(h->bytenr));
		bad++;
	}
	if (memcmp(h->fsid, fsid, 16)) {
		reportf(report, ctx, "fsid does not match the superblock");
		bad++;
	}
	if (le64toh(h->generation) > max_gen) {
		reportf(report, ctx, "generation %" PRIu64 " newer than superblock generation %" PRIu64,
			(uint64_t)le64toh(h->generation), max_gen);
		bad++;
	}
	if (le64toh(h->owner) != owner) {
		reportf(report, ctx, "owner %" PRIu64 " is not the %s",
			(uint64_t)le64toh(h->owner),
			owner == TWIG_LOG_TREE_OBJECTID ? "fsync log" : "fs tree");
		bad++;
	}
	if (h->level >= TWIG_MAX_LEVEL) {
		reportf(report, ctx, "level %u exceeds the maximum %d",
			h->level, TWIG_MAX_LEVEL - 1);
		bad++;
	} else if (nritems > twig_max_items(nodesize, h->level)) {
		reportf(report, ctx, "nritems %u does not fit in the block", nritems);
		bad++;
	} else if (h->level && nritems == 0) {
		reportf(report, ctx, "internal node with nritems 0");
		bad++;
	}
	return bad;
}

/* Item @slot of a leaf whose nritems was already verified to fit. */
bool twig_item_in_bounds(const void *block, uint32_t nodesize, uint32_t slot,
			 const uint8_t **data, uint32_t *size)
{
	const struct twig_header *h = block;
	const struct twig_item *it = twig_leaf_item(block, slot);
	uint64_t start = sizeof(*h) +
			 (uint64_t)le32toh(h->nritems) * sizeof(*it);
	uint64_t off = le32toh(it->offset), len = le32toh(it->size);

	if (off < start || off + len > nodesize)
		return false;
	*data = (const uint8_t *)block + off;
	*size = (uint32_t)len;
	return true;
}

/* ---- items ---- */

bool twig_name_valid(const char *name, size_t len)
{
	if (len == 0 || len > TWIG_NAME_LEN)
		return false;
	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return false;
	return !memchr(name, '/', len) && !memchr(name, '\0', len);
}

/*
 * Both kinds of name records are a fixed header whose le16 name_len sits at
 * @len_off, followed by the name.  Returns 1 with @hdr filled and *pos
 * advanced, 0 at the end of the item, -1 if the record runs past the item.
 */
static int next_named(const uint8_t *data, uint32_t size, uint32_t *pos,
		      void *hdr, size_t hdr_size, size_t len_off,
		      const char **name, uint16_t *name_len)
{
	uint16_t len;

	if (*pos == size)
		return 0;
	if (*pos > size || size - *pos < hdr_size)
		return -1;
	memcpy(hdr, data + *pos, hdr_size);
	memcpy(&len, (uint8_t *)hdr + len_off, sizeof(len));
	len = le16toh(len);
	if (size - *pos - hdr_size < len)
		return -1;
	*name = (const char *)data + *pos + hdr_size;
	*name_len = len;
	*pos += (uint32_t)hdr_size + len;
	return 1;
}

/* The next entry of a DIR_ITEM or DIR_INDEX item; see next_named(). */
int twig_dirent_next(const uint8_t *data, uint32_t size, uint32_t *pos,
		     struct twig_dirent *out)
{
	struct twig_dir_entry de;
	int r = next_named(data, size, pos, &de, sizeof(de),
			   offsetof(struct twig_dir_entry, name_len),
			   &out->name, &out->name_len);

	if (r > 0) {
		out->ino = le64toh(de.ino);
		out->transid = le64toh(de.transid);
		out->type = de.type;
	}
	return r;
}

/* The next name of an INODE_REF item; see next_named(). */
int twig_iref_next(const uint8_t *data, uint32_t size, uint32_t *pos,
		   struct twig_iref *out)
{
	struct twig_inode_ref ref;
	int r = next_named(data, size, pos, &ref, sizeof(ref),
			   offsetof(struct twig_inode_ref, name_len),
			   &out->name, &out->name_len);

	if (r > 0)
		out->index = le64toh(ref.index);
	return r;
}

/*
 * The next entry of an XATTR_ITEM: 1 with @out filled and *pos advanced, 0
 * at the end of the item, -1 if the entry's name or value runs past it.
 */
int twig_xattr_next(const uint8_t *data, uint32_t size, uint32_t *pos,
		    struct twig_xattr *out)
{
	struct twig_xattr_entry xe;
	uint32_t len;

	if (*pos == size)
		return 0;
	if (*pos > size || size - *pos < sizeof(xe))
		return -1;
	memcpy(&xe, data + *pos, sizeof(xe));
	out->transid = le64toh(xe.transid);
	out->name_len = le16toh(xe.name_len);
	out->value_len = le16toh(xe.value_len);
	len = (uint32_t)out->name_len + out->value_len;
	if (size - *pos - sizeof(xe) < len)
		return -1;
	out->name = (const char *)data + *pos + sizeof(xe);
	out->value = data + *pos + sizeof(xe) + out->name_len;
	*pos += (uint32_t)sizeof(xe) + len;
	return 1;
}

/* A full name twigfs has a handler for: the rule xattr-name (format.h). */
bool twig_xattr_name_known(const char *name, size_t len)
{
	static const char *const prefixes[] = { "user.", "trusted.", "security." };
	static const char *const acls[] = {
		"system.posix_acl_access", "system.posix_acl_default",
	};

	if (!len || len > TWIG_XATTR_NAME_MAX || memchr(name, '\0', len))
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t plen = strlen(prefixes[i]);

		if (len > plen && !memcmp(name, prefixes[i], plen))
			return true;
	}
	for (size_t i = 0; i < sizeof(acls) / sizeof(acls[0]); i++)
		if (len == strlen(acls[i]) && !memcmp(name, acls[i], len))
			return true;
	return false;
}

const char *twig_ft_name(uint8_t type)
{
	static const char *const names[TWIG_FT_MAX] = {
		"UNKNOWN", "REG_FILE", "DIR", "CHRDEV", "BLKDEV", "FIFO",
		"SOCK", "SYMLINK",
	};

	return type < TWIG_FT_MAX ? names[type] : "INVALID";
}

uint8_t twig_mode_to_ft(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:	return TWIG_FT_REG_FILE;
	case S_IFDIR:	return TWIG_FT_DIR;
	case S_IFCHR:	return TWIG_FT_CHRDEV;
	case S_IFBLK:	return TWIG_FT_BLKDEV;
	case S_IFIFO:	return TWIG_FT_FIFO;
	case S_IFSOCK:	return TWIG_FT_SOCK;
	case S_IFLNK:	return TWIG_FT_SYMLINK;
	default:	return TWIG_FT_UNKNOWN;
	}
}
