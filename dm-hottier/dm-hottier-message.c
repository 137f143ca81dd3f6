// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: messages (dmsetup message <dev> 0 ...): tunables, promote,
 * demote, pin, unpin, invalidate, ssd_reset, reset_stats, scrub, and the
 * heat and top views. See Documentation/hottier.rst.
 */
#include "dm-hottier.h"

/* Messages */

#define HOTTIER_TOP_MAX		1000

/* Every tracked entry, with its current heat, under its set's lock. */
static void walk_heat(struct hottier *ht,
		      void (*fn)(const struct hottier_heat_entry *e, u32 heat,
				 void *data), void *data)
{
	struct hottier_heat_set *set;
	unsigned long flags;
	u32 i;
	int w;

	for (i = 0; i < ht->heat.nr_sets; i++) {
		set = &ht->heat.sets[i];
		spin_lock_irqsave(&set->lock, flags);
		for (w = 0; w < HOTTIER_HEAT_WAYS; w++) {
			struct hottier_heat_entry *e = &set->way[w];

			if (e->flags & HOTTIER_E_VALID)
				fn(e, __hottier_heat_read(&ht->heat, e), data);
		}
		spin_unlock_irqrestore(&set->lock, flags);
		cond_resched();
	}
}

static void count_band(const struct hottier_heat_entry *e, u32 heat,
		       void *data)
{
	u64 *bands = data;

	bands[hottier_heat_band(heat)]++;
}

/* "heat": tracked extents per heat band, "<lo>-<hi> <count>" per line. */
static int heat_message(struct hottier *ht, char *result, unsigned int maxlen)
{
	u64 bands[HOTTIER_HEAT_BANDS] = { 0 };
	unsigned int sz = 0, b;
	u32 lo, hi;

	walk_heat(ht, count_band, bands);
	for (b = 0; b < HOTTIER_HEAT_BANDS; b++) {
		hottier_heat_band_range(b, &lo, &hi);
		DMEMIT("%u-%u %llu\n", lo, hi, (unsigned long long)bands[b]);
	}
	return 1;
}

struct top_walk {
	struct hottier_top *top;
	unsigned int n, used;
};

static void offer_top(const struct hottier_heat_entry *e, u32 heat,
		      void *data)
{
	struct top_walk *t = data;

	hottier_top_add(t->top, t->n, &t->used, e, heat);
}

/*
 * "top <n>": the n hottest tracked extents, hottest first, a line each:
 * "<start_sector> <heat_reads> <resident|-> <pinned|->".
 */
static int top_message(struct hottier *ht, const char *arg, char *result,
		       unsigned int maxlen)
{
	struct top_walk t = { };
	unsigned int sz = 0, i;

	if (kstrtouint(arg, 10, &t.n) || !t.n || t.n > HOTTIER_TOP_MAX) {
		DMERR("%s: top %s: expected 1 to %u extents", ht_name(ht), arg,
		      HOTTIER_TOP_MAX);
		return -EINVAL;
	}
	t.top = kvcalloc(t.n, sizeof(*t.top), GFP_KERNEL);
	if (!t.top)
		return -ENOMEM;
	walk_heat(ht, offer_top, &t);
	for (i = 0; i < t.used; i++)
		DMEMIT("%llu %u %s %s\n", (unsigned long long)
		       (t.top[i].extent << ht->extent_shift),
		       t.top[i].heat >> HOTTIER_HEAT_SHIFT,
		       t.top[i].flags & HOTTIER_E_RESIDENT ? "resident" : "-",
		       t.top[i].flags & HOTTIER_E_PINNED ? "pinned" : "-");
	kvfree(t.top);
	return 1;
}

static void reset_stats(struct hottier *ht)
{
	int i;

	for (i = 0; i < HOTTIER_NR_STATS; i++)
		atomic64_set(&ht->stats[i], 0);
}

