// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for dm-hottier's constructor argument parsing: every refusal
 * and the edge values around each bound, runtime key changes, how values
 * are printed back, and the SSD layout.
 */
#include <kunit/test.h>
#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>

#include "dm-hottier-args.h"
#include "dm-hottier-route.h"

#define MAX_WORDS 32

struct args_case {
	const char *desc;
	const char *line;	/* words after "hottier", space separated */
	int ret;
	const char *error;	/* expected *error when ret != 0 */
};

/* Split a const line into a writable argv, as dm core hands it over. */
static unsigned int split(struct kunit *test, const char *line, char **argv)
{
	size_t len = strlen(line) + 1;
	char *copy = kunit_kzalloc(test, len, GFP_KERNEL);
	unsigned int argc = 0;
	char *word;

	KUNIT_ASSERT_NOT_NULL(test, copy);
	strscpy(copy, line, len);
	while ((word = strsep(&copy, " ")) != NULL) {
		if (!*word)
			continue;
		KUNIT_ASSERT_LT(test, argc, (unsigned int)MAX_WORDS);
		argv[argc++] = word;
	}
	return argc;
}

#define HDD_ID_65 \
	"/dev/a /dev/b 2048 2 hdd_id aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct args_case refusals[] = {
	{ "no arguments", "", -EINVAL,
	  "Not enough arguments (need <hdd_dev> <ssd_dev> <extent_sectors>)" },
	{ "two arguments", "/dev/a /dev/b", -EINVAL,
	  "Not enough arguments (need <hdd_dev> <ssd_dev> <extent_sectors>)" },
	{ "same path twice", "/dev/a /dev/a 2048", -EINVAL,
	  "HDD and SSD must be different devices" },
	{ "extent with a suffix", "/dev/a /dev/b 12x", -EINVAL,
	  "Invalid extent size: not a number" },
	{ "extent negative", "/dev/a /dev/b -64", -EINVAL,
	  "Invalid extent size: not a number" },
	{ "extent hex", "/dev/a /dev/b 0x40", -EINVAL,
	  "Invalid extent size: not a number" },
	{ "extent below minimum", "/dev/a /dev/b 63", -EINVAL,
	  "Extent size must be between 64 and 2097152 sectors" },
	{ "extent zero", "/dev/a /dev/b 0", -EINVAL,
	  "Extent size must be between 64 and 2097152 sectors" },
	{ "extent not a power of two", "/dev/a /dev/b 65", -EINVAL,
	  "Extent size must be a power of two" },
	{ "extent 96", "/dev/a /dev/b 96", -EINVAL,
	  "Extent size must be a power of two" },
	{ "extent above maximum", "/dev/a /dev/b 4194304", -EINVAL,
	  "Extent size must be between 64 and 2097152 sectors" },
	{ "extent overflowing u64", "/dev/a /dev/b 99999999999999999999999",
	  -EINVAL, "Invalid extent size: not a number" },
	{ "count not a number", "/dev/a /dev/b 2048 two", -EINVAL,
	  "Invalid optional argument count" },
	{ "count negative", "/dev/a /dev/b 2048 -2 discard ignore", -EINVAL,
	  "Invalid optional argument count" },
	{ "odd count", "/dev/a /dev/b 2048 1 discard", -EINVAL,
	  "Optional argument count must be even (key value pairs)" },
	{ "count larger than the words", "/dev/a /dev/b 2048 2 discard",
	  -EINVAL, "Optional argument count does not match the arguments given" },
	{ "count smaller than the words", "/dev/a /dev/b 2048 2 discard ignore x y",
	  -EINVAL, "Optional argument count does not match the arguments given" },
	{ "zero count with words", "/dev/a /dev/b 2048 0 discard ignore",
	  -EINVAL, "Optional argument count does not match the arguments given" },
	{ "unknown key", "/dev/a /dev/b 2048 2 colour blue", -EINVAL,
	  "Unknown optional argument" },
	{ "key in upper case", "/dev/a /dev/b 2048 2 DISCARD ignore", -EINVAL,
	  "Unknown optional argument" },
	{ "repeated key", "/dev/a /dev/b 2048 4 discard ignore discard passdown",
	  -EINVAL, "Optional argument given twice" },
	{ "bad discard value", "/dev/a /dev/b 2048 2 discard sometimes", -EINVAL,
	  "Invalid discard value: expected passdown or ignore" },
	{ "empty-ish discard value", "/dev/a /dev/b 2048 2 discard pass",
	  -EINVAL, "Invalid discard value: expected passdown or ignore" },
	{ "repeated new key",
	  "/dev/a /dev/b 2048 4 max_tracked 16 max_tracked 16", -EINVAL,
	  "Optional argument given twice" },
	{ "repeated key among others",
	  "/dev/a /dev/b 2048 6 write_policy around discard ignore write_policy around",
	  -EINVAL, "Optional argument given twice" },
	{ "key with a typo", "/dev/a /dev/b 2048 2 promote_treshold 4",
	  -EINVAL, "Unknown optional argument" },
	{ "value and key swapped", "/dev/a /dev/b 2048 2 4 promote_threshold",
	  -EINVAL, "Unknown optional argument" },
	{ "bad value after good keys",
	  "/dev/a /dev/b 2048 6 discard ignore max_migrations 4 migration_mbps x",
	  -EINVAL,
	  "Invalid migration_mbps: expected 0 (unlimited) to 1000000" },
	{ "hdd_id of 65 bytes", HDD_ID_65,
	  -EINVAL,
	  "Invalid hdd_id: expected 1 to 64 printable ASCII characters, no blanks" },
	{ "hdd_id with a control character", "/dev/a /dev/b 2048 2 hdd_id a\x01b",
	  -EINVAL,
	  "Invalid hdd_id: expected 1 to 64 printable ASCII characters, no blanks" },
	{ "hdd_id twice", "/dev/a /dev/b 2048 4 hdd_id a hdd_id a", -EINVAL,
	  "Optional argument given twice" },
	{ "format_ssd other than yes", "/dev/a /dev/b 2048 4 hdd_id a format_ssd 1",
	  -EINVAL, "Invalid format_ssd value: expected yes" },
	{ "format_ssd twice",
	  "/dev/a /dev/b 2048 6 format_ssd yes hdd_id a format_ssd yes",
	  -EINVAL, "Optional argument given twice" },
	{ "format_ssd without hdd_id", "/dev/a /dev/b 2048 2 format_ssd yes",
	  -EINVAL, "format_ssd needs hdd_id: without it no map is kept" },
	{ "drop_replicas other than yes",
	  "/dev/a /dev/b 2048 4 hdd_id a drop_replicas no",
	  -EINVAL, "Invalid drop_replicas value: expected yes" },
	{ "drop_replicas twice",
	  "/dev/a /dev/b 2048 6 drop_replicas yes hdd_id a drop_replicas yes",
	  -EINVAL, "Optional argument given twice" },
	{ "drop_replicas without hdd_id",
	  "/dev/a /dev/b 2048 2 drop_replicas yes",
	  -EINVAL, "drop_replicas needs hdd_id: without it no map is kept" },
	{ "the HDD missing", "- /dev/b 2048", -EINVAL,
	  "The HDD cannot be missing: only the SSD may be given as -" },
	{ "both missing", "- - 2048", -EINVAL,
	  "HDD and SSD must be different devices" },
	{ "format_ssd of a missing SSD", "/dev/a - 2048 4 hdd_id a format_ssd yes",
	  -EINVAL, "format_ssd and drop_replicas need an SSD, not -" },
	{ "drop_replicas of a missing SSD",
	  "/dev/a - 2048 4 hdd_id a drop_replicas yes",
	  -EINVAL, "format_ssd and drop_replicas need an SSD, not -" },
};

