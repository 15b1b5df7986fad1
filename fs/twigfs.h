/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twigfs core: the in-memory structures shared by every file of the
 * module, and the functions of the core.
 *
 * Owners: the core (fault-inject.c, locking.c, tree-checker.c,
 * extent_io.c, alloc.c, ctree.c, dir-item.c, inode-item.c, transaction.c,
 * tree-log.c, core.c) defines everything here and calls nothing of the
 * VFS side; the VFS side (super.c, inode.c, orphan.c, namei.c, dir.c,
 * xattr.c, acl.c, space.c, file.c, file-item.c, pagecache.c, falloc.c,
 * direct.c; vfs.h) only uses it, except for the section of struct
 * twig_fs_info marked "VFS side", which super.c owns.  The layers inside
 * the core are listed in DESIGN.md ("Files").
 */
#ifndef _TWIGFS_H
#define _TWIGFS_H

#include <linux/blk_types.h>
#include <linux/crc32c.h>
#include <linux/fs.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/percpu-rwsem.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/shrinker.h>
#include "compat.h"
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "format.h"

/* Keys in CPU byte order; compared (objectid, type, offset). */
struct twig_key {
	u64 objectid;
	u8 type;
	u64 offset;
};

/* Extent buffer state bits (twig_eb.bflags). */
enum {
	TWIG_EB_UPTODATE,	/* data holds the block's contents */
	TWIG_EB_READING,	/* a read is in flight; wait_on_bit() for it */
	TWIG_EB_DIRTY,		/* on fs->dirty_list, written at commit */
	TWIG_EB_STALE,		/* freed or replaced: no longer in the cache */
};

/*
 * An extent buffer: the in-memory copy of one tree block.  Found in
 * fs->eb_cache by bytenr, reference counted (the cache holds one reference,
 * the dirty list another), freed after an RCU grace period because lookups
 * run under rcu_read_lock().  @data is nodesize contiguous bytes (kmalloc,
 * hence also physically contiguous for bio I/O).  The per-node lock is the
 * one the mount's strategy uses; all tree locking goes through locking.h.
 */
struct twig_eb {
	u64 start;			/* bytenr */
	u32 len;			/* nodesize */
	u8 level;			/* fixed for the life of the eb */
	refcount_t refs;
	unsigned long bflags;
	struct twig_fs_info *fs;
	void *data;
	struct list_head dirty_list;	/* fs->dirty_list, under dirty_lock */
	struct rcu_head rcu;
	/*
	 * Both strategies' locks, so the mount's strategy can change under
	 * load (twig_lock_switch()): 32 bytes more than their union (the
	 * mutex; 120 -> 152 bytes, kmalloc-128 -> kmalloc-192 on x86-64).
	 */
	struct {
		struct mutex mutex;		/* lock=mutex */
		struct rw_semaphore rwsem;	/* lock=rwsem */
	} lock;
};

/* Per-level-class, per-mode lock statistics; see locking.c. */
enum twig_lock_class {
	TWIG_LC_ROOT,
	TWIG_LC_INTERNAL,
	TWIG_LC_LEAF,
	TWIG_LC_NR,
};

enum twig_lock_mode {
	TWIG_LM_READ,
	TWIG_LM_WRITE,
	TWIG_LM_NR,
};

struct twig_lock_stat {
	u64 acquired;		/* every acquisition */
	u64 contended;		/* the first try failed */
	u64 spun;		/* contended, acquired without sleeping */
	u64 slept;		/* contended, the task slept */
	u64 wait_ns;		/* total wait of contended acquisitions */
	u64 max_wait_ns;
};

struct twig_lock_stats {
	struct twig_lock_stat s[TWIG_LC_NR][TWIG_LM_NR];
};

struct twig_lock_ops;
struct twig_op_stats;

/*
 * Where the time of the transactions goes, per mount: fs->commit_stats[],
 * shown by /sys/fs/twigfs/<dev>/commit_stats in this order (super.c names
 * them).  Times are nanoseconds, summed over every event.
 */
