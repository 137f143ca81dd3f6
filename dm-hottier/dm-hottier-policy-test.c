// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for dm-hottier's promotion policy (threshold, free slots,
 * eviction with a hysteresis margin of one threshold, pins) and the
 * migration token bucket.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/time64.h>

#include "dm-hottier-heat.h"
#include "dm-hottier-policy.h"

/* promote_threshold 4, the default, in fixed point: the margin too. */
#define THR	(4 * HOTTIER_HEAT_ONE)

struct promote_case {
	const char *desc;
	u32 heat;
	bool pinned;
	u32 threshold;
	bool free_slot;
	struct hottier_victim victim;
	enum hottier_promote_action expected;
};

#define NO_VICTIM	{ .found = false }
#define VICTIM(h)	{ .found = true, .heat = (h) }
#define CUT_VICTIM(h)	{ .found = true, .cut = true, .heat = (h) }

static const struct promote_case promote_cases[] = {
	{ "no heat", 0, false, THR, true, VICTIM(0), HOTTIER_PROMOTE_NONE },
	{ "one below half the threshold, free slot", THR / 2 - 1, false, THR,
	  true, NO_VICTIM, HOTTIER_PROMOTE_NONE },
	{ "at half the threshold, free slot", THR / 2, false, THR, true,
	  NO_VICTIM, HOTTIER_PROMOTE_FREE },
	{ "one below threshold, free slot", THR - 1, false, THR, true,
	  NO_VICTIM, HOTTIER_PROMOTE_FREE },
	{ "half the threshold, cold victim", THR / 2, false, THR, false,
	  VICTIM(0), HOTTIER_PROMOTE_NONE },
	{ "half the threshold, victim the rate rule cut", THR / 2, false, THR,
	  false, CUT_VICTIM(HOTTIER_HEAT_ONE - 1), HOTTIER_PROMOTE_EVICT },
	{ "one below half the threshold, victim cut", THR / 2 - 1, false, THR,
	  false, CUT_VICTIM(0), HOTTIER_PROMOTE_NONE },
	{ "free slot preferred to a cut victim", THR / 2, false, THR, true,
	  CUT_VICTIM(0), HOTTIER_PROMOTE_FREE },
	{ "threshold of one read, free slot, no heat", HOTTIER_HEAT_ONE - 1,
	  false, HOTTIER_HEAT_ONE, true, NO_VICTIM, HOTTIER_PROMOTE_NONE },
	{ "threshold of one read, free slot, one read", HOTTIER_HEAT_ONE,
	  false, HOTTIER_HEAT_ONE, true, NO_VICTIM, HOTTIER_PROMOTE_FREE },
	{ "one below threshold, cold victim", THR - 1, false, THR, false,
	  VICTIM(0), HOTTIER_PROMOTE_NONE },
	{ "at threshold, free slot", THR, false, THR, true, NO_VICTIM,
	  HOTTIER_PROMOTE_FREE },
	{ "free slot preferred to a cold victim", HOTTIER_HEAT_MAX, false,
	  THR, true, VICTIM(0), HOTTIER_PROMOTE_FREE },
	{ "no free slot, no victim", HOTTIER_HEAT_MAX, false, THR, false,
	  NO_VICTIM, HOTTIER_PROMOTE_NONE },
	{ "equal heat never swaps", 1000, false, THR, false, VICTIM(1000),
	  HOTTIER_PROMOTE_NONE },
	{ "equal heat at threshold never swaps", THR, false, THR, false,
	  VICTIM(THR), HOTTIER_PROMOTE_NONE },
	{ "victim colder by margin - 1", 1000, false, THR, false,
	  VICTIM(1000 - THR + 1), HOTTIER_PROMOTE_NONE },
	{ "victim colder by the margin", 1000, false, THR, false,
	  VICTIM(1000 - THR), HOTTIER_PROMOTE_EVICT },
	{ "victim colder by more than the margin", 1000, false, THR, false,
	  VICTIM(0), HOTTIER_PROMOTE_EVICT },
	{ "at threshold, victim with no heat", THR, false, THR, false,
	  VICTIM(0), HOTTIER_PROMOTE_EVICT },
	{ "victim hotter", THR, false, THR, false, VICTIM(THR + 1),
	  HOTTIER_PROMOTE_NONE },
	{ "threshold of one read, margin one read", 2 * HOTTIER_HEAT_ONE,
	  false, HOTTIER_HEAT_ONE, false, VICTIM(HOTTIER_HEAT_ONE),
	  HOTTIER_PROMOTE_EVICT },
	{ "victim heat + margin past U32_MAX", U32_MAX, false, THR, false,
	  VICTIM(U32_MAX - THR + 1), HOTTIER_PROMOTE_NONE },
	{ "maximum heat, victim exactly a margin below", HOTTIER_HEAT_MAX,
	  false, THR, false, VICTIM(HOTTIER_HEAT_MAX - THR),
	  HOTTIER_PROMOTE_EVICT },
	{ "pinned with no heat, free slot", 0, true, THR, true, NO_VICTIM,
	  HOTTIER_PROMOTE_FREE },
	{ "pinned with no heat, hot victim", 0, true, THR, false,
	  VICTIM(HOTTIER_HEAT_MAX), HOTTIER_PROMOTE_EVICT },
	{ "pinned, equal heat", 1000, true, THR, false, VICTIM(1000),
	  HOTTIER_PROMOTE_EVICT },
	{ "pinned, no free slot, no victim", HOTTIER_HEAT_MAX, true, THR,
	  false, NO_VICTIM, HOTTIER_PROMOTE_NONE },
};

