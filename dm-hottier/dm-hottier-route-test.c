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

#define T0	(100ULL * NSEC_PER_SEC)	/* "now" in these tests */

/* A member's state: an estimate, reads in flight, the last read sent. */
static void lat_set(struct hottier_lat *l, u64 ewma_ns, unsigned int inflight,
		    u64 last_sent_ns)
{
	atomic64_set(&l->ewma_ns, ewma_ns);
	atomic64_set(&l->last_done_ns, last_sent_ns);
	atomic64_set(&l->last_sent_ns, last_sent_ns);
	atomic_set(&l->inflight, inflight);
}

static u64 ewma(struct hottier_lat *l)
{
	return atomic64_read(&l->ewma_ns);
}

/* A member that never completed a read takes its first sample whole. */
static void lat_takes_the_first_read_whole(struct kunit *test)
{
	struct hottier_lat l = {};

	hottier_lat_start(&l, T0);
	KUNIT_EXPECT_EQ(test, atomic_read(&l.inflight), 1);
	hottier_lat_done(&l, T0, T0 + 2 * MS, true);
	KUNIT_EXPECT_EQ(test, ewma(&l), 2 * MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&l.inflight), 0);
}

/*
 * Reads queued behind others: four sent at once to a member that serves
 * one per millisecond complete at 1, 2, 3 and 4 ms, and each is a sample
 * of its own latency, the queue included (a queue the member hides from
 * the count in flight, as a submitter blocked on its tags, is seen so).
 */
static void lat_samples_map_to_completion(struct kunit *test)
{
	struct hottier_lat l = {};
	int i;

	for (i = 0; i < 4; i++)
		hottier_lat_start(&l, T0);
	for (i = 1; i <= 4; i++)
		hottier_lat_done(&l, T0, T0 + i * MS, true);
	/* 1 ms whole (the first), then 2, 3, 4 ms an eighth each. */
	KUNIT_EXPECT_EQ(test, ewma(&l), 1689453ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&l.inflight), 0);
}

/*
 * Later samples move the estimate by an eighth. A failed read is a sample
 * of its time as well (a timeout counts), and moves the failed share an
 * eighth towards every read, rounded up; but it is no completion: after
 * an outage, the first read that succeeds replaces both.
 */
static void lat_averages_fresh_samples_and_counts_failures(struct kunit *test)
{
	struct hottier_lat l = {};
	const int all = 1 << HOTTIER_FAIL_SHIFT;
	u64 start;
	int i;

	lat_set(&l, 2 * MS, 0, T0);
	hottier_lat_start(&l, T0 + 100 * MS);
	hottier_lat_done(&l, T0 + 100 * MS, T0 + 110 * MS, true);
	KUNIT_EXPECT_EQ(test, ewma(&l), 3 * MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&l.failed), 0);
	hottier_lat_start(&l, T0 + 200 * MS);
	hottier_lat_done(&l, T0 + 200 * MS, T0 + 211 * MS, false);
	KUNIT_EXPECT_EQ(test, ewma(&l), 4 * MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&l.failed), all / 8);
	KUNIT_EXPECT_EQ(test, atomic64_read(&l.last_done_ns), T0 + 110 * MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&l.inflight), 0);

	/* Failures in a row reach every read, not 7 in 8 of them. */
	for (i = 0; i < 100; i++) {
		hottier_lat_start(&l, T0 + 300 * MS);
		hottier_lat_done(&l, T0 + 300 * MS, T0 + 300 * MS + US, false);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&l.failed), all);

	/* Back after the outage: the first success is believed whole. */
	start = T0 + 110 * MS + HOTTIER_STALE_SAMPLE_NS + 1;
	hottier_lat_start(&l, start);
	hottier_lat_done(&l, start, start + 2 * MS, true);
	KUNIT_EXPECT_EQ(test, ewma(&l), 2 * MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&l.failed), 0);

	/* Successes in a row after failures reach none. */
	atomic_set(&l.failed, all / 8);
	for (i = 0; i < 100; i++) {
		hottier_lat_start(&l, start + 3 * MS);
		hottier_lat_done(&l, start + 3 * MS, start + 4 * MS, true);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&l.failed), 0);
}

/*
 * The HDD, the faster member, starts failing every read at once, in a
 * microsecond (a pool gone), while the SSD has 3 reads in flight. Its own
 * prediction falls as its failed share grows, yet within 64 timed reads
 * (a quarter of a second of one CPU's at HZ 250; 41 here) replica reads
 * turn to the SSD, and stay there
 * however the SSD's queue changes, until the HDD serves a read again.
 */
