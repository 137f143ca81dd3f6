// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: constructor argument parsing.
 *
 * Table: <hdd_dev> <ssd_dev> <extent_sectors> [<#args> <key> <value>...]
 */
#include "dm-hottier-args.h"
#include "dm-hottier-compat.h"
#include "dm-hottier-meta.h"
#include "dm-hottier-route.h"

#include <linux/kernel.h>
#include <linux/blkdev.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/string.h>

#define HOTTIER_ERR_HDD_ID \
	"Invalid hdd_id: expected 1 to 64 printable ASCII characters, no blanks"

/*
 * A key is an enumeration (names[]) or a number in [min, max], stored in
 * the u32 at offset in struct hottier_args.
 */
struct hottier_key_desc {
	const char *name;
	char *bad_value;		/* error for a value that does not parse */
	const char * const *names;	/* enumerations, NULL terminated */
	u32 min, max;			/* numbers */
	size_t offset;
	bool table_only;		/* changed by a table reload only */
};

static const char * const discard_names[] = {
	[HOTTIER_DISCARD_PASSDOWN] = "passdown",
	[HOTTIER_DISCARD_IGNORE] = "ignore",
	NULL
};

static const char * const write_policy_names[] = {
	[HOTTIER_WRITE_THROUGH] = "through",
	[HOTTIER_WRITE_AROUND] = "around",
	NULL
};

static const char * const routing_names[] = {
	[HOTTIER_ROUTING_LATENCY] = "latency",
	[HOTTIER_ROUTING_SSD] = "ssd",
	NULL
};

const char *hottier_routing_name(u32 routing)
{
	return routing_names[routing];
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_routing_name);

const char *hottier_discard_name(enum hottier_discard discard)
{
	return discard_names[discard];
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_discard_name);

const char *hottier_write_policy_name(enum hottier_write_policy policy)
{
	return write_policy_names[policy];
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_write_policy_name);

#define ENUM_KEY(_name, _names, _field, _error) {			\
	.name = _name, .bad_value = _error, .names = _names,		\
	.offset = offsetof(struct hottier_args, _field) }
#define NUM_KEY(_name, _field, _min, _max, _error) {			\
	.name = _name, .bad_value = _error, .min = _min, .max = _max,	\
	.offset = offsetof(struct hottier_args, _field) }

static const struct hottier_key_desc keys[HOTTIER_NR_KEYS] = {
	/* Whether the device offers discard is fixed while the table lives. */
	[HOTTIER_KEY_DISCARD] = {
		.name = "discard", .names = discard_names,
		.offset = offsetof(struct hottier_args, discard),
		.bad_value = "Invalid discard value: expected passdown or ignore",
		.table_only = true },
	[HOTTIER_KEY_WRITE_POLICY] = ENUM_KEY("write_policy",
		write_policy_names, write_policy,
		"Invalid write_policy value: expected through or around"),
	[HOTTIER_KEY_PROMOTE_THRESHOLD] = NUM_KEY("promote_threshold",
		promote_threshold, 1, 1000000,
		"Invalid promote_threshold: expected 1 to 1000000 reads"),
	[HOTTIER_KEY_SEQUENTIAL_CUTOFF_KB] = NUM_KEY("sequential_cutoff_kb",
		sequential_cutoff_kb, 0, 4194304,
		"Invalid sequential_cutoff_kb: expected 0 to 4194304"),
	[HOTTIER_KEY_HEAT_HALFLIFE_MS] = NUM_KEY("heat_halflife_ms",
		heat_halflife_ms, 100, 86400000,
		"Invalid heat_halflife_ms: expected 100 to 86400000"),
	[HOTTIER_KEY_MAX_MIGRATIONS] = NUM_KEY("max_migrations",
		max_migrations, 1, HOTTIER_MAX_MIGRATIONS,
		"Invalid max_migrations: expected 1 to 64"),
	[HOTTIER_KEY_MIGRATION_MBPS] = NUM_KEY("migration_mbps",
		migration_mbps, 0, 1000000,
		"Invalid migration_mbps: expected 0 (unlimited) to 1000000"),
	[HOTTIER_KEY_MAX_TRACKED] = {
		.name = "max_tracked", .min = 0, .max = 1U << 26,
		.offset = offsetof(struct hottier_args, max_tracked),
		.bad_value = "Invalid max_tracked: expected 0 (auto) or 16 to 67108864",
		.table_only = true },
	[HOTTIER_KEY_ROUTING] = ENUM_KEY("routing", routing_names, routing,
		"Invalid routing value: expected latency or ssd"),
	[HOTTIER_KEY_MIGRATION_BUDGET_US] = NUM_KEY("migration_budget_us",
		migration_budget_us, 0, 10000000,
		"Invalid migration_budget_us: expected 0 (off) to 10000000"),
	[HOTTIER_KEY_SSD_ERROR_THRESHOLD] = NUM_KEY("ssd_error_threshold",
		ssd_error_threshold, 1, 1000000,
		"Invalid ssd_error_threshold: expected 1 to 1000000"),
	/* Used when the on-SSD map is taken over: at activation. */
	[HOTTIER_KEY_MAP_VERIFY] = {
		.name = "map_verify", .min = 0, .max = 1000000,
		.offset = offsetof(struct hottier_args, map_verify),
		.bad_value = "Invalid map_verify: expected 0 (off) to 1000000 replicas",
		.table_only = true },
};

