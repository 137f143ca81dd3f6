// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: promotion and eviction decisions, migration rate limit.
 */
#include "dm-hottier-policy.h"
#include "dm-hottier-compat.h"

#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/time64.h>

/*
 * The heat that makes an extent a candidate. A promotion into a free slot
 * evicts nothing and costs only its copy: while slots are free the bar is
 * half the threshold, one read at least. A promotion that evicts needs the
 * whole threshold.
 */
u32 hottier_policy_bar(u32 threshold_heat, bool free_slot)
{
	if (!free_slot)
		return threshold_heat;
	return max_t(u32, threshold_heat / 2, HOTTIER_HEAT_ONE);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_bar);

/*
 * Promote an extent whose heat reached the bar into a free slot; with none
 * free, only if it reached the threshold and its heat beats the victim's
 * worth by one more threshold (hysteresis: extents of equal heat never
 * swap). A replica's worth is its heat, less for each epoch it went
 * unread past the first and for each read its rate says it missed
 * (hottier_mslot_worth()). A victim the rate rule cut is taken as a free
 * slot is, at the free-slot bar. A pinned extent needs no heat and evicts
 * any unpinned replica.
 */
enum hottier_promote_action
hottier_policy_promote(u32 heat, bool pinned, u32 threshold_heat,
		       bool free_slot, const struct hottier_victim *victim)
{
	bool cut = !free_slot && victim->found && victim->cut;

	if (!pinned &&
	    heat < hottier_policy_bar(threshold_heat, free_slot || cut))
		return HOTTIER_PROMOTE_NONE;
	if (free_slot)
		return HOTTIER_PROMOTE_FREE;
	if (!victim->found)
		return HOTTIER_PROMOTE_NONE;
	if (pinned || cut || (u64)heat >= (u64)victim->heat + threshold_heat)
		return HOTTIER_PROMOTE_EVICT;
	return HOTTIER_PROMOTE_NONE;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_promote);

void hottier_tokens_init(struct hottier_tokens *t, u64 now_ns)
{
	t->bytes = 0;
	t->last_ns = now_ns;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_tokens_init);

/* Rate 0: unlimited. */
bool hottier_tokens_take(struct hottier_tokens *t, u64 now_ns,
			 u64 rate_bytes_per_s, u64 bytes)
{
	u64 elapsed, secs;
	u32 ns;

	if (!rate_bytes_per_s)
		return true;
	elapsed = now_ns > t->last_ns ? now_ns - t->last_ns : 0;
	t->last_ns = now_ns;
	/*
	 * The time elapsed pays off any debt first, however long it took;
	 * past the debt, no more than a second of credit is kept. Once the
	 * whole seconds alone cover what the bucket lacks it is full, so the
	 * product below stays within that and cannot overflow.
	 */
	secs = div_u64_rem(elapsed, NSEC_PER_SEC, &ns);
	if (t->bytes >= (s64)rate_bytes_per_s ||
	    secs > div64_u64(rate_bytes_per_s - t->bytes, rate_bytes_per_s))
		t->bytes = rate_bytes_per_s;
	else
		t->bytes = min_t(s64, t->bytes + secs * rate_bytes_per_s +
				 mul_u64_u64_div_u64(ns, rate_bytes_per_s,
						     NSEC_PER_SEC),
				 (s64)rate_bytes_per_s);
	if (t->bytes < 0)
		return false;
	t->bytes -= bytes;
	return true;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_tokens_take);

/* The policy object */

/* max_tracked: heat-table entries for extents without a replica. */
int hottier_policy_init(struct hottier_policy *p, struct hottier_map *map,
			u64 max_tracked)
{
	int r;

	p->map = map;
	p->threshold = HOTTIER_HEAT_ONE;
	spin_lock_init(&p->lock);
	INIT_KFIFO(p->cand);
	INIT_LIST_HEAD(&p->asked);
	INIT_LIST_HEAD(&p->pins);
	p->nr_pinned = 0;
	p->pins_dirty = false;
	r = hottier_heat_init(&p->heat, max_tracked);
	if (r)
		p->heat.sets = NULL;
	return r;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_init);

