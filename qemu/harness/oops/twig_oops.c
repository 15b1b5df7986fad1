// SPDX-License-Identifier: GPL-2.0
/*
 * A module that misbehaves on purpose, to prove the guest runner notices:
 * mode=oops dereferences NULL, mode=warn only WARNs and loads fine.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

static char *mode = "oops";
static int *twig_oops_target;	/* NULL: the compiler cannot see it stays so */
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "oops or warn");

static int __init twig_oops_init(void)
{
	if (!strcmp(mode, "warn")) {
		WARN(1, "twig_oops: warning on purpose\n");
		return 0;
	}
	WRITE_ONCE(*twig_oops_target, 1);
	return 0;
}

static void __exit twig_oops_exit(void)
{
}

module_init(twig_oops_init);
module_exit(twig_oops_exit);
MODULE_DESCRIPTION("twigfs harness self-test: provoke an oops or a warning");
MODULE_LICENSE("GPL");