static void promote_desc(const struct promote_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(promote, promote_cases, promote_desc);

static void promote_decides(struct kunit *test)
{
	const struct promote_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test,
			hottier_policy_promote(c->heat, c->pinned, c->threshold,
					       c->free_slot, &c->victim),
			c->expected);
}

/*
 * The bar: the threshold on a full SSD; with free slots half of it, and
 * never less than one read, so promote_threshold 1 keeps its meaning and
 * 1000000 still turns heat promotion off.
 */
static void bar_is_half_the_threshold_while_slots_are_free(struct kunit *test)
{
	static const u32 reads[] = { 1, 2, 3, 4, 10, 1000000 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(reads); i++) {
		u32 t = reads[i] * HOTTIER_HEAT_ONE;

		KUNIT_EXPECT_EQ(test, hottier_policy_bar(t, false), t);
		KUNIT_EXPECT_EQ(test, hottier_policy_bar(t, true),
				max_t(u32, t / 2, HOTTIER_HEAT_ONE));
	}
	KUNIT_EXPECT_EQ(test, hottier_policy_bar(HOTTIER_HEAT_ONE, true),
			HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, hottier_policy_bar(4 * HOTTIER_HEAT_ONE, true),
			2 * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, hottier_policy_bar(1000000 * HOTTIER_HEAT_ONE,
						 true),
			500000 * HOTTIER_HEAT_ONE);
}

/* The victim's heat is ignored when no victim was found. */
static void promote_ignores_victim_not_found(struct kunit *test)
{
	struct hottier_victim v = { .found = false, .heat = 0 };

	KUNIT_EXPECT_EQ(test, hottier_policy_promote(HOTTIER_HEAT_MAX, false,
						     THR, false, &v),
			HOTTIER_PROMOTE_NONE);
	KUNIT_EXPECT_EQ(test, hottier_policy_promote(0, true, THR, false, &v),
			HOTTIER_PROMOTE_NONE);
}

struct pp_extent {
	u64 extent;
	u32 heat;
};

#define PP_SLOTS	8
#define PP_ROUNDS	200

/* The coldest resident replica, as the target would pick its victim. */
static struct hottier_victim pp_victim(const struct pp_extent *res,
				       unsigned int *which)
{
	struct hottier_victim v = { .found = true, .heat = res[0].heat };
	unsigned int i;

	*which = 0;
	for (i = 1; i < PP_SLOTS; i++)
		if (res[i].heat < v.heat ||
		    (res[i].heat == v.heat &&
		     res[i].extent < res[*which].extent)) {
			v.heat = res[i].heat;
			*which = i;
		}
	return v;
}