static void case_desc(const struct args_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(refusal, refusals, case_desc);

static void parse_refuses(struct kunit *test)
{
	const struct args_case *c = test->param_value;
	struct hottier_args args;
	char *argv[MAX_WORDS];
	char *error = NULL;
	unsigned int argc = split(test, c->line, argv);

	KUNIT_EXPECT_EQ(test, hottier_parse_args(argc, argv, &args, &error),
			c->ret);
	KUNIT_ASSERT_NOT_NULL(test, error);
	KUNIT_EXPECT_STREQ(test, error, c->error);
}

struct accept_case {
	const char *desc;
	const char *line;
	u64 extent;
	enum hottier_discard discard;
};

static const struct accept_case accepts[] = {
	{ "minimum extent", "/dev/a /dev/b 64", 64, HOTTIER_DISCARD_PASSDOWN },
	{ "maximum extent", "/dev/a /dev/b 2097152", 2097152,
	  HOTTIER_DISCARD_PASSDOWN },
	{ "1 MiB extent", "/dev/a /dev/b 2048", 2048, HOTTIER_DISCARD_PASSDOWN },
	{ "zero optional count", "/dev/a /dev/b 128 0", 128,
	  HOTTIER_DISCARD_PASSDOWN },
	{ "discard ignore", "/dev/a /dev/b 2048 2 discard ignore", 2048,
	  HOTTIER_DISCARD_IGNORE },
	{ "discard passdown", "253:0 253:1 4096 2 discard passdown", 4096,
	  HOTTIER_DISCARD_PASSDOWN },
};

static void accept_desc(const struct accept_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(accept, accepts, accept_desc);

static void parse_accepts(struct kunit *test)
{
	const struct accept_case *c = test->param_value;
	struct hottier_args args;
	char *argv[MAX_WORDS];
	char *error = NULL;
	unsigned int argc = split(test, c->line, argv);

	KUNIT_ASSERT_EQ(test, hottier_parse_args(argc, argv, &args, &error), 0);
	KUNIT_EXPECT_NULL(test, error);
	KUNIT_EXPECT_PTR_EQ(test, args.hdd_path, (const char *)argv[0]);
	KUNIT_EXPECT_PTR_EQ(test, args.ssd_path, (const char *)argv[1]);
	KUNIT_EXPECT_EQ(test, args.extent_sectors, c->extent);
	KUNIT_EXPECT_EQ(test, args.discard, c->discard);
}

/*
 * hdd_id, format_ssd and drop_replicas, beside the keys of keys[], in any
 * order.
 */
static void parse_takes_the_map_keys(struct kunit *test)
{
	static const char line[] =
		"/dev/a /dev/b 2048 6 format_ssd yes routing ssd hdd_id wwn-0x5000c500a1b2c3d4";
	struct hottier_args args;
	char *argv[MAX_WORDS];
	char *error = NULL;
	unsigned int argc;

	argc = split(test, line, argv);
	KUNIT_ASSERT_EQ(test, hottier_parse_args(argc, argv, &args, &error), 0);
	KUNIT_EXPECT_STREQ(test, args.hdd_id, "wwn-0x5000c500a1b2c3d4");
	KUNIT_EXPECT_TRUE(test, args.format_ssd);
	KUNIT_EXPECT_EQ(test, args.routing, (u32)HOTTIER_ROUTING_SSD);
	/* Without them: no map, no format, as in 0.3. */
	argc = split(test, "/dev/a /dev/b 2048", argv);
	KUNIT_ASSERT_EQ(test, hottier_parse_args(argc, argv, &args, &error), 0);
	KUNIT_EXPECT_STREQ(test, args.hdd_id, "");
	KUNIT_EXPECT_FALSE(test, args.format_ssd);
	KUNIT_EXPECT_FALSE(test, args.drop_replicas);
	KUNIT_EXPECT_FALSE(test, args.no_ssd);
	/* drop_replicas; an SSD missing at boot, given as "-". */
	argc = split(test, "/dev/a /dev/b 2048 4 drop_replicas yes hdd_id a",
		     argv);
	KUNIT_ASSERT_EQ(test, hottier_parse_args(argc, argv, &args, &error), 0);
	KUNIT_EXPECT_TRUE(test, args.drop_replicas);
	KUNIT_EXPECT_FALSE(test, args.format_ssd);
	argc = split(test, "/dev/a - 2048 2 hdd_id a", argv);
	KUNIT_ASSERT_EQ(test, hottier_parse_args(argc, argv, &args, &error), 0);
	KUNIT_EXPECT_TRUE(test, args.no_ssd);
	KUNIT_EXPECT_STREQ(test, args.hdd_id, "a");
	/* Not runtime keys. */
	KUNIT_EXPECT_EQ(test, hottier_set_key(&args, "hdd_id", "x", true,
					      &error), -EINVAL);
}

/* A refusal after a key was parsed must not matter: defaults come first. */
static void parse_resets_defaults(struct kunit *test)
{
	struct hottier_args args;
	char *argv[MAX_WORDS];
	char *error = NULL;
	unsigned int argc;

	argc = split(test, "/dev/a /dev/b 2048 2 discard ignore", argv);
	KUNIT_ASSERT_EQ(test, hottier_parse_args(argc, argv, &args, &error), 0);
	argc = split(test, "/dev/a /dev/b 2048", argv);
	KUNIT_ASSERT_EQ(test, hottier_parse_args(argc, argv, &args, &error), 0);
	KUNIT_EXPECT_EQ(test, args.discard, HOTTIER_DISCARD_PASSDOWN);
}

static void discard_names(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, hottier_discard_name(HOTTIER_DISCARD_PASSDOWN),
			   "passdown");
	KUNIT_EXPECT_STREQ(test, hottier_discard_name(HOTTIER_DISCARD_IGNORE),
			   "ignore");
}

struct geometry_case {
	const char *desc;
	u64 target_len, hdd, ssd, extent;
	int ret;
	const char *error;
};

static const struct geometry_case geometries[] = {
	{ "target as long as the HDD", 1 << 20, 1 << 20, 4096, 2048, 0, NULL },
	{ "target shorter than the HDD", 4096, 1 << 20, 4096, 2048, 0, NULL },
	{ "target one sector past the HDD", (1 << 20) + 1, 1 << 20, 1 << 20,
	  2048, -EINVAL, "Target length exceeds the HDD's size" },
	{ "SSD of metadata and one extent", 1 << 20, 1 << 20, 4096, 2048, 0,
	  NULL },
	{ "SSD one sector short of metadata and an extent", 1 << 20, 1 << 20,
	  4095, 2048, -EINVAL,
	  "SSD is too small to hold its metadata and one extent" },
	{ "SSD of exactly one extent", 1 << 20, 1 << 20, 2048, 2048, -EINVAL,
	  "SSD is too small to hold its metadata and one extent" },
	{ "SSD larger than the HDD", 4096, 4096, 1 << 20, 64, 0, NULL },
};

static void geometry_desc(const struct geometry_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(geometry, geometries, geometry_desc);

static void check_geometry(struct kunit *test)
{
	const struct geometry_case *c = test->param_value;
	char *error = NULL;

	KUNIT_EXPECT_EQ(test, hottier_check_geometry(c->target_len, c->hdd,
						     c->ssd, c->extent, &error),
			c->ret);
	if (c->error) {
		KUNIT_ASSERT_NOT_NULL(test, error);
		KUNIT_EXPECT_STREQ(test, error, c->error);
	} else {
		KUNIT_EXPECT_NULL(test, error);
	}
}

/* Optional keys, one by one: the table line and runtime messages. */

/* The error for a key's bad value, as documented for users. */
static const char *bad_value_error(enum hottier_key key)
{
	switch (key) {
	case HOTTIER_KEY_DISCARD:
		return "Invalid discard value: expected passdown or ignore";
	case HOTTIER_KEY_WRITE_POLICY:
		return "Invalid write_policy value: expected through or around";
	case HOTTIER_KEY_PROMOTE_THRESHOLD:
		return "Invalid promote_threshold: expected 1 to 1000000 reads";
	case HOTTIER_KEY_SEQUENTIAL_CUTOFF_KB:
		return "Invalid sequential_cutoff_kb: expected 0 to 4194304";
	case HOTTIER_KEY_HEAT_HALFLIFE_MS:
		return "Invalid heat_halflife_ms: expected 100 to 86400000";
	case HOTTIER_KEY_MAX_MIGRATIONS:
		return "Invalid max_migrations: expected 1 to 64";
	case HOTTIER_KEY_MIGRATION_MBPS:
		return "Invalid migration_mbps: expected 0 (unlimited) to 1000000";
	case HOTTIER_KEY_MAX_TRACKED:
		return "Invalid max_tracked: expected 0 (auto) or 16 to 67108864";
	case HOTTIER_KEY_ROUTING:
		return "Invalid routing value: expected latency or ssd";
	case HOTTIER_KEY_MIGRATION_BUDGET_US:
		return "Invalid migration_budget_us: expected 0 (off) to 10000000";
	case HOTTIER_KEY_SSD_ERROR_THRESHOLD:
		return "Invalid ssd_error_threshold: expected 1 to 1000000";
	case HOTTIER_KEY_MAP_VERIFY:
		return "Invalid map_verify: expected 0 (off) to 1000000 replicas";
	default:
		return NULL;
	}
}

static u32 *field(struct hottier_args *args, enum hottier_key key)
{
	switch (key) {
	case HOTTIER_KEY_DISCARD:
		return (u32 *)&args->discard;
	case HOTTIER_KEY_WRITE_POLICY:
		return (u32 *)&args->write_policy;
	case HOTTIER_KEY_PROMOTE_THRESHOLD:
		return &args->promote_threshold;
	case HOTTIER_KEY_SEQUENTIAL_CUTOFF_KB:
		return &args->sequential_cutoff_kb;
	case HOTTIER_KEY_HEAT_HALFLIFE_MS:
		return &args->heat_halflife_ms;
	case HOTTIER_KEY_MAX_MIGRATIONS:
		return &args->max_migrations;
	case HOTTIER_KEY_MIGRATION_MBPS:
		return &args->migration_mbps;
	case HOTTIER_KEY_MAX_TRACKED:
		return &args->max_tracked;
	case HOTTIER_KEY_ROUTING:
		return &args->routing;
	case HOTTIER_KEY_MIGRATION_BUDGET_US:
		return &args->migration_budget_us;
	case HOTTIER_KEY_SSD_ERROR_THRESHOLD:
		return &args->ssd_error_threshold;
	case HOTTIER_KEY_MAP_VERIFY:
		return &args->map_verify;
	default:
		return NULL;
	}
}

static void expect_args_eq(struct kunit *test, const struct hottier_args *a,
			   const struct hottier_args *b)
{
	KUNIT_EXPECT_PTR_EQ(test, a->hdd_path, b->hdd_path);
	KUNIT_EXPECT_PTR_EQ(test, a->ssd_path, b->ssd_path);
	KUNIT_EXPECT_EQ(test, a->extent_sectors, b->extent_sectors);
	KUNIT_EXPECT_EQ(test, a->discard, b->discard);
	KUNIT_EXPECT_EQ(test, a->write_policy, b->write_policy);
	KUNIT_EXPECT_EQ(test, a->promote_threshold, b->promote_threshold);
	KUNIT_EXPECT_EQ(test, a->sequential_cutoff_kb,
			b->sequential_cutoff_kb);
	KUNIT_EXPECT_EQ(test, a->heat_halflife_ms, b->heat_halflife_ms);
	KUNIT_EXPECT_EQ(test, a->max_migrations, b->max_migrations);
	KUNIT_EXPECT_EQ(test, a->migration_mbps, b->migration_mbps);
	KUNIT_EXPECT_EQ(test, a->max_tracked, b->max_tracked);
	KUNIT_EXPECT_EQ(test, a->routing, b->routing);
	KUNIT_EXPECT_EQ(test, a->migration_budget_us, b->migration_budget_us);
	KUNIT_EXPECT_EQ(test, a->ssd_error_threshold, b->ssd_error_threshold);
	KUNIT_EXPECT_EQ(test, a->map_verify, b->map_verify);
}

/* Every key set away from its default, to see that others stay put. */
#define ALL_KEYS_LINE "/dev/a /dev/b 2048 24 discard ignore " \
	"write_policy around promote_threshold 9 sequential_cutoff_kb 77 " \
	"heat_halflife_ms 1234 max_migrations 3 migration_mbps 55 " \
	"max_tracked 4096 ssd_error_threshold 5 routing ssd " \
	"map_verify 32 migration_budget_us 15000"

static void parse_line(struct kunit *test, const char *line,
		       struct hottier_args *args)
{
	char **argv = kunit_kcalloc(test, MAX_WORDS, sizeof(*argv),
				    GFP_KERNEL);
	char *error = NULL;
	unsigned int argc;

	KUNIT_ASSERT_NOT_NULL(test, argv);
	argc = split(test, line, argv);
	KUNIT_ASSERT_EQ(test, hottier_parse_args(argc, argv, args, &error), 0);
}

struct key_case {
	const char *name;	/* the key as typed */
	enum hottier_key key;
	const char *value;
	bool ok;
	u32 expected;		/* the field when accepted */
};

#define ACCEPT(k, v, e)	{ #k, HOTTIER_KEY_##k, v, true, e }
#define REFUSE(k, v)	{ #k, HOTTIER_KEY_##k, v, false, 0 }

/* Keys are named by their enumerator; key_word() spells them as typed. */
static const struct key_case key_cases[] = {
	ACCEPT(DISCARD, "passdown", HOTTIER_DISCARD_PASSDOWN),
	ACCEPT(DISCARD, "ignore", HOTTIER_DISCARD_IGNORE),
	REFUSE(DISCARD, "Ignore"),
	REFUSE(DISCARD, "1"),
	REFUSE(DISCARD, ""),

	ACCEPT(WRITE_POLICY, "through", HOTTIER_WRITE_THROUGH),
	ACCEPT(WRITE_POLICY, "around", HOTTIER_WRITE_AROUND),
	REFUSE(WRITE_POLICY, "Through"),
	REFUSE(WRITE_POLICY, "writeback"),
	REFUSE(WRITE_POLICY, "thr"),
	REFUSE(WRITE_POLICY, "around "),
	REFUSE(WRITE_POLICY, "0"),
	REFUSE(WRITE_POLICY, "1"),
	REFUSE(WRITE_POLICY, ""),

	ACCEPT(PROMOTE_THRESHOLD, "1", 1),
	ACCEPT(PROMOTE_THRESHOLD, "4", 4),
	ACCEPT(PROMOTE_THRESHOLD, "1000000", 1000000),
	ACCEPT(PROMOTE_THRESHOLD, "007", 7),		/* decimal, not octal */
	ACCEPT(PROMOTE_THRESHOLD, "+7", 7),		/* as kstrtou32 */
	REFUSE(PROMOTE_THRESHOLD, "0"),
	REFUSE(PROMOTE_THRESHOLD, "1000001"),
	REFUSE(PROMOTE_THRESHOLD, "-1"),
	REFUSE(PROMOTE_THRESHOLD, "0x10"),
	REFUSE(PROMOTE_THRESHOLD, "12x"),
	REFUSE(PROMOTE_THRESHOLD, " 4"),
	REFUSE(PROMOTE_THRESHOLD, ""),
	REFUSE(PROMOTE_THRESHOLD, "4294967297"),	/* 1 modulo 2^32 */

	ACCEPT(SEQUENTIAL_CUTOFF_KB, "0", 0),
	ACCEPT(SEQUENTIAL_CUTOFF_KB, "4096", 4096),
	ACCEPT(SEQUENTIAL_CUTOFF_KB, "4194304", 4194304),
	REFUSE(SEQUENTIAL_CUTOFF_KB, "4194305"),
	REFUSE(SEQUENTIAL_CUTOFF_KB, "-1"),
	REFUSE(SEQUENTIAL_CUTOFF_KB, "0x0"),
	REFUSE(SEQUENTIAL_CUTOFF_KB, "4k"),

	ACCEPT(HEAT_HALFLIFE_MS, "100", 100),
	ACCEPT(HEAT_HALFLIFE_MS, "60000", 60000),
	ACCEPT(HEAT_HALFLIFE_MS, "86400000", 86400000),
	REFUSE(HEAT_HALFLIFE_MS, "99"),
	REFUSE(HEAT_HALFLIFE_MS, "0"),
	REFUSE(HEAT_HALFLIFE_MS, "86400001"),
	REFUSE(HEAT_HALFLIFE_MS, "-100"),
	REFUSE(HEAT_HALFLIFE_MS, "0x64"),
	REFUSE(HEAT_HALFLIFE_MS, "1e3"),

	ACCEPT(MAX_MIGRATIONS, "1", 1),
	ACCEPT(MAX_MIGRATIONS, "64", 64),
	REFUSE(MAX_MIGRATIONS, "0"),
	REFUSE(MAX_MIGRATIONS, "65"),
	REFUSE(MAX_MIGRATIONS, "-1"),
	REFUSE(MAX_MIGRATIONS, "0x40"),
	REFUSE(MAX_MIGRATIONS, "four"),
	/* Decimal: a leading + and zeros are taken (010 is ten). */
	ACCEPT(MAX_MIGRATIONS, "+8", 8),
	ACCEPT(MAX_MIGRATIONS, "010", 10),
	ACCEPT(MAX_MIGRATIONS, "+0064", 64),
	REFUSE(MAX_MIGRATIONS, "++8"),
	REFUSE(MAX_MIGRATIONS, "+"),

	ACCEPT(MIGRATION_MBPS, "0", 0),
	ACCEPT(MIGRATION_MBPS, "1", 1),
	ACCEPT(MIGRATION_MBPS, "1000000", 1000000),
	REFUSE(MIGRATION_MBPS, "1000001"),
	REFUSE(MIGRATION_MBPS, "-1"),
	REFUSE(MIGRATION_MBPS, "0x1"),
	REFUSE(MIGRATION_MBPS, "100M"),

	ACCEPT(MAX_TRACKED, "0", 0),
	ACCEPT(MAX_TRACKED, "16", 16),
	ACCEPT(MAX_TRACKED, "17", 17),
	ACCEPT(MAX_TRACKED, "67108864", 67108864),
	REFUSE(MAX_TRACKED, "1"),
	REFUSE(MAX_TRACKED, "2"),
	REFUSE(MAX_TRACKED, "15"),
	REFUSE(MAX_TRACKED, "67108865"),
	REFUSE(MAX_TRACKED, "-16"),
	REFUSE(MAX_TRACKED, "0x10"),
	REFUSE(MAX_TRACKED, "4294967312"),		/* 16 modulo 2^32 */

	ACCEPT(ROUTING, "latency", HOTTIER_ROUTING_LATENCY),
	ACCEPT(ROUTING, "ssd", HOTTIER_ROUTING_SSD),
	REFUSE(ROUTING, "SSD"),
	REFUSE(ROUTING, "hdd"),
	REFUSE(ROUTING, "0"),
	REFUSE(ROUTING, ""),

	ACCEPT(MIGRATION_BUDGET_US, "0", 0),
	ACCEPT(MIGRATION_BUDGET_US, "1", 1),
	ACCEPT(MIGRATION_BUDGET_US, "20000", 20000),
	ACCEPT(MIGRATION_BUDGET_US, "10000000", 10000000),
	REFUSE(MIGRATION_BUDGET_US, "10000001"),
	REFUSE(MIGRATION_BUDGET_US, "-1"),
	REFUSE(MIGRATION_BUDGET_US, "20ms"),
	REFUSE(MIGRATION_BUDGET_US, "4294967296"),	/* 0 modulo 2^32 */

	ACCEPT(SSD_ERROR_THRESHOLD, "1", 1),
	ACCEPT(SSD_ERROR_THRESHOLD, "8", 8),
	ACCEPT(SSD_ERROR_THRESHOLD, "1000000", 1000000),
	REFUSE(SSD_ERROR_THRESHOLD, "0"),
	REFUSE(SSD_ERROR_THRESHOLD, "1000001"),
	REFUSE(SSD_ERROR_THRESHOLD, "-8"),
	REFUSE(SSD_ERROR_THRESHOLD, "0x8"),

	ACCEPT(MAP_VERIFY, "0", 0),
	ACCEPT(MAP_VERIFY, "64", 64),
	ACCEPT(MAP_VERIFY, "1000000", 1000000),
	REFUSE(MAP_VERIFY, "1000001"),
	REFUSE(MAP_VERIFY, "-1"),
	REFUSE(MAP_VERIFY, "all"),
	REFUSE(MAP_VERIFY, ""),
};

static void key_case_desc(const struct key_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s \"%s\" %s", c->name,
		 c->value, c->ok ? "accepted" : "refused");
}

KUNIT_ARRAY_PARAM(key, key_cases, key_case_desc);

/* The key as typed in a table: its enumerator's name in lower case. */
static char *key_word(struct kunit *test, const struct key_case *c)
{
	char *word = kunit_kzalloc(test, strlen(c->name) + 1, GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, word);
	for (i = 0; c->name[i]; i++)
		word[i] = tolower(c->name[i]);
	return word;
}

static char *dup(struct kunit *test, const char *s)
{
	size_t len = strlen(s) + 1;
	char *copy = kunit_kzalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, copy);
	strscpy(copy, s, len);
	return copy;
}

