// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for dm-hottier's latency estimates, read routing and the
 * migration QoS controller.
 */
#include <kunit/test.h>

#include "dm-hottier-route.h"

#define US	1000ULL
#define MS	(1000 * US)

static void ewma_takes_the_first_sample_as_it_is(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, hottier_ewma_next(0, 4 * MS), 4 * MS);
	/* A zero sample still marks the estimate as taken. */
	KUNIT_EXPECT_EQ(test, hottier_ewma_next(0, 0), 1ULL);
}

static void ewma_moves_an_eighth_towards_each_sample(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, hottier_ewma_next(800, 1600), 900ULL);
	KUNIT_EXPECT_EQ(test, hottier_ewma_next(800, 0), 700ULL);
	KUNIT_EXPECT_EQ(test, hottier_ewma_next(800, 800), 800ULL);
}

static void ewma_converges_to_a_new_level(struct kunit *test)
{
	u64 e = 100 * US;
	int i;

	for (i = 0; i < 100; i++)
		e = hottier_ewma_next(e, 4 * MS);
	/* (7/8)^100 of the gap is left: well under 1%. */
	KUNIT_EXPECT_GT(test, e, 4 * MS - 40 * US);
	KUNIT_EXPECT_LE(test, e, 4 * MS);
	for (i = 0; i < 100; i++)
		e = hottier_ewma_next(e, 100 * US);
	KUNIT_EXPECT_LT(test, e, 100 * US + 40 * US);
	KUNIT_EXPECT_GE(test, e, 100 * US);
}

static void lat_sample_updates_the_estimate(struct kunit *test)
{
	struct hottier_lat l = {};

	hottier_lat_sample(&l, 2 * MS);
	KUNIT_EXPECT_EQ(test, (u64)atomic64_read(&l.ewma_ns), 2 * MS);
	hottier_lat_sample(&l, 10 * MS);
	KUNIT_EXPECT_EQ(test, (u64)atomic64_read(&l.ewma_ns), 3 * MS);
}

static void predict_counts_the_reads_in_flight(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, hottier_lat_predict(100 * US, 0), 100 * US);
	KUNIT_EXPECT_EQ(test, hottier_lat_predict(100 * US, 31), 3200 * US);
}

struct route_case {
	const char *desc;
	enum hottier_routing mode;
	u64 ssd_ewma;
	unsigned int ssd_inflight;
	u64 hdd_ewma;
	unsigned int hdd_inflight;
	enum hottier_route_dev want;
};

static const struct route_case routes[] = {
	{ "idle SSD beats idle HDD", HOTTIER_ROUTING_LATENCY,
	  100 * US, 0, 4 * MS, 0, HOTTIER_ROUTE_SSD },
	{ "busy SSD still beats idle HDD", HOTTIER_ROUTING_LATENCY,
	  100 * US, 30, 4 * MS, 0, HOTTIER_ROUTE_SSD },
	{ "saturated SSD loses to idle HDD", HOTTIER_ROUTING_LATENCY,
	  3 * MS, 16, 4 * MS, 0, HOTTIER_ROUTE_HDD },
	{ "slow SSD loses to idle HDD", HOTTIER_ROUTING_LATENCY,
	  50 * MS, 0, 4 * MS, 0, HOTTIER_ROUTE_HDD },
	{ "slow SSD beats a queued HDD", HOTTIER_ROUTING_LATENCY,
	  10 * MS, 0, 4 * MS, 4, HOTTIER_ROUTE_SSD },
	{ "equal predictions go to the SSD", HOTTIER_ROUTING_LATENCY,
	  2 * MS, 1, 4 * MS, 0, HOTTIER_ROUTE_SSD },
	{ "no SSD estimate yet: try the SSD", HOTTIER_ROUTING_LATENCY,
	  0, 0, 1 * US, 0, HOTTIER_ROUTE_SSD },
	{ "no HDD estimate yet: try the HDD", HOTTIER_ROUTING_LATENCY,
	  100 * US, 0, 0, 0, HOTTIER_ROUTE_HDD },
	{ "routing ssd ignores the estimates", HOTTIER_ROUTING_SSD,
	  50 * MS, 64, 1 * US, 0, HOTTIER_ROUTE_SSD },
};

