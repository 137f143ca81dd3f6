// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for dm-hottier's promotion policy (threshold, free slots,
 * eviction with a hysteresis margin of one threshold, pins), the migration
 * token bucket, the victim levels (worth, cuts, aging, the victim search)
 * driven on a map without its locks but where a hit or a removal needs
 * them, and the whole promotion loop through the policy object: warm-up,
 * eviction under hysteresis, pins, ghosts, scan resistance, requests kept
 * as ranges, and the cost of a victim choice at a million slots.
 */
#include <linux/time64.h>

#include "dm-hottier-rig-test.h"

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

/* The victim levels */

/* The victim is from the coldest level; hits since queueing count. */
static void levels_victim_is_coldest_and_follows_hits(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 heat, s1;
	u64 extent;

	install(r, 10, 40, false);
	s1 = install(r, 11, 1, false);
	install(r, 12, 9, false);
	install(r, 13, 3, true);			/* pinned: never */
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), s1);
	KUNIT_EXPECT_EQ(test, extent, 11ULL);
	KUNIT_EXPECT_EQ(test, heat, HOTTIER_HEAT_ONE);

	/* 11 is read 100 times: 12 is the coldest now. */
	lock = hottier_map_lock(&r->map, 11, &flags);
	for (heat = 0; heat < 100; heat++)
		__hottier_policy_hit(&r->p, s1);
	hottier_map_unlock(lock, flags);
	hottier_policy_victim(&r->p, epoch(r), &heat, &extent, NULL);
	KUNIT_EXPECT_EQ(test, extent, 12ULL);
}

/*
 * Levels follow decay: a replica installed hot and left alone two
 * half-lives is colder than one installed since at a heat in between (and
 * worth far less: it went unread all that time).
 */
static void levels_move_down_with_each_half_life(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u64 extent;
	u32 heat;
	int i;

	install(r, 1, 32, false);		/* band 6 */
	for (i = 0; i < 2 * HOTTIER_EPOCHS_PER_HALFLIFE; i++)
		hottier_policy_tick(&r->p);	/* 8 reads now: band 4 */
	install(r, 2, 12, false);		/* band 4, hotter */
	hottier_policy_victim(&r->p, epoch(r), &heat, &extent, NULL);
	KUNIT_EXPECT_EQ(test, extent, 1ULL);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, 0),
						 epoch(r)),
			8 * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, heat, (8 * HOTTIER_HEAT_ONE) >>
			((2 * HOTTIER_EPOCHS_PER_HALFLIFE - HOTTIER_IDLE_GRACE) *
			 HOTTIER_HEAT_IDLE_SHIFT));
}

/*
 * Worth: a replica read every epoch is worth its heat; one left unread is
 * worth a quarter as much again for every epoch past the first, and the
 * refresh moves it down the levels to its worth, so the victim search
 * finds it before a colder replica that is still read. The idle replica
 * was read 8 times in its half-life, 1.4 an epoch: the rate rule says it
 * missed 2 reads in the two whole epochs since, within its grace, so this
 * is the epoch rule alone.
 */
static void levels_idle_replica_is_worth_less(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u32 idle, busy, heat;
	u64 extent;
	int i;

	idle = install(r, 1, 8, false);		/* band 4 */
	busy = install(r, 2, 16, false);	/* band 5 */
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, idle),
						  epoch(r)),
			8 * HOTTIER_HEAT_ONE);
	for (i = 0; i < 3; i++) {
		hottier_policy_tick(&r->p);
		reads(r, 2, 2);
	}
	/*
	 * Three epochs: heat 8 x 2^-3/4 (4.8 reads), worth quartered twice
	 * more: 0.3 reads, in sixteenths 4.
	 */
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, idle),
						 epoch(r)),
			hottier_heat_decay(8 * HOTTIER_HEAT_ONE, 3));
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, idle),
						  epoch(r)),
			hottier_heat_decay(8 * HOTTIER_HEAT_ONE, 3) >>
			(2 * HOTTIER_HEAT_IDLE_SHIFT));
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, idle),
						  epoch(r)), 4U);
	KUNIT_EXPECT_FALSE(test, hottier_mslot_cut(hottier_mslot(&r->map, idle),
						   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, busy),
						  epoch(r)),
			hottier_mslot_heat(hottier_mslot(&r->map, busy),
					   epoch(r)));
	/* 16 x 2^-3/4 and 6 reads since: band 4, the idle one's below it. */
	KUNIT_EXPECT_GE(test, hottier_mslot_worth(hottier_mslot(&r->map, busy),
						  epoch(r)),
			8U * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), idle);
	KUNIT_EXPECT_EQ(test, extent, 1ULL);
	KUNIT_EXPECT_EQ(test, heat, 4U);
	/*
	 * Read again, 32 times: it is worth its heat at once (36.8 reads, in
	 * the slot's quarter reads 36.75), a band above busy's.
	 */
	for (i = 0; i < 32; i++)
		rig_read(r, 1, false);
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, idle),
						  epoch(r)),
			hottier_mslot_heat(hottier_mslot(&r->map, idle),
					   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, idle),
						  epoch(r)),
			36 * HOTTIER_HEAT_ONE + HOTTIER_HEAT_ONE * 3 / 4);
	KUNIT_EXPECT_LT(test, hottier_mslot_worth(hottier_mslot(&r->map, busy),
						  epoch(r)),
			16U * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), busy);
}

