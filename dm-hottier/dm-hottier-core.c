// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: the replica core, between the pure core (policy, map, heat,
 * route, args, meta) and its clients (persist, migrate, scrub), which the
 * data path and the administrator's side sit on. It holds the slots'
 * references, carries out the policy's work items (an eviction, a copy's
 * start and end), removes replicas (the drops of a message, a
 * write-around, a discard or an error) and does the in-memory
 * bookkeeping the on-SSD map needs of them (a record marked for
 * invalidation, a replica to record), degrades the device on SSD
 * errors, and reads the statistics. It calls
 * nothing above it: the records' I/O is persist's, run from the work
 * items it queues.
 */
#include "dm-hottier.h"

/* Slots */

void hottier_slot_get(struct hottier *ht, u32 slot)
{
	hottier_map_get(&ht->map, slot);
}

/*
 * Drop an I/O's (or a replica's) reference. A slot evicted for a copy
 * waits for its I/O to drain: the put that leaves only the reservation
 * wakes the worker, as does the one that frees the slot.
 */
void hottier_slot_put(struct hottier *ht, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(&ht->map, slot);

	if (hottier_map_put(&ht->map, slot) ||
	    (atomic_read(&s->refs) == 1 &&
	     hottier_mslot_state(s) == HOTTIER_S_RESERVED))
		kick_promote(ht, 0);
}

/* Records: what the on-SSD map must write (dm-hottier-persist.c) */

/* A commit in HOTTIER_COMMIT_MS, if records are kept and I/O flows. */
void hottier_rec_kick_commit(struct hottier *ht)
{
	if (READ_ONCE(ht->records_live) && READ_ONCE(ht->running))
		queue_delayed_work(ht->wq, &ht->commit_work,
				   msecs_to_jiffies(HOTTIER_COMMIT_MS));
}

/* A replica to record at a commit: written through (its sector). */
void hottier_rec_mark_dirty(struct hottier *ht, u32 slot)
{
	if (!READ_ONCE(ht->records_live))
		return;
	set_bit(rec_unit(ht, slot), ht->rec_dirty);
	hottier_rec_kick_commit(ht);
}

static void mark_inval(struct hottier *ht, u32 slot)
{
	set_bit(rec_unit(ht, slot), ht->rec_inval);
}

/*
 * Under @lock, just after __hottier_map_remove() of @slot's replica: if it
 * is recorded, its record is marked for invalidation, and until that is
 * written (dropped()) a write to an extent of @lock that finds no replica
 * waits for an invalidation too (map_write(), map_range()), as the write
 * that dropped it does: the HDD must not change while the SSD may still
 * hold a valid record of the extent, or a crash in between brings back a
 * stale replica. Such a write is sent by a run of the invalidation worker
 * that began after it was queued, which writes every record marked
 * before: this one, marked under @lock before the count it saw. True if
 * it is recorded: then hottier_rec_drop() (or, for an eviction,
 * hottier_persist_evicted()) follows. __hottier_replica_remove() is
 * both steps.
 */
bool __hottier_rec_dropping(struct hottier *ht, struct hottier_mlock *lock,
			    u32 slot)
{
	if (!hottier_recorded(ht, hottier_mslot(&ht->map, slot)))
		return false;
	mark_inval(ht, slot);
	__hottier_map_dropping(&ht->map, lock);
	return true;
}

/*
 * A recorded replica was dropped (__hottier_map_remove() and
 * __hottier_rec_dropping()) and its reference is the caller's: its
 * slot goes back only after the invalidation (I/O that dropped it must
 * wait for it too: hottier_rec_defer()).
 */
void hottier_rec_drop(struct hottier *ht, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(&ht->map, slot);
	unsigned long flags;

	spin_lock_irqsave(&ht->inval_lock, flags);
	s->hnext = ht->inval_slots;
	ht->inval_slots = slot;
	spin_unlock_irqrestore(&ht->inval_lock, flags);
	queue_work(ht->wq, &ht->inval_work);
}

/*
 * @bio waits for the invalidations asked for before it; with @slot (not
 * HOTTIER_NIL) for that slot's record too: a recorded replica about to be
 * written through, which the caller unrecorded under its bucket lock.
 */
void hottier_rec_defer(struct hottier *ht, struct bio *bio, u32 slot)
{
	unsigned long flags;

	if (slot != HOTTIER_NIL) {
		mark_inval(ht, slot);
		/* Recorded again once writes leave it alone. */
		hottier_rec_mark_dirty(ht, slot);
	}
	spin_lock_irqsave(&ht->inval_lock, flags);
	bio_list_add(&ht->inval_bios, bio);
	spin_unlock_irqrestore(&ht->inval_lock, flags);
	queue_work(ht->wq, &ht->inval_work);
}

