// SPDX-License-Identifier: GPL-2.0
/*
 * twig-switch: the guest controller of a switchback run.
 *
 *   twig-switch -f CONFIGS -c COUNTER -o LOG [-w WINDOW_MS] [-i SAMPLE_MS]
 *               [-t SECONDS] [-s SEED] [-b BASELINE]
 *
 * While one long workload runs, switch between configurations every
 * WINDOW_MS in randomized blocks (each block is every configuration once,
 * in an order drawn from SEED), and sample a cumulative counter (the first
 * number in the file COUNTER, e.g. /sys/fs/twigfs/vda/ops) every
 * SAMPLE_MS from each window's start.  CONFIGS has one line per
 * configuration: "<label> <path>=<value> ...": switching to it writes each
 * value to its path, in order.  A copy of the baseline under another label
 * (e.g. "mutex-nospin#B") is how a run measures its own floor.
 *
 * LOG (read by workloads/switchback.py), times in microseconds since start:
 *   # twig-switch 1
 *   param <name> <value>          window_ms sample_ms seed baseline counter
 *   config <label> <path>=<value> ...
 *   param realtime_us|monotonic_us <us>   the clocks at time 0 (below)
 *   S <t_us> <count>              a sample, taken just before every W too
 *   W <t_us> <block> <label>      a window begins, its settings written
 *   D <t_us> <us>                 right after each W: how long writing
 *                                 that window's settings took (a write of
 *                                 twigfs's sysfs "lock" drains the tree
 *                                 operations in flight: the pause between
 *                                 the sample before W and W)
 *   E <t_us> done|stopped         the end (after SECONDS, or SIGTERM),
 *                                 after a last sample
 *   X <t_us> <what> <path>: <why> a setting or the counter failed
 *
 * param monotonic_us is CLOCK_MONOTONIC at the log's time 0 and
 * param realtime_us CLOCK_REALTIME at that instant (the mean of a reading
 * either side of it), both in microseconds: a wall-clock time T (e.g. a
 * host's sample) is at T - realtime_us in the log's times.  The guest's
 * wall clock is only as good as its start: set from the host's RTC at
 * boot (whole seconds: up to 1 s off) and drifting from the host's after
 * that as the guest's clock source does.
 *
 * SIGTERM ends the run at once (the last window cut short, its block
 * incomplete).  Exits 0 after SECONDS or SIGTERM; 1 when a setting cannot be written or the counter
 * cannot be read (the log says which); 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONFIGS	16
#define MAX_SETTINGS	8

struct setting {
	char *path;
	char *value;
};

struct config {
	char *label;
	struct setting set[MAX_SETTINGS];
	int nset;
};

static struct config configs[MAX_CONFIGS];
static int nconfigs;
static FILE *logf;
static int64_t t0;
static volatile sig_atomic_t stop;	/* SIGTERM: the workload ended */

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t clock_us(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t now_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

static void sleep_until_us(int64_t t)
{
	struct timespec ts = { .tv_sec = t / 1000000,
			       .tv_nsec = (t % 1000000) * 1000 };

	while (!stop &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void die(const char *what, const char *path)
{
	fprintf(logf, "X %" PRId64 " %s %s: %s\n", now_us() - t0, what, path,
		strerror(errno));
	fclose(logf);
	fprintf(stderr, "twig-switch: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static void read_configs(const char *file)
{
	FILE *f = fopen(file, "r");
	char line[1024];

	if (!f) {
		perror(file);
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		struct config *c = &configs[nconfigs];
		char *tok, *save;

		tok = strtok_r(line, " \t\n", &save);
		if (!tok || *tok == '#')
			continue;
		if (nconfigs == MAX_CONFIGS) {
			fprintf(stderr, "twig-switch: more than %d configurations\n",
				MAX_CONFIGS);
			exit(2);
		}
		c->label = strdup(tok);
		while ((tok = strtok_r(NULL, " \t\n", &save))) {
			char *eq = strchr(tok, '=');

			if (!eq || eq == tok || c->nset == MAX_SETTINGS) {
				fprintf(stderr, "twig-switch: %s: bad setting '%s'\n",
					c->label, tok);
				exit(2);
			}
			*eq = '\0';
			c->set[c->nset].path = strdup(tok);
			c->set[c->nset].value = strdup(eq + 1);
			c->nset++;
		}
		nconfigs++;
	}
	fclose(f);
	if (nconfigs < 2) {
		fprintf(stderr, "twig-switch: %s: need at least two configurations\n",
			file);
		exit(2);
	}
}

static void apply(const struct config *c)
{
	int i;

	for (i = 0; i < c->nset; i++) {
		int fd = open(c->set[i].path, O_WRONLY);
		size_t len = strlen(c->set[i].value);

		if (fd < 0)
			die("open", c->set[i].path);
		if (write(fd, c->set[i].value, len) != (ssize_t)len)
			die("write", c->set[i].path);
		close(fd);
	}
}

/* The first decimal number in the counter file: "total N" or just "N". */
static uint64_t read_counter(int fd, const char *path)
{
	char buf[256], *p;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		die("read", path);
	buf[n] = '\0';
	for (p = buf; *p && (*p < '0' || *p > '9'); p++)
		;
	if (!*p) {
		errno = EINVAL;
		die("no number in", path);
	}
	return strtoull(p, NULL, 10);
}

static void sample(int fd, const char *path)
{
	uint64_t v = read_counter(fd, path);

	fprintf(logf, "S %" PRId64 " %" PRIu64 "\n", now_us() - t0, v);
}

/* xorshift64*: a reproducible order from -s, whatever the libc */
static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 2685821657736338717ULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: twig-switch -f configs -c counter -o log [-w window_ms] [-i sample_ms] [-t seconds] [-s seed] [-b baseline]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *cfile = NULL, *counter = NULL, *out = NULL, *base = NULL;
	long window = 2000, every = 100, secs = 60;
	unsigned long long seed = 1;
	int order[MAX_CONFIGS];
	int64_t end, ws, rt0, rt1;
	int opt, fd, i, block = 0;

	while ((opt = getopt(argc, argv, "f:c:o:w:i:t:s:b:")) != -1) {
		switch (opt) {
		case 'f': cfile = optarg; break;
		case 'c': counter = optarg; break;
		case 'o': out = optarg; break;
		case 'w': window = atol(optarg); break;
		case 'i': every = atol(optarg); break;
		case 't': secs = atol(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		case 'b': base = optarg; break;
		default: usage();
		}
	}
	if (!cfile || !counter || !out || optind != argc || every <= 0 ||
	    window < every || window % every || secs <= 0)
		usage();
	read_configs(cfile);
	fd = open(counter, O_RDONLY);
	if (fd < 0) {
		perror(counter);
		return 1;
	}
	logf = fopen(out, "w");
	if (!logf) {
		perror(out);
		return 1;
	}
	setvbuf(logf, NULL, _IOLBF, 0);
	signal(SIGTERM, on_term);
	rnd_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	fprintf(logf, "# twig-switch 1\nparam window_ms %ld\nparam sample_ms %ld\n"
		"param seed %llu\nparam baseline %s\nparam counter %s\n",
		window, every, seed, base ? base : configs[0].label, counter);
	for (i = 0; i < nconfigs; i++) {
		int j;

		fprintf(logf, "config %s", configs[i].label);
		for (j = 0; j < configs[i].nset; j++)
			fprintf(logf, " %s=%s", configs[i].set[j].path,
				configs[i].set[j].value);
		fputc('\n', logf);
	}
	/* after the header: each line of it is a write to the results share */
	rt0 = clock_us(CLOCK_REALTIME);
	t0 = now_us();
	rt1 = clock_us(CLOCK_REALTIME);
	fprintf(logf, "param realtime_us %" PRId64 "\nparam monotonic_us %" PRId64 "\n",
		rt0 + (rt1 - rt0) / 2, t0);
	end = t0 + (int64_t)secs * 1000000;
	for (;;) {
		block++;
		for (i = 0; i < nconfigs; i++)
			order[i] = i;
		for (i = nconfigs - 1; i > 0; i--) {
			int j = rnd() % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < nconfigs; i++) {
			int64_t t;

			if (stop || now_us() + window * 1000 > end)
				goto done;
			sample(fd, counter);
			t = now_us();
			apply(&configs[order[i]]);
			ws = now_us();
			fprintf(logf, "W %" PRId64 " %d %s\n", ws - t0, block,
				configs[order[i]].label);
			fprintf(logf, "D %" PRId64 " %" PRId64 "\n", ws - t0, ws - t);
			for (t = ws + every * 1000;
			     t < ws + window * 1000 && !stop; t += every * 1000) {
				sleep_until_us(t);
				if (!stop)
					sample(fd, counter);
			}
			sleep_until_us(ws + window * 1000);
		}
	}
done:
	sample(fd, counter);
	fprintf(logf, "E %" PRId64 " %s\n", now_us() - t0,
		stop ? "stopped" : "done");
	fclose(logf);
	return 0;
}