/*
 * Ping-pong: the SSD's slots hold set A; set B, as many extents, is read
 * exactly as often, alternating with A. Every read of a B extent brings
 * it one read (HOTTIER_HEAT_ONE) ahead of A extents not read yet in the
 * round, short of the margin of four reads: no eviction ever, where a
 * policy without the margin would swap at every B read. Heat decays one
 * epoch per round, equally for all. Then B alone goes on: its extents
 * evict once, and only once, they lead by four reads.
 */
static void ping_pong_never_evicts(struct kunit *test)
{
	struct pp_extent res[PP_SLOTS], out[PP_SLOTS];
	unsigned int round, i, which, evictions = 0, naive_swaps = 0;
	unsigned int below_threshold = 0;
	struct hottier_victim v;
	int k;

	for (i = 0; i < PP_SLOTS; i++) {
		res[i] = (struct pp_extent){ .extent = i, .heat = THR };
		out[i] = (struct pp_extent){ .extent = 100 + i, .heat = THR };
	}
	for (round = 0; round < PP_ROUNDS; round++) {
		for (i = 0; i < PP_SLOTS; i++) {
			out[i].heat += HOTTIER_HEAT_ONE;
			v = pp_victim(res, &which);
			if (out[i].heat > v.heat)
				naive_swaps++;
			if (out[i].heat < THR)
				below_threshold++;
			if (hottier_policy_promote(out[i].heat, false, THR,
						   false, &v) !=
			    HOTTIER_PROMOTE_NONE)
				evictions++;
			res[i].heat += HOTTIER_HEAT_ONE;
		}
		for (i = 0; i < PP_SLOTS; i++) {
			res[i].heat = hottier_heat_decay(res[i].heat, 1);
			out[i].heat = hottier_heat_decay(out[i].heat, 1);
		}
	}
	/* Refused by the margin, not for want of heat. */
	KUNIT_EXPECT_EQ(test, below_threshold, 0U);
	KUNIT_EXPECT_EQ(test, evictions, 0U);
	KUNIT_EXPECT_EQ(test, naive_swaps, PP_ROUNDS * PP_SLOTS);
	for (i = 0; i < PP_SLOTS; i++)
		KUNIT_EXPECT_EQ(test, out[i].heat, res[i].heat);

	/* B[0] alone is read: the fourth read beyond A's heat evicts. */
	for (k = 1; k <= 4; k++) {
		enum hottier_promote_action act;

		out[0].heat += HOTTIER_HEAT_ONE;
		v = pp_victim(res, &which);
		act = hottier_policy_promote(out[0].heat, false, THR, false,
					     &v);
		KUNIT_EXPECT_EQ_MSG(test, act, k < 4 ? HOTTIER_PROMOTE_NONE :
				    HOTTIER_PROMOTE_EVICT, "read %d", k);
	}
	/* All heats equal: the victim is the lowest extent. */
	KUNIT_EXPECT_EQ(test, which, 0U);
}

/* Token bucket */

#define MIB		(1024ULL * 1024)
#define T0		(1000ULL * NSEC_PER_SEC)	/* any clock value */

/* Rate 0 grants anything, at any time, and keeps no account. */
static void tokens_rate_zero_unlimited(struct kunit *test)
{
	struct hottier_tokens t;
	int i, granted = 0;

	hottier_tokens_init(&t, T0);
	for (i = 0; i < 1000; i++)
		granted += hottier_tokens_take(&t, T0, 0, U64_MAX / 2);
	KUNIT_EXPECT_EQ(test, granted, 1000);
	KUNIT_EXPECT_TRUE(test, hottier_tokens_take(&t, 0, 0, U64_MAX));
	KUNIT_EXPECT_EQ(test, t.bytes, 0LL);
	KUNIT_EXPECT_EQ(test, t.last_ns, T0);
}

struct rate_case {
	const char *desc;
	u64 rate;	/* bytes per second */
	u64 step_ns;	/* time between attempts */
	u64 copy;	/* bytes per copy: one extent */
	u64 seconds;
};