static void free_ranges(struct list_head *head)
{
	struct hottier_range *r, *tmp;

	list_for_each_entry_safe(r, tmp, head, list) {
		list_del(&r->list);
		kfree(r);
	}
}

/* Copes with a policy never initialised (a refused table): all zeroes. */
void hottier_policy_exit(struct hottier_policy *p)
{
	if (!p->map)
		return;
	free_ranges(&p->asked);
	free_ranges(&p->pins);
	hottier_heat_exit(&p->heat);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_exit);

void hottier_policy_set_threshold(struct hottier_policy *p, u32 reads)
{
	WRITE_ONCE(p->threshold, reads * HOTTIER_HEAT_ONE);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_set_threshold);

u16 hottier_policy_epoch(struct hottier_policy *p)
{
	return atomic_read(&p->heat.epoch);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_epoch);

/*
 * One epoch; each half-life, the map's victim levels move down one. Every
 * epoch refreshes a share of the replicas' heat. May sleep.
 */
void hottier_policy_tick(struct hottier_policy *p)
{
	hottier_heat_tick(&p->heat);
	if (!(atomic_read(&p->heat.epoch) % HOTTIER_EPOCHS_PER_HALFLIFE))
		hottier_map_age(p->map);
	hottier_map_turnover(p->map, 0, 0);	/* a turnover lasts an epoch */
	hottier_map_refresh(p->map, hottier_policy_epoch(p));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_tick);

/*
 * A working-set turnover begins (hottier_turnover_sample()): the heat table
 * forgets every entry, whose old heat would keep the new hot set's out of
 * it (and make the old set's warm extents candidates again), and a new
 * epoch starts now: a replica last read in an earlier one is unread since
 * the turnover began. Nothing is cut before its first second. May sleep.
 */
void hottier_policy_turnover(struct hottier_policy *p)
{
	hottier_heat_forget_all(&p->heat);
	hottier_policy_tick(p);
	hottier_map_turnover(p->map, hottier_policy_epoch(p), U32_MAX);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_turnover);

/*
 * A second of the turnover, @elapsed_ms after it began: the replicas unread
 * since whose rate says they missed HOTTIER_TURNOVER_MISSED reads are cut,
 * and go to the lowest level. False: the turnover is over (its epoch ended).
 * May sleep.
 */
bool hottier_policy_turnover_second(struct hottier_policy *p, u32 elapsed_ms,
				    u32 halflife_ms)
{
	u16 epoch = hottier_policy_epoch(p);

	if (!READ_ONCE(p->map->turnover_heat) ||
	    READ_ONCE(p->map->turnover_epoch) != epoch)
		return false;
	hottier_map_turnover(p->map, epoch,
			     hottier_turnover_heat(elapsed_ms, halflife_ms));
	hottier_map_turnover_refile(p->map, epoch);
	return true;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_turnover_second);

/* The turnover detector */

void hottier_turnover_init(struct hottier_turnover *sh)
{
	memset(sh, 0, sizeof(*sh));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_turnover_init);

/* @avg moved towards @rate by @ms of a time constant of @tau_ms. */
static void turnover_avg(u64 *avg, u64 rate, u32 ms, u32 tau_ms)
{
	ms = min(ms, tau_ms);
	if (rate >= *avg)
		*avg += div_u64((rate - *avg) * ms, tau_ms);
	else
		*avg -= div_u64((*avg - rate) * ms, tau_ms);
}

/* Hits per read, in 1/1024. */
static u64 turnover_ratio(u64 hits, u64 reads)
{
	return reads ? div64_u64(hits << 10, reads) : 0;
}

/*
 * A sample: the device's fresh read hits and fresh reads, counted since
 * it started, @elapsed_ms after the last sample. True: a turnover begins
 * (never while @turning_over, a turnover being on).
 */
