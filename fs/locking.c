// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs tree locks: a lock per strategy in every extent buffer, the
 * strategy of the mount (switchable under load: twig_lock_switch()), and
 * per-CPU statistics of what the locks did.
 *
 * Lock order
 * ==========
 *
 * 1. Transaction join/commit (transaction.c) is the only filesystem-wide
 *    lock around tree operations.  A commit waits for every handle to end,
 *    so no tree lock is ever held across a commit, and a task holding a tree
 *    lock never waits for a commit (it holds a handle, and the commit waits
 *    for it instead).
 *
 * 2. fs->root_lock (a spinlock) serializes only updates of the fs->root
 *    pointer, and only the holder of the root's write lock makes them.  It
 *    is never held while taking a tree lock.  Searches take no shared lock
 *    to find the root: a reference under RCU (ebs are freed after a grace
 *    period), then the node's lock, then a check that the node is still
 *    the root (retrying if not).
 *
 * 2a. fs->lock_gate (a percpu_rw_semaphore) is read-held by a path from
 *    before its first tree lock to after its last (twig_path_enter() in
 *    twig_search_slot(), twig_path_leave() in twig_release_path()), at
 *    most once per task; twig_lock_switch() write-holds it, holding no
 *    tree lock and no handle, to change the strategy.
 *
 * 3. Tree locks are taken top-down: a parent before its child.  A task never
 *    waits for a lock above one it holds; to go up (next leaf, retries) it
 *    releases its path and searches again from the root.
 *
 * 4. Within one level, left to right.  Siblings are only taken while the
 *    common parent is write-locked; then the lock on either side may be
 *    waited for: any other holder of that sibling reached it through the
 *    parent and has released the parent (lowest unlock), so it only ever
 *    waits for locks below the sibling and cannot be waiting for us.
 *
 * 5. New blocks (a CoW copy, the new half of a split, a new root) are locked
 *    before anyone else can reach them; they never contend.
 *
 * Lockdep
 * =======
 *
 * Every extent buffer's lock gets a class per tree level, set once when the
 * eb is created (twig_eb_lock_init(), like btrfs_set_buffer_lockdep_class()):
 * level L+1 held while taking level L is then an ordinary nesting of two
 * classes.  Two locks of one level are told apart by the subclasses of enum
 * twig_nesting (COW, SPLIT, SIBLING, ...), as btrfs does with its
 * BTRFS_NESTING_* values.  A new root is a lock of a *higher* level taken
 * while holding the old root: TWIG_NESTING_NEW_ROOT keeps that reverse edge
 * out of the normal top-down classes.
 *
 * Every strategy calls might_lock*() before its trylock fast path, so
 * lockdep validates the order of uncontended acquisitions as well; the
 * annotation compiles away without CONFIG_DEBUG_LOCK_ALLOC.
 *
 * Statistics
 * ==========
 *
 * Per-CPU counters split by level class (root, internal, leaf) and mode.
 * The uncontended path costs one trylock and one per-CPU increment; clocks
 * are read only when the first try fails.  "Slept" means the task did a
 * voluntary context switch while waiting (its nvcsw moved); a contended
 * acquisition that did not sleep counts as "spun": in the trylock loop, or
 * in the kernel mutex's or rwsem's optimistic spinning.
 */
#include <linux/percpu-rwsem.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>
#include <kunit/visibility.h>

#include "locking.h"

/* ---- lock=mutex: one struct mutex per eb, spinning on it a while ---- */

static struct lock_class_key twig_mutex_keys[TWIG_MAX_LEVEL];
static struct lock_class_key twig_rwsem_keys[TWIG_MAX_LEVEL];

static const char * const twig_level_names[TWIG_MAX_LEVEL] = {
	"twig-level-0", "twig-level-1", "twig-level-2", "twig-level-3",
	"twig-level-4", "twig-level-5", "twig-level-6", "twig-level-7",
};

static void twig_mutex_init(struct twig_eb *eb)
{
	mutex_init(&eb->lock.mutex);
	lockdep_set_class_and_name(&eb->lock.mutex,
				   &twig_mutex_keys[eb->level],
				   twig_level_names[eb->level]);
}

