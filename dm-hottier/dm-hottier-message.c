// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: messages (dmsetup message <dev> 0 ...): tunables, promote,
 * demote, pin, unpin, invalidate, ssd_reset, reset_stats, scrub, and the
 * heat and top views. See Documentation/hottier.rst.
 */
#include "dm-hottier.h"

/* Messages */

#define HOTTIER_TOP_MAX		1000

/*
 * Every extent with heat, a line of struct hottier_top each: those without
 * a replica from the policy's heat table, under its set locks, then the
 * replicas from the map, under their bucket locks.
 */
static void walk_heat(struct hottier *ht,
		      void (*fn)(const struct hottier_top *t, void *data),
		      void *data)
{
	struct hottier_heat *h = &ht->policy.heat;
	u16 epoch = hottier_policy_epoch(&ht->policy);
	struct hottier_heat_set *set;
	struct hottier_top t = { };
	unsigned long flags;
	struct hottier_mlock *lock;
	u32 i;
	int w;

	for (i = 0; i < h->nr_sets; i++) {
		set = hottier_heat_lock_set(h, i, &flags);
		for (w = 0; w < HOTTIER_HEAT_WAYS; w++) {
			struct hottier_heat_entry *e = &set->way[w];

			if (!(e->flags & HOTTIER_E_VALID))
				continue;
			t.extent = e->extent;
			t.heat = __hottier_heat_read(e);
			fn(&t, data);
		}
		hottier_heat_unlock(set, flags);
		cond_resched();
	}
	for (i = 0; i < ht->map.nr_slots; i++) {
		struct hottier_mslot *s = hottier_mslot(&ht->map, i);
		u64 extent = hottier_mslot_extent(s);

		if (hottier_mslot_state(s) != HOTTIER_S_RESIDENT)
			continue;
		lock = hottier_map_lock(&ht->map, extent, &flags);
		if (hottier_mslot_state(s) == HOTTIER_S_RESIDENT &&
		    hottier_mslot_extent(s) == extent) {
			t.extent = extent;
			t.heat = hottier_mslot_heat(s, epoch);
			t.resident = true;
			t.pinned = hottier_mslot_flags(s) & HOTTIER_SF_PINNED;
			fn(&t, data);
		}
		hottier_map_unlock(lock, flags);
		if (!(i % HOTTIER_DROP_WALK))
			cond_resched();
	}
}

static void count_band(const struct hottier_top *t, void *data)
{
	u64 *bands = data;

	bands[hottier_heat_band(t->heat)]++;
}

/* "heat": extents with heat per heat band, "<lo>-<hi> <count>" a line. */
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

static void offer_top(const struct hottier_top *t, void *data)
{
	struct top_walk *w = data;

	hottier_top_add(w->top, w->n, &w->used, t);
}

/*
 * "top <n>": the n hottest extents with heat, hottest first, a line each:
 * "<start_sector> <heat_reads> <resident|-> <pinned|->". A pinned extent
 * without a replica yet shows "- pinned".
 */
static int top_message(struct hottier *ht, const char *arg, char *result,
		       unsigned int maxlen)
{
	struct top_walk t = { };
	unsigned int sz = 0, i;
	bool pinned;

	if (kstrtouint(arg, 10, &t.n) || !t.n || t.n > HOTTIER_TOP_MAX) {
		DMERR("%s: top %s: expected 1 to %u extents", ht_name(ht), arg,
		      HOTTIER_TOP_MAX);
		return -EINVAL;
	}
	t.top = kvcalloc(t.n, sizeof(*t.top), GFP_KERNEL);
	if (!t.top)
		return -ENOMEM;
	walk_heat(ht, offer_top, &t);
	for (i = 0; i < t.used; i++) {
		pinned = t.top[i].pinned ||
			 hottier_policy_pinned(&ht->policy, t.top[i].extent);
		DMEMIT("%llu %u %s %s\n", (unsigned long long)
		       (t.top[i].extent << ht->extent_shift),
		       t.top[i].heat >> HOTTIER_HEAT_SHIFT,
		       t.top[i].resident ? "resident" : "-",
		       pinned ? "pinned" : "-");
	}
	kvfree(t.top);
	return 1;
}

