// SPDX-License-Identifier: GPL-2.0
/*
 * twig-fsx: random file operations checked against a model of the file, in
 * the spirit of fsx from fstests (written anew here, not copied).  Every
 * operation that changes the file is applied to an in-memory copy too; every
 * read, and a whole-file comparison every -c operations, must match it byte
 * for byte.  The same seed gives the same operations.
 *
 *   twig-fsx [options] FILE
 *     -N ops      operations to run (default 2000)
 *     -S seed     seed (default 1)
 *     -l len      largest single operation (default 65536)
 *     -f size     largest file size (default 1048576)
 *     -c n        compare the whole file every n operations (default 100)
 *     -d n        drop the page cache every n operations (0: never;
 *                 default 500), so reads come from the disk
 *     -x list     leave out operations: a comma list of write, read, mapwrite,
 *                 mapread, truncate, punch, zero, falloc, dwrite, dread,
 *                 fsync, seek, copy, reopen
 *     -m path     at the end, write the model there (to compare the file
 *                 with it after a remount)
 *     -a n        O_DIRECT offsets and lengths are multiples of n, a divisor
 *                 of 4096 (default: the file's st_blksize if it is one,
 *                 else 4096; twigfs needs its 4 KiB sector)
 *
 * Checks beside the data: st_size after every operation that sets it; a
 * mapped read of the last page sees zeroes past EOF; SEEK_DATA/SEEK_HOLE
 * never call bytes a hole that the model holds as non-zero.
 * Exit status 0 when every check held; 1 with the failing operation, the
 * bytes around the first difference and the last operations on stderr; 2
 * on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUF_ALIGN	4096	/* O_DIRECT buffers, for any filesystem */
#define HISTORY		32

enum op {
	OP_WRITE, OP_READ, OP_MAPWRITE, OP_MAPREAD, OP_TRUNCATE, OP_PUNCH,
	OP_ZERO, OP_FALLOC, OP_DWRITE, OP_DREAD, OP_FSYNC, OP_SEEK, OP_COPY,
	OP_REOPEN, OP_NR
};

static const char *const op_name[OP_NR] = {
	"write", "read", "mapwrite", "mapread", "truncate", "punch", "zero",
	"falloc", "dwrite", "dread", "fsync", "seek", "copy", "reopen",
};

/* Relative frequencies: the data paths most, the rest often enough. */
static const unsigned int op_weight[OP_NR] = {
	20, 14, 8, 8, 6, 5, 5, 4, 6, 6, 3, 4, 4, 1,
};

struct logent {
	unsigned long nr;
	enum op op;
	off_t off, len, size_before;
	const char *note;
};

static const char *path;
static int fd, dfd;
static unsigned char *model, *buf, *dbuf;
static off_t fsize, maxsize, maxlen;
static uint64_t rng;
static unsigned long opnr, counts[OP_NR];
static struct logent hist[HISTORY];
static char copy_note[HISTORY][32];
static long pagesz;
static off_t dio_align;	/* O_DIRECT offsets and lengths: -a, or st_blksize */

static uint64_t rnd(void)
{
	/* xorshift64*: the same sequence from a seed on every libc */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static off_t rnd_below(off_t n)
{
	return n > 0 ? (off_t)(rnd() % (uint64_t)n) : 0;
}

static void dump_history(void)
{
	unsigned long first = opnr >= HISTORY ? opnr - HISTORY + 1 : 1;

	fprintf(stderr, "last operations (number, op, offset, length, size before):\n");
	for (unsigned long n = first; n <= opnr; n++) {
		struct logent *e = &hist[n % HISTORY];

		if (e->nr != n)
			continue;
		fprintf(stderr, "  %6lu %-8s 0x%jx +0x%jx size 0x%jx %s\n", e->nr,
			op_name[e->op], (intmax_t)e->off, (intmax_t)e->len,
			(intmax_t)e->size_before, e->note);
	}
}

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "twig-fsx: %s: op %lu: ", path, opnr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	dump_history();
	exit(1);
}

static void sys_fail(const char *what)
{
	die("%s: %s", what, strerror(errno));
}

static void open_file(void)
{
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		sys_fail("open");
	dfd = open(path, O_RDWR | O_DIRECT);
	if (dfd < 0)
		sys_fail("open O_DIRECT");
}

static void check_size(const char *after)
{
	struct stat st;

	if (fstat(fd, &st))
		sys_fail("fstat");
	if (st.st_size != fsize)
		die("after %s: st_size 0x%jx, expected 0x%jx", after,
		    (intmax_t)st.st_size, (intmax_t)fsize);
}

