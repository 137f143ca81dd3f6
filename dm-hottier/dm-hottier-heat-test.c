// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for dm-hottier's heat table, scan detection, ghost list and
 * promotion policy.
 */
#include <kunit/test.h>
#include <linux/module.h>

#include "dm-hottier-heat.h"
#include "dm-hottier-policy.h"

static void decay_halves_per_halflife(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(1024, 0), 1024U);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(1024, HOTTIER_EPOCHS_PER_HALFLIFE), 512U);
}

static struct kunit_case hottier_heat_cases[] = {
	KUNIT_CASE(decay_halves_per_halflife),
	{}
};

static struct kunit_suite hottier_heat_suite = {
	.name = "dm-hottier-heat",
	.test_cases = hottier_heat_cases,
};

kunit_test_suites(&hottier_heat_suite);

MODULE_DESCRIPTION("KUnit tests for dm-hottier");
MODULE_LICENSE("GPL");