static void reset_stats(struct hottier *ht)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(ht->stats, cpu), 0,
		       sizeof(struct hottier_stats));
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

/* Mark the replicas of [first, last] pinned, or not. */
static void pin_replicas(struct hottier *ht, u64 first, u64 last, bool pin)
{
	struct hottier_map *m = &ht->map;
	struct hottier_range_iter it;
	struct hottier_mlock *lock;
	unsigned long flags;
	u64 extent;
	u32 slot;

	hottier_map_range_start(m, &it, first, last);
	while (hottier_map_range_next(m, &it, &extent)) {
		lock = hottier_map_lock(m, extent, &flags);
		slot = __hottier_map_find(m, extent);
		if (slot != HOTTIER_NIL &&
		    hottier_mslot_state(hottier_mslot(m, slot)) ==
		    HOTTIER_S_RESIDENT)
			__hottier_replica_set_pinned(ht, slot, pin);
		hottier_map_unlock(lock, flags);
		if (!(it.visits % HOTTIER_DROP_WALK))
			cond_resched();
	}
}

/*
 * promote: the extents are asked for: copied as the policy admits them (a
 * free slot, or hotter than the coldest replica by the margin); pin: the
 * same, and never evicted. Refused (-ENOSPC, nothing changed) for more
 * extents than the SSD has slots, or, for a pin, when pinned extents would
 * outnumber the slots (extents pinned already count once). Requests are
 * kept as ranges: none is lost, whatever their size.
 */
int hottier_promote_range(struct hottier *ht, u64 first, u64 last, bool pin)
{
	int r;

	if (last - first >= ht->map.nr_slots)
		return -ENOSPC;
	if (pin) {
		r = hottier_policy_pin(&ht->policy, first, last, GFP_KERNEL);
		if (!r)
			pin_replicas(ht, first, last, true);
	} else {
		r = hottier_policy_promote_range(&ht->policy, first, last,
						 GFP_KERNEL);
	}
	if (!r)
		kick_promote(ht, 0);
	return r;
}

/*
 * Pin the sectors [@start, @end) clipped to the device, whatever extent
 * size they were pinned at (a reload's old table, the on-SSD map).
 */
int hottier_pin_sectors(struct hottier *ht, u64 start, u64 end)
{
	end = min_t(u64, end, ht->ti->len);
	if (start >= end)
		return 0;
	return hottier_promote_range(ht, start >> ht->extent_shift,
				     (end - 1) >> ht->extent_shift, true);
}

static int unpin_range(struct hottier *ht, u64 first, u64 last)
{
	int r = hottier_policy_unpin(&ht->policy, first, last, GFP_KERNEL);

	if (!r)
		pin_replicas(ht, first, last, false);
	return r;
}

/* Drop every replica, and make copies in flight drop theirs. */
static void invalidate(struct hottier *ht)
{
	atomic_inc(&ht->invalidations);
	hottier_drop_range(ht, 0, U64_MAX - 1, true);
	/* Pinned extents are copied again. */
	hottier_policy_pins_dropped(&ht->policy);
	kick_promote(ht, 0);
}

/*
 * The one way back from degraded: writes skipped the SSD meanwhile, so
 * every replica is dropped first; then the SSD is used again.
 */
static int ssd_reset(struct hottier *ht)
{
	bool was = is_degraded(ht);
	int r;

	invalidate(ht);
	/* Not while a record the HDD's writes skipped may check out. */
	r = hottier_persist_sync(ht);
	if (r)
		return r;
	atomic_set(&ht->ssd_errors, 0);
	clear_bit(HOTTIER_DEGRADED, &ht->mode);
	DMINFO("%s: SSD reset: every replica dropped, mode rw%s", ht_name(ht),
	       was ? " (was degraded)" : "");
	dm_table_event(ht->ti->table);
	kick_promote(ht, 0);
	return 0;
}