static void route_desc(const struct route_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(route, routes, route_desc);

/* seq 0 is never a freshness read: the decision is the estimates'. */
static void route_follows_the_predictions(struct kunit *test)
{
	const struct route_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, hottier_route(c->mode, c->ssd_ewma,
					    c->ssd_inflight, c->hdd_ewma,
					    c->hdd_inflight, 0), c->want);
}

static void route_sends_one_read_in_64_to_the_slower_device(struct kunit *test)
{
	unsigned int to_hdd = 0, to_ssd = 0;
	u64 seq;

	for (seq = 0; seq < 64 * 100; seq++) {
		if (hottier_route(HOTTIER_ROUTING_LATENCY, 100 * US, 0, 4 * MS,
				  0, seq) == HOTTIER_ROUTE_HDD)
			to_hdd++;
		if (hottier_route(HOTTIER_ROUTING_LATENCY, 50 * MS, 0, 4 * MS,
				  0, seq) == HOTTIER_ROUTE_SSD)
			to_ssd++;
	}
	KUNIT_EXPECT_EQ(test, to_hdd, 100U);
	KUNIT_EXPECT_EQ(test, to_ssd, 100U);
}

static void route_ssd_has_no_freshness_share(struct kunit *test)
{
	u64 seq;

	for (seq = 0; seq < 64 * 4; seq++)
		KUNIT_EXPECT_EQ(test, hottier_route(HOTTIER_ROUTING_SSD, 50 * MS,
						    0, 1 * US, 0, seq),
				HOTTIER_ROUTE_SSD);
}

static unsigned int qos_step(struct hottier_qos *q, unsigned int max,
			     u32 reads, u32 near, u32 over)
{
	hottier_qos_next(q, max, reads, near, over, 20 * MS);
	return q->allowed;
}

/*
 * The allowance along a series of QoS periods of 200 reads (0: idle), by
 * how many were over half the budget (near) and over it. Over in more than
 * 1% halves and sets a wait of backoff periods, the backoff doubling;
 * near in more than 1% holds; else, the wait over, one more, and the
 * backoff halves if copies ran (not when growing from none).
 */
static void qos_cuts_holds_waits_and_grows(struct kunit *test)
{
	static const u32 reads[] = { 200, 200, 200, 200, 200, 200, 200, 200,
				     200, 200, 200, 0 };
	static const u32 near[] = { 0, 3, 0, 0, 3, 5, 5, 0, 0, 0, 9, 0 };
	static const u32 over[] = { 0, 3, 0, 0, 0, 5, 5, 0, 0, 0, 9, 0 };
	static const unsigned int want[] = { 5, 2, 2, 3, 3, 1, 0, 0, 0, 1, 0,
					     1 };
	static const unsigned int wait[] = { 0, 1, 0, 0, 0, 1, 2, 1, 0, 0, 4,
					     0 };
	struct hottier_qos q = { .allowed = 4, .wait = 0, .backoff = 1 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		KUNIT_EXPECT_EQ_MSG(test, qos_step(&q, 8, reads[i], near[i],
						   over[i]),
				    want[i], "period %u", i);
		KUNIT_EXPECT_EQ_MSG(test, q.wait, wait[i], "period %u", i);
	}
}

/*
 * Copies that always hurt: each probe (one copy) is cut at once, and the
 * periods before the next probe double up to HOTTIER_QOS_BACKOFF_MAX.
 */
static void qos_probes_back_off_exponentially(struct kunit *test)
{
	static const unsigned int gaps[] = { 1, 2, 4, 8, 16, 32, 64, 64, 64 };
	struct hottier_qos q;
	unsigned int i, gap;

	hottier_qos_start(&q, 8, 20 * MS);
	KUNIT_ASSERT_EQ(test, q.allowed, 1U);
	for (i = 0; i < ARRAY_SIZE(gaps); i++) {
		KUNIT_ASSERT_EQ(test, qos_step(&q, 8, 100, 50, 50), 0U);
		for (gap = 0; !qos_step(&q, 8, 100, 0, 0); gap++)
			KUNIT_ASSERT_LT(test, gap, 1000U);
		KUNIT_EXPECT_EQ_MSG(test, gap, gaps[i], "cut %u", i);
	}
}