bool hottier_turnover_sample(struct hottier_turnover *sh, u64 hits, u64 reads,
			     u32 elapsed_ms, u32 halflife_ms, bool turning_over)
{
	u64 dh = hits - sh->hits, dr = reads - sh->reads, rh, rr;
	bool first = !sh->age_ms, low, back;

	/* Counters reset (reset_stats) start it over, averages kept. */
	back = hits < sh->hits || reads < sh->reads;
	sh->hits = hits;
	sh->reads = reads;
	if (!sh->primed || !elapsed_ms || back) {
		sh->primed = true;
		return false;
	}
	/* A second without fresh reads is no evidence: it is skipped. */
	if (!dr)
		return false;
	/* Rates a second; a second of a million reads shifted fits. */
	rh = div_u64(min_t(u64, dh, U32_MAX) * MSEC_PER_SEC <<
		     HOTTIER_TURNOVER_RATE_SHIFT, elapsed_ms);
	rr = div_u64(min_t(u64, dr, U32_MAX) * MSEC_PER_SEC <<
		     HOTTIER_TURNOVER_RATE_SHIFT, elapsed_ms);
	if (first) {
		sh->long_hits = rh;
		sh->short_hits = rh;
		sh->long_reads = rr;
		sh->short_reads = rr;
	} else {
		turnover_avg(&sh->long_hits, rh, elapsed_ms, halflife_ms);
		turnover_avg(&sh->long_reads, rr, elapsed_ms, halflife_ms);
		turnover_avg(&sh->short_hits, rh, elapsed_ms,
			     HOTTIER_TURNOVER_SHORT_S * MSEC_PER_SEC);
		turnover_avg(&sh->short_reads, rr, elapsed_ms,
			     HOTTIER_TURNOVER_SHORT_S * MSEC_PER_SEC);
	}
	sh->age_ms = min_t(u64, (u64)sh->age_ms + elapsed_ms, U32_MAX - 1);

	low = sh->long_hits * HOTTIER_TURNOVER_LEAST > sh->long_reads &&
	      sh->short_hits * HOTTIER_TURNOVER_DROP < sh->long_hits &&
	      turnover_ratio(sh->short_hits, sh->short_reads) *
	      HOTTIER_TURNOVER_DROP <
	      turnover_ratio(sh->long_hits, sh->long_reads);
	if (!low) {
		sh->low_ms = 0;
		return false;
	}
	if (sh->low_ms == U32_MAX)
		return false;		/* one turnover a drop */
	if (!sh->low_ms) {
		sh->low_ms = 1;		/* the drop begins */
		return false;
	}
	sh->low_ms = min_t(u64, (u64)sh->low_ms + elapsed_ms, U32_MAX - 1);
	if (turning_over ||
	    sh->age_ms < HOTTIER_TURNOVER_ARM_S * MSEC_PER_SEC ||
	    sh->low_ms <= HOTTIER_TURNOVER_HOLD_S * MSEC_PER_SEC)
		return false;
	sh->low_ms = U32_MAX;
	return true;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_turnover_sample);

/*
 * The heat at its last read from which a replica unread for @elapsed_ms
 * missed HOTTIER_TURNOVER_MISSED reads: its rate then, heat x ln2 /
 * half-life (ln2 as 709 / 1024, as the rate rule's), times @elapsed_ms.
 * U32_MAX (none) for no time yet.
 */
u32 hottier_turnover_heat(u32 elapsed_ms, u32 halflife_ms)
{
	u64 heat;

	if (!elapsed_ms)
		return U32_MAX;
	heat = DIV_ROUND_UP_ULL((u64)HOTTIER_TURNOVER_MISSED *
				HOTTIER_HEAT_ONE * 1024 * halflife_ms,
				709ULL * elapsed_ms);
	return clamp_t(u64, heat, 1, U32_MAX);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_turnover_heat);

