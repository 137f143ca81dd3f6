// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: promotion and eviction decisions (the victim levels and
 * the worth of replicas among them), migration rate limit.
 */
#include "dm-hottier-policy.h"
#include "dm-hottier-compat.h"

#include <linux/bitfield.h>
#include <linux/bitmap.h>
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

/* The victim levels (struct hottier_levels) */

static struct hottier_hbm *level(struct hottier_policy *p, unsigned int lvl)
{
	return &p->levels.level[(p->levels.base + lvl) % HOTTIER_LEVELS];
}

static bool is_pinned(const struct hottier_mslot *s)
{
	return hottier_mslot_flags(s) & HOTTIER_SF_PINNED;
}

/* What the levels allocate for @nr_slots (hottier_policy_init()), in bytes. */
u64 hottier_policy_levels_bytes(u64 nr_slots)
{
	return HOTTIER_LEVELS * hottier_hbm_words(max_t(u64, nr_slots, 1)) *
	       sizeof(unsigned long);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_levels_bytes);

static int levels_init(struct hottier_levels *lv, u32 nr_slots)
{
	unsigned int i;

	spin_lock_init(&lv->lock);
	for (i = 0; i < HOTTIER_LEVELS; i++)
		if (hottier_hbm_init(&lv->level[i], nr_slots))
			return -ENOMEM;
	lv->base = 0;
	lv->nr_pinned = 0;
	atomic_set(&lv->nr_cut, 0);
	lv->turnover_heat = 0;
	lv->turnover_epoch = 0;
	return 0;
}

static void levels_exit(struct hottier_levels *lv)
{
	unsigned int i;

	for (i = 0; i < HOTTIER_LEVELS; i++)
		hottier_hbm_exit(&lv->level[i]);
}

/* Word @j of row @k of @src, and all below it, into @dst; @src's cleared. */
static void hbm_merge_word(struct hottier_hbm *dst, struct hottier_hbm *src,
			   unsigned int k, unsigned long j)
{
	unsigned long word = src->w[k][j];
	unsigned int t;

	if (k)
		for_each_set_bit(t, &word, BITS_PER_LONG)
			hbm_merge_word(dst, src, k - 1, j * BITS_PER_LONG + t);
	dst->w[k][j] |= word;
	src->w[k][j] = 0;
}

/* @dst |= @src, @src emptied: time in proportion to @src's words in use. */
static void hbm_merge(struct hottier_hbm *dst, struct hottier_hbm *src)
{
	if (!src->count)
		return;
	hbm_merge_word(dst, src, src->depth - 1, 0);
	dst->count += src->count;
	src->count = 0;
}

/*
 * The rate rule's shift for a slot @idle epochs after its last read: the
 * reads its rate then (heat x ln2 / half-life, ln2 as 709 / 1024) says it
 * missed over the idle - 1 whole epochs since, past HOTTIER_RATE_GRACE.
 * The slot's heat is as of its last read until the refresh brings it up
 * (HOTTIER_IDLE_MAX epochs on), when its worth is nothing anyway. At most
 * 16380 x 709 x 30, within a u32.
 */
static u32 meta_rate_shift(u32 meta, u32 idle)
{
	u32 last = FIELD_GET(HOTTIER_MS_HEAT, meta) << HOTTIER_SLOT_HEAT_SHIFT;
	u32 missed;

	if (idle < 2)
		return 0;
	missed = last * 709 * (idle - 1) /
		 (1024 * HOTTIER_HEAT_ONE * HOTTIER_EPOCHS_PER_HALFLIFE);
	return missed > HOTTIER_RATE_GRACE ? missed - HOTTIER_RATE_GRACE : 0;
}

/*
 * What a resident slot is worth keeping at @epoch: its heat, quartered
 * for every epoch past HOTTIER_IDLE_GRACE since its last read (the rule of
 * the heat table's entries, after a grace: a replica cost a copy), and
 * halved for every read the rate rule says it missed. The victim levels
 * file it by its worth, and a candidate must beat its worth. @rate_shift
 * is meta_rate_shift()'s, for a caller that has it already.
 */
static u32 worth_shifted(u32 meta, u32 idle, u32 rate_shift)
{
	u32 heat = hottier_meta_heat(meta, idle), shift;

	if (idle <= HOTTIER_IDLE_GRACE)
		return heat;
	shift = (idle - HOTTIER_IDLE_GRACE) * HOTTIER_HEAT_IDLE_SHIFT +
		rate_shift;
	return shift < 32 ? heat >> shift : 0;
}