enum twig_commit_stat {
	TWIG_CS_COMMITS,		/* commits of a running transaction */
	TWIG_CS_COMMIT_NS,		/* from blocking joiners to on disk */
	TWIG_CS_COMMIT_MAX_NS,
	TWIG_CS_FSYNCS,			/* fsync(2)/fdatasync(2) calls */
	TWIG_CS_LOG_SYNCS,		/* fsyncs done through a log tree */
	TWIG_CS_LOG_FALLBACKS,		/* fsyncs the log could not express */
	TWIG_CS_HANDLES,		/* transaction handles started */
	TWIG_CS_JOIN_WAIT_NS,		/* handles waiting for a commit to end */
	TWIG_CS_HANDLE_IO_WAIT_NS,	/* a handle open across a bio wait */
	TWIG_CS_COMMIT_BLOCKED_NS,	/* from blocking joiners to letting them in */
	TWIG_CS_UNLOCKED_READS,		/* tree blocks searches read unlocked */
	TWIG_CS_NR,
};

/* fs->flags */
enum {
	TWIG_FS_MEMONLY,	/* no block device: fs->memdev (KUnit) */
	TWIG_FS_ERROR,		/* aborted (transaction.c): never commit again */
	TWIG_FS_RDONLY,		/* mounted read-only: no transactions */
	TWIG_FS_DROP_NEGATIVE,	/* sysfs negative_dentries 0 (super.c) */
	/*
	 * KUnit tests of the tree core, whose items hold test patterns: the
	 * tree checker checks only the block layout (with TWIG_FS_MEMONLY).
	 */
	TWIG_FS_OPAQUE_ITEMS,
};

struct twig_fs_info {
	struct super_block *sb;
	struct block_device *bdev;	/* NULL with TWIG_FS_MEMONLY */
	unsigned long flags;
	struct twig_super_block *super_copy;	/* last committed super */
	u32 nodesize;
	u32 sectorsize;
	u64 total_bytes;
	u8 fsid[16];

	/*
	 * The tree root.  @root is changed only by a task holding the old
	 * root's write lock, under @root_lock; searches take a reference under
	 * RCU, lock the node, and recheck that it is still the root.
	 */
	spinlock_t root_lock;
	struct twig_eb *root;
	u8 root_level;

	/*
	 * Tree locks: the mount's strategy and its per-CPU statistics.
	 * @spin_rounds is lock=mutex's trylock loop before sleeping (sysfs
	 * "spin"), read once per contended acquisition (locking.c).
	 * @lock_gate is read-held by every path that holds or takes tree
	 * locks; twig_lock_switch() write-holds it to change @lock_ops, under
	 * @lock_switch_mutex, which also orders writes of @spin_rounds.
	 */
	const struct twig_lock_ops *lock_ops;
	struct twig_lock_stats __percpu *lock_stats;
	unsigned int spin_rounds;
	struct percpu_rw_semaphore lock_gate;
	struct mutex lock_switch_mutex;	/* switches, spin_rounds writes */
	u64 lock_switches;		/* drains, under lock_switch_mutex */
	u64 lock_drain_ns;		/* their total */
	u64 lock_drain_max_ns;

	/* Extent buffer cache, indexed by bytenr >> TWIG_SECTOR_SHIFT. */
	struct xarray eb_cache;
	atomic_long_t eb_cached;
	struct shrinker *eb_shrinker;
	unsigned long eb_shrink_cursor;	/* where the next scan starts */
	struct xarray memdev;		/* TWIG_FS_MEMONLY: sector -> page */

	/*
	 * Transactions (transaction.c).  @trans_lock protects the state
	 * fields; @commit_mutex serializes commits.
	 */
	struct mutex commit_mutex;
	spinlock_t trans_lock;		/* the six fields below */
	u64 generation;			/* last committed transaction */
	u64 last_transid;		/* newest transid handed out */
	u64 committing_transid;		/* frozen, being written; 0: none */
	u64 running_transid;		/* 0: none running */
	int num_writers;		/* open handles on the running one */
	bool commit_blocked;		/* a commit freezes: joiners wait */
	wait_queue_head_t join_wait;	/* joiners, while commit_blocked */
	wait_queue_head_t writer_wait;	/* the commit, for num_writers == 0 */
	spinlock_t dirty_lock;
	struct list_head dirty_list;	/* dirty ebs of the running trans */
	atomic64_t commit_stats[TWIG_CS_NR];	/* enum twig_commit_stat */

