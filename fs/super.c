// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs super block: module init, mount (fs_context), superblock
 * validation, statfs, sync, remount, and /sys/fs/twigfs/<device>/.
 */
#include <linux/module.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/buffer_head.h>
#include <linux/blkdev.h>
#include <linux/statfs.h>
#include <linux/seq_file.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include "vfs.h"
#include "locking.h"

#define TWIG_DEFAULT_COMMIT	30
#define TWIG_DEFAULT_LOCK	"mutex"
#define TWIG_MAX_COMMIT		86400

static struct kset *twig_kset;

/* Options as parsed; applied to the fs_info by fill_super or reconfigure. */
struct twig_fs_context {
	char lock[32];
	u32 commit;
	u32 spin;		/* spin=, which wins over lock=spin512's 512 */
	bool lock_set;
	bool commit_set;
	bool spin_set;
	bool spin512;		/* the last lock= was spin512 */
};

enum { TWIG_OPT_LOCK, TWIG_OPT_COMMIT, TWIG_OPT_SPIN };

static const struct fs_parameter_spec twig_fs_parameters[] = {
	fsparam_string("lock", TWIG_OPT_LOCK),
	fsparam_u32("commit", TWIG_OPT_COMMIT),
	fsparam_u32("spin", TWIG_OPT_SPIN),
	{}
};

static int twig_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct twig_fs_context *ctx = fc->fs_private;
	struct fs_parse_result result;
	int opt;

	opt = fs_parse(fc, twig_fs_parameters, param, &result);
	if (opt < 0)
		return opt;

	switch (opt) {
	case TWIG_OPT_LOCK:
		/* the 2009 loop is lock=mutex's spin setting, named as then */
		ctx->spin512 = !strcmp(param->string, "spin512");
		if (ctx->spin512) {
			strscpy(ctx->lock, "mutex", sizeof(ctx->lock));
		} else if (twig_lock_strategy_get(param->string)) {
			strscpy(ctx->lock, param->string, sizeof(ctx->lock));
		} else {
			return invalfc(fc, "unknown lock strategy '%s'",
				       param->string);
		}
		ctx->lock_set = true;
		break;
	case TWIG_OPT_SPIN:
		if (result.uint_32 > TWIG_MAX_SPIN_ROUNDS)
			return invalfc(fc, "spin=%u out of range 0..%u",
				       result.uint_32, TWIG_MAX_SPIN_ROUNDS);
		ctx->spin = result.uint_32;
		ctx->spin_set = true;
		break;
	case TWIG_OPT_COMMIT:
		if (result.uint_32 == 0 || result.uint_32 > TWIG_MAX_COMMIT)
			return invalfc(fc, "commit interval %u out of range 1..%u",
				       result.uint_32, TWIG_MAX_COMMIT);
		ctx->commit = result.uint_32;
		ctx->commit_set = true;
		break;
	}
	return 0;
}

/*
 * The trylock loop the options ask for: an explicit spin= whatever its
 * place, else lock=spin512's 512, else @unset (0 at mount; the current
 * value at remount, which changes only what it is given).
 */
static unsigned int twig_ctx_spin(const struct twig_fs_context *ctx,
				  unsigned int unset)
{
	if (ctx->spin_set)
		return ctx->spin;
	return ctx->spin512 ? TWIG_SPIN512_ROUNDS : unset;
}

/*
 * Check the superblock as read from disk.  Every refusal names the device
 * and the reason; nothing here trusts a field before checking it.
 */