/*
 * The rate rule: a replica read 64 times in its half-life (11 reads an
 * epoch at that rate) that is not read for two epochs missed 11 reads in
 * the whole epoch between: past the grace of 2, its worth halves 9 more
 * times, to nothing, and it is cut. One read 8 times (1.4 an epoch)
 * missed one read and keeps the epoch rule's worth. Epoch rule alone, the
 * first would be worth 11 reads and the second 1.4; now the first goes
 * first. The refresh counts the cut replica, an eviction of it or a
 * victim worth a read takes the count down, a read revives it, and a
 * pinned one is never counted.
 */
static void levels_rate_rule_cuts_a_replica_whose_reads_stopped(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 hot, slow, heat;
	u64 extent;

	hot = install(r, 1, 64, false);
	slow = install(r, 2, 8, false);
	hottier_policy_tick(&r->p);
	/* Unread for the grace epoch: both worth their heat, none cut. */
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, hot),
						  epoch(r)),
			hottier_mslot_heat(hottier_mslot(&r->map, hot),
					   epoch(r)));
	KUNIT_EXPECT_FALSE(test, hottier_mslot_cut(hottier_mslot(&r->map, hot),
						   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	hottier_policy_tick(&r->p);
	/* Heat 64 x 2^-1/2 = 45.3 reads, quartered, halved 9 times: 0.02. */
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, hot),
						  epoch(r)),
			0U);
	KUNIT_EXPECT_TRUE(test, hottier_mslot_cut(hottier_mslot(&r->map, hot),
						  epoch(r)));
	/* Heat 8 x 2^-1/2 = 5.7 reads, quartered: 1.4 reads. */
	KUNIT_EXPECT_GT(test, hottier_mslot_worth(hottier_mslot(&r->map, slow),
						  epoch(r)),
			HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_FALSE(test, hottier_mslot_cut(hottier_mslot(&r->map, slow),
						   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 1U);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), hot);
	KUNIT_EXPECT_EQ(test, extent, 1ULL);
	KUNIT_EXPECT_LT(test, heat, HOTTIER_HEAT_ONE);
	hottier_policy_cut_gone(&r->p, false);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	hottier_policy_cut_gone(&r->p, false);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	/* A read revives it: worth its heat, not cut, not counted. */
	rig_read(r, 1, false);
	KUNIT_EXPECT_FALSE(test, hottier_mslot_cut(hottier_mslot(&r->map, hot),
						   epoch(r)));
	KUNIT_EXPECT_GT(test, hottier_mslot_worth(hottier_mslot(&r->map, hot),
						  epoch(r)),
			45U * HOTTIER_HEAT_ONE);
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	hottier_policy_tick(&r->p);
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_TRUE(test, hottier_mslot_cut(hottier_mslot(&r->map, hot),
						  epoch(r)));
	KUNIT_EXPECT_FALSE(test, hottier_mslot_cut(hottier_mslot(&r->map, slow),
						   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 1U);
	hottier_policy_cut_gone(&r->p, true);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	/*
	 * Pinned replicas are never victims, so never counted as cut. The
	 * slow one has now missed 6 of its reads (1.4 an epoch, 5 whole
	 * epochs): it is cut, and counted alone.
	 */
	lock = hottier_map_lock(&r->map, 1, &flags);
	__hottier_policy_set_pinned(&r->p, hot, true);
	hottier_map_unlock(lock, flags);
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_TRUE(test, hottier_mslot_cut(hottier_mslot(&r->map, hot),
						  epoch(r)));
	KUNIT_EXPECT_TRUE(test, hottier_mslot_cut(hottier_mslot(&r->map, slow),
						  epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 1U);
	hottier_policy_cut_gone(&r->p, false);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	lock = hottier_map_lock(&r->map, 1, &flags);
	__hottier_policy_set_pinned(&r->p, hot, false);
	hottier_map_unlock(lock, flags);
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 2U);
}

/*
 * A working-set turnover: the heat table forgets every entry and a new epoch
 * starts. Nothing is cut before its first second; then a replica unread
 * since it began is cut once its heat says it missed 2 reads (at a
 * half-life of 60 s: 173 reads after 1 s, 57.8 after 3 s, 34.7 after 5 s)
 * and goes to the lowest level, first for the victim search. A replica
 * read since is never cut, nor counted pinned. The next tick ends it.
 */