/*
 * The bar for @threshold now: lower while the map has free slots or
 * replicas the rate rule cut (lockless hints).
 */
static u32 policy_bar(struct hottier_policy *p, u32 threshold)
{
	return hottier_policy_bar(threshold, hottier_map_nr_free(p->map) > 0 ||
				  hottier_map_nr_cut(p->map) > 0);
}

/*
 * A read of an extent without a replica (@scan: a read that heats nothing,
 * a stream's inside an extent it already heated). True if the extent
 * became a candidate: the target should run its promotion worker. A full
 * candidate queue drops the offer: the next read makes it again.
 */
bool hottier_policy_miss(struct hottier_policy *p, u64 extent, bool scan)
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;
	bool queued = false;
	u32 heat;

	if (scan)
		return false;
	set = hottier_heat_lock(&p->heat, extent, &flags);
	e = __hottier_heat_get(&p->heat, set, extent, 0);
	if (e) {
		heat = __hottier_heat_add(e, HOTTIER_HEAT_ONE);
		if (heat >= policy_bar(p, READ_ONCE(p->threshold)) &&
		    !(e->flags & HOTTIER_E_QUEUED) &&
		    kfifo_in_spinlocked(&p->cand, &extent, 1, &p->lock)) {
			e->flags |= HOTTIER_E_QUEUED;
			queued = true;
		}
	}
	hottier_heat_unlock(set, flags);
	return queued;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_miss);

/* Under p->lock. */
static bool __in_ranges(struct list_head *head, u64 extent)
{
	struct hottier_range *r;

	list_for_each_entry(r, head, list) {
		if (extent < r->first)
			return false;
		if (extent <= r->last)
			return true;
	}
	return false;
}

bool hottier_policy_pinned(struct hottier_policy *p, u64 extent)
{
	unsigned long flags;
	bool pinned;

	spin_lock_irqsave(&p->lock, flags);
	pinned = __in_ranges(&p->pins, extent);
	spin_unlock_irqrestore(&p->lock, flags);
	return pinned;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_pinned);

u64 hottier_policy_nr_pinned(struct hottier_policy *p)
{
	return READ_ONCE(p->nr_pinned);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_nr_pinned);

/* Work waits: asked ranges, or candidates from reads. */
bool hottier_policy_wants_work(struct hottier_policy *p)
{
	return !list_empty_careful(&p->asked) || !kfifo_is_empty(&p->cand) ||
	       READ_ONCE(p->pins_dirty);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_wants_work);

/*
 * The next candidate: a requested range's next extent first (pins, then
 * promotes, in order), then the candidates reads queued. false: none.
 */
static bool next_candidate(struct hottier_policy *p, u64 *extent,
			   enum hottier_work_why *why)
{
	struct hottier_range *r;
	unsigned long flags;
	bool found = true;

	spin_lock_irqsave(&p->lock, flags);
	r = list_first_entry_or_null(&p->asked, struct hottier_range, list);
	if (r) {
		*extent = r->first;
		*why = r->pin ? HOTTIER_WHY_PIN : HOTTIER_WHY_ASKED;
		if (r->first++ == r->last) {
			list_del(&r->list);
			kfree(r);
		}
	} else if (kfifo_out(&p->cand, extent, 1)) {
		*why = HOTTIER_WHY_HEAT;
	} else {
		found = false;
	}
	spin_unlock_irqrestore(&p->lock, flags);
	return found;
}

/*
 * Claim @extent for a work item: false if one is out for it already (its
 * slot reserved, its copy not started: not in the index yet).
 */
static bool claim(struct hottier_policy *p, u64 extent)
{
	unsigned long flags;
	unsigned int i;
	bool ok;

	spin_lock_irqsave(&p->lock, flags);
	for (i = 0; i < p->nr_pending; i++)
		if (p->pending[i] == extent)
			break;
	ok = i == p->nr_pending && p->nr_pending < HOTTIER_POLICY_PENDING;
	if (ok)
		p->pending[p->nr_pending++] = extent;
	spin_unlock_irqrestore(&p->lock, flags);
	return ok;
}