static bool twig_mutex_trylock(struct twig_eb *eb, bool write, int subclass)
{
	might_lock_nested(&eb->lock.mutex, subclass);
	return mutex_trylock(&eb->lock.mutex);
}

/*
 * btrfs_tree_lock() of 2009: the mutex was too eager to sleep for short
 * btree critical sections, so btrfs spun on trylock 512 times before
 * giving in (lock=spin512 is lock=mutex with spin=512).  The loop's length
 * is read once per contended acquisition, so it can change under load
 * (sysfs "spin", what the switchback benchmark flips every second): a
 * waiter that began under one value finishes its loop with it and then
 * sleeps in mutex_lock() like every other waiter, whatever the value is
 * by then.  Both paths take the same struct mutex, so a switch never
 * leaves two kinds of holder.
 */
static void twig_mutex_lock(struct twig_eb *eb, bool write, int subclass)
{
	unsigned int rounds = READ_ONCE(eb->fs->spin_rounds);
	unsigned int i;

	for (i = 0; i < rounds; i++) {
		cpu_relax();
		if (mutex_trylock(&eb->lock.mutex))
			return;
	}
	mutex_lock_nested(&eb->lock.mutex, subclass);
}

static void twig_mutex_unlock(struct twig_eb *eb, bool write)
{
	mutex_unlock(&eb->lock.mutex);
}

static bool twig_mutex_is_locked(struct twig_eb *eb)
{
	return mutex_is_locked(&eb->lock.mutex);
}

static const struct twig_lock_ops twig_mutex_ops = {
	.name = "mutex",
	.spin_loop = true,
	.trylock = twig_mutex_trylock,
	.lock = twig_mutex_lock,
	.unlock = twig_mutex_unlock,
	.is_locked = twig_mutex_is_locked,
};

/* ---- lock=rwsem: shared for read-only searches (btrfs since 5.12) ---- */

static void twig_rwsem_init(struct twig_eb *eb)
{
	init_rwsem(&eb->lock.rwsem);
	lockdep_set_class_and_name(&eb->lock.rwsem,
				   &twig_rwsem_keys[eb->level],
				   twig_level_names[eb->level]);
}

static bool twig_rwsem_trylock(struct twig_eb *eb, bool write, int subclass)
{
	if (write) {
		might_lock_nested(&eb->lock.rwsem, subclass);
		return down_write_trylock(&eb->lock.rwsem);
	}
	might_lock_read(&eb->lock.rwsem);
	return down_read_trylock(&eb->lock.rwsem);
}

static void twig_rwsem_lock(struct twig_eb *eb, bool write, int subclass)
{
	if (write)
		down_write_nested(&eb->lock.rwsem, subclass);
	else
		down_read_nested(&eb->lock.rwsem, subclass);
}

static void twig_rwsem_unlock(struct twig_eb *eb, bool write)
{
	if (write)
		up_write(&eb->lock.rwsem);
	else
		up_read(&eb->lock.rwsem);
}

static bool twig_rwsem_is_locked(struct twig_eb *eb)
{
	return rwsem_is_locked(&eb->lock.rwsem);
}

static const struct twig_lock_ops twig_rwsem_ops = {
	.name = "rwsem",
	.trylock = twig_rwsem_trylock,
	.lock = twig_rwsem_lock,
	.unlock = twig_rwsem_unlock,
	.is_locked = twig_rwsem_is_locked,
};

static const struct twig_lock_ops *const twig_lock_strategies[] = {
	&twig_mutex_ops, &twig_rwsem_ops,
};

const struct twig_lock_ops *twig_lock_strategy_get(const char *name)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(twig_lock_strategies); i++)
		if (!strcmp(twig_lock_strategies[i]->name, name))
			return twig_lock_strategies[i];
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(twig_lock_strategy_get);

/*
 * Both locks, each with its per-level class: after a switch the eb is
 * locked through the other one, with lockdep classes as right as if the
 * mount had started with that strategy.
 */
void twig_eb_lock_init(struct twig_eb *eb)
{
	twig_mutex_init(eb);
	twig_rwsem_init(eb);
}