static u32 meta_worth(u32 meta, u32 idle)
{
	return worth_shifted(meta, idle, meta_rate_shift(meta, idle));
}

/*
 * Cut: the rate rule took the slot's worth down HOTTIER_RATE_CUT_SHIFT
 * halvings or more, and below a read. A replica whose reads stopped that
 * abruptly gives its slot to a candidate at the free-slot bar.
 */
static bool meta_cut(u32 meta, u32 idle)
{
	u32 rate_shift = meta_rate_shift(meta, idle);

	return rate_shift >= HOTTIER_RATE_CUT_SHIFT &&
	       worth_shifted(meta, idle, rate_shift) < HOTTIER_HEAT_ONE;
}

u32 hottier_mslot_worth(const struct hottier_mslot *s, u16 epoch)
{
	u32 meta = READ_ONCE(s->meta);

	return meta_worth(meta, hottier_meta_idle(meta, epoch));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_mslot_worth);

/* Whether the rate rule cut a resident slot at @epoch (a hint unlocked). */
bool hottier_mslot_cut(const struct hottier_mslot *s, u16 epoch)
{
	u32 meta = READ_ONCE(s->meta);

	return meta_cut(meta, hottier_meta_idle(meta, epoch));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_mslot_cut);

/* In a working-set turnover, and unread since the turnover's epoch began. */
static bool turnover_unread(struct hottier_policy *p, u32 meta, u16 epoch)
{
	return READ_ONCE(p->levels.turnover_heat) &&
	       READ_ONCE(p->levels.turnover_epoch) == epoch &&
	       FIELD_GET(HOTTIER_MS_EPOCH, meta) !=
	       (epoch & HOTTIER_EPOCH_MASK);
}

/*
 * In a working-set turnover: unread since the turnover's epoch began, and its
 * heat at its last read (its rate then) says it missed the reads the
 * turnover's seconds so far allow (hottier_policy_set_turnover()).
 */
static bool turnover_cut(struct hottier_policy *p, u32 meta, u16 epoch)
{
	return turnover_unread(p, meta, epoch) &&
	       FIELD_GET(HOTTIER_MS_HEAT, meta) << HOTTIER_SLOT_HEAT_SHIFT >=
	       READ_ONCE(p->levels.turnover_heat);
}

/* An unpinned replica the rate rule or a turnover cut: counted in nr_cut. */
static bool counts_cut(struct hottier_policy *p, u32 meta, u16 epoch)
{
	return !(FIELD_GET(HOTTIER_MS_FLAGS, meta) & HOTTIER_SF_PINNED) &&
	       (meta_cut(meta, hottier_meta_idle(meta, epoch)) ||
		turnover_cut(p, meta, epoch));
}

/* hottier_mslot_worth(), nothing for a replica a turnover cut. */
u32 hottier_policy_worth(struct hottier_policy *p, u32 slot, u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(p->map, slot);

	if (turnover_cut(p, READ_ONCE(s->meta), epoch))
		return 0;
	return hottier_mslot_worth(s, epoch);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_worth);

/* Cut by the rate rule or by a turnover (a hint unlocked). */
bool hottier_policy_cut(struct hottier_policy *p, u32 slot, u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(p->map, slot);

	return turnover_cut(p, READ_ONCE(s->meta), epoch) ||
	       hottier_mslot_cut(s, epoch);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_cut);

/* Cut replicas left: while there are, the bar is the free-slot bar. */
u32 hottier_policy_nr_cut(struct hottier_policy *p)
{
	return atomic_read(&p->levels.nr_cut);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_nr_cut);

/*
 * A cut replica was evicted; or (@none_left) the victim search found a
 * replica worth a read or more at the bottom, so no cut one is left.
 */
void hottier_policy_cut_gone(struct hottier_policy *p, bool none_left)
{
	if (none_left)
		atomic_set(&p->levels.nr_cut, 0);
	else
		atomic_dec_if_positive(&p->levels.nr_cut);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_cut_gone);

static unsigned int band_of(u32 heat)
{
	return min_t(unsigned int, hottier_heat_band(heat),
		     HOTTIER_LEVELS - 1);
}

/* A resident slot goes where it belongs; the levels' lock held. */
static void __enqueue(struct hottier_policy *p, u32 slot, u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(p->map, slot);

	if (is_pinned(s))
		p->levels.nr_pinned++;
	else
		hottier_hbm_set(level(p, band_of(hottier_mslot_worth(s, epoch))),
				slot);
}