static void unclaim(struct hottier_policy *p, u64 extent)
{
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&p->lock, flags);
	for (i = 0; i < p->nr_pending; i++) {
		if (p->pending[i] == extent) {
			p->pending[i] = p->pending[--p->nr_pending];
			break;
		}
	}
	spin_unlock_irqrestore(&p->lock, flags);
}

/*
 * The candidate's heat, and the end of its candidacy. A candidate from
 * reads that is no longer queued (dropped meanwhile) is none: -ENOENT.
 */
static int candidate_heat(struct hottier_policy *p, u64 extent,
			  enum hottier_work_why why, u32 *heat)
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;
	int r = 0;

	set = hottier_heat_lock(&p->heat, extent, &flags);
	e = __hottier_heat_find(set, extent);
	if (why == HOTTIER_WHY_HEAT && (!e || !(e->flags & HOTTIER_E_QUEUED)))
		r = -ENOENT;
	*heat = e ? __hottier_heat_read(e) : 0;
	if (e)
		e->flags &= ~HOTTIER_E_QUEUED;
	hottier_heat_unlock(set, flags);
	return r;
}

/* The heat of an extent that lost its slot, or never got one, is kept. */
static void keep_heat(struct hottier_policy *p, u64 extent, u32 heat)
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;

	set = hottier_heat_lock(&p->heat, extent, &flags);
	e = __hottier_heat_get(&p->heat, set, extent, heat);
	if (e && __hottier_heat_read(e) < heat)
		e->heat = min_t(u32, heat, HOTTIER_HEAT_MAX);
	hottier_heat_unlock(set, flags);
}

/*
 * The extent got (or is getting) a slot: its heat-table entry goes, and
 * its heat is returned, to go with it. Reads while its copy ran were
 * misses and heated a new entry: one extent is never in both. A queued
 * entry goes too: the candidate queue skips what it cannot find.
 */
static u32 take_heat(struct hottier_policy *p, u64 extent)
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;
	u32 heat = 0;

	set = hottier_heat_lock(&p->heat, extent, &flags);
	e = __hottier_heat_find(set, extent);
	if (e) {
		heat = __hottier_heat_read(e);
		__hottier_heat_forget(&p->heat, e);
	}
	hottier_heat_unlock(set, flags);
	return heat;
}

/*
 * A read hit the replica in @slot (under its map lock): it is heated, and
 * moves up the victim levels (__hottier_map_hit()).
 */
void __hottier_policy_hit(struct hottier_policy *p, u32 slot)
{
	__hottier_map_hit(p->map, slot, hottier_policy_epoch(p));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_policy_hit);

/*
 * The next promotion: a free slot reserved for it, or the victim the map
 * offers when the candidate is hotter than the victim by the threshold
 * (hysteresis), or pinned. 0: @w is set; -ENODATA: no candidate left;
 * -EAGAIN: HOTTIER_POLICY_TRIES candidates refused, call again; -EBUSY:
 * HOTTIER_POLICY_PENDING work items are out already. With @w->evict the
 * victim is still in the map: the caller evicts it if it still may
 * (__hottier_map_evictable()) and says so, hottier_policy_evicted(). The
 * slot is then the caller's: hottier_policy_start() and then
 * hottier_policy_done(), or hottier_policy_cancel().
 */
