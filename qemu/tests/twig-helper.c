// SPDX-License-Identifier: GPL-2.0
/*
 * twig-helper: the few system calls the guest tests need that busybox does
 * not offer.  Built static on the host (cc -static -O2 -o twig-helper
 * twig-helper.c) and installed in the guest as /twig/twig-helper.
 *
 *   twig-helper rename2 FLAGS OLD NEW           renameat2(); FLAGS: none, or a
 *                                               comma list of noreplace,
 *                                               exchange, whiteout
 *   twig-helper dtypes DIR                      "TYPE NAME" per entry in
 *                                               readdir order; TYPE is d_type:
 *                                               reg dir lnk chr blk fifo sock
 *                                               unknown
 *   twig-helper truncate PATH SIZE              truncate(2), by path (busybox
 *                                               and GNU truncate use ftruncate)
 *   twig-helper fallocate MODE FILE OFF LEN     fallocate(2); MODE: 0,
 *                                               keep-size, punch-hole,
 *                                               zero-range, or a number
 *                                               (0x..) of FALLOC_FL_ flags
 *   twig-helper mksock PATH                     bind an AF_UNIX socket
 *   twig-helper seek data|hole FILE OFFSET      prints the offset
 *   twig-helper mmap-write FILE OFFSET TEXT     MAP_SHARED store + msync
 *   twig-helper fsync FILE | fdatasync FILE   (FILE may be a directory)
 *   twig-helper setxattr FILE NAME VALUE FLAGS  lsetxattr(); FLAGS: 0, create,
 *                                               replace; VALUE "@N": N bytes
 *                                               of 'v'
 *   twig-helper getxattr FILE NAME SIZE         lgetxattr() into a SIZE-byte
 *                                               buffer (0: ask the length);
 *                                               prints the length
 *   twig-helper listxattr FILE SIZE             llistxattr(), the same way;
 *                                               prints the length
 *   twig-helper dio-write FILE OFF LEN BUFOFF SRC [dsync]
 *                                               one pwrite() of LEN bytes
 *                                               read from SRC through an
 *                                               O_DIRECT descriptor (created
 *                                               if missing; dsync: also
 *                                               O_DSYNC), from a page-aligned
 *                                               buffer + BUFOFF; prints the
 *                                               count
 *   twig-helper dio-read FILE OFF LEN BUFOFF DST
 *                                               one pread() through O_DIRECT
 *                                               into a page-aligned buffer +
 *                                               BUFOFF; writes the bytes read
 *                                               to DST, prints the count
 *   twig-helper dio-setfl FILE                  fcntl(F_SETFL, O_DIRECT) on a
 *                                               read-only descriptor
 *   twig-helper dio-write-fault FILE OFF        an O_DIRECT pwrite() of 8 KiB
 *                                               whose second page is
 *                                               PROT_NONE; prints the count
 *   twig-helper dio-write-self FILE OFF         an O_DIRECT pwrite() to OFF
 *                                               of FILE's own first 8 KiB,
 *                                               from a MAP_SHARED mapping of
 *                                               it; prints the count
 *   twig-helper dio-truncate-race FILE SEED N   a child ftruncate()s FILE N
 *                                               times to mid-page sizes
 *                                               below 1 MiB + 64 KiB while
 *                                               the parent makes N 64 KiB
 *                                               O_DIRECT pwrite()s at 4 KiB
 *                                               multiples below 1 MiB (a
 *                                               fixed SEED picks both);
 *                                               prints the writes' and
 *                                               truncates' counts
 *   twig-helper aio-read-truncate A B N         N rounds: 16 async (io_submit)
 *                                               O_DIRECT 64 KiB reads of
 *                                               A's 1 MiB of 'a', then at
 *                                               once ftruncate(A, 0), fsync
 *                                               (a commit frees its sectors)
 *                                               and 1 MiB of 'b' written to
 *                                               B and fsync'd; every read must
 *                                               return 64 KiB of 'a' or
 *                                               nothing; prints the rounds
 *                                               and the reads that returned
 *                                               data
 *   twig-helper tmpfile DIR                     open(DIR, O_TMPFILE)
 *   twig-helper tmpfile-link DIR NAME LEN       an O_TMPFILE file of LEN
 *                                               bytes of 't', fsync()ed, then
 *                                               linkat() through
 *                                               /proc/self/fd to NAME, as
 *                                               open(2) shows
 *   twig-helper tmpfile-excl DIR NAME           the same with O_EXCL: the
 *                                               link must fail (ENOENT)
 *   twig-helper tmpfile-hold DIR LEN SECS       an O_TMPFILE file of LEN
 *                                               bytes held open SECS seconds;
 *                                               prints "ok" once written
 *   twig-helper min-dio-align MNT DEV           fstests' min_dio_alignment:
 *                                               STATX_DIOALIGN of an
 *                                               O_TMPFILE file in MNT, else
 *                                               DEV's logical block size
 *   twig-helper ioctl getflags|fiemap|fibmap FILE
 *                                               FS_IOC_GETFLAGS, FS_IOC_FIEMAP
 *                                               or FIBMAP on FILE
 *   twig-helper clone SRC DST                   ioctl(FICLONE): DST shares
 *                                               SRC's extents
 *   twig-helper fill DIR LEN                    create empty files of LEN-byte
 *                                               names (0000001xxx...) in DIR
 *                                               until one fails; prints the
 *                                               count and the errno's name
 *                                               (exit 0 whatever it was)
 *   twig-helper unfill DIR LEN FROM TO          unlink fill's files FROM..TO
 *                                               (numbers from 1); prints the
 *                                               count
 *   twig-helper statx-dio FILE                  statx(STATX_DIOALIGN): prints
 *                                               "MASK MEM OFFSET", MASK 1 if
 *                                               the result has STATX_DIOALIGN
 *
 * Prints "ok" or the result on success; on failure prints the errno's
 * symbolic name (ENOENT, EEXIST, ...) and exits 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <linux/aio_abi.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif

static const char *errname(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case ENOTEMPTY: return "ENOTEMPTY";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case EINVAL: return "EINVAL";
	case ENXIO: return "ENXIO";
	case ENOSPC: return "ENOSPC";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EXDEV: return "EXDEV";
	case EBUSY: return "EBUSY";
	case EIO: return "EIO";
	case EUCLEAN: return "EUCLEAN";
	case EROFS: return "EROFS";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENODATA: return "ENODATA";
	case ERANGE: return "ERANGE";
	case E2BIG: return "E2BIG";
	case ENODEV: return "ENODEV";
	case ESPIPE: return "ESPIPE";
	case EFBIG: return "EFBIG";
	case EBADF: return "EBADF";
	case EFAULT: return "EFAULT";
	case ENOTTY: return "ENOTTY";
	default: return strerror(e);
	}
}

static int fail(void)
{
	printf("%s\n", errname(errno));
	return 1;
}

/* An O_TMPFILE file in @dir (@flags added) holding @len bytes of 't'. */
static int tmpfile_of(const char *dir, int flags, long len)
{
	char buf[4096];
	int fd = open(dir, O_TMPFILE | O_RDWR | flags, 0600);

	if (fd < 0)
		return -1;
	memset(buf, 't', sizeof(buf));
	while (len > 0) {
		ssize_t n = write(fd, buf, len < (long)sizeof(buf) ? (size_t)len : sizeof(buf));

		if (n <= 0) {
			close(fd);
			return -1;
		}
		len -= n;
	}
	return fd;
}

