// SPDX-License-Identifier: GPL-2.0
/*
 * twig-helper: the few system calls the guest tests need that busybox does
 * not offer.  Built static on the host (cc -static -O2 -o twig-helper
 * twig-helper.c) and installed in the guest as /twig/twig-helper.
 *
 *   twig-helper rename2 none|noreplace|exchange OLD NEW
 *   twig-helper mksock PATH                     bind an AF_UNIX socket
 *   twig-helper seek data|hole FILE OFFSET      prints the offset
 *   twig-helper mmap-write FILE OFFSET TEXT     MAP_SHARED store + msync
 *   twig-helper fsync FILE | fdatasync FILE
 *
 * Prints "ok" or the result on success; on failure prints the errno's
 * symbolic name (ENOENT, EEXIST, ...) and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
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
	default: return strerror(e);
	}
}

static int fail(void)
{
	printf("%s\n", errname(errno));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "rename2")) {
		unsigned int flags = 0;

		if (!strcmp(argv[2], "exchange"))
			flags = RENAME_EXCHANGE;
		else if (!strcmp(argv[2], "noreplace"))
			flags = RENAME_NOREPLACE;

		if (syscall(SYS_renameat2, AT_FDCWD, argv[3], AT_FDCWD,
			    argv[4], flags))
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

		if (fd < 0)
			return fail();
		if (argv[1][1] == 's' ? fsync(fd) : fdatasync(fd))
			return fail();
		printf("ok\n");
		return 0;
	}
	fprintf(stderr, "usage: see the comment at the top of twig-helper.c\n");
	return 2;
}
