// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for dm-hottier's map (slots, index, victim levels) and for
 * the whole promotion loop through the policy object: warm-up, eviction
 * under hysteresis, pins, ghosts, scan resistance, requests kept as ranges,
 * and the cost of a victim choice at a million slots.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "dm-hottier-compat.h"
#include "dm-hottier-heat.h"
#include "dm-hottier-map.h"
#include "dm-hottier-policy.h"

/*
 * The cases over a second: the debug kernel's guest skips them
 * (kunit.filter=speed>slow) as they take 100 s under KASAN; UML runs them.
 * 6.1's KUnit has no speed attribute (6.6 added it).
 */
#ifndef KUNIT_CASE_SLOW
#define KUNIT_CASE_SLOW(test_name) KUNIT_CASE(test_name)
#endif

#define M1	BIT(20)

/* A map and a policy, freed when the test ends. */
struct rig {
	struct hottier_map map;
	struct hottier_policy p;
	u64 promotions, evictions;
	unsigned int max_visits;
};

struct rig_size {
	u32 slots;
	u64 tracked;
};

static int rig_init(struct kunit_resource *res, void *context)
{
	struct rig_size *size = context;
	struct rig *r = vzalloc(sizeof(*r));
	int e;

	if (!r)
		return -ENOMEM;
	e = hottier_map_init(&r->map, size->slots);
	if (!e) {
		e = hottier_policy_init(&r->p, &r->map, size->tracked);
		if (e)
			hottier_map_exit(&r->map);
	}
	if (e) {
		vfree(r);
		return e;
	}
	hottier_policy_set_threshold(&r->p, 4);
	res->data = r;
	return 0;
}

static void rig_free(struct kunit_resource *res)
{
	struct rig *r = res->data;

	hottier_policy_exit(&r->p);
	hottier_map_exit(&r->map);
	vfree(r);
}

static struct rig *new_rig(struct kunit *test, u32 slots, u64 tracked)
{
	struct rig_size size = { .slots = slots, .tracked = tracked };
	struct rig *r;

	r = kunit_alloc_resource(test, rig_init, rig_free, GFP_KERNEL, &size);
	KUNIT_ASSERT_NOT_NULL(test, r);
	return r;
}

static u16 epoch(struct rig *r)
{
	return hottier_policy_epoch(&r->p);
}

/* The slot of @extent's replica, or HOTTIER_NIL. */
static u32 resident(struct rig *r, u64 extent)
{
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 slot;

	lock = hottier_map_lock(&r->map, extent, &flags);
	slot = __hottier_map_find(&r->map, extent);
	if (slot != HOTTIER_NIL &&
	    hottier_mslot_state(hottier_mslot(&r->map, slot)) != HOTTIER_S_RESIDENT)
		slot = HOTTIER_NIL;
	hottier_map_unlock(lock, flags);
	return slot;
}

/* A read, as map_read() does it: a hit heats the slot, a miss the policy. */
static bool rig_read(struct rig *r, u64 extent, bool scan)
{
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 slot;

	lock = hottier_map_lock(&r->map, extent, &flags);
	slot = __hottier_map_find(&r->map, extent);
	if (slot != HOTTIER_NIL &&
	    hottier_mslot_state(hottier_mslot(&r->map, slot)) == HOTTIER_S_RESIDENT) {
		if (!scan)
			__hottier_policy_hit(&r->p, slot);
		hottier_map_unlock(lock, flags);
		return true;
	}
	hottier_map_unlock(lock, flags);
	hottier_policy_miss(&r->p, extent, scan);
	return false;
}

static void reads(struct rig *r, u64 extent, unsigned int n)
{
	while (n--)
		rig_read(r, extent, false);
}

/*
 * A replica installed, or removed, under its bucket lock as the replica
 * core does it: the map's part, and the policy files it on the levels.
 */
static void rig_install(struct rig *r, u32 slot, u32 heat, u16 at)
{
	__hottier_map_install(&r->map, slot, heat, at);
	__hottier_policy_installed(&r->p, slot);
}

static void rig_remove(struct rig *r, u32 slot)
{
	__hottier_policy_removing(&r->p, slot);
	__hottier_map_remove(&r->map, slot);
}

/*
 * The replica core's part of a work item, as dm-hottier-core.c does it
 * (hottier_replica_evict(), _start() and _done()): the eviction it asks
 * for, if its victim still may go; the copy's start and end.
 */
static bool rig_evict(struct rig *r, struct hottier_work *w)
{
	struct hottier_mlock *lock;
	unsigned long flags;
	bool ok;

	lock = hottier_map_lock(&r->map, w->victim, &flags);
	ok = __hottier_map_evictable(&r->map, w->slot, w->victim);
	if (ok)
		rig_remove(r, w->slot);
	hottier_map_unlock(lock, flags);
	hottier_policy_evicted(&r->p, w, ok);
	return ok;
}

static void rig_start(struct rig *r, struct hottier_work *w)
{
	struct hottier_mlock *lock;
	unsigned long flags;

	lock = hottier_map_lock(&r->map, w->extent, &flags);
	__hottier_map_insert(&r->map, w->slot, w->extent);
	hottier_map_unlock(lock, flags);
	hottier_policy_start(&r->p, w);
}

static void rig_done(struct rig *r, struct hottier_work *w, bool ok)
{
	struct hottier_mlock *lock;
	unsigned long flags;

	hottier_policy_done(&r->p, w, ok);
	lock = hottier_map_lock(&r->map, w->extent, &flags);
	if (ok) {
		if (w->pinned)
			__hottier_policy_set_pinned(&r->p, w->slot, true);
		rig_install(r, w->slot, w->heat, epoch(r));
	} else {
		rig_remove(r, w->slot);
	}
	hottier_map_unlock(lock, flags);
	if (!ok)
		hottier_map_put(&r->map, w->slot);
}

/* The worker: every work item the policy hands out, copied at once. */
static void rig_work(struct rig *r)
{
	struct hottier_work w;
	int e;

	for (;;) {
		e = hottier_policy_next(&r->p, &w);
		if (e == -EAGAIN)
			continue;
		if (e)
			return;
		if (w.evict && !rig_evict(r, &w))
			continue;
		r->evictions += w.evict;
		r->max_visits = max(r->max_visits, w.visits);
		rig_start(r, &w);
		rig_done(r, &w, true);
		r->promotions++;
	}
}

/* Map */

/*
 * Memory per slot, as loaded: the record, the index, chunk pointers, the
 * victim levels, and one heat entry a slot.
 */
static void map_costs_22_bytes_a_slot_and_its_index(struct kunit *test)
{
	u64 bytes = hottier_map_bytes(M1) + hottier_policy_levels_bytes(M1);
	u64 heat = hottier_heat_bytes(M1);

	KUNIT_EXPECT_EQ(test, sizeof(struct hottier_mslot), (size_t)16);
	KUNIT_EXPECT_EQ(test, sizeof(struct hottier_heat_entry), (size_t)8);
	/*
	 * 1M slots: 1M buckets, 4 bytes each; 11 levels of a bit a slot
	 * (and 1/64 of that above them).
	 */
	KUNIT_EXPECT_LE(test, bytes, (u64)M1 * (16 + 4) +
			HOTTIER_MAP_LEVELS * (u64)M1 / 8 * 65 / 64 + 4096);
	KUNIT_EXPECT_LE(test, bytes, (u64)M1 * 22);
	/* One heat entry a slot: 8 bytes, and a lock and an epoch per 16. */
	KUNIT_EXPECT_LE(test, sizeof(struct hottier_heat_set),
			HOTTIER_HEAT_WAYS * 8 + sizeof(spinlock_t) + 8);
	KUNIT_EXPECT_LE(test, heat, (u64)M1 / HOTTIER_HEAT_WAYS *
			sizeof(struct hottier_heat_set) + 4096);
	/* The largest allocation is a chunk, far below kvmalloc's limit. */
	KUNIT_EXPECT_LE(test, (u64)HOTTIER_MAP_CHUNK * 16, 1ULL << 20);
}

static void map_hands_out_every_slot_once(struct kunit *test)
{
	struct rig *r = new_rig(test, 100, 64);
	DECLARE_BITMAP(seen, 100) = { };
	u32 i, slot;

	for (i = 0; i < 100; i++) {
		slot = hottier_map_alloc(&r->map);
		KUNIT_ASSERT_LT(test, slot, 100U);
		KUNIT_EXPECT_FALSE(test, test_and_set_bit(slot, seen));
		KUNIT_EXPECT_EQ(test,
				hottier_mslot_state(hottier_mslot(&r->map,
								  slot)),
				(unsigned int)HOTTIER_S_RESERVED);
	}
	KUNIT_EXPECT_EQ(test, hottier_map_alloc(&r->map), HOTTIER_NIL);
	KUNIT_EXPECT_EQ(test, hottier_map_nr_free(&r->map), 0U);
	for (i = 0; i < 100; i++)
		KUNIT_EXPECT_TRUE(test, hottier_map_put(&r->map, i));
	KUNIT_EXPECT_EQ(test, hottier_map_nr_free(&r->map), 100U);
}

