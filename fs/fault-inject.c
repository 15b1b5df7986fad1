// SPDX-License-Identifier: GPL-2.0
/*
 * twigfs fault injection for tests (sysfs fail_after, super.c).  Below
 * every other file of the module, so that any layer can ask.
 */
#include <linux/atomic.h>
#include <linux/printk.h>

#include "twigfs.h"

/*
 * Fault injection for tests: writing N to /sys/fs/twigfs/<dev>/fail_after
 * makes the N-th call from then on return true.  The callers are the
 * places an error must be survivable: tree searches and tree-block
 * allocation (-ENOMEM), tree-block reads (-EIO), data writes (-EIO) and
 * the commit's superblock write (-EIO).  A search is one step of an
 * operation, so k = 1, 2, ... fails each step in turn.
 */
bool twig_should_fail(struct twig_fs_info *fs)
{
	if (likely(atomic_read(&fs->fail_after) <= 0) ||
	    !atomic_dec_and_test(&fs->fail_after))
		return false;
	pr_info("twigfs (%s): fail_after: failing %pS\n", twig_fs_id(fs),
		__builtin_return_address(0));
	return true;
}
