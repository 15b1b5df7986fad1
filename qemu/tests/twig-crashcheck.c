// SPDX-License-Identifier: GPL-2.0
/*
 * twig-crashcheck: the guest side of `make crashpoints`
 * (scripts/test-crashpoints.sh).  The workload records each change to a
 * file before it starts and after its fsync returned, and after each record
 * writes a marker sector to the logged disk, past the filesystem's end, so
 * the host finds every record's place among the logged writes and flushes.
 *
 *   twig-crashcheck begin REC DEV SECTOR PATH...
 *       appends "B SECTOR - PATH" per PATH to REC, then writes the marker
 *   twig-crashcheck done REC DEV SECTOR PATH [DIR...]
 *       fsyncs PATH (when it exists) and each DIR, then appends
 *       "S SECTOR SIG PATH" (PATH there) or "G SECTOR - PATH" (gone) to
 *       REC, then writes the marker; a failed fsync records nothing
 *   twig-crashcheck ztail REC DEV SECTOR PATH SIZE DIR
 *       after the caller truncated PATH to SIZE (mid-page): fsyncs DIR (a
 *       commit, no writeback of PATH), appends "Z SECTOR SIZE PATH", writes
 *       the marker.  verify then checks that PATH has SIZE bytes and, once
 *       extended by 8 KiB, zeroes past SIZE (no old bytes come back)
 *   twig-crashcheck spray PATH N
 *       N separate extents: 4 KiB of 'e' every 8 KiB, then fsync
 *   twig-crashcheck sig PATH
 *       prints SIG: size:nlink:content-hash:xattr-hash of user.cp ("-"
 *       when absent)
 *   twig-crashcheck verify ROOT EXPECT
 *       for each "S seq SIG PATH" and "G seq - PATH" line of EXPECT: is
 *       ROOT/PATH there with that SIG, or gone?  Prints the first
 *       mismatches and "checked N lost L"; exit 1 when L > 0
 *
 * The marker is one 512-byte O_DIRECT write of "twig-crashcheck SECTOR":
 * it completes (and blklogwrites logs it) before the next change starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* SIG of PATH into buf; -1 with errno when PATH cannot be read */
static int sig(const char *path, char *buf, size_t len)
{
	static unsigned char data[1 << 16];
	char xv[4096];
	char xs[32] = "-";
	uint64_t h = 0xcbf29ce484222325ULL;
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		close(fd);
		return -1;
	}
	while ((n = read(fd, data, sizeof(data))) > 0)
		h = fnv(h, data, (size_t)n);
	close(fd);
	if (n < 0)
		return -1;
	n = lgetxattr(path, "user.cp", xv, sizeof(xv));
	if (n >= 0)
		snprintf(xs, sizeof(xs), "%016" PRIx64,
			 fnv(0xcbf29ce484222325ULL, (unsigned char *)xv, (size_t)n));
	else if (errno != ENODATA)
		return -1;
	snprintf(buf, len, "%lld:%lu:%016" PRIx64 ":%s", (long long)st.st_size,
		 (unsigned long)st.st_nlink, h, xs);
	return 0;
}

static int marker(const char *dev, const char *sector)
{
	void *buf;
	int fd = open(dev, O_WRONLY | O_DIRECT);
	int ok;

	if (fd < 0 || posix_memalign(&buf, 4096, 512)) {
		perror(dev);
		return 1;
	}
	memset(buf, 0, 512);
	snprintf(buf, 512, "twig-crashcheck %s\n", sector);
	ok = pwrite(fd, buf, 512, strtoll(sector, NULL, 0) * 512) == 512;
	if (!ok)
		perror("marker");
	free(buf);
	close(fd);
	return !ok;
}

static int append(const char *rec, const char *line)
{
	FILE *f = fopen(rec, "a");

	if (!f || fputs(line, f) == EOF || fclose(f)) {
		perror(rec);
		return 1;
	}
	return 0;
}