/* linkat() of an open file's /proc/self/fd link, as open(2) shows it */
static int link_fd(int fd, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, path, AT_FDCWD, name, AT_SYMLINK_FOLLOW);
}

/*
 * fstests' src/min_dio_alignment.c: STATX_DIOALIGN asked of an O_TMPFILE
 * file, else the device's logical block size (its XFS geometry branch
 * does not apply).
 */
static int min_dio_alignment(const char *mnt, const char *dev)
{
	struct statx stx = { 0 };
	int fd = open(mnt, O_TMPFILE | O_RDWR | O_EXCL, 0600);
	int bs;

	if (fd >= 0 && !statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) &&
	    (stx.stx_mask & STATX_DIOALIGN)) {
		printf("%u\n", stx.stx_dio_offset_align);
		return 0;
	}
	if (fd >= 0)
		close(fd);
	fd = open(dev, O_RDONLY);
	if (fd < 0 || ioctl(fd, BLKSSZGET, &bs))
		return fail();
	printf("%d\n", bs);
	return 0;
}

/* xorshift64: the same sequence for the same seed, on every libc */
static unsigned long long next_rand(unsigned long long *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * dio-truncate-race: 64 KiB O_DIRECT writes against ftruncate() to
 * mid-page sizes of the same file, in two processes.
 */
static int dio_truncate_race(const char *file, unsigned long long seed,
			     long n)
{
	unsigned long long x = seed | 1;
	int fd = open(file, O_RDWR | O_CREAT | O_DIRECT, 0644);
	int status, tfd;
	long i, writes = 0;
	pid_t pid;
	char *buf;

	if (fd < 0 || posix_memalign((void **)&buf, 4096, 65536))
		return fail();
	memset(buf, 'd', 65536);
	pid = fork();
	if (pid < 0)
		return fail();
	if (!pid) {
		x = (seed * 0x9e3779b97f4a7c15ULL) | 1;
		tfd = open(file, O_RDWR);
		if (tfd < 0)
			_exit(1);
		for (i = 0; i < n; i++) {
			/* 1 .. 4095 bytes into one of the first 272 pages */
			off_t size = (off_t)(next_rand(&x) % 272) * 4096 +
				     1 + next_rand(&x) % 4095;

			if (ftruncate(tfd, size)) {
				fprintf(stderr, "ftruncate %lld: %s\n",
					(long long)size, errname(errno));
				_exit(1);
			}
		}
		_exit(0);
	}
	for (i = 0; i < n; i++) {
		off_t off = (off_t)(next_rand(&x) % 256) * 4096;
		ssize_t ret = pwrite(fd, buf, 65536, off);

		if (ret != 65536) {
			fprintf(stderr, "pwrite at %lld: %zd %s\n",
				(long long)off, ret, ret < 0 ? errname(errno) : "");
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return 1;
		}
		writes++;
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "truncating child failed\n");
		return 1;
	}
	if (close(fd))
		return fail();
	printf("%ld %ld\n", writes, n);
	return 0;
}

