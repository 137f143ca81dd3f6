/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: constructor argument parsing.
 *
 * Plain functions with no bio and no dm_target in their interfaces, so the
 * KUnit suite can drive every refusal directly.
 */
#ifndef DM_HOTTIER_ARGS_H
#define DM_HOTTIER_ARGS_H

#include <linux/types.h>

/* Extent size bounds, in 512-byte sectors: 32 KiB .. 1 GiB. */
#define HOTTIER_MIN_EXTENT_SECTORS	64ULL
#define HOTTIER_MAX_EXTENT_SECTORS	2097152ULL

/* Positional arguments: <hdd_dev> <ssd_dev> <extent_sectors>. */
#define HOTTIER_NR_POSITIONAL		3

enum hottier_discard {
	HOTTIER_DISCARD_PASSDOWN,	/* discards go to the HDD */
	HOTTIER_DISCARD_IGNORE,		/* the device does not offer discard */
};

/* Optional keys; one bit each, to refuse a key given twice. */
enum hottier_key {
	HOTTIER_KEY_DISCARD,
	HOTTIER_NR_KEYS,
};

struct hottier_args {
	const char *hdd_path;
	const char *ssd_path;
	u64 extent_sectors;
	enum hottier_discard discard;
};

int hottier_parse_args(unsigned int argc, char **argv,
		       struct hottier_args *args, char **error);
int hottier_check_geometry(u64 target_len, u64 hdd_sectors, u64 ssd_sectors,
			   u64 extent_sectors, char **error);
const char *hottier_discard_name(enum hottier_discard discard);

#endif /* DM_HOTTIER_ARGS_H */
