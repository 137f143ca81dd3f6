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

/*
 * The victim levels, the policy's view of the replicas the map holds.
 *
 * Victims come from HOTTIER_LEVELS levels, one per heat band (a slot
 * is put at the band of its heat when it is installed). A level is a
 * hierarchical bitmap of its slots, searched from a hand that goes round
 * the SSD (a clock per level). Hits update a slot's heat under its bucket
 * lock and never touch the levels: a victim search looks at the lowest
 * levels, moves a slot that got hotter up to its band, and evicts the
 * first that did not, visiting at most HOTTIER_VICTIM_VISITS slots. Heat
 * halves every half-life, so then every level moves down one
 * (hottier_policy_age(): the levels are a ring, and the lowest merges into
 * the next in time proportional to its words in use). Pinned slots are in
 * no level and never visited.
 *
 * A slot's heat is 12 bits (quarter reads, up to 1023 reads) as of a
 * 5-bit epoch, the epoch of its last read. A replica is filed, and judged
 * as a victim, by its worth (hottier_mslot_worth()): its heat, quartered
 * for every epoch past the first that it went unread, and halved for every
 * read past HOTTIER_RATE_GRACE that its own read rate says it missed (the
 * rate rule, below). Heat remembers a half-life of reads, so a replica
 * whose reads stopped would hold its slot for several half-lives against
 * extents read now; its worth falls within a few epochs, and within two
 * for a replica that was read often. Every epoch, hottier_policy_refresh()
 * moves every idle replica down to the level of its worth (the victim
 * search would not look at it up there), and keeps its epoch at most
 * HOTTIER_IDLE_MAX epochs behind (its heat brought up to that epoch), so
 * the epoch never wraps.
 *
 * Lock order: a map bucket lock (hottier_map_lock()), then the levels'
 * lock. A read's hit, and the replica core installing, removing or
 * pinning a replica, file it under its bucket lock; the victim search,
 * age and refile take the levels' lock alone, and the refresh takes one
 * or the other, never both. No other lock is taken under the levels'.
 */
#define HOTTIER_VICTIM_VISITS		64
/* Bands 0 to 10: HOTTIER_SLOT_HEAT_MAX is 1023 reads. */
#define HOTTIER_LEVELS		11
/*
 * A replica unread this many epochs or more has its epoch brought up to
 * this far behind at every epoch's refresh: none is ever more than one
 * epoch further behind, and the field counts 32.
 */
#define HOTTIER_IDLE_MAX		8
/*
 * A replica unread for more epochs than this is worth less than its heat:
 * past the grace, shifted down by HOTTIER_HEAT_IDLE_SHIFT (a heat table
 * entry's rule) for every epoch it goes unread.
 */
#define HOTTIER_IDLE_GRACE		1
/*
 * The rate rule: a replica's read rate at its last read is taken as its
 * heat then x ln2 / half-life, and the reads it missed as that rate over
 * the whole epochs it has gone unread since the one of its last read (a
 * lower bound: the epoch field is all the time a slot keeps). Past this
 * many missed reads, its worth halves for every further one; at
 * HOTTIER_RATE_CUT_SHIFT halvings (6 reads missed) and below a read, it
 * is cut. A replica still read at its rate goes 3 of its reads unread
 * with a chance of e^-3 (1 in 20), and 6 with e^-6 (1 in 400). One read
 * once an epoch is cut only 8 epochs on, worth nothing by the epoch rule
 * long before; one read twice a second that stops is worth nothing two
 * epochs on.
 */
#define HOTTIER_RATE_GRACE		2
#define HOTTIER_RATE_CUT_SHIFT		4

struct hottier_levels {
	spinlock_t lock;	/* protects level[] (and hands), base, nr_pinned */
	struct hottier_hbm level[HOTTIER_LEVELS];	/* a ring */
	unsigned int base;	/* level[base] is the coldest */
	u32 nr_pinned;		/* resident pinned replicas, on no level */
	/*
	 * Unpinned replicas the rate rule cut, as of the last refresh, less
	 * those evicted since (a hint: a read revives one unseen).
	 */
	atomic_t nr_cut;
	/*
	 * A working-set turnover (hottier_policy_set_turnover()): while the
	 * epoch is turnover_epoch, an unpinned replica unread since that
	 * epoch began whose heat at its last read is turnover_heat or more
	 * is cut. 0: no turnover. Written by the policy's tick and its
	 * turnover's seconds, which the target serialises; read unlocked
	 * (hints, as nr_cut).
	 */
	u32 turnover_heat;
	u16 turnover_epoch;
};

/* What is known about the victim the levels offer (hottier_policy_victim()). */
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
 * the replicas, which the policy's victim levels (struct hottier_levels)
 * file by their worth. The target tells it of misses, hits, and of
 * installed, removed and pinned replicas,
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
	struct hottier_levels levels;	/* the replicas, filed by worth */
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
u32 __hottier_policy_hit(struct hottier_policy *p, u32 slot);
void __hottier_policy_installed(struct hottier_policy *p, u32 slot);
void __hottier_policy_removing(struct hottier_policy *p, u32 slot);
void __hottier_policy_set_pinned(struct hottier_policy *p, u32 slot,
				 bool pinned);
void hottier_policy_restored(struct hottier_policy *p, u32 slot);
u64 hottier_policy_levels_bytes(u64 nr_slots);
u32 hottier_mslot_worth(const struct hottier_mslot *s, u16 epoch);
bool hottier_mslot_cut(const struct hottier_mslot *s, u16 epoch);
u32 hottier_policy_worth(struct hottier_policy *p, u32 slot, u16 epoch);
bool hottier_policy_cut(struct hottier_policy *p, u32 slot, u16 epoch);
u32 hottier_policy_nr_cut(struct hottier_policy *p);
void hottier_policy_cut_gone(struct hottier_policy *p, bool none_left);
u32 hottier_policy_victim(struct hottier_policy *p, u16 epoch, u32 *heat,
			  u64 *extent, unsigned int *visits);
void hottier_policy_age(struct hottier_policy *p);
void hottier_policy_refresh(struct hottier_policy *p, u16 epoch);
void hottier_policy_set_turnover(struct hottier_policy *p, u16 epoch,
				 u32 heat);
void hottier_policy_turnover_refile(struct hottier_policy *p, u16 epoch);
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