	/* Allocator (alloc.c), under @alloc_lock. */
	spinlock_t alloc_lock;
	/* Little-endian bitmaps, as on disk (bit n%8 of byte n/8). */
	void *alloc_committed;		/* as on disk at the last commit */
	void *alloc_working;		/* with the running trans' changes */
	void *alloc_busy;		/* committed | working: not free */
	void *alloc_written;		/* the copy the commit writes */
	size_t alloc_map_bytes;		/* bytes with bits (csum covers them) */
	size_t alloc_map_longs;		/* longs allocated for each bitmap */
	u64 alloc_nbits;		/* sectors on the device */
	u64 alloc_hint_meta;		/* next sector to try, tree blocks */
	u64 alloc_hint_data;		/* next sector to try, data */
	u64 free_sectors;		/* clear in both bitmaps */
	u64 pinned_sectors;		/* set in committed, clear in working */
	u64 pinned_committing;		/* pinned until the frozen trans is on disk */
	struct list_head data_pending;	/* struct twig_data_alloc.list */
	u64 pending_sectors;		/* their sectors, set in working */
	bool log_pin;			/* the running trans has a log */
	u64 meta_reserved;		/* bytes promised to open handles */
	u64 global_reserve;		/* bytes only deletes and commits use */
	atomic_t inject_alloc_fail;	/* KUnit: fail the Nth allocation */
	atomic_t fail_after;		/* sysfs fail_after: twig_should_fail() */
	atomic_t commit_hold;		/* sysfs commit_hold (transaction.c) */
	wait_queue_head_t commit_hold_wait;

	atomic64_t next_objectid;

	/*
	 * The fsync log of the running transaction (tree-log.c), under
	 * @commit_mutex: its blocks (struct twig_log_blk), newest first.
	 */
	struct list_head log_blocks;
	u64 log_seq;			/* blocks in the chain */

	/* ---- VFS side (super.c owns these fields) ---- */
	/* Completed VFS operations by kind (vfs.h), for sysfs "ops". */
	struct twig_op_stats __percpu *op_stats;
	unsigned int commit_interval;	/* seconds */
	struct delayed_work commit_work;
	struct kobject kobj;		/* /sys/fs/twigfs/<dev>/ */
	struct completion kobj_unregister;

	/* Data reservations (space.c) */
	atomic64_t data_reserved;	/* bytes of dirty data not yet allocated */
};

#define TWIG_SECTOR_SHIFT	12	/* ilog2(TWIG_SECTORSIZE) */

static inline struct twig_fs_info *twig_sb(struct super_block *sb)
{
	return sb->s_fs_info;
}

/* The device's name for messages; "memdev" without one (KUnit). */
static inline const char *twig_fs_id(const struct twig_fs_info *fs)
{
	return fs->sb ? fs->sb->s_id : "memdev";
}

/*
 * Transaction handle: one per caller, joined to the single running
 * transaction.  @transid is its generation.
 */
struct twig_trans {
	struct twig_fs_info *fs;
	u64 transid;
	u64 reserved;		/* bytes of fs->meta_reserved this handle holds */
	bool use_reserve;	/* may dip into fs->global_reserve */
	bool task_marked;	/* current->journal_info points here */
	/*
	 * An item was inserted, deleted or changed: from here an error leaves
	 * the operation half done and must abort (CoW copies and splits
	 * alone leave the same items, so they do not count).
	 */
	bool dirty;
	unsigned int nofs_flags;	/* memalloc_nofs_save() at the start */
};

/*
 * Data sectors allocated outside a transaction for a write in flight, not
 * named by any extent item yet (twig_alloc_data() in alloc.c).  A commit
 * leaves them out of the bitmap it writes until twig_data_alloc_owned()
 * says the transaction holds their extent item.
 */
struct twig_data_alloc {
	struct list_head list;	/* fs->data_pending, under alloc_lock */
	u64 bytenr;
	u64 bytes;		/* whole sectors */
};

/*
 * One block of the fsync log (tree-log.c), on fs->log_blocks under
 * commit_mutex; the commit that makes the log obsolete gives them back
 * (twig_log_release(), transaction.c).
 */