/* A single slow read among few is more than the tail allows. */
static void qos_counts_the_tail_not_the_average(struct kunit *test)
{
	struct hottier_qos q = { .allowed = 4, .backoff = 1 };

	KUNIT_EXPECT_EQ(test, qos_step(&q, 8, 100, 1, 1), 5U);
	KUNIT_EXPECT_EQ(test, qos_step(&q, 8, 99, 1, 0), 5U);
	KUNIT_EXPECT_EQ(test, qos_step(&q, 8, 99, 1, 1), 2U);
	q.wait = 0;
	KUNIT_EXPECT_EQ(test, qos_step(&q, 8, 10, 1, 1), 1U);
	q.wait = 0;
	KUNIT_EXPECT_EQ(test, qos_step(&q, 8, 10, 1, 1), 0U);
}

static void qos_never_exceeds_max_migrations(struct kunit *test)
{
	struct hottier_qos q = { .allowed = 3, .backoff = 1 };
	unsigned int i;

	for (i = 0; i < 10; i++)
		qos_step(&q, 4, 50, 0, 0);
	KUNIT_EXPECT_EQ(test, q.allowed, 4U);
	/* A lowered max_migrations applies at once, holding or growing. */
	KUNIT_EXPECT_EQ(test, qos_step(&q, 2, 50, 50, 0), 2U);
	q.allowed = 4;
	KUNIT_EXPECT_EQ(test, qos_step(&q, 2, 50, 0, 0), 2U);
}

static void qos_idle_hdd_lets_copies_resume(struct kunit *test)
{
	/* No foreground read: the wait ends, copies come back one by one. */
	struct hottier_qos q = { .allowed = 0, .wait = 40, .backoff = 64 };

	KUNIT_EXPECT_EQ(test, qos_step(&q, 4, 0, 0, 0), 1U);
	KUNIT_EXPECT_EQ(test, qos_step(&q, 4, 0, 0, 0), 2U);
	/* Only the period that had copies shortens the next wait. */
	KUNIT_EXPECT_EQ(test, q.backoff, 32U);
}

static void qos_start_and_budget_zero(struct kunit *test)
{
	struct hottier_qos q = { .allowed = 0, .wait = 9, .backoff = 8 };

	hottier_qos_next(&q, 4, 10, 10, 10, 0);
	KUNIT_EXPECT_EQ(test, q.allowed, 4U);
	KUNIT_EXPECT_EQ(test, q.wait, 0U);
	hottier_qos_start(&q, 4, 20 * MS);
	KUNIT_EXPECT_EQ(test, q.allowed, 1U);
	KUNIT_EXPECT_EQ(test, q.backoff, 1U);
	hottier_qos_start(&q, 4, 0);
	KUNIT_EXPECT_EQ(test, q.allowed, 4U);
}

static struct kunit_case hottier_route_cases[] = {
	KUNIT_CASE(ewma_takes_the_first_sample_as_it_is),
	KUNIT_CASE(ewma_moves_an_eighth_towards_each_sample),
	KUNIT_CASE(ewma_converges_to_a_new_level),
	KUNIT_CASE(lat_sample_updates_the_estimate),
	KUNIT_CASE(predict_counts_the_reads_in_flight),
	KUNIT_CASE_PARAM(route_follows_the_predictions, route_gen_params),
	KUNIT_CASE(route_sends_one_read_in_64_to_the_slower_device),
	KUNIT_CASE(route_ssd_has_no_freshness_share),
	KUNIT_CASE(qos_cuts_holds_waits_and_grows),
	KUNIT_CASE(qos_probes_back_off_exponentially),
	KUNIT_CASE(qos_counts_the_tail_not_the_average),
	KUNIT_CASE(qos_never_exceeds_max_migrations),
	KUNIT_CASE(qos_idle_hdd_lets_copies_resume),
	KUNIT_CASE(qos_start_and_budget_zero),
	{}
};

static struct kunit_suite hottier_route_suite = {
	.name = "dm-hottier-route",
	.test_cases = hottier_route_cases,
};

kunit_test_suites(&hottier_route_suite);
