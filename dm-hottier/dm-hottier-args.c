// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: constructor argument parsing.
 *
 * Table: <hdd_dev> <ssd_dev> <extent_sectors> [<#args> <key> <value>...]
 */
#include "dm-hottier-args.h"
#include "dm-hottier-compat.h"

#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/string.h>

struct hottier_key_desc {
	const char *name;
	char *bad_value;		/* ti->error for a value that does not parse */
	int (*parse)(const char *value, struct hottier_args *args);
};

static const char * const discard_names[] = {
	[HOTTIER_DISCARD_PASSDOWN] = "passdown",
	[HOTTIER_DISCARD_IGNORE] = "ignore",
};

const char *hottier_discard_name(enum hottier_discard discard)
{
	return discard_names[discard];
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_discard_name);

static int parse_discard(const char *value, struct hottier_args *args)
{
	int i = match_string(discard_names, ARRAY_SIZE(discard_names), value);

	if (i < 0)
		return -EINVAL;
	args->discard = i;
	return 0;
}

static const struct hottier_key_desc keys[HOTTIER_NR_KEYS] = {
	[HOTTIER_KEY_DISCARD] = {
		.name = "discard",
		.bad_value = "Invalid discard value: expected passdown or ignore",
		.parse = parse_discard,
	},
};

static int parse_extent_size(const char *arg, u64 *extent, char **error)
{
	u64 v;

	/* Base 10 only; refuses signs other than '+', junk and overflow. */
	if (kstrtou64(arg, 10, &v)) {
		*error = "Invalid extent size: not a number";
		return -EINVAL;
	}
	if (v < HOTTIER_MIN_EXTENT_SECTORS || v > HOTTIER_MAX_EXTENT_SECTORS) {
		*error = "Extent size must be between 64 and 2097152 sectors";
		return -EINVAL;
	}
	if (!is_power_of_2(v)) {
		*error = "Extent size must be a power of two";
		return -EINVAL;
	}
	*extent = v;
	return 0;
}

static int find_key(const char *name)
{
	int i;

	for (i = 0; i < HOTTIER_NR_KEYS; i++)
		if (!strcmp(keys[i].name, name))
			return i;
	return -ENOENT;
}

static int parse_optional(unsigned int argc, char **argv,
			  struct hottier_args *args, char **error)
{
	unsigned long seen = 0;
	unsigned int count, i;

	if (kstrtouint(argv[0], 10, &count)) {
		*error = "Invalid optional argument count";
		return -EINVAL;
	}
	if (count % 2) {
		*error = "Optional argument count must be even (key value pairs)";
		return -EINVAL;
	}
	if (count != argc - 1) {
		*error = "Optional argument count does not match the arguments given";
		return -EINVAL;
	}

	for (i = 1; i < argc; i += 2) {
		int k = find_key(argv[i]);

		if (k < 0) {
			*error = "Unknown optional argument";
			return -EINVAL;
		}
		if (__test_and_set_bit(k, &seen)) {
			*error = "Optional argument given twice";
			return -EINVAL;
		}
		if (keys[k].parse(argv[i + 1], args)) {
			*error = keys[k].bad_value;
			return -EINVAL;
		}
	}
	return 0;
}

static void set_defaults(struct hottier_args *args)
{
	memset(args, 0, sizeof(*args));
	args->discard = HOTTIER_DISCARD_PASSDOWN;
}

/*
 * Parse everything after the target name. On success @args points into
 * @argv for the device paths; on failure *@error says why.
 */
int hottier_parse_args(unsigned int argc, char **argv,
		       struct hottier_args *args, char **error)
{
	int r;

	set_defaults(args);
	if (argc < HOTTIER_NR_POSITIONAL) {
		*error = "Not enough arguments (need <hdd_dev> <ssd_dev> <extent_sectors>)";
		return -EINVAL;
	}
	args->hdd_path = argv[0];
	args->ssd_path = argv[1];
	if (!strcmp(args->hdd_path, args->ssd_path)) {
		*error = "HDD and SSD must be different devices";
		return -EINVAL;
	}

	r = parse_extent_size(argv[2], &args->extent_sectors, error);
	if (r)
		return r;

	if (argc == HOTTIER_NR_POSITIONAL)
		return 0;
	return parse_optional(argc - HOTTIER_NR_POSITIONAL,
			      argv + HOTTIER_NR_POSITIONAL, args, error);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_parse_args);

/* Sizes in sectors: the target's length, then each member device's. */
int hottier_check_geometry(u64 target_len, u64 hdd_sectors, u64 ssd_sectors,
			   u64 extent_sectors, char **error)
{
	if (target_len > hdd_sectors) {
		*error = "Target length exceeds the HDD's size";
		return -EINVAL;
	}
	if (ssd_sectors < extent_sectors) {
		*error = "SSD is too small to hold one extent";
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_check_geometry);
