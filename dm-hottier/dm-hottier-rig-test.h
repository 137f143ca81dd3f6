/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The KUnit tests' rig for dm-hottier: a map and a policy, and the replica
 * core's part around them (reads, installs, removals, work items carried
 * out) as dm-hottier-io.c and dm-hottier-core.c do it. Shared by the map's
 * and the policy's tests.
 */
#ifndef DM_HOTTIER_RIG_TEST_H
#define DM_HOTTIER_RIG_TEST_H

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

static inline int rig_init(struct kunit_resource *res, void *context)
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

static inline void rig_free(struct kunit_resource *res)
{
	struct rig *r = res->data;

	hottier_policy_exit(&r->p);
	hottier_map_exit(&r->map);
	vfree(r);
}

static inline struct rig *new_rig(struct kunit *test, u32 slots, u64 tracked)
{
	struct rig_size size = { .slots = slots, .tracked = tracked };
	struct rig *r;

	r = kunit_alloc_resource(test, rig_init, rig_free, GFP_KERNEL, &size);
	KUNIT_ASSERT_NOT_NULL(test, r);
	return r;
}

static inline u16 epoch(struct rig *r)
{
	return hottier_policy_epoch(&r->p);
}

/* The slot of @extent's replica, or HOTTIER_NIL. */
static inline u32 resident(struct rig *r, u64 extent)
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
static inline bool rig_read(struct rig *r, u64 extent, bool scan)
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

static inline void reads(struct rig *r, u64 extent, unsigned int n)
{
	while (n--)
		rig_read(r, extent, false);
}

/*
 * A replica installed, or removed, under its bucket lock as the replica
 * core does it: the map's part, and the policy files it on the levels.
 */
static inline void rig_install(struct rig *r, u32 slot, u32 heat, u16 at)
{
	__hottier_map_install(&r->map, slot, heat, at);
	__hottier_policy_installed(&r->p, slot);
}

static inline void rig_remove(struct rig *r, u32 slot)
{
	__hottier_policy_removing(&r->p, slot);
	__hottier_map_remove(&r->map, slot);
}

/*
 * The replica core's part of a work item, as dm-hottier-core.c does it
 * (hottier_replica_evict(), _start() and _done()): the eviction it asks
 * for, if its victim still may go; the copy's start and end.
 */
static inline bool rig_evict(struct rig *r, struct hottier_work *w)
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

static inline void rig_start(struct rig *r, struct hottier_work *w)
{
	struct hottier_mlock *lock;
	unsigned long flags;

	lock = hottier_map_lock(&r->map, w->extent, &flags);
	__hottier_map_insert(&r->map, w->slot, w->extent);
	hottier_map_unlock(lock, flags);
	hottier_policy_start(&r->p, w);
}

static inline void rig_done(struct rig *r, struct hottier_work *w, bool ok)
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
static inline void rig_work(struct rig *r)
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

static inline u32 install(struct rig *r, u64 extent, u32 reads_of_heat, bool pin)
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

#endif /* DM_HOTTIER_RIG_TEST_H */