static void route_turns_from_a_member_that_fails(struct kunit *test)
{
	struct hottier_lat ssd = {}, hdd = {};
	unsigned int n, q;
	u64 now = T0;

	lat_set(&ssd, 1 * MS, 3, T0);
	lat_set(&hdd, 200 * US, 0, T0);
	KUNIT_ASSERT_EQ(test, hottier_route(HOTTIER_ROUTING_LATENCY, &ssd,
					    &hdd, now), HOTTIER_ROUTE_HDD);
	for (n = 0; n < 64; n++) {
		now += MS;
		if (hottier_route(HOTTIER_ROUTING_LATENCY, &ssd, &hdd, now) ==
		    HOTTIER_ROUTE_SSD)
			break;
		hottier_lat_start(&hdd, now);
		hottier_lat_done(&hdd, now, now + US, false);
	}
	KUNIT_EXPECT_LT(test, n, 64U);
	for (; n < 100; n++) {
		now += MS;
		hottier_lat_start(&hdd, now);
		hottier_lat_done(&hdd, now, now + US, false);
	}
	for (q = 0; q < 64; q++) {
		atomic_set(&ssd.inflight, q);
		KUNIT_EXPECT_EQ(test, hottier_route(HOTTIER_ROUTING_LATENCY,
						    &ssd, &hdd, now),
				HOTTIER_ROUTE_SSD);
	}
	/* A probe served: a read of 200 us after 1 s without completions. */
	now += NSEC_PER_SEC;
	hottier_lat_start(&hdd, now);
	hottier_lat_done(&hdd, now, now + 200 * US, true);
	lat_set(&ssd, 1 * MS, 3, now);		/* and the SSD in use */
	KUNIT_EXPECT_EQ(test, hottier_route(HOTTIER_ROUTING_LATENCY, &ssd, &hdd,
					    now + 200 * US), HOTTIER_ROUTE_HDD);
}

/*
 * A member that completed nothing for more than HOTTIER_STALE_SAMPLE_NS
 * has an old estimate: the next sample replaces it. A recovered SSD (50 ms
 * -> 100 us) is believed at its first probe, not after dozens; probes
 * come HOTTIER_STALE_NS apart, so each one of an idle member counts.
 */
static void lat_replaces_a_stale_estimate(struct kunit *test)
{
	struct hottier_lat l = {};
	u64 start = T0 + HOTTIER_STALE_SAMPLE_NS + 1;

	KUNIT_EXPECT_LT(test, (u64)HOTTIER_STALE_SAMPLE_NS,
			(u64)HOTTIER_STALE_NS);

	lat_set(&l, 50 * MS, 0, T0);
	hottier_lat_start(&l, start);
	hottier_lat_done(&l, start, start + 100 * US, true);
	KUNIT_EXPECT_EQ(test, ewma(&l), 100 * US);

	/* Within the period, the same sample only moves it an eighth. */
	lat_set(&l, 50 * MS, 0, T0);
	start = T0 + HOTTIER_STALE_SAMPLE_NS;
	hottier_lat_start(&l, start);
	hottier_lat_done(&l, start, start + 100 * US, true);
	KUNIT_EXPECT_EQ(test, ewma(&l), 50 * MS - (50 * MS - 100 * US) / 8);
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

/* Both members used just now: nothing to probe, the estimates decide. */
static void route_follows_the_predictions(struct kunit *test)
{
	const struct route_case *c = test->param_value;
	struct hottier_lat ssd = {}, hdd = {};

	lat_set(&ssd, c->ssd_ewma, c->ssd_inflight, T0);
	lat_set(&hdd, c->hdd_ewma, c->hdd_inflight, T0);
	KUNIT_EXPECT_EQ(test, hottier_route(c->mode, &ssd, &hdd, T0), c->want);
}

/*
 * A read every millisecond for ten seconds, each sent where the route
 * says: none goes to the slower member, which is probed (a read of its own,
 * hottier_probe_due()) once per HOTTIER_STALE_NS it goes unused, and never
 * more. With a healthy SSD, that is 9 HDD reads beside 10000.
 */
static void route_probes_only_a_stale_member(struct kunit *test)
{
	static const struct {
		u64 ssd_ewma, hdd_ewma;
		enum hottier_route_dev slow;
	} cases[] = {
		{ 100 * US, 4 * MS, HOTTIER_ROUTE_HDD },
		{ 50 * MS, 4 * MS, HOTTIER_ROUTE_SSD },
	};
	struct hottier_lat lat[2];
	enum hottier_route_dev dev, slow;
	unsigned int c, probes;
	u64 now, last_probe;

	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		memset(lat, 0, sizeof(lat));
		slow = cases[c].slow;
		lat_set(&lat[HOTTIER_ROUTE_SSD], cases[c].ssd_ewma, 0, T0);
		lat_set(&lat[HOTTIER_ROUTE_HDD], cases[c].hdd_ewma, 0, T0);
		probes = 0;
		last_probe = T0;
		for (now = T0; now < T0 + 10 * NSEC_PER_SEC; now += MS) {
			dev = hottier_route(HOTTIER_ROUTING_LATENCY,
					    &lat[HOTTIER_ROUTE_SSD],
					    &lat[HOTTIER_ROUTE_HDD], now);
			KUNIT_EXPECT_NE(test, dev, slow);
			hottier_lat_start(&lat[dev], now);
			atomic_set(&lat[dev].inflight, 0);
			if (!hottier_probe_due(&lat[slow], now))
				continue;
			hottier_lat_start(&lat[slow], now);
			atomic_set(&lat[slow].inflight, 0);
			probes++;
			KUNIT_EXPECT_GT(test, now - last_probe,
					(u64)HOTTIER_STALE_NS);
			KUNIT_EXPECT_LE(test, now - last_probe,
					(u64)HOTTIER_STALE_NS + MS);
			last_probe = now;
		}
		KUNIT_EXPECT_EQ_MSG(test, probes, 9U, "case %u", c);
	}
}