struct twig_log_blk {
	struct twig_data_alloc da;	/* pending: never in a commit */
	struct list_head link;
	void *data;			/* replay: the block's contents */
};

/* ---- commit statistics ---- */

static inline void twig_stat_add(struct twig_fs_info *fs,
				 enum twig_commit_stat s, u64 v)
{
	atomic64_add(v, &fs->commit_stats[s]);
}

/* A commit ended after @ns (under commit_mutex, so max needs no cmpxchg). */
static inline void twig_commit_stats_done(struct twig_fs_info *fs, u64 ns)
{
	twig_stat_add(fs, TWIG_CS_COMMITS, 1);
	twig_stat_add(fs, TWIG_CS_COMMIT_NS, ns);
	if (ns > atomic64_read(&fs->commit_stats[TWIG_CS_COMMIT_MAX_NS]))
		atomic64_set(&fs->commit_stats[TWIG_CS_COMMIT_MAX_NS], ns);
}

/*
 * The task opening a handle points current->journal_info at it, as ext4
 * and btrfs do, so that a bio wait can tell it holds a commit back.  Only
 * the outermost handle does, and only when the field is free: no other
 * filesystem's handle can be open in a task that reaches twigfs I/O (they
 * all keep page faults and fs reclaim out of their handles, as twigfs
 * does), but if one were, its wait would be counted, never dereferenced.
 *
 * Every handle is also a memalloc_nofs_save() scope (twig_start() to
 * twig_end_transaction()), as XFS's transactions are: with journal_info
 * set, reclaim entering a filesystem (ext4's and btrfs's evict paths read
 * journal_info as their own handle, and twigfs's own would join or wait
 * for a commit) must not happen, even from a GFP_KERNEL allocation made
 * inside a handle.
 */
static inline void twig_trans_mark_task(struct twig_trans *trans)
{
	if (!current->journal_info) {
		current->journal_info = trans;
		trans->task_marked = true;
	}
}

static inline void twig_trans_unmark_task(struct twig_trans *trans)
{
	if (trans->task_marked)
		current->journal_info = NULL;
}

/* Around a bio wait: the clock if the task holds a handle, else 0. */
static inline u64 twig_io_wait_start(void)
{
	return current->journal_info ? ktime_get_ns() : 0;
}

static inline void twig_io_wait_end(struct twig_fs_info *fs, u64 start)
{
	if (start)
		twig_stat_add(fs, TWIG_CS_HANDLE_IO_WAIT_NS,
			      ktime_get_ns() - start);
}

/* Path from the root to a leaf; see twig_search_slot() in ctree.c. */
enum {
	TWIG_NO_LOCK,
	TWIG_READ_LOCK,
	TWIG_WRITE_LOCK,
};

struct twig_path {
	struct twig_eb *nodes[TWIG_MAX_LEVEL];
	int slots[TWIG_MAX_LEVEL];
	u8 locks[TWIG_MAX_LEVEL];
	/* fs->lock_gate, read-held from the first lock to the release */
	struct percpu_rw_semaphore *gate;
	/* Read-only searches: smallest key right of the path, for next_leaf. */
	bool have_next_key;
	struct twig_key next_key;
};

/* ---- extent buffer accessors (little-endian on disk) ---- */

static inline struct twig_header *twig_eb_header(const struct twig_eb *eb)
{
	return eb->data;
}

static inline u32 twig_header_nritems(const struct twig_eb *eb)
{
	return le32_to_cpu(twig_eb_header(eb)->nritems);
}

static inline void twig_set_header_nritems(struct twig_eb *eb, u32 nr)
{
	twig_eb_header(eb)->nritems = cpu_to_le32(nr);
}

static inline u8 twig_header_level(const struct twig_eb *eb)
{
	return twig_eb_header(eb)->level;
}

static inline u64 twig_header_generation(const struct twig_eb *eb)
{
	return le64_to_cpu(twig_eb_header(eb)->generation);
}

static inline void twig_disk_to_key(struct twig_key *key,
				    const struct twig_disk_key *disk)
{
	key->objectid = le64_to_cpu(disk->objectid);
	key->type = disk->type;
	key->offset = le64_to_cpu(disk->offset);
}