const char *hottier_key_name(enum hottier_key key)
{
	return keys[key].name;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_key_name);

static u32 *key_field(struct hottier_args *args, const struct hottier_key_desc *k)
{
	return (u32 *)((char *)args + k->offset);
}

static int parse_value(const struct hottier_key_desc *k, const char *value,
		       u32 *v)
{
	int i;

	if (k->names) {
		i = match_string(k->names, -1, value);
		if (i < 0)
			return -EINVAL;
		*v = i;
		return 0;
	}
	if (kstrtou32(value, 10, v) || *v < k->min || *v > k->max)
		return -EINVAL;
	/* max_tracked: 0 means automatic, else at least one set's worth. */
	if (k == &keys[HOTTIER_KEY_MAX_TRACKED] && *v && *v < 16)
		return -EINVAL;
	return 0;
}

/* The value as the table line prints it. */
int hottier_format_value(const struct hottier_args *args, enum hottier_key key,
			 char *buf, size_t len)
{
	const struct hottier_key_desc *k = &keys[key];
	u32 v = *key_field((struct hottier_args *)args, k);

	if (k->names)
		return scnprintf(buf, len, "%s", k->names[v]);
	return scnprintf(buf, len, "%u", v);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_format_value);

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

/* A one-shot key whose only value is "yes". */
static int parse_yes(const char *value, bool *flag, char *bad, char **error)
{
	if (*flag) {
		*error = "Optional argument given twice";
		return -EINVAL;
	}
	if (strcmp(value, "yes")) {
		*error = bad;
		return -EINVAL;
	}
	*flag = true;
	return 1;
}

/*
 * The keys of the on-SSD map, outside keys[]: hdd_id, a string, printed in
 * the table line when set; format_ssd and drop_replicas, one-shot requests
 * never printed, so that a table line fed back can never format an SSD or
 * drop its replicas. 1 if @name is one of them and was parsed, 0 if it is
 * not one, < 0 on error.
 */
static int parse_map_key(const char *name, const char *value,
			 struct hottier_args *args, char **error)
{
	if (!strcmp(name, "hdd_id")) {
		if (args->hdd_id[0]) {
			*error = "Optional argument given twice";
			return -EINVAL;
		}
		if (!hottier_id_valid(value)) {
			*error = HOTTIER_ERR_HDD_ID;
			return -EINVAL;
		}
		strscpy(args->hdd_id, value, sizeof(args->hdd_id));
		return 1;
	}
	if (!strcmp(name, "format_ssd"))
		return parse_yes(value, &args->format_ssd,
				 "Invalid format_ssd value: expected yes", error);
	if (!strcmp(name, "drop_replicas"))
		return parse_yes(value, &args->drop_replicas,
				 "Invalid drop_replicas value: expected yes",
				 error);
	return 0;
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
		int k = parse_map_key(argv[i], argv[i + 1], args, error);