/*
 * A map read back from the SSD: the restored slots are resident where the
 * records put them, with their heat; a duplicate extent or slot is
 * refused; the other slots are free, slot 0 first, and evictions work.
 */
static void map_restore_puts_replicas_back_in_their_slots(struct kunit *test)
{
	struct rig *r = new_rig(test, 100, 64);
	u32 heat = 40 << HOTTIER_HEAT_SHIFT, h;
	unsigned int visits;
	u64 extent;
	u32 i;

	hottier_map_restore_begin(&r->map);
	for (i = 10; i < 20; i++) {
		KUNIT_EXPECT_TRUE(test, hottier_map_restore(&r->map, i,
							    1000 + i,
							    i == 15 ? 0 : heat,
							    epoch(r)));
		hottier_policy_restored(&r->p, i);
	}
	/* The same extent in another slot, the same slot for another one. */
	KUNIT_EXPECT_FALSE(test, hottier_map_restore(&r->map, 50, 1012, heat,
						     epoch(r)));
	KUNIT_EXPECT_FALSE(test, hottier_map_restore(&r->map, 12, 7, heat,
						     epoch(r)));
	hottier_map_restore_end(&r->map);

	KUNIT_EXPECT_EQ(test, atomic_read(&r->map.resident), 10);
	KUNIT_EXPECT_EQ(test, hottier_map_nr_free(&r->map), 90U);
	for (i = 10; i < 20; i++)
		KUNIT_EXPECT_EQ(test, resident(r, 1000 + i), i);
	KUNIT_EXPECT_EQ(test, resident(r, 7), HOTTIER_NIL);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, 11),
						 epoch(r)), heat);
	/* Free slots are handed out lowest first, restored ones never. */
	KUNIT_EXPECT_EQ(test, hottier_map_alloc(&r->map), 0U);
	for (i = 1; i < 100 - 10; i++)
		KUNIT_EXPECT_EQ(test,
				(u32)(hottier_map_alloc(&r->map) - 10) < 10,
				false);
	KUNIT_EXPECT_EQ(test, hottier_map_alloc(&r->map), HOTTIER_NIL);
	/* The cold one (no heat) is the first victim. */
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &h,
						    &extent, &visits), 15U);
	KUNIT_EXPECT_EQ(test, extent, 1015ULL);
}

/* Many extents in few buckets: chains are found and unlinked right. */
static void map_index_finds_and_removes_along_chains(struct kunit *test)
{
	struct rig *r = new_rig(test, 64, 64);
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 slot[64], i;

	for (i = 0; i < 64; i++) {
		slot[i] = hottier_map_alloc(&r->map);
		lock = hottier_map_lock(&r->map, 1000 + i * 64, &flags);
		__hottier_map_insert(&r->map, slot[i], 1000 + i * 64);
		rig_install(r, slot[i], 0, 0);
		hottier_map_unlock(lock, flags);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&r->map.resident), 64);
	for (i = 0; i < 64; i++)
		KUNIT_EXPECT_EQ(test, resident(r, 1000 + i * 64), slot[i]);
	KUNIT_EXPECT_EQ(test, resident(r, 999), HOTTIER_NIL);
	/* Remove every third: the others stay found. */
	for (i = 0; i < 64; i += 3) {
		lock = hottier_map_lock(&r->map, 1000 + i * 64, &flags);
		rig_remove(r, slot[i]);
		hottier_map_unlock(lock, flags);
		KUNIT_EXPECT_TRUE(test, hottier_map_put(&r->map, slot[i]));
	}
	for (i = 0; i < 64; i++)
		KUNIT_EXPECT_EQ(test, resident(r, 1000 + i * 64),
				i % 3 ? slot[i] : HOTTIER_NIL);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->map.resident), 64 - 22);
}

/* A slot's I/O keeps it: the last reference of a RESERVED slot frees it. */
static void map_slot_frees_after_its_last_io(struct kunit *test)
{
	struct rig *r = new_rig(test, 4, 64);
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 slot = hottier_map_alloc(&r->map);

	lock = hottier_map_lock(&r->map, 7, &flags);
	__hottier_map_insert(&r->map, slot, 7);
	rig_install(r, slot, 0, 0);
	hottier_map_unlock(lock, flags);
	hottier_map_get(&r->map, slot);		/* a read in flight */
	lock = hottier_map_lock(&r->map, 7, &flags);
	rig_remove(r, slot);
	hottier_map_unlock(lock, flags);
	KUNIT_EXPECT_FALSE(test, hottier_map_put(&r->map, slot));
	KUNIT_EXPECT_EQ(test, hottier_map_nr_free(&r->map), 3U);
	KUNIT_EXPECT_TRUE(test, hottier_map_put(&r->map, slot));
	KUNIT_EXPECT_EQ(test, hottier_map_nr_free(&r->map), 4U);
}

static u32 install(struct rig *r, u64 extent, u32 reads_of_heat, bool pin)
{
	u32 slot = hottier_map_alloc(&r->map);
	struct hottier_mlock *lock;
	unsigned long flags;

	lock = hottier_map_lock(&r->map, extent, &flags);
	__hottier_map_insert(&r->map, slot, extent);
	if (pin)
		__hottier_policy_set_pinned(&r->p, slot, true);
	rig_install(r, slot, reads_of_heat * HOTTIER_HEAT_ONE,
		    epoch(r));
	hottier_map_unlock(lock, flags);
	return slot;
}

/*
 * The on-SSD map's bits of a slot: hits, pins, aging and removal keep
 * them (the owner of a removed slot invalidates its record first); a
 * slot taken into the index again, and a freed one, start without.
 */
static void map_record_bits_live_until_the_slot_is_reused(struct kunit *test)
{
	struct rig *r = new_rig(test, 4, 64);
	u32 slot = install(r, 9, 2, false), again;
	struct hottier_mslot *s = hottier_mslot(&r->map, slot);
	struct hottier_mlock *lock;
	unsigned long flags;

	KUNIT_EXPECT_EQ(test, hottier_mslot_rec(s), 0U);
	lock = hottier_map_lock(&r->map, 9, &flags);
	__hottier_mslot_set_rec(s, HOTTIER_MR_PEND, 0);
	__hottier_mslot_set_rec(s, HOTTIER_MR_REC, HOTTIER_MR_PEND);
	__hottier_policy_hit(&r->p, slot);
	__hottier_policy_set_pinned(&r->p, slot, true);
	__hottier_policy_set_pinned(&r->p, slot, false);
	hottier_map_unlock(lock, flags);
	hottier_policy_age(&r->p);
	hottier_policy_refresh(&r->p, epoch(r) + HOTTIER_IDLE_MAX + 1);
	KUNIT_EXPECT_EQ(test, hottier_mslot_rec(s), (unsigned int)HOTTIER_MR_REC);
	KUNIT_EXPECT_EQ(test, hottier_mslot_extent(s), 9ULL);
	KUNIT_EXPECT_EQ(test, hottier_mslot_state(s), (unsigned int)HOTTIER_S_RESIDENT);

	/* An intent, the third bit, is kept the same way. */
	lock = hottier_map_lock(&r->map, 9, &flags);
	__hottier_mslot_set_rec(s, HOTTIER_MR_INTENT | HOTTIER_MR_PEND,
				HOTTIER_MR_REC);
	__hottier_policy_hit(&r->p, slot);
	hottier_map_unlock(lock, flags);
	hottier_policy_refresh(&r->p, epoch(r) + HOTTIER_IDLE_MAX + 1);
	KUNIT_EXPECT_EQ(test, hottier_mslot_rec(s),
			(unsigned int)(HOTTIER_MR_INTENT | HOTTIER_MR_PEND));
	KUNIT_EXPECT_EQ(test, hottier_mslot_extent(s), 9ULL);
	lock = hottier_map_lock(&r->map, 9, &flags);
	__hottier_mslot_set_rec(s, HOTTIER_MR_REC,
				HOTTIER_MR_INTENT | HOTTIER_MR_PEND);
	hottier_map_unlock(lock, flags);

	lock = hottier_map_lock(&r->map, 9, &flags);
	rig_remove(r, slot);
	hottier_map_unlock(lock, flags);
	KUNIT_EXPECT_EQ(test, hottier_mslot_rec(s), (unsigned int)HOTTIER_MR_REC);
	KUNIT_EXPECT_EQ(test, hottier_mslot_state(s), (unsigned int)HOTTIER_S_RESERVED);

	/* Reused for another extent (an eviction's slot): no bits. */
	lock = hottier_map_lock(&r->map, 10, &flags);
	__hottier_map_insert(&r->map, slot, 10);
	hottier_map_unlock(lock, flags);
	KUNIT_EXPECT_EQ(test, hottier_mslot_rec(s), 0U);
	lock = hottier_map_lock(&r->map, 10, &flags);
	__hottier_mslot_set_rec(s, HOTTIER_MR_REC, 0);
	rig_remove(r, slot);
	hottier_map_unlock(lock, flags);
	KUNIT_EXPECT_TRUE(test, hottier_map_put(&r->map, slot));
	/* Freed, then handed out again: no bits. */
	do {
		again = hottier_map_alloc(&r->map);
	} while (again != slot && again != HOTTIER_NIL);
	KUNIT_ASSERT_EQ(test, again, slot);
	KUNIT_EXPECT_EQ(test, hottier_mslot_rec(s), 0U);
}