static int twig_check_super(struct fs_context *fc, struct super_block *sb,
			    const struct twig_super_block *ds)
{
	u64 dev_bytes = bdev_nr_bytes(sb->s_bdev);
	u32 nodesize = le32_to_cpu(ds->nodesize);
	u64 total = le64_to_cpu(ds->total_bytes);
	u64 root = le64_to_cpu(ds->root);
	u64 alloc_start = le64_to_cpu(ds->alloc_start);
	u64 alloc_bytes = le64_to_cpu(ds->alloc_bytes);
	u64 features, map_bytes;
	u32 csum;

	if (le64_to_cpu(ds->magic) != TWIG_MAGIC) {
		errorf(fc, "%s: not a twigfs filesystem (bad magic)", sb->s_id);
		return -EINVAL;
	}
	csum = twig_csum((const u8 *)ds + 4, TWIG_SUPER_SIZE - 4);
	if (csum != le32_to_cpu(ds->csum)) {
		errorf(fc, "%s: superblock checksum mismatch (stored %08x, computed %08x)",
		       sb->s_id, le32_to_cpu(ds->csum), csum);
		return -EUCLEAN;
	}
	if (le32_to_cpu(ds->version) != TWIG_FORMAT_VERSION) {
		errorf(fc, "%s: unsupported format version %u (this module reads %u)",
		       sb->s_id, le32_to_cpu(ds->version), TWIG_FORMAT_VERSION);
		return -EINVAL;
	}
	features = le64_to_cpu(ds->incompat_flags) & ~TWIG_FEATURE_INCOMPAT_SUPP;
	if (features) {
		errorf(fc, "%s: unsupported incompatible features 0x%llx",
		       sb->s_id, features);
		return -EINVAL;
	}
	features = le64_to_cpu(ds->compat_ro_flags) &
		   ~TWIG_FEATURE_COMPAT_RO_SUPP;
	if (features && !(fc->sb_flags & SB_RDONLY)) {
		errorf(fc, "%s: unsupported read-only-compatible features 0x%llx: mount read-only",
		       sb->s_id, features);
		return -EINVAL;
	}
	if (le64_to_cpu(ds->bytenr) != TWIG_SUPER_OFFSET ||
	    le32_to_cpu(ds->sectorsize) != TWIG_SECTORSIZE ||
	    nodesize < TWIG_MIN_NODESIZE || nodesize > TWIG_MAX_NODESIZE ||
	    !is_power_of_2(nodesize)) {
		errorf(fc, "%s: bad superblock geometry (bytenr %llu, sectorsize %u, nodesize %u)",
		       sb->s_id, le64_to_cpu(ds->bytenr),
		       le32_to_cpu(ds->sectorsize), nodesize);
		return -EUCLEAN;
	}
	if (total < TWIG_MIN_DEVICE_BYTES || total % TWIG_SECTORSIZE) {
		errorf(fc, "%s: bad filesystem size %llu", sb->s_id, total);
		return -EUCLEAN;
	}
	if (total > dev_bytes) {
		errorf(fc, "%s: filesystem size %llu is larger than the device (%llu bytes)",
		       sb->s_id, total, dev_bytes);
		return -EINVAL;
	}
	/*
	 * The size fixes alloc_bytes (format.h).  Anything larger is refused
	 * here, before 2 * alloc_bytes can wrap to a location that passes
	 * and the first commit writes the bitmap nowhere.
	 */
	map_bytes = round_up(DIV_ROUND_UP(div_u64(total, TWIG_SECTORSIZE), 8),
			     TWIG_SECTORSIZE);
	if (alloc_start != TWIG_RESERVED_BYTES || alloc_bytes != map_bytes ||
	    alloc_start + 2 * alloc_bytes > total || ds->alloc_copy > 1) {
		errorf(fc,
		       "%s: bad allocation bitmap location (start %llu, bytes %llu, expected %llu for this size, copy %u)",
		       sb->s_id, alloc_start, alloc_bytes, map_bytes,
		       ds->alloc_copy);
		return -EUCLEAN;
	}
	if (root % TWIG_SECTORSIZE || root < alloc_start + 2 * alloc_bytes ||
	    root > total - nodesize || ds->root_level >= TWIG_MAX_LEVEL) {
		errorf(fc, "%s: bad tree root %llu level %u", sb->s_id, root,
		       ds->root_level);
		return -EUCLEAN;
	}
	if (le64_to_cpu(ds->root_dir_objectid) != TWIG_ROOT_DIR_OBJECTID ||
	    le64_to_cpu(ds->bytes_used) > total ||
	    le64_to_cpu(ds->root_generation) > le64_to_cpu(ds->generation) ||
	    !memchr(ds->label, 0, sizeof(ds->label))) {
		errorf(fc, "%s: inconsistent superblock fields", sb->s_id);
		return -EUCLEAN;
	}
	return 0;
}