/*
 * Change the mount's strategy under load.  percpu_down_write() blocks new
 * paths at their entry (twig_path_enter()) and waits for those holding the
 * gate to be released; then no eb is locked and no task is about to lock
 * one, so every later holder of a node agrees on the new lock.  The read
 * side is a per-CPU increment, as cheap as the statistics' own; the write
 * side first waits for an RCU grace period (rcu_sync), during which paths
 * still enter and run.
 *
 * Every call drains, even to the strategy in use: the switchback benchmark
 * writes every label's strategy at every window boundary, so each window
 * starts after the same kind of pause.  A strategy without the trylock
 * loop has spin= set to 0 (spin>0 means lock=mutex, as at mount); a switch
 * to lock=mutex keeps the current spin= (0 after rwsem).
 */
void twig_lock_switch(struct twig_fs_info *fs,
		      const struct twig_lock_ops *ops)
{
	u64 start, drain;

	mutex_lock(&fs->lock_switch_mutex);
	start = ktime_get_ns();
	percpu_down_write(&fs->lock_gate);
	drain = ktime_get_ns() - start;
	WRITE_ONCE(fs->lock_ops, ops);
	if (!ops->spin_loop)
		WRITE_ONCE(fs->spin_rounds, 0);
	percpu_up_write(&fs->lock_gate);
	fs->lock_switches++;
	fs->lock_drain_ns += drain;
	fs->lock_drain_max_ns = max(fs->lock_drain_max_ns, drain);
	mutex_unlock(&fs->lock_switch_mutex);
}
EXPORT_SYMBOL_IF_KUNIT(twig_lock_switch);

/* sysfs lock_switches: "switches drain_ns max_drain_ns", one line. */
ssize_t twig_lock_switches_show(struct twig_fs_info *fs, char *buf)
{
	ssize_t len;

	mutex_lock(&fs->lock_switch_mutex);
	len = sysfs_emit(buf, "%llu %llu %llu\n", fs->lock_switches,
			 fs->lock_drain_ns, fs->lock_drain_max_ns);
	mutex_unlock(&fs->lock_switch_mutex);
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(twig_lock_switches_show);

/* ---- dispatch and statistics ---- */

static enum twig_lock_class twig_lock_class(struct twig_eb *eb)
{
	if (eb->level == READ_ONCE(eb->fs->root_level))
		return TWIG_LC_ROOT;
	return eb->level ? TWIG_LC_INTERNAL : TWIG_LC_LEAF;
}

static struct twig_lock_stat *twig_stat(struct twig_eb *eb, bool write)
{
	struct twig_lock_stats *stats = this_cpu_ptr(eb->fs->lock_stats);

	return &stats->s[twig_lock_class(eb)][write];
}

/*
 * The contended path: time it, tell sleeping from spinning, account it.
 * Preemption stays enabled while waiting; the counters are updated with
 * preemption off afterwards, so a migration only moves which CPU counts it.
 * A waiter that slept may wake on another CPU, and local_clock() is only
 * monotonic per CPU: two CPUs' readings can make a negative wait, which
 * as a u64 was a max_wait_ns of ~2^63.  ktime_get_ns() is monotonic across
 * CPUs and costs nothing that matters next to a contended acquisition.
 */
static void twig_lock_contended(struct twig_eb *eb, bool write, int subclass)
{
	unsigned long nvcsw = current->nvcsw;
	struct twig_lock_stat *st;
	u64 start = ktime_get_ns();
	u64 wait;

	eb->fs->lock_ops->lock(eb, write, subclass);
	wait = ktime_get_ns() - start;

	preempt_disable();
	st = twig_stat(eb, write);
	st->acquired++;
	st->contended++;
	if (current->nvcsw != nvcsw)
		st->slept++;
	else
		st->spun++;
	st->wait_ns += wait;
	if (wait > st->max_wait_ns)
		st->max_wait_ns = wait;
	preempt_enable();
}

static void twig_lock_rw(struct twig_eb *eb, bool write, int subclass)
{
	if (likely(eb->fs->lock_ops->trylock(eb, write, subclass))) {
		preempt_disable();
		twig_stat(eb, write)->acquired++;
		preempt_enable();
		return;
	}
	twig_lock_contended(eb, write, subclass);
}

void twig_tree_lock_nested(struct twig_eb *eb, enum twig_nesting nest)
{
	twig_lock_rw(eb, true, nest);
}

void twig_tree_read_lock(struct twig_eb *eb)
{
	twig_lock_rw(eb, false, TWIG_NESTING_NORMAL);
}

void twig_tree_unlock(struct twig_eb *eb)
{
	eb->fs->lock_ops->unlock(eb, true);
}

void twig_tree_read_unlock(struct twig_eb *eb)
{
	eb->fs->lock_ops->unlock(eb, false);
}

int twig_lock_stats_alloc(struct twig_fs_info *fs)
{
	int ret;

	fs->lock_stats = alloc_percpu(struct twig_lock_stats);
	if (!fs->lock_stats)
		return -ENOMEM;
	ret = percpu_init_rwsem(&fs->lock_gate);
	if (ret) {
		free_percpu(fs->lock_stats);
		fs->lock_stats = NULL;
		return ret;
	}
	mutex_init(&fs->lock_switch_mutex);
	fs->lock_switches = 0;
	fs->lock_drain_ns = 0;
	fs->lock_drain_max_ns = 0;
	return 0;
}

void twig_lock_stats_free(struct twig_fs_info *fs)
{
	percpu_free_rwsem(&fs->lock_gate);
	free_percpu(fs->lock_stats);
	fs->lock_stats = NULL;
}

static void twig_lock_stats_sum(struct twig_fs_info *fs,
				struct twig_lock_stats *sum)
{
	int cpu, c, m;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct twig_lock_stats *pc = per_cpu_ptr(fs->lock_stats, cpu);

		for (c = 0; c < TWIG_LC_NR; c++) {
			for (m = 0; m < TWIG_LM_NR; m++) {
				struct twig_lock_stat *d = &sum->s[c][m];
				struct twig_lock_stat *s = &pc->s[c][m];

				d->acquired += READ_ONCE(s->acquired);
				d->contended += READ_ONCE(s->contended);
				d->spun += READ_ONCE(s->spun);
				d->slept += READ_ONCE(s->slept);
				d->wait_ns += READ_ONCE(s->wait_ns);
				d->max_wait_ns = max(d->max_wait_ns,
						     READ_ONCE(s->max_wait_ns));
			}
		}
	}
}