/*
 * "<#args> 2 <key> <value>" on a table line: a good value is stored and
 * every other key keeps its default; a bad one gets the key's error.
 */
static void table_key_value(struct kunit *test)
{
	const struct key_case *c = test->param_value;
	struct hottier_args args, expected;
	char *error = NULL;
	char *argv[6];
	int r;

	argv[0] = dup(test, "/dev/a");
	argv[1] = dup(test, "/dev/b");
	argv[2] = dup(test, "2048");
	argv[3] = dup(test, "2");
	argv[4] = key_word(test, c);
	argv[5] = dup(test, c->value);

	KUNIT_ASSERT_EQ(test, hottier_parse_args(3, argv, &expected, &error),
			0);
	r = hottier_parse_args(ARRAY_SIZE(argv), argv, &args, &error);
	if (c->ok) {
		KUNIT_EXPECT_EQ(test, r, 0);
		KUNIT_EXPECT_NULL(test, error);
		*field(&expected, c->key) = c->expected;
		expect_args_eq(test, &args, &expected);
	} else {
		KUNIT_EXPECT_EQ(test, r, -EINVAL);
		KUNIT_ASSERT_NOT_NULL(test, error);
		KUNIT_EXPECT_STREQ(test, error, bad_value_error(c->key));
	}
}

