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
static void lat_sample(struct hottier_lat *l, u64 sample_ns, bool stale)
{
	s64 old = atomic64_read(&l->ewma_ns);

	while (!atomic64_try_cmpxchg(&l->ewma_ns, &old,
				     hottier_ewma_next(stale ? 0 : old,
						       sample_ns)))
		;
}

/*
 * Whether to time a read that a CPU sends a member in tick @now_jiffies,
 * when it last timed one of that member's in @last_jiffies: when @every
 * (the migration QoS watches each HDD read), else the first of each tick.
 * A reader slower than HZ a CPU, or a probe of a stale member, is timed
 * every time; a busy one gives HZ samples a second a CPU, not one a read.
 */
bool hottier_lat_timed(bool every, unsigned long now_jiffies,
		       unsigned long last_jiffies)
{
	return every || now_jiffies != last_jiffies;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_lat_timed);

/* A timed read is sent to the member now. */
void hottier_lat_start(struct hottier_lat *l, u64 now_ns)
{
	if (now_ns - atomic64_read(&l->last_sent_ns) >= HOTTIER_SENT_GRAIN_NS)
		atomic64_set(&l->last_sent_ns, now_ns);
	atomic_inc(&l->inflight);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_lat_start);

/*
 * The failed share's next value after a read that failed (@failed) or
 * not: moved by 1/2^HOTTIER_EWMA_SHIFT, rounded towards the read, so that
 * it reaches every read and none; taken whole when @stale.
 */
static int fail_next(int share, bool failed, bool stale)
{
	int all = 1 << HOTTIER_FAIL_SHIFT, step = (1 << HOTTIER_EWMA_SHIFT) - 1;

	if (stale)
		return failed ? all : 0;
	if (failed)
		return share + ((all - share + step) >> HOTTIER_EWMA_SHIFT);
	return share - ((share + step) >> HOTTIER_EWMA_SHIFT);
}

/* Lockless, as lat_sample(). */
static void fail_sample(struct hottier_lat *l, bool failed, bool stale)
{
	int old = atomic_read(&l->failed);

	while (!atomic_try_cmpxchg(&l->failed, &old,
				   fail_next(old, failed, stale)))
		;
}

/*
 * A read sent at @start_ns completed at @now_ns (@ok: without error): the
 * sample is its latency, map to completion, so that a queue the member
 * hides (a submitter waiting for one of its tags) is in it, and a read
 * held until a timeout counts the timeout. A member that completed nothing
 * for HOTTIER_STALE_SAMPLE_NS before the read started has an estimate too
 * old to average with: the sample replaces it, and its failed share. A
 * failure is no completion: the first read that succeeds after an outage
 * replaces both.
 */
void hottier_lat_done(struct hottier_lat *l, u64 start_ns, u64 now_ns,
		      bool ok)
{
	u64 prev;
	bool stale;

	atomic_dec(&l->inflight);
	prev = ok ? atomic64_xchg(&l->last_done_ns, now_ns) :
		    atomic64_read(&l->last_done_ns);
	stale = start_ns > prev && start_ns - prev > HOTTIER_STALE_SAMPLE_NS;
	lat_sample(l, now_ns > start_ns ? now_ns - start_ns : 0, stale);
	fail_sample(l, !ok, stale);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_lat_done);

/* A read sent now waits for those in flight, then takes its own time. */
u64 hottier_lat_predict(u64 ewma_ns, unsigned int inflight)
{
	return ewma_ns * ((u64)inflight + 1);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_lat_predict);

static u64 lat_own(struct hottier_lat *l)
{
	return hottier_lat_predict(atomic64_read(&l->ewma_ns),
				   atomic_read(&l->inflight));
}

/*
 * A read sent to @l now: its own prediction @own, plus @l's failed share
 * of @other, the other member's own prediction, where a failure is sent.
 */
static u64 lat_expect(struct hottier_lat *l, u64 own, u64 other)
{
	return own + mul_u64_u32_shr(other, atomic_read(&l->failed),
				     HOTTIER_FAIL_SHIFT);
}