/* The victim is from the coldest level; hits since queueing count. */
static void map_victim_is_coldest_and_follows_hits(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 heat, s1;
	u64 extent;

	install(r, 10, 40, false);
	s1 = install(r, 11, 1, false);
	install(r, 12, 9, false);
	install(r, 13, 3, true);			/* pinned: never */
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), s1);
	KUNIT_EXPECT_EQ(test, extent, 11ULL);
	KUNIT_EXPECT_EQ(test, heat, HOTTIER_HEAT_ONE);

	/* 11 is read 100 times: 12 is the coldest now. */
	lock = hottier_map_lock(&r->map, 11, &flags);
	for (heat = 0; heat < 100; heat++)
		__hottier_policy_hit(&r->p, s1);
	hottier_map_unlock(lock, flags);
	hottier_policy_victim(&r->p, epoch(r), &heat, &extent, NULL);
	KUNIT_EXPECT_EQ(test, extent, 12ULL);
}

/*
 * Levels follow decay: a replica installed hot and left alone two
 * half-lives is colder than one installed since at a heat in between (and
 * worth far less: it went unread all that time).
 */
static void map_levels_move_down_with_each_half_life(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u64 extent;
	u32 heat;
	int i;

	install(r, 1, 32, false);		/* band 6 */
	for (i = 0; i < 2 * HOTTIER_EPOCHS_PER_HALFLIFE; i++)
		hottier_policy_tick(&r->p);	/* 8 reads now: band 4 */
	install(r, 2, 12, false);		/* band 4, hotter */
	hottier_policy_victim(&r->p, epoch(r), &heat, &extent, NULL);
	KUNIT_EXPECT_EQ(test, extent, 1ULL);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, 0),
						 epoch(r)),
			8 * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, heat, (8 * HOTTIER_HEAT_ONE) >>
			((2 * HOTTIER_EPOCHS_PER_HALFLIFE - HOTTIER_IDLE_GRACE) *
			 HOTTIER_HEAT_IDLE_SHIFT));
}

/*
 * Worth: a replica read every epoch is worth its heat; one left unread is
 * worth a quarter as much again for every epoch past the first, and the
 * refresh moves it down the levels to its worth, so the victim search
 * finds it before a colder replica that is still read. The idle replica
 * was read 8 times in its half-life, 1.4 an epoch: the rate rule says it
 * missed 2 reads in the two whole epochs since, within its grace, so this
 * is the epoch rule alone.
 */
static void map_idle_replica_is_worth_less(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u32 idle, busy, heat;
	u64 extent;
	int i;

	idle = install(r, 1, 8, false);		/* band 4 */
	busy = install(r, 2, 16, false);	/* band 5 */
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, idle),
						  epoch(r)),
			8 * HOTTIER_HEAT_ONE);
	for (i = 0; i < 3; i++) {
		hottier_policy_tick(&r->p);
		reads(r, 2, 2);
	}
	/*
	 * Three epochs: heat 8 x 2^-3/4 (4.8 reads), worth quartered twice
	 * more: 0.3 reads, in sixteenths 4.
	 */
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, idle),
						 epoch(r)),
			hottier_heat_decay(8 * HOTTIER_HEAT_ONE, 3));
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, idle),
						  epoch(r)),
			hottier_heat_decay(8 * HOTTIER_HEAT_ONE, 3) >>
			(2 * HOTTIER_HEAT_IDLE_SHIFT));
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, idle),
						  epoch(r)), 4U);
	KUNIT_EXPECT_FALSE(test, hottier_mslot_cut(hottier_mslot(&r->map, idle),
						   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, busy),
						  epoch(r)),
			hottier_mslot_heat(hottier_mslot(&r->map, busy),
					   epoch(r)));
	/* 16 x 2^-3/4 and 6 reads since: band 4, the idle one's below it. */
	KUNIT_EXPECT_GE(test, hottier_mslot_worth(hottier_mslot(&r->map, busy),
						  epoch(r)),
			8U * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), idle);
	KUNIT_EXPECT_EQ(test, extent, 1ULL);
	KUNIT_EXPECT_EQ(test, heat, 4U);
	/*
	 * Read again, 32 times: it is worth its heat at once (36.8 reads, in
	 * the slot's quarter reads 36.75), a band above busy's.
	 */
	for (i = 0; i < 32; i++)
		rig_read(r, 1, false);
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, idle),
						  epoch(r)),
			hottier_mslot_heat(hottier_mslot(&r->map, idle),
					   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, idle),
						  epoch(r)),
			36 * HOTTIER_HEAT_ONE + HOTTIER_HEAT_ONE * 3 / 4);
	KUNIT_EXPECT_LT(test, hottier_mslot_worth(hottier_mslot(&r->map, busy),
						  epoch(r)),
			16U * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), busy);
}

/*
 * The rate rule: a replica read 64 times in its half-life (11 reads an
 * epoch at that rate) that is not read for two epochs missed 11 reads in
 * the whole epoch between: past the grace of 2, its worth halves 9 more
 * times, to nothing, and it is cut. One read 8 times (1.4 an epoch)
 * missed one read and keeps the epoch rule's worth. Epoch rule alone, the
 * first would be worth 11 reads and the second 1.4; now the first goes
 * first. The refresh counts the cut replica, an eviction of it or a
 * victim worth a read takes the count down, a read revives it, and a
 * pinned one is never counted.
 */