/*
 * The same values as a runtime message (the table-only keys, discard and
 * max_tracked, as a table reload would set them): a good value changes that key alone, a bad one
 * changes nothing and gets the table's error. An accepted value printed
 * back is accepted again as the same value.
 */
static void runtime_key_value(struct kunit *test)
{
	const struct key_case *c = test->param_value;
	bool runtime = !hottier_key_table_only(c->key);
	struct hottier_args args, expected, again;
	char *key = key_word(test, c);
	char *error = NULL;
	char buf[32];
	int r;

	parse_line(test, ALL_KEYS_LINE, &args);
	expected = args;
	r = hottier_set_key(&args, key, c->value, runtime, &error);
	if (c->ok) {
		KUNIT_EXPECT_EQ(test, r, 0);
		KUNIT_EXPECT_NULL(test, error);
		*field(&expected, c->key) = c->expected;
	} else {
		KUNIT_EXPECT_EQ(test, r, -EINVAL);
		KUNIT_ASSERT_NOT_NULL(test, error);
		KUNIT_EXPECT_STREQ(test, error, bad_value_error(c->key));
	}
	expect_args_eq(test, &args, &expected);

	if (!c->ok)
		return;
	hottier_format_value(&args, c->key, buf, sizeof(buf));
	parse_line(test, ALL_KEYS_LINE, &again);
	KUNIT_EXPECT_EQ(test, hottier_set_key(&again, key, buf, runtime,
					      &error), 0);
	KUNIT_EXPECT_EQ(test, *field(&again, c->key), c->expected);
}

