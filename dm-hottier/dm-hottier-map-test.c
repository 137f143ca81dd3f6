// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for dm-hottier's map: slots, their references and records,
 * the extent index, restore, and the range index. The victim levels and
 * the promotion loop are the policy's (dm-hottier-policy-test.c).
 */
#include "dm-hottier-rig-test.h"

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
			HOTTIER_LEVELS * (u64)M1 / 8 * 65 / 64 + 4096);
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
			HOTTIER_LEVELS - 1U);
	/* The colder one, with the same low 32 bits, is the victim. */
	hottier_policy_victim(&r->p, epoch(r), &heat, &extent, NULL);
	KUNIT_EXPECT_EQ(test, extent, big & U32_MAX);
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

static struct kunit_case hottier_map_cases[] = {
	KUNIT_CASE(map_costs_22_bytes_a_slot_and_its_index),
	KUNIT_CASE(map_hands_out_every_slot_once),
	KUNIT_CASE(map_restore_puts_replicas_back_in_their_slots),
	KUNIT_CASE(map_index_finds_and_removes_along_chains),
	KUNIT_CASE(map_slot_frees_after_its_last_io),
	KUNIT_CASE(map_record_bits_live_until_the_slot_is_reused),
	KUNIT_CASE(map_record_holds_40_bit_extents),
	KUNIT_CASE_SLOW(map_range_walk_visits_only_replicas_in_range),
	KUNIT_CASE(map_range_walk_by_groups),
	KUNIT_CASE(map_range_walk_without_index),
	KUNIT_CASE(map_dropping_counts_per_lock),
	{}
};

static struct kunit_suite hottier_map_suite = {
	.name = "dm-hottier-map",
	.test_cases = hottier_map_cases,
};

kunit_test_suites(&hottier_map_suite);
