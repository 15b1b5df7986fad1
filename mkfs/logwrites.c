// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs-logwrites: read a write log in the dm-log-writes on-disk format
 * (as QEMU's blklogwrites block driver writes it) and rebuild the disk
 * image as it was at any entry, for crash-consistency tests.
 *
 *   twigfs-logwrites list LOG          one line per entry, then a summary
 *   twigfs-logwrites flushes LOG       the entry number of each flush
 *   twigfs-logwrites replay LOG IMAGE --to N [--from M] [--torn SEED]
 *
 * The format (all fields little-endian): log sector 0 holds the superblock
 * (u64 magic 0x6a736677736872, u64 version 1, u64 nr_entries, u32
 * sectorsize); entries follow from log sector 1, each a header sector
 * (u64 sector, u64 nr_sectors, u64 flags, u64 data_len, then zeroes) and,
 * unless it is a discard or a mark, nr_sectors sectors of data.  Sectors
 * and counts are in units of the log's sector size.  Flags: FLUSH 1, FUA 2,
 * DISCARD 4, MARK 8 (dm-log-writes also knows METADATA 16); a mark's name
 * is data_len bytes right after the header, in the header sector.  QEMU
 * logs a write once it completed, a flush (FLUSH, no sector) once the
 * flush did, and sets no FUA: the states a power cut can leave are the
 * image after any flush entry plus any subset of the later writes.
 *
 * Entries are numbered from 1; "after entry N" is the initial image with
 * entries 1..N applied, in order.  replay applies entries M+1..N to IMAGE,
 * which must be the image as it was after entry M (M = 0 by default: a
 * copy of the image the log started from).  --torn SEED applies every
 * entry up to the last flush at or before N, and of the writes after it a
 * subset chosen by SEED (each with probability 1/2, reproducibly): one of
 * the states a volatile write cache allows.  The whole log up to N is
 * checked before IMAGE is touched, so a damaged log changes nothing.
 *
 * Exit status: 0, 1 for a damaged log or image, 2 for a usage error.
 */
#include "twig_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LW_MAGIC	0x6a736677736872ULL
#define LW_VERSION	1ULL
#define LW_FLUSH	1ULL
#define LW_FUA		2ULL
#define LW_DISCARD	4ULL
#define LW_MARK		8ULL
#define LW_METADATA	16ULL
#define LW_KNOWN	(LW_FLUSH | LW_FUA | LW_DISCARD | LW_MARK | LW_METADATA)
#define LW_MIN_SECTOR	512U
#define LW_MAX_SECTOR	(1U << 23)

struct entry {
	uint64_t sector, nr_sectors, flags, data_len;
	uint64_t data_off;	/* byte offset of the data in the log */
};

struct log {
	const char *path;
	int fd;
	uint64_t size;		/* bytes */
	uint32_t sectorsize;
	uint64_t nr;		/* entries */
	struct entry *e;	/* e[0..nr) */
};

static const char *prog = "twigfs-logwrites";

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Bytes of data an entry carries after its header sector. */
static int data_bytes(const struct log *l, const struct entry *e, uint64_t *out)
{
	if (e->flags & (LW_DISCARD | LW_MARK)) {
		*out = 0;
		return 0;
	}
	if (e->nr_sectors > UINT64_MAX / l->sectorsize)
		return -1;
	*out = e->nr_sectors * l->sectorsize;
	return 0;
}

/*
 * Reads the superblock and the headers of entries 1..upto (all when upto
 * is UINT64_MAX), checking each: flags, lengths and that it lies inside
 * the log.  Returns 0, or -1 after printing what is wrong.
 */
static int log_open(struct log *l, const char *path, uint64_t upto)
{
	unsigned char sb[28], *hdr;
	struct stat st;
	uint64_t magic, version, pos, n;

	memset(l, 0, sizeof(*l));
	l->path = path;
	l->fd = open(path, O_RDONLY);
	if (l->fd < 0 || fstat(l->fd, &st)) {
		twig_warn(prog, "%s: %s", path, strerror(errno));
		return -1;
	}
	l->size = (uint64_t)st.st_size;
	if (l->size < sizeof(sb) || twig_pread_full(l->fd, sb, sizeof(sb), 0)) {
		twig_warn(prog, "%s: too short for a log superblock (%" PRIu64 " bytes)",
		    path, l->size);
		return -1;
	}
	magic = le64(sb);
	version = le64(sb + 8);
	n = le64(sb + 16);
	l->sectorsize = le32(sb + 24);
	if (magic != LW_MAGIC) {
		twig_warn(prog, "%s: bad magic 0x%" PRIx64 " (not a dm-log-writes log)",
		    path, magic);
		return -1;
	}
	if (version != LW_VERSION) {
		twig_warn(prog, "%s: unsupported version %" PRIu64, path, version);
		return -1;
	}
	if (l->sectorsize < LW_MIN_SECTOR || l->sectorsize > LW_MAX_SECTOR ||
	    (l->sectorsize & (l->sectorsize - 1))) {
		twig_warn(prog, "%s: bad sector size %" PRIu32, path, l->sectorsize);
		return -1;
	}
	if (upto != UINT64_MAX) {
		if (upto > n) {
			twig_warn(prog, "%s: entry %" PRIu64 " asked for, the log has %" PRIu64,
			    path, upto, n);
			return -1;
		}
		n = upto;
	}
	/* each entry takes at least one sector after the superblock */
	if (n > l->size / l->sectorsize) {
		twig_warn(prog, "%s: superblock claims %" PRIu64 " entries, the log (%" PRIu64 " bytes) holds at most %" PRIu64,
		    path, n, l->size, l->size / l->sectorsize);
		return -1;
	}
	l->e = calloc(n ? n : 1, sizeof(*l->e));
	hdr = malloc(l->sectorsize);
	if (!l->e || !hdr) {
		twig_warn(prog, "out of memory for %" PRIu64 " entries", n);
		free(hdr);
		return -1;
	}
	pos = l->sectorsize;
	for (uint64_t i = 0; i < n; i++) {
		struct entry *e = &l->e[i];
		uint64_t len;

		if (pos > l->size || l->size - pos < l->sectorsize ||
		    twig_pread_full(l->fd, hdr, l->sectorsize, pos)) {
			twig_warn(prog, "%s: entry %" PRIu64 ": header at byte %" PRIu64 " runs past the end of the log (%" PRIu64 " bytes)",
			    path, i + 1, pos, l->size);
			goto bad;
		}
		e->sector = le64(hdr);
		e->nr_sectors = le64(hdr + 8);
		e->flags = le64(hdr + 16);
		e->data_len = le64(hdr + 24);
		if (e->flags & ~LW_KNOWN) {
			twig_warn(prog, "%s: entry %" PRIu64 ": unknown flags 0x%" PRIx64,
			    path, i + 1, e->flags);
			goto bad;
		}
		if ((e->flags & LW_MARK) && e->data_len > l->sectorsize - 32) {
			twig_warn(prog, "%s: entry %" PRIu64 ": mark of %" PRIu64 " bytes does not fit its sector",
			    path, i + 1, e->data_len);
			goto bad;
		}
		if (data_bytes(l, e, &len)) {
			twig_warn(prog, "%s: entry %" PRIu64 ": %" PRIu64 " sectors overflow",
			    path, i + 1, e->nr_sectors);
			goto bad;
		}
		pos += l->sectorsize;
		e->data_off = pos;
		if (len > l->size - pos) {
			twig_warn(prog, "%s: entry %" PRIu64 ": %" PRIu64 " bytes of data run past the end of the log (%" PRIu64 " bytes)",
			    path, i + 1, len, l->size);
			goto bad;
		}
		pos += len;
		l->nr = i + 1;
	}
	free(hdr);
	return 0;
bad:
	free(hdr);
	return -1;
}

static void log_close(struct log *l)
{
	if (l->fd >= 0)
		close(l->fd);
	free(l->e);
}

static void flag_string(uint64_t f, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s%s", f & LW_FLUSH ? "flush," : "",
		 f & LW_FUA ? "fua," : "", f & LW_DISCARD ? "discard," : "",
		 f & LW_MARK ? "mark," : "", f & LW_METADATA ? "meta," : "",
		 f ? "" : "write,");
	buf[strlen(buf) - 1] = 0;
}

