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
#define HOTTIER_EXPORT_FOR_KUNIT(sym)	EXPORT_SYMBOL_GPL(sym)
#else
#define HOTTIER_EXPORT_FOR_KUNIT(sym)
#endif

/* A queue that offers no discard: every discard limit is zero. */
static inline void hottier_limits_disable_discard(struct queue_limits *limits)
{
	limits->max_discard_sectors = 0;
	limits->max_hw_discard_sectors = 0;
	limits->discard_granularity = 0;
}

#endif /* DM_HOTTIER_COMPAT_H */