static int range_message(struct hottier *ht, const char *verb, char **argv)
{
	u64 first, last;
	int r;

	if (parse_range(ht, argv, &first, &last))
		return -EINVAL;
	if (!strcasecmp(verb, "promote"))
		return hottier_promote_range(ht, first, last, false);
	if (!strcasecmp(verb, "pin")) {
		r = hottier_persist_pin_room(ht, first, last, true) ?:
		    hottier_promote_range(ht, first, last, true);
		return r ?: hottier_persist_pins(ht);
	}
	if (!strcasecmp(verb, "demote")) {
		hottier_drop_range(ht, first, last, false);
		return hottier_persist_sync(ht);
	}
	if (!strcasecmp(verb, "unpin"))
		return hottier_persist_pin_room(ht, first, last, false) ?:
		       unpin_range(ht, first, last) ?: hottier_persist_pins(ht);
	return -EINVAL;
}

/* Messages that copy to, read or reset the SSD: none without one. */
static bool needs_ssd(unsigned int argc, char **argv)
{
	static const char * const verbs[] = { "promote", "pin", "scrub",
					      "ssd_reset" };
	int i;

	for (i = 0; argc && i < ARRAY_SIZE(verbs); i++)
		if (!strcasecmp(argv[0], verbs[i]))
			return true;
	return false;
}

int hottier_message(struct dm_target *ti, unsigned int argc, char **argv,
		    char *result, unsigned int maxlen)
{
	struct hottier *ht = ti->private;
	const char *name = dm_device_name(dm_table_get_md(ti->table));
	char *error = NULL;
	int r = -EINVAL;

	if (test_bit(HOTTIER_NO_SSD, &ht->mode) && needs_ssd(argc, argv)) {
		DMERR("%s: %s: the device has no SSD: reload its table with one",
		      name, argv[0]);
		return -EINVAL;
	}
	mutex_lock(&ht->lock);
	if (argc == 1 && !strcasecmp(argv[0], "reset_stats")) {
		reset_stats(ht);
		r = 0;
	} else if (argc == 1 && !strcasecmp(argv[0], "invalidate")) {
		invalidate(ht);
		r = hottier_persist_sync(ht);
	} else if (argc == 1 && !strcasecmp(argv[0], "ssd_reset")) {
		r = ssd_reset(ht);
	} else if (argc == 1 && !strcasecmp(argv[0], "heat")) {
		r = heat_message(ht, result, maxlen);
	} else if (argc == 2 && !strcasecmp(argv[0], "top")) {
		r = top_message(ht, argv[1], result, maxlen);
	} else if (argc == 1 && !strcasecmp(argv[0], "scrub")) {
		r = hottier_scrub_start(ht);
		if (r)
			DMERR("%s: scrub: a scrub is running", name);
	} else if (argc == 3) {
		r = range_message(ht, argv[0], argv + 1);
		if (r == -ENOSPC)
			DMERR("%s: %s %s %s: more extents than the SSD has slots",
			      name, argv[0], argv[1], argv[2]);
	} else if (argc == 2 && hottier_is_key(argv[0])) {
		r = hottier_set_key(&ht->args, argv[0], argv[1], true, &error);
		if (r)
			DMERR("%s: %s %s: %s", name, argv[0], argv[1], error);
		else
			hottier_keys_changed(ht);
		mutex_unlock(&ht->lock);
		return r;
	}
	mutex_unlock(&ht->lock);
	if (r == -EINVAL)
		DMERR("%s: unsupported message '%s' with %u argument(s)", name,
		      argc ? argv[0] : "", argc);
	return r;
}