/*
 * Rates are exact in bytes per step, or leave a fraction: a call credits
 * whole bytes only, so less than a byte a call is lost to rounding (the
 * rates with a fraction see 4000 calls at most: under 4 KiB, far less
 * than an extent). A step that does not divide T ends the run short of T
 * by less than a step's credit, also less than an extent.
 */
static const struct rate_case rate_cases[] = {
	{ "100 MiB/s, 1 MiB extents, 1 ms steps", 100 * MIB, NSEC_PER_MSEC,
	  MIB, 2 },
	{ "1 MB/s, 32 KiB extents, 1 ms steps", 1000000, NSEC_PER_MSEC,
	  32 * 1024, 10 },
	{ "3 MiB/s, 64 KiB extents, 1 ms steps", 3 * MIB, NSEC_PER_MSEC,
	  64 * 1024, 4 },
	{ "1 GB/s, 1 GiB extents, 10 ms steps", 1000000000, 10 * NSEC_PER_MSEC,
	  1024 * MIB, 20 },
	{ "7 MB/s, 1 MiB extents, 333 ms steps", 7000000,
	  333 * NSEC_PER_MSEC, MIB, 30 },
	{ "10 MiB/s, 4 MiB extents, 1 s steps", 10 * MIB, NSEC_PER_SEC,
	  4 * MIB, 30 },
};

static void rate_desc(const struct rate_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rate, rate_cases, rate_desc);

/*
 * A migrator that copies whenever it may, polled every step (a second at
 * most): after T seconds it has been granted R * T bytes to within one
 * extent. It takes copies until the bucket is in debt, so the bucket is
 * below zero when credited and a step's credit (a second's worth at most)
 * never reaches the cap: all credit is granted, plus the debt of the last
 * copy, between 0 and one extent.
 */
static void tokens_converge_to_rate(struct kunit *test)
{
	const struct rate_case *c = test->param_value;
	u64 end = T0 + c->seconds * NSEC_PER_SEC, now, granted = 0;
	u64 want = c->rate * c->seconds;
	struct hottier_tokens t;

	hottier_tokens_init(&t, T0);
	for (now = T0; now <= end; now += c->step_ns)
		while (hottier_tokens_take(&t, now, c->rate, c->copy))
			granted += c->copy;
	KUNIT_EXPECT_LE(test, granted, want + c->copy);
	KUNIT_EXPECT_GE(test, granted + c->copy, want);
}

/*
 * After any idle time the bucket holds one second of credit: a burst of
 * copies at one instant gets a second's worth, plus one copy started
 * while the bucket is not yet in debt (R / copy + 1 copies when the copy
 * size divides R).
 */
static void tokens_credit_capped_at_one_second(struct kunit *test)
{
	static const u64 idle_s[] = { 1, 2, 10, 3600, 1000000 };
	const u64 rate = 8 * MIB, copy = MIB;
	unsigned int i, n;

	for (i = 0; i < ARRAY_SIZE(idle_s); i++) {
		u64 now = T0 + idle_s[i] * NSEC_PER_SEC;
		struct hottier_tokens t;

		hottier_tokens_init(&t, T0);
		for (n = 0; n < 100 && hottier_tokens_take(&t, now, rate, copy);
		     n++)
			;
		KUNIT_EXPECT_EQ_MSG(test, n, rate / copy + 1,
				    "idle %llu s", idle_s[i]);
	}
}

/*
 * The cap is a second at the rate of the moment: lowered from 8 to
 * 1 MiB/s, a full bucket keeps 1 MiB, enough for 1 MiB and one copy more.
 */
static void tokens_lower_rate_lowers_cap(struct kunit *test)
{
	struct hottier_tokens t;
	u64 now = T0 + 5 * NSEC_PER_SEC;

	hottier_tokens_init(&t, T0);
	KUNIT_EXPECT_TRUE(test, hottier_tokens_take(&t, now, 8 * MIB, 1));
	now += 5 * NSEC_PER_SEC;
	KUNIT_EXPECT_TRUE(test, hottier_tokens_take(&t, now, MIB, MIB));
	KUNIT_EXPECT_TRUE(test, hottier_tokens_take(&t, now, MIB, MIB));
	KUNIT_EXPECT_FALSE(test, hottier_tokens_take(&t, now, MIB, MIB));
}