static const char * const twig_class_names[TWIG_LC_NR] = {
	"root", "internal", "leaf",
};

static const char * const twig_mode_names[TWIG_LM_NR] = { "read", "write" };

/*
 * One table for the whole mount: a sysfs page, one row per (class, mode),
 * fixed column order so scripts can parse it without a schema.  Counters
 * are summed without stopping the writers: a row may be a few events
 * behind, never torn beyond that.
 */
ssize_t twig_lock_stats_show(struct twig_fs_info *fs, char *buf)
{
	struct twig_lock_stats *sum;
	int c, m, len;

	sum = kmalloc(sizeof(*sum), GFP_KERNEL);
	if (!sum)
		return -ENOMEM;
	twig_lock_stats_sum(fs, sum);
	len = sysfs_emit(buf, "strategy %s\n", fs->lock_ops->name);
	len += sysfs_emit_at(buf, len,
			     "class mode acquired contended spun slept wait_ns max_wait_ns\n");
	for (c = 0; c < TWIG_LC_NR; c++) {
		for (m = 0; m < TWIG_LM_NR; m++) {
			struct twig_lock_stat *s = &sum->s[c][m];

			len += sysfs_emit_at(buf, len,
					     "%s %s %llu %llu %llu %llu %llu %llu\n",
					     twig_class_names[c],
					     twig_mode_names[m], s->acquired,
					     s->contended, s->spun, s->slept,
					     s->wait_ns, s->max_wait_ns);
		}
	}
	kfree(sum);
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(twig_lock_stats_show);

/* Racy against concurrent increments by design: reset between runs. */
void twig_lock_stats_reset(struct twig_fs_info *fs)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(fs->lock_stats, cpu), 0,
		       sizeof(struct twig_lock_stats));
	mutex_lock(&fs->lock_switch_mutex);
	fs->lock_switches = 0;
	fs->lock_drain_ns = 0;
	fs->lock_drain_max_ns = 0;
	mutex_unlock(&fs->lock_switch_mutex);
}