static void levels_turnover_cuts_replicas_unread_since_it_began(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u32 hot, warm, cool, pinned, heat;
	u16 before = epoch(r);
	u64 extent;

	hot = install(r, 1, 64, false);
	warm = install(r, 2, 40, false);
	cool = install(r, 3, 8, false);
	pinned = install(r, 4, 64, true);
	reads(r, 100, 3);
	KUNIT_ASSERT_EQ(test, (u32)atomic_read(&r->p.heat.tracked), 1U);

	hottier_policy_turnover(&r->p);
	KUNIT_EXPECT_EQ(test, epoch(r), (u16)(before + 1));
	KUNIT_EXPECT_EQ(test, (u32)atomic_read(&r->p.heat.tracked), 0U);
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, hot, epoch(r)));
	rig_read(r, 3, false);			/* cool is read since */

	KUNIT_EXPECT_TRUE(test, hottier_policy_turnover_second(&r->p, 1000,
							       60000));
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, hot, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	/* The coldest level holds cool, worth its reads. */
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), cool);

	KUNIT_EXPECT_TRUE(test, hottier_policy_turnover_second(&r->p, 3000,
							       60000));
	KUNIT_EXPECT_TRUE(test, hottier_policy_cut(&r->p, hot, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_worth(&r->p, hot, epoch(r)), 0U);
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, warm, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_worth(&r->p, warm, epoch(r)),
			hottier_mslot_heat(hottier_mslot(&r->map, warm),
					   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 1U);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), hot);
	KUNIT_EXPECT_EQ(test, extent, 1ULL);
	KUNIT_EXPECT_EQ(test, heat, 0U);

	KUNIT_EXPECT_TRUE(test, hottier_policy_turnover_second(&r->p, 5000,
							       60000));
	KUNIT_EXPECT_TRUE(test, hottier_policy_cut(&r->p, warm, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 2U);
	/* Read since, or pinned: never. */
	KUNIT_EXPECT_TRUE(test, hottier_policy_turnover_second(&r->p, 14000,
							       60000));
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, cool, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 2U);
	KUNIT_EXPECT_NE(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), pinned);
	/* A read revives a cut one. */
	rig_read(r, 2, false);
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, warm, epoch(r)));

	/*
	 * The next tick ends the turnover: the rate rule alone again, which
	 * cuts hot too now (64 reads of heat, 11 missed in a whole epoch).
	 */
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, READ_ONCE(r->p.levels.turnover_heat), 0U);
	KUNIT_EXPECT_FALSE(test, hottier_policy_turnover_second(&r->p, 16000,
								60000));
	for (heat = 0; heat < 4; heat++) {
		struct hottier_mslot *s = hottier_mslot(&r->map, heat);

		KUNIT_EXPECT_EQ(test, hottier_policy_cut(&r->p, heat, epoch(r)),
				hottier_mslot_cut(s, epoch(r)));
		KUNIT_EXPECT_EQ(test,
				hottier_policy_worth(&r->p, heat, epoch(r)),
				hottier_mslot_worth(s, epoch(r)));
	}
	KUNIT_EXPECT_TRUE(test, hottier_policy_cut(&r->p, hot, epoch(r)));
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, warm, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 1U);
}

/*
 * In a turnover, a replica's first read since it began starts its heat at
 * that read, as the heat table's entries started: it goes down to the
 * level of one read, below a cooler replica unread since. Its next reads
 * add up as ever, and once the next tick ends the turnover a read adds to
 * the heat it had.
 */
static void levels_turnover_restarts_heat_at_a_replicas_first_read(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u32 hot, cool, heat;
	u64 extent;

	hot = install(r, 1, 64, false);
	cool = install(r, 2, 8, false);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), cool);

	hottier_policy_turnover(&r->p);
	rig_read(r, 1, false);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, hot),
						 epoch(r)), HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), hot);
	KUNIT_EXPECT_EQ(test, heat, HOTTIER_HEAT_ONE);
	/* cool, unread, keeps its heat (decayed by the turnover's tick). */
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, cool),
						 epoch(r)),
			hottier_heat_decay(8 * HOTTIER_HEAT_ONE, 1));

	reads(r, 1, 2);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, hot),
						 epoch(r)), 3 * HOTTIER_HEAT_ONE);

	/* The next tick ends the turnover: a first read adds to the heat. */
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, READ_ONCE(r->p.levels.turnover_heat), 0U);
	heat = hottier_mslot_heat(hottier_mslot(&r->map, cool), epoch(r));
	rig_read(r, 2, false);
	heat = (heat + HOTTIER_HEAT_ONE) >> HOTTIER_SLOT_HEAT_SHIFT;
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, cool),
						 epoch(r)),
			heat << HOTTIER_SLOT_HEAT_SHIFT);
}

/*
 * A replica left alone longer than its 6-bit epoch can count still decays
 * to nothing: the refresh keeps the epoch from wrapping.
 */