static int twig_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct super_block *sb = dentry->d_sb;
	struct twig_fs_info *fs = twig_sb(sb);
	u64 total = fs->total_bytes;
	u64 avail = twig_bytes_avail(fs);
	u64 reserved = atomic64_read(&fs->data_reserved);
	__le64 fsid[2];

	avail = avail > reserved ? avail - reserved : 0;
	buf->f_type = TWIG_SUPER_MAGIC;
	buf->f_bsize = TWIG_SECTORSIZE;
	buf->f_frsize = TWIG_SECTORSIZE;
	buf->f_blocks = div_u64(total, TWIG_SECTORSIZE);
	buf->f_bfree = div_u64(twig_bytes_free(fs), TWIG_SECTORSIZE);
	buf->f_bavail = div_u64(avail, TWIG_SECTORSIZE);
	buf->f_files = 0;	/* inodes are items: no fixed table */
	buf->f_ffree = 0;
	buf->f_namelen = TWIG_NAME_LEN;
	memcpy(fsid, fs->fsid, sizeof(fsid));
	buf->f_fsid = u64_to_fsid(le64_to_cpu(fsid[0]) ^ le64_to_cpu(fsid[1]));
	return 0;
}

static int twig_sync_fs(struct super_block *sb, int wait)
{
	if (!wait || sb_rdonly(sb))
		return 0;
	return twig_commit_transaction(twig_sb(sb));
}

static int twig_show_options(struct seq_file *m, struct dentry *root)
{
	struct twig_fs_info *fs = twig_sb(root->d_sb);

	unsigned int spin = READ_ONCE(fs->spin_rounds);

	seq_printf(m, ",lock=%s", READ_ONCE(fs->lock_ops)->name);
	if (spin)
		seq_printf(m, ",spin=%u", spin);
	if (fs->commit_interval != TWIG_DEFAULT_COMMIT)
		seq_printf(m, ",commit=%u", fs->commit_interval);
	return 0;
}

/* The commit timer: commit=<seconds>, like btrfs. */
static void twig_commit_work(struct work_struct *work)
{
	struct twig_fs_info *fs = container_of(to_delayed_work(work),
					       struct twig_fs_info, commit_work);
	int ret;

	if (!sb_rdonly(fs->sb)) {
		ret = twig_commit_transaction(fs);
		if (ret && ret != -EROFS)
			pr_warn_ratelimited("twigfs: %s: periodic commit failed: %d\n",
					    fs->sb->s_id, ret);
	}
	queue_delayed_work(system_long_wq, &fs->commit_work,
			   READ_ONCE(fs->commit_interval) * HZ);
}

static void twig_set_commit_interval(struct twig_fs_info *fs,
				     unsigned int secs)
{
	WRITE_ONCE(fs->commit_interval, secs);
	mod_delayed_work(system_long_wq, &fs->commit_work, secs * HZ);
}

/* sysfs: /sys/fs/twigfs/<device>/ */

struct twig_attr {
	struct attribute attr;
	ssize_t (*show)(struct twig_fs_info *fs, char *buf);
	ssize_t (*store)(struct twig_fs_info *fs, const char *buf, size_t len);
};

static ssize_t twig_attr_show(struct kobject *kobj, struct attribute *attr,
			      char *buf)
{
	struct twig_fs_info *fs = container_of(kobj, struct twig_fs_info, kobj);
	struct twig_attr *a = container_of(attr, struct twig_attr, attr);

	return a->show ? a->show(fs, buf) : -EIO;
}

static ssize_t twig_attr_store(struct kobject *kobj, struct attribute *attr,
			       const char *buf, size_t len)
{
	struct twig_fs_info *fs = container_of(kobj, struct twig_fs_info, kobj);
	struct twig_attr *a = container_of(attr, struct twig_attr, attr);

	return a->store ? a->store(fs, buf, len) : -EIO;
}

static const struct sysfs_ops twig_sysfs_ops = {
	.show = twig_attr_show,
	.store = twig_attr_store,
};

static ssize_t lock_show(struct twig_fs_info *fs, char *buf)
{
	return sysfs_emit(buf, "%s\n", READ_ONCE(fs->lock_ops)->name);
}

/*
 * "mutex" or "rwsem": drains the tree operations in flight and switches
 * (twig_lock_switch()), also to the strategy in use; rwsem sets spin to 0.
 */
static ssize_t lock_store(struct twig_fs_info *fs, const char *buf,
			  size_t len)
{
	const struct twig_lock_ops *ops;
	char name[32];

	if (strscpy(name, buf, sizeof(name)) < 0)
		return -EINVAL;
	ops = twig_lock_strategy_get(strim(name));
	if (!ops)
		return -EINVAL;
	twig_lock_switch(fs, ops);
	return len;
}