/*
 * A member whose reads are stuck in flight (a pool waiting for a
 * reconnect) is not probed, however long they stay; once they complete,
 * it is, within a period.
 */
static void route_does_not_probe_a_stuck_member(struct kunit *test)
{
	struct hottier_lat ssd = {}, hdd = {};
	u64 now;

	lat_set(&ssd, 100 * US, 0, T0);
	lat_set(&hdd, 4 * MS, 1, T0);		/* one read, stuck */
	for (now = T0; now < T0 + 40 * NSEC_PER_SEC; now += MS)
		KUNIT_EXPECT_FALSE(test, hottier_probe_due(&hdd, now));
	hottier_lat_done(&hdd, T0, now, false);	/* it fails at last */
	KUNIT_EXPECT_TRUE(test, hottier_probe_due(&hdd, now + MS));
	/* One caller claims it. */
	KUNIT_EXPECT_FALSE(test, hottier_probe_due(&hdd, now + 2 * MS));
}

/* A member that serves reads anyway (HDD misses) is never probed. */
static void route_does_not_probe_a_member_in_use(struct kunit *test)
{
	struct hottier_lat ssd = {}, hdd = {};
	u64 now;

	lat_set(&ssd, 100 * US, 0, T0);
	lat_set(&hdd, 4 * MS, 0, T0);
	for (now = T0; now < T0 + 5 * NSEC_PER_SEC; now += MS) {
		hottier_lat_start(&hdd, now);	/* a miss */
		atomic_set(&hdd.inflight, 0);
		KUNIT_EXPECT_EQ(test, hottier_route(HOTTIER_ROUTING_LATENCY,
						    &ssd, &hdd, now),
				HOTTIER_ROUTE_SSD);
		KUNIT_EXPECT_FALSE(test, hottier_probe_due(&hdd, now));
		hottier_lat_start(&ssd, now);
		atomic_set(&ssd.inflight, 0);
	}
}

static void route_ssd_never_probes(struct kunit *test)
{
	struct hottier_lat ssd = {}, hdd = {};
	u64 now;

	lat_set(&ssd, 50 * MS, 0, T0);
	lat_set(&hdd, 1 * US, 0, T0);
	for (now = T0; now < T0 + 5 * NSEC_PER_SEC; now += 10 * MS)
		KUNIT_EXPECT_EQ(test, hottier_route(HOTTIER_ROUTING_SSD, &ssd,
						    &hdd, now),
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

/*
 * Which reads are timed: every one when asked (the QoS), else a CPU's
 * first of each tick, however many it sends in that tick.
 */
static void lat_times_the_first_read_of_each_tick(struct kunit *test)
{
	unsigned long tick, last = 0;
	unsigned int i, timed = 0;

	for (tick = 1; tick <= 100; tick++) {
		for (i = 0; i < 50; i++) {
			KUNIT_EXPECT_TRUE(test, hottier_lat_timed(true, tick,
								  last));
			if (hottier_lat_timed(false, tick, last)) {
				timed++;
				last = tick;
			}
		}
	}
	KUNIT_EXPECT_EQ(test, timed, 100U);
	/* A reader slower than the tick: every read. */
	for (tick = 200; tick < 300; tick += 3)
		KUNIT_EXPECT_TRUE(test, hottier_lat_timed(false, tick, last));
	/* The tick wraps without a gap. */
	KUNIT_EXPECT_TRUE(test, hottier_lat_timed(false, 0, ULONG_MAX));
	KUNIT_EXPECT_FALSE(test, hottier_lat_timed(false, ULONG_MAX,
						   ULONG_MAX));
}

static struct kunit_case hottier_route_cases[] = {
	KUNIT_CASE(lat_times_the_first_read_of_each_tick),
	KUNIT_CASE(ewma_takes_the_first_sample_as_it_is),
	KUNIT_CASE(ewma_moves_an_eighth_towards_each_sample),
	KUNIT_CASE(ewma_converges_to_a_new_level),
	KUNIT_CASE(lat_takes_the_first_read_whole),
	KUNIT_CASE(lat_samples_map_to_completion),
	KUNIT_CASE(lat_averages_fresh_samples_and_counts_failures),
	KUNIT_CASE(lat_replaces_a_stale_estimate),
	KUNIT_CASE(predict_counts_the_reads_in_flight),
	KUNIT_CASE_PARAM(route_follows_the_predictions, route_gen_params),
	KUNIT_CASE(route_probes_only_a_stale_member),
	KUNIT_CASE(route_does_not_probe_a_stuck_member),
	KUNIT_CASE(route_does_not_probe_a_member_in_use),
	KUNIT_CASE(route_ssd_never_probes),
	KUNIT_CASE(route_turns_from_a_member_that_fails),
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