/* A new bucket holds nothing but is not in debt: one copy may start. */
static void tokens_first_copy_allowed(struct kunit *test)
{
	struct hottier_tokens t;

	struct hottier_tokens u;
	u64 paid;

	hottier_tokens_init(&t, T0);
	KUNIT_EXPECT_TRUE(test, hottier_tokens_take(&t, T0, MIB, 4 * MIB));
	KUNIT_EXPECT_FALSE(test, hottier_tokens_take(&t, T0, MIB, 1));
	/* 4 MiB of debt at 1 MiB/s: 4 s, not a nanosecond less. */
	u = t;
	paid = T0 + 4 * NSEC_PER_SEC;
	KUNIT_EXPECT_FALSE(test, hottier_tokens_take(&u, paid - 1, MIB, 1));
	KUNIT_EXPECT_TRUE(test, hottier_tokens_take(&t, paid, MIB, 1));
}

/*
 * A copy of three seconds' worth from a full bucket is allowed, leaving
 * two seconds of debt; nothing is allowed until the debt is paid, polled
 * every 100 ms: the first copy goes at exactly two seconds. Denied
 * attempts cost nothing.
 */
static void tokens_debt_waited_out_polling(struct kunit *test)
{
	const u64 rate = 10 * MIB, step = 100 * NSEC_PER_MSEC;
	u64 now = T0 + NSEC_PER_SEC, start;
	struct hottier_tokens t;

	hottier_tokens_init(&t, T0);
	KUNIT_ASSERT_TRUE(test, hottier_tokens_take(&t, now, rate, 3 * rate));
	start = now;
	for (now += step; now < start + 2 * NSEC_PER_SEC; now += step) {
		bool ok = hottier_tokens_take(&t, now, rate, MIB);

		KUNIT_EXPECT_FALSE_MSG(test, ok, "at %llu ms",
				       (now - start) / NSEC_PER_MSEC);
	}
	KUNIT_EXPECT_EQ(test, now, start + 2 * NSEC_PER_SEC);
	KUNIT_EXPECT_TRUE(test, hottier_tokens_take(&t, now, rate, MIB));
}

/*
 * The same debt waited out without polling: one attempt two seconds
 * later goes (the debt is paid, the bucket is empty), one a nanosecond
 * sooner does not.
 */
static void tokens_debt_waited_out_at_once(struct kunit *test)
{
	const u64 rate = 10 * MIB;
	u64 now = T0 + NSEC_PER_SEC, paid;
	struct hottier_tokens t, u;

	hottier_tokens_init(&t, T0);
	KUNIT_ASSERT_TRUE(test, hottier_tokens_take(&t, now, rate, 3 * rate));
	u = t;
	paid = now + 2 * NSEC_PER_SEC;
	KUNIT_EXPECT_FALSE(test, hottier_tokens_take(&u, paid - 1, rate, MIB));
	KUNIT_EXPECT_TRUE(test, hottier_tokens_take(&t, paid, rate, MIB));

	/* Ten seconds later: the debt is paid and a second is credited. */
	hottier_tokens_init(&t, T0);
	KUNIT_ASSERT_TRUE(test, hottier_tokens_take(&t, now, rate, 3 * rate));
	now += 10 * NSEC_PER_SEC;
	KUNIT_EXPECT_TRUE(test, hottier_tokens_take(&t, now, rate, rate));
	KUNIT_EXPECT_TRUE(test, hottier_tokens_take(&t, now, rate, 1));
	KUNIT_EXPECT_FALSE(test, hottier_tokens_take(&t, now, rate, 1));
}

/* The turnover detector */

struct turnover_feed {
	struct hottier_turnover sh;
	u64 hits, reads;
	unsigned int fired, first;	/* turnovers, the second of the first */
	unsigned int secs;
};

/* @secs seconds at @reads reads a second, @hits of them hits. */
static void turnover_feed(struct turnover_feed *f, unsigned int secs, u64 reads,
			  u64 hits, bool turning_over)
{
	while (secs--) {
		f->reads += reads;
		f->hits += hits;
		f->secs++;
		if (hottier_turnover_sample(&f->sh, f->hits, f->reads, 1000,
					    60000, turning_over)) {
			if (!f->fired++)
				f->first = f->secs;
		}
	}
}