static void map_rate_rule_cuts_a_replica_whose_reads_stopped(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 hot, slow, heat;
	u64 extent;

	hot = install(r, 1, 64, false);
	slow = install(r, 2, 8, false);
	hottier_policy_tick(&r->p);
	/* Unread for the grace epoch: both worth their heat, none cut. */
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, hot),
						  epoch(r)),
			hottier_mslot_heat(hottier_mslot(&r->map, hot),
					   epoch(r)));
	KUNIT_EXPECT_FALSE(test, hottier_mslot_cut(hottier_mslot(&r->map, hot),
						   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	hottier_policy_tick(&r->p);
	/* Heat 64 x 2^-1/2 = 45.3 reads, quartered, halved 9 times: 0.02. */
	KUNIT_EXPECT_EQ(test, hottier_mslot_worth(hottier_mslot(&r->map, hot),
						  epoch(r)),
			0U);
	KUNIT_EXPECT_TRUE(test, hottier_mslot_cut(hottier_mslot(&r->map, hot),
						  epoch(r)));
	/* Heat 8 x 2^-1/2 = 5.7 reads, quartered: 1.4 reads. */
	KUNIT_EXPECT_GT(test, hottier_mslot_worth(hottier_mslot(&r->map, slow),
						  epoch(r)),
			HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_FALSE(test, hottier_mslot_cut(hottier_mslot(&r->map, slow),
						   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 1U);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), hot);
	KUNIT_EXPECT_EQ(test, extent, 1ULL);
	KUNIT_EXPECT_LT(test, heat, HOTTIER_HEAT_ONE);
	hottier_policy_cut_gone(&r->p, false);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	hottier_policy_cut_gone(&r->p, false);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	/* A read revives it: worth its heat, not cut, not counted. */
	rig_read(r, 1, false);
	KUNIT_EXPECT_FALSE(test, hottier_mslot_cut(hottier_mslot(&r->map, hot),
						   epoch(r)));
	KUNIT_EXPECT_GT(test, hottier_mslot_worth(hottier_mslot(&r->map, hot),
						  epoch(r)),
			45U * HOTTIER_HEAT_ONE);
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	hottier_policy_tick(&r->p);
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_TRUE(test, hottier_mslot_cut(hottier_mslot(&r->map, hot),
						  epoch(r)));
	KUNIT_EXPECT_FALSE(test, hottier_mslot_cut(hottier_mslot(&r->map, slow),
						   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 1U);
	hottier_policy_cut_gone(&r->p, true);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	/*
	 * Pinned replicas are never victims, so never counted as cut. The
	 * slow one has now missed 6 of its reads (1.4 an epoch, 5 whole
	 * epochs): it is cut, and counted alone.
	 */
	lock = hottier_map_lock(&r->map, 1, &flags);
	__hottier_policy_set_pinned(&r->p, hot, true);
	hottier_map_unlock(lock, flags);
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_TRUE(test, hottier_mslot_cut(hottier_mslot(&r->map, hot),
						  epoch(r)));
	KUNIT_EXPECT_TRUE(test, hottier_mslot_cut(hottier_mslot(&r->map, slow),
						  epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 1U);
	hottier_policy_cut_gone(&r->p, false);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	lock = hottier_map_lock(&r->map, 1, &flags);
	__hottier_policy_set_pinned(&r->p, hot, false);
	hottier_map_unlock(lock, flags);
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 2U);
}

/*
 * A working-set turnover: the heat table forgets every entry and a new epoch
 * starts. Nothing is cut before its first second; then a replica unread
 * since it began is cut once its heat says it missed 2 reads (at a
 * half-life of 60 s: 173 reads after 1 s, 57.8 after 3 s, 34.7 after 5 s)
 * and goes to the lowest level, first for the victim search. A replica
 * read since is never cut, nor counted pinned. The next tick ends it.
 */
static void map_turnover_cuts_replicas_unread_since_it_began(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u32 hot, warm, cool, pinned, heat;
	u16 before = epoch(r);
	u64 extent;

	hot = install(r, 1, 64, false);
	warm = install(r, 2, 40, false);
	cool = install(r, 3, 8, false);
	pinned = install(r, 4, 64, true);
	reads(r, 100, 3);
	KUNIT_ASSERT_EQ(test, (u32)atomic_read(&r->p.heat.tracked), 1U);

	hottier_policy_turnover(&r->p);
	KUNIT_EXPECT_EQ(test, epoch(r), (u16)(before + 1));
	KUNIT_EXPECT_EQ(test, (u32)atomic_read(&r->p.heat.tracked), 0U);
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, hot, epoch(r)));
	rig_read(r, 3, false);			/* cool is read since */

	KUNIT_EXPECT_TRUE(test, hottier_policy_turnover_second(&r->p, 1000,
							       60000));
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, hot, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 0U);
	/* The coldest level holds cool, worth its reads. */
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), cool);

	KUNIT_EXPECT_TRUE(test, hottier_policy_turnover_second(&r->p, 3000,
							       60000));
	KUNIT_EXPECT_TRUE(test, hottier_policy_cut(&r->p, hot, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_worth(&r->p, hot, epoch(r)), 0U);
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, warm, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_worth(&r->p, warm, epoch(r)),
			hottier_mslot_heat(hottier_mslot(&r->map, warm),
					   epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 1U);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), hot);
	KUNIT_EXPECT_EQ(test, extent, 1ULL);
	KUNIT_EXPECT_EQ(test, heat, 0U);

	KUNIT_EXPECT_TRUE(test, hottier_policy_turnover_second(&r->p, 5000,
							       60000));
	KUNIT_EXPECT_TRUE(test, hottier_policy_cut(&r->p, warm, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 2U);
	/* Read since, or pinned: never. */
	KUNIT_EXPECT_TRUE(test, hottier_policy_turnover_second(&r->p, 14000,
							       60000));
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, cool, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 2U);
	KUNIT_EXPECT_NE(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), pinned);
	/* A read revives a cut one. */
	rig_read(r, 2, false);
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, warm, epoch(r)));

	/*
	 * The next tick ends the turnover: the rate rule alone again, which
	 * cuts hot too now (64 reads of heat, 11 missed in a whole epoch).
	 */
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, READ_ONCE(r->p.levels.turnover_heat), 0U);
	KUNIT_EXPECT_FALSE(test, hottier_policy_turnover_second(&r->p, 16000,
								60000));
	for (heat = 0; heat < 4; heat++) {
		struct hottier_mslot *s = hottier_mslot(&r->map, heat);

		KUNIT_EXPECT_EQ(test, hottier_policy_cut(&r->p, heat, epoch(r)),
				hottier_mslot_cut(s, epoch(r)));
		KUNIT_EXPECT_EQ(test,
				hottier_policy_worth(&r->p, heat, epoch(r)),
				hottier_mslot_worth(s, epoch(r)));
	}
	KUNIT_EXPECT_TRUE(test, hottier_policy_cut(&r->p, hot, epoch(r)));
	KUNIT_EXPECT_FALSE(test, hottier_policy_cut(&r->p, warm, epoch(r)));
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_cut(&r->p), 1U);
}

/*
 * In a turnover, a replica's first read since it began starts its heat at
 * that read, as the heat table's entries started: it goes down to the
 * level of one read, below a cooler replica unread since. Its next reads
 * add up as ever, and once the next tick ends the turnover a read adds to
 * the heat it had.
 */
static void map_turnover_restarts_heat_at_a_replicas_first_read(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u32 hot, cool, heat;
	u64 extent;

	hot = install(r, 1, 64, false);
	cool = install(r, 2, 8, false);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), cool);

	hottier_policy_turnover(&r->p);
	rig_read(r, 1, false);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, hot),
						 epoch(r)), HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_EQ(test, hottier_policy_victim(&r->p, epoch(r), &heat,
						    &extent, NULL), hot);
	KUNIT_EXPECT_EQ(test, heat, HOTTIER_HEAT_ONE);
	/* cool, unread, keeps its heat (decayed by the turnover's tick). */
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, cool),
						 epoch(r)),
			hottier_heat_decay(8 * HOTTIER_HEAT_ONE, 1));

	reads(r, 1, 2);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, hot),
						 epoch(r)), 3 * HOTTIER_HEAT_ONE);

	/* The next tick ends the turnover: a first read adds to the heat. */
	hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, READ_ONCE(r->p.levels.turnover_heat), 0U);
	heat = hottier_mslot_heat(hottier_mslot(&r->map, cool), epoch(r));
	rig_read(r, 2, false);
	heat = (heat + HOTTIER_HEAT_ONE) >> HOTTIER_SLOT_HEAT_SHIFT;
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, cool),
						 epoch(r)),
			heat << HOTTIER_SLOT_HEAT_SHIFT);
}

/*
 * A replica left alone longer than its 6-bit epoch can count still decays
 * to nothing: the refresh keeps the epoch from wrapping.
 */
static void map_idle_replica_heat_never_wraps(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 slot;
	int i;

	slot = install(r, 1, 100, false);
	for (i = 0; i < 256; i++)
		hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, slot),
						 epoch(r)), 0U);
	/* One read since is one read, and it too decays to nothing. */
	lock = hottier_map_lock(&r->map, 1, &flags);
	KUNIT_EXPECT_EQ(test, __hottier_policy_hit(&r->p, slot),
			(u32)HOTTIER_HEAT_ONE);
	hottier_map_unlock(lock, flags);
	for (i = 0; i < 3 * 256 + 17; i++)
		hottier_policy_tick(&r->p);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, slot),
						 epoch(r)), 0U);
}

/* A record keeps 40 bits of extent, and heat saturates at 1023 reads. */
static void map_record_holds_40_bit_extents(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	struct hottier_mlock *lock;
	u64 big = HOTTIER_EXTENT_LIMIT - 1, extent;
	unsigned long flags;
	u32 slot, heat;
	int i;

	slot = install(r, big, 5000, false);
	install(r, big & U32_MAX, 1, false);	/* same low bits */
	lock = hottier_map_lock(&r->map, big, &flags);
	KUNIT_EXPECT_EQ(test, __hottier_map_find(&r->map, big), slot);
	for (i = 0; i < 10; i++)
		__hottier_policy_hit(&r->p, slot);
	hottier_map_unlock(lock, flags);
	KUNIT_EXPECT_EQ(test, hottier_mslot_extent(hottier_mslot(&r->map, slot)),
			big);
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map, slot),
						 epoch(r)),
			(u32)HOTTIER_SLOT_HEAT_MAX);
	KUNIT_EXPECT_EQ(test, hottier_heat_band(HOTTIER_SLOT_HEAT_MAX),
			HOTTIER_MAP_LEVELS - 1U);
	/* The colder one, with the same low 32 bits, is the victim. */
	hottier_policy_victim(&r->p, epoch(r), &heat, &extent, NULL);
	KUNIT_EXPECT_EQ(test, extent, big & U32_MAX);
}

/*
 * Victims in every level, aged many times round the ring: each victim
 * choice finds the coldest level with slots in it, and levels merge
 * without losing a slot.
 */