/* Parse "<start_sector> <nr_sectors>" into the extents they cover. */
static int parse_range(struct hottier *ht, char **argv, u64 *first, u64 *last)
{
	u64 start, nr;

	if (kstrtou64(argv[0], 10, &start) || kstrtou64(argv[1], 10, &nr) ||
	    !nr || start >= ht->ti->len || nr > ht->ti->len - start)
		return -EINVAL;
	*first = start >> ht->extent_shift;
	*last = (start + nr - 1) >> ht->extent_shift;
	return 0;
}

static void demote_one(struct hottier *ht, struct hottier_heat_entry *e)
{
	if ((e->flags & HOTTIER_E_RESIDENT) && !(e->flags & HOTTIER_E_PINNED))
		__hottier_drop_replica(ht, e, false);
}

static void unpin_one(struct hottier *ht, struct hottier_heat_entry *e)
{
	if (e->flags & HOTTIER_E_PINNED) {
		e->flags &= ~HOTTIER_E_PINNED;
		atomic_dec(&ht->pinned);
	}
}

/* A pin that was refused: undo its new pins, and only those. */
static void undo_new_pin(struct hottier *ht, struct hottier_heat_entry *e)
{
	if (!(e->flags & HOTTIER_E_NEWPIN))
		return;
	e->flags &= ~(HOTTIER_E_NEWPIN | HOTTIER_E_PINNED);
	atomic_dec(&ht->pinned);
}

/* Extents of [first, last] not pinned yet: what a pin would add. */
static u64 count_unpinned(struct hottier *ht, u64 first, u64 last)
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;
	u64 extent, n = 0;

	for (extent = first; extent <= last; extent++) {
		set = hottier_heat_lock(&ht->heat, extent, &flags);
		e = __hottier_heat_find(set, extent);
		if (!e || !(e->flags & HOTTIER_E_PINNED))
			n++;
		hottier_heat_unlock(set, flags);
		cond_resched();
	}
	return n;
}

/*
 * Pin every extent of [first, last], or none: -ENOSPC when the extents
 * cannot all be tracked or pinned extents would outnumber the slots
 * (extents pinned already count once). A refused pin undoes the pins it
 * made and only those. Pinned entries are never recycled, so each is
 * found again by the caller.
 */
static int pin_range(struct hottier *ht, u64 first, u64 last)
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;
	u64 extent;

	if (atomic_read(&ht->pinned) + count_unpinned(ht, first, last) >
	    ht->layout.nr_slots)
		return -ENOSPC;

	for (extent = first; extent <= last; extent++) {
		set = hottier_heat_lock(&ht->heat, extent, &flags);
		e = __hottier_heat_get(&ht->heat, set, extent, 0);
		if (e && !(e->flags & HOTTIER_E_PINNED)) {
			e->flags |= HOTTIER_E_PINNED | HOTTIER_E_NEWPIN;
			atomic_inc(&ht->pinned);
		}
		hottier_heat_unlock(set, flags);
		if (!e) {
			if (extent > first)
				hottier_apply_in_range(ht, first, extent - 1,
						       undo_new_pin);
			return -ENOSPC;
		}
	}
	return 0;
}

/*
 * promote: raise each extent's heat to the threshold and queue it; pin:
 * pin them all first (pin_range()), then the same. Refused (-ENOSPC) when
 * the extents cannot all be tracked or, for a pin, pinned extents would
 * outnumber the slots. Messages and inherit_pins() run under ht->lock.
 */
int hottier_promote_range(struct hottier *ht, u64 first, u64 last, bool pin)
{
	u32 threshold = threshold_heat(ht);
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;
	u64 extent;
	int r;

	if (last - first >= ht->layout.nr_slots)
		return -ENOSPC;
	if (pin) {
		r = pin_range(ht, first, last);
		if (r)
			return r;
	}

	for (extent = first; extent <= last; extent++) {
		set = hottier_heat_lock(&ht->heat, extent, &flags);
		e = __hottier_heat_get(&ht->heat, set, extent, threshold);
		if (!e) {
			hottier_heat_unlock(set, flags);
			return -ENOSPC;
		}
		e->flags &= ~HOTTIER_E_NEWPIN;
		if (__hottier_heat_read(&ht->heat, e) < threshold)
			e->heat = threshold;
		if (!(e->flags & (HOTTIER_E_RESIDENT | HOTTIER_E_COPYING)))
			e->flags |= HOTTIER_E_WANTED | HOTTIER_E_ASKED;
		if (!__hottier_post_candidate(ht, e))
			WRITE_ONCE(ht->wanted, true);
		hottier_heat_unlock(set, flags);
	}
	return 0;
}