static void levels_idle_replica_heat_never_wraps(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 slot;
	int i;

	slot = install(r, 1, 100, false);
	for (i = 0; i < 256; i++)
		hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, slot),
						 epoch(r)), 0U);
	/* One read since is one read, and it too decays to nothing. */
	lock = hottier_map_lock(&r->map, 1, &flags);
	KUNIT_EXPECT_EQ(test, __hottier_policy_hit(&r->p, slot),
			(u32)HOTTIER_HEAT_ONE);
	hottier_map_unlock(lock, flags);
	for (i = 0; i < 3 * 256 + 17; i++)
		hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, slot),
						 epoch(r)), 0U);
}

/*
 * Victims in every level, aged many times round the ring: each victim
 * choice finds the coldest level with slots in it, and levels merge
 * without losing a slot.
 */
static void levels_ring_keeps_every_slot(struct kunit *test)
{
	struct rig *r = new_rig(test, 4096, 64);
	struct hottier_mlock *lock;
	unsigned int n = 0, visits;
	unsigned long flags;
	u32 i, slot, heat;
	u64 extent;

	for (i = 0; i < 4096; i++)
		install(r, i, 1U << (i % 11), i % 7 == 0);
	for (i = 0; i < 3 * HOTTIER_LEVELS; i++)
		hottier_policy_age(&r->p);
	for (;;) {
		slot = hottier_policy_victim(&r->p, epoch(r), &heat, &extent,
					     &visits);
		if (slot == HOTTIER_NIL)
			break;
		KUNIT_EXPECT_LE(test, visits,
				(unsigned int)HOTTIER_VICTIM_VISITS);
		KUNIT_EXPECT_NE(test, extent % 7, 0ULL);
		lock = hottier_map_lock(&r->map, extent, &flags);
		KUNIT_ASSERT_EQ(test, __hottier_map_find(&r->map, extent), slot);
		rig_remove(r, slot);
		hottier_map_unlock(lock, flags);
		hottier_map_put(&r->map, slot);
		n++;
	}
	/* Every unpinned replica came out, once. */
	KUNIT_EXPECT_EQ(test, n, 4096U - 4096U / 7 - 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->map.resident), 4096 / 7 + 1);
}

/*
 * A million slots, 99% pinned, the rest at every heat: a victim choice
 * visits at most HOTTIER_VICTIM_VISITS slots. Then the worst case: every
 * unpinned replica was read since it was queued, so each visit moves one
 * up; the search still stops at the bound and returns the coldest seen.
 */
static void levels_victim_visits_at_most_64_at_1m_slots(struct kunit *test)
{
	struct rig *r = new_rig(test, M1, 64);
	unsigned int visits, worst = 0;
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 i, slot, heat;
	u64 extent;

	for (i = 0; i < M1; i++)
		install(r, i, i % 5000, i % 100 != 0);
	KUNIT_EXPECT_EQ(test, r->p.levels.nr_pinned, M1 - M1 / 100 - 1);
	for (i = 0; i < 1000; i++) {
		slot = hottier_policy_victim(&r->p, epoch(r), &heat, &extent,
					     &visits);
		KUNIT_ASSERT_NE(test, slot, HOTTIER_NIL);
		KUNIT_EXPECT_EQ(test, extent % 100, 0ULL);
		worst = max(worst, visits);
		lock = hottier_map_lock(&r->map, extent, &flags);
		rig_remove(r, slot);
		hottier_map_unlock(lock, flags);
		hottier_map_put(&r->map, slot);
		install(r, extent, 0, false);	/* back, cold */
	}
	KUNIT_EXPECT_LE(test, worst, (unsigned int)HOTTIER_VICTIM_VISITS);

	/* All unpinned replicas queued cold, then read: all misplaced. */
	for (i = 0; i < M1; i += 100) {
		lock = hottier_map_lock(&r->map, i, &flags);
		slot = __hottier_map_find(&r->map, i);
		__hottier_policy_hit(&r->p, slot);
		__hottier_policy_hit(&r->p, slot);
		hottier_map_unlock(lock, flags);
	}
	slot = hottier_policy_victim(&r->p, epoch(r), &heat, &extent, &visits);
	KUNIT_EXPECT_NE(test, slot, HOTTIER_NIL);
	KUNIT_EXPECT_EQ(test, visits, (unsigned int)HOTTIER_VICTIM_VISITS);
	KUNIT_EXPECT_EQ(test, heat, 2 * HOTTIER_HEAT_ONE);
}

/* The promotion loop */

/*
 * Warm-up: with slots free, the second read of an extent promotes it (half
 * the threshold of 4).
 */
static void loop_promotes_at_the_threshold(struct kunit *test)
{
	struct rig *r = new_rig(test, 16, 64);

	reads(r, 5, 1);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 0ULL);
	reads(r, 5, 1);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 1ULL);
	KUNIT_EXPECT_NE(test, resident(r, 5), HOTTIER_NIL);
	/* Its heat came along: it is in the slot, not the heat table. */
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map,
							       resident(r, 5)),
						 epoch(r)),
			2 * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_TRUE(test, rig_read(r, 5, false));
}

/*
 * The lower bar lasts while slots are free: a candidate queued at half the
 * threshold that finds the SSD full is not copied, and stays on the HDD
 * until it is hotter than the coldest replica by the threshold.
 */