/* got[0..len) must equal model[off..off+len) */
static void compare(const unsigned char *got, off_t off, off_t len, const char *how)
{
	off_t i, j;

	for (i = 0; i < len; i++)
		if (got[i] != model[off + i])
			break;
	if (i == len)
		return;
	fprintf(stderr, "twig-fsx: %s: %s at 0x%jx: first difference at 0x%jx\n",
		path, how, (intmax_t)off, (intmax_t)(off + i));
	fprintf(stderr, "  offset     expected got\n");
	for (j = i; j < len && j < i + 16; j++)
		fprintf(stderr, "  0x%08jx %02x       %02x%s\n", (intmax_t)(off + j),
			model[off + j], got[j], got[j] != model[off + j] ? "  *" : "");
	die("%s: data differs from the model", how);
}

static void full_read(int rfd, unsigned char *to, off_t off, off_t len, const char *how)
{
	off_t done = 0;

	while (done < len) {
		ssize_t n = pread(rfd, to + done, len - done, off + done);

		if (n < 0)
			sys_fail(how);
		if (n == 0)
			die("%s: EOF at 0x%jx, inside the 0x%jx-byte file", how,
			    (intmax_t)(off + done), (intmax_t)fsize);
		done += n;
	}
}

static void full_write(int wfd, const unsigned char *from, off_t off, off_t len, const char *how)
{
	off_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(wfd, from + done, len - done, off + done);

		if (n <= 0)
			sys_fail(how);
		done += n;
	}
}

/* the model grows (zero-filled) or shrinks to a new size */
static void model_resize(off_t size)
{
	if (size > fsize)
		memset(model + fsize, 0, size - fsize);
	fsize = size;
}

/*
 * Bytes for one write: a pattern of the position under a multiplier and a
 * mask both drawn from the operation's number, so data left over from any
 * earlier write differs from this one's at most positions.
 */
static void fill(unsigned char *to, off_t off, off_t len)
{
	uint32_t h = (uint32_t)opnr * 2654435761u;

	for (off_t i = 0; i < len; i++)
		to[i] = (unsigned char)(((uint64_t)(off + i) * (h | 1)) >> 11 ^ h >> 24);
}

/* a write through wfd (fd, or dfd with its aligned buffer) */
static void do_write(int wfd, unsigned char *from, off_t off, off_t len, const char *how)
{
	fill(from, off, len);
	full_write(wfd, from, off, len, how);
	if (off + len > fsize)
		model_resize(off + len);
	memcpy(model + off, from, len);
	check_size(how);
}

/* what a read of len bytes at off must return: up to EOF, never past it */
static off_t expect_count(off_t off, off_t len)
{
	if (off >= fsize)
		return 0;
	return off + len > fsize ? fsize - off : len;
}

/*
 * One pread through rfd (fd, or dfd with its aligned buffer): a regular
 * file returns everything up to EOF at once, as fsx expects too (and a
 * second direct read from an unaligned EOF would be EINVAL).
 */
static void do_read(int rfd, unsigned char *to, off_t off, off_t len, const char *how)
{
	ssize_t n = pread(rfd, to, len, off);

	if (n < 0)
		sys_fail(how);
	if (n != expect_count(off, len))
		die("%s at 0x%jx of 0x%jx returned 0x%zx bytes, file size 0x%jx",
		    how, (intmax_t)off, (intmax_t)len, n, (intmax_t)fsize);
	compare(to, off, n, how);
}

static unsigned char *map_range(off_t off, off_t len, off_t *pgoff, off_t *maplen, int prot)
{
	void *p;

	*pgoff = off & ~(off_t)(pagesz - 1);
	*maplen = off + len - *pgoff;
	p = mmap(NULL, *maplen, prot, MAP_SHARED, fd, *pgoff);
	if (p == MAP_FAILED)
		sys_fail("mmap");
	return p;
}

static void do_mapwrite(off_t off, off_t len)
{
	off_t pgoff, maplen;
	unsigned char *p;

	if (off + len > fsize) {
		/* a store past EOF would SIGBUS: grow the file first, as fsx */
		if (ftruncate(fd, off + len))
			sys_fail("ftruncate (mapwrite)");
		model_resize(off + len);
	}
	p = map_range(off, len, &pgoff, &maplen, PROT_READ | PROT_WRITE);
	fill(model + off, off, len);
	memcpy(p + (off - pgoff), model + off, len);
	if (msync(p, maplen, MS_SYNC))
		sys_fail("msync");
	munmap(p, maplen);
	check_size("mapwrite");
}