static int do_fsync(const char *path)
{
	int fd = open(path, O_RDONLY);
	int rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* a file truncated to @size: that size, and zeroes past it once extended */
static int ztail_check(const char *path, unsigned long long size, char *bad,
		       size_t len)
{
	static unsigned char data[8192];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDWR);

	if (fd < 0 || fstat(fd, &st)) {
		snprintf(bad, len, "missing (%s)", strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if ((unsigned long long)st.st_size != size) {
		snprintf(bad, len, "size %lld", (long long)st.st_size);
		close(fd);
		return 1;
	}
	if (ftruncate(fd, size + sizeof(data)) ||
	    (n = pread(fd, data, sizeof(data), size)) != (ssize_t)sizeof(data)) {
		snprintf(bad, len, "extend or read failed (%s)", strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	for (size_t i = 0; i < sizeof(data); i++) {
		if (data[i]) {
			snprintf(bad, len, "byte %llu is 0x%02x, not 0",
				 size + i, data[i]);
			return 1;
		}
	}
	return 0;
}

static int verify(const char *root, const char *expect)
{
	FILE *f = fopen(expect, "r");
	char line[8192], path[8192], want[256], got[256], t[8];
	unsigned long checked = 0, lost = 0;

	if (!f) {
		perror(expect);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		char seq[64], w[256], p[4096];

		if (sscanf(line, "%7s %63s %255s %4095s", t, seq, w, p) != 4)
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, p);
		snprintf(want, sizeof(want), "%s", w);
		checked++;
		if (t[0] == 'S') {
			if (sig(path, got, sizeof(got)))
				snprintf(got, sizeof(got), "missing (%s)", strerror(errno));
			if (strcmp(got, want)) {
				if (++lost <= 5)
					printf("# %s: %s, fsync'd %s\n", p, got, want);
			}
		} else if (t[0] == 'Z') {
			char bad[64] = "";

			if (ztail_check(path, strtoull(w, NULL, 0), bad, sizeof(bad)) &&
			    ++lost <= 5)
				printf("# %s: truncated to %s, then extended: %s\n", p, w, bad);
		} else if (t[0] == 'G') {
			struct stat st;

			if (!lstat(path, &st) && ++lost <= 5)
				printf("# %s: there, its removal was fsync'd\n", p);
		}
	}
	fclose(f);
	printf("checked %lu lost %lu\n", checked, lost);
	return lost ? 1 : 0;
}

int main(int argc, char **argv)
{
	char line[8192], s[256];

	if (argc == 3 && !strcmp(argv[1], "sig")) {
		if (sig(argv[2], s, sizeof(s))) {
			perror(argv[2]);
			return 1;
		}
		puts(s);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "verify"))
		return verify(argv[2], argv[3]);
	if (argc >= 6 && !strcmp(argv[1], "begin")) {
		for (int i = 5; i < argc; i++) {
			snprintf(line, sizeof(line), "B %s - %s\n", argv[4], argv[i]);
			if (append(argv[2], line))
				return 1;
		}
		return marker(argv[3], argv[4]);
	}
	if (argc >= 6 && !strcmp(argv[1], "done")) {
		const char *p = argv[5];
		struct stat st;
		int there = !lstat(p, &st);

		if (there && do_fsync(p)) {
			perror(p);
			return 1;
		}
		for (int i = 6; i < argc; i++) {
			if (do_fsync(argv[i])) {
				perror(argv[i]);
				return 1;
			}
		}
		if (there) {
			if (sig(p, s, sizeof(s))) {
				perror(p);
				return 1;
			}
			snprintf(line, sizeof(line), "S %s %s %s\n", argv[4], s, p);
		} else {
			snprintf(line, sizeof(line), "G %s - %s\n", argv[4], p);
		}
		if (append(argv[2], line))
			return 1;
		return marker(argv[3], argv[4]);
	}
	if (argc == 8 && !strcmp(argv[1], "ztail")) {
		if (do_fsync(argv[7])) {
			perror(argv[7]);
			return 1;
		}
		snprintf(line, sizeof(line), "Z %s %s %s\n", argv[4], argv[6], argv[5]);
		if (append(argv[2], line))
			return 1;
		return marker(argv[3], argv[4]);
	}
	if (argc == 4 && !strcmp(argv[1], "spray")) {
		static char e[4096];
		long nr = strtol(argv[3], NULL, 0);
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);

		memset(e, 'e', sizeof(e));
		if (fd < 0)
			return 1;
		for (long i = 0; i < nr; i++) {
			if (pwrite(fd, e, sizeof(e), i * 8192) != sizeof(e)) {
				perror(argv[2]);
				return 1;
			}
		}
		return fsync(fd) || close(fd);
	}
	fprintf(stderr, "usage: twig-crashcheck begin|done|ztail|spray|sig|verify ...\n");
	return 2;
}