/* Every key as the table line and messages spell it. */
static void key_names(struct kunit *test)
{
	static const char * const names[HOTTIER_NR_KEYS] = {
		"discard", "write_policy", "promote_threshold",
		"sequential_cutoff_kb", "heat_halflife_ms", "max_migrations",
		"migration_mbps", "max_tracked", "routing",
		"migration_budget_us", "ssd_error_threshold", "map_verify",
	};
	int k;

	for (k = 0; k < HOTTIER_NR_KEYS; k++)
		KUNIT_EXPECT_STREQ(test, hottier_key_name(k), names[k]);
	KUNIT_EXPECT_STREQ(test, hottier_write_policy_name(HOTTIER_WRITE_THROUGH),
			   "through");
	KUNIT_EXPECT_STREQ(test, hottier_write_policy_name(HOTTIER_WRITE_AROUND),
			   "around");
	KUNIT_EXPECT_STREQ(test, hottier_routing_name(HOTTIER_ROUTING_LATENCY),
			   "latency");
	KUNIT_EXPECT_STREQ(test, hottier_routing_name(HOTTIER_ROUTING_SSD),
			   "ssd");
}

/* Without optional arguments, the documented defaults. */
static void parse_defaults(struct kunit *test)
{
	struct hottier_args args;

	parse_line(test, "/dev/a /dev/b 2048", &args);
	KUNIT_EXPECT_EQ(test, args.discard, HOTTIER_DISCARD_PASSDOWN);
	KUNIT_EXPECT_EQ(test, args.write_policy, HOTTIER_WRITE_THROUGH);
	KUNIT_EXPECT_EQ(test, args.promote_threshold, 4U);
	KUNIT_EXPECT_EQ(test, args.sequential_cutoff_kb, 4096U);
	KUNIT_EXPECT_EQ(test, args.heat_halflife_ms, 60000U);
	KUNIT_EXPECT_EQ(test, args.max_migrations, 4U);
	KUNIT_EXPECT_EQ(test, args.migration_mbps, 0U);
	KUNIT_EXPECT_EQ(test, args.max_tracked, 0U);
	KUNIT_EXPECT_EQ(test, args.routing, HOTTIER_ROUTING_LATENCY);
	KUNIT_EXPECT_EQ(test, args.migration_budget_us, 0U);
	KUNIT_EXPECT_EQ(test, args.ssd_error_threshold, 8U);
	KUNIT_EXPECT_EQ(test, args.map_verify, 0U);
}

