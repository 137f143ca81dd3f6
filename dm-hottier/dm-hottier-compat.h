/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: shims for the kernel versions the module builds against.
 * Each shim is one line of explanation and one definition; the target's
 * logic never tests a kernel version itself.
 */
#ifndef DM_HOTTIER_COMPAT_H
#define DM_HOTTIER_COMPAT_H

#include <linux/blkdev.h>
#include <linux/crc32.h>
#include <linux/dm-io.h>
#include <linux/export.h>
#include <linux/ioprio.h>
#include <linux/kconfig.h>

/*
 * A symbol namespace is a string literal from 6.13 (MODULE_IMPORT_NS("NS")),
 * a bare word that the macros stringify before: Kbuild tells which from the
 * kernel's module.h (HOTTIER_NS_LITERAL).
 */
#ifdef HOTTIER_NS_LITERAL
#define HOTTIER_TEST_NS		"DM_HOTTIER_TEST"
#else
#define HOTTIER_TEST_NS		DM_HOTTIER_TEST
#endif

/*
 * The pure policy/parsing functions are exported only when the KUnit suite
 * is built as a separate module that calls them, in a namespace of their
 * own that only that module imports.
 */
#if IS_MODULE(CONFIG_DM_HOTTIER_KUNIT_TEST)
#define EXPORT_SYMBOL_FOR_HOTTIER_TESTS(sym)	\
	EXPORT_SYMBOL_NS_GPL(sym, HOTTIER_TEST_NS)
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

/*
 * CRC-32C: crc32c() in <linux/crc32.h>, built in with CRC32, from 6.15;
 * before, the same function built in is __crc32c_le() (crc32c() was
 * libcrc32c's, a module of its own). Kbuild tells which (HOTTIER_CRC32C).
 */
#ifdef HOTTIER_CRC32C
#define hottier_crc32c(crc, p, len)	crc32c(crc, p, len)
#else
#define hottier_crc32c(crc, p, len)	__crc32c_le(crc, p, len)
#endif

/*
 * One synchronous dm_io() region. It took an I/O priority in 6.9 (Debian
 * backports it to 6.1) and a bitmap of unsupported regions in 6.17:
 * Kbuild counts its arguments from <linux/dm-io.h> (HOTTIER_DM_IO_ARGS).
 */
#if HOTTIER_DM_IO_ARGS == 6
#define hottier_dm_io(req, where)	\
	dm_io(req, 1, where, NULL, NULL, IOPRIO_DEFAULT)
#elif HOTTIER_DM_IO_ARGS == 5
#define hottier_dm_io(req, where)	\
	dm_io(req, 1, where, NULL, IOPRIO_DEFAULT)
#else
#define hottier_dm_io(req, where)	dm_io(req, 1, where, NULL)
#endif

#endif /* DM_HOTTIER_COMPAT_H */