/* Drop every replica, and make copies in flight drop theirs. */
static void invalidate(struct hottier *ht)
{
	atomic_inc(&ht->invalidations);
	hottier_apply_in_range(ht, 0, U64_MAX - 1, hottier_drop_any);
	/* Pinned extents are copied again. */
	WRITE_ONCE(ht->wanted, true);
	kick_promote(ht, 0);
}

/*
 * The one way back from degraded: writes skipped the SSD meanwhile, so
 * every replica is dropped first; then the SSD is used again.
 */
static void ssd_reset(struct hottier *ht)
{
	bool was = is_degraded(ht);

	invalidate(ht);
	atomic_set(&ht->ssd_errors, 0);
	clear_bit(HOTTIER_DEGRADED, &ht->mode);
	DMINFO("%s: SSD reset: every replica dropped, mode rw%s", ht_name(ht),
	       was ? " (was degraded)" : "");
	dm_table_event(ht->ti->table);
	kick_promote(ht, 0);
}

static int read_page(struct block_device *bdev, sector_t sector,
		     struct page *page, unsigned int len)
{
	struct bio *bio = bio_alloc(bdev, 1, REQ_OP_READ, GFP_KERNEL);
	int r;

	bio->bi_iter.bi_sector = sector;
	__bio_add_page(bio, page, len, 0);
	r = submit_bio_wait(bio);
	bio_put(bio);
	return r;
}

/* Compare a replica with its HDD extent: 1 if they differ, 0 if not. */
static int compare_extent(struct hottier *ht, u64 extent, u32 slot,
			  struct page *a, struct page *b)
{
	sector_t len = extent_len(ht, extent), off, n;
	int r;

	for (off = 0; off < len; off += n) {
		n = min_t(sector_t, len - off, HOTTIER_SCRUB_CHUNK >> SECTOR_SHIFT);
		r = read_page(ht->ssd->bdev, slot_sector(ht, slot) + off, a,
			      n << SECTOR_SHIFT);
		if (!r)
			r = read_page(ht->hdd->bdev,
				      extent_first_sector(ht, extent) + off, b,
				      n << SECTOR_SHIFT);
		if (r)
			return r;
		if (memcmp(page_address(a), page_address(b), n << SECTOR_SHIFT))
			return 1;
	}
	return 0;
}

/*
 * Scrub one slot. A comparison that overlapped a write (the extent's write
 * generation moved, or a write was in flight) proves nothing: try again.
 * Returns 1 for a mismatch, 0 for a match or no replica, -EBUSY if writes
 * never left it alone.
 */
static int scrub_slot(struct hottier *ht, u32 slot, struct page *a,
		      struct page *b)
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	struct hottier_wtrack *wt;
	unsigned long flags;
	unsigned int gen;
	int tries, r;
	bool quiet;
	u64 extent;

	for (tries = 0; tries < HOTTIER_SCRUB_TRIES; tries++) {
		extent = READ_ONCE(ht->slots[slot].extent);
		set = hottier_heat_lock(&ht->heat, extent, &flags);
		e = __hottier_heat_find(set, extent);
		if (!e || !(e->flags & HOTTIER_E_RESIDENT) || e->slot != slot) {
			hottier_heat_unlock(set, flags);
			return 0;
		}
		hottier_slot_get(ht, slot);
		hottier_heat_unlock(set, flags);

		wt = hottier_wtrack_of(ht, extent);
		spin_lock_irqsave(&wt->lock, flags);
		quiet = !wt->inflight;
		gen = wt->gen;
		spin_unlock_irqrestore(&wt->lock, flags);

		r = quiet ? compare_extent(ht, extent, slot, a, b) : -EAGAIN;

		spin_lock_irqsave(&wt->lock, flags);
		quiet = !wt->inflight && wt->gen == gen;
		spin_unlock_irqrestore(&wt->lock, flags);
		hottier_slot_put(ht, slot);
		if (r >= 0 && quiet) {
			ht->scrub_checked++;
			return r;
		}
		if (r < 0 && r != -EAGAIN)
			return r;
		msleep(HOTTIER_RETRY_MS);
	}
	return -EBUSY;
}