/* Each default, printed, is a value its own key accepts at runtime. */
static void defaults_are_valid_values(struct kunit *test)
{
	struct hottier_args args, before;
	char *error = NULL;
	char buf[32];
	int k, r;

	parse_line(test, "/dev/a /dev/b 2048", &args);
	before = args;
	for (k = 0; k < HOTTIER_NR_KEYS; k++) {
		hottier_format_value(&args, k, buf, sizeof(buf));
		r = hottier_set_key(&args, hottier_key_name(k), buf, false,
				    &error);
		KUNIT_EXPECT_EQ_MSG(test, r, 0, "%s %s", hottier_key_name(k),
				    buf);
	}
	expect_args_eq(test, &args, &before);
}

/* All twelve keys on one line, in an order of their own. */
static void parse_every_key(struct kunit *test)
{
	struct hottier_args args;

	parse_line(test, ALL_KEYS_LINE, &args);
	KUNIT_EXPECT_EQ(test, args.extent_sectors, 2048ULL);
	KUNIT_EXPECT_EQ(test, args.discard, HOTTIER_DISCARD_IGNORE);
	KUNIT_EXPECT_EQ(test, args.write_policy, HOTTIER_WRITE_AROUND);
	KUNIT_EXPECT_EQ(test, args.promote_threshold, 9U);
	KUNIT_EXPECT_EQ(test, args.sequential_cutoff_kb, 77U);
	KUNIT_EXPECT_EQ(test, args.heat_halflife_ms, 1234U);
	KUNIT_EXPECT_EQ(test, args.max_migrations, 3U);
	KUNIT_EXPECT_EQ(test, args.migration_mbps, 55U);
	KUNIT_EXPECT_EQ(test, args.max_tracked, 4096U);
	KUNIT_EXPECT_EQ(test, args.routing, HOTTIER_ROUTING_SSD);
	KUNIT_EXPECT_EQ(test, args.migration_budget_us, 15000U);
	KUNIT_EXPECT_EQ(test, args.ssd_error_threshold, 5U);
	KUNIT_EXPECT_EQ(test, args.map_verify, 32U);

	parse_line(test, "/dev/a /dev/b 64 4 max_tracked 16 discard ignore",
		   &args);
	KUNIT_EXPECT_EQ(test, args.max_tracked, 16U);
	KUNIT_EXPECT_EQ(test, args.discard, HOTTIER_DISCARD_IGNORE);
	KUNIT_EXPECT_EQ(test, args.promote_threshold, 4U);
}

/*
 * max_tracked sizes preallocated memory: a message may not change it,
 * whatever the value (the key is refused before its value is looked at),
 * while the table path (runtime false) takes it.
 */
/*
 * discard (whether the device offers discard, fixed while the table lives),
 * max_tracked (it sizes memory) and map_verify (used at activation only)
 * change only with a table reload: a runtime change is refused and changes
 * nothing; a reload sets them.
 */
