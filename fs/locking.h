/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twigfs tree locks: the one small API every tree-node lock goes through.
 * The strategy behind it is chosen per mount (lock=); the lock order and the
 * lockdep rules are written down at the top of locking.c.
 */
#ifndef _TWIGFS_LOCKING_H
#define _TWIGFS_LOCKING_H

#include "twigfs.h"

/*
 * Lockdep subclasses for taking a second lock of the same level (see the
 * lock order in locking.c).  Plain descents use TWIG_NESTING_NORMAL.
 */
enum twig_nesting {
	TWIG_NESTING_NORMAL,
	TWIG_NESTING_COW,		/* the new copy of a node we hold */
	TWIG_NESTING_SPLIT,		/* the new right half of a split */
	TWIG_NESTING_NEW_ROOT,		/* a new root above the one we hold */
	TWIG_NESTING_SIBLING,		/* a sibling, under the held parent */
	TWIG_NESTING_SIBLING_COW,	/* the new copy of that sibling */
	TWIG_NESTING_MAX,
};

/*
 * A lock strategy: a few dozen lines each, in locking.c.  @trylock and
 * @lock carry the lockdep annotation themselves; the statistics are kept by
 * the callers in locking.c, never by a strategy.  Every eb carries every
 * strategy's lock, initialized by twig_eb_lock_init(), so the mount can
 * switch between them (twig_lock_switch()).
 */
struct twig_lock_ops {
	const char *name;
	bool spin_loop;		/* honours fs->spin_rounds */
	bool (*trylock)(struct twig_eb *eb, bool write, int subclass);
	void (*lock)(struct twig_eb *eb, bool write, int subclass);
	void (*unlock)(struct twig_eb *eb, bool write);
	bool (*is_locked)(struct twig_eb *eb);
};

/*
 * lock=spin512: lock=mutex with the 2009 loop.  The loop runs with the
 * parents' locks held and, as in 2009, never looks at need_resched(), so
 * spin= stops at twice that loop: room to sweep around 512 without letting
 * a waiter keep its CPU and its parents for milliseconds.
 */
#define TWIG_SPIN512_ROUNDS	512
#define TWIG_MAX_SPIN_ROUNDS	1024U

/* NULL for an unknown name: the mount then fails with EINVAL. */
const struct twig_lock_ops *twig_lock_strategy_get(const char *name);

void twig_eb_lock_init(struct twig_eb *eb);

void twig_lock_switch(struct twig_fs_info *fs,
		      const struct twig_lock_ops *ops);
ssize_t twig_lock_switches_show(struct twig_fs_info *fs, char *buf);

/*
 * A path read-holds the mount's lock gate from its first tree lock to its
 * release (ctree.c), so a switch of strategy never finds a lock held.
 */
static inline void twig_path_enter(struct twig_fs_info *fs,
				   struct twig_path *p)
{
	if (!p->gate) {
		percpu_down_read(&fs->lock_gate);
		p->gate = &fs->lock_gate;
	}
}

static inline void twig_path_leave(struct twig_path *p)
{
	if (p->gate) {
		percpu_up_read(p->gate);
		p->gate = NULL;
	}
}

void twig_tree_lock_nested(struct twig_eb *eb, enum twig_nesting nest);
void twig_tree_read_lock(struct twig_eb *eb);
void twig_tree_unlock(struct twig_eb *eb);
void twig_tree_read_unlock(struct twig_eb *eb);

static inline void twig_tree_lock(struct twig_eb *eb)
{
	twig_tree_lock_nested(eb, TWIG_NESTING_NORMAL);
}

static inline void twig_tree_unlock_rw(struct twig_eb *eb, int rw)
{
	if (rw == TWIG_WRITE_LOCK)
		twig_tree_unlock(eb);
	else if (rw == TWIG_READ_LOCK)
		twig_tree_read_unlock(eb);
}

static inline void twig_assert_tree_locked(struct twig_eb *eb)
{
	WARN_ON_ONCE(IS_ENABLED(CONFIG_DEBUG_LOCK_ALLOC) &&
		     !eb->fs->lock_ops->is_locked(eb));
}

/*
 * Per-mount lock state (the gate, the statistics): set up at mount, the
 * statistics shown and reset from sysfs.
 */
int twig_lock_stats_alloc(struct twig_fs_info *fs);
void twig_lock_stats_free(struct twig_fs_info *fs);
ssize_t twig_lock_stats_show(struct twig_fs_info *fs, char *buf);
void twig_lock_stats_reset(struct twig_fs_info *fs);

#endif /* _TWIGFS_LOCKING_H */
