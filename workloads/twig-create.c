// SPDX-License-Identifier: GPL-2.0
/*
 * twig-create: the create-own workload of `make bench`, at a steady state.
 *
 *   twig-create <dir> <procs> <seconds> <keep>
 *
 * <procs> processes, each in its own directory <dir>/d<i> (made if
 * missing).  Not timed: each fills its directory to <keep> files of 4 KiB
 * (f0 ... f<keep-1>; files already there are kept, so a separate fill
 * before a run is not redone), then everything is synced.  Timed, all
 * released together until the deadline: create the next file (open
 * O_CREAT|O_EXCL|O_WRONLY, write 4096 bytes, close) and unlink the oldest,
 * so every directory holds <keep> files for the whole run.  A creator that
 * only adds files would grow its directory, and the tree with it, for as
 * long as it runs: the workload at its end would not be the one at its
 * start.  <seconds> 0 only fills.
 *
 * Prints "prefill files <n> seconds <s> sync_seconds <s>", then, unless
 * only filling, one line:
 *   creates <n> unlinks <n> seconds <s> files_per_sec <x>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FILE_BYTES	4096
#define DIR_MAX		4096
/* a directory, "/f" and a file number */
#define NAME_MAX_LEN	(DIR_MAX + 24)

/* one cache line per process: the counters are written at every file */
struct counts {
	unsigned long creates;
	unsigned long unlinks;
	unsigned long filled;
} __attribute__((aligned(64)));

static char data[FILE_BYTES];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

/* File n of a directory: f<n>.  @excl: it must not exist yet. */
static void create_file(const char *dir, unsigned long n, int excl)
{
	char name[NAME_MAX_LEN];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), "%s/f%lu", dir, n);
	fd = open(name, O_CREAT | O_WRONLY | (excl ? O_EXCL : 0), 0644);
	if (fd < 0)
		fail(name);
	if (!excl && fstat(fd, &st) == 0 && st.st_size == FILE_BYTES) {
		close(fd);
		return;
	}
	if (write(fd, data, FILE_BYTES) != FILE_BYTES)
		fail(name);
	if (close(fd))
		fail(name);
}

static void remove_file(const char *dir, unsigned long n)
{
	char name[NAME_MAX_LEN];

	snprintf(name, sizeof(name), "%s/f%lu", dir, n);
	if (unlink(name))
		fail(name);
}

static void worker(const char *top, int id, unsigned long keep, double secs,
		   int ready, int go, struct counts *c)
{
	char dir[DIR_MAX], b = 1;
	double deadline;
	unsigned long n;

	if (snprintf(dir, sizeof(dir), "%s/d%d", top, id) >= (int)sizeof(dir)) {
		errno = ENAMETOOLONG;
		fail(top);
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		fail(dir);
	for (n = 0; n < keep; n++) {
		create_file(dir, n, 0);
		c->filled++;
	}
	if (write(ready, &b, 1) != 1)
		fail("ready pipe");
	/* a worker that fails to fill must not leave the parent waiting */
	close(ready);
	if (secs <= 0)
		exit(0);
	/* Start together: wait until the parent closes the pipe. */
	if (read(go, &b, 1) < 0)
		fail("go pipe");
	deadline = now() + secs;
	for (n = keep; now() < deadline; n++) {
		create_file(dir, n, 1);
		c->creates++;
		remove_file(dir, n - keep);
		c->unlinks++;
	}
	exit(0);
}

int main(int argc, char **argv)
{
	struct counts *c, total = { 0, 0, 0 };
	int procs, i, status, bad = 0;
	int ready[2], go[2];
	double secs, t, start, synced, end;
	unsigned long keep;
	char b;

	if (argc != 5) {
		fprintf(stderr, "usage: %s <dir> <procs> <seconds> <keep>\n",
			argv[0]);
		return 2;
	}
	procs = atoi(argv[2]);
	secs = atof(argv[3]);
	keep = strtoul(argv[4], NULL, 10);
	if (procs < 1 || secs < 0 || keep < 1)
		return 2;
	memset(data, 0xa5, sizeof(data));
	c = mmap(NULL, procs * sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED || pipe(ready) || pipe(go))
		return 1;
	memset(c, 0, procs * sizeof(*c));
	fflush(NULL);
	t = now();
	for (i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			close(ready[0]);
			close(go[1]);
			worker(argv[1], i, keep, secs, ready[1], go[0], &c[i]);
		}
	}
	close(ready[1]);
	close(go[0]);
	/* Every directory full (or a worker gone: then EOF comes early). */
	for (i = 0; i < procs && read(ready[0], &b, 1) == 1; i++)
		;
	synced = now();
	/* the fill's writeback is not the workload's */
	sync();
	start = now();
	for (i = 0; i < procs; i++)
		total.filled += c[i].filled;
	printf("prefill files %lu seconds %.3f sync_seconds %.3f\n",
	       total.filled, synced - t, start - synced);
	fflush(stdout);
	close(go[1]);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	end = now();
	if (secs <= 0)
		return bad;
	for (i = 0; i < procs; i++) {
		total.creates += c[i].creates;
		total.unlinks += c[i].unlinks;
	}
	printf("creates %lu unlinks %lu seconds %.3f files_per_sec %.1f\n",
	       total.creates, total.unlinks, end - start,
	       total.creates / (end - start));
	return bad;
}
