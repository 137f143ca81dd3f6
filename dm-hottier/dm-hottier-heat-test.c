// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for dm-hottier's heat table (decay, the max_tracked bound,
 * recycling, busy ways) and its sequential stream detection.
 *
 * Expected values are worked out in the comments from the documented
 * arithmetic: heat is fixed point with HOTTIER_HEAT_ONE per read, and each
 * epoch within a half-life multiplies it by 2^(-1/4), kept as 861/1024,
 * 2^(-1/2) as 724/1024 and 2^(-3/4) as 609/1024, rounding down.
 *
 * The table's __ functions expect the set's lock: every call here goes
 * through a helper that takes and drops it, and no assertion runs with a
 * lock held. Entries are preallocated, so a pointer returned by a helper
 * stays valid after the lock is dropped in these single-threaded tests.
 *
 * Long loops count their failures and report the first, rather than
 * expect at every step: thousands of failure reports would overrun the
 * kernel log and hide the other cases' results.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "dm-hottier-compat.h"
#include "dm-hottier-heat.h"
#include "dm-hottier-policy.h"

/* Test-managed tables: freed when the test ends. */

static int table_res_init(struct kunit_resource *res, void *context)
{
	struct hottier_heat *h = kzalloc(sizeof(*h), GFP_KERNEL);
	int r;

	if (!h)
		return -ENOMEM;
	r = hottier_heat_init(h, *(u64 *)context);
	if (r) {
		kfree(h);
		return r;
	}
	res->data = h;
	return 0;
}

static void table_res_free(struct kunit_resource *res)
{
	hottier_heat_exit(res->data);
	kfree(res->data);
}

static struct hottier_heat *new_table(struct kunit *test, u64 max_tracked)
{
	struct hottier_heat *h;

	h = kunit_alloc_resource(test, table_res_init, table_res_free,
				 GFP_KERNEL, &max_tracked);
	KUNIT_ASSERT_NOT_NULL(test, h);
	return h;
}

/* Locked wrappers around the __ functions. */

static struct hottier_heat_set *set_of(struct hottier_heat *h, u64 extent)
{
	struct hottier_heat_set *set;
	unsigned long flags;

	set = hottier_heat_lock(h, extent, &flags);
	hottier_heat_unlock(set, flags);
	return set;
}

static struct hottier_heat_entry *heat_find(struct hottier_heat *h,
					    u64 extent)
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;

	set = hottier_heat_lock(h, extent, &flags);
	e = __hottier_heat_find(set, extent);
	hottier_heat_unlock(set, flags);
	return e;
}

static struct hottier_heat_entry *heat_get(struct hottier_heat *h,
					   u64 extent, u32 initial_heat)
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;

	set = hottier_heat_lock(h, extent, &flags);
	e = __hottier_heat_get(h, set, extent, initial_heat);
	hottier_heat_unlock(set, flags);
	return e;
}

static u32 heat_read(struct hottier_heat *h, struct hottier_heat_entry *e)
{
	struct hottier_heat_set *set;
	unsigned long flags;
	u32 heat;

	set = hottier_heat_lock(h, e->extent, &flags);
	heat = __hottier_heat_read(e);
	hottier_heat_unlock(set, flags);
	return heat;
}

static u32 heat_add(struct hottier_heat *h, struct hottier_heat_entry *e,
		    u32 amount)
{
	struct hottier_heat_set *set;
	unsigned long flags;
	u32 heat;

	set = hottier_heat_lock(h, e->extent, &flags);
	heat = __hottier_heat_add(e, amount);
	hottier_heat_unlock(set, flags);
	return heat;
}

static void heat_forget(struct hottier_heat *h, struct hottier_heat_entry *e)
{
	struct hottier_heat_set *set;
	unsigned long flags;

	set = hottier_heat_lock(h, e->extent, &flags);
	__hottier_heat_forget(h, e);
	hottier_heat_unlock(set, flags);
}

static void heat_set_flags(struct hottier_heat *h,
			   struct hottier_heat_entry *e, u32 set_flags,
			   u32 clear_flags)
{
	struct hottier_heat_set *set;
	unsigned long flags;

	set = hottier_heat_lock(h, e->extent, &flags);
	e->flags = (e->flags & ~clear_flags) | set_flags;
	hottier_heat_unlock(set, flags);
}

static void ticks(struct hottier_heat *h, unsigned int n)
{
	while (n--)
		hottier_heat_tick(h);
}

static u64 tracked(struct hottier_heat *h)
{
	return atomic_read(&h->tracked);
}

/*
 * Fill @out with @n extents from @from upwards whose set is @extent's: two
 * extents share a set when hottier_heat_lock() returns the same set.
 */
static void same_set(struct kunit *test, struct hottier_heat *h, u64 extent,
		     u64 from, u64 *out, unsigned int n)
{
	struct hottier_heat_set *set = set_of(h, extent);
	unsigned int found = 0;
	u64 e;

	for (e = from; found < n && e < from + 100000; e++)
		if (e != extent && set_of(h, e) == set)
			out[found++] = e;
	KUNIT_ASSERT_EQ_MSG(test, found, n, "too few extents share a set");
}

/* Decay arithmetic */

struct decay_case {
	u32 heat, epochs, expected;
};

/*
 * 1024 over the first two half-lives: the quarter factors themselves
 * (1024, 861, 724, 609), then half of each rounded down (512, 430, 362,
 * 304), then a quarter (256). One read (16) decays to 16 * 861 / 1024 =
 * 13.4 -> 13, 11.3 -> 11, 9.5 -> 9, 8, then 8 * 861 / 1024 = 6.7 -> 6,
 * 5.6 -> 5, 4.7 -> 4, and 4.
 */
static const struct decay_case decay_cases[] = {
	{ 1024, 0, 1024 }, { 1024, 1, 861 }, { 1024, 2, 724 },
	{ 1024, 3, 609 }, { 1024, 4, 512 }, { 1024, 5, 430 },
	{ 1024, 6, 362 }, { 1024, 7, 304 }, { 1024, 8, 256 },
	{ HOTTIER_HEAT_ONE, 0, 16 }, { HOTTIER_HEAT_ONE, 1, 13 },
	{ HOTTIER_HEAT_ONE, 2, 11 }, { HOTTIER_HEAT_ONE, 3, 9 },
	{ HOTTIER_HEAT_ONE, 4, 8 }, { HOTTIER_HEAT_ONE, 5, 6 },
	{ HOTTIER_HEAT_ONE, 6, 5 }, { HOTTIER_HEAT_ONE, 7, 4 },
	{ HOTTIER_HEAT_ONE, 8, 4 },
	{ 0, 0, 0 }, { 0, 5, 0 },
};

static void decay_desc(const struct decay_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "heat %u after %u epochs",
		 c->heat, c->epochs);
}

KUNIT_ARRAY_PARAM(decay, decay_cases, decay_desc);