static ssize_t lock_switches_show(struct twig_fs_info *fs, char *buf)
{
	return twig_lock_switches_show(fs, buf);
}

static ssize_t spin_show(struct twig_fs_info *fs, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(fs->spin_rounds));
}

/* Takes effect at the next contended acquisition; see twig_mutex_lock(). */
static ssize_t spin_store(struct twig_fs_info *fs, const char *buf,
			  size_t len)
{
	unsigned int rounds;
	int ret;

	ret = kstrtouint(buf, 10, &rounds);
	if (ret)
		return ret;
	if (rounds > TWIG_MAX_SPIN_ROUNDS)
		return -EINVAL;
	/* against a switch to a strategy without the loop meanwhile */
	mutex_lock(&fs->lock_switch_mutex);
	if (rounds && !fs->lock_ops->spin_loop)
		ret = -EINVAL;
	else
		WRITE_ONCE(fs->spin_rounds, rounds);
	mutex_unlock(&fs->lock_switch_mutex);
	return ret ?: len;
}

/*
 * negative_dentries 0: the dcache forgets a name twigfs did not find, so
 * the next lookup of it searches the tree again.  A workload that looks
 * up ever new names then measures that search without the dcache growing
 * by a dentry per lookup (and reclaim joining in) for the whole run.
 */
static int twig_d_delete(const struct dentry *dentry)
{
	return d_really_is_negative(dentry) &&
	       test_bit(TWIG_FS_DROP_NEGATIVE, &twig_sb(dentry->d_sb)->flags);
}

static const struct dentry_operations twig_drop_negative_dops = {
	.d_delete = twig_d_delete,
};

/* Keeps the flag and s_d_op in step when two writers race. */
static DEFINE_MUTEX(twig_negative_mutex);

static ssize_t negative_dentries_show(struct twig_fs_info *fs, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  !test_bit(TWIG_FS_DROP_NEGATIVE, &fs->flags));
}

/*
 * A dentry takes its operations from s_d_op when it is allocated.  With
 * caching on (the default), new dentries get none, so their last dput()
 * keeps its lockless fast path: a d_delete operation sends every last
 * dput() through d_lock.  Dentries allocated while it was off keep
 * asking twig_d_delete(), which the cleared flag makes keep them.
 */
static ssize_t negative_dentries_store(struct twig_fs_info *fs,
				       const char *buf, size_t len)
{
	bool keep;
	int ret;

	ret = kstrtobool(buf, &keep);
	if (ret)
		return ret;
	mutex_lock(&twig_negative_mutex);
	if (keep) {
		WRITE_ONCE(fs->sb->s_d_op, NULL);
		clear_bit(TWIG_FS_DROP_NEGATIVE, &fs->flags);
	} else {
		set_bit(TWIG_FS_DROP_NEGATIVE, &fs->flags);
		WRITE_ONCE(fs->sb->s_d_op, &twig_drop_negative_dops);
	}
	mutex_unlock(&twig_negative_mutex);
	return len;
}

static ssize_t commit_show(struct twig_fs_info *fs, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(fs->commit_interval));
}

static ssize_t commit_store(struct twig_fs_info *fs, const char *buf,
			    size_t len)
{
	unsigned int secs;
	int ret;

	ret = kstrtouint(buf, 10, &secs);
	if (ret)
		return ret;
	if (secs == 0 || secs > TWIG_MAX_COMMIT)
		return -EINVAL;
	twig_set_commit_interval(fs, secs);
	return len;
}

/* Fault injection for tests: see twig_should_fail(); 0 disarms. */
static ssize_t fail_after_show(struct twig_fs_info *fs, char *buf)
{
	return sysfs_emit(buf, "%d\n", max(atomic_read(&fs->fail_after), 0));
}

static ssize_t fail_after_store(struct twig_fs_info *fs, const char *buf,
				size_t len)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(buf, 10, &n);
	if (ret)
		return ret;
	if (n > INT_MAX)
		return -EINVAL;
	atomic_set(&fs->fail_after, n);
	return len;
}

static ssize_t commit_hold_show(struct twig_fs_info *fs, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&fs->commit_hold));
}

static ssize_t commit_hold_store(struct twig_fs_info *fs, const char *buf,
				 size_t len)
{
	bool hold;
	int ret;

	ret = kstrtobool(buf, &hold);
	if (ret)
		return ret;
	twig_commit_hold_set(fs, hold);
	return len;
}