static void do_mapread(off_t off, off_t len)
{
	off_t pgoff, maplen, end, tail;
	unsigned char *p;

	if (off + len > fsize)
		len = fsize - off;
	if (len <= 0)
		return;
	p = map_range(off, len, &pgoff, &maplen, PROT_READ);
	compare(p + (off - pgoff), off, len, "mapread");
	munmap(p, maplen);

	/* the rest of EOF's page reads as zeroes through a mapping */
	end = fsize & (pagesz - 1);
	if (!end)
		return;
	pgoff = fsize - end;
	p = mmap(NULL, pagesz, PROT_READ, MAP_SHARED, fd, pgoff);
	if (p == MAP_FAILED)
		sys_fail("mmap (EOF page)");
	for (tail = end; tail < pagesz; tail++)
		if (p[tail])
			die("mapped byte 0x%jx past EOF 0x%jx is 0x%02x, not zero",
			    (intmax_t)(pgoff + tail), (intmax_t)fsize, p[tail]);
	munmap(p, pagesz);
}

static void do_truncate(off_t size)
{
	if (ftruncate(fd, size))
		sys_fail("ftruncate");
	model_resize(size);
	check_size("truncate");
}

static void do_fallocate(enum op op, off_t off, off_t len, int keep)
{
	int mode = keep ? FALLOC_FL_KEEP_SIZE : 0;

	if (op == OP_PUNCH)
		mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
	else if (op == OP_ZERO)
		mode |= FALLOC_FL_ZERO_RANGE;
	if (fallocate(fd, mode, off, len))
		sys_fail(op_name[op]);
	if (op != OP_FALLOC) {
		off_t end = off + len < fsize ? off + len : fsize;

		if (end > off)
			memset(model + off, 0, end - off);
	}
	if (!(mode & FALLOC_FL_KEEP_SIZE) && off + len > fsize)
		model_resize(off + len);
	check_size(op_name[op]);
}

static void do_fsync(int data_only)
{
	if (data_only ? fdatasync(fd) : fsync(fd))
		sys_fail(data_only ? "fdatasync" : "fsync");
}

/* every byte SEEK_DATA skips, or SEEK_HOLE calls a hole, is zero */
static void do_seek(off_t off)
{
	off_t d, h, i;

	d = lseek(fd, off, SEEK_DATA);
	if (d < 0 && errno != ENXIO)
		sys_fail("SEEK_DATA");
	if (off >= fsize) {
		if (d >= 0)
			die("SEEK_DATA from 0x%jx, at or past EOF 0x%jx, gave 0x%jx, not ENXIO",
			    (intmax_t)off, (intmax_t)fsize, (intmax_t)d);
		return;
	}
	if (d < 0)
		d = fsize;
	if (d < off || d > fsize)
		die("SEEK_DATA from 0x%jx gave 0x%jx, size 0x%jx", (intmax_t)off,
		    (intmax_t)d, (intmax_t)fsize);
	for (i = off; i < d; i++)
		if (model[i])
			die("SEEK_DATA from 0x%jx skipped to 0x%jx over data at 0x%jx",
			    (intmax_t)off, (intmax_t)d, (intmax_t)i);
	h = lseek(fd, off, SEEK_HOLE);
	if (h < 0)
		sys_fail("SEEK_HOLE");
	if (h < off || h > fsize)
		die("SEEK_HOLE from 0x%jx gave 0x%jx, size 0x%jx", (intmax_t)off,
		    (intmax_t)h, (intmax_t)fsize);
	d = lseek(fd, h, SEEK_DATA);
	if (d < 0)
		d = fsize;
	if (d == h && h < fsize)
		die("SEEK_HOLE from 0x%jx gave 0x%jx, where SEEK_DATA finds data",
		    (intmax_t)off, (intmax_t)h);
	for (i = h; i < d && i < fsize; i++)
		if (model[i])
			die("SEEK_HOLE from 0x%jx: hole at 0x%jx holds data at 0x%jx",
			    (intmax_t)off, (intmax_t)h, (intmax_t)i);
}