static void decay_exact_for_0_to_8_epochs(struct kunit *test)
{
	const struct decay_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, hottier_heat_decay(c->heat, c->epochs),
			c->expected);
}

/* Whole half-lives are exact shifts, whatever the heat. */
static void decay_halves_per_halflife(struct kunit *test)
{
	static const u32 heats[] = { 1, 3, 1000003, HOTTIER_HEAT_MAX,
				     HOTTIER_HEAT_MAX - 1, U32_MAX };
	unsigned int i, k, bad = 0, bad_i = 0, bad_k = 0;

	for (i = 0; i < ARRAY_SIZE(heats); i++) {
		for (k = 0; k < 32; k++) {
			u32 heat = hottier_heat_decay(heats[i],
					k * HOTTIER_EPOCHS_PER_HALFLIFE);

			if (heat != heats[i] >> k && !bad++) {
				bad_i = i;
				bad_k = k;
			}
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "first: heat %u, %u half-lives",
			    heats[bad_i], bad_k);
}

/*
 * After 32 half-lives any u32 heat is gone; one epoch before, U32_MAX is
 * still 1 (U32_MAX >> 31) times 609/1024, also 0, and at 31 half-lives it
 * is exactly 1.
 */
static void decay_zero_after_32_halflives(struct kunit *test)
{
	const u32 e32 = 32 * HOTTIER_EPOCHS_PER_HALFLIFE;

	KUNIT_EXPECT_EQ(test, hottier_heat_decay(U32_MAX, e32), 0U);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(U32_MAX, e32 + 1), 0U);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(U32_MAX, e32 - 1), 0U);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(U32_MAX, e32 - 4), 1U);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(BIT(30), e32), 0U);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(BIT(30),
						 30 * HOTTIER_EPOCHS_PER_HALFLIFE),
			1U);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(BIT(30),
						 31 * HOTTIER_EPOCHS_PER_HALFLIFE),
			0U);
	/* The epoch count itself may be anything: a long idle entry. */
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(U32_MAX, U32_MAX), 0U);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(U32_MAX, 1U << 31), 0U);
}

/*
 * heat * factor needs more than 32 bits (any u32 heat, not only the
 * table's): 2^30 * 861 is exactly 861 << 20,
 * and (2^32 - 1) * 861 / 1024 is 861 << 22 less a fraction, so 861 << 22
 * minus one. A 32-bit product would wrap to something far smaller.
 */
static void decay_no_overflow_near_max(struct kunit *test)
{
	u32 e, prev, bad = 0, bad_e = 0;

	KUNIT_EXPECT_EQ(test, hottier_heat_decay(BIT(30), 0),
			BIT(30));
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(BIT(30), 1),
			861U << 20);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(BIT(30), 2),
			724U << 20);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(BIT(30), 3),
			609U << 20);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(BIT(30), 5),
			861U << 19);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(U32_MAX, 0), U32_MAX);
	KUNIT_EXPECT_EQ(test, hottier_heat_decay(U32_MAX, 1),
			(861U << 22) - 1);

	/* Never increasing with time, from the top of the range down. */
	prev = hottier_heat_decay(U32_MAX, 0);
	for (e = 1; e <= 33 * HOTTIER_EPOCHS_PER_HALFLIFE; e++) {
		u32 now = hottier_heat_decay(U32_MAX, e);

		if (now > prev && !bad++)
			bad_e = e;
		prev = now;
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "first rise at epoch %u", bad_e);
}

/* Lazy decay through the table */

/*
 * A set decays when it is locked, all its ways at once, by all the epochs
 * since it last was.
 */
static void lazy_decay_on_read(struct kunit *test)
{
	struct hottier_heat *h = new_table(test, 16);
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;

	e = heat_get(h, 42, 1024);
	KUNIT_ASSERT_NOT_NULL(test, e);
	set = set_of(h, 42);
	KUNIT_EXPECT_EQ(test, set->epoch, 0U);

	ticks(h, HOTTIER_EPOCHS_PER_HALFLIFE);
	/* Nothing locked the set: the stored value is as of epoch 0. */
	KUNIT_EXPECT_EQ(test, (u32)e->heat, 1024U);
	KUNIT_EXPECT_EQ(test, set->epoch, 0U);
	KUNIT_EXPECT_EQ(test, heat_read(h, e), 512U);
	KUNIT_EXPECT_EQ(test, set->epoch, (u32)HOTTIER_EPOCHS_PER_HALFLIFE);
	/* A second read in the same epoch does not decay it again. */
	KUNIT_EXPECT_EQ(test, heat_read(h, e), 512U);

	ticks(h, 1);
	KUNIT_EXPECT_EQ(test, heat_read(h, e), 430U);	/* 512 * 861 / 1024 */

	/* Eight epochs at once: exactly a quarter, not eight roundings. */
	e = heat_get(h, 43, 4096);
	KUNIT_ASSERT_NOT_NULL(test, e);
	ticks(h, 2 * HOTTIER_EPOCHS_PER_HALFLIFE);
	KUNIT_EXPECT_EQ(test, heat_read(h, e), 1024U);

	/* 32 half-lives of idleness leave nothing. */
	ticks(h, 32 * HOTTIER_EPOCHS_PER_HALFLIFE);
	KUNIT_EXPECT_EQ(test, heat_read(h, e), 0U);
}

/* Locking a set for one extent brings every way of it up to date. */
static void lazy_decay_whole_set(struct kunit *test)
{
	struct hottier_heat *h = new_table(test, HOTTIER_HEAT_WAYS);
	struct hottier_heat_entry *e[HOTTIER_HEAT_WAYS];
	struct hottier_heat_set *set;
	unsigned long flags;
	int i;

	/* One set: every extent lands in it. */
	for (i = 0; i < HOTTIER_HEAT_WAYS; i++) {
		e[i] = heat_get(h, 100 + i, 256 * (i + 1));
		KUNIT_ASSERT_NOT_NULL(test, e[i]);
	}
	ticks(h, HOTTIER_EPOCHS_PER_HALFLIFE);
	set = hottier_heat_lock(h, 100, &flags);
	hottier_heat_unlock(set, flags);
	for (i = 0; i < HOTTIER_HEAT_WAYS; i++)
		KUNIT_EXPECT_EQ(test, (u32)e[i]->heat, 128U * (i + 1));
}

/* An addition first brings the entry up to date, then adds. */
static void lazy_decay_on_add(struct kunit *test)
{
	struct hottier_heat *h = new_table(test, 16);
	struct hottier_heat_entry *e;

	e = heat_get(h, 7, 0);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, heat_add(h, e, 1024), 1024U);
	ticks(h, HOTTIER_EPOCHS_PER_HALFLIFE);
	KUNIT_EXPECT_EQ(test, heat_add(h, e, HOTTIER_HEAT_ONE), 512U + 16);
	KUNIT_EXPECT_EQ(test, set_of(h, 7)->epoch,
			(u32)HOTTIER_EPOCHS_PER_HALFLIFE);
	ticks(h, HOTTIER_EPOCHS_PER_HALFLIFE);
	KUNIT_EXPECT_EQ(test, heat_read(h, e), (512U + 16) / 2);
}