static void loop_half_bar_ends_when_the_ssd_fills(struct kunit *test)
{
	struct rig *r = new_rig(test, 2, 64);

	reads(r, 1, 2);
	reads(r, 2, 2);
	reads(r, 3, 2);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 2ULL);
	KUNIT_EXPECT_EQ(test, resident(r, 3), HOTTIER_NIL);
	reads(r, 3, 3);			/* 5 < 2 + 4 */
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->evictions, 0ULL);
	KUNIT_EXPECT_EQ(test, resident(r, 3), HOTTIER_NIL);
	reads(r, 3, 1);			/* 6 >= 2 + 4 */
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->evictions, 1ULL);
	KUNIT_EXPECT_NE(test, resident(r, 3), HOTTIER_NIL);
}

/*
 * A full SSD: an extent as hot as the replicas never evicts one (the
 * margin of one threshold); one that leads by the margin evicts exactly
 * one, the coldest, and takes its slot.
 */
static void loop_evicts_only_past_the_margin(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u64 e;

	for (e = 0; e < 8; e++)
		reads(r, e, 4 + e);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->promotions, 8ULL);
	reads(r, 100, 7);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->evictions, 0ULL);
	KUNIT_EXPECT_EQ(test, resident(r, 100), HOTTIER_NIL);
	reads(r, 100, 1);		/* 8 >= 4 + 4: extent 0's margin */
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->evictions, 1ULL);
	KUNIT_EXPECT_NE(test, resident(r, 100), HOTTIER_NIL);
	KUNIT_EXPECT_EQ(test, resident(r, 0), HOTTIER_NIL);
	for (e = 1; e < 8; e++)
		KUNIT_EXPECT_NE(test, resident(r, e), HOTTIER_NIL);
}

/*
 * Pins: a pinned range is copied with no reads, evicting what it must,
 * and never evicted by hotter extents; unpinned, it may go.
 */
static void loop_pins_hold_against_hotter_extents(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u64 e;

	for (e = 0; e < 8; e++)
		reads(r, e, 4);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, hottier_policy_pin(&r->p, 50, 53, GFP_KERNEL),
			0);
	rig_work(r);
	for (e = 50; e <= 53; e++)
		KUNIT_EXPECT_NE(test, resident(r, e), HOTTIER_NIL);
	KUNIT_EXPECT_EQ(test, r->evictions, 4ULL);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_pinned(&r->p), 4ULL);

	for (e = 200; e < 240; e++)
		reads(r, e, 40);
	rig_work(r);
	for (e = 50; e <= 53; e++)
		KUNIT_EXPECT_NE(test, resident(r, e), HOTTIER_NIL);

	/* Refused: pins past the slots; changes nothing. */
	KUNIT_EXPECT_EQ(test, hottier_policy_pin(&r->p, 60, 64, GFP_KERNEL),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_pinned(&r->p), 4ULL);
	/* Overlaps count once: 50-53 pinned, 52-55 adds two. */
	KUNIT_EXPECT_EQ(test, hottier_policy_pin(&r->p, 52, 55, GFP_KERNEL),
			0);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_pinned(&r->p), 6ULL);
	KUNIT_EXPECT_EQ(test, hottier_policy_unpin(&r->p, 51, 54, GFP_KERNEL),
			0);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_pinned(&r->p), 2ULL);
	KUNIT_EXPECT_TRUE(test, hottier_policy_pinned(&r->p, 50));
	KUNIT_EXPECT_FALSE(test, hottier_policy_pinned(&r->p, 52));
	KUNIT_EXPECT_TRUE(test, hottier_policy_pinned(&r->p, 55));
}

/*
 * The pinned ranges a pin or an unpin would leave, counted before it
 * changes anything (the on-SSD map's room check): a pin merges what it
 * touches, an unpin splits the range it falls inside.
 */