/* copy_file_range within the file, between ranges that do not overlap */
static void do_copy(off_t src, off_t dst, off_t len)
{
	loff_t in = src, out = dst;
	off_t done = 0;

	while (done < len) {
		ssize_t n = copy_file_range(fd, &in, fd, &out, len - done, 0);

		if (n < 0)
			sys_fail("copy_file_range");
		if (n == 0)
			die("copy_file_range: 0 at 0x%jx of 0x%jx", (intmax_t)done,
			    (intmax_t)len);
		done += n;
	}
	if (dst + len > fsize)
		model_resize(dst + len);
	memmove(model + dst, model + src, len);
	check_size("copy");
}

static void check_all(const char *when)
{
	unsigned char *all;

	check_size(when);
	if (!fsize)
		return;
	all = malloc(fsize);
	if (!all)
		die("out of memory");
	full_read(fd, all, 0, fsize, "pread (whole file)");
	compare(all, 0, fsize, when);
	free(all);
}

static void drop_caches(void)
{
	int pfd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	/* needs root; without it the test still runs, on cached pages */
	if (pfd < 0)
		return;
	if (fsync(fd) || write(pfd, "3", 1) != 1)
		sys_fail("drop caches");
	close(pfd);
}

static enum op pick(const unsigned int *weight, unsigned int total)
{
	unsigned int r = rnd() % total;
	int op;

	for (op = 0; op < OP_NR - 1; op++) {
		if (r < weight[op])
			break;
		r -= weight[op];
	}
	return op;
}

static void run_op(enum op op)
{
	off_t off = rnd_below(maxsize), len = rnd_below(maxlen) + 1;
	struct logent *e = &hist[opnr % HISTORY];
	int keep = rnd() & 1;

	if (off + len > maxsize)
		len = maxsize - off;
	/* reads, seeks and copies mostly land inside the file */
	if ((op == OP_READ || op == OP_MAPREAD || op == OP_SEEK || op == OP_DREAD ||
	     op == OP_COPY) && fsize)
		off = rnd_below(fsize);
	if (op == OP_DWRITE || op == OP_DREAD) {
		off -= off % dio_align;
		len += (dio_align - len % dio_align) % dio_align;
		if (off + len > maxsize)
			len = maxsize - off;
	}
	*e = (struct logent){ opnr, op, off, len, fsize, "" };
	if (op == OP_FALLOC || op == OP_ZERO)
		e->note = keep ? "keep-size" : "";
	else if (op == OP_FSYNC)
		e->note = keep ? "fdatasync" : "fsync";
	counts[op]++;

	switch (op) {
	case OP_WRITE:
		do_write(fd, buf, off, len, "write");
		break;
	case OP_READ:
		do_read(fd, buf, off, len, "read");
		break;
	case OP_MAPWRITE:
		do_mapwrite(off, len);
		break;
	case OP_MAPREAD:
		do_mapread(off, len);
		break;
	case OP_TRUNCATE:
		e->off = rnd_below(maxsize + 1);
		e->len = 0;
		do_truncate(e->off);
		break;
	case OP_PUNCH:
	case OP_ZERO:
	case OP_FALLOC:
		do_fallocate(op, off, len, keep);
		break;
	case OP_DWRITE:
		do_write(dfd, dbuf, off, len, "O_DIRECT write");
		break;
	case OP_DREAD:
		do_read(dfd, dbuf, off, len, "O_DIRECT read");
		break;
	case OP_FSYNC:
		do_fsync(keep);
		break;
	case OP_SEEK:
		do_seek(off);
		break;
	case OP_COPY: {
		/* a source inside the file, a destination that does not overlap */
		off_t src = off, dst = rnd_below(maxsize);

		if (src + len > fsize)
			len = fsize - src;
		if (dst + len > maxsize)
			len = maxsize - dst;
		if (len <= 0 || (dst < src + len && src < dst + len)) {
			counts[op]--;
			e->note = "skipped: overlap or empty";
			break;
		}
		e->off = src;
		e->len = len;
		snprintf(copy_note[opnr % HISTORY], sizeof(copy_note[0]),
			 "to 0x%jx", (intmax_t)dst);
		e->note = copy_note[opnr % HISTORY];
		do_copy(src, dst, len);
		break;
	}
	case OP_REOPEN:
		/* close reports a writeback error the file has not yet seen */
		if (close(fd) || close(dfd))
			sys_fail("close");
		open_file();
		check_size("reopen");
		break;
	case OP_NR:
		break;
	}
}

static int op_by_name(const char *name, size_t n)
{
	for (int op = 0; op < OP_NR; op++)
		if (strlen(op_name[op]) == n && !strncmp(op_name[op], name, n))
			return op;
	return -1;
}