static void runtime_refuses_table_only_keys(struct kunit *test)
{
	static const struct {
		const char *key, *value;
	} refused[] = {
		{ "max_tracked", "4096" }, { "max_tracked", "0" },
		{ "max_tracked", "16" }, { "max_tracked", "junk" },
		{ "max_tracked", "1" }, { "discard", "ignore" },
		{ "discard", "passdown" }, { "discard", "junk" },
		{ "map_verify", "0" }, { "map_verify", "8" },
	};
	struct hottier_args args, before;
	char *error;
	unsigned int i;
	int k;

	for (k = 0; k < HOTTIER_NR_KEYS; k++)
		KUNIT_EXPECT_EQ_MSG(test, hottier_key_table_only(k),
				    k == HOTTIER_KEY_MAX_TRACKED ||
				    k == HOTTIER_KEY_DISCARD ||
				    k == HOTTIER_KEY_MAP_VERIFY,
				    "key %s", hottier_key_name(k));

	parse_line(test, ALL_KEYS_LINE, &args);
	before = args;
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		error = NULL;
		KUNIT_EXPECT_EQ(test, hottier_set_key(&args, refused[i].key,
						      refused[i].value, true,
						      &error),
				-EINVAL);
		KUNIT_ASSERT_NOT_NULL(test, error);
		KUNIT_EXPECT_STREQ(test, error,
				   "This key is set by a table reload only");
		expect_args_eq(test, &args, &before);
	}

	error = NULL;
	KUNIT_EXPECT_EQ(test, hottier_set_key(&args, "max_tracked", "65536",
					      false, &error), 0);
	KUNIT_EXPECT_NULL(test, error);
	KUNIT_EXPECT_EQ(test, args.max_tracked, 65536U);
	KUNIT_EXPECT_EQ(test, hottier_set_key(&args, "discard", "ignore",
					      false, &error), 0);
	KUNIT_EXPECT_EQ(test, args.discard, HOTTIER_DISCARD_IGNORE);

	/* Every other key may change at runtime. */
	KUNIT_EXPECT_EQ(test, hottier_set_key(&args, "promote_threshold", "8",
					      true, &error), 0);
	KUNIT_EXPECT_EQ(test, hottier_set_key(&args, "write_policy", "around",
					      true, &error), 0);
	KUNIT_EXPECT_EQ(test, args.promote_threshold, 8U);
	KUNIT_EXPECT_EQ(test, args.write_policy, HOTTIER_WRITE_AROUND);
}

static void runtime_refuses_unknown_key(struct kunit *test)
{
	static const char * const bad_keys[] = {
		"colour", "", "MAX_TRACKED", "Discard", "discard ", "promote",
		"max_tracked_x", "reset_stats",
	};
	struct hottier_args args, before;
	char *error;
	unsigned int i;
	int runtime, r;

	parse_line(test, ALL_KEYS_LINE, &args);
	before = args;
	for (runtime = 0; runtime <= 1; runtime++) {
		for (i = 0; i < ARRAY_SIZE(bad_keys); i++) {
			error = NULL;
			r = hottier_set_key(&args, bad_keys[i], "1", runtime,
					    &error);
			KUNIT_EXPECT_EQ(test, r, -EINVAL);
			KUNIT_ASSERT_NOT_NULL(test, error);
			KUNIT_EXPECT_STREQ(test, error,
					   "Unknown optional argument");
		}
	}
	expect_args_eq(test, &args, &before);
}

struct format_case {
	enum hottier_key key;
	u32 value;
	const char *printed;
};

static const struct format_case format_cases[] = {
	{ HOTTIER_KEY_DISCARD, HOTTIER_DISCARD_PASSDOWN, "passdown" },
	{ HOTTIER_KEY_DISCARD, HOTTIER_DISCARD_IGNORE, "ignore" },
	{ HOTTIER_KEY_WRITE_POLICY, HOTTIER_WRITE_THROUGH, "through" },
	{ HOTTIER_KEY_WRITE_POLICY, HOTTIER_WRITE_AROUND, "around" },
	{ HOTTIER_KEY_PROMOTE_THRESHOLD, 1000000, "1000000" },
	{ HOTTIER_KEY_SEQUENTIAL_CUTOFF_KB, 0, "0" },
	{ HOTTIER_KEY_HEAT_HALFLIFE_MS, 86400000, "86400000" },
	{ HOTTIER_KEY_MAX_MIGRATIONS, 64, "64" },
	{ HOTTIER_KEY_MIGRATION_MBPS, 1000000, "1000000" },
	{ HOTTIER_KEY_MAX_TRACKED, 67108864, "67108864" },
	{ HOTTIER_KEY_ROUTING, HOTTIER_ROUTING_LATENCY, "latency" },
	{ HOTTIER_KEY_ROUTING, HOTTIER_ROUTING_SSD, "ssd" },
	{ HOTTIER_KEY_MIGRATION_BUDGET_US, 10000000, "10000000" },
	{ HOTTIER_KEY_SSD_ERROR_THRESHOLD, 1, "1" },
	{ HOTTIER_KEY_MAP_VERIFY, 1000000, "1000000" },
	/* Unsigned, whatever got there. */
	{ HOTTIER_KEY_MAX_TRACKED, U32_MAX, "4294967295" },
};

static void format_desc(const struct format_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s %s",
		 hottier_key_name(c->key), c->printed);
}

KUNIT_ARRAY_PARAM(format, format_cases, format_desc);

/* Names for enumerations, decimal numbers; the length is returned. */
static void format_prints_names_and_decimals(struct kunit *test)
{
	const struct format_case *c = test->param_value;
	struct hottier_args args;
	char buf[32];

	parse_line(test, "/dev/a /dev/b 2048", &args);
	*field(&args, c->key) = c->value;
	KUNIT_EXPECT_EQ(test, hottier_format_value(&args, c->key, buf,
						   sizeof(buf)),
			(int)strlen(c->printed));
	KUNIT_EXPECT_STREQ(test, buf, c->printed);
}

/* A short buffer gets what fits and a terminating NUL. */
static void format_truncates(struct kunit *test)
{
	struct hottier_args args;
	char buf[8];
	int r;

	parse_line(test, "/dev/a /dev/b 2048 2 promote_threshold 1000000",
		   &args);
	memset(buf, 'x', sizeof(buf));
	r = hottier_format_value(&args, HOTTIER_KEY_PROMOTE_THRESHOLD, buf, 4);
	KUNIT_EXPECT_EQ(test, r, 3);
	KUNIT_EXPECT_STREQ(test, buf, "100");
	KUNIT_EXPECT_EQ(test, buf[4], 'x');
	r = hottier_format_value(&args, HOTTIER_KEY_WRITE_POLICY, buf, 3);
	KUNIT_EXPECT_EQ(test, r, 2);
	KUNIT_EXPECT_STREQ(test, buf, "th");
}