static struct turnover_feed *new_feed(struct kunit *test)
{
	struct turnover_feed *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	hottier_turnover_init(&f->sh);
	/* The first sample only primes the counters. */
	KUNIT_EXPECT_FALSE(test, hottier_turnover_sample(&f->sh, 0, 0, 1000,
							 60000, false));
	return f;
}

/*
 * 60% hits for a minute, then 2%: the short average's hits fall under a
 * quarter of the long one's in the drop's third second (1/2, 1/4, 1/8 of
 * them), and a turnover begins once that held 2 s, at the fifth. One turnover a
 * drop, however long; hits back, then gone again: a second one.
 */
static void turnover_begins_after_a_held_drop_once_a_drop(struct kunit *test)
{
	struct turnover_feed *f = new_feed(test);

	turnover_feed(f, 60, 100, 60, false);
	KUNIT_EXPECT_EQ(test, f->fired, 0U);
	turnover_feed(f, 60, 100, 2, false);
	KUNIT_EXPECT_EQ(test, f->fired, 1U);
	KUNIT_EXPECT_EQ(test, f->first, 65U);
	turnover_feed(f, 30, 100, 60, false);
	KUNIT_EXPECT_EQ(test, f->fired, 1U);
	turnover_feed(f, 10, 100, 0, false);
	KUNIT_EXPECT_EQ(test, f->fired, 2U);
}

/*
 * No turnover: a drop of 3 s (the hold is 2 s past its start, not counting
 * the seconds it takes to show), a drop while a turnover is on, a drop in
 * the detector's first 10 s, or a device that hardly hit before
 * (under 1 read in 5).
 */
static void turnover_needs_a_held_drop_an_armed_detector_and_hits(struct kunit *test)
{
	struct turnover_feed *f = new_feed(test);

	turnover_feed(f, 60, 100, 60, false);
	turnover_feed(f, 3, 100, 0, false);
	turnover_feed(f, 20, 100, 60, false);
	KUNIT_EXPECT_EQ(test, f->fired, 0U);
	turnover_feed(f, 30, 100, 0, true);
	KUNIT_EXPECT_EQ(test, f->fired, 0U);

	f = new_feed(test);
	turnover_feed(f, 4, 100, 60, false);
	turnover_feed(f, 5, 100, 0, false);
	KUNIT_EXPECT_EQ(test, f->fired, 0U);

	f = new_feed(test);
	turnover_feed(f, 60, 100, 15, false);
	turnover_feed(f, 30, 100, 0, false);
	KUNIT_EXPECT_EQ(test, f->fired, 0U);
	/* From 1 in 4 it does. */
	f = new_feed(test);
	turnover_feed(f, 60, 100, 25, false);
	turnover_feed(f, 30, 100, 0, false);
	KUNIT_EXPECT_EQ(test, f->fired, 1U);
}

/*
 * reset_stats zeroes the counters: the sample after it only primes them
 * again (no rate from a count gone backwards), and the detector goes on.
 */
static void turnover_survives_a_counter_reset(struct kunit *test)
{
	struct turnover_feed *f = new_feed(test);

	turnover_feed(f, 60, 100, 60, false);
	f->hits = 0;
	f->reads = 0;
	turnover_feed(f, 10, 100, 60, false);
	KUNIT_EXPECT_EQ(test, f->fired, 0U);
	turnover_feed(f, 10, 100, 0, false);
	KUNIT_EXPECT_EQ(test, f->fired, 1U);
}

/*
 * A device that stops reading has no turnover, however long it idles (no
 * fresh read, no evidence), nor when its reads come back as before.
 */
static void turnover_needs_reads(struct kunit *test)
{
	struct turnover_feed *f = new_feed(test);

	turnover_feed(f, 60, 100, 60, false);
	turnover_feed(f, 120, 0, 0, false);
	turnover_feed(f, 30, 100, 60, false);
	KUNIT_EXPECT_EQ(test, f->fired, 0U);
}