static void add_saturates_at_max(struct kunit *test)
{
	struct hottier_heat *h = new_table(test, 16);
	struct hottier_heat_entry *e;

	e = heat_get(h, 1, HOTTIER_HEAT_MAX - 1);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, heat_add(h, e, HOTTIER_HEAT_ONE),
			HOTTIER_HEAT_MAX);
	KUNIT_EXPECT_EQ(test, heat_add(h, e, HOTTIER_HEAT_ONE),
			HOTTIER_HEAT_MAX);
	/* heat + amount would wrap a u32: still the maximum. */
	KUNIT_EXPECT_EQ(test, heat_add(h, e, U32_MAX), HOTTIER_HEAT_MAX);
	KUNIT_EXPECT_EQ(test, (u32)e->heat, HOTTIER_HEAT_MAX);
	/* Saturated heat decays like any other. */
	ticks(h, HOTTIER_EPOCHS_PER_HALFLIFE);
	KUNIT_EXPECT_EQ(test, heat_read(h, e), HOTTIER_HEAT_MAX / 2);

	/* A new entry's initial heat is bounded the same way. */
	e = heat_get(h, 2, U32_MAX);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, heat_read(h, e), HOTTIER_HEAT_MAX);
}

/*
 * promote_threshold N is N * HOTTIER_HEAT_ONE of heat: without decay the
 * Nth read reaches it, not the one before, and evicts a victim with no
 * heat; into a free slot, the bar is half of it (one read at least).
 */
static void threshold_crossed_after_n_reads(struct kunit *test)
{
	static const u32 thresholds[] = { 1, 4, 10, 1000 };
	struct hottier_heat *h = new_table(test, 64);
	struct hottier_victim none = { .found = false };
	struct hottier_victim cold = { .found = true, .heat = 0 };
	unsigned int i, n;

	for (i = 0; i < ARRAY_SIZE(thresholds); i++) {
		u32 threshold = thresholds[i] * HOTTIER_HEAT_ONE;
		struct hottier_heat_entry *e = heat_get(h, 1000 + i, 0);
		unsigned int crossed_at = 0, evicted_at = 0, free_at = 0;

		KUNIT_ASSERT_NOT_NULL(test, e);
		for (n = 1; n <= thresholds[i] + 1; n++) {
			u32 heat = heat_add(h, e, HOTTIER_HEAT_ONE);

			if (heat >= threshold && !crossed_at)
				crossed_at = n;
			if (hottier_policy_promote(heat, false, threshold,
						   false, &cold) ==
			    HOTTIER_PROMOTE_EVICT && !evicted_at)
				evicted_at = n;
			if (hottier_policy_promote(heat, false, threshold,
						   true, &none) ==
			    HOTTIER_PROMOTE_FREE && !free_at)
				free_at = n;
		}
		KUNIT_EXPECT_EQ(test, crossed_at, thresholds[i]);
		KUNIT_EXPECT_EQ(test, evicted_at, thresholds[i]);
		KUNIT_EXPECT_EQ(test, free_at,
				max_t(u32, thresholds[i] / 2, 1));
	}
}

/*
 * One read per half-life converges to two reads' worth of heat from below
 * (h -> h / 2 + 16 has its fixed point at 32), so it never reaches a
 * threshold of two reads: 16, 24, 28, 30, 31, then 15 + 16 = 31 for ever.
 */
static void reads_slower_than_decay_never_cross(struct kunit *test)
{
	struct hottier_heat *h = new_table(test, 16);
	struct hottier_heat_entry *e = heat_get(h, 5, 0);
	u32 heat = 0, hottest = 0;
	int n;

	KUNIT_ASSERT_NOT_NULL(test, e);
	for (n = 0; n < 100; n++) {
		heat = heat_add(h, e, HOTTIER_HEAT_ONE);
		hottest = max(hottest, heat);
		ticks(h, HOTTIER_EPOCHS_PER_HALFLIFE);
	}
	KUNIT_EXPECT_LT(test, hottest, 2 * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, heat, 31U);
}

/* Capacity and the max_tracked bound */

struct capacity_case {
	u64 max_tracked, capacity;
};

static const struct capacity_case capacity_cases[] = {
	{ 1, 16 }, { 15, 16 }, { 16, 16 }, { 17, 32 }, { 100, 112 },
	{ 1000, 1008 }, { 4096, 4096 },
};

static void capacity_desc(const struct capacity_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "max_tracked %llu",
		 (unsigned long long)c->max_tracked);
}

KUNIT_ARRAY_PARAM(capacity, capacity_cases, capacity_desc);

static void capacity_rounds_up_to_16(struct kunit *test)
{
	const struct capacity_case *c = test->param_value;
	struct hottier_heat *h = new_table(test, c->max_tracked);

	KUNIT_EXPECT_EQ(test, hottier_heat_capacity(h), c->capacity);
	KUNIT_EXPECT_EQ(test, (u64)h->nr_sets * HOTTIER_HEAT_WAYS,
			c->capacity);
	KUNIT_EXPECT_EQ(test, tracked(h), 0ULL);
}

static void init_refuses_zero(struct kunit *test)
{
	struct hottier_heat h;

	KUNIT_EXPECT_EQ(test, hottier_heat_init(&h, 0), -EINVAL);
}

/*
 * Touching 100 times the capacity in distinct extents: every one gets an
 * entry (no way is busy, so each set always has one to recycle), tracked
 * never exceeds the capacity, and it counts exactly the extents still
 * findable.
 */
static void tracked_never_exceeds_capacity(struct kunit *test)
{
	const struct capacity_case *c = test->param_value;
	struct hottier_heat *h = new_table(test, c->max_tracked);
	u64 cap = hottier_heat_capacity(h);
	u64 nr = 100 * cap, e, max_seen = 0, findable = 0;
	unsigned int null_gets = 0;

	for (e = 0; e < nr; e++) {
		/* Heat varies so recycling picks among different values. */
		if (!heat_get(h, e * 7919, (u32)(e % 13) * HOTTIER_HEAT_ONE))
			null_gets++;
		max_seen = max(max_seen, tracked(h));
		if (e % 16 == 0)
			hottier_heat_tick(h);
	}
	KUNIT_EXPECT_EQ(test, null_gets, 0U);
	KUNIT_EXPECT_LE(test, max_seen, cap);
	KUNIT_EXPECT_LE(test, tracked(h), cap);

	for (e = 0; e < nr; e++)
		if (heat_find(h, e * 7919))
			findable++;
	KUNIT_EXPECT_EQ(test, findable, tracked(h));
	/* The extent touched last always has its entry. */
	KUNIT_EXPECT_NOT_NULL(test, heat_find(h, (nr - 1) * 7919));
}