		if (k < 0)
			return k;
		if (k)
			continue;
		k = find_key(argv[i]);
		if (k < 0) {
			*error = "Unknown optional argument";
			return -EINVAL;
		}
		if (__test_and_set_bit(k, &seen)) {
			*error = "Optional argument given twice";
			return -EINVAL;
		}
		if (parse_value(&keys[k], argv[i + 1], key_field(args, &keys[k]))) {
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
	args->write_policy = HOTTIER_WRITE_THROUGH;
	args->promote_threshold = 4;
	args->sequential_cutoff_kb = 4096;
	args->heat_halflife_ms = 60000;
	args->max_migrations = 4;
	args->migration_mbps = 0;
	args->max_tracked = 0;
	args->routing = HOTTIER_ROUTING_LATENCY;
	args->migration_budget_us = 0;
	args->ssd_error_threshold = 8;
	args->map_verify = 0;
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
	if (!strcmp(args->hdd_path, "-")) {
		*error = "The HDD cannot be missing: only the SSD may be given as -";
		return -EINVAL;
	}
	/* An SSD missing at boot: the HDD alone, degraded, until a reload. */
	args->no_ssd = !strcmp(args->ssd_path, "-");

	r = parse_extent_size(argv[2], &args->extent_sectors, error);
	if (r)
		return r;

	if (argc == HOTTIER_NR_POSITIONAL)
		return 0;
	r = parse_optional(argc - HOTTIER_NR_POSITIONAL,
			   argv + HOTTIER_NR_POSITIONAL, args, error);
	if (!r && (args->format_ssd || args->drop_replicas) &&
	    !args->hdd_id[0]) {
		*error = args->format_ssd ?
			"format_ssd needs hdd_id: without it no map is kept" :
			"drop_replicas needs hdd_id: without it no map is kept";
		r = -EINVAL;
	}
	if (!r && args->no_ssd && (args->format_ssd || args->drop_replicas)) {
		*error = "format_ssd and drop_replicas need an SSD, not -";
		r = -EINVAL;
	}
	return r;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_parse_args);

bool hottier_is_key(const char *name)
{
	return find_key(name) >= 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_is_key);

bool hottier_key_table_only(enum hottier_key key)
{
	return keys[key].table_only;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_key_table_only);

/*
 * A key set at runtime (a "<key> <value>" message): same names and bounds
 * as the table line; a bad value leaves @args unchanged.
 */
int hottier_set_key(struct hottier_args *args, const char *key,
		    const char *value, bool runtime, char **error)
{
	int k = find_key(key);
	u32 v;

	if (k < 0) {
		*error = "Unknown optional argument";
		return -EINVAL;
	}
	if (runtime && keys[k].table_only) {
		*error = "This key is set by a table reload only";
		return -EINVAL;
	}
	if (parse_value(&keys[k], value, &v)) {
		*error = keys[k].bad_value;
		return -EINVAL;
	}
	/* The data path reads runtime keys with READ_ONCE(), unlocked. */
	WRITE_ONCE(*key_field(args, &keys[k]), v);
	return 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_set_key);

/* The metadata area holds a map entry for every slot the SSD could hold. */
void hottier_layout(u64 ssd_sectors, u64 extent_sectors,
		    struct hottier_layout *layout)
{
	u64 max_slots = div64_u64(ssd_sectors, extent_sectors);
	u64 map_sectors = DIV_ROUND_UP_ULL(max_slots * HOTTIER_MAP_ENTRY_BYTES,
					   SECTOR_SIZE);

	layout->meta_sectors = round_up(HOTTIER_SB_SECTORS + map_sectors,
					extent_sectors);
	layout->nr_slots = ssd_sectors > layout->meta_sectors ?
		div64_u64(ssd_sectors - layout->meta_sectors, extent_sectors) : 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_layout);

/*
 * Heat-table entries, for extents without a replica: max_tracked, or one
 * per slot (at least one set).
 */
u64 hottier_max_tracked(const struct hottier_args *args, u64 nr_slots)
{
	if (args->max_tracked)
		return args->max_tracked;
	return max_t(u64, nr_slots, 16);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_max_tracked);

/* Sizes in sectors: the target's length, then each member device's. */
int hottier_check_geometry(u64 target_len, u64 hdd_sectors, u64 ssd_sectors,
			   u64 extent_sectors, char **error)
{
	struct hottier_layout layout;

	if (target_len > hdd_sectors) {
		*error = "Target length exceeds the HDD's size";
		return -EINVAL;
	}
	hottier_layout(ssd_sectors, extent_sectors, &layout);
	if (!layout.nr_slots) {
		*error = "SSD is too small to hold its metadata and one extent";
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_check_geometry);