static inline void twig_key_to_disk(struct twig_disk_key *disk,
				    const struct twig_key *key)
{
	disk->objectid = cpu_to_le64(key->objectid);
	disk->type = key->type;
	disk->offset = cpu_to_le64(key->offset);
}

/* Key order; the tools' twig_key_cmp() (mkfs/twig_lib.c) is the same. */
static inline int twig_key_cmp(const struct twig_key *a,
			       const struct twig_key *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

/* Leaves: item headers after the block header. */
static inline struct twig_item *twig_item_nr(const struct twig_eb *eb,
					     int slot)
{
	return (struct twig_item *)(eb->data + sizeof(struct twig_header)) +
		slot;
}

static inline void twig_item_key(const struct twig_eb *eb, int slot,
				 struct twig_key *key)
{
	twig_disk_to_key(key, &twig_item_nr(eb, slot)->key);
}

static inline u32 twig_item_offset(const struct twig_eb *eb, int slot)
{
	return le32_to_cpu(twig_item_nr(eb, slot)->offset);
}

static inline u32 twig_item_size(const struct twig_eb *eb, int slot)
{
	return le32_to_cpu(twig_item_nr(eb, slot)->size);
}

static inline void *twig_item_ptr(const struct twig_eb *eb, int slot)
{
	return eb->data + twig_item_offset(eb, slot);
}

/* Internal nodes: key pointers after the block header. */
static inline struct twig_key_ptr *twig_node_ptr(const struct twig_eb *eb,
						 int slot)
{
	return (struct twig_key_ptr *)(eb->data +
				       sizeof(struct twig_header)) + slot;
}

static inline void twig_node_key(const struct twig_eb *eb, int slot,
				 struct twig_key *key)
{
	twig_disk_to_key(key, &twig_node_ptr(eb, slot)->key);
}

static inline u64 twig_node_blockptr(const struct twig_eb *eb, int slot)
{
	return le64_to_cpu(twig_node_ptr(eb, slot)->blockptr);
}

static inline u64 twig_node_ptr_generation(const struct twig_eb *eb, int slot)
{
	return le64_to_cpu(twig_node_ptr(eb, slot)->generation);
}

static inline u32 twig_leaf_data_size(const struct twig_fs_info *fs)
{
	return fs->nodesize - sizeof(struct twig_header);
}

static inline u32 twig_max_ptrs(const struct twig_fs_info *fs)
{
	return twig_leaf_data_size(fs) / sizeof(struct twig_key_ptr);
}

/* Largest item data a leaf can hold (one item alone in a leaf). */
static inline u32 twig_max_item_size(const struct twig_fs_info *fs)
{
	return twig_leaf_data_size(fs) - sizeof(struct twig_item);
}

/* ---- checksums and the name hash (format.h) ---- */
static inline u32 twig_csum(const void *data, size_t len)
{
	return ~crc32c(TWIG_CSUM_SEED, data, len);
}

/* The offset of a name's DIR_ITEM and XATTR_ITEM keys. */
static inline u32 twig_name_hash(const char *name, int len)
{
	return crc32c(TWIG_NAME_HASH_SEED, name, len);
}

/* ---- fault-inject.c (sysfs fail_after; any layer may ask) ---- */
bool twig_should_fail(struct twig_fs_info *fs);

/* ---- extent_io.c ---- */
int twig_dev_read(struct twig_fs_info *fs, u64 bytenr, void *buf, size_t len);
int twig_dev_write(struct twig_fs_info *fs, u64 bytenr, const void *buf,
		   size_t len, blk_opf_t flags);
int twig_dev_flush(struct twig_fs_info *fs);
int twig_submit_bio_wait(struct twig_fs_info *fs, struct bio *bio);
int twig_bio_page(struct twig_fs_info *fs, u64 bytenr, struct page *page,
		  blk_opf_t opf);
void twig_memdev_free(struct twig_fs_info *fs);
int twig_eb_cache_init(struct twig_fs_info *fs);
void twig_eb_cache_destroy(struct twig_fs_info *fs);
struct twig_eb *twig_read_eb(struct twig_fs_info *fs, u64 bytenr, int level,
			     u64 parent_transid);
struct twig_eb *twig_get_cached_eb(struct twig_fs_info *fs, u64 bytenr,
				   int level, u64 parent_transid);
int twig_read_eb_unlocked(struct twig_fs_info *fs, u64 bytenr, int level,
			  u64 parent_transid);
struct twig_eb *twig_new_eb(struct twig_fs_info *fs, u64 bytenr, int level);
void twig_eb_get(struct twig_eb *eb);
void twig_eb_put(struct twig_eb *eb);
void twig_eb_forget(struct twig_eb *eb);
void twig_mark_buffer_dirty(struct twig_trans *trans, struct twig_eb *eb);
void twig_eb_mark_dirty(struct twig_eb *eb);
void twig_take_dirty_ebs(struct twig_fs_info *fs, struct list_head *list);
int twig_write_ebs(struct twig_fs_info *fs, struct list_head *list);

/* ---- tree-checker.c ---- */
int twig_tree_check(const struct twig_fs_info *fs, const struct twig_eb *eb,
		    u8 level, u64 parent_transid, bool csum, int *slot);
const char *twig_tree_rule_name(int rule);
int twig_verify_read(struct twig_fs_info *fs, struct twig_eb *eb, u8 level,
		     u64 parent_transid, bool quiet);
int twig_verify_write(struct twig_fs_info *fs, struct twig_eb *eb);
int twig_log_tree_check(const struct twig_fs_info *fs,
			const struct twig_eb *eb, u64 log_gen, bool csum,
			int *slot);
int twig_log_check(struct twig_fs_info *fs, struct twig_eb *eb, u64 log_gen,
		   bool csum);

/* ---- ctree.c ---- */
struct twig_path *twig_alloc_path(void);
void twig_free_path(struct twig_path *path);
void twig_release_path(struct twig_path *path);
int twig_search_slot(struct twig_trans *trans, struct twig_fs_info *fs,
		     const struct twig_key *key, struct twig_path *path,
		     int ins_len, int cow);
int twig_insert_empty_item(struct twig_trans *trans, struct twig_fs_info *fs,
			   struct twig_path *path, const struct twig_key *key,
			   u32 size);
int twig_insert_item(struct twig_trans *trans, struct twig_fs_info *fs,
		     const struct twig_key *key, const void *data, u32 size);
int twig_del_items(struct twig_trans *trans, struct twig_fs_info *fs,
		   struct twig_path *path, int slot, int nr);
int twig_del_item(struct twig_trans *trans, struct twig_fs_info *fs,
		  struct twig_path *path);
int twig_extend_item(struct twig_fs_info *fs, struct twig_path *path,
		     u32 new_size);
void twig_truncate_item(struct twig_fs_info *fs, struct twig_path *path,
			u32 new_size);
int twig_next_leaf(struct twig_fs_info *fs, struct twig_path *path);
/* KUnit only: a racing writer, run where twig_next_leaf() holds no lock */
struct twig_test_hooks {
	void (*next_leaf)(struct twig_fs_info *fs);
};

extern struct twig_test_hooks twig_test_hooks;
int twig_walk_first(struct twig_fs_info *fs, const struct twig_key *key,
		    struct twig_path *path);
int twig_next_item(struct twig_fs_info *fs, struct twig_path *path);
int twig_prev_item(struct twig_fs_info *fs, struct twig_path *path);
u32 twig_leaf_free_space(const struct twig_eb *leaf);
int twig_tree_open(struct twig_fs_info *fs);
int twig_tree_claim(struct twig_fs_info *fs);
void twig_tree_close(struct twig_fs_info *fs);

/* ---- transaction.c ---- */
struct twig_trans *twig_start_transaction(struct twig_fs_info *fs,
					  unsigned int items);
struct twig_trans *twig_start_transaction_reserved(struct twig_fs_info *fs,
						   unsigned int items);
struct twig_trans *twig_start_transaction_shrink(struct twig_fs_info *fs,
						 unsigned int *items,
						 unsigned int min_items);
void twig_end_transaction(struct twig_trans *trans);
int twig_commit_transaction(struct twig_fs_info *fs);
void __twig_abort_transaction(struct twig_trans *trans, const char *func,
			      unsigned int line, int err);
void __twig_fs_error(struct twig_fs_info *fs, const char *func,
		     unsigned int line, u64 transid, int err);
void twig_commit_hold_set(struct twig_fs_info *fs, bool hold);
void twig_log_forget(struct twig_fs_info *fs);

/*
 * @trans failed with @err.  If it changed an item the operation is half
 * done: the running transaction must never commit, and the filesystem
 * turns read-only (one line in the log names @func and @err).  A handle
 * that changed nothing just fails its operation.  Call it where the error
 * is seen, like btrfs_abort_transaction(); later calls do nothing.
 */
#define twig_abort_transaction(trans, err)				\
	__twig_abort_transaction((trans), __func__, __LINE__, (err))

/* ---- alloc.c ---- */
int twig_alloc_init(struct twig_fs_info *fs);
u64 twig_alloc_mark_used(struct twig_fs_info *fs, u64 bytenr, u64 bytes);
void twig_alloc_destroy(struct twig_fs_info *fs);
int twig_alloc_tree_block(struct twig_trans *trans, u64 *bytenr);
int twig_free_tree_block(struct twig_trans *trans, struct twig_eb *eb);
int twig_alloc_data(struct twig_fs_info *fs, u64 bytes,
		    struct twig_data_alloc *da);
void twig_data_alloc_owned(struct twig_trans *trans,
			   struct twig_data_alloc *da);
void twig_data_alloc_drop(struct twig_fs_info *fs, struct twig_data_alloc *da);
int twig_free_data(struct twig_fs_info *fs, struct twig_trans *trans,
		   u64 bytenr, u64 bytes);
int twig_alloc_log_block(struct twig_fs_info *fs, struct twig_data_alloc *da);
int twig_alloc_claim(struct twig_fs_info *fs, u64 bytenr, u64 bytes,
		     struct twig_data_alloc *da);
u64 twig_bytes_used(struct twig_fs_info *fs);
u64 twig_bytes_allocated(struct twig_fs_info *fs);
u64 twig_bytes_free(struct twig_fs_info *fs);
u64 twig_bytes_avail(struct twig_fs_info *fs);
int twig_reserve_meta(struct twig_trans *trans, unsigned int items);
void twig_release_meta(struct twig_trans *trans);
u64 twig_alloc_freeze(struct twig_fs_info *fs);
int twig_alloc_write(struct twig_fs_info *fs, u8 *copy, u32 *csum);
void twig_alloc_committed(struct twig_fs_info *fs);
int twig_new_objectid(struct twig_fs_info *fs, u64 *objectid);

/* ---- dir-item.c ---- */
int twig_find_name(const u8 *data, u32 size, bool is_dirent,
		   const char *name, int len);
int twig_append_record(struct twig_trans *trans, const struct twig_key *key,
		       const void *rec, u32 rec_len, const char *name, int len,
		       bool is_dirent);
int twig_remove_record(struct twig_trans *trans, const struct twig_key *key,
		       const char *name, int len, bool is_dirent, u64 *index);

/* ---- inode-item.c ---- */
int twig_read_inode_item(struct twig_fs_info *fs, u64 ino,
			 struct twig_inode_item *ii);

/* ---- tree-log.c ---- */
/*
 * What the fsync log needs of an inode, read by fsync (file.c) under the
 * inode's i_rwsem and extent_mutex (the fields of struct twig_inode_info).
 */
struct twig_log_target {
	u64 ino;
	u64 generation;		/* the transaction that created it */
	u64 ns_transid;		/* the last that changed a name of it */
	u64 del_transid;	/* the last that removed a name of it */
	unsigned int nlink;
	u64 dir;		/* the directory of the name fsync came by, or 0 */
	u64 dir_del_transid;	/* the last that removed a name in @dir */
};

int twig_log_inode(struct twig_fs_info *fs, const struct twig_log_target *t);
int twig_log_replay(struct twig_fs_info *fs);

/* ---- core.c: setup and teardown of the core, called by super.c ---- */
int twig_core_open(struct twig_fs_info *fs);
void twig_core_close(struct twig_fs_info *fs);

#endif /* _TWIGFS_H */