/* Recycling */

/*
 * Fill one set's 16 ways with extents of distinct heat, ways[0] the
 * coldest; the table has several sets so the others must stay untouched.
 */
static struct hottier_heat *full_set(struct kunit *test, u64 *ext,
				     struct hottier_heat_entry **ways)
{
	struct hottier_heat *h = new_table(test, 64);
	int i;

	KUNIT_ASSERT_EQ(test, h->nr_sets, 4U);
	ext[0] = 3;
	same_set(test, h, ext[0], 1000, ext + 1, HOTTIER_HEAT_WAYS);
	for (i = 0; i < HOTTIER_HEAT_WAYS; i++) {
		ways[i] = heat_get(h, ext[i], (i + 1) * 100);
		KUNIT_ASSERT_NOT_NULL(test, ways[i]);
	}
	KUNIT_ASSERT_EQ(test, tracked(h), (u64)HOTTIER_HEAT_WAYS);
	return h;
}

/* Without busy ways, a new extent takes the coldest one's way. */
static void recycle_takes_coldest_way(struct kunit *test)
{
	u64 ext[HOTTIER_HEAT_WAYS + 1];
	struct hottier_heat_entry *ways[HOTTIER_HEAT_WAYS], *e;
	struct hottier_heat *h = full_set(test, ext, ways);
	int i;

	/* ext[16] is the 17th extent of the set. */
	e = heat_get(h, ext[HOTTIER_HEAT_WAYS], 0);
	KUNIT_EXPECT_PTR_EQ(test, e, ways[0]);
	KUNIT_EXPECT_NULL(test, heat_find(h, ext[0]));
	for (i = 1; i < HOTTIER_HEAT_WAYS; i++)
		KUNIT_EXPECT_PTR_EQ(test, heat_find(h, ext[i]), ways[i]);
	KUNIT_EXPECT_EQ(test, tracked(h), (u64)HOTTIER_HEAT_WAYS);
	/* The recycled way starts afresh. */
	KUNIT_EXPECT_EQ(test, (u64)e->extent, ext[HOTTIER_HEAT_WAYS]);
	KUNIT_EXPECT_EQ(test, (u32)e->heat, 0U);
	KUNIT_EXPECT_EQ(test, (u32)e->flags, (u16)HOTTIER_E_VALID);
}

/*
 * Coldness is the heat as of now: a way stored hot but idle for long is
 * colder than one stored cooler but touched lately.
 */
static void recycle_compares_decayed_heat(struct kunit *test)
{
	struct hottier_heat *h = new_table(test, 16);
	struct hottier_heat_entry *old, *e;
	u64 x;
	int i;

	/* One set: every extent shares it. */
	KUNIT_ASSERT_EQ(test, h->nr_sets, 1U);
	old = heat_get(h, 0, 1000);
	KUNIT_ASSERT_NOT_NULL(test, old);
	ticks(h, 3 * HOTTIER_EPOCHS_PER_HALFLIFE);	/* 1000 -> 125 */
	for (x = 1; x < HOTTIER_HEAT_WAYS; x++)
		KUNIT_ASSERT_NOT_NULL(test, heat_get(h, x, 200 + x));
	e = heat_get(h, 100, 0);
	KUNIT_EXPECT_PTR_EQ(test, e, old);
	KUNIT_EXPECT_NULL(test, heat_find(h, 0));
	for (i = 1; i < HOTTIER_HEAT_WAYS; i++)
		KUNIT_EXPECT_NOT_NULL(test, heat_find(h, i));
}

/*
 * Worth, not heat, decides: an extent hotter than the rest but unread for
 * an epoch is worth a quarter of its heat, and gives way to extents read
 * since; read again, it is worth its whole heat at once.
 */
static void recycle_takes_the_way_worth_least(struct kunit *test)
{
	struct hottier_heat *h = new_table(test, 16);
	struct hottier_heat_entry *old, *e;
	u64 x;

	KUNIT_ASSERT_EQ(test, h->nr_sets, 1U);
	old = heat_get(h, 0, 100 * HOTTIER_HEAT_ONE);
	KUNIT_ASSERT_NOT_NULL(test, old);
	for (x = 1; x < HOTTIER_HEAT_WAYS; x++)
		KUNIT_ASSERT_NOT_NULL(test, heat_get(h, x,
						     30 * HOTTIER_HEAT_ONE));
	/* Read this epoch, all of them: the coldest goes. */
	KUNIT_EXPECT_EQ(test, __hottier_heat_worth(old), 1600U);
	e = heat_get(h, 100, 0);
	KUNIT_EXPECT_PTR_NE(test, e, old);
	KUNIT_EXPECT_PTR_EQ(test, heat_find(h, 0), old);
	heat_add(h, e, 30 * HOTTIER_HEAT_ONE);

	/* One epoch on, the others are read again and 0 is not. */
	ticks(h, 1);
	for (x = 1; x < HOTTIER_HEAT_WAYS; x++) {
		e = heat_find(h, x == 1 ? 100 : x);
		KUNIT_ASSERT_NOT_NULL(test, e);
		heat_add(h, e, HOTTIER_HEAT_ONE);
	}
	/* 1600 decays to 1345, worth 336; the others 403 + 16, read. */
	KUNIT_EXPECT_EQ(test, heat_read(h, old), 1345U);
	KUNIT_EXPECT_EQ(test, __hottier_heat_worth(old), 336U);
	KUNIT_EXPECT_EQ(test, __hottier_heat_worth(heat_find(h, 2)), 419U);
	e = heat_get(h, 101, 0);
	KUNIT_EXPECT_PTR_EQ(test, e, old);
	KUNIT_EXPECT_NULL(test, heat_find(h, 0));
	KUNIT_EXPECT_EQ(test, (u32)e->idle, 0U);

	/* A read restores worth to heat. */
	ticks(h, 2);
	e = heat_find(h, 2);
	KUNIT_EXPECT_EQ(test, (u32)e->idle, 2U);
	KUNIT_EXPECT_EQ(test, __hottier_heat_worth(e), (u32)e->heat >> 4);
	heat_add(h, e, 0);
	KUNIT_EXPECT_EQ(test, (u32)e->idle, 0U);
	KUNIT_EXPECT_EQ(test, __hottier_heat_worth(e), (u32)e->heat);
}

/*
 * The unread count saturates and never wraps: after many epochs an entry
 * is worth its heat shifted by the most, and a set left untouched that long
 * counts every epoch of it at once.
 */
