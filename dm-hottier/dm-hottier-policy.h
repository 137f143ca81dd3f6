/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: promotion and eviction decisions, and the migration rate
 * limit. Plain C with no bio: the target decides when, this decides what.
 */
#ifndef DM_HOTTIER_POLICY_H
#define DM_HOTTIER_POLICY_H

#include "dm-hottier-heat.h"
#include "dm-hottier-map.h"

#include <linux/kfifo.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

enum hottier_promote_action {
	HOTTIER_PROMOTE_NONE,	/* leave the extent on the HDD */
	HOTTIER_PROMOTE_FREE,	/* copy it into a free slot */
	HOTTIER_PROMOTE_EVICT,	/* evict the victim, then copy it there */
};

/* What is known about the victim the map offers (hottier_map_victim()). */
struct hottier_victim {
	bool found;
	bool cut;	/* the rate rule cut it (hottier_mslot_cut()) */
	u32 heat;	/* its worth */
};

u32 hottier_policy_bar(u32 threshold_heat, bool free_slot);
enum hottier_promote_action
hottier_policy_promote(u32 heat, bool pinned, u32 threshold_heat,
		       bool free_slot, const struct hottier_victim *victim);

/*
 * Token bucket for migration_mbps: up to one second of credit is kept, and
 * a copy larger than that may run the bucket into debt, which later copies
 * wait out.
 */
struct hottier_tokens {
	s64 bytes;
	u64 last_ns;
};

void hottier_tokens_init(struct hottier_tokens *t, u64 now_ns);
bool hottier_tokens_take(struct hottier_tokens *t, u64 now_ns,
			 u64 rate_bytes_per_s, u64 bytes);

/*
 * The policy object: heat of the extents without a replica (a heat table),
 * promotion candidates, and the promote and pin requests, kept as ranges
 * of extents and never lost. It owns heat and promotion state; the map
 * (struct hottier_map) owns residency and copy state, including the heat of
 * the replicas. The target tells it of misses and of completed copies,
 * and asks it for the next promotion as a work item (struct hottier_work):
 * an extent and a slot reserved for it, free or evicted. The target
 * decides when; the policy what.
 */
#define HOTTIER_NR_CANDIDATES	256
/* Candidates looked at by one hottier_policy_next() call at most. */
#define HOTTIER_POLICY_TRIES	16
/* Work items handed out and not started or cancelled yet, at most. */
#define HOTTIER_POLICY_PENDING	64

/* A range of extents, both ends included. */
struct hottier_range {
	struct list_head list;
	u64 first, last;
	bool pin;		/* on asked: a pin's copy request */
};

struct hottier_policy {
	struct hottier_heat heat;	/* extents without a replica */
	struct hottier_map *map;
	u32 threshold;			/* promotion heat; WRITE_ONCE */
	spinlock_t lock;		/* protects the fields below */
	DECLARE_KFIFO(cand, u64, HOTTIER_NR_CANDIDATES);
	struct list_head asked;		/* ranges to promote, consumed */
	struct list_head pins;		/* pinned ranges: sorted, disjoint */
	u64 nr_pinned;			/* extents in pins */
	bool pins_dirty;		/* a pinned extent may lack a replica */
	/* Extents of work items handed out, not yet in the map's index. */
	u64 pending[HOTTIER_POLICY_PENDING];
	unsigned int nr_pending;
};

/* Where a candidate came from. */
enum hottier_work_why {
	HOTTIER_WHY_HEAT,		/* its reads crossed the threshold */
	HOTTIER_WHY_ASKED,		/* a promote message */
	HOTTIER_WHY_PIN,		/* a pin */
};

/*
 * A promotion: copy @extent into @slot, RESERVED for it, or (@evict)
 * holding @victim's replica, which the caller evicts first.
 */
struct hottier_work {
	u64 extent;
	u32 slot;
	u32 heat;			/* the extent's, carried to its slot */
	bool pinned;
	bool evict;			/* @slot holds @victim's replica */
	bool victim_cut;		/* ... which the rate rule cut */
	bool dropping;			/* the caller's: its record goes */
	u64 victim;
	u32 victim_heat;		/* kept in the heat table, evicted */
	unsigned int visits;		/* slots the victim search looked at */
};

int hottier_policy_init(struct hottier_policy *p, struct hottier_map *map,
			u64 max_tracked);