/* A copy into @slot was installed: recorded at the next commit. */
void hottier_rec_installed(struct hottier *ht, u32 slot, u64 extent)
{
	struct hottier_mlock *lock;
	unsigned long flags;

	if (!READ_ONCE(ht->records_live))
		return;
	lock = hottier_map_lock(&ht->map, extent, &flags);
	if (__hottier_map_find(&ht->map, extent) == slot)
		__hottier_mslot_set_rec(hottier_mslot(&ht->map, slot),
					HOTTIER_MR_PEND, 0);
	hottier_map_unlock(lock, flags);
	hottier_rec_mark_dirty(ht, slot);
}

/* Replicas */

/*
 * Under @lock, @slot's: take the replica in @slot out of the index (its
 * reference is now the caller's) and, if it is recorded, mark its record
 * for invalidation (true). *@pinned: it was pinned. Then
 * hottier_replica_dropped(), with the lock released.
 */
bool __hottier_replica_remove(struct hottier *ht, struct hottier_mlock *lock,
			      u32 slot, bool *pinned)
{
	struct hottier_mslot *s = hottier_mslot(&ht->map, slot);

	*pinned = hottier_mslot_flags(s) & HOTTIER_SF_PINNED;
	__hottier_policy_removing(&ht->policy, slot);
	__hottier_map_remove(&ht->map, slot);
	return __hottier_rec_dropping(ht, lock, slot);
}

/*
 * Under @slot's bucket lock: pin or unpin the replica in it (the policy
 * files it: a pinned replica is never a victim).
 */
void __hottier_replica_set_pinned(struct hottier *ht, u32 slot, bool pinned)
{
	__hottier_policy_set_pinned(&ht->policy, slot, pinned);
}

/*
 * Carry out the eviction a work item asks for (@w->evict), if its victim
 * is still resident and unpinned in its slot, and tell the policy. The
 * slot is then @w's; @w->dropping: the victim was recorded, and its
 * record is invalidated before the copy starts (hottier_persist_evicted()).
 * False: the work item is void.
 */
bool hottier_replica_evict(struct hottier *ht, struct hottier_work *w)
{
	struct hottier_mlock *lock;
	unsigned long flags;
	bool ok, pinned;

	lock = hottier_map_lock(&ht->map, w->victim, &flags);
	ok = __hottier_map_evictable(&ht->map, w->slot, w->victim);
	if (ok)
		w->dropping = __hottier_replica_remove(ht, lock, w->slot,
						       &pinned);
	hottier_map_unlock(lock, flags);
	hottier_policy_evicted(&ht->policy, w, ok);
	if (ok)
		stat_add(ht, HOTTIER_STAT_DEMOTIONS, 1);
	return ok;
}

/*
 * The copy of @w starts: its extent goes into the index, COPYING (reads
 * go to the HDD until it is installed), then the policy lets it go.
 */
void hottier_replica_start(struct hottier *ht, struct hottier_work *w)
{
	struct hottier_mlock *lock;
	unsigned long flags;

	lock = hottier_map_lock(&ht->map, w->extent, &flags);
	__hottier_map_insert(&ht->map, w->slot, w->extent);
	hottier_map_unlock(lock, flags);
	hottier_policy_start(&ht->policy, w);
}

/*
 * The copy of @w ended: @ok, its replica is installed with the heat and
 * the pin the policy gives it; else it leaves the index, and its slot
 * goes back once its I/O drained.
 */
void hottier_replica_done(struct hottier *ht, struct hottier_work *w,
			  bool ok)
{
	struct hottier_mlock *lock;
	unsigned long flags;

	hottier_policy_done(&ht->policy, w, ok);
	lock = hottier_map_lock(&ht->map, w->extent, &flags);
	if (ok) {
		if (w->pinned)
			__hottier_policy_set_pinned(&ht->policy, w->slot, true);
		__hottier_map_install(&ht->map, w->slot, w->heat,
				      hottier_policy_epoch(&ht->policy));
		__hottier_policy_installed(&ht->policy, w->slot);
	} else {
		__hottier_policy_removing(&ht->policy, w->slot);
		__hottier_map_remove(&ht->map, w->slot);
	}
	hottier_map_unlock(lock, flags);
	if (!ok)
		hottier_map_put(&ht->map, w->slot);
}