static ssize_t lock_stats_show(struct twig_fs_info *fs, char *buf)
{
	return twig_lock_stats_show(fs, buf);
}

static ssize_t lock_stats_reset_store(struct twig_fs_info *fs,
				      const char *buf, size_t len)
{
	twig_lock_stats_reset(fs);
	return len;
}

static const char *const twig_commit_stat_names[TWIG_CS_NR] = {
	[TWIG_CS_COMMITS]		= "commits",
	[TWIG_CS_COMMIT_NS]		= "commit_ns",
	[TWIG_CS_COMMIT_MAX_NS]		= "commit_max_ns",
	[TWIG_CS_FSYNCS]		= "fsyncs",
	[TWIG_CS_LOG_SYNCS]		= "log_syncs",
	[TWIG_CS_LOG_FALLBACKS]		= "log_fallbacks",
	[TWIG_CS_HANDLES]		= "handles",
	[TWIG_CS_JOIN_WAIT_NS]		= "join_wait_ns",
	[TWIG_CS_HANDLE_IO_WAIT_NS]	= "handle_io_wait_ns",
	[TWIG_CS_COMMIT_BLOCKED_NS]	= "commit_blocked_ns",
	[TWIG_CS_UNLOCKED_READS]	= "unlocked_reads",
};

static ssize_t commit_stats_show(struct twig_fs_info *fs, char *buf)
{
	int len = 0;
	int i;

	for (i = 0; i < TWIG_CS_NR; i++)
		len += sysfs_emit_at(buf, len, "%s %lld\n",
				     twig_commit_stat_names[i],
				     atomic64_read(&fs->commit_stats[i]));
	return len;
}

/* Racy against concurrent updates by design: reset between runs. */
static ssize_t commit_stats_reset_store(struct twig_fs_info *fs,
					const char *buf, size_t len)
{
	int i;

	for (i = 0; i < TWIG_CS_NR; i++)
		atomic64_set(&fs->commit_stats[i], 0);
	return len;
}

static const char *const twig_op_names[TWIG_OP_NR] = {
	[TWIG_OP_LOOKUP]	= "lookup",
	[TWIG_OP_CREATE]	= "create",
	[TWIG_OP_LINK]		= "link",
	[TWIG_OP_REMOVE]	= "remove",
	[TWIG_OP_RENAME]	= "rename",
	[TWIG_OP_OPEN]		= "open",
	[TWIG_OP_READ]		= "read",
	[TWIG_OP_WRITE]		= "write",
	[TWIG_OP_FSYNC]		= "fsync",
	[TWIG_OP_READDIR]	= "readdir",
	[TWIG_OP_GETATTR]	= "getattr",
	[TWIG_OP_SETATTR]	= "setattr",
};

/*
 * "total N" first, so a benchmark controller sampling every 100 ms reads
 * one line; then each kind.  Summed without stopping anyone: a sample may
 * miss increments in flight on other CPUs, never loses them.
 */
static ssize_t ops_show(struct twig_fs_info *fs, char *buf)
{
	u64 n[TWIG_OP_NR] = {}, total = 0;
	int cpu, i, len;

	for_each_possible_cpu(cpu) {
		struct twig_op_stats *pc = per_cpu_ptr(fs->op_stats, cpu);

		for (i = 0; i < TWIG_OP_NR; i++)
			n[i] += READ_ONCE(pc->n[i]);
	}
	for (i = 0; i < TWIG_OP_NR; i++)
		total += n[i];
	len = sysfs_emit(buf, "total %llu\n", total);
	for (i = 0; i < TWIG_OP_NR; i++)
		len += sysfs_emit_at(buf, len, "%s %llu\n", twig_op_names[i],
				     n[i]);
	return len;
}

/* Racy against concurrent increments by design: reset between runs. */
static ssize_t ops_reset_store(struct twig_fs_info *fs, const char *buf,
			       size_t len)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(fs->op_stats, cpu), 0,
		       sizeof(struct twig_op_stats));
	return len;
}

#define TWIG_ATTR(_name, _mode, _show, _store)				\
	static struct twig_attr twig_attr_##_name = {			\
		.attr = { .name = __stringify(_name), .mode = _mode },	\
		.show = _show, .store = _store,				\
	}