/*
 * aio-read-truncate: async direct reads in flight while the file is
 * truncated, its sectors freed by a commit and reused by another file.
 * The truncate must wait for the reads (inode_dio_wait()), so a read
 * returns the old data, or nothing once the truncate came first.
 */
#define AIO_READS	16
#define AIO_LEN		65536

static int aio_read_truncate(const char *a, const char *b, long n)
{
	struct iocb cbs[AIO_READS], *cbp[AIO_READS];
	struct io_event ev[AIO_READS];
	long long res[AIO_READS];
	aio_context_t ctx = 0;
	long round, got, data = 0;
	int fa, fb, i, j, k;
	char *src, *buf;

	if (posix_memalign((void **)&src, 4096, AIO_READS * AIO_LEN) ||
	    posix_memalign((void **)&buf, 4096, AIO_READS * AIO_LEN))
		return fail();
	if (syscall(SYS_io_setup, AIO_READS, &ctx))
		return fail();
	for (round = 0; round < n; round++) {
		fa = open(a, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
		if (fa < 0)
			return fail();
		memset(src, 'a', AIO_READS * AIO_LEN);
		if (pwrite(fa, src, AIO_READS * AIO_LEN, 0) !=
		    AIO_READS * AIO_LEN || fsync(fa))
			return fail();
		memset(buf, 'x', AIO_READS * AIO_LEN);
		for (i = 0; i < AIO_READS; i++) {
			memset(&cbs[i], 0, sizeof(cbs[i]));
			cbs[i].aio_fildes = fa;
			cbs[i].aio_lio_opcode = IOCB_CMD_PREAD;
			cbs[i].aio_buf = (unsigned long)(buf + i * AIO_LEN);
			cbs[i].aio_nbytes = AIO_LEN;
			cbs[i].aio_offset = (long long)i * AIO_LEN;
			cbp[i] = &cbs[i];
		}
		if (syscall(SYS_io_submit, ctx, AIO_READS, cbp) != AIO_READS)
			return fail();
		if (ftruncate(fa, 0) || fsync(fa))
			return fail();
		fb = open(b, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
		memset(src, 'b', AIO_READS * AIO_LEN);
		if (fb < 0 || pwrite(fb, src, AIO_READS * AIO_LEN, 0) !=
		    AIO_READS * AIO_LEN || fsync(fb) || close(fb))
			return fail();
		for (got = 0; got < AIO_READS; ) {
			k = syscall(SYS_io_getevents, ctx, 1, AIO_READS - got,
				    ev, NULL);
			if (k < 0)
				return fail();
			for (i = 0; i < k; i++)
				res[(struct iocb *)(unsigned long)ev[i].obj -
				    cbs] = ev[i].res;
			got += k;
		}
		/* whole: all of A's data, or none and the buffer untouched */
		for (i = 0; i < AIO_READS; i++) {
			for (j = 0; j < AIO_LEN; j++) {
				if ((res[i] != AIO_LEN && res[i] != 0) ||
				    buf[i * AIO_LEN + j] != (res[i] ? 'a' : 'x')) {
					fprintf(stderr, "round %ld: read %d returned %lld, byte %d is '%c'\n",
						round, i, res[i], j,
						buf[i * AIO_LEN + j]);
					return 1;
				}
			}
			data += res[i] != 0;
		}
		if (close(fa))
			return fail();
	}
	syscall(SYS_io_destroy, ctx);
	printf("%ld %ld\n", n, data);
	return 0;
}

/* "none" or a comma list of flag names; -1 for an unknown name. */
static long rename_flags(char *list)
{
	long flags = 0;
	char *tok;

	for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		if (!strcmp(tok, "noreplace"))
			flags |= RENAME_NOREPLACE;
		else if (!strcmp(tok, "exchange"))
			flags |= RENAME_EXCHANGE;
		else if (!strcmp(tok, "whiteout"))
			flags |= RENAME_WHITEOUT;
		else if (strcmp(tok, "none"))
			return -1;
	}
	return flags;
}

/* fill's LEN-byte name of file @n: the number, then 'x's. */
static int fill_name(char *buf, size_t size, const char *dir, long len, long n)
{
	char name[256];
	int k;

	if (len < 8 || len > 255)
		return -1;
	k = snprintf(name, sizeof(name), "%07ld", n);
	memset(name + k, 'x', len - k);
	name[len] = '\0';
	return snprintf(buf, size, "%s/%s", dir, name) >= (int)size ? -1 : 0;
}

static const char *dtype_name(unsigned char t)
{
	switch (t) {
	case DT_REG: return "reg";
	case DT_DIR: return "dir";
	case DT_LNK: return "lnk";
	case DT_CHR: return "chr";
	case DT_BLK: return "blk";
	case DT_FIFO: return "fifo";
	case DT_SOCK: return "sock";
	case DT_UNKNOWN: return "unknown";
	default: return "invalid";
	}
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "rename2")) {
		long flags = rename_flags(argv[2]);

		if (flags < 0) {
			fprintf(stderr, "unknown rename flag in %s\n", argv[2]);
			return 2;
		}
		if (syscall(SYS_renameat2, AT_FDCWD, argv[3], AT_FDCWD,
			    argv[4], (unsigned int)flags))
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "dtypes")) {
		DIR *d = opendir(argv[2]);
		struct dirent *de;

		if (!d)
			return fail();
		errno = 0;
		while ((de = readdir(d)))
			printf("%s %s\n", dtype_name(de->d_type), de->d_name);
		if (errno)
			return fail();
		closedir(d);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "truncate")) {
		if (truncate(argv[2], strtoll(argv[3], NULL, 0)))
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "fallocate")) {
		int mode = 0;
		int fd;

		if (!strcmp(argv[2], "keep-size"))
			mode = FALLOC_FL_KEEP_SIZE;
		else if (!strcmp(argv[2], "punch-hole"))
			mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
		else if (!strcmp(argv[2], "zero-range"))
			mode = FALLOC_FL_ZERO_RANGE;
		else if (argv[2][0] >= '0' && argv[2][0] <= '9')
			mode = (int)strtol(argv[2], NULL, 0);
		else {
			fprintf(stderr, "unknown fallocate mode %s\n", argv[2]);
			return 2;
		}
		fd = open(argv[3], O_RDWR);
		if (fd < 0)
			return fail();
		if (fallocate(fd, mode, strtoll(argv[4], NULL, 0),
			      strtoll(argv[5], NULL, 0)))
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "tmpfile")) {
		if (open(argv[2], O_TMPFILE | O_RDWR, 0600) < 0)
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "tmpfile-link")) {
		int fd = tmpfile_of(argv[2], 0, strtol(argv[4], NULL, 0));

		if (fd < 0 || fsync(fd) || link_fd(fd, argv[3]))
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "tmpfile-excl")) {
		int fd = tmpfile_of(argv[2], O_EXCL, 1);

		if (fd < 0 || link_fd(fd, argv[3]))
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "tmpfile-hold")) {
		int fd = tmpfile_of(argv[2], 0, strtol(argv[3], NULL, 0));

		if (fd < 0)
			return fail();
		printf("ok\n");
		fflush(stdout);
		sleep((unsigned int)strtoul(argv[4], NULL, 0));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "min-dio-align"))
		return min_dio_alignment(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "ioctl")) {
		struct fiemap fm = { .fm_length = FIEMAP_MAX_OFFSET };
		int fd = open(argv[3], O_RDONLY);
		int arg = 0, ret;

		if (fd < 0)
			return fail();
		if (!strcmp(argv[2], "getflags"))
			ret = ioctl(fd, FS_IOC_GETFLAGS, &arg);
		else if (!strcmp(argv[2], "fiemap"))
			ret = ioctl(fd, FS_IOC_FIEMAP, &fm);
		else if (!strcmp(argv[2], "fibmap"))
			ret = ioctl(fd, FIBMAP, &arg);
		else
			return 2;
		if (ret)
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "clone")) {
		int src = open(argv[2], O_RDONLY);
		int dst = open(argv[3], O_WRONLY | O_CREAT, 0644);

		if (src < 0 || dst < 0 || ioctl(dst, FICLONE, src))
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "mksock")) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		if (fd < 0)
			return fail();
		strncpy(sun.sun_path, argv[2], sizeof(sun.sun_path) - 1);
		if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)))
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "seek")) {
		int whence = !strcmp(argv[2], "data") ? SEEK_DATA : SEEK_HOLE;
		int fd = open(argv[3], O_RDONLY);
		off_t off;

		if (fd < 0)
			return fail();
		off = lseek(fd, strtoll(argv[4], NULL, 0), whence);
		if (off < 0)
			return fail();
		printf("%lld\n", (long long)off);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "mmap-write")) {
		int fd = open(argv[2], O_RDWR);
		long long off = strtoll(argv[3], NULL, 0);
		long page = sysconf(_SC_PAGESIZE);
		long long base = off / page * page;
		size_t len = strlen(argv[4]) + (off - base);
		char *p;

		if (fd < 0)
			return fail();
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 base);
		if (p == MAP_FAILED)
			return fail();
		memcpy(p + (off - base), argv[4], strlen(argv[4]));
		if (msync(p, len, MS_SYNC) || munmap(p, len) || close(fd))
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 3 && (!strcmp(argv[1], "fsync") ||
			  !strcmp(argv[1], "fdatasync"))) {
		int fd = open(argv[2], O_RDWR);

		/* a directory opens read-only only */
		if (fd < 0 && errno == EISDIR)
			fd = open(argv[2], O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			return fail();
		if (argv[1][1] == 's' ? fsync(fd) : fdatasync(fd))
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "setxattr")) {
		const char *val = argv[4];
		size_t len = strlen(val);
		char *buf = NULL;
		int flags = 0;
		int ret;

		if (!strcmp(argv[5], "create"))
			flags = XATTR_CREATE;
		else if (!strcmp(argv[5], "replace"))
			flags = XATTR_REPLACE;
		if (val[0] == '@') {
			len = strtoul(val + 1, NULL, 0);
			buf = malloc(len + 1);
			if (!buf)
				return fail();
			memset(buf, 'v', len);
			val = buf;
		}
		ret = lsetxattr(argv[2], argv[3], val, len, flags);
		free(buf);
		if (ret)
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "getxattr")) {
		size_t size = strtoul(argv[4], NULL, 0);
		char *buf = malloc(size + 1);
		ssize_t n;

		if (!buf)
			return fail();
		n = lgetxattr(argv[2], argv[3], size ? buf : NULL, size);
		free(buf);
		if (n < 0)
			return fail();
		printf("%zd\n", n);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "listxattr")) {
		size_t size = strtoul(argv[3], NULL, 0);
		char *buf = malloc(size + 1);
		ssize_t n;

		if (!buf)
			return fail();
		n = llistxattr(argv[2], size ? buf : NULL, size);
		free(buf);
		if (n < 0)
			return fail();
		printf("%zd\n", n);
		return 0;
	}
	if ((argc == 7 || argc == 8) && !strcmp(argv[1], "dio-write")) {
		int flags = O_WRONLY | O_CREAT | O_DIRECT;
		size_t len = strtoul(argv[4], NULL, 0);
		size_t bufoff = strtoul(argv[5], NULL, 0);
		int src = open(argv[6], O_RDONLY);
		ssize_t n;
		char *buf;
		int fd;

		if (argc == 8 && !strcmp(argv[7], "dsync"))
			flags |= O_DSYNC;
		if (src < 0 || posix_memalign((void **)&buf, 4096, len + bufoff))
			return fail();
		if (read(src, buf + bufoff, len) != (ssize_t)len) {
			fprintf(stderr, "%s: short read\n", argv[6]);
			return 2;
		}
		fd = open(argv[2], flags, 0644);
		if (fd < 0)
			return fail();
		n = pwrite(fd, buf + bufoff, len, strtoll(argv[3], NULL, 0));
		if (n < 0 || close(fd))
			return fail();
		printf("%zd\n", n);
		return 0;
	}
	if (argc == 7 && !strcmp(argv[1], "dio-read")) {
		size_t len = strtoul(argv[4], NULL, 0);
		size_t bufoff = strtoul(argv[5], NULL, 0);
		int fd = open(argv[2], O_RDONLY | O_DIRECT);
		ssize_t n;
		char *buf;
		int dst;

		if (fd < 0 || posix_memalign((void **)&buf, 4096, len + bufoff))
			return fail();
		/* a pattern, so that bytes the read claims but skips show */
		memset(buf, 0xa5, len + bufoff);
		n = pread(fd, buf + bufoff, len, strtoll(argv[3], NULL, 0));
		if (n < 0)
			return fail();
		dst = open(argv[6], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (dst < 0 || write(dst, buf + bufoff, n) != n || close(dst))
			return fail();
		printf("%zd\n", n);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "dio-setfl")) {
		int fd = open(argv[2], O_RDONLY);

		if (fd < 0 || fcntl(fd, F_SETFL, O_DIRECT) ||
		    !(fcntl(fd, F_GETFL) & O_DIRECT))
			return fail();
		printf("ok\n");
		return 0;
	}
	if (argc == 4 && (!strcmp(argv[1], "dio-write-fault") ||
			  !strcmp(argv[1], "dio-write-self"))) {
		int fd = open(argv[2], O_RDWR | O_DIRECT);
		int self = argv[1][10] == 's';
		ssize_t n;
		char *p;

		if (fd < 0)
			return fail();
		p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			 self ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS,
			 self ? fd : -1, 0);
		if (p == MAP_FAILED)
			return fail();
		if (!self) {
			memset(p, 'f', 4096);
			if (mprotect(p + 4096, 4096, PROT_NONE))
				return fail();
		}
		n = pwrite(fd, p, 8192, strtoll(argv[3], NULL, 0));
		if (n < 0)
			return fail();
		printf("%zd\n", n);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "fill")) {
		long len = strtol(argv[3], NULL, 0), n;
		char path[4096];
		int fd;

		for (n = 1; ; n++) {
			if (fill_name(path, sizeof(path), argv[2], len, n))
				return 2;
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
			if (fd < 0)
				break;
			close(fd);
		}
		printf("%ld %s\n", n - 1, errname(errno));
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "unfill")) {
		long len = strtol(argv[3], NULL, 0), n, done = 0;
		long to = strtol(argv[5], NULL, 0);
		char path[4096];

		for (n = strtol(argv[4], NULL, 0); n <= to; n++) {
			if (fill_name(path, sizeof(path), argv[2], len, n))
				return 2;
			if (unlink(path))
				return fail();
			done++;
		}
		printf("%ld\n", done);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "statx-dio")) {
		struct statx stx;

		if (statx(AT_FDCWD, argv[2], 0, STATX_DIOALIGN, &stx))
			return fail();
		printf("%d %u %u\n", !!(stx.stx_mask & STATX_DIOALIGN),
		       stx.stx_dio_mem_align, stx.stx_dio_offset_align);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "aio-read-truncate"))
		return aio_read_truncate(argv[2], argv[3],
					 strtol(argv[4], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "dio-truncate-race"))
		return dio_truncate_race(argv[2], strtoull(argv[3], NULL, 0),
					 strtol(argv[4], NULL, 0));
	fprintf(stderr, "usage: see the comment at the top of twig-helper.c\n");
	return 2;
}
