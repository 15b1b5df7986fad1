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
 *
 * Prints "ok" or the result on success; on failure prints the errno's
 * symbolic name (ENOENT, EEXIST, ...) and exits 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/xattr.h>
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
	default: return strerror(e);
	}
}

static int fail(void)
{
	printf("%s\n", errname(errno));
	return 1;
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
	fprintf(stderr, "usage: see the comment at the top of twig-helper.c\n");
	return 2;
}