/* The SSD layout */

struct layout_case {
	const char *desc;
	u64 ssd, extent;
	u64 meta, slots;
};

/*
 * meta = round_up(8 + ceil(16 * floor(ssd / extent) / 512), extent) and
 * slots = floor((ssd - meta) / extent), worked out for each case.
 */
static const struct layout_case layout_cases[] = {
	/* 2^25 possible slots: a 2^20-sector map, so 2^20 + 64. */
	{ "64-sector extents, 1 TiB SSD", 1ULL << 31, 64,
	  (1ULL << 20) + 64, (1ULL << 25) - (1ULL << 14) - 1 },
	/* 1024 possible slots: a 32-sector map in the first extent. */
	{ "1 GiB extents, 1 TiB SSD", 1ULL << 31, 1ULL << 21,
	  1ULL << 21, 1023 },
	{ "1 GiB extents, SSD of meta and one extent", 1ULL << 22,
	  1ULL << 21, 1ULL << 21, 1 },
	{ "1 GiB extents, one sector less", (1ULL << 22) - 1, 1ULL << 21,
	  1ULL << 21, 0 },
	{ "1 MiB extents, SSD of meta and one extent", 4096, 2048, 2048, 1 },
	{ "1 MiB extents, one sector less", 4095, 2048, 2048, 0 },
	{ "64-sector extents, SSD of meta and one extent", 128, 64, 64, 1 },
	{ "64-sector extents, one sector less", 127, 64, 64, 0 },
	/* 32 slots: one map sector; 33: two, still in the first extent. */
	{ "32 slots' map in one sector", 32 * 64, 64, 64, 31 },
	{ "33 slots' map in two sectors", 33 * 64, 64, 64, 32 },
	/* 1792 slots: 56 map sectors + 8 fill 64; 1793: 57, a second. */
	{ "map filling the first extent exactly", 1792 * 64, 64, 64, 1791 },
	{ "map one sector into the second extent", 1793 * 64, 64, 128,
	  1791 },
	/* 2^21 slots: 65536 + 8 sectors, rounded up to 9 extents. */
	{ "4 MiB extents, 8 TiB SSD", 1ULL << 34, 8192, 9 * 8192,
	  (1ULL << 21) - 9 },
	{ "SSD smaller than an extent", 1000, 2048, 2048, 0 },
	{ "empty SSD", 0, 2048, 2048, 0 },
};

static void layout_desc(const struct layout_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(layout, layout_cases, layout_desc);

/* The geometry check refuses exactly the SSDs with no slot. */
static void layout_meta_and_slots(struct kunit *test)
{
	const struct layout_case *c = test->param_value;
	struct hottier_layout l;
	char *error = NULL;

	hottier_layout(c->ssd, c->extent, &l);
	KUNIT_EXPECT_EQ(test, l.meta_sectors, c->meta);
	KUNIT_EXPECT_EQ(test, l.nr_slots, c->slots);
	/* Slots never overlap the metadata nor run past the SSD. */
	KUNIT_EXPECT_EQ(test, l.meta_sectors % c->extent, 0ULL);
	if (l.nr_slots)
		KUNIT_EXPECT_LE(test, l.meta_sectors + l.nr_slots * c->extent,
				c->ssd);
	KUNIT_EXPECT_EQ(test, hottier_check_geometry(0, 0, c->ssd, c->extent,
						     &error),
			c->slots ? 0 : -EINVAL);
}

struct tracked_case {
	u32 max_tracked;
	u64 nr_slots, expected;
};

static const struct tracked_case tracked_cases[] = {
	/*
	 * Automatic: one per slot (for extents without a replica: a
	 * replica's heat is in its slot), at least one set of 16.
	 */
	{ 0, 0, 16 }, { 0, 1, 16 }, { 0, 15, 16 }, { 0, 16, 16 },
	{ 0, 17, 17 }, { 0, 1023, 1023 },
	/* The slots of a 1 TiB SSD of 64-sector extents (layout above). */
	{ 0, 33538047, 33538047 },
	/* Explicit: kept, whatever the slots. */
	{ 16, 1000000, 16 }, { 100, 0, 100 }, { 67108864, 1, 67108864 },
};

static void tracked_desc(const struct tracked_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "max_tracked %u, %llu slots",
		 c->max_tracked, (unsigned long long)c->nr_slots);
}

KUNIT_ARRAY_PARAM(tracked, tracked_cases, tracked_desc);

static void max_tracked_auto_or_kept(struct kunit *test)
{
	const struct tracked_case *c = test->param_value;
	struct hottier_args args;

	parse_line(test, "/dev/a /dev/b 2048", &args);
	args.max_tracked = c->max_tracked;
	KUNIT_EXPECT_EQ(test, hottier_max_tracked(&args, c->nr_slots),
			c->expected);
}

static struct kunit_case hottier_args_cases[] = {
	KUNIT_CASE_PARAM(parse_refuses, refusal_gen_params),
	KUNIT_CASE_PARAM(parse_accepts, accept_gen_params),
	KUNIT_CASE(parse_takes_the_map_keys),
	KUNIT_CASE(parse_resets_defaults),
	KUNIT_CASE(discard_names),
	KUNIT_CASE_PARAM(check_geometry, geometry_gen_params),
	KUNIT_CASE_PARAM(table_key_value, key_gen_params),
	KUNIT_CASE_PARAM(runtime_key_value, key_gen_params),
	KUNIT_CASE(key_names),
	KUNIT_CASE(parse_defaults),
	KUNIT_CASE(defaults_are_valid_values),
	KUNIT_CASE(parse_every_key),
	KUNIT_CASE(runtime_refuses_table_only_keys),
	KUNIT_CASE(runtime_refuses_unknown_key),
	KUNIT_CASE_PARAM(format_prints_names_and_decimals, format_gen_params),
	KUNIT_CASE(format_truncates),
	KUNIT_CASE_PARAM(layout_meta_and_slots, layout_gen_params),
	KUNIT_CASE_PARAM(max_tracked_auto_or_kept, tracked_gen_params),
	{}
};

static struct kunit_suite hottier_args_suite = {
	.name = "dm-hottier-args",
	.test_cases = hottier_args_cases,
};

kunit_test_suites(&hottier_args_suite);