/*
 * Drop the replica of @extent if it is resident, in @slot (HOTTIER_NIL:
 * whichever slot holds it), and (unless @pinned_too) unpinned; its slot
 * frees once its I/O completed. One lookup under the extent's lock.
 * Expects nothing locked. 0: not dropped; 1: dropped; 2: a record of the
 * extent on the SSD is being invalidated, this replica's or one dropped
 * before (what writes the HDD waits).
 */
static int drop_slot(struct hottier *ht, u32 slot, u64 extent,
		     bool pinned_too)
{
	struct hottier_mlock *lock;
	struct hottier_mslot *s;
	bool dropped = false, pinned = false, recorded = false, waits;
	unsigned long flags;
	u32 found;

	lock = hottier_map_lock(&ht->map, extent, &flags);
	found = __hottier_map_find(&ht->map, extent);
	if (found != HOTTIER_NIL && (slot == HOTTIER_NIL || found == slot)) {
		s = hottier_mslot(&ht->map, found);
		pinned = hottier_mslot_flags(s) & HOTTIER_SF_PINNED;
		dropped = hottier_mslot_state(s) == HOTTIER_S_RESIDENT &&
			  (pinned_too || !pinned);
		if (dropped)
			recorded = __hottier_replica_remove(ht, lock, found,
							    &pinned);
	}
	waits = lock->dropping;
	hottier_map_unlock(lock, flags);
	if (dropped)
		hottier_replica_dropped(ht, found, pinned, recorded);
	return waits ? 2 : dropped;
}

/*
 * After __hottier_replica_remove() (@recorded): count it, put its reference
 * (after its record's invalidation, if it is recorded: then true), and
 * have a pinned one copied again.
 */
bool hottier_replica_dropped(struct hottier *ht, u32 slot, bool pinned,
			     bool recorded)
{
	if (recorded)
		hottier_rec_drop(ht, slot);
	stat_add(ht, HOTTIER_STAT_DEMOTIONS, 1);
	if (!recorded)
		hottier_slot_put(ht, slot);
	if (pinned) {
		hottier_policy_pins_dropped(&ht->policy);
		kick_promote(ht, 0);
	}
	return recorded;
}

/* Drop @extent's replica if @slot still holds it, pinned or not. */
int hottier_drop_replica(struct hottier *ht, u32 slot, u64 extent)
{
	return drop_slot(ht, slot, extent, true);
}

/* Drop @extent's replica, if it has one (drop_slot()'s result). */
int hottier_drop_extent(struct hottier *ht, u64 extent, bool pinned_too)
{
	return drop_slot(ht, HOTTIER_NIL, extent, pinned_too);
}

/*
 * Drop the replicas of [first, last] (pinned ones too, if @pinned_too):
 * the map's range walk visits just the extents with a slot where it has
 * its range index. May sleep: call it from a worker or a message. True
 * if a record on the SSD is being invalidated (what writes the HDD waits).
 */
bool hottier_drop_range(struct hottier *ht, u64 first, u64 last,
			bool pinned_too)
{
	struct hottier_range_iter it;
	bool recorded = false;
	u64 extent;

	hottier_map_range_start(&ht->map, &it, first, last);
	while (hottier_map_range_next(&ht->map, &it, &extent)) {
		if (hottier_drop_extent(ht, extent, pinned_too) > 1)
			recorded = true;
		if (!(it.visits % HOTTIER_DROP_WALK))
			cond_resched();
	}
	return recorded;
}

/* SSD errors */

/*
 * The device degrades, once, until ssd_reset: replicas unused, no
 * promotions, a dm event, and the witness (the invalidation worker kills
 * the SSD's map, so no record checks out after this). True if it was not
 * degraded before.
 */
bool hottier_enter_degraded(struct hottier *ht)
{
	if (test_and_set_bit(HOTTIER_DEGRADED, &ht->mode))
		return false;
	if (READ_ONCE(ht->records_live))
		queue_work(ht->wq, &ht->inval_work);
	queue_work(ht->wq, &ht->event_work);
	return true;
}

/* An SSD read, write or copy failed: at ssd_error_threshold, degrade. */
void hottier_ssd_error(struct hottier *ht)
{
	stat_add(ht, HOTTIER_STAT_SSD_ERRORS, 1);
	if (atomic_inc_return(&ht->ssd_errors) <
	    READ_ONCE(ht->args.ssd_error_threshold))
		return;
	if (hottier_enter_degraded(ht))
		DMERR("%s: %d SSD errors: degraded, the SSD is not used until ssd_reset",
		      ht_name(ht), atomic_read(&ht->ssd_errors));
}

/* Statistics */

u64 hottier_stat_read(struct hottier *ht, enum hottier_stat s)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(ht->stats, cpu)->v[s];
	return sum;
}