static void __dequeue(struct hottier_policy *p, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(p->map, slot);
	unsigned int lvl;

	if (is_pinned(s)) {
		p->levels.nr_pinned--;
		return;
	}
	for (lvl = 0; lvl < HOTTIER_LEVELS; lvl++)
		if (hottier_hbm_clear(&p->levels.level[lvl], slot))
			return;
	WARN_ON_ONCE(1);
}

/*
 * Pin or unpin a slot, under its bucket lock; a resident one moves in or
 * out of the levels.
 */
void __hottier_policy_set_pinned(struct hottier_policy *p, u32 slot,
				 bool pinned)
{
	struct hottier_mslot *s = hottier_mslot(p->map, slot);
	bool resident = hottier_mslot_state(s) == HOTTIER_S_RESIDENT;
	unsigned long flags;

	if (is_pinned(s) == pinned)
		return;
	spin_lock_irqsave(&p->levels.lock, flags);
	if (resident)
		__dequeue(p, slot);
	__hottier_mslot_set_flags(s, pinned ? HOTTIER_SF_PINNED : 0,
				  pinned ? 0 : HOTTIER_SF_PINNED);
	if (resident)
		__enqueue(p, slot, FIELD_GET(HOTTIER_MS_EPOCH, s->meta));
	spin_unlock_irqrestore(&p->levels.lock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_policy_set_pinned);

/*
 * Under its bucket lock, just after __hottier_map_install() of @slot: the
 * replica goes on the level of its worth as of its install (its heat), or
 * is counted pinned.
 */
void __hottier_policy_installed(struct hottier_policy *p, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(p->map, slot);
	unsigned long flags;

	spin_lock_irqsave(&p->levels.lock, flags);
	__enqueue(p, slot, FIELD_GET(HOTTIER_MS_EPOCH, s->meta));
	spin_unlock_irqrestore(&p->levels.lock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_policy_installed);

/*
 * Under its bucket lock, just before __hottier_map_remove() of @slot: a
 * resident replica leaves its level (or the pinned count).
 */
void __hottier_policy_removing(struct hottier_policy *p, u32 slot)
{
	unsigned long flags;

	if (hottier_mslot_state(hottier_mslot(p->map, slot)) !=
	    HOTTIER_S_RESIDENT)
		return;
	spin_lock_irqsave(&p->levels.lock, flags);
	__dequeue(p, slot);
	spin_unlock_irqrestore(&p->levels.lock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_policy_removing);

/*
 * hottier_map_restore() made @slot resident: it goes on its level, under
 * its bucket lock as the I/O path files one (nothing else uses the map
 * yet, but lockdep knows the locks by class).
 */
void hottier_policy_restored(struct hottier_policy *p, u32 slot)
{
	u64 extent = hottier_mslot_extent(hottier_mslot(p->map, slot));
	struct hottier_mlock *lock;
	unsigned long flags;

	lock = hottier_map_lock(p->map, extent, &flags);
	__hottier_policy_installed(p, slot);
	hottier_map_unlock(lock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_restored);

/*
 * The slot to evict: from the lowest level up, the first slot from the
 * level's hand on whose worth is still within its level's band; a slot
 * read since it was put there moves up to its band instead. At most
 * HOTTIER_VICTIM_VISITS slots are looked at: then the least worth of them
 * is the victim. Returns the slot (still RESIDENT: the caller removes it
 * under its bucket lock, checking it is still the same) with its worth
 * and extent, or HOTTIER_NIL if no unpinned replica exists. Pinned slots
 * are never visited.
 */
u32 hottier_policy_victim(struct hottier_policy *p, u16 epoch, u32 *heat,
			  u64 *extent, unsigned int *visits)
{
	u32 best = HOTTIER_NIL, best_heat = U32_MAX, slot, h;
	unsigned int lvl, band, n = 0;
	unsigned long i;
	struct hottier_hbm *b;
	unsigned long flags;

	spin_lock_irqsave(&p->levels.lock, flags);
	for (lvl = 0; lvl < HOTTIER_LEVELS &&
	     n < HOTTIER_VICTIM_VISITS; lvl++) {
		b = level(p, lvl);
		while (n < HOTTIER_VICTIM_VISITS && b->count) {
			i = hottier_hbm_find(b, b->hand);
			if (i == HOTTIER_HBM_NONE)
				i = hottier_hbm_find(b, 0);
			slot = i;
			/*
			 * The hand stays on the slot: one refused as a victim
			 * (too hot to evict for this candidate) is offered
			 * again, as a queue's head would be.
			 */
			b->hand = slot;
			n++;
			h = hottier_policy_worth(p, slot, epoch);
			if (h < best_heat) {
				best = slot;
				best_heat = h;
			}
			band = band_of(h);
			if (band <= lvl) {
				best = slot;
				best_heat = h;
				goto out;
			}
			hottier_hbm_clear(b, slot);
			hottier_hbm_set(level(p, band), slot);
		}
	}
out:
	if (best != HOTTIER_NIL)
		*extent = hottier_mslot_extent(hottier_mslot(p->map, best));
	spin_unlock_irqrestore(&p->levels.lock, flags);
	*heat = best_heat;
	if (visits)
		*visits = n;
	return best;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_victim);

/*
 * A half-life passed: resident heat halved, so every level moves down one.
 * The ring turns; the lowest level merges into the next.
 */
void hottier_policy_age(struct hottier_policy *p)
{
	unsigned long flags;

	spin_lock_irqsave(&p->levels.lock, flags);
	hbm_merge(level(p, 1), level(p, 0));
	p->levels.base = (p->levels.base + 1) % HOTTIER_LEVELS;
	spin_unlock_irqrestore(&p->levels.lock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_age);

/*
 * A slot goes down to the level of its worth, if it is above it: an idle
 * one, or one a turnover's first read started afresh.
 */
static void refile(struct hottier_policy *p, u32 slot, u16 epoch)
{
	unsigned int lvl, band;
	unsigned long flags;

	spin_lock_irqsave(&p->levels.lock, flags);
	band = band_of(hottier_policy_worth(p, slot, epoch));
	/* Only a resident, unpinned slot is on a level. */
	for (lvl = band + 1; lvl < HOTTIER_LEVELS; lvl++)
		if (hottier_hbm_clear(level(p, lvl), slot)) {
			hottier_hbm_set(level(p, band), slot);
			break;
		}
	spin_unlock_irqrestore(&p->levels.lock, flags);
}

/*
 * A read hit the replica in @slot (under its bucket lock): one more read
 * of heat, as of the policy's epoch, and its new heat is returned. Hits
 * never touch the levels (the victim search moves a slot that got hotter
 * up to its band), but for this: in a working-set turnover, a replica's
 * first read since the turnover began starts its heat afresh, as the
 * turnover started the heat table's: candidates and replicas are weighed
 * on the same reads, those since the turnover. It goes down to the level
 * of that heat, where the victim search finds it.
 */
u32 __hottier_policy_hit(struct hottier_policy *p, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(p->map, slot);
	u16 epoch = hottier_policy_epoch(p);
	bool afresh = turnover_unread(p, s->meta, epoch);
	u32 heat = HOTTIER_HEAT_ONE;

	if (!afresh)
		heat += hottier_mslot_heat(s, epoch);
	heat = min_t(u32, heat, HOTTIER_SLOT_HEAT_MAX);
	__hottier_mslot_set_heat(s, heat, epoch);
	if (afresh)
		refile(p, slot, epoch);
	return heat;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_policy_hit);

/*
 * One epoch's refresh, of every slot. A replica unread past
 * HOTTIER_IDLE_GRACE epochs moves down to the level of its worth; one
 * HOTTIER_IDLE_MAX or more behind gets that epoch, with its heat as of it
 * (so it still counts as that idle). The unpinned replicas the rate rule
 * cut are counted. May sleep.
 */
void hottier_policy_refresh(struct hottier_policy *p, u16 epoch)
{
	u32 slot, meta, idle, cut = 0;
	u16 behind = epoch - HOTTIER_IDLE_MAX;
	struct hottier_mlock *lock;
	struct hottier_mslot *s;
	unsigned long flags;
	u64 extent;

	for (slot = 0; slot < p->map->nr_slots; slot++) {
		s = hottier_mslot(p->map, slot);
		meta = READ_ONCE(s->meta);
		if (!(slot % 4096))
			cond_resched();
		if (FIELD_GET(HOTTIER_MS_STATE, meta) != HOTTIER_S_RESIDENT)
			continue;
		idle = hottier_meta_idle(meta, epoch);
		if (counts_cut(p, meta, epoch))
			cut++;
		/*
		 * One worth less than a read an epoch ago went to the lowest
		 * level then, and stays there: no lock for it (a full SSD of
		 * cold replicas costs a read of each record an epoch).
		 */
		if (idle > HOTTIER_IDLE_GRACE &&
		    (idle == HOTTIER_IDLE_GRACE + 1 ||
		     meta_worth(meta, idle - 1) >= HOTTIER_HEAT_ONE))
			refile(p, slot, epoch);
		if (idle < HOTTIER_IDLE_MAX)
			continue;
		extent = hottier_mslot_extent(s);
		lock = hottier_map_lock(p->map, extent, &flags);
		meta = s->meta;
		idle = hottier_meta_idle(meta, epoch);
		if (__hottier_map_find(p->map, extent) == slot &&
		    hottier_mslot_state(s) == HOTTIER_S_RESIDENT &&
		    idle > HOTTIER_IDLE_MAX)
			__hottier_mslot_set_heat(s, hottier_meta_heat(meta, idle -
						 HOTTIER_IDLE_MAX), behind);
		hottier_map_unlock(lock, flags);
	}
	atomic_set(&p->levels.nr_cut, cut);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_refresh);

/*
 * A working-set turnover, for the epoch @epoch (the one it began): replicas
 * unread since with a heat at their last read of @heat or more are cut
 * (0: the turnover ends; U32_MAX: none yet). The target sets it once a
 * second of the turnover, from the reads the turnover's seconds say such a
 * replica missed, then refiles (hottier_policy_turnover_refile()).
 */
void hottier_policy_set_turnover(struct hottier_policy *p, u16 epoch,
				 u32 heat)
{
	WRITE_ONCE(p->levels.turnover_epoch, epoch);
	WRITE_ONCE(p->levels.turnover_heat, heat);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_set_turnover);

/*
 * A second of a turnover: every replica it cut goes down to the lowest
 * level, where the victim search finds it first, and the cut replicas
 * are counted again (the rate rule's too). May sleep; as costly as an
 * epoch's refresh, once a second for the turnover's epoch.
 */
void hottier_policy_turnover_refile(struct hottier_policy *p, u16 epoch)
{
	u32 slot, meta, cut = 0;
	struct hottier_mslot *s;

	for (slot = 0; slot < p->map->nr_slots; slot++) {
		s = hottier_mslot(p->map, slot);
		meta = READ_ONCE(s->meta);
		if (!(slot % 4096))
			cond_resched();
		if (FIELD_GET(HOTTIER_MS_STATE, meta) != HOTTIER_S_RESIDENT ||
		    !counts_cut(p, meta, epoch))
			continue;
		cut++;
		if (turnover_cut(p, meta, epoch))
			refile(p, slot, epoch);
	}
	atomic_set(&p->levels.nr_cut, cut);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_turnover_refile);

/* The policy object */

/* max_tracked: heat-table entries for extents without a replica. */
int hottier_policy_init(struct hottier_policy *p, struct hottier_map *map,
			u64 max_tracked)
{
	int r;

	p->map = map;
	p->threshold = HOTTIER_HEAT_ONE;
	memset(&p->levels, 0, sizeof(p->levels));
	spin_lock_init(&p->lock);
	INIT_KFIFO(p->cand);
	INIT_LIST_HEAD(&p->asked);
	INIT_LIST_HEAD(&p->pins);
	p->nr_pinned = 0;
	p->pins_dirty = false;
	r = hottier_heat_init(&p->heat, max_tracked);
	if (r) {
		p->heat.sets = NULL;
		return r;
	}
	return levels_init(&p->levels, map->nr_slots);
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
	levels_exit(&p->levels);
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
 * One epoch; each half-life, the victim levels move down one. Every
 * epoch refreshes a share of the replicas' heat. May sleep.
 */
void hottier_policy_tick(struct hottier_policy *p)
{
	hottier_heat_tick(&p->heat);
	if (!(atomic_read(&p->heat.epoch) % HOTTIER_EPOCHS_PER_HALFLIFE))
		hottier_policy_age(p);
	hottier_policy_set_turnover(p, 0, 0);	/* a turnover lasts an epoch */
	hottier_policy_refresh(p, hottier_policy_epoch(p));
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
	hottier_policy_set_turnover(p, hottier_policy_epoch(p), U32_MAX);
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

	if (!READ_ONCE(p->levels.turnover_heat) ||
	    READ_ONCE(p->levels.turnover_epoch) != epoch)
		return false;
	hottier_policy_set_turnover(p, epoch,
				    hottier_turnover_heat(elapsed_ms,
							  halflife_ms));
	hottier_policy_turnover_refile(p, epoch);
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
				  hottier_policy_nr_cut(p) > 0);
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
		vslot = hottier_policy_victim(p, epoch, &victim.heat,
					      &vextent, &w->visits);
		victim.found = vslot != HOTTIER_NIL;
		victim.cut = victim.found &&
			     hottier_policy_cut(p, vslot, epoch);
		if (victim.found && !victim.cut &&
		    victim.heat >= HOTTIER_HEAT_ONE)
			hottier_policy_cut_gone(p, true);
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
		hottier_policy_cut_gone(p, false);
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