static void map_levels_ring_keeps_every_slot(struct kunit *test)
{
	struct rig *r = new_rig(test, 4096, 64);
	struct hottier_mlock *lock;
	unsigned int n = 0, visits;
	unsigned long flags;
	u32 i, slot, heat;
	u64 extent;

	for (i = 0; i < 4096; i++)
		install(r, i, 1U << (i % 11), i % 7 == 0);
	for (i = 0; i < 3 * HOTTIER_MAP_LEVELS; i++)
		hottier_policy_age(&r->p);
	for (;;) {
		slot = hottier_policy_victim(&r->p, epoch(r), &heat, &extent,
					     &visits);
		if (slot == HOTTIER_NIL)
			break;
		KUNIT_EXPECT_LE(test, visits,
				(unsigned int)HOTTIER_VICTIM_VISITS);
		KUNIT_EXPECT_NE(test, extent % 7, 0ULL);
		lock = hottier_map_lock(&r->map, extent, &flags);
		KUNIT_ASSERT_EQ(test, __hottier_map_find(&r->map, extent), slot);
		rig_remove(r, slot);
		hottier_map_unlock(lock, flags);
		hottier_map_put(&r->map, slot);
		n++;
	}
	/* Every unpinned replica came out, once. */
	KUNIT_EXPECT_EQ(test, n, 4096U - 4096U / 7 - 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->map.resident), 4096 / 7 + 1);
}

/*
 * Range operations at a million slots over an HDD of 64M extents: the walk
 * visits exactly the extents with a slot in the range, however long the
 * range (more than 64 extents a slot: map_range_walk_by_groups()).
 */
static void map_range_walk_visits_only_replicas_in_range(struct kunit *test)
{
	struct rig *r = new_rig(test, M1, 64);
	struct hottier_range_iter it;
	u64 extent, prev, n;
	u32 i;

	KUNIT_ASSERT_EQ(test, hottier_map_init_ranges(&r->map, 64ULL * M1), 0);
	KUNIT_EXPECT_LE(test, hottier_map_range_bytes(M1, 64ULL * M1),
			(u64)M1 * 8 * 65 / 64 + PAGE_SIZE);
	/* A replica every 61 extents from 0, and a copying slot at the end. */
	for (i = 0; i < M1 - 1; i++)
		install(r, (u64)i * 61, 1, false);
	{
		struct hottier_mlock *lock;
		unsigned long flags;
		u32 slot = hottier_map_alloc(&r->map);

		lock = hottier_map_lock(&r->map, 64ULL * M1 - 1, &flags);
		__hottier_map_insert(&r->map, slot, 64ULL * M1 - 1);
		hottier_map_unlock(lock, flags);
	}

	/* 32M extents hold 550073 replicas: that many visits, in order. */
	hottier_map_range_start(&r->map, &it, 1000, 1000 + 32ULL * M1 - 1);
	n = 0;
	prev = 0;
	while (hottier_map_range_next(&r->map, &it, &extent)) {
		KUNIT_ASSERT_EQ(test, extent % 61, 0ULL);
		KUNIT_ASSERT_GT(test, extent, prev);
		prev = extent;
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, (1000 + 32ULL * M1 - 1) / 61 - 1000 / 61);
	KUNIT_EXPECT_EQ(test, (u64)it.visits, n);

	/* A range with none: no visit. The copying slot is found. */
	hottier_map_range_start(&r->map, &it, 62, 121);
	KUNIT_EXPECT_FALSE(test, hottier_map_range_next(&r->map, &it, &extent));
	KUNIT_EXPECT_EQ(test, it.visits, 0UL);
	hottier_map_range_start(&r->map, &it, 61ULL * M1, U64_MAX - 1);
	KUNIT_EXPECT_TRUE(test, hottier_map_range_next(&r->map, &it, &extent));
	KUNIT_EXPECT_EQ(test, extent, 64ULL * M1 - 1);
	KUNIT_EXPECT_FALSE(test, hottier_map_range_next(&r->map, &it, &extent));

	/* Removed replicas leave the index. */
	for (i = 0; i < 100; i++) {
		struct hottier_mlock *lock;
		unsigned long flags;
		u32 slot;

		lock = hottier_map_lock(&r->map, (u64)i * 61, &flags);
		slot = __hottier_map_find(&r->map, (u64)i * 61);
		rig_remove(r, slot);
		hottier_map_unlock(lock, flags);
		hottier_map_put(&r->map, slot);
	}
	hottier_map_range_start(&r->map, &it, 0, 101 * 61);
	n = 0;
	while (hottier_map_range_next(&r->map, &it, &extent))
		n++;
	KUNIT_EXPECT_EQ(test, n, 2ULL);
}

/* The extents a walk of [first, last] yields, and how many hold a slot. */
static u64 walk(struct rig *r, struct hottier_range_iter *it, u64 first,
		u64 last, u64 *found)
{
	u64 extent, n = 0;

	*found = 0;
	hottier_map_range_start(&r->map, it, first, last);
	while (hottier_map_range_next(&r->map, it, &extent)) {
		if (extent < first || extent > last)
			return U64_MAX;
		if (resident(r, extent) != HOTTIER_NIL)
			(*found)++;
		n++;
	}
	return n;
}

/*
 * An HDD of 65 extents a slot: the index has a bit per group of 32 extents
 * (4 groups a slot) and a count each. A walk yields the extents of the
 * groups with a slot: at most 32 for each, however long the range.
 */
static void map_range_walk_by_groups(struct kunit *test)
{
	struct rig *r = new_rig(test, 1024, 64);
	struct hottier_range_iter it;
	u64 n, found;
	u32 i;

	KUNIT_ASSERT_EQ(test, hottier_map_init_ranges(&r->map, 65 * 1024), 0);
	KUNIT_EXPECT_EQ(test, r->map.rshift, 5U);
	/* 2080 groups: their bits and counts, each in a page. */
	KUNIT_EXPECT_EQ(test, hottier_map_range_bytes(1024, 65 * 1024),
			(u64)PAGE_SIZE + PAGE_ALIGN(2080 * 2));
	for (i = 0; i < 1024; i++)
		install(r, (u64)i * 65, 1, false);

	/* Short: replicas 0 and 65, in groups 0 and 2; group 1 is skipped. */
	n = walk(r, &it, 0, 99, &found);
	KUNIT_EXPECT_EQ(test, found, 2ULL);
	KUNIT_EXPECT_EQ(test, n, 64ULL);
	KUNIT_EXPECT_EQ(test, (u64)it.visits, n);

	/* Long: every replica, 32 visits or fewer each. */
	n = walk(r, &it, 65, 65 * 1024, &found);
	KUNIT_EXPECT_EQ(test, found, 1023ULL);
	KUNIT_EXPECT_LE(test, n, 32ULL * 1023);

	/* Drop all but 10 replicas: the whole HDD costs 32 visits each. */
	for (i = 0; i < 1024; i++) {
		struct hottier_mlock *lock;
		unsigned long flags;
		u32 slot;

		if (i % 100 == 7)
			continue;
		lock = hottier_map_lock(&r->map, (u64)i * 65, &flags);
		slot = __hottier_map_find(&r->map, (u64)i * 65);
		rig_remove(r, slot);
		hottier_map_unlock(lock, flags);
		hottier_map_put(&r->map, slot);
	}
	n = walk(r, &it, 0, 65 * 1024 - 1, &found);
	KUNIT_EXPECT_EQ(test, found, 11ULL);
	KUNIT_EXPECT_LE(test, n, 32ULL * 11);
	/* Replicas left: 7, 107, ..., 1007 (11); none between 8 and 106. */
	n = walk(r, &it, 8 * 65, 106 * 65, &found);
	KUNIT_EXPECT_EQ(test, found, 0ULL);
	KUNIT_EXPECT_EQ(test, n, 0ULL);
}

/*
 * A group would be more than 1 << HOTTIER_RANGE_SHIFT_MAX extents: no
 * index; a short range visits every extent, a long one every slot.
 */
static void map_range_walk_without_index(struct kunit *test)
{
	u64 nr_extents = 1024ULL * HOTTIER_RANGE_GROUPS_PER_SLOT *
			 BIT(HOTTIER_RANGE_SHIFT_MAX) + 1;
	struct rig *r = new_rig(test, 1024, 64);
	struct hottier_range_iter it;
	u64 n, found;
	u32 i;

	KUNIT_ASSERT_EQ(test, hottier_map_init_ranges(&r->map, nr_extents), 0);
	KUNIT_EXPECT_EQ(test, hottier_map_range_bytes(1024, nr_extents), 0ULL);
	KUNIT_EXPECT_NE(test, hottier_map_range_bytes(1024, nr_extents - 1),
			0ULL);
	for (i = 0; i < 1024; i++)
		install(r, (u64)i * 65, 1, false);
	/* Short: every extent. */
	n = walk(r, &it, 0, 99, &found);
	KUNIT_EXPECT_EQ(test, n, 100ULL);
	KUNIT_EXPECT_EQ(test, found, 2ULL);
	/* Long: every slot, yielding those in range. */
	n = walk(r, &it, 65, 65 * 1024, &found);
	KUNIT_EXPECT_EQ(test, n, 1023ULL);
	KUNIT_EXPECT_EQ(test, found, 1023ULL);
	KUNIT_EXPECT_EQ(test, it.visits, 1024UL);
}

