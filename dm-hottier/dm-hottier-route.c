// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: latency estimates, read routing, migration QoS.
 */
#include "dm-hottier-route.h"
#include "dm-hottier-compat.h"

#include <linux/kernel.h>
#include <linux/math64.h>

/* The first sample is taken as it is; later ones move the average 1/8. */
u64 hottier_ewma_next(u64 ewma, u64 sample)
{
	if (!ewma)
		return sample ? sample : 1;
	if (sample >= ewma)
		return ewma + ((sample - ewma) >> HOTTIER_EWMA_SHIFT);
	return ewma - ((ewma - sample) >> HOTTIER_EWMA_SHIFT);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_ewma_next);

/* Lockless: a sample that loses a race with another is retried. */
void hottier_lat_sample(struct hottier_lat *l, u64 sample_ns)
{
	s64 old = atomic64_read(&l->ewma_ns);

	while (!atomic64_try_cmpxchg(&l->ewma_ns, &old,
				     hottier_ewma_next(old, sample_ns)))
		;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_lat_sample);

/* A read sent now waits for those in flight, then takes its own time. */
u64 hottier_lat_predict(u64 ewma_ns, unsigned int inflight)
{
	return ewma_ns * ((u64)inflight + 1);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_lat_predict);

/*
 * Where a replica read goes. routing latency: the device with the lower
 * predicted completion time; a device with no estimate yet is tried first;
 * one read in HOTTIER_FRESH_PERIOD goes to the other device, so that the
 * slower one's estimate stays fresh and a recovery is noticed.
 */
enum hottier_route_dev hottier_route(enum hottier_routing mode, u64 ssd_ewma,
				     unsigned int ssd_inflight, u64 hdd_ewma,
				     unsigned int hdd_inflight, u64 seq)
{
	enum hottier_route_dev fast;

	if (mode == HOTTIER_ROUTING_SSD)
		return HOTTIER_ROUTE_SSD;
	if (!ssd_ewma)
		fast = HOTTIER_ROUTE_SSD;
	else if (!hdd_ewma)
		fast = HOTTIER_ROUTE_HDD;
	else if (hottier_lat_predict(ssd_ewma, ssd_inflight) <=
		 hottier_lat_predict(hdd_ewma, hdd_inflight))
		fast = HOTTIER_ROUTE_SSD;
	else
		fast = HOTTIER_ROUTE_HDD;
	if (seq % HOTTIER_FRESH_PERIOD == HOTTIER_FRESH_PERIOD - 1)
		return fast == HOTTIER_ROUTE_SSD ? HOTTIER_ROUTE_HDD :
						   HOTTIER_ROUTE_SSD;
	return fast;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_route);

/* At a resume or a new budget: one copy at first, or all with no budget. */
void hottier_qos_start(struct hottier_qos *q, unsigned int max, u64 budget_ns)
{
	q->allowed = budget_ns ? 1 : max;
	q->wait = 0;
	q->backoff = 1;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_qos_start);

/*
 * One QoS period's step, from its foreground HDD reads: @reads completed,
 * @near of them slower than half the budget, @over slower than the budget.
 * The tail, not the average, is what the foreground feels, so each test
 * is on 1 read in HOTTIER_QOS_TAIL:
 *  - over budget: the allowance is halved (down to none), and growth waits
 *    for backoff periods within budget; the backoff doubles at each cut,
 *    up to HOTTIER_QOS_BACKOFF_MAX, so that while copies hurt the
 *    foreground, probing whether they still do becomes rare;
 *  - over half the budget: it holds, short of the budget;
 *  - else, once the wait is over, one more copy (up to @max); and if
 *    copies ran in the period without harm, the backoff halves.
 * A period with no foreground read ends any wait: the HDD is idle.
 * A budget of 0 turns the controller off: @max.
 */
void hottier_qos_next(struct hottier_qos *q, unsigned int max, u32 reads,
		      u32 near, u32 over, u64 budget_ns)
{
	if (!budget_ns) {
		hottier_qos_start(q, max, 0);
		return;
	}
	if ((u64)over * HOTTIER_QOS_TAIL > reads) {
		q->allowed /= 2;
		q->wait = q->backoff;
		q->backoff = min(q->backoff * 2, HOTTIER_QOS_BACKOFF_MAX);
		return;
	}
	if ((u64)near * HOTTIER_QOS_TAIL > reads) {
		q->allowed = min(q->allowed, max);
		return;
	}
	if (!reads)
		q->wait = 0;
	if (q->wait) {
		q->wait--;
		q->allowed = min(q->allowed, max);
		return;
	}
	/* A period with copies and no harm: the next cut waits less. */
	if (q->allowed)
		q->backoff = max(q->backoff / 2, 1U);
	q->allowed = min(q->allowed + 1, max);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_qos_next);