/* The member a read is expected to complete on first; the SSD on a tie. */
static enum hottier_route_dev faster(struct hottier_lat *ssd,
				     struct hottier_lat *hdd)
{
	u64 ssd_own = lat_own(ssd), hdd_own = lat_own(hdd);

	return lat_expect(ssd, ssd_own, hdd_own) <=
	       lat_expect(hdd, hdd_own, ssd_own) ?
	       HOTTIER_ROUTE_SSD : HOTTIER_ROUTE_HDD;
}

/*
 * Where a replica read goes. routing latency: the member with the lower
 * expected completion time (its failed reads' retries counted); a member
 * with no estimate yet is tried first. routing ssd: the SSD, always. The
 * read never probes the other member: hottier_probe_due() says when a
 * read of its own should.
 */
enum hottier_route_dev hottier_route(enum hottier_routing mode,
				     struct hottier_lat *ssd,
				     struct hottier_lat *hdd, u64 now_ns)
{
	u64 ssd_ewma = atomic64_read(&ssd->ewma_ns);
	u64 hdd_ewma = atomic64_read(&hdd->ewma_ns);

	if (mode == HOTTIER_ROUTING_SSD || !ssd_ewma)
		return HOTTIER_ROUTE_SSD;
	if (!hdd_ewma)
		return HOTTIER_ROUTE_HDD;
	return faster(ssd, hdd);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_route);

/*
 * Whether to probe @l, the member a replica read did not go to under
 * routing latency, so that a recovery is noticed within a period: true
 * once per HOTTIER_STALE_NS that it was sent no read, and only while it
 * has none in flight. The probe is a read of its own, not the caller's
 * (a reader never waits on the member it did not choose), and it counts
 * in flight from here (hottier_lat_start()). A member with reads in
 * flight gets no probe: they give their own samples when they complete,
 * and one whose reads are stuck (a pool waiting for a reconnect) is not
 * sent another until they do. One caller claims each probe.
 */
bool hottier_probe_due(struct hottier_lat *l, u64 now_ns)
{
	s64 last = atomic64_read(&l->last_sent_ns);

	return now_ns - last > HOTTIER_STALE_NS && !atomic_read(&l->inflight) &&
	       atomic64_try_cmpxchg(&l->last_sent_ns, &last, now_ns);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_probe_due);

/* At a resume or a new budget: one copy at first, or all with no budget. */
void hottier_qos_start(struct hottier_qos *q, unsigned int max, u64 budget_ns)
{
	q->allowed = budget_ns ? 1 : max;
	q->wait = 0;
	q->backoff = 1;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_qos_start);

/*
 * One QoS period's step, from its foreground HDD reads and writes: @ios
 * completed, @near of them slower than half the budget, @over slower than
 * the budget. The tail, not the average, is what the foreground feels, so
 * each test is on 1 I/O in HOTTIER_QOS_TAIL:
 *  - over budget: the allowance is halved (down to none), and growth waits
 *    for backoff periods within budget; the backoff doubles at each cut,
 *    up to HOTTIER_QOS_BACKOFF_MAX, so that while copies hurt the
 *    foreground, probing whether they still do becomes rare;
 *  - over half the budget: it holds, short of the budget;
 *  - else, once the wait is over, one more copy (up to @max); and if
 *    copies ran in the period without harm, the backoff halves.
 * A period with no foreground I/O ends any wait: the HDD is idle.
 * A budget of 0 turns the controller off: @max.
 */
void hottier_qos_next(struct hottier_qos *q, unsigned int max, u32 ios,
		      u32 near, u32 over, u64 budget_ns)
{
	if (!budget_ns) {
		hottier_qos_start(q, max, 0);
		return;
	}
	if ((u64)over * HOTTIER_QOS_TAIL > ios) {
		q->allowed /= 2;
		q->wait = q->backoff;
		q->backoff = min(q->backoff * 2, HOTTIER_QOS_BACKOFF_MAX);
		return;
	}
	if ((u64)near * HOTTIER_QOS_TAIL > ios) {
		q->allowed = min(q->allowed, max);
		return;
	}
	if (!ios)
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
