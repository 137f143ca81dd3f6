// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for dm-hottier's constructor argument parsing: every refusal
 * and the edge values around each bound.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>

#include "dm-hottier-args.h"

#define MAX_WORDS 12

struct args_case {
	const char *desc;
	const char *line;	/* words after "hottier", space separated */
	int ret;
	const char *error;	/* expected *error when ret != 0 */
};

/* Split a const line into a writable argv, as dm core hands it over. */
static unsigned int split(struct kunit *test, const char *line, char **argv)
{
	char *copy = kunit_kzalloc(test, strlen(line) + 1, GFP_KERNEL);
	unsigned int argc = 0;
	char *word;

	KUNIT_ASSERT_NOT_NULL(test, copy);
	strcpy(copy, line);
	while ((word = strsep(&copy, " ")) != NULL) {
		if (!*word)
			continue;
		KUNIT_ASSERT_LT(test, argc, (unsigned int)MAX_WORDS);
		argv[argc++] = word;
	}
	return argc;
}

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

static struct kunit_case hottier_args_cases[] = {
	KUNIT_CASE_PARAM(parse_refuses, refusal_gen_params),
	KUNIT_CASE_PARAM(parse_accepts, accept_gen_params),
	KUNIT_CASE(parse_resets_defaults),
	KUNIT_CASE(discard_names),
	KUNIT_CASE_PARAM(check_geometry, geometry_gen_params),
	{}
};

static struct kunit_suite hottier_args_suite = {
	.name = "dm-hottier-args",
	.test_cases = hottier_args_cases,
};

kunit_test_suites(&hottier_args_suite);