/*
 * A million slots, 99% pinned, the rest at every heat: a victim choice
 * visits at most HOTTIER_VICTIM_VISITS slots. Then the worst case: every
 * unpinned replica was read since it was queued, so each visit moves one
 * up; the search still stops at the bound and returns the coldest seen.
 */
static void map_victim_visits_at_most_64_at_1m_slots(struct kunit *test)
{
	struct rig *r = new_rig(test, M1, 64);
	unsigned int visits, worst = 0;
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 i, slot, heat;
	u64 extent;

	for (i = 0; i < M1; i++)
		install(r, i, i % 5000, i % 100 != 0);
	KUNIT_EXPECT_EQ(test, r->p.levels.nr_pinned, M1 - M1 / 100 - 1);
	for (i = 0; i < 1000; i++) {
		slot = hottier_policy_victim(&r->p, epoch(r), &heat, &extent,
					     &visits);
		KUNIT_ASSERT_NE(test, slot, HOTTIER_NIL);
		KUNIT_EXPECT_EQ(test, extent % 100, 0ULL);
		worst = max(worst, visits);
		lock = hottier_map_lock(&r->map, extent, &flags);
		rig_remove(r, slot);
		hottier_map_unlock(lock, flags);
		hottier_map_put(&r->map, slot);
		install(r, extent, 0, false);	/* back, cold */
	}
	KUNIT_EXPECT_LE(test, worst, (unsigned int)HOTTIER_VICTIM_VISITS);

	/* All unpinned replicas queued cold, then read: all misplaced. */
	for (i = 0; i < M1; i += 100) {
		lock = hottier_map_lock(&r->map, i, &flags);
		slot = __hottier_map_find(&r->map, i);
		__hottier_policy_hit(&r->p, slot);
		__hottier_policy_hit(&r->p, slot);
		hottier_map_unlock(lock, flags);
	}
	slot = hottier_policy_victim(&r->p, epoch(r), &heat, &extent, &visits);
	KUNIT_EXPECT_NE(test, slot, HOTTIER_NIL);
	KUNIT_EXPECT_EQ(test, visits, (unsigned int)HOTTIER_VICTIM_VISITS);
	KUNIT_EXPECT_EQ(test, heat, 2 * HOTTIER_HEAT_ONE);
}

/* The promotion loop */

/*
 * Warm-up: with slots free, the second read of an extent promotes it (half
 * the threshold of 4).
 */
static void loop_promotes_at_the_threshold(struct kunit *test)
{
	struct rig *r = new_rig(test, 16, 64);

	reads(r, 5, 1);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 0ULL);
	reads(r, 5, 1);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 1ULL);
	KUNIT_EXPECT_NE(test, resident(r, 5), HOTTIER_NIL);
	/* Its heat came along: it is in the slot, not the heat table. */
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map,
							       resident(r, 5)),
						 epoch(r)),
			2 * HOTTIER_HEAT_ONE);
	KUNIT_EXPECT_TRUE(test, rig_read(r, 5, false));
}

/*
 * The lower bar lasts while slots are free: a candidate queued at half the
 * threshold that finds the SSD full is not copied, and stays on the HDD
 * until it is hotter than the coldest replica by the threshold.
 */
static void loop_half_bar_ends_when_the_ssd_fills(struct kunit *test)
{
	struct rig *r = new_rig(test, 2, 64);

	reads(r, 1, 2);
	reads(r, 2, 2);
	reads(r, 3, 2);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 2ULL);
	KUNIT_EXPECT_EQ(test, resident(r, 3), HOTTIER_NIL);
	reads(r, 3, 3);			/* 5 < 2 + 4 */
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->evictions, 0ULL);
	KUNIT_EXPECT_EQ(test, resident(r, 3), HOTTIER_NIL);
	reads(r, 3, 1);			/* 6 >= 2 + 4 */
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->evictions, 1ULL);
	KUNIT_EXPECT_NE(test, resident(r, 3), HOTTIER_NIL);
}

/*
 * A full SSD: an extent as hot as the replicas never evicts one (the
 * margin of one threshold); one that leads by the margin evicts exactly
 * one, the coldest, and takes its slot.
 */
static void loop_evicts_only_past_the_margin(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u64 e;

	for (e = 0; e < 8; e++)
		reads(r, e, 4 + e);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->promotions, 8ULL);
	reads(r, 100, 7);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->evictions, 0ULL);
	KUNIT_EXPECT_EQ(test, resident(r, 100), HOTTIER_NIL);
	reads(r, 100, 1);		/* 8 >= 4 + 4: extent 0's margin */
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->evictions, 1ULL);
	KUNIT_EXPECT_NE(test, resident(r, 100), HOTTIER_NIL);
	KUNIT_EXPECT_EQ(test, resident(r, 0), HOTTIER_NIL);
	for (e = 1; e < 8; e++)
		KUNIT_EXPECT_NE(test, resident(r, e), HOTTIER_NIL);
}

/*
 * Pins: a pinned range is copied with no reads, evicting what it must,
 * and never evicted by hotter extents; unpinned, it may go.
 */
static void loop_pins_hold_against_hotter_extents(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	u64 e;

	for (e = 0; e < 8; e++)
		reads(r, e, 4);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, hottier_policy_pin(&r->p, 50, 53, GFP_KERNEL),
			0);
	rig_work(r);
	for (e = 50; e <= 53; e++)
		KUNIT_EXPECT_NE(test, resident(r, e), HOTTIER_NIL);
	KUNIT_EXPECT_EQ(test, r->evictions, 4ULL);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_pinned(&r->p), 4ULL);

	for (e = 200; e < 240; e++)
		reads(r, e, 40);
	rig_work(r);
	for (e = 50; e <= 53; e++)
		KUNIT_EXPECT_NE(test, resident(r, e), HOTTIER_NIL);

	/* Refused: pins past the slots; changes nothing. */
	KUNIT_EXPECT_EQ(test, hottier_policy_pin(&r->p, 60, 64, GFP_KERNEL),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_pinned(&r->p), 4ULL);
	/* Overlaps count once: 50-53 pinned, 52-55 adds two. */
	KUNIT_EXPECT_EQ(test, hottier_policy_pin(&r->p, 52, 55, GFP_KERNEL),
			0);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_pinned(&r->p), 6ULL);
	KUNIT_EXPECT_EQ(test, hottier_policy_unpin(&r->p, 51, 54, GFP_KERNEL),
			0);
	KUNIT_EXPECT_EQ(test, hottier_policy_nr_pinned(&r->p), 2ULL);
	KUNIT_EXPECT_TRUE(test, hottier_policy_pinned(&r->p, 50));
	KUNIT_EXPECT_FALSE(test, hottier_policy_pinned(&r->p, 52));
	KUNIT_EXPECT_TRUE(test, hottier_policy_pinned(&r->p, 55));
}

/*
 * The pinned ranges a pin or an unpin would leave, counted before it
 * changes anything (the on-SSD map's room check): a pin merges what it
 * touches, an unpin splits the range it falls inside.
 */
