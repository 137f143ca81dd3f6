// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: SSD slots, replicas and their copies. The promotion worker
 * takes candidates queued by reads and messages, asks the policy, evicts
 * and copies with kcopyd, within max_migrations, migration_mbps and the
 * QoS controller's allowance; completions install the replica unless a
 * write, an invalidation or an error won.
 */
#include "dm-hottier.h"

DECLARE_DM_KCOPYD_THROTTLE_WITH_MODULE_PARM(hottier_copy_throttle,
					    "Percentage of time kcopyd may copy extents to the SSD");

/* Slots */

static void slot_free(struct hottier *ht, u32 slot)
{
	unsigned long flags;

	spin_lock_irqsave(&ht->free_lock, flags);
	ht->free_slots[ht->nr_free++] = slot;
	spin_unlock_irqrestore(&ht->free_lock, flags);
}

static u32 slot_alloc(struct hottier *ht)
{
	unsigned long flags;
	u32 slot = HOTTIER_NO_SLOT;

	spin_lock_irqsave(&ht->free_lock, flags);
	if (ht->nr_free)
		slot = ht->free_slots[--ht->nr_free];
	spin_unlock_irqrestore(&ht->free_lock, flags);
	return slot;
}

void hottier_slot_get(struct hottier *ht, u32 slot)
{
	atomic_inc(&ht->slots[slot].refs);
}

/* The last reference returns the slot to the free list. */
void hottier_slot_put(struct hottier *ht, u32 slot)
{
	if (atomic_dec_and_test(&ht->slots[slot].refs)) {
		slot_free(ht, slot);
		kick_promote(ht, 0);
	}
}

/* Replicas */

/* Drop the entry's replica; the slot frees once its I/O has completed. */
void __hottier_drop_replica(struct hottier *ht, struct hottier_heat_entry *e,
			    bool evicted)
{
	u32 slot = e->slot;

	e->flags &= ~HOTTIER_E_RESIDENT;
	e->slot = HOTTIER_NO_SLOT;
	atomic_dec(&ht->resident);
	stat_add(ht, HOTTIER_STAT_DEMOTIONS, 1);
	if (evicted)
		hottier_ghost_add(&ht->ghost, e->extent);
	hottier_slot_put(ht, slot);
}

/*
 * Queue an extent for the promotion worker, once. False if the queue is
 * full: a read will offer the extent again, and extents a message asked
 * for (HOTTIER_E_WANTED, pinned) are found by queue_wanted().
 */
bool __hottier_post_candidate(struct hottier *ht, struct hottier_heat_entry *e)
{
	if (e->flags & (HOTTIER_E_RESIDENT | HOTTIER_E_COPYING |
			HOTTIER_E_QUEUED)) {
		e->flags &= ~HOTTIER_E_WANTED;
		return true;
	}
	if (!kfifo_in_spinlocked(&ht->candidates, &e->extent, 1,
				 &ht->cand_lock))
		return false;
	e->flags = (e->flags & ~HOTTIER_E_WANTED) | HOTTIER_E_QUEUED;
	kick_promote(ht, 0);
	return true;
}

/* Apply fn to the extent's entry, if it is tracked, under its set lock. */
void hottier_with_entry(struct hottier *ht, u64 extent,
			void (*fn)(struct hottier *ht,
				   struct hottier_heat_entry *e))
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;

	set = hottier_heat_lock(&ht->heat, extent, &flags);
	e = __hottier_heat_find(set, extent);
	if (e)
		fn(ht, e);
	hottier_heat_unlock(set, flags);
}

/*
 * Apply fn to the tracked entry of every extent in [first, last] (set lock
 * held): extent by extent for a short range, else over the whole table.
 */
void hottier_apply_in_range(struct hottier *ht, u64 first, u64 last,
			    void (*fn)(struct hottier *ht,
				       struct hottier_heat_entry *e))
{
	struct hottier_heat_set *set;
	unsigned long flags;
	u64 e;
	u32 i;
	int w;

	if (last - first < hottier_heat_capacity(&ht->heat)) {
		for (e = first; e <= last; e++) {
			hottier_with_entry(ht, e, fn);
			cond_resched();
		}
		return;
	}
	for (i = 0; i < ht->heat.nr_sets; i++) {
		set = &ht->heat.sets[i];
		spin_lock_irqsave(&set->lock, flags);
		for (w = 0; w < HOTTIER_HEAT_WAYS; w++) {
			struct hottier_heat_entry *entry = &set->way[w];

			if ((entry->flags & HOTTIER_E_VALID) &&
			    entry->extent >= first && entry->extent <= last)
				fn(ht, entry);
		}
		spin_unlock_irqrestore(&set->lock, flags);
		cond_resched();
	}
}