static int cmd_list(const char *path, int flushes_only)
{
	struct log l;
	uint64_t flushes = 0, writes = 0, bytes = 0;

	if (log_open(&l, path, UINT64_MAX)) {
		log_close(&l);
		return 1;
	}
	for (uint64_t i = 0; i < l.nr; i++) {
		const struct entry *e = &l.e[i];
		char f[64];
		uint64_t len = 0;

		data_bytes(&l, e, &len);
		if (e->flags & LW_FLUSH)
			flushes++;
		if (!(e->flags & (LW_DISCARD | LW_MARK)) && e->nr_sectors) {
			writes++;
			bytes += len;
		}
		if (flushes_only) {
			if (e->flags & LW_FLUSH)
				printf("%" PRIu64 "\n", i + 1);
			continue;
		}
		flag_string(e->flags, f, sizeof(f));
		printf("%" PRIu64 " %s %" PRIu64 " %" PRIu64, i + 1, f,
		       e->sector, e->nr_sectors);
		if (e->flags & LW_MARK) {
			char name[4096];
			size_t n = e->data_len < sizeof(name) - 1 ?
				   (size_t)e->data_len : sizeof(name) - 1;

			if (twig_pread_full(l.fd, name, n, e->data_off - l.sectorsize + 32) == 0) {
				name[n] = 0;
				for (size_t k = 0; k < n; k++)
					if (name[k] < 0x21 || name[k] > 0x7e)
						name[k] = '?';
				printf(" %s", name);
			}
		}
		putchar('\n');
	}
	if (!flushes_only)
		printf("# sectorsize %" PRIu32 " entries %" PRIu64 " flushes %" PRIu64
		       " writes %" PRIu64 " bytes %" PRIu64 "\n",
		       l.sectorsize, l.nr, flushes, writes, bytes);
	log_close(&l);
	return 0;
}