static void pin_ranges_after_counts_merges_and_splits(struct kunit *test)
{
	struct rig *r = new_rig(test, 64, 64);
	struct hottier_policy *p = &r->p;

	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 5, 5, true),
			1U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 5, 5, false),
			0U);
	KUNIT_ASSERT_EQ(test, hottier_policy_pin(p, 10, 19, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, hottier_policy_pin(p, 30, 39, GFP_KERNEL), 0);
	/* Pins: apart, adjacent on both sides, overlapping, bridging. */
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 0, 8, true),
			3U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 0, 9, true),
			2U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 40, 45, true),
			2U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 15, 25, true),
			2U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 20, 29, true),
			1U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 0, 99, true),
			1U);
	/* Unpins: inside one (a split), an end, a whole one, both, none. */
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 12, 14, false),
			3U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 10, 14, false),
			2U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 5, 19, false),
			1U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 15, 35, false),
			2U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 0, 99, false),
			0U);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges_after(p, 20, 29, false),
			2U);
	/* Nothing changed, and each count is what the change then makes. */
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges(p, NULL, NULL, 0, true),
			2U);
	KUNIT_ASSERT_EQ(test, hottier_policy_unpin(p, 12, 14, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges(p, NULL, NULL, 0, true),
			3U);
	KUNIT_ASSERT_EQ(test, hottier_policy_pin(p, 15, 31, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, hottier_policy_pin_ranges(p, NULL, NULL, 0, true),
			2U);
}

/*
 * A pin undone before its copies ran: the worker goes through its request
 * and finds nothing pinned, and that leaves no trace (every extent it
 * looked at is free for later work: a leak here once stopped promotions).
 */
static void loop_unpinned_before_copy_leaves_nothing(struct kunit *test)
{
	struct rig *r = new_rig(test, 256, 256);
	struct hottier_work w;

	KUNIT_ASSERT_EQ(test, hottier_policy_pin(&r->p, 0, 199, GFP_KERNEL),
			0);
	KUNIT_ASSERT_EQ(test, hottier_policy_unpin(&r->p, 0, 199, GFP_KERNEL),
			0);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 0ULL);
	KUNIT_EXPECT_EQ(test, r->p.nr_pending, 0U);
	reads(r, 500, 4);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 1ULL);
	KUNIT_EXPECT_NE(test, resident(r, 500), HOTTIER_NIL);
	/* A work item out holds its extent until started or cancelled. */
	reads(r, 600, 4);
	KUNIT_ASSERT_EQ(test, hottier_policy_next(&r->p, &w), 0);
	KUNIT_EXPECT_EQ(test, r->p.nr_pending, 1U);
	hottier_policy_cancel(&r->p, &w);
	KUNIT_EXPECT_EQ(test, r->p.nr_pending, 0U);
}

/*
 * Ghosts: an evicted extent keeps its heat in the heat table, so one more
 * read makes it a candidate again; a cold newcomer needs all four.
 */
static void loop_evicted_extent_returns_early(struct kunit *test)
{
	struct rig *r = new_rig(test, 4, 64);
	u64 e;

	for (e = 0; e < 4; e++)
		reads(r, e, 6);
	rig_work(r);
	reads(r, 100, 10);		/* evicts one of 0-3, heat 6 */
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->evictions, 1ULL);
	for (e = 0; e < 4 && resident(r, e) != HOTTIER_NIL; e++)
		;
	KUNIT_ASSERT_LT(test, e, 4ULL);
	/* Its six reads of heat are remembered: read once, it is back. */
	reads(r, e, 1);
	KUNIT_EXPECT_EQ(test, kfifo_len(&r->p.cand), 1U);
	reads(r, 500, 1);
	KUNIT_EXPECT_EQ(test, kfifo_len(&r->p.cand), 1U);
}

/* Pin @extent's replica, as a pin message does. */
static void rig_pin(struct rig *r, u64 extent)
{
	u32 slot = resident(r, extent);		/* takes the lock */
	struct hottier_mlock *lock;
	unsigned long flags;

	lock = hottier_map_lock(&r->map, extent, &flags);
	__hottier_policy_set_pinned(&r->p, slot, true);
	hottier_map_unlock(lock, flags);
}

/*
 * The policy only decides: a work item that evicts leaves its victim
 * resident in the map, for the replica core to take out. A victim that
 * changed meanwhile (pinned here) is left where it is, the work item is
 * void, and its candidate keeps its heat: one more read brings it back.
 */
static void loop_an_eviction_is_carried_out_by_the_caller(struct kunit *test)
{
	struct rig *r = new_rig(test, 2, 64);
	struct hottier_work w;
	u32 slot;

	reads(r, 0, 6);
	reads(r, 1, 7);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->promotions, 2ULL);

	/* Extent 0 (6 reads) is to give way to 100 (10 reads). */
	reads(r, 100, 10);
	KUNIT_ASSERT_EQ(test, hottier_policy_next(&r->p, &w), 0);
	KUNIT_ASSERT_TRUE(test, w.evict);
	KUNIT_EXPECT_EQ(test, w.victim, 0ULL);
	slot = resident(r, 0);
	KUNIT_EXPECT_EQ(test, slot, w.slot);
	KUNIT_EXPECT_EQ(test, r->p.nr_pending, 1U);

	/* Pinned before the core evicts it: it stays, the item is void. */
	rig_pin(r, 0);
	KUNIT_EXPECT_FALSE(test, rig_evict(r, &w));
	KUNIT_EXPECT_EQ(test, resident(r, 0), slot);
	KUNIT_EXPECT_EQ(test, r->p.nr_pending, 0U);
	KUNIT_EXPECT_EQ(test, resident(r, 100), HOTTIER_NIL);

	/* 100 kept its heat: read once, it takes extent 1's slot. */
	reads(r, 100, 1);
	KUNIT_ASSERT_EQ(test, hottier_policy_next(&r->p, &w), 0);
	KUNIT_ASSERT_TRUE(test, w.evict);
	KUNIT_EXPECT_EQ(test, w.extent, 100ULL);
	KUNIT_EXPECT_EQ(test, w.victim, 1ULL);
	KUNIT_EXPECT_NE(test, resident(r, 1), HOTTIER_NIL);
	KUNIT_ASSERT_TRUE(test, rig_evict(r, &w));
	KUNIT_EXPECT_EQ(test, resident(r, 1), HOTTIER_NIL);
	rig_start(r, &w);
	rig_done(r, &w, true);
	KUNIT_EXPECT_EQ(test, resident(r, 100), w.slot);
	KUNIT_EXPECT_EQ(test, resident(r, 0), slot);
}

/* Two drops under one lock: it holds until both are written. */
static void map_dropping_counts_per_lock(struct kunit *test)
{
	struct rig *r = new_rig(test, 4, 64);
	struct hottier_mlock *a, *b;
	unsigned long flags;

	a = &r->map.locks[3];
	b = &r->map.locks[HOTTIER_MAP_LOCKS - 1];
	spin_lock_irqsave(&a->lock, flags);
	__hottier_map_dropping(&r->map, a);
	__hottier_map_dropping(&r->map, a);
	spin_unlock_irqrestore(&a->lock, flags);
	spin_lock_irqsave(&b->lock, flags);
	__hottier_map_dropping(&r->map, b);
	spin_unlock_irqrestore(&b->lock, flags);
	KUNIT_EXPECT_TRUE(test, hottier_map_any_dropping(&r->map));
	spin_lock_irqsave(&a->lock, flags);
	KUNIT_EXPECT_FALSE(test, __hottier_map_dropped(&r->map, a));
	KUNIT_EXPECT_TRUE(test, __hottier_map_dropped(&r->map, a));
	spin_unlock_irqrestore(&a->lock, flags);
	/* The last lock still counts one. */
	KUNIT_EXPECT_TRUE(test, hottier_map_any_dropping(&r->map));
	spin_lock_irqsave(&b->lock, flags);
	KUNIT_EXPECT_TRUE(test, __hottier_map_dropped(&r->map, b));
	spin_unlock_irqrestore(&b->lock, flags);
	KUNIT_EXPECT_FALSE(test, hottier_map_any_dropping(&r->map));
}

/* Reads of @first..@first + @n - 1, @per each, round after round. */
static void reads_round(struct rig *r, u64 first, u64 n, unsigned int per)
{
	unsigned int k;
	u64 e;

	for (k = 0; k < per; k++)
		for (e = first; e < first + n; e++)
			rig_read(r, e, false);
}

/*
 * A new hot set, @first..@first + @n - 1, read twice an epoch: the epoch
 * at which all of it has a replica (0: not in 12 epochs), and in
 * *@early the evictions by the end of the first.
 */
static unsigned int epochs_to_take(struct rig *r, u64 first, u64 n,
				   u64 *early)
{
	unsigned int ep;
	u64 e;

	*early = 0;
	for (ep = 1; ep <= 12; ep++) {
		hottier_policy_tick(&r->p);
		reads_round(r, first, n, 2);
		rig_work(r);
		if (ep == 1)
			*early = r->evictions;
		for (e = first; e < first + n && resident(r, e) != HOTTIER_NIL;
		     e++)
			;
		if (e == first + n)
			return ep;
	}
	return 0;
}

/*
 * Set A (0-7) takes the 8 slots of a rig with @tracked heat entries, then
 * @warm extents (200 on) are read 10 times each and no more, then set B
 * (100-107) is read twice an epoch: B holds every slot at the second
 * epoch, none of it evicted in the first, and A has none left.
 */