void hottier_drop_any(struct hottier *ht, struct hottier_heat_entry *e)
{
	if (e->flags & HOTTIER_E_RESIDENT)
		__hottier_drop_replica(ht, e, false);
}

/*
 * Data changed under a discard or write-zeroes: replicas go, pins stay.
 * Called from map, so it never sleeps: a long range is matched against the
 * slots rather than walked extent by extent.
 */
void hottier_drop_range(struct hottier *ht, u64 first, u64 last)
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;
	u64 extent;
	u32 i;

	if (!atomic_read(&ht->resident))
		return;
	if (last - first < HOTTIER_DROP_WALK) {
		for (extent = first; extent <= last; extent++)
			hottier_with_entry(ht, extent, hottier_drop_any);
		return;
	}
	for (i = 0; i < ht->layout.nr_slots; i++) {
		extent = READ_ONCE(ht->slots[i].extent);
		if (extent < first || extent > last)
			continue;
		set = hottier_heat_lock(&ht->heat, extent, &flags);
		e = __hottier_heat_find(set, extent);
		if (e && e->slot == i)
			hottier_drop_any(ht, e);
		hottier_heat_unlock(set, flags);
	}
}

/* Migration */

static void copy_done(int read_err, unsigned long write_err, void *context)
{
	struct hottier_migration *mig = context;

	mig->failed = read_err || write_err;
	mig->ssd_failed = write_err != 0;
	queue_work(mig->ht->wq, &mig->work);
}

/* Install the replica, unless a write, an invalidation or an error won. */
static void complete_copy(struct work_struct *ws)
{
	struct hottier_migration *mig =
		container_of(ws, struct hottier_migration, work);
	struct hottier *ht = mig->ht;
	struct hottier_wtrack *wt = hottier_wtrack_of(ht, mig->extent);
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags, wflags;
	bool raced, ok = false;

	spin_lock_irqsave(&wt->lock, wflags);
	raced = wt->gen != mig->gen;
	set = hottier_heat_lock(&ht->heat, mig->extent, &flags);
	e = __hottier_heat_find(set, mig->extent);
	if (e && (e->flags & HOTTIER_E_COPYING) && e->slot == mig->slot) {
		e->flags &= ~HOTTIER_E_COPYING;
		ok = !mig->failed && !raced &&
		     atomic_read(&ht->invalidations) == mig->invalidations;
		if (ok) {
			e->flags |= HOTTIER_E_RESIDENT;
			atomic_inc(&ht->resident);
		} else {
			e->slot = HOTTIER_NO_SLOT;
		}
	}
	hottier_heat_unlock(set, flags);
	spin_unlock_irqrestore(&wt->lock, wflags);

	if (ok) {
		stat_add(ht, HOTTIER_STAT_PROMOTIONS, 1);
	} else {
		if (raced)
			stat_add(ht, HOTTIER_STAT_COPIES_DISCARDED, 1);
		if (mig->failed)
			DMERR_LIMIT("%s: copy of extent %llu to the SSD failed",
				    ht_name(ht), (unsigned long long)mig->extent);
		if (mig->ssd_failed)
			hottier_ssd_error(ht);
		hottier_slot_put(ht, mig->slot);
	}
	clear_bit(mig - ht->migs, &ht->migs_busy);
	if (atomic_dec_and_test(&ht->migrating))
		wake_up(&ht->migrate_wait);
	kick_promote(ht, 0);
}