TWIG_ATTR(lock, 0644, lock_show, lock_store);
TWIG_ATTR(lock_switches, 0444, lock_switches_show, NULL);
TWIG_ATTR(spin, 0644, spin_show, spin_store);
TWIG_ATTR(ops, 0444, ops_show, NULL);
TWIG_ATTR(ops_reset, 0200, NULL, ops_reset_store);
TWIG_ATTR(negative_dentries, 0644, negative_dentries_show,
	  negative_dentries_store);
TWIG_ATTR(commit, 0644, commit_show, commit_store);
TWIG_ATTR(lock_stats, 0444, lock_stats_show, NULL);
TWIG_ATTR(lock_stats_reset, 0200, NULL, lock_stats_reset_store);
TWIG_ATTR(commit_stats, 0444, commit_stats_show, NULL);
TWIG_ATTR(commit_stats_reset, 0200, NULL, commit_stats_reset_store);
TWIG_ATTR(fail_after, 0644, fail_after_show, fail_after_store);
TWIG_ATTR(commit_hold, 0644, commit_hold_show, commit_hold_store);

static struct attribute *twig_attrs[] = {
	&twig_attr_lock.attr,
	&twig_attr_lock_switches.attr,
	&twig_attr_spin.attr,
	&twig_attr_ops.attr,
	&twig_attr_ops_reset.attr,
	&twig_attr_negative_dentries.attr,
	&twig_attr_commit.attr,
	&twig_attr_lock_stats.attr,
	&twig_attr_lock_stats_reset.attr,
	&twig_attr_commit_stats.attr,
	&twig_attr_commit_stats_reset.attr,
	&twig_attr_fail_after.attr,
	&twig_attr_commit_hold.attr,
	NULL,
};
ATTRIBUTE_GROUPS(twig);

static void twig_kobj_release(struct kobject *kobj)
{
	struct twig_fs_info *fs = container_of(kobj, struct twig_fs_info, kobj);

	complete(&fs->kobj_unregister);
}

static struct kobj_type twig_ktype = {
	.sysfs_ops = &twig_sysfs_ops,
	.default_groups = twig_groups,
	.release = twig_kobj_release,
};

static int twig_sysfs_add(struct twig_fs_info *fs)
{
	int ret;

	init_completion(&fs->kobj_unregister);
	fs->kobj.kset = twig_kset;
	ret = kobject_init_and_add(&fs->kobj, &twig_ktype, NULL, "%s",
				   fs->sb->s_id);
	if (ret) {
		kobject_put(&fs->kobj);
		wait_for_completion(&fs->kobj_unregister);
	}
	return ret;
}

static void twig_sysfs_del(struct twig_fs_info *fs)
{
	kobject_del(&fs->kobj);
	kobject_put(&fs->kobj);
	wait_for_completion(&fs->kobj_unregister);
}

static void twig_free_fs(struct twig_fs_info *fs)
{
	free_percpu(fs->op_stats);
	kfree(fs->super_copy);
	kfree(fs);
}

static void twig_put_super(struct super_block *sb)
{
	struct twig_fs_info *fs = twig_sb(sb);
	int ret;

	cancel_delayed_work_sync(&fs->commit_work);
	if (!sb_rdonly(sb)) {
		ret = twig_commit_transaction(fs);
		if (ret)
			pr_err("twigfs: %s: commit at unmount failed: %d\n",
			       sb->s_id, ret);
	}
	twig_sysfs_del(fs);
	twig_core_close(fs);
	sb->s_fs_info = NULL;
	twig_free_fs(fs);
}

static const struct super_operations twig_super_ops = {
	.alloc_inode	= twig_alloc_inode,
	.free_inode	= twig_free_inode,
	.dirty_inode	= twig_dirty_inode,
	.write_inode	= twig_write_inode,
	.evict_inode	= twig_evict_inode,
	.put_super	= twig_put_super,
	.sync_fs	= twig_sync_fs,
	.statfs		= twig_statfs,
	.show_options	= twig_show_options,
};