static void moved_hot_set(struct kunit *test, u64 tracked, u64 warm)
{
	struct rig *r = new_rig(test, 8, tracked);
	u64 e, early;

	reads_round(r, 0, 8, 40);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->promotions, 8ULL);
	reads_round(r, 200, warm, 10);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->promotions, 8ULL);
	KUNIT_EXPECT_EQ(test, epochs_to_take(r, 100, 8, &early), 2U);
	KUNIT_EXPECT_EQ(test, early, 0ULL);
	KUNIT_EXPECT_EQ(test, r->evictions, 8ULL);
	for (e = 0; e < 8; e++)
		KUNIT_EXPECT_EQ(test, resident(r, e), HOTTIER_NIL);
}

/*
 * A hot set that moves: the SSD holds set A, read 40 times; then A is no
 * longer read and set B is, twice an epoch. B's heat builds slowly and
 * A's decays slowly (a half-life is four epochs): on heat alone, B would
 * need 11 epochs to lead A by the threshold. A's worth is quartered for
 * every epoch past the first it goes unread (the epoch rule alone: B
 * takes the SSD at the fourth, 6.3 reads against A's 0.3 and the
 * threshold). A was read 40 times in an epoch, a rate of 6.9 reads an
 * epoch by its heat: at the second, the rate rule says it missed 6 reads
 * in the whole epoch since, 4 past the grace, and cuts its worth of 6.5
 * reads to 0.4, so B's 3.7 reads need only the free-slot bar (2). At the
 * first, A is in its grace epoch and keeps its heat: no eviction.
 */
static void loop_moved_hot_set_takes_over(struct kunit *test)
{
	moved_hot_set(test, 64, 0);
}

/*
 * The same move with a heat table of one set, full of the warm extents the
 * old hot set leaves behind (read 10 times each, no longer read). Were
 * entries recycled by heat, the new set would enter at one read each and
 * recycle one another while the warm heat decays, and take no slot in 12
 * epochs; an entry unread for an epoch is worth a quarter of its heat, so
 * the new set holds its ways from the second epoch and takes the SSD then,
 * as without the warm set.
 */
static void loop_moved_hot_set_takes_the_table(struct kunit *test)
{
	moved_hot_set(test, 16, 16);
}

/*
 * Worth never swaps a set that is still read: replicas and candidates
 * read alike, every epoch, for many half-lives, evict nothing.
 */
static void loop_replicas_still_read_keep_their_slots(struct kunit *test)
{
	struct rig *r = new_rig(test, 8, 64);
	unsigned int ep;

	reads_round(r, 0, 8, 4);
	rig_work(r);
	KUNIT_ASSERT_EQ(test, r->promotions, 8ULL);
	for (ep = 0; ep < 40; ep++) {
		hottier_policy_tick(&r->p);
		reads_round(r, 0, 8, 2);
		reads_round(r, 100, 8, 2);
		rig_work(r);
	}
	KUNIT_EXPECT_EQ(test, r->evictions, 0ULL);
	KUNIT_EXPECT_EQ(test, r->promotions, 8ULL);
}

/*
 * Reads that heat nothing (a stream's reads inside an extent it already
 * heated, hottier_seq_read()) promote nothing, however many.
 */
static void loop_scans_promote_nothing(struct kunit *test)
{
	struct rig *r = new_rig(test, 16, 64);
	u64 e;
	int pass;

	reads(r, 3, 4);
	rig_work(r);
	for (pass = 0; pass < 10; pass++)
		for (e = 0; e < 1000; e++)
			rig_read(r, e, true);
	rig_work(r);
	KUNIT_EXPECT_EQ(test, r->promotions, 1ULL);
	/* Nor does it heat the replica it passes over. */
	KUNIT_EXPECT_EQ(test, hottier_mslot_heat(hottier_mslot(&r->map,
							       resident(r, 3)),
						 epoch(r)),
			4 * HOTTIER_HEAT_ONE);
}

/*
 * Requests are ranges: a promote of 1000 extents while the candidate
 * queue is full of read candidates loses none of them.
 */
static void loop_requests_survive_a_full_queue(struct kunit *test)
{
	struct rig *r = new_rig(test, 2048, 4096);
	u64 e, missing = 0;

	for (e = 10000; e < 10000 + 2 * HOTTIER_NR_CANDIDATES; e++)
		reads(r, e, 4);
	KUNIT_EXPECT_TRUE(test, kfifo_is_full(&r->p.cand));
	KUNIT_ASSERT_EQ(test, hottier_policy_promote_range(&r->p, 0, 999,
							   GFP_KERNEL), 0);
	rig_work(r);
	for (e = 0; e < 1000; e++)
		missing += resident(r, e) == HOTTIER_NIL;
	KUNIT_EXPECT_EQ(test, missing, 0ULL);
	KUNIT_EXPECT_EQ(test, r->promotions, 1000ULL + HOTTIER_NR_CANDIDATES);
}

/*
 * A full SSD of a million slots and promote_threshold 1: every miss
 * promotes by evicting, and no victim choice visits more than 64 slots.
 */
static void loop_evictions_at_1m_slots_stay_bounded(struct kunit *test)
{
	struct rig *r = new_rig(test, M1, M1);
	u64 e;

	hottier_policy_set_threshold(&r->p, 1);
	for (e = 0; e < M1; e++) {
		reads(r, e, 1);
		if (!(e % HOTTIER_NR_CANDIDATES))
			rig_work(r);
	}
	rig_work(r);
	KUNIT_ASSERT_EQ(test, atomic_read(&r->map.resident), (int)M1);
	for (e = M1; e < M1 + 20000; e++) {
		reads(r, e, 3);
		if (!(e % 64))
			rig_work(r);
	}
	rig_work(r);
	KUNIT_EXPECT_GE(test, r->evictions, 19000ULL);
	KUNIT_EXPECT_LE(test, r->max_visits,
			(unsigned int)HOTTIER_VICTIM_VISITS);
}

static struct kunit_case hottier_map_cases[] = {
	KUNIT_CASE(map_costs_22_bytes_a_slot_and_its_index),
	KUNIT_CASE(map_hands_out_every_slot_once),
	KUNIT_CASE(map_restore_puts_replicas_back_in_their_slots),
	KUNIT_CASE(map_index_finds_and_removes_along_chains),
	KUNIT_CASE(map_slot_frees_after_its_last_io),
	KUNIT_CASE(map_record_bits_live_until_the_slot_is_reused),
	KUNIT_CASE(map_victim_is_coldest_and_follows_hits),
	KUNIT_CASE(map_levels_move_down_with_each_half_life),
	KUNIT_CASE(map_idle_replica_is_worth_less),
	KUNIT_CASE(map_rate_rule_cuts_a_replica_whose_reads_stopped),
	KUNIT_CASE(map_turnover_cuts_replicas_unread_since_it_began),
	KUNIT_CASE(map_turnover_restarts_heat_at_a_replicas_first_read),
	KUNIT_CASE(map_idle_replica_heat_never_wraps),
	KUNIT_CASE(map_record_holds_40_bit_extents),
	KUNIT_CASE(map_levels_ring_keeps_every_slot),
	KUNIT_CASE_SLOW(map_range_walk_visits_only_replicas_in_range),
	KUNIT_CASE(map_range_walk_by_groups),
	KUNIT_CASE(map_range_walk_without_index),
	KUNIT_CASE_SLOW(map_victim_visits_at_most_64_at_1m_slots),
	KUNIT_CASE(map_dropping_counts_per_lock),
	{}
};

static struct kunit_suite hottier_map_suite = {
	.name = "dm-hottier-map",
	.test_cases = hottier_map_cases,
};

static struct kunit_case hottier_loop_cases[] = {
	KUNIT_CASE(loop_promotes_at_the_threshold),
	KUNIT_CASE(loop_half_bar_ends_when_the_ssd_fills),
	KUNIT_CASE(loop_evicts_only_past_the_margin),
	KUNIT_CASE(loop_pins_hold_against_hotter_extents),
	KUNIT_CASE(pin_ranges_after_counts_merges_and_splits),
	KUNIT_CASE(loop_unpinned_before_copy_leaves_nothing),
	KUNIT_CASE(loop_evicted_extent_returns_early),
	KUNIT_CASE(loop_an_eviction_is_carried_out_by_the_caller),
	KUNIT_CASE(loop_moved_hot_set_takes_over),
	KUNIT_CASE(loop_moved_hot_set_takes_the_table),
	KUNIT_CASE(loop_replicas_still_read_keep_their_slots),
	KUNIT_CASE(loop_scans_promote_nothing),
	KUNIT_CASE(loop_requests_survive_a_full_queue),
	KUNIT_CASE_SLOW(loop_evictions_at_1m_slots_stay_bounded),
	{}
};

static struct kunit_suite hottier_loop_suite = {
	.name = "dm-hottier-promotion-loop",
	.test_cases = hottier_loop_cases,
};

kunit_test_suites(&hottier_map_suite, &hottier_loop_suite);