static void pin_ranges_after_counts_merges_and_splits(struct kunit *test)
{
	struct rig *r = new_rig(test, 64, 64);
	struct hottier_policy *p = &r->p;

	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 5, 5, true),
			1U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 5, 5, false),
			0U);
	KUNIT_ASSERT_EQ(test, hottier_policy_pin(p, 10, 19, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, hottier_policy_pin(p, 30, 39, GFP_KERNEL), 0);
	/* Pins: apart, adjacent on both sides, overlapping, bridging. */
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 0, 8, true),
			3U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 0, 9, true),
			2U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 40, 45, true),
			2U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 15, 25, true),
			2U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 20, 29, true),
			1U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 0, 99, true),
			1U);
	/* Unpins: inside one (a split), an end, a whole one, both, none. */
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 12, 14, false),
			3U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 10, 14, false),
			2U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 5, 19, false),
			1U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 15, 35, false),
			2U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 0, 99, false),
			0U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 20, 29, false),
			2U);
	/* Nothing changed, and each count is what the change then makes. */
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges(p, NULL, NULL, 0, true),
			2U);
	KUNIT_ASSERT_EQ(test, hottier_policy_unpin(p, 12, 14, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges(p, NULL, NULL, 0, true),
			3U);
	KUNIT_ASSERT_EQ(test, hottier_policy_pin(p, 15, 31, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges(p, NULL, NULL, 0, true),
			2U);
}

/*
 * A pin undone before its copies ran: the worker goes through its request
 * and finds nothing pinned, and that leaves no trace (every extent it
 * looked at is free for later work: a leak here once stopped promotions).
 */
static void loop_unpinned_before_copy_leaves_nothing(struct kunit *test)
{
	struct rig *r = new_rig(test, 256, 256);
	struct hottier_work w;

	KUNIT_ASSERT_EQ(test, hottier_policy_pin(&r->p, 0, 199, GFP_KERNEL),
			0);
	KUNIT_ASSERT_EQ(test, hottier_policy_unpin(&r->p, 0, 199, GFP_KERNEL),
			0);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 0ULL);
	KUNIT_EXPECT_EQ(test, r->p.nr_pending, 0U);
	reads(r, 500, 4);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 1ULL);
	KUNIT_EXPECT_NE(test, resident(r, 500), HOTTIER_NIL);
	/* A work item out holds its extent until started or cancelled. */
	reads(r, 600, 4);
	KUNIT_ASSERT_EQ(test, hottier_policy_next(&r->p, &w), 0);
	KUNIT_EXPECT_EQ(test, r->p.nr_pending, 1U);
	hottier_policy_cancel(&r->p, &w);
	KUNIT_EXPECT_EQ(test, r->p.nr_pending, 0U);
}

/*
 * Ghosts: an evicted extent keeps its heat in the heat table, so one more
 * read makes it a candidate again; a cold newcomer needs all four.
 */
static void loop_evicted_extent_returns_early(struct kunit *test)
{
	struct rig *r = new_rig(test, 4, 64);
	u64 e;

	for (e = 0; e < 4; e++)
		reads(r, e, 6);
	rig_work(r);
	reads(r, 100, 10);		/* evicts one of 0-3, heat 6 */
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->evictions, 1ULL);
	for (e = 0; e < 4 && resident(r, e) != HOTTIER_NIL; e++)
		;
	KUNIT_ASSERT_LT(test, e, 4ULL);
	/* Its six reads of heat are remembered: read once, it is back. */
	reads(r, e, 1);
	KUNIT_EXPECT_EQ(test, kfifo_len(&r->p.cand), 1U);
	reads(r, 500, 1);
	KUNIT_EXPECT_EQ(test, kfifo_len(&r->p.cand), 1U);
}

/* Pin @extent's replica, as a pin message does. */
static void rig_pin(struct rig *r, u64 extent)
{
	u32 slot = resident(r, extent);		/* takes the lock */
	struct hottier_mlock *lock;
	unsigned long flags;

	lock = hottier_map_lock(&r->map, extent, &flags);
	__hottier_policy_set_pinned(&r->p, slot, true);
	hottier_map_unlock(lock, flags);
}

/*
 * The policy only decides: a work item that evicts leaves its victim
 * resident in the map, for the replica core to take out. A victim that
 * changed meanwhile (pinned here) is left where it is, the work item is
 * void, and its candidate keeps its heat: one more read brings it back.
 */
static void loop_an_eviction_is_carried_out_by_the_caller(struct kunit *test)
{
	struct rig *r = new_rig(test, 2, 64);
	struct hottier_work w;
	u32 slot;

	reads(r, 0, 6);
	reads(r, 1, 7);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->promotions, 2ULL);

	/* Extent 0 (6 reads) is to give way to 100 (10 reads). */
	reads(r, 100, 10);
	KUNIT_ASSERT_EQ(test, hottier_policy_next(&r->p, &w), 0);
	KUNIT_ASSERT_TRUE(test, w.evict);
	KUNIT_EXPECT_EQ(test, w.victim, 0ULL);
	slot = resident(r, 0);
	KUNIT_EXPECT_EQ(test, slot, w.slot);
	KUNIT_EXPECT_EQ(test, r->p.nr_pending, 1U);

	/* Pinned before the core evicts it: it stays, the item is void. */
	rig_pin(r, 0);
	KUNIT_EXPECT_FALSE(test, rig_evict(r, &w));
	KUNIT_EXPECT_EQ(test, resident(r, 0), slot);
	KUNIT_EXPECT_EQ(test, r->p.nr_pending, 0U);
	KUNIT_EXPECT_EQ(test, resident(r, 100), HOTTIER_NIL);

	/* 100 kept its heat: read once, it takes extent 1's slot. */
	reads(r, 100, 1);
	KUNIT_ASSERT_EQ(test, hottier_policy_next(&r->p, &w), 0);
	KUNIT_ASSERT_TRUE(test, w.evict);
	KUNIT_EXPECT_EQ(test, w.extent, 100ULL);
	KUNIT_EXPECT_EQ(test, w.victim, 1ULL);
	KUNIT_EXPECT_NE(test, resident(r, 1), HOTTIER_NIL);
	KUNIT_ASSERT_TRUE(test, rig_evict(r, &w));
	KUNIT_EXPECT_EQ(test, resident(r, 1), HOTTIER_NIL);
	rig_start(r, &w);
	rig_done(r, &w, true);
	KUNIT_EXPECT_EQ(test, resident(r, 100), w.slot);
	KUNIT_EXPECT_EQ(test, resident(r, 0), slot);
}