/* splitmix64: a small, well-mixed, reproducible generator */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

static int cmd_replay(const char *logpath, const char *image, uint64_t from,
		      uint64_t to, int torn, uint64_t seed)
{
	struct log l;
	struct stat st;
	uint64_t last_flush = 0, applied = 0, skipped = 0, size;
	unsigned char *buf = NULL;
	const size_t chunk = 1 << 20;
	int fd = -1, rc = 1;

	if (from > to) {
		twig_warn(prog, "--from %" PRIu64 " is past --to %" PRIu64, from, to);
		return 2;
	}
	if (log_open(&l, logpath, to))
		goto out;
	fd = open(image, O_RDWR);
	if (fd < 0 || fstat(fd, &st)) {
		twig_warn(prog, "%s: %s", image, strerror(errno));
		goto out;
	}
	size = (uint64_t)st.st_size;
	for (uint64_t i = 0; i < to; i++) {
		const struct entry *e = &l.e[i];

		if (e->flags & LW_FLUSH)
			last_flush = i + 1;
		if (e->flags & LW_MARK || !e->nr_sectors)
			continue;
		if (e->sector > size / l.sectorsize ||
		    e->nr_sectors > size / l.sectorsize - e->sector) {
			twig_warn(prog, "%s: entry %" PRIu64 " writes sectors %" PRIu64 "+%" PRIu64 " past the end of %s (%" PRIu64 " bytes)",
			    logpath, i + 1, e->sector, e->nr_sectors, image, size);
			goto out;
		}
	}
	if (torn && last_flush < from) {
		twig_warn(prog, "--torn from entry %" PRIu64 ": the last flush before %" PRIu64 " is entry %" PRIu64 ", before the image's state",
		    from, to, last_flush);
		goto out;
	}
	buf = malloc(chunk);
	if (!buf) {
		twig_warn(prog, "out of memory");
		goto out;
	}
	for (uint64_t i = from; i < to; i++) {
		const struct entry *e = &l.e[i];
		uint64_t len, done;

		if (e->flags & LW_MARK || !e->nr_sectors)
			continue;
		if (torn && i + 1 > last_flush && !(next_rand(&seed) & 1)) {
			skipped++;
			continue;
		}
		len = e->nr_sectors * l.sectorsize;
		for (done = 0; done < len;) {
			size_t n = len - done < chunk ? (size_t)(len - done) : chunk;

			if (e->flags & LW_DISCARD)
				memset(buf, 0, n);	/* a discarded range reads back as zeroes */
			else if (twig_pread_full(l.fd, buf, n, e->data_off + done)) {
				twig_warn(prog, "%s: entry %" PRIu64 ": read failed", logpath, i + 1);
				goto out;
			}
			if (twig_pwrite_full(fd, buf, n, e->sector * l.sectorsize + done)) {
				twig_warn(prog, "%s: write failed: %s", image, strerror(errno));
				goto out;
			}
			done += n;
		}
		applied++;
	}
	if (fsync(fd)) {
		twig_warn(prog, "%s: fsync: %s", image, strerror(errno));
		goto out;
	}
	if (torn)
		printf("entries %" PRIu64 "..%" PRIu64 ": %" PRIu64 " writes applied, %" PRIu64
		       " after flush entry %" PRIu64 " left out (seed %" PRIu64 ")\n",
		       from + 1, to, applied, skipped, last_flush, seed);
	rc = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	log_close(&l);
	return rc;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s list LOG\n"
		"       %s flushes LOG\n"
		"       %s replay LOG IMAGE --to N [--from M] [--torn SEED]\n",
		prog, prog, prog);
}

int main(int argc, char **argv)
{
	uint64_t from = 0, to = 0, seed = 0;
	int have_to = 0, torn = 0;

	if (argc == 3 && !strcmp(argv[1], "list"))
		return cmd_list(argv[2], 0);
	if (argc == 3 && !strcmp(argv[1], "flushes"))
		return cmd_list(argv[2], 1);
	if (argc < 4 || strcmp(argv[1], "replay")) {
		usage();
		return 2;
	}
	for (int i = 4; i < argc; i += 2) {
		uint64_t *v;

		if (i + 1 >= argc) {
			usage();
			return 2;
		}
		if (!strcmp(argv[i], "--to")) {
			v = &to;
			have_to = 1;
		} else if (!strcmp(argv[i], "--from")) {
			v = &from;
		} else if (!strcmp(argv[i], "--torn")) {
			v = &seed;
			torn = 1;
		} else {
			usage();
			return 2;
		}
		if (parse_u64(argv[i + 1], v)) {
			twig_warn(prog, "%s: not a number: %s", argv[i], argv[i + 1]);
			return 2;
		}
	}
	if (!have_to) {
		usage();
		return 2;
	}
	return cmd_replay(argv[2], argv[3], from, to, torn, seed);
}