static long long number(const char *opt, const char *s, long long min)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || *end || v < min) {
		fprintf(stderr, "twig-fsx: -%s: bad number '%s'\n", opt, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long ops = 2000, check_every = 100, drop_every = 500;
	unsigned int weight[OP_NR], total = 0;
	const char *model_out = NULL, *seed_arg = "1";
	int c;

	memcpy(weight, op_weight, sizeof(weight));
	maxlen = 65536;
	maxsize = 1048576;
	rng = 1;
	while ((c = getopt(argc, argv, "N:S:l:f:c:d:x:m:a:")) != -1) {
		switch (c) {
		case 'N':
			ops = number("N", optarg, 0);
			break;
		case 'S':
			rng = number("S", optarg, 0);
			seed_arg = optarg;
			break;
		case 'l':
			maxlen = number("l", optarg, 1);
			break;
		case 'f':
			maxsize = number("f", optarg, BUF_ALIGN);
			break;
		case 'c':
			check_every = number("c", optarg, 1);
			break;
		case 'd':
			drop_every = number("d", optarg, 0);
			break;
		case 'x':
			for (char *s = optarg; *s;) {
				size_t n = strcspn(s, ",");
				int op = op_by_name(s, n);

				if (op < 0) {
					fprintf(stderr, "twig-fsx: -x: unknown operation '%.*s'\n",
						(int)n, s);
					return 2;
				}
				weight[op] = 0;
				s += n + (s[n] == ',');
			}
			break;
		case 'm':
			model_out = optarg;
			break;
		case 'a':
			dio_align = number("a", optarg, 1);
			break;
		default:
			fprintf(stderr, "usage: twig-fsx [-N ops] [-S seed] [-l len] [-f size] [-c n] [-d n] [-x ops] [-m model] [-a align] FILE\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: twig-fsx [options] FILE (see the source's header)\n");
		return 2;
	}
	path = argv[optind];
	maxsize -= maxsize % BUF_ALIGN;
	if (maxlen > maxsize)
		maxlen = maxsize;
	for (int op = 0; op < OP_NR; op++)
		total += weight[op];
	if (!total) {
		fprintf(stderr, "twig-fsx: -x left no operation\n");
		return 2;
	}
	fprintf(stderr, "twig-fsx: %s: seed %ju, %lu ops\n", path, (uintmax_t)rng, ops);
	/* xorshift needs a non-zero state; mix the seed so 0, 1, 2 differ widely */
	rng = rng * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	pagesz = sysconf(_SC_PAGESIZE);
	model = calloc(maxsize, 1);
	buf = malloc(maxlen);
	if (!model || !buf || posix_memalign((void **)&dbuf, BUF_ALIGN,
					     maxlen + BUF_ALIGN)) {
		fprintf(stderr, "twig-fsx: out of memory\n");
		return 1;
	}
	unlink(path);
	open_file();
	if (!dio_align) {
		struct stat st;

		if (fstat(fd, &st))
			sys_fail("fstat");
		dio_align = st.st_blksize;
		/* NFS's or ZFS's st_blksize is no O_DIRECT rule: use a page */
		if (dio_align <= 0 || dio_align > BUF_ALIGN || BUF_ALIGN % dio_align)
			dio_align = BUF_ALIGN;
	}
	/* maxsize is a multiple of BUF_ALIGN, so of any divisor of it */
	if (dio_align > BUF_ALIGN || BUF_ALIGN % dio_align) {
		fprintf(stderr, "twig-fsx: -a %jd: the O_DIRECT alignment must divide %d\n",
			(intmax_t)dio_align, BUF_ALIGN);
		return 2;
	}

	for (opnr = 1; opnr <= ops; opnr++) {
		run_op(pick(weight, total));
		if (opnr % check_every == 0)
			check_all("whole-file check");
		if (drop_every && opnr % drop_every == 0) {
			drop_caches();
			check_all("check after dropping the page cache");
		}
	}
	opnr = ops;
	check_all("final check");
	if (model_out) {
		int mfd = open(model_out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (mfd < 0)
			sys_fail("open model file");
		full_write(mfd, model, 0, fsize, "write model file");
		close(mfd);
	}
	printf("twig-fsx: seed %s, %lu ops, final size %jd, ok:", seed_arg, ops,
	       (intmax_t)fsize);
	for (int op = 0; op < OP_NR; op++)
		printf(" %s %lu", op_name[op], counts[op]);
	printf("\n");
	return 0;
}