void hottier_policy_exit(struct hottier_policy *p);
void hottier_policy_set_threshold(struct hottier_policy *p, u32 reads);
bool hottier_policy_miss(struct hottier_policy *p, u64 extent, bool scan);
void __hottier_policy_hit(struct hottier_policy *p, u32 slot);
int hottier_policy_next(struct hottier_policy *p, struct hottier_work *w);
void hottier_policy_evicted(struct hottier_policy *p, struct hottier_work *w,
			    bool ok);
void hottier_policy_cancel(struct hottier_policy *p, struct hottier_work *w);
void hottier_policy_start(struct hottier_policy *p, struct hottier_work *w);
void hottier_policy_done(struct hottier_policy *p, struct hottier_work *w,
			 bool ok);
void hottier_policy_tick(struct hottier_policy *p);
u16 hottier_policy_epoch(struct hottier_policy *p);
void hottier_policy_turnover(struct hottier_policy *p);
bool hottier_policy_turnover_second(struct hottier_policy *p, u32 elapsed_ms,
				    u32 halflife_ms);
bool hottier_policy_pinned(struct hottier_policy *p, u64 extent);
int hottier_policy_promote_range(struct hottier_policy *p, u64 first,
				 u64 last, gfp_t gfp);
int hottier_policy_pin(struct hottier_policy *p, u64 first, u64 last,
		       gfp_t gfp);
int hottier_policy_unpin(struct hottier_policy *p, u64 first, u64 last,
			 gfp_t gfp);
void hottier_policy_pins_dropped(struct hottier_policy *p);
void hottier_policy_repin(struct hottier_policy *p);
bool hottier_policy_wants_work(struct hottier_policy *p);
u64 hottier_policy_nr_pinned(struct hottier_policy *p);
u32 hottier_policy_pin_ranges_after(struct hottier_policy *p, u64 first,
				    u64 last, bool pin);
u32 hottier_policy_pin_ranges(struct hottier_policy *p, u64 *first,
			      u64 *last, u32 max, bool count);

/*
 * The working-set turnover detector. Once a second the target gives it the
 * device's fresh reads and their hits so far: reads that continue no
 * stream, since a stream's reads are one decision repeated (its file
 * playing from the SSD or not), not evidence of where the hot set is. It
 * averages their rates over the half-life and over HOTTIER_TURNOVER_SHORT_S.
 * A turnover begins once the short average's hits, and its hit ratio, have
 * been under 1 / HOTTIER_TURNOVER_DROP of the long average's for
 * HOTTIER_TURNOVER_HOLD_S, the long hit ratio being 1 / HOTTIER_TURNOVER_LEAST
 * or more and the detector HOTTIER_TURNOVER_ARM_S old: one turnover a drop, the
 * next waits for the hits to come back. In a turnover (one epoch), a replica
 * unread since it began is cut once the rate of its last read says it
 * missed HOTTIER_TURNOVER_MISSED reads (hottier_turnover_heat()).
 */
#define HOTTIER_TURNOVER_SHORT_S	2
#define HOTTIER_TURNOVER_DROP	4
#define HOTTIER_TURNOVER_HOLD_S	2
#define HOTTIER_TURNOVER_LEAST	5
#define HOTTIER_TURNOVER_ARM_S	10
#define HOTTIER_TURNOVER_MISSED	2
/* Rates are kept in reads a second, times 2^HOTTIER_TURNOVER_RATE_SHIFT. */
#define HOTTIER_TURNOVER_RATE_SHIFT	8

struct hottier_turnover {
	u64 hits, reads;		/* the counters at the last sample */
	u64 long_hits, long_reads;	/* averaged over the half-life */
	u64 short_hits, short_reads;	/* ... over HOTTIER_TURNOVER_SHORT_S */
	u32 age_ms;			/* since the first sample */
	u32 low_ms;			/* the drop held; U32_MAX: it fired */
	bool primed;			/* hits and reads are a sample's */
};

void hottier_turnover_init(struct hottier_turnover *sh);
bool hottier_turnover_sample(struct hottier_turnover *sh, u64 hits, u64 reads,
			     u32 elapsed_ms, u32 halflife_ms, bool turning_over);
u32 hottier_turnover_heat(u32 elapsed_ms, u32 halflife_ms);

#endif /* DM_HOTTIER_POLICY_H */