static void idle_count_saturates(struct kunit *test)
{
	struct hottier_heat *h = new_table(test, 16);
	struct hottier_heat_entry *e = heat_get(h, 5, HOTTIER_HEAT_MAX);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, e);
	for (i = 1; i <= 20; i++) {
		ticks(h, 1);
		heat_read(h, e);
		KUNIT_EXPECT_EQ_MSG(test, (u32)e->idle,
				    min_t(u32, i, HOTTIER_HEAT_IDLE_MAX),
				    "epoch %u", i);
	}
	e = heat_get(h, 6, HOTTIER_HEAT_MAX);
	KUNIT_ASSERT_NOT_NULL(test, e);
	ticks(h, 1000);
	heat_read(h, e);
	KUNIT_EXPECT_EQ(test, (u32)e->idle, (u32)HOTTIER_HEAT_IDLE_MAX);
	KUNIT_EXPECT_EQ(test, __hottier_heat_worth(e),
			(u32)e->heat >> (HOTTIER_HEAT_IDLE_MAX *
					 HOTTIER_HEAT_IDLE_SHIFT));
}

struct busy_case {
	const char *desc;
	u32 flags;
};

static const struct busy_case busy_cases[] = {
	{ "queued", HOTTIER_E_QUEUED },
	{ "every busy flag", HOTTIER_E_BUSY },
};

static void busy_desc(const struct busy_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(busy, busy_cases, busy_desc);

/*
 * The coldest ways are busy: recycling passes over them to the coldest
 * idle one. With only the hottest way idle, a flood of new extents churns
 * that one way and never touches a busy entry.
 */
static void recycle_skips_busy_ways(struct kunit *test)
{
	const struct busy_case *c = test->param_value;
	u64 ext[HOTTIER_HEAT_WAYS + 1], more[64];
	struct hottier_heat_entry *ways[HOTTIER_HEAT_WAYS], *e;
	struct hottier_heat *h = full_set(test, ext, ways);
	const unsigned int hottest = HOTTIER_HEAT_WAYS - 1;
	unsigned int i, elsewhere = 0;

	heat_set_flags(h, ways[0], c->flags, 0);
	heat_set_flags(h, ways[1], c->flags, 0);
	e = heat_get(h, ext[HOTTIER_HEAT_WAYS], 0);
	KUNIT_EXPECT_PTR_EQ(test, e, ways[2]);
	KUNIT_EXPECT_PTR_EQ(test, heat_find(h, ext[0]), ways[0]);
	KUNIT_EXPECT_PTR_EQ(test, heat_find(h, ext[1]), ways[1]);

	for (i = 2; i < hottest; i++)
		heat_set_flags(h, ways[i], c->flags, 0);
	same_set(test, h, ext[0], 200000, more, ARRAY_SIZE(more));
	for (i = 0; i < ARRAY_SIZE(more); i++)
		if (heat_get(h, more[i], 0) != ways[hottest])
			elsewhere++;
	KUNIT_EXPECT_EQ(test, elsewhere, 0U);
	for (i = 0; i < hottest; i++) {
		KUNIT_EXPECT_EQ(test, (u32)ways[i]->flags,
				(u16)(HOTTIER_E_VALID | c->flags));
		KUNIT_EXPECT_NOT_NULL(test, heat_find(h, (u64)ways[i]->extent));
	}
	KUNIT_EXPECT_EQ(test, tracked(h), (u64)HOTTIER_HEAT_WAYS);
}

/*
 * With all 16 ways busy the extent is simply not tracked; a way that turns
 * idle is the one recycled next, and other sets are not affected.
 */
static void get_null_when_set_all_busy(struct kunit *test)
{
	u64 ext[HOTTIER_HEAT_WAYS + 1], other;
	struct hottier_heat_entry *ways[HOTTIER_HEAT_WAYS];
	struct hottier_heat *h = full_set(test, ext, ways);
	int i;

	for (i = 0; i < HOTTIER_HEAT_WAYS; i++)
		heat_set_flags(h, ways[i], HOTTIER_E_QUEUED, 0);
	KUNIT_EXPECT_NULL(test, heat_get(h, ext[HOTTIER_HEAT_WAYS], 0));
	KUNIT_EXPECT_NULL(test, heat_get(h, ext[HOTTIER_HEAT_WAYS],
					 HOTTIER_HEAT_MAX));
	KUNIT_EXPECT_NULL(test, heat_find(h, ext[HOTTIER_HEAT_WAYS]));
	KUNIT_EXPECT_EQ(test, tracked(h), (u64)HOTTIER_HEAT_WAYS);

	/* A busy extent is still found by get, as itself. */
	KUNIT_EXPECT_PTR_EQ(test, heat_get(h, ext[5], 0), ways[5]);

	/* Another set still takes new extents. */
	for (other = 0; set_of(h, other) == set_of(h, ext[0]); other++)
		;
	KUNIT_EXPECT_NOT_NULL(test, heat_get(h, other, 0));
	KUNIT_EXPECT_EQ(test, tracked(h), (u64)HOTTIER_HEAT_WAYS + 1);

	/* One way turns idle: it is the only one to take. */
	heat_set_flags(h, ways[9], 0, HOTTIER_E_BUSY);
	KUNIT_EXPECT_PTR_EQ(test, heat_get(h, ext[HOTTIER_HEAT_WAYS], 0),
			    ways[9]);
	KUNIT_EXPECT_NULL(test, heat_find(h, ext[9]));
}

/* Forgetting frees a way: tracked drops, once, and the way is reused. */
static void forget_decrements_tracked(struct kunit *test)
{
	u64 ext[HOTTIER_HEAT_WAYS + 1];
	struct hottier_heat_entry *ways[HOTTIER_HEAT_WAYS], *e;
	struct hottier_heat *h = full_set(test, ext, ways);
	int i;

	heat_forget(h, ways[7]);
	KUNIT_EXPECT_EQ(test, tracked(h), (u64)HOTTIER_HEAT_WAYS - 1);
	KUNIT_EXPECT_NULL(test, heat_find(h, ext[7]));
	KUNIT_EXPECT_EQ(test, (u32)ways[7]->flags, 0);
	/* Forgetting a free way again changes nothing. */
	heat_forget(h, ways[7]);
	KUNIT_EXPECT_EQ(test, tracked(h), (u64)HOTTIER_HEAT_WAYS - 1);

	/* The free way is taken before the coldest (ways[0]) is recycled. */
	e = heat_get(h, ext[HOTTIER_HEAT_WAYS], 0);
	KUNIT_EXPECT_PTR_EQ(test, e, ways[7]);
	KUNIT_EXPECT_EQ(test, tracked(h), (u64)HOTTIER_HEAT_WAYS);
	for (i = 0; i < HOTTIER_HEAT_WAYS; i++)
		if (i != 7)
			KUNIT_EXPECT_PTR_EQ(test, heat_find(h, ext[i]),
					    ways[i]);

	for (i = 0; i < HOTTIER_HEAT_WAYS; i++)
		heat_forget(h, ways[i]);
	KUNIT_EXPECT_EQ(test, tracked(h), 0ULL);
}

/* A turnover empties the table: every set, every way, queued or not. */
static void forget_all_empties_every_set(struct kunit *test)
{
	struct hottier_heat *h = new_table(test, 64);
	struct hottier_heat_entry *e;
	u64 x;

	for (x = 0; x < 200; x++)
		heat_get(h, x * 7, 100);
	KUNIT_ASSERT_EQ(test, tracked(h), 64ULL);
	e = heat_get(h, 7, 0);
	KUNIT_ASSERT_NOT_NULL(test, e);
	e->flags |= HOTTIER_E_QUEUED;
	hottier_heat_forget_all(h);
	KUNIT_EXPECT_EQ(test, tracked(h), 0ULL);
	for (x = 0; x < 200; x++)
		KUNIT_EXPECT_NULL(test, heat_find(h, x * 7));
	/* The table works on: a read after it is one read. */
	e = heat_get(h, 7, HOTTIER_HEAT_ONE);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, heat_read(h, e), (u32)HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, tracked(h), 1ULL);
}