/* Start copying extent into slot; false if a write is in flight to it. */
static bool start_copy(struct hottier *ht, u64 extent, u32 slot)
{
	struct hottier_wtrack *wt = hottier_wtrack_of(ht, extent);
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	struct hottier_migration *mig;
	struct dm_io_region from, to;
	unsigned long flags, wflags;
	unsigned int gen;
	int i;

	/*
	 * Only promote_work allocates, below max_migrations: a free entry
	 * exists. If not, the copy waits as for a write in flight.
	 */
	i = find_first_zero_bit(&ht->migs_busy, HOTTIER_MAX_MIGRATIONS);
	if (WARN_ON_ONCE(i >= HOTTIER_MAX_MIGRATIONS))
		return false;

	spin_lock_irqsave(&wt->lock, wflags);
	if (wt->inflight) {
		spin_unlock_irqrestore(&wt->lock, wflags);
		return false;
	}
	gen = wt->gen;
	set = hottier_heat_lock(&ht->heat, extent, &flags);
	e = __hottier_heat_find(set, extent);
	if (!e || !(e->flags & HOTTIER_E_QUEUED) ||
	    (e->flags & (HOTTIER_E_RESIDENT | HOTTIER_E_COPYING))) {
		/* Dropped meanwhile: nothing to copy, the slot goes back. */
		hottier_heat_unlock(set, flags);
		spin_unlock_irqrestore(&wt->lock, wflags);
		slot_free(ht, slot);
		return true;
	}
	e->flags = (e->flags & ~(HOTTIER_E_QUEUED | HOTTIER_E_ASKED)) |
		   HOTTIER_E_COPYING;
	e->slot = slot;
	ht->slots[slot].extent = extent;
	ht->slots[slot].writing = false;
	atomic_set(&ht->slots[slot].refs, 1);
	hottier_heat_unlock(set, flags);
	spin_unlock_irqrestore(&wt->lock, wflags);

	set_bit(i, &ht->migs_busy);
	atomic_inc(&ht->migrating);
	mig = &ht->migs[i];
	mig->extent = extent;
	mig->slot = slot;
	mig->gen = gen;
	mig->invalidations = atomic_read(&ht->invalidations);
	mig->failed = false;

	from.bdev = ht->hdd->bdev;
	from.sector = extent_first_sector(ht, extent);
	from.count = extent_len(ht, extent);
	to.bdev = ht->ssd->bdev;
	to.sector = slot_sector(ht, slot);
	to.count = from.count;
	dm_kcopyd_copy(ht->kcopyd, &from, 1, &to, 0, copy_done, mig);
	return true;
}

/* The coldest replica that may be evicted: not pinned, no copy running. */
static void find_victim(struct hottier *ht, struct hottier_victim *victim,
			u64 *victim_extent)
{
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;
	u32 i, heat;

	victim->found = false;
	for (i = 0; i < ht->layout.nr_slots; i++) {
		u64 extent = READ_ONCE(ht->slots[i].extent);

		set = hottier_heat_lock(&ht->heat, extent, &flags);
		e = __hottier_heat_find(set, extent);
		if (e && (e->flags & HOTTIER_E_RESIDENT) && e->slot == i &&
		    !(e->flags & HOTTIER_E_PINNED)) {
			heat = __hottier_heat_read(&ht->heat, e);
			if (!victim->found ||
			    hottier_policy_colder(heat, extent, victim->heat,
						  *victim_extent)) {
				victim->found = true;
				victim->heat = heat;
				*victim_extent = extent;
			}
		}
		hottier_heat_unlock(set, flags);
	}
}

static void evict_one(struct hottier *ht, struct hottier_heat_entry *e)
{
	if ((e->flags & HOTTIER_E_RESIDENT) && !(e->flags & HOTTIER_E_PINNED))
		__hottier_drop_replica(ht, e, true);
}

static void unqueue_one(struct hottier *ht, struct hottier_heat_entry *e)
{
	e->flags &= ~HOTTIER_E_QUEUED;
}

/*
 * Decide and start one candidate's promotion. -EAGAIN: try it again later
 * (a write in flight, the rate limit, or an evicted slot still draining).
 */
