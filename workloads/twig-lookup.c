// SPDX-License-Identifier: GPL-2.0
/*
 * twig-lookup: the read-mostly workload of `make bench`.
 *
 *   twig-lookup <dir> <procs> <seconds> [files]
 *
 * Creates <files> (default 1000) empty files in <dir> (not timed), then
 * forks <procs> processes that, until the deadline, look up names in <dir>:
 * every operation is a stat() of a name nobody created before (so it misses
 * the dcache and reaches the filesystem's lookup, a read-only tree search),
 * and every 64th operation also reads the whole directory (getdents walks
 * the directory index items).  Shared read locks should show here.
 *
 * Prints one line:  lookups <n> readdirs <n> seconds <s> ops_per_sec <x>
 */
#define _GNU_SOURCE
#include <dirent.h>
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

struct counts {
	unsigned long lookups;
	unsigned long readdirs;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int read_dir(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void worker(const char *dir, int id, double deadline, struct counts *c)
{
	char name[4096];
	struct stat st;
	unsigned long i;

	for (i = 0; now() < deadline; i++) {
		snprintf(name, sizeof(name), "%s/miss.%d.%lu", dir, id, i);
		if (stat(name, &st) == 0 || errno != ENOENT) {
			perror(name);
			exit(1);
		}
		c->lookups++;
		if (i % 64 == 63) {
			if (read_dir(dir) < 0) {
				perror(dir);
				exit(1);
			}
			c->readdirs++;
		}
	}
	exit(0);
}

int main(int argc, char **argv)
{
	struct counts *c, total = { 0, 0 };
	int procs, files = 1000, i, fd, status, bad = 0;
	int go[2];
	double secs, start, end;
	char name[4096];

	if (argc < 4) {
		fprintf(stderr, "usage: %s <dir> <procs> <seconds> [files]\n", argv[0]);
		return 2;
	}
	procs = atoi(argv[2]);
	secs = atof(argv[3]);
	if (argc > 4)
		files = atoi(argv[4]);
	if (procs < 1 || secs <= 0 || files < 0)
		return 2;
	for (i = 0; i < files; i++) {
		snprintf(name, sizeof(name), "%s/file.%d", argv[1], i);
		fd = open(name, O_CREAT | O_WRONLY, 0644);
		if (fd < 0) {
			perror(name);
			return 1;
		}
		close(fd);
	}
	sync();
	c = mmap(NULL, procs * sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED || pipe(go))
		return 1;
	memset(c, 0, procs * sizeof(*c));
	for (i = 0; i < procs; i++) {
		pid_t pid = fork();
		char b;

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			close(go[1]);
			/* Start together: wait until the parent closes the pipe. */
			if (read(go[0], &b, 1) < 0)
				exit(1);
			worker(argv[1], i, now() + secs, &c[i]);
		}
	}
	close(go[0]);
	start = now();
	close(go[1]);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	end = now();
	for (i = 0; i < procs; i++) {
		total.lookups += c[i].lookups;
		total.readdirs += c[i].readdirs;
	}
	printf("lookups %lu readdirs %lu seconds %.3f ops_per_sec %.1f\n",
	       total.lookups, total.readdirs, end - start,
	       (total.lookups + total.readdirs) / (end - start));
	return bad;
}