/*
 * A queued candidate with no heat at all, the coldest of its set, survives
 * a flood of hotter new extents through its set; once taken off the queue
 * it is the first to go.
 */
static void queued_survives_flood_until_taken(struct kunit *test)
{
	struct hottier_heat *h = new_table(test, 64);
	struct hottier_heat_entry *cand;
	u64 flood[200], next;
	unsigned int i, untracked = 0, took = 0;

	cand = heat_get(h, 77, 0);
	KUNIT_ASSERT_NOT_NULL(test, cand);
	heat_set_flags(h, cand, HOTTIER_E_QUEUED, 0);

	same_set(test, h, 77, 0, flood, ARRAY_SIZE(flood));
	for (i = 0; i < ARRAY_SIZE(flood); i++) {
		struct hottier_heat_entry *e;

		e = heat_get(h, flood[i], HOTTIER_HEAT_ONE);
		if (!e)
			untracked++;
		if (e == cand)
			took++;
	}
	KUNIT_EXPECT_EQ(test, untracked, 0U);
	KUNIT_EXPECT_EQ(test, took, 0U);
	KUNIT_EXPECT_PTR_EQ(test, heat_find(h, 77), cand);
	KUNIT_EXPECT_EQ(test, (u32)cand->flags,
			(u16)(HOTTIER_E_VALID | HOTTIER_E_QUEUED));

	heat_set_flags(h, cand, 0, HOTTIER_E_QUEUED);
	same_set(test, h, 77, 1000000, &next, 1);
	KUNIT_EXPECT_PTR_EQ(test, heat_get(h, next, HOTTIER_HEAT_ONE), cand);
	KUNIT_EXPECT_NULL(test, heat_find(h, 77));
}

/* Scan detection */

static struct hottier_seq *new_seq(struct kunit *test)
{
	struct hottier_seq *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	hottier_seq_init(s);
	return s;
}

static void seq_cutoff_zero_disables(struct kunit *test)
{
	struct hottier_seq *s = new_seq(test);
	unsigned int flagged = 0;
	u64 sector;

	for (sector = 0; sector < 100000; sector += 8)
		flagged += hottier_seq_note(s, sector, 8, 0);
	KUNIT_EXPECT_EQ(test, flagged, 0U);
	/* Even a single read of any length. */
	KUNIT_EXPECT_FALSE(test, hottier_seq_note(s, 100000, U32_MAX, 0));
}

struct seq_case {
	u32 nr_sectors;
	u64 cutoff;
};

/* Read sizes and cutoffs, from one sector to the default 4 MiB cutoff. */
static const struct seq_case seq_cases[] = {
	{ 8, 64 }, { 8, 60 }, { 8, 8 }, { 1, 1 }, { 7, 100 },
	{ 256, 8192 }, { 2048, 8192 },
};

static void seq_desc(const struct seq_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u-sector reads, cutoff %llu",
		 c->nr_sectors, (unsigned long long)c->cutoff);
}

KUNIT_ARRAY_PARAM(seq, seq_cases, seq_desc);

/*
 * The kth consecutive read makes a run of k * nr_sectors: it is flagged
 * exactly when that exceeds the cutoff, and every read after it too.
 */
static void seq_flagged_once_run_exceeds_cutoff(struct kunit *test)
{
	const struct seq_case *c = test->param_value;
	struct hottier_seq *s = new_seq(test);
	u64 k, first = div64_u64(c->cutoff, c->nr_sectors) + 1;
	u64 sector = 1ULL << 32, first_flagged = 0, unflagged_after = 0;

	for (k = 1; k <= 3 * first; k++) {
		bool flagged = hottier_seq_note(s, sector, c->nr_sectors,
						c->cutoff);

		if (flagged && !first_flagged)
			first_flagged = k;
		if (!flagged && first_flagged)
			unflagged_after++;
		sector += c->nr_sectors;
	}
	/* The first read whose run k * nr_sectors exceeds the cutoff. */
	KUNIT_EXPECT_EQ(test, first_flagged, first);
	KUNIT_EXPECT_GT(test, first * c->nr_sectors, c->cutoff);
	KUNIT_EXPECT_LE(test, (first - 1) * c->nr_sectors, c->cutoff);
	KUNIT_EXPECT_EQ(test, unflagged_after, 0ULL);
}

/*
 * Random reads no longer than the cutoff: every start is a multiple of
 * 1024 and every end is 8 past one, so no read continues another, each is
 * a run of 8 sectors, and 8 does not exceed a cutoff of 8.
 */
static void seq_random_reads_never_flagged(struct kunit *test)
{
	struct hottier_seq *s = new_seq(test);
	unsigned int flagged = 0;
	u32 x = 12345;
	int i;

	for (i = 0; i < 20000; i++) {
		u64 sector;

		x = x * 1664525 + 1013904223;	/* an LCG is random enough */
		sector = (u64)(x >> 4) * 1024;
		flagged += hottier_seq_note(s, sector, 8, 8);
	}
	KUNIT_EXPECT_EQ(test, flagged, 0U);
}

/*
 * The turnover detector's reads: a read is fresh unless it continues a
 * stream, whatever the stream's length or the cutoff; with detection off
 * every read is fresh.
 */