static int try_promote(struct hottier *ht, u64 extent)
{
	struct hottier_victim victim = { .found = false };
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	u64 victim_extent = 0;
	unsigned long flags;
	bool pinned;
	u32 heat, slot;

	set = hottier_heat_lock(&ht->heat, extent, &flags);
	e = __hottier_heat_find(set, extent);
	if (!e || !(e->flags & HOTTIER_E_QUEUED)) {
		hottier_heat_unlock(set, flags);
		return 0;
	}
	heat = __hottier_heat_read(&ht->heat, e);
	/* An extent promote asked for stays eligible while its heat decays. */
	if (e->flags & HOTTIER_E_ASKED)
		heat = max(heat, threshold_heat(ht));
	pinned = e->flags & HOTTIER_E_PINNED;
	hottier_heat_unlock(set, flags);

	slot = slot_alloc(ht);
	if (slot == HOTTIER_NO_SLOT)
		find_victim(ht, &victim, &victim_extent);

	switch (hottier_policy_promote(heat, pinned, threshold_heat(ht),
				       slot != HOTTIER_NO_SLOT, &victim)) {
	case HOTTIER_PROMOTE_NONE:
		if (slot != HOTTIER_NO_SLOT)
			slot_free(ht, slot);
		hottier_with_entry(ht, extent, unqueue_one);
		return 0;
	case HOTTIER_PROMOTE_EVICT:
		hottier_with_entry(ht, victim_extent, evict_one);
		slot = slot_alloc(ht);
		if (slot == HOTTIER_NO_SLOT)
			return -EAGAIN;
		break;
	case HOTTIER_PROMOTE_FREE:
		break;
	}

	if (!hottier_tokens_take(&ht->tokens, ktime_get_ns(),
				 (u64)READ_ONCE(ht->args.migration_mbps) << 20,
				 extent_len(ht, extent) << SECTOR_SHIFT) ||
	    !start_copy(ht, extent, slot)) {
		slot_free(ht, slot);
		return -EAGAIN;
	}
	return 0;
}

static void queue_wanted_one(struct hottier *ht, struct hottier_heat_entry *e)
{
	if ((e->flags & (HOTTIER_E_WANTED | HOTTIER_E_PINNED)) &&
	    !__hottier_post_candidate(ht, e))
		WRITE_ONCE(ht->wanted, true);
}

/*
 * Extents that promote or pin asked for but found the candidate queue
 * full: walk the table for them while the queue has room.
 */
static void queue_wanted(struct hottier *ht)
{
	if (!READ_ONCE(ht->wanted) || kfifo_is_full(&ht->candidates))
		return;
	WRITE_ONCE(ht->wanted, false);
	hottier_apply_in_range(ht, 0, U64_MAX - 1, queue_wanted_one);
}

static u64 budget_ns(struct hottier *ht)
{
	return (u64)READ_ONCE(ht->args.migration_budget_us) * NSEC_PER_USEC;
}

/* A foreground HDD read completed in @ns: the QoS controller's input. */
void hottier_qos_note(struct hottier *ht, u64 ns)
{
	u64 budget = budget_ns(ht);

	if (!budget)
		return;
	atomic_inc(&ht->qos_reads);
	if (ns > budget / 2)
		atomic_inc(&ht->qos_near);
	if (ns > budget)
		atomic_inc(&ht->qos_over);
}

/*
 * At a resume or a new budget: copies start one at a time and grow while
 * the budget holds; with no budget, max_migrations at once.
 */
void hottier_qos_restart(struct hottier *ht)
{
	ht->qos_budget_ns = budget_ns(ht);
	hottier_qos_start(&ht->qos, ht->args.max_migrations, ht->qos_budget_ns);
	ht->qos_last_ns = ktime_get_ns();
	atomic_set(&ht->qos_reads, 0);
	atomic_set(&ht->qos_near, 0);
	atomic_set(&ht->qos_over, 0);
}

/* For status: what the controller allows now. */
unsigned int hottier_migrations_allowed(struct hottier *ht)
{
	unsigned int max = READ_ONCE(ht->args.max_migrations);

	return budget_ns(ht) ? min(READ_ONCE(ht->qos.allowed), max) : max;
}

/*
 * Copies allowed in flight: max_migrations, less what the QoS controller
 * takes away while the HDD's foreground reads are over migration_budget_us.
 */
static unsigned int qos_allowed(struct hottier *ht)
{
	unsigned int max = READ_ONCE(ht->args.max_migrations);
	u64 now = ktime_get_ns();
	u32 reads, near, over;

	if (budget_ns(ht) != ht->qos_budget_ns)
		hottier_qos_restart(ht);
	if (now - ht->qos_last_ns >= HOTTIER_QOS_PERIOD_NS) {
		reads = atomic_xchg(&ht->qos_reads, 0);
		near = atomic_xchg(&ht->qos_near, 0);
		over = atomic_xchg(&ht->qos_over, 0);
		hottier_qos_next(&ht->qos, max, reads, near, over,
				 budget_ns(ht));
		ht->qos_last_ns = now;
	}
	return min(ht->qos.allowed, max);
}