/* Reads of @first..@first + @n - 1, @per each, round after round. */
static void reads_round(struct rig *r, u64 first, u64 n, unsigned int per)
{
	unsigned int k;
	u64 e;

	for (k = 0; k < per; k++)
		for (e = first; e < first + n; e++)
			rig_read(r, e, false);
}

/*
 * A new hot set, @first..@first + @n - 1, read twice an epoch: the epoch
 * at which all of it has a replica (0: not in 12 epochs), and in
 * *@early the evictions by the end of the first.
 */
static unsigned int epochs_to_take(struct rig *r, u64 first, u64 n,
				   u64 *early)
{
	unsigned int ep;
	u64 e;

	*early = 0;
	for (ep = 1; ep <= 12; ep++) {
		hottier_policy_tick(&r->p);
		reads_round(r, first, n, 2);
		rig_work(r);
		if (ep == 1)
			*early = r->evictions;
		for (e = first; e < first + n && resident(r, e) != HOTTIER_NIL;
		     e++)
			;
		if (e == first + n)
			return ep;
	}
	return 0;
}

/*
 * Set A (0-7) takes the 8 slots of a rig with @tracked heat entries, then
 * @warm extents (200 on) are read 10 times each and no more, then set B
 * (100-107) is read twice an epoch: B holds every slot at the second
 * epoch, none of it evicted in the first, and A has none left.
 */
static void moved_hot_set(struct kunit *test, u64 tracked, u64 warm)
{
	struct rig *r = new_rig(test, 8, tracked);
	u64 e, early;

	reads_round(r, 0, 8, 40);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->promotions, 8ULL);
	reads_round(r, 200, warm, 10);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->promotions, 8ULL);
	KUNIT_EXPECT_EQ(test, epochs_to_take(r, 100, 8, &early), 2U);
	KUNIT_EXPECT_EQ(test, early, 0ULL);
	KUNIT_EXPECT_EQ(test, r->evictions, 8ULL);
	for (e = 0; e < 8; e++)
		KUNIT_EXPECT_EQ(test, resident(r, e), HOTTIER_NIL);
}

/*
 * A hot set that moves: the SSD holds set A, read 40 times; then A is no
 * longer read and set B is, twice an epoch. B's heat builds slowly and
 * A's decays slowly (a half-life is four epochs): on heat alone, B would
 * need 11 epochs to lead A by the threshold. A's worth is quartered for
 * every epoch past the first it goes unread (the epoch rule alone: B
 * takes the SSD at the fourth, 6.3 reads against A's 0.3 and the
 * threshold). A was read 40 times in an epoch, a rate of 6.9 reads an
 * epoch by its heat: at the second, the rate rule says it missed 6 reads
 * in the whole epoch since, 4 past the grace, and cuts its worth of 6.5
 * reads to 0.4, so B's 3.7 reads need only the free-slot bar (2). At the
 * first, A is in its grace epoch and keeps its heat: no eviction.
 */
static void loop_moved_hot_set_takes_over(struct kunit *test)
{
	moved_hot_set(test, 64, 0);
}

/*
 * The same move with a heat table of one set, full of the warm extents the
 * old hot set leaves behind (read 10 times each, no longer read). Were
 * entries recycled by heat, the new set would enter at one read each and
 * recycle one another while the warm heat decays, and take no slot in 12
 * epochs; an entry unread for an epoch is worth a quarter of its heat, so
 * the new set holds its ways from the second epoch and takes the SSD then,
 * as without the warm set.
 */
static void loop_moved_hot_set_takes_the_table(struct kunit *test)
{
	moved_hot_set(test, 16, 16);
}

/*
 * Worth never swaps a set that is still read: replicas and candidates
 * read alike, every epoch, for many half-lives, evict nothing.
 */
static void loop_replicas_still_read_keep_their_slots(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	unsigned int ep;

	reads_round(r, 0, 8, 4);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->promotions, 8ULL);
	for (ep = 0; ep < 40; ep++) {
		hottier_policy_tick(&r->p);
		reads_round(r, 0, 8, 2);
		reads_round(r, 100, 8, 2);
		rig_work(r);
	}
	KUNIT_EXPECT_EQ(test, r->evictions, 0ULL);
	KUNIT_EXPECT_EQ(test, r->promotions, 8ULL);
}

/*
 * Reads that heat nothing (a stream's reads inside an extent it already
 * heated, hottier_seq_read()) promote nothing, however many.
 */