static void seq_read_fresh_unless_it_continues_a_stream(struct kunit *test)
{
	struct hottier_seq *s = new_seq(test);
	bool fresh = false;
	u64 sector;

	hottier_seq_read(s, 4096, 256, 8192, 7, &fresh);
	KUNIT_EXPECT_TRUE(test, fresh);
	for (sector = 4096 + 256; sector < 4096 + 32768; sector += 256) {
		hottier_seq_read(s, sector, 256, 8192, 7, &fresh);
		KUNIT_EXPECT_TRUE(test, !fresh);
	}
	/* Elsewhere, a gap, a repeat: fresh. */
	hottier_seq_read(s, 1000000, 8, 8192, 7, &fresh);
	KUNIT_EXPECT_TRUE(test, fresh);
	hottier_seq_read(s, 1000009, 8, 8192, 7, &fresh);
	KUNIT_EXPECT_TRUE(test, fresh);
	hottier_seq_read(s, 1000009, 8, 8192, 7, &fresh);
	KUNIT_EXPECT_TRUE(test, fresh);
	/* Detection off: every read, the stream's next one too. */
	fresh = false;
	hottier_seq_read(s, 1000017, 8, 0, 7, &fresh);
	KUNIT_EXPECT_TRUE(test, fresh);
	/* And whether it heats, with no fresh flag asked for. */
	KUNIT_EXPECT_EQ(test, hottier_seq_read(s, 1000025, 8, 8, 7, NULL),
			true);
	KUNIT_EXPECT_EQ(test, hottier_seq_read(s, 1000033, 8, 8, 7, NULL),
			false);
}

/*
 * A read that does not start where the stream left off starts a new run:
 * a gap of one sector, a jump back, or a repeat of the last read.
 */
static void seq_gap_restarts_run(struct kunit *test)
{
	static const s64 jumps[] = { 1, 8, -8, -16, 1 << 20 };
	struct hottier_seq *s = new_seq(test);
	u64 next = 1 << 24;
	int i, k;

	for (i = 0; i < ARRAY_SIZE(jumps); i++) {
		/* Build a run past the cutoff of 32: the 5th read is flagged. */
		for (k = 1; k <= 6; k++) {
			KUNIT_EXPECT_EQ(test, hottier_seq_note(s, next, 8, 32),
					k >= 5);
			next += 8;
		}
		next += jumps[i];
		/* The new run: flagged again from its 5th read only. */
		for (k = 1; k <= 6; k++) {
			bool flagged = hottier_seq_note(s, next, 8, 32);

			KUNIT_EXPECT_EQ_MSG(test, flagged, k >= 5,
					    "jump %lld, read %d", jumps[i], k);
			next += 8;
		}
		next += 1 << 16;
	}
}

/*
 * Whether a stream expecting sector a and one expecting sector b share a
 * bucket, found through the API alone on a scratch detector: a read that
 * leaves a stream expecting b overwrites the expectation of a only then.
 */
static bool seq_share_bucket(struct hottier_seq *scratch, u64 a, u64 b)
{
	hottier_seq_init(scratch);
	hottier_seq_note(scratch, a - 1, 1, 1);		/* expects a */
	hottier_seq_note(scratch, b - 1, 1, 1);		/* expects b */
	return !hottier_seq_note(scratch, a, 1, 1);	/* a's run went on? */
}

#define SEQ_STEPS 40

/*
 * Two interleaved streams are both detected, each from its own fifth read
 * with a cutoff of 4 reads, as long as their expectations never meet in a
 * bucket (buckets are hashed; sharing one is the documented limit). The
 * second stream's start is chosen, among candidates, so they never meet.
 */
static void seq_interleaved_streams_both_detected(struct kunit *test)
{
	struct hottier_seq *s = new_seq(test), *scratch = new_seq(test);
	const u32 n = 16;
	const u64 cutoff = 4 * n, a0 = 1ULL << 30;
	u64 b0 = 0, cand;
	int k;

	/*
	 * After their kth reads a expects a0 + k * n, and b's kth read writes
	 * its own expectation b0 + k * n; then a's next read writes
	 * a0 + (k + 1) * n while b still expects b0 + k * n.
	 */
	for (cand = 1; cand <= 64 && !b0; cand++) {
		u64 b = a0 + (cand << 24);

		b0 = b;
		for (k = 0; k < SEQ_STEPS && b0; k++)
			if (seq_share_bucket(scratch, a0 + (k + 1) * n,
					     b + (k + 1) * n) ||
			    seq_share_bucket(scratch, b + (k + 1) * n,
					     a0 + (k + 2) * n))
				b0 = 0;
	}
	KUNIT_ASSERT_NE_MSG(test, b0, 0ULL, "no second stream found");

	for (k = 1; k <= SEQ_STEPS; k++) {
		bool a = hottier_seq_note(s, a0 + (k - 1) * n, n, cutoff);
		bool b = hottier_seq_note(s, b0 + (k - 1) * n, n, cutoff);

		KUNIT_EXPECT_EQ_MSG(test, a, k >= 5, "stream a, read %d", k);
		KUNIT_EXPECT_EQ_MSG(test, b, k >= 5, "stream b, read %d", k);
	}
}

/*
 * Passes of one stream of 8-sector reads over 16 extents of 128 sectors,
 * cutoff 256: the head (the first 256 sectors, extents 0 and 1) heats per
 * read, 16 each; past it each extent heats once per pass, by the read that
 * enters it. A new pass starts a new run (it does not continue the last),
 * so it heats the same way again.
 */
static void seq_stream_heats_each_extent_once_per_pass(struct kunit *test)
{
	const unsigned int shift = 7, passes = 3, extents = 16;
	const u64 base = 1ULL << 30, cutoff = 256;
	struct hottier_seq *s = new_seq(test);
	unsigned int heat[16] = { 0 }, p, e;
	u64 sector;

	for (p = 0; p < passes; p++)
		for (sector = base; sector < base + (extents << shift);
		     sector += 8)
			heat[(sector - base) >> shift] +=
				hottier_seq_read(s, sector, 8, cutoff, shift,
						 NULL);
	for (e = 0; e < extents; e++)
		KUNIT_EXPECT_EQ_MSG(test, heat[e], e < 2 ? 16 * passes : passes,
				    "extent %u", e);
}

/* Reads that continue no stream, or with detection off, all heat. */
static void seq_random_reads_and_cutoff_zero_always_heat(struct kunit *test)
{
	struct hottier_seq *s = new_seq(test);
	unsigned int heated = 0, n = 0;
	u32 x = 777;
	u64 sector;
	int i;

	for (i = 0; i < 5000; i++, n++) {
		x = x * 1664525 + 1013904223;
		/* Inside a 128-sector extent, never at its start. */
		sector = (u64)(x >> 4) * 1024 + 8;
		heated += hottier_seq_read(s, sector, 8, 8, 7, NULL);
	}
	for (sector = 8; sector < 100000; sector += 8, n++)
		heated += hottier_seq_read(s, sector, 8, 0, 7, NULL);
	KUNIT_EXPECT_EQ(test, heated, n);
}

/*
 * A stream that starts inside an extent heats it with its first read (not
 * yet a stream), then the next extents once each past the cutoff.
 */
static void seq_unaligned_stream_heats_its_first_extent(struct kunit *test)
{
	struct hottier_seq *s = new_seq(test);
	unsigned int heat[4] = { 0 };
	u64 sector, base = 1ULL << 20;

	for (sector = base + 64; sector < base + 4 * 128; sector += 8)
		heat[(sector - base) >> 7] +=
			hottier_seq_read(s, sector, 8, 8, 7, NULL);
	KUNIT_EXPECT_EQ(test, heat[0], 1U);
	KUNIT_EXPECT_EQ(test, heat[1], 1U);
	KUNIT_EXPECT_EQ(test, heat[2], 1U);
	KUNIT_EXPECT_EQ(test, heat[3], 1U);
}