/*
 * Fewer reads with as many hits a read is no turnover (a quieter hour); as
 * many reads with the hits gone is, and so is a busier device whose new
 * reads all miss (the hit ratio falls with the hits a second).
 */
static void turnover_is_the_hits_and_the_ratio_falling(struct kunit *test)
{
	struct turnover_feed *f = new_feed(test);

	turnover_feed(f, 60, 1000, 600, false);
	turnover_feed(f, 30, 100, 60, false);
	KUNIT_EXPECT_EQ(test, f->fired, 0U);

	f = new_feed(test);
	turnover_feed(f, 60, 1000, 600, false);
	turnover_feed(f, 30, 4000, 100, false);
	KUNIT_EXPECT_EQ(test, f->fired, 1U);

	/* Hits halved, the ratio at 60%: no turnover. */
	f = new_feed(test);
	turnover_feed(f, 60, 1000, 600, false);
	turnover_feed(f, 30, 500, 300, false);
	KUNIT_EXPECT_EQ(test, f->fired, 0U);
}

/*
 * The heat from which a replica unread for the turnover's seconds missed 2
 * reads: heat x ln2 / half-life x time = 2, ln2 as 709 / 1024. At a
 * half-life of 60 s: 173.4 reads after 1 s, 57.8 after 3 s, 11.6 after
 * 15 s; none before a second.
 */
static void turnover_heat_is_two_reads_missed(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, hottier_turnover_heat(0, 60000), U32_MAX);
	KUNIT_EXPECT_EQ(test, hottier_turnover_heat(1000, 60000),
			DIV_ROUND_UP(2U * HOTTIER_HEAT_ONE * 1024 * 60000,
				     709U * 1000));
	KUNIT_EXPECT_GT(test, hottier_turnover_heat(1000, 60000),
			173U * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_LT(test, hottier_turnover_heat(1000, 60000),
			174U * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_GT(test, hottier_turnover_heat(3000, 60000),
			57U * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_LT(test, hottier_turnover_heat(3000, 60000),
			58U * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_LT(test, hottier_turnover_heat(15000, 60000),
			12U * HOTTIER_HEAT_ONE);
	/* A shorter half-life: a faster rate for the same heat. */
	KUNIT_EXPECT_EQ(test, hottier_turnover_heat(1000, 6000),
			DIV_ROUND_UP(2U * HOTTIER_HEAT_ONE * 1024 * 6000,
				     709U * 1000));
	KUNIT_EXPECT_GE(test, hottier_turnover_heat(U32_MAX, 1), 1U);
}

static struct kunit_case hottier_policy_cases[] = {
	KUNIT_CASE_PARAM(promote_decides, promote_gen_params),
	KUNIT_CASE(bar_is_half_the_threshold_while_slots_are_free),
	KUNIT_CASE(promote_ignores_victim_not_found),
	KUNIT_CASE(ping_pong_never_evicts),
	KUNIT_CASE(tokens_rate_zero_unlimited),
	KUNIT_CASE_PARAM(tokens_converge_to_rate, rate_gen_params),
	KUNIT_CASE(tokens_credit_capped_at_one_second),
	KUNIT_CASE(tokens_lower_rate_lowers_cap),
	KUNIT_CASE(tokens_first_copy_allowed),
	KUNIT_CASE(tokens_debt_waited_out_polling),
	KUNIT_CASE(tokens_debt_waited_out_at_once),
	KUNIT_CASE(turnover_begins_after_a_held_drop_once_a_drop),
	KUNIT_CASE(turnover_needs_a_held_drop_an_armed_detector_and_hits),
	KUNIT_CASE(turnover_is_the_hits_and_the_ratio_falling),
	KUNIT_CASE(turnover_survives_a_counter_reset),
	KUNIT_CASE(turnover_needs_reads),
	KUNIT_CASE(turnover_heat_is_two_reads_missed),
	{}
};

static struct kunit_suite hottier_policy_suite = {
	.name = "dm-hottier-policy",
	.test_cases = hottier_policy_cases,
};

kunit_test_suites(&hottier_policy_suite);
