/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: per-device latency estimates, the read routing decision and
 * the migration QoS controller. Plain C with no bio, so KUnit drives it.
 *
 * The estimate is a moving average of read latency, map to completion
 * (as the multipath selector dm-ps-historical-service-time keeps one of
 * service time), updated locklessly at end_io, with the number of reads in
 * flight beside it. The prediction is the estimate times the reads in
 * flight plus one. Every read is counted in flight; a CPU times the first
 * read it sends a member in each tick (hottier_lat_timed()): the two clock
 * reads of a timed read are the cost, and an average needs no more than
 * HZ samples a second.
 *
 * Beside it, each member has a moving average of the share of its timed
 * reads that failed. A failed read is sent again to the other member, so
 * a read sent to a member is expected to take its own prediction plus that
 * share of the other's: a member that fails every read, however fast it
 * fails them, never predicts better than the one that serves them.
 */
#ifndef DM_HOTTIER_ROUTE_H
#define DM_HOTTIER_ROUTE_H

#include <linux/atomic.h>
#include <linux/time64.h>
#include <linux/types.h>

/* A new sample weighs 1/2^HOTTIER_EWMA_SHIFT. */
#define HOTTIER_EWMA_SHIFT	3
/* A member sent no read for this long is stale: it is probed. */
#define HOTTIER_STALE_NS	NSEC_PER_SEC
/*
 * A read that starts this long after the member's last completion has no
 * recent estimate to average with: its sample replaces it. Shorter than
 * the probe period, so that every probe of an idle member is believed.
 */
#define HOTTIER_STALE_SAMPLE_NS	(HOTTIER_STALE_NS / 2)
/* The failed share of reads, in fixed point: 1 << this is every read. */
#define HOTTIER_FAIL_SHIFT	10
/* last_sent_ns is kept to this grain, to spare its cache line. */
#define HOTTIER_SENT_GRAIN_NS	NSEC_PER_MSEC
/* The QoS keeps all but 1 in this many foreground HDD I/Os in budget. */
#define HOTTIER_QOS_TAIL	100
/* After a cut, copies wait at most this many QoS periods to grow again. */
#define HOTTIER_QOS_BACKOFF_MAX	64

struct hottier_lat {
	atomic64_t ewma_ns;	/* read latency; 0: no sample yet */
	atomic64_t last_done_ns; /* the last read completion */
	atomic64_t last_sent_ns; /* the last read sent, to the grain above */
	atomic_t inflight;	/* reads sent and not completed */
	atomic_t failed;	/* share of timed reads failed (FAIL_SHIFT) */
};

/* The migration QoS controller's state, one step per QoS period. */
struct hottier_qos {
	unsigned int allowed;	/* copies allowed in flight */
	unsigned int wait;	/* periods within budget before the next growth */
	unsigned int backoff;	/* the wait the next cut sets */
};

enum hottier_routing {
	HOTTIER_ROUTING_LATENCY,	/* the lower predicted completion */
	HOTTIER_ROUTING_SSD,		/* always the SSD */
};

enum hottier_route_dev {
	HOTTIER_ROUTE_SSD,
	HOTTIER_ROUTE_HDD,
	HOTTIER_ROUTE_NR,
};

u64 hottier_ewma_next(u64 ewma, u64 sample);
bool hottier_lat_timed(bool every, unsigned long now_jiffies,
		       unsigned long last_jiffies);
void hottier_lat_start(struct hottier_lat *l, u64 now_ns);
void hottier_lat_done(struct hottier_lat *l, u64 start_ns, u64 now_ns,
		      bool ok);
u64 hottier_lat_predict(u64 ewma_ns, unsigned int inflight);
enum hottier_route_dev hottier_route(enum hottier_routing mode,
				     struct hottier_lat *ssd,
				     struct hottier_lat *hdd, u64 now_ns);
bool hottier_probe_due(struct hottier_lat *l, u64 now_ns);
void hottier_qos_start(struct hottier_qos *q, unsigned int max,
		       u64 budget_ns);
void hottier_qos_next(struct hottier_qos *q, unsigned int max, u32 ios,
		      u32 near, u32 over, u64 budget_ns);

/* A read that is not timed is counted in flight, and nothing more. */
static inline void hottier_lat_start_untimed(struct hottier_lat *l)
{
	atomic_inc(&l->inflight);
}

static inline void hottier_lat_done_untimed(struct hottier_lat *l)
{
	atomic_dec(&l->inflight);
}

#endif /* DM_HOTTIER_ROUTE_H */