int hottier_policy_next(struct hottier_policy *p, struct hottier_work *w)
{
	u32 threshold = READ_ONCE(p->threshold);
	struct hottier_victim victim;
	enum hottier_work_why why;
	unsigned int tries;
	u64 vextent = 0;
	u32 vslot;
	u16 epoch;

	for (tries = 0; tries < HOTTIER_POLICY_TRIES; tries++) {
		memset(w, 0, sizeof(*w));
		/* Checked before a candidate is taken: none is ever lost. */
		if (READ_ONCE(p->nr_pending) >= HOTTIER_POLICY_PENDING)
			return -EBUSY;
		if (!next_candidate(p, &w->extent, &why))
			return -ENODATA;
		if (candidate_heat(p, w->extent, why, &w->heat) ||
		    hottier_map_has_slot(p->map, w->extent))
			continue;
		w->pinned = hottier_policy_pinned(p, w->extent);
		if (why == HOTTIER_WHY_PIN && !w->pinned)
			continue;	/* unpinned since it was asked */
		/* An asked extent stays eligible while its heat decays. */
		if (why == HOTTIER_WHY_ASKED)
			w->heat = max(w->heat, threshold);
		if (!w->pinned && w->heat < policy_bar(p, threshold))
			continue;
		/* From here, every way out but a work item unclaims. */
		if (!claim(p, w->extent))
			continue;	/* a work item is out for it */
		w->slot = hottier_map_alloc(p->map);
		if (w->slot != HOTTIER_NIL)
			return 0;
		/* One epoch for the search and the cut, should it tick. */
		epoch = hottier_policy_epoch(p);
		vslot = hottier_map_victim(p->map, epoch, &victim.heat,
					   &vextent, &w->visits);
		victim.found = vslot != HOTTIER_NIL;
		victim.cut = victim.found &&
			     hottier_map_cut(p->map, vslot, epoch);
		if (victim.found && !victim.cut &&
		    victim.heat >= HOTTIER_HEAT_ONE)
			hottier_map_cut_gone(p->map, true);
		if (hottier_policy_promote(w->heat, w->pinned, threshold,
					   false, &victim) !=
		    HOTTIER_PROMOTE_EVICT) {
			keep_heat(p, w->extent, w->heat);
			unclaim(p, w->extent);
			continue;
		}
		w->slot = vslot;
		w->evict = true;
		w->victim = vextent;
		w->victim_heat = victim.heat;
		w->victim_cut = victim.cut;
		return 0;
	}
	return -EAGAIN;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_next);

/*
 * The caller carried out the eviction @w asked for (@ok), or found the
 * victim changed meanwhile (read, pinned, dropped) and left it: then the
 * work item is void, and the candidate keeps its heat. An evicted victim
 * keeps its heat in the heat table, so one read again soon brings it back
 * early (the ghost of smq and ARC).
 */
void hottier_policy_evicted(struct hottier_policy *p, struct hottier_work *w,
			    bool ok)
{
	if (!ok) {
		keep_heat(p, w->extent, w->heat);
		unclaim(p, w->extent);
		return;
	}
	if (w->victim_cut)
		hottier_map_cut_gone(p->map, false);
	keep_heat(p, w->victim, w->victim_heat);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_evicted);

/*
 * The copy of @w starts, its extent just put in the map's index as
 * COPYING by the caller (reads go to the HDD until it is installed): the
 * candidate is no longer the policy's, and its heat travels with @w.
 */
void hottier_policy_start(struct hottier_policy *p, struct hottier_work *w)
{
	unclaim(p, w->extent);
	w->heat = max(w->heat, take_heat(p, w->extent));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_start);

/* A work item not started: its slot goes back, its heat is kept. */
void hottier_policy_cancel(struct hottier_policy *p, struct hottier_work *w)
{
	unclaim(p, w->extent);
	keep_heat(p, w->extent, w->heat);
	hottier_map_put(p->map, w->slot);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_cancel);

/*
 * The copy of a started work item ended, before the caller installs the
 * replica (@ok) or removes it and gives its slot back: installed, it
 * takes the heat its extent gathered while copying, in @w->heat, and is
 * pinned if @w->pinned (its extent is pinned now); else the extent keeps
 * its heat.
 */
void hottier_policy_done(struct hottier_policy *p, struct hottier_work *w,
			 bool ok)
{
	if (!ok) {
		keep_heat(p, w->extent, w->heat);
		return;
	}
	w->heat = min_t(u64, (u64)w->heat + take_heat(p, w->extent),
			HOTTIER_HEAT_MAX);
	w->pinned = hottier_policy_pinned(p, w->extent);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_done);