static void loop_scans_promote_nothing(struct kunit *test)
{
	struct rig *r = new_rig(test, 16, 64);
	u64 e;
	int pass;

	reads(r, 3, 4);
	rig_work(r);
	for (pass = 0; pass < 10; pass++)
		for (e = 0; e < 1000; e++)
			rig_read(r, e, true);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 1ULL);
	/* Nor does it heat the replica it passes over. */
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map,
							       resident(r, 3)),
						 epoch(r)),
			4 * HOTTIER_HEAT_ONE);
}

/*
 * Requests are ranges: a promote of 1000 extents while the candidate
 * queue is full of read candidates loses none of them.
 */
static void loop_requests_survive_a_full_queue(struct kunit *test)
{
	struct rig *r = new_rig(test, 2048, 4096);
	u64 e, missing = 0;

	for (e = 10000; e < 10000 + 2 * HOTTIER_NR_CANDIDATES; e++)
		reads(r, e, 4);
	KUNIT_EXPECT_TRUE(test, kfifo_is_full(&r->p.cand));
	KUNIT_ASSERT_EQ(test, hottier_policy_promote_range(&r->p, 0, 999,
							   GFP_KERNEL), 0);
	rig_work(r);
	for (e = 0; e < 1000; e++)
		missing += resident(r, e) == HOTTIER_NIL;
	KUNIT_EXPECT_EQ(test, missing, 0ULL);
	KUNIT_EXPECT_EQ(test, r->promotions, 1000ULL + HOTTIER_NR_CANDIDATES);
}

/*
 * A full SSD of a million slots and promote_threshold 1: every miss
 * promotes by evicting, and no victim choice visits more than 64 slots.
 */
static void loop_evictions_at_1m_slots_stay_bounded(struct kunit *test)
{
	struct rig *r = new_rig(test, M1, M1);
	u64 e;

	hottier_policy_set_threshold(&r->p, 1);
	for (e = 0; e < M1; e++) {
		reads(r, e, 1);
		if (!(e % HOTTIER_NR_CANDIDATES))
			rig_work(r);
	}
	rig_work(r);
	KUNIT_ASSERT_EQ(test, atomic_read(&r->map.resident), (int)M1);
	for (e = M1; e < M1 + 20000; e++) {
		reads(r, e, 3);
		if (!(e % 64))
			rig_work(r);
	}
	rig_work(r);
	KUNIT_EXPECT_GE(test, r->evictions, 19000ULL);
	KUNIT_EXPECT_LE(test, r->max_visits,
			(unsigned int)HOTTIER_VICTIM_VISITS);
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

static struct kunit_case hottier_levels_cases[] = {
	KUNIT_CASE(levels_victim_is_coldest_and_follows_hits),
	KUNIT_CASE(levels_move_down_with_each_half_life),
	KUNIT_CASE(levels_idle_replica_is_worth_less),
	KUNIT_CASE(levels_rate_rule_cuts_a_replica_whose_reads_stopped),
	KUNIT_CASE(levels_turnover_cuts_replicas_unread_since_it_began),
	KUNIT_CASE(levels_turnover_restarts_heat_at_a_replicas_first_read),
	KUNIT_CASE(levels_idle_replica_heat_never_wraps),
	KUNIT_CASE(levels_ring_keeps_every_slot),
	KUNIT_CASE_SLOW(levels_victim_visits_at_most_64_at_1m_slots),
	{}
};

static struct kunit_suite hottier_levels_suite = {
	.name = "dm-hottier-levels",
	.test_cases = hottier_levels_cases,
};

static struct kunit_case hottier_loop_cases[] = {
	KUNIT_CASE(loop_promotes_at_the_threshold),
	KUNIT_CASE(loop_half_bar_ends_when_the_ssd_fills),
	KUNIT_CASE(loop_evicts_only_past_the_margin),
	KUNIT_CASE(loop_pins_hold_against_hotter_extents),
	KUNIT_CASE(pin_ranges_after_counts_merges_and_splits),
	KUNIT_CASE(loop_unpinned_before_copy_leaves_nothing),
	KUNIT_CASE(loop_evicted_extent_returns_early),
	KUNIT_CASE(loop_an_eviction_is_carried_out_by_the_caller),
	KUNIT_CASE(loop_moved_hot_set_takes_over),
	KUNIT_CASE(loop_moved_hot_set_takes_the_table),
	KUNIT_CASE(loop_replicas_still_read_keep_their_slots),
	KUNIT_CASE(loop_scans_promote_nothing),
	KUNIT_CASE(loop_requests_survive_a_full_queue),
	KUNIT_CASE_SLOW(loop_evictions_at_1m_slots_stay_bounded),
	{}
};

static struct kunit_suite hottier_loop_suite = {
	.name = "dm-hottier-promotion-loop",
	.test_cases = hottier_loop_cases,
};

kunit_test_suites(&hottier_policy_suite, &hottier_levels_suite,
		  &hottier_loop_suite);
