/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Code shared by mkfs.twigfs, fsck.twigfs, twigfs-dump and the test tools:
 * checksums, endian-neutral field access, device I/O, keys, block and item
 * decoding.  Everything that parses on-disk bytes validates offsets first,
 * because fsck and the dumper are fed garbage on purpose.
 */
#ifndef TWIG_LIB_H
#define TWIG_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <endian.h>

/* The kernel's spelling of the attribute, which the format header uses. */
#ifndef __packed
#define __packed __attribute__((__packed__))
#endif
#include "../fs/format.h"

#define TWIG_BITMAP_BIT(nr)	((uint8_t)(1u << ((nr) % 8)))

/* A key in CPU byte order. */
struct twig_key {
	uint64_t objectid;
	uint8_t type;
	uint64_t offset;
};

/* One directory entry decoded from a DIR_ITEM or DIR_INDEX item. */
struct twig_dirent {
	uint64_t ino;
	uint64_t transid;
	uint16_t name_len;
	uint8_t type;
	const char *name;	/* points into the item, not NUL-terminated */
};

/* One name decoded from an INODE_REF item. */
struct twig_iref {
	uint64_t index;
	uint16_t name_len;
	const char *name;
};

/* One extended attribute decoded from an XATTR_ITEM. */
struct twig_xattr {
	uint64_t transid;
	uint16_t name_len, value_len;
	const char *name;	/* points into the item, not NUL-terminated */
	const uint8_t *value;
};

/* Problem sink for the verification helpers: one call per problem. */
typedef void (*twig_report_fn)(void *ctx, const char *msg);

/* checksums */
uint32_t twig_crc32c(uint32_t seed, const void *buf, size_t len);
uint32_t twig_csum(const void *buf, size_t len);
uint32_t twig_name_hash(const char *name, size_t len);
uint32_t twig_block_csum(const void *block, uint32_t nodesize);
void twig_block_csum_set(void *block, uint32_t nodesize);
uint32_t twig_super_csum(const struct twig_super_block *sb);
void twig_super_csum_set(struct twig_super_block *sb);

/* geometry */
uint64_t twig_total_bits(uint64_t total_bytes);
uint64_t twig_bitmap_used_bytes(uint64_t total_bytes);
uint64_t twig_alloc_bytes(uint64_t total_bytes);
uint64_t twig_round_up(uint64_t x, uint64_t align);
bool twig_is_pow2(uint64_t x);
uint64_t twig_popcount(const uint8_t *map, uint64_t nbits);
void twig_bitmap_set(uint8_t *map, uint64_t start, uint64_t len);

/* print "prog: message" on stderr; twig_die then exits 1 */
void twig_warn(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void twig_die(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* keys */
void twig_key_from_disk(struct twig_key *k, const struct twig_disk_key *d);
void twig_key_to_disk(struct twig_disk_key *d, const struct twig_key *k);
int twig_key_cmp(const struct twig_key *a, const struct twig_key *b);
const char *twig_key_type_name(uint8_t type);
int twig_key_str(char *buf, size_t len, const struct twig_key *k);

/* I/O: 0 on success, -1 with errno set (EIO for short transfers) */
int twig_pread_full(int fd, void *buf, size_t len, uint64_t off);
int twig_pwrite_full(int fd, const void *buf, size_t len, uint64_t off);
int twig_device_size(int fd, uint64_t *size);

/* uuids */
int twig_uuid_parse(const char *s, uint8_t out[16]);
void twig_uuid_unparse(const uint8_t u[16], char out[37]);
int twig_uuid_random(uint8_t out[16]);

/* tree blocks: pointers are only valid for slots that passed the checks */
const struct twig_item *twig_leaf_item(const void *block, uint32_t slot);
const struct twig_key_ptr *twig_node_ptr(const void *block, uint32_t slot);
uint32_t twig_max_items(uint32_t nodesize, uint8_t level);
int twig_block_verify(const void *block, uint32_t nodesize,
		      const uint8_t fsid[16], uint64_t addr, uint64_t max_gen,
		      twig_report_fn report, void *ctx);
int twig_block_verify_owner(const void *block, uint32_t nodesize,
			    const uint8_t fsid[16], uint64_t addr,
			    uint64_t max_gen, uint64_t owner,
			    twig_report_fn report, void *ctx);
bool twig_item_in_bounds(const void *block, uint32_t nodesize, uint32_t slot,
			 const uint8_t **data, uint32_t *size);

/* items */
bool twig_name_valid(const char *name, size_t len);
int twig_dirent_next(const uint8_t *data, uint32_t size, uint32_t *pos,
		     struct twig_dirent *out);
int twig_iref_next(const uint8_t *data, uint32_t size, uint32_t *pos,
		   struct twig_iref *out);
int twig_xattr_next(const uint8_t *data, uint32_t size, uint32_t *pos,
		    struct twig_xattr *out);
bool twig_xattr_name_known(const char *name, size_t len);
const char *twig_ft_name(uint8_t type);
uint8_t twig_mode_to_ft(uint32_t mode);

/* the dumper (twig_lib_dump.c), shared by twigfs-dump and fsck.twigfs --dump */
int twig_dump(int fd, FILE *out);

#endif