static struct hottier_range *new_range(u64 first, u64 last, bool pin,
				       gfp_t gfp)
{
	struct hottier_range *r = kmalloc(sizeof(*r), gfp);

	if (r) {
		r->first = first;
		r->last = last;
		r->pin = pin;
	}
	return r;
}

/* Ask for every extent of [first, last] to be copied (a promote). */
int hottier_policy_promote_range(struct hottier_policy *p, u64 first,
				 u64 last, gfp_t gfp)
{
	struct hottier_range *r = new_range(first, last, false, gfp);
	unsigned long flags;

	if (!r)
		return -ENOMEM;
	spin_lock_irqsave(&p->lock, flags);
	list_add_tail(&r->list, &p->asked);
	spin_unlock_irqrestore(&p->lock, flags);
	return 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_promote_range);

/* Extents of [first, last] in the pinned ranges; p->lock held. */
static u64 __pinned_in(struct hottier_policy *p, u64 first, u64 last)
{
	struct hottier_range *r;
	u64 n = 0;

	list_for_each_entry(r, &p->pins, list)
		if (r->last >= first && r->first <= last)
			n += min(r->last, last) - max(r->first, first) + 1;
	return n;
}

/*
 * Remove [first, last] from the pinned ranges, using @spare for a range
 * it splits in two (NULL'ed when used); p->lock held.
 */
static void __unpin(struct hottier_policy *p, u64 first, u64 last,
		    struct hottier_range **spare)
{
	struct hottier_range *r, *tmp;

	list_for_each_entry_safe(r, tmp, &p->pins, list) {
		if (r->last < first || r->first > last)
			continue;
		p->nr_pinned -= min(r->last, last) - max(r->first, first) + 1;
		if (r->first < first && r->last > last) {
			(*spare)->first = last + 1;
			(*spare)->last = r->last;
			list_add(&(*spare)->list, &r->list);
			*spare = NULL;
			r->last = first - 1;
		} else if (r->first < first) {
			r->last = first - 1;
		} else if (r->last > last) {
			r->first = last + 1;
		} else {
			list_del(&r->list);
			kfree(r);
		}
	}
}

/* Add [first, last], merged with the ranges it touches; p->lock held. */
static void __pin(struct hottier_policy *p, struct hottier_range *add)
{
	struct hottier_range *r, *tmp;
	struct list_head *pos = &p->pins;

	p->nr_pinned -= __pinned_in(p, add->first, add->last);
	p->nr_pinned += add->last - add->first + 1;
	list_for_each_entry_safe(r, tmp, &p->pins, list) {
		if (r->last + 1 < add->first) {
			pos = &r->list;
			continue;
		}
		if (r->first > add->last + 1)
			break;
		add->first = min(add->first, r->first);
		add->last = max(add->last, r->last);
		list_del(&r->list);
		kfree(r);
	}
	list_add(&add->list, pos);
}

/*
 * Pin [first, last]: refused (-ENOSPC, nothing changed) if pinned extents
 * would outnumber the slots; extents pinned already count once. Replicas
 * of the range are pinned at once; the others are asked for.
 */
int hottier_policy_pin(struct hottier_policy *p, u64 first, u64 last,
		       gfp_t gfp)
{
	struct hottier_range *add = new_range(first, last, false, gfp);
	struct hottier_range *ask = new_range(first, last, true, gfp);
	unsigned long flags;
	int r = 0;

	if (!add || !ask) {
		r = -ENOMEM;
		goto out;
	}
	spin_lock_irqsave(&p->lock, flags);
	if (p->nr_pinned + (last - first + 1) -
	    __pinned_in(p, first, last) > p->map->nr_slots) {
		r = -ENOSPC;
	} else {
		__pin(p, add);
		add = NULL;
		list_add(&ask->list, &p->asked);
		ask = NULL;
	}
	spin_unlock_irqrestore(&p->lock, flags);
out:
	kfree(add);
	kfree(ask);
	return r;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_pin);

