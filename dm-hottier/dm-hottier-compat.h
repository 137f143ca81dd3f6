/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: shims for the kernel versions the module builds against.
 * Each shim is one line of explanation and one definition; the target's
 * logic never tests a kernel version itself.
 */
#ifndef DM_HOTTIER_COMPAT_H
#define DM_HOTTIER_COMPAT_H

#include <linux/blkdev.h>
#include <linux/export.h>
#include <linux/kconfig.h>

/*
 * The pure policy/parsing functions are exported only when the KUnit suite
 * is built as a separate module that calls them.
 */
#if IS_MODULE(CONFIG_DM_HOTTIER_KUNIT_TEST)
#define EXPORT_SYMBOL_FOR_HOTTIER_TESTS(sym)	EXPORT_SYMBOL_GPL(sym)
#else
#define EXPORT_SYMBOL_FOR_HOTTIER_TESTS(sym)
#endif

/*
 * Discard limits of a stacked queue. 6.1 stacks max_discard_sectors itself;
 * from 6.10 it is derived from max_hw_discard_sectors: set both.
 */
static inline void hottier_limits_set_discard(struct queue_limits *limits,
					      unsigned int max_sectors,
					      unsigned int granularity)
{
	limits->max_discard_sectors = max_sectors;
	limits->max_hw_discard_sectors = max_sectors;
	limits->discard_granularity = granularity;
}

#endif /* DM_HOTTIER_COMPAT_H */