static void do_promote(struct work_struct *ws)
{
	struct hottier *ht = container_of(to_delayed_work(ws), struct hottier,
					  promote_work);
	u64 extent;

	if (!READ_ONCE(ht->running) || is_degraded(ht))
		return;
	queue_wanted(ht);

	while (READ_ONCE(ht->running) && !is_degraded(ht)) {
		if (atomic_read(&ht->migrating) >= qos_allowed(ht)) {
			/* Held back by the QoS: look again next period. */
			if (!kfifo_is_empty(&ht->candidates))
				kick_promote(ht, nsecs_to_jiffies(HOTTIER_QOS_PERIOD_NS));
			break;
		}
		if (!kfifo_out_spinlocked(&ht->candidates, &extent, 1,
					  &ht->cand_lock))
			break;
		if (try_promote(ht, extent) == -EAGAIN) {
			if (!kfifo_in_spinlocked(&ht->candidates, &extent, 1,
						 &ht->cand_lock))
				hottier_with_entry(ht, extent, unqueue_one);
			kick_promote(ht, msecs_to_jiffies(HOTTIER_RETRY_MS));
			break;
		}
		cond_resched();
	}
}

/* Heat decays in HOTTIER_EPOCHS_PER_HALFLIFE steps per half-life. */
static void do_tick(struct work_struct *ws)
{
	struct hottier *ht = container_of(to_delayed_work(ws), struct hottier,
					  tick_work);
	unsigned int ms = READ_ONCE(ht->args.heat_halflife_ms) /
			  HOTTIER_EPOCHS_PER_HALFLIFE;

	hottier_heat_tick(&ht->heat);
	queue_delayed_work(ht->wq, &ht->tick_work, msecs_to_jiffies(ms));
}

/* Slots, heat table and ghost list: all memory the data path will use. */
int hottier_alloc_tables(struct hottier *ht, char **error)
{
	u64 nr_slots = ht->layout.nr_slots;
	u32 i;
	int r;

	if (nr_slots >= HOTTIER_NO_SLOT) {
		*error = "SSD has too many slots for this extent size";
		return -EINVAL;
	}
	ht->slots = kvcalloc(nr_slots, sizeof(*ht->slots), GFP_KERNEL);
	ht->free_slots = kvmalloc_array(nr_slots, sizeof(*ht->free_slots),
					GFP_KERNEL);
	if (!ht->slots || !ht->free_slots) {
		*error = "Cannot allocate the slot table";
		return -ENOMEM;
	}
	/* Slot 0 is handed out first. */
	for (i = 0; i < nr_slots; i++) {
		ht->free_slots[i] = nr_slots - 1 - i;
		bio_list_init(&ht->slots[i].waiting);
	}
	ht->nr_free = nr_slots;

	r = hottier_heat_init(&ht->heat, hottier_max_tracked(&ht->args,
							     nr_slots));
	if (r) {
		*error = "Cannot allocate the heat table";
		return r;
	}
	r = hottier_ghost_init(&ht->ghost, max_t(u32, nr_slots, 64));
	if (r) {
		*error = "Cannot allocate the ghost list";
		return r;
	}
	hottier_seq_init(&ht->seq);
	return 0;
}

int hottier_init_migration(struct hottier *ht, char **error)
{
	int i, r;

	ht->wq = alloc_workqueue("dm-" DM_MSG_PREFIX, WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!ht->wq) {
		*error = "Cannot allocate the workqueue";
		return -ENOMEM;
	}
	ht->kcopyd = dm_kcopyd_client_create(&dm_kcopyd_throttle);
	if (IS_ERR(ht->kcopyd)) {
		*error = "Cannot create the kcopyd client";
		return PTR_ERR(ht->kcopyd);
	}
	r = bioset_init(&ht->bs, BIO_POOL_SIZE, 0, 0);
	if (r) {
		*error = "Cannot allocate the bio set";
		return r;
	}
	for (i = 0; i < HOTTIER_MAX_MIGRATIONS; i++) {
		ht->migs[i].ht = ht;
		INIT_WORK(&ht->migs[i].work, complete_copy);
	}
	hottier_tokens_init(&ht->tokens, ktime_get_ns());
	return 0;
}

void hottier_migrate_init(struct hottier *ht)
{
	spin_lock_init(&ht->free_lock);
	spin_lock_init(&ht->cand_lock);
	INIT_KFIFO(ht->candidates);
	INIT_DELAYED_WORK(&ht->promote_work, do_promote);
	INIT_DELAYED_WORK(&ht->tick_work, do_tick);
	init_waitqueue_head(&ht->migrate_wait);
}