/* Administrators' views: heat bands and the top list. */

static void band_edges_are_powers_of_two(struct kunit *test)
{
	static const struct { u32 reads; unsigned int band; } cases[] = {
		{ 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 2 }, { 4, 3 }, { 7, 3 },
		{ 8, 4 }, { 16383, 14 }, { 16384, 15 }, { 1U << 27, 15 },
	};
	unsigned int i, b;
	u32 lo, hi;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, hottier_heat_band(cases[i].reads *
							     HOTTIER_HEAT_ONE),
				    cases[i].band, "%u reads", cases[i].reads);
	/* Less than a read of heat is band 0. */
	KUNIT_EXPECT_EQ(test, hottier_heat_band(HOTTIER_HEAT_ONE - 1), 0U);
	/* The ranges tile 0..max: each band starts after the last ends. */
	hottier_heat_band_range(0, &lo, &hi);
	KUNIT_EXPECT_EQ(test, lo, 0U);
	KUNIT_EXPECT_EQ(test, hi, 0U);
	for (b = 1; b < HOTTIER_HEAT_BANDS; b++) {
		u32 prev_hi = hi;

		hottier_heat_band_range(b, &lo, &hi);
		KUNIT_EXPECT_EQ_MSG(test, lo, prev_hi + 1, "band %u", b);
		KUNIT_EXPECT_EQ_MSG(test, hottier_heat_band(lo *
							    HOTTIER_HEAT_ONE),
				    b, "band %u", b);
		KUNIT_EXPECT_EQ_MSG(test, hottier_heat_band(hi *
							    HOTTIER_HEAT_ONE),
				    b, "band %u", b);
	}
	KUNIT_EXPECT_EQ(test, hi, U32_MAX >> HOTTIER_HEAT_SHIFT);
}

static void top_keeps_the_hottest_in_order(struct kunit *test)
{
	static const u32 heats[] = { 5, 9, 1, 9, 30, 2, 7, 30, 0, 8 };
	/* The 4 hottest; of equal heat, the first offered first. */
	static const u64 want[] = { 4, 7, 1, 3 };
	struct hottier_top t = { };
	struct hottier_top top[4];
	unsigned int used = 0, i;

	for (i = 0; i < ARRAY_SIZE(heats); i++) {
		t.extent = i;
		t.heat = heats[i];
		t.resident = i == 7;
		hottier_top_add(top, ARRAY_SIZE(top), &used, &t);
		KUNIT_EXPECT_LE(test, used, (unsigned int)ARRAY_SIZE(top));
	}
	KUNIT_ASSERT_EQ(test, used, 4U);
	for (i = 0; i < used; i++)
		KUNIT_EXPECT_EQ_MSG(test, top[i].extent, want[i], "rank %u", i);
	KUNIT_EXPECT_TRUE(test, top[1].resident);
	KUNIT_EXPECT_FALSE(test, top[0].resident);
	KUNIT_EXPECT_EQ(test, top[0].heat, 30U);
	KUNIT_EXPECT_EQ(test, top[3].heat, 9U);
}

static void top_with_fewer_entries_than_asked(struct kunit *test)
{
	struct hottier_top t = { .extent = 42, .heat = 3 };
	struct hottier_top top[8];
	unsigned int used = 0;

	hottier_top_add(top, 8, &used, &t);
	t.extent = 43;
	t.heat = 4;
	hottier_top_add(top, 8, &used, &t);
	KUNIT_ASSERT_EQ(test, used, 2U);
	KUNIT_EXPECT_EQ(test, top[0].extent, 43ULL);
	KUNIT_EXPECT_EQ(test, top[1].extent, 42ULL);
	/* n = 0 keeps nothing. */
	used = 0;
	hottier_top_add(top, 0, &used, &t);
	KUNIT_EXPECT_EQ(test, used, 0U);
}

static struct kunit_case hottier_heat_cases[] = {
	KUNIT_CASE(band_edges_are_powers_of_two),
	KUNIT_CASE(top_keeps_the_hottest_in_order),
	KUNIT_CASE(top_with_fewer_entries_than_asked),
	KUNIT_CASE_PARAM(decay_exact_for_0_to_8_epochs, decay_gen_params),
	KUNIT_CASE(decay_halves_per_halflife),
	KUNIT_CASE(decay_zero_after_32_halflives),
	KUNIT_CASE(decay_no_overflow_near_max),
	KUNIT_CASE(lazy_decay_on_read),
	KUNIT_CASE(lazy_decay_whole_set),
	KUNIT_CASE(lazy_decay_on_add),
	KUNIT_CASE(add_saturates_at_max),
	KUNIT_CASE(threshold_crossed_after_n_reads),
	KUNIT_CASE(reads_slower_than_decay_never_cross),
	KUNIT_CASE_PARAM(capacity_rounds_up_to_16, capacity_gen_params),
	KUNIT_CASE(init_refuses_zero),
	KUNIT_CASE_PARAM(tracked_never_exceeds_capacity, capacity_gen_params),
	KUNIT_CASE(recycle_takes_coldest_way),
	KUNIT_CASE(recycle_compares_decayed_heat),
	KUNIT_CASE(recycle_takes_the_way_worth_least),
	KUNIT_CASE(idle_count_saturates),
	KUNIT_CASE_PARAM(recycle_skips_busy_ways, busy_gen_params),
	KUNIT_CASE(get_null_when_set_all_busy),
	KUNIT_CASE(forget_decrements_tracked),
	KUNIT_CASE(forget_all_empties_every_set),
	KUNIT_CASE(queued_survives_flood_until_taken),
	KUNIT_CASE(seq_cutoff_zero_disables),
	KUNIT_CASE_PARAM(seq_flagged_once_run_exceeds_cutoff, seq_gen_params),
	KUNIT_CASE(seq_random_reads_never_flagged),
	KUNIT_CASE(seq_read_fresh_unless_it_continues_a_stream),
	KUNIT_CASE(seq_gap_restarts_run),
	KUNIT_CASE(seq_interleaved_streams_both_detected),
	KUNIT_CASE(seq_stream_heats_each_extent_once_per_pass),
	KUNIT_CASE(seq_random_reads_and_cutoff_zero_always_heat),
	KUNIT_CASE(seq_unaligned_stream_heats_its_first_extent),
	{}
};

static struct kunit_suite hottier_heat_suite = {
	.name = "dm-hottier-heat",
	.test_cases = hottier_heat_cases,
};

kunit_test_suites(&hottier_heat_suite);

MODULE_DESCRIPTION("KUnit tests for dm-hottier");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(HOTTIER_TEST_NS);