int hottier_policy_unpin(struct hottier_policy *p, u64 first, u64 last,
			 gfp_t gfp)
{
	struct hottier_range *spare = new_range(0, 0, false, gfp);
	unsigned long flags;

	if (!spare)
		return -ENOMEM;
	spin_lock_irqsave(&p->lock, flags);
	__unpin(p, first, last, &spare);
	spin_unlock_irqrestore(&p->lock, flags);
	kfree(spare);
	return 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_unpin);

/* Pinned replicas were dropped: the worker asks for them again. */
void hottier_policy_pins_dropped(struct hottier_policy *p)
{
	WRITE_ONCE(p->pins_dirty, true);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_pins_dropped);

/*
 * After hottier_policy_pins_dropped(): ask for every pinned range again
 * (extents with a replica are skipped when their turn comes). Without
 * memory, the request stays and the next call tries again.
 */
void hottier_policy_repin(struct hottier_policy *p)
{
	struct hottier_range *r, *ask, *tmp;
	unsigned long flags;
	LIST_HEAD(asks);
	u32 n = 0, i;

	if (!READ_ONCE(p->pins_dirty))
		return;
	spin_lock_irqsave(&p->lock, flags);
	list_for_each_entry(r, &p->pins, list)
		n++;
	spin_unlock_irqrestore(&p->lock, flags);
	for (i = 0; i < n; i++) {
		ask = new_range(0, 0, true, GFP_NOIO);
		if (!ask) {
			free_ranges(&asks);
			return;
		}
		list_add(&ask->list, &asks);
	}
	spin_lock_irqsave(&p->lock, flags);
	i = 0;
	list_for_each_entry(r, &p->pins, list)
		i++;
	if (i <= n) {
		p->pins_dirty = false;
		list_for_each_entry(r, &p->pins, list) {
			ask = list_first_entry(&asks, struct hottier_range,
					       list);
			ask->first = r->first;
			ask->last = r->last;
			list_move_tail(&ask->list, &p->asked);
		}
	}
	spin_unlock_irqrestore(&p->lock, flags);
	list_for_each_entry_safe(ask, tmp, &asks, list) {
		list_del(&ask->list);
		kfree(ask);
	}
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_repin);

/*
 * The pinned ranges there would be after pinning (@pin) or unpinning
 * [first, last], nothing changed: a pin merges the ranges it touches into
 * one, an unpin drops the ranges it covers and splits the one it falls
 * inside.
 */
u32 hottier_policy_pin_ranges_after(struct hottier_policy *p, u64 first,
				    u64 last, bool pin)
{
	struct hottier_range *r;
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&p->lock, flags);
	list_for_each_entry(r, &p->pins, list) {
		if (pin) {
			/* Touching: overlapping or adjacent, as __pin() merges. */
			if (r->last + 1 < first || r->first > last + 1)
				n++;
		} else if (r->last < first || r->first > last) {
			n++;
		} else if (r->first < first && r->last > last) {
			n += 2;
		} else if (r->first < first || r->last > last) {
			n++;
		}
	}
	spin_unlock_irqrestore(&p->lock, flags);
	return n + pin;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_pin_ranges_after);

/*
 * The pinned ranges in order, at most @max of them into @first and @last;
 * returns how many were copied, or with @count, how many there are.
 */
u32 hottier_policy_pin_ranges(struct hottier_policy *p, u64 *first,
			      u64 *last, u32 max, bool count)
{
	struct hottier_range *r;
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&p->lock, flags);
	list_for_each_entry(r, &p->pins, list) {
		if (!count) {
			if (n == max)
				break;
			first[n] = r->first;
			last[n] = r->last;
		}
		n++;
	}
	spin_unlock_irqrestore(&p->lock, flags);
	return n;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_pin_ranges);