static int twig_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct twig_fs_context *ctx = fc->fs_private;
	struct twig_fs_info *fs;
	struct inode *root;
	int ret;

	if (!sb_set_blocksize(sb, TWIG_SECTORSIZE)) {
		errorf(fc, "%s: device block size is larger than %d",
		       sb->s_id, TWIG_SECTORSIZE);
		return -EINVAL;
	}
	fs = kzalloc(sizeof(*fs), GFP_KERNEL);
	if (!fs)
		return -ENOMEM;
	fs->super_copy = kmalloc(TWIG_SUPER_SIZE, GFP_KERNEL);
	if (!fs->super_copy) {
		kfree(fs);
		return -ENOMEM;
	}
	fs->sb = sb;
	fs->bdev = sb->s_bdev;
	fs->op_stats = alloc_percpu(struct twig_op_stats);
	if (!fs->op_stats) {
		ret = -ENOMEM;
		goto out_free;
	}
	if (bdev_nr_bytes(sb->s_bdev) < TWIG_SUPER_OFFSET + TWIG_SUPER_SIZE) {
		errorf(fc, "%s: device too small for twigfs", sb->s_id);
		ret = -EINVAL;
		goto out_free;
	}
	ret = twig_dev_read(fs, TWIG_SUPER_OFFSET, fs->super_copy,
			    TWIG_SUPER_SIZE);
	if (ret) {
		errorf(fc, "%s: cannot read the superblock: %d", sb->s_id, ret);
		ret = -EIO;
		goto out_free;
	}
	ret = twig_check_super(fc, sb, fs->super_copy);
	if (ret)
		goto out_free;
	fs->lock_ops = twig_lock_strategy_get(ctx->lock);
	if (!fs->lock_ops) {
		ret = invalfc(fc, "unknown lock strategy '%s'", ctx->lock);
		goto out_free;
	}
	if (ctx->spin && !fs->lock_ops->spin_loop) {
		ret = invalfc(fc, "spin=%u: lock=%s has no trylock loop",
			      ctx->spin, ctx->lock);
		goto out_free;
	}
	fs->spin_rounds = twig_ctx_spin(ctx, 0);
	fs->commit_interval = ctx->commit;
	INIT_DELAYED_WORK(&fs->commit_work, twig_commit_work);
	atomic64_set(&fs->data_reserved, 0);
	if (sb_rdonly(sb))
		set_bit(TWIG_FS_RDONLY, &fs->flags);
	sb->s_fs_info = fs;

	sb->s_magic = TWIG_SUPER_MAGIC;
	sb->s_op = &twig_super_ops;
	sb->s_xattr = twig_xattr_handlers;
	/* POSIX ACLs: the VFS leaves the umask to posix_acl_create() */
	if (IS_ENABLED(CONFIG_FS_POSIX_ACL))
		sb->s_flags |= SB_POSIXACL;
	sb->s_maxbytes = MAX_LFS_FILESIZE;
	sb->s_time_gran = 1;
	sb->s_time_min = S64_MIN;
	sb->s_time_max = S64_MAX;
	memcpy(&sb->s_uuid, fs->super_copy->fsid, sizeof(sb->s_uuid));

	ret = twig_core_open(fs);
	if (ret) {
		errorf(fc, "%s: cannot open the filesystem tree: %d", sb->s_id,
		       ret);
		goto out_clear;
	}
	if (fs->super_copy->log_root) {
		/* replaying writes; ignoring it would lose what fsync kept */
		if (sb_rdonly(sb)) {
			errorf(fc,
			       "%s: an fsync log needs replay: mount read-write once",
			       sb->s_id);
			ret = -EROFS;
			goto out_close;
		}
		ret = twig_log_replay(fs);
		if (ret) {
			errorf(fc, "%s: cannot replay the fsync log: %d",
			       sb->s_id, ret);
			goto out_close;
		}
	}

	root = twig_iget(sb, TWIG_ROOT_DIR_OBJECTID);
	if (IS_ERR(root)) {
		ret = PTR_ERR(root);
		errorf(fc, "%s: cannot read the root directory: %d", sb->s_id,
		       ret);
		goto out_close;
	}
	if (!S_ISDIR(root->i_mode)) {
		iput(root);
		errorf(fc, "%s: root inode is not a directory", sb->s_id);
		ret = -EUCLEAN;
		goto out_close;
	}
	sb->s_root = d_make_root(root);
	if (!sb->s_root) {
		ret = -ENOMEM;
		goto out_close;
	}

	ret = twig_sysfs_add(fs);
	if (ret) {
		errorf(fc, "%s: cannot create /sys/fs/twigfs/%s: %d", sb->s_id,
		       sb->s_id, ret);
		dput(sb->s_root);
		sb->s_root = NULL;
		goto out_close;
	}
	if (!sb_rdonly(sb))
		twig_orphan_cleanup(fs);
	queue_delayed_work(system_long_wq, &fs->commit_work,
			   fs->commit_interval * HZ);
	return 0;