static int scrub(struct hottier *ht)
{
	unsigned int order = get_order(HOTTIER_SCRUB_CHUNK);
	struct page *a, *b;
	int r = 0;
	u32 slot;

	a = alloc_pages(GFP_KERNEL, order);
	b = alloc_pages(GFP_KERNEL, order);
	if (!a || !b) {
		r = -ENOMEM;
		goto out;
	}
	ht->scrub_checked = 0;
	ht->scrub_mismatches = 0;
	for (slot = 0; slot < ht->layout.nr_slots; slot++) {
		r = scrub_slot(ht, slot, a, b);
		if (r < 0)
			break;
		ht->scrub_mismatches += r;
		r = 0;
		cond_resched();
	}
out:
	if (a)
		__free_pages(a, order);
	if (b)
		__free_pages(b, order);
	return r;
}

static int range_message(struct hottier *ht, const char *verb, char **argv)
{
	u64 first, last;

	if (parse_range(ht, argv, &first, &last))
		return -EINVAL;
	if (!strcasecmp(verb, "promote"))
		return hottier_promote_range(ht, first, last, false);
	if (!strcasecmp(verb, "pin"))
		return hottier_promote_range(ht, first, last, true);
	if (!strcasecmp(verb, "demote")) {
		hottier_apply_in_range(ht, first, last, demote_one);
		return 0;
	}
	if (!strcasecmp(verb, "unpin")) {
		hottier_apply_in_range(ht, first, last, unpin_one);
		return 0;
	}
	return -EINVAL;
}

int hottier_message(struct dm_target *ti, unsigned int argc, char **argv,
		    char *result, unsigned int maxlen)
{
	struct hottier *ht = ti->private;
	const char *name = dm_device_name(dm_table_get_md(ti->table));
	char *error = NULL;
	int r = -EINVAL;

	mutex_lock(&ht->lock);
	if (argc == 1 && !strcasecmp(argv[0], "reset_stats")) {
		reset_stats(ht);
		r = 0;
	} else if (argc == 1 && !strcasecmp(argv[0], "invalidate")) {
		invalidate(ht);
		r = 0;
	} else if (argc == 1 && !strcasecmp(argv[0], "ssd_reset")) {
		ssd_reset(ht);
		r = 0;
	} else if (argc == 1 && !strcasecmp(argv[0], "heat")) {
		r = heat_message(ht, result, maxlen);
	} else if (argc == 2 && !strcasecmp(argv[0], "top")) {
		r = top_message(ht, argv[1], result, maxlen);
	} else if (argc == 1 && !strcasecmp(argv[0], "scrub")) {
		r = scrub(ht);
		if (r)
			DMERR("%s: scrub stopped: error %d", name, r);
	} else if (argc == 3) {
		r = range_message(ht, argv[0], argv + 1);
		if (r == -ENOSPC)
			DMERR("%s: %s %s %s: more extents than the SSD or the heat table holds",
			      name, argv[0], argv[1], argv[2]);
	} else if (argc == 2 && hottier_is_key(argv[0])) {
		r = hottier_set_key(&ht->args, argv[0], argv[1], true, &error);
		if (r)
			DMERR("%s: %s %s: %s", name, argv[0], argv[1], error);
		else
			kick_promote(ht, 0);
		mutex_unlock(&ht->lock);
		return r;
	}
	mutex_unlock(&ht->lock);
	if (r == -EINVAL)
		DMERR("%s: unsupported message '%s' with %u argument(s)", name,
		      argc ? argv[0] : "", argc);
	return r;
}