out_close:
	twig_core_close(fs);
out_clear:
	sb->s_fs_info = NULL;
out_free:
	twig_free_fs(fs);
	return ret;
}

static int twig_get_tree(struct fs_context *fc)
{
	return get_tree_bdev(fc, twig_fill_super);
}

static int twig_reconfigure(struct fs_context *fc)
{
	struct twig_fs_context *ctx = fc->fs_private;
	struct super_block *sb = fc->root->d_sb;
	struct twig_fs_info *fs = twig_sb(sb);
	const struct twig_lock_ops *ops = READ_ONCE(fs->lock_ops);

	/* lock= switches as sysfs "lock" does, and only if it changes */
	if (ctx->lock_set)
		ops = twig_lock_strategy_get(ctx->lock);
	if (ctx->spin && !ops->spin_loop)
		return invalfc(fc, "spin=%u: lock=%s has no trylock loop",
			       ctx->spin, ops->name);
	/* as btrfs: the tree in memory is half changed, the disk is older */
	if (!(fc->sb_flags & SB_RDONLY) && test_bit(TWIG_FS_ERROR, &fs->flags))
		return invalfc(fc,
			       "%s: remounting read-write after an error is not allowed; unmount and mount again",
			       sb->s_id);
	sync_filesystem(sb);
	if (fc->sb_flags & SB_RDONLY)
		set_bit(TWIG_FS_RDONLY, &fs->flags);
	else if (test_and_clear_bit(TWIG_FS_RDONLY, &fs->flags))
		twig_orphan_cleanup(fs);
	if (ctx->commit_set)
		twig_set_commit_interval(fs, ctx->commit);
	if (ops != READ_ONCE(fs->lock_ops))
		twig_lock_switch(fs, ops);
	mutex_lock(&fs->lock_switch_mutex);
	WRITE_ONCE(fs->spin_rounds, fs->lock_ops->spin_loop ?
		   twig_ctx_spin(ctx, fs->spin_rounds) : 0);
	mutex_unlock(&fs->lock_switch_mutex);
	return 0;
}

static void twig_free_fc(struct fs_context *fc)
{
	kfree(fc->fs_private);
}

static const struct fs_context_operations twig_context_ops = {
	.parse_param	= twig_parse_param,
	.get_tree	= twig_get_tree,
	.reconfigure	= twig_reconfigure,
	.free		= twig_free_fc,
};

static int twig_init_fs_context(struct fs_context *fc)
{
	struct twig_fs_context *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	strscpy(ctx->lock, TWIG_DEFAULT_LOCK, sizeof(ctx->lock));
	ctx->commit = TWIG_DEFAULT_COMMIT;
	fc->fs_private = ctx;
	fc->ops = &twig_context_ops;
	return 0;
}

/* A test's commit_hold must not hang the unmount's sync. */
static void twig_kill_sb(struct super_block *sb)
{
	if (sb->s_root && sb->s_fs_info)
		twig_commit_hold_set(twig_sb(sb), false);
	kill_block_super(sb);
}

static struct file_system_type twig_fs_type = {
	.owner			= THIS_MODULE,
	.name			= "twigfs",
	.init_fs_context	= twig_init_fs_context,
	.parameters		= twig_fs_parameters,
	.kill_sb		= twig_kill_sb,
	.fs_flags		= FS_REQUIRES_DEV,
};
MODULE_ALIAS_FS("twigfs");

static int __init twig_init(void)
{
	int ret;

	ret = twig_inode_cache_init();
	if (ret)
		return ret;
	twig_kset = kset_create_and_add("twigfs", NULL, fs_kobj);
	if (!twig_kset) {
		ret = -ENOMEM;
		goto out_inode;
	}
	ret = register_filesystem(&twig_fs_type);
	if (ret)
		goto out_kset;
	return 0;

out_kset:
	kset_unregister(twig_kset);
out_inode:
	twig_inode_cache_exit();
	return ret;
}

static void __exit twig_exit(void)
{
	unregister_filesystem(&twig_fs_type);
	kset_unregister(twig_kset);
	twig_inode_cache_exit();
}

module_init(twig_init);
module_exit(twig_exit);
MODULE_DESCRIPTION("twigfs: a copy-on-write B-tree filesystem for lock studies");
MODULE_LICENSE("GPL");
