// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: copies, a client of the replica core (dm-hottier-core.c,
 * which drops replicas and holds the slots' references). The promotion
 * worker asks the policy (dm-hottier-policy.c) for the next promotion, a
 * work item with a slot reserved for it (free, or evicted), and starts
 * its copy with kcopyd once the slot's I/O drained, no write is in flight
 * to the extent and migration_mbps allows, within max_migrations and the
 * QoS controller's allowance. Completions install the replica unless a
 * write, an invalidation or an error won.
 */
#include "dm-hottier.h"

DECLARE_DM_KCOPYD_THROTTLE_WITH_MODULE_PARM(hottier_copy_throttle,
					    "Percentage of time kcopyd may copy extents to the SSD");

/* Slots */

/* Replicas */

/* Migration */

static void copy_done(int read_err, unsigned long write_err, void *context)
{
	struct hottier_migration *mig = context;

	mig->failed = read_err || write_err;
	mig->ssd_failed = write_err != 0;
	queue_work(mig->ht->wq, &mig->work);
}

/* The context is free again: every write to it is done before. */
static void release_mig(struct hottier *ht, struct hottier_migration *mig)
{
	mig->w.slot = HOTTIER_NIL;
	WRITE_ONCE(mig->state, HOTTIER_MIG_FREE);
	clear_bit_unlock(mig - ht->migs, &ht->migs_busy);
}

/*
 * A pinned extent's copy was not installed: the pins are asked for again
 * (those with a replica are skipped). After a race with a write, at once,
 * as after a drop; after a member's error, once pin_retry_s has passed,
 * which doubles at each failure up to HOTTIER_PIN_RETRY_MAX_S and is back
 * to 1 s once a pinned extent's copy lands. So pins heal by themselves
 * once the members work again, and a member that keeps failing costs one
 * try a minute.
 */
static void retry_pins(struct hottier *ht, bool failed)
{
	int s = atomic_read(&ht->pin_retry_s);

	if (!failed) {
		hottier_policy_pins_dropped(&ht->policy);
		return;
	}
	if (queue_delayed_work(ht->wq, &ht->pin_retry_work, s * HZ))
		atomic_set(&ht->pin_retry_s,
			   min(2 * s, HOTTIER_PIN_RETRY_MAX_S));
}

static void do_pin_retry(struct work_struct *ws)
{
	struct hottier *ht = container_of(to_delayed_work(ws), struct hottier,
					  pin_retry_work);

	hottier_policy_pins_dropped(&ht->policy);
	kick_promote(ht, 0);
}

/* Install the replica, unless a write, an invalidation or an error won. */
static void complete_copy(struct work_struct *ws)
{
	struct hottier_migration *mig =
		container_of(ws, struct hottier_migration, work);
	struct hottier *ht = mig->ht;
	struct hottier_wtrack *wt = hottier_wtrack_of(ht, mig->w.extent);
	unsigned long wflags;
	bool raced, ok;

	spin_lock_irqsave(&wt->lock, wflags);
	raced = wt->gen != mig->gen;
	ok = !mig->failed && !raced &&
	     atomic_read(&ht->invalidations) == mig->invalidations;
	hottier_replica_done(ht, &mig->w, ok);
	spin_unlock_irqrestore(&wt->lock, wflags);

	if (ok) {
		stat_add(ht, HOTTIER_STAT_PROMOTIONS, 1);
		hottier_rec_installed(ht, mig->w.slot, mig->w.extent);
		if (mig->w.pinned)
			atomic_set(&ht->pin_retry_s, 1);
	} else {
		if (mig->w.pinned)
			retry_pins(ht, mig->failed);
		if (raced)
			stat_add(ht, HOTTIER_STAT_COPIES_DISCARDED, 1);
		if (mig->failed)
			DMERR_LIMIT("%s: copy of extent %llu to the SSD failed",
				    ht_name(ht),
				    (unsigned long long)mig->w.extent);
		if (mig->ssd_failed)
			hottier_ssd_error(ht);
	}
	release_mig(ht, mig);
	if (atomic_dec_and_test(&ht->migrating))
		wake_up(&ht->migrate_wait);
	kick_promote(ht, 0);
}

/*
 * Start the copy of a migration's work item: false if it must wait (its
 * slot's I/O still draining, a write in flight to the extent, or the rate
 * limit), keeping its slot. Tokens are taken only for a copy that starts.
 */
static bool start_copy(struct hottier *ht, struct hottier_migration *mig)
{
	struct hottier_work *w = &mig->w;
	struct hottier_wtrack *wt = hottier_wtrack_of(ht, w->extent);
	struct hottier_mslot *s = hottier_mslot(&ht->map, w->slot);
	u64 bytes = extent_len(ht, w->extent) << SECTOR_SHIFT;
	struct dm_io_region from, to;
	unsigned long wflags;

	if (atomic_read(&s->refs) != 1)
		return false;
	spin_lock_irqsave(&wt->lock, wflags);
	if (wt->inflight ||
	    !hottier_tokens_take(&ht->tokens, ktime_get_ns(),
				 (u64)READ_ONCE(ht->args.migration_mbps) << 20,
				 bytes)) {
		spin_unlock_irqrestore(&wt->lock, wflags);
		return false;
	}
	mig->gen = wt->gen;
	hottier_replica_start(ht, w);
	spin_unlock_irqrestore(&wt->lock, wflags);

	mig->invalidations = atomic_read(&ht->invalidations);
	mig->failed = false;
	mig->ssd_failed = false;
	/* Before the copy: its completion may run as soon as it is sent. */
	WRITE_ONCE(mig->state, HOTTIER_MIG_COPYING);
	atomic_inc(&ht->migrating);

	from.bdev = ht->hdd->bdev;
	from.sector = extent_first_sector(ht, w->extent);
	from.count = extent_len(ht, w->extent);
	to.bdev = ht->ssd->bdev;
	to.sector = slot_sector(ht, w->slot);
	to.count = from.count;
	dm_kcopyd_copy(ht->kcopyd, &from, 1, &to, 0, copy_done, mig);
	return true;
}

/* Copies whose slot was reserved but that could not start yet. */
static bool start_waiting(struct hottier *ht, unsigned int allowed)
{
	bool waiting = false;
	int i;

	for_each_set_bit(i, &ht->migs_busy, HOTTIER_MAX_MIGRATIONS) {
		struct hottier_migration *mig = &ht->migs[i];

		if (READ_ONCE(mig->state) != HOTTIER_MIG_WAITING)
			continue;
		if (atomic_read(&ht->migrating) >= allowed ||
		    !start_copy(ht, mig))
			waiting = true;
	}
	return waiting;
}

/* Give back the slots of copies that never started (suspend, degrade). */
void hottier_cancel_waiting(struct hottier *ht)
{
	int i;

	for_each_set_bit(i, &ht->migs_busy, HOTTIER_MAX_MIGRATIONS) {
		struct hottier_migration *mig = &ht->migs[i];

		if (READ_ONCE(mig->state) != HOTTIER_MIG_WAITING)
			continue;
		hottier_policy_cancel(&ht->policy, &mig->w);
		release_mig(ht, mig);
	}
}

static u64 budget_ns(struct hottier *ht)
{
	return (u64)READ_ONCE(ht->args.migration_budget_us) * NSEC_PER_USEC;
}

/*
 * A foreground HDD read or write completed in @ns, map to completion: the
 * QoS controller's input.
 */
void hottier_qos_note(struct hottier *ht, u64 ns)
{
	u64 budget = budget_ns(ht);

	if (!budget)
		return;
	atomic_inc(&ht->qos_ios);
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
	atomic_set(&ht->qos_ios, 0);
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
 * For status: copies decided, their slot reserved, that wait to start
 * (for the slot's I/O, a write to the extent, migration_mbps or the
 * QoS). A snapshot read without the worker's exclusion.
 */
unsigned int hottier_migrations_waiting(struct hottier *ht)
{
	unsigned int n = 0;
	int i;

	for_each_set_bit(i, &ht->migs_busy, HOTTIER_MAX_MIGRATIONS)
		n += READ_ONCE(ht->migs[i].state) == HOTTIER_MIG_WAITING;
	return n;
}

/*
 * Copies allowed in flight: max_migrations, less what the QoS controller
 * takes away while the HDD's foreground I/O is over migration_budget_us.
 */
static unsigned int qos_allowed(struct hottier *ht)
{
	unsigned int max = READ_ONCE(ht->args.max_migrations);
	u64 now = ktime_get_ns();
	u32 ios, near, over;

	if (budget_ns(ht) != ht->qos_budget_ns)
		hottier_qos_restart(ht);
	if (now - ht->qos_last_ns >= HOTTIER_QOS_PERIOD_NS) {
		ios = atomic_xchg(&ht->qos_ios, 0);
		near = atomic_xchg(&ht->qos_near, 0);
		over = atomic_xchg(&ht->qos_over, 0);
		hottier_qos_next(&ht->qos, max, ios, near, over,
				 budget_ns(ht));
		ht->qos_last_ns = now;
	}
	return min(ht->qos.allowed, max);
}

static unsigned long epoch_jiffies(struct hottier *ht)
{
	return msecs_to_jiffies(READ_ONCE(ht->args.heat_halflife_ms) /
				HOTTIER_EPOCHS_PER_HALFLIFE);
}

/*
 * Heat decays in HOTTIER_EPOCHS_PER_HALFLIFE steps per half-life, and the
 * victim levels follow it. A turnover ticks too, and the next tick comes an
 * epoch after it.
 */
static void do_tick(struct work_struct *ws)
{
	struct hottier *ht = container_of(to_delayed_work(ws), struct hottier,
					  tick_work);
	unsigned long epoch = epoch_jiffies(ht), due;

	mutex_lock(&ht->tick_lock);
	due = ht->tick_at + epoch;
	if (time_before(jiffies + 1, due)) {
		mutex_unlock(&ht->tick_lock);
		queue_delayed_work(ht->wq, &ht->tick_work, due - jiffies);
		return;
	}
	hottier_policy_tick(&ht->policy);
	ht->tick_at = jiffies;
	ht->turning_over = false;
	mutex_unlock(&ht->tick_lock);
	queue_delayed_work(ht->wq, &ht->tick_work, epoch);
}

/*
 * Once a second, the turnover detector's sample of the fresh reads; a turnover
 * begins with a tick, and each second of its epoch cuts the replicas it
 * says stopped being read (hottier_policy_turnover_second()).
 */
static void do_sample(struct work_struct *ws)
{
	struct hottier *ht = container_of(to_delayed_work(ws), struct hottier,
					  sample_work);
	u32 halflife = READ_ONCE(ht->args.heat_halflife_ms), since;
	unsigned long now;

	mutex_lock(&ht->tick_lock);
	now = jiffies;
	if (hottier_turnover_sample(&ht->turnover,
				    hottier_stat_read(ht, HOTTIER_STAT_FRESH_HITS),
				    hottier_stat_read(ht, HOTTIER_STAT_FRESH_READS),
				    jiffies_to_msecs(now - ht->sample_at),
				    halflife, ht->turning_over)) {
		hottier_policy_turnover(&ht->policy);
		ht->tick_at = jiffies;
		ht->turnover_at = ht->tick_at;
		ht->turning_over = true;
		mod_delayed_work(ht->wq, &ht->tick_work, epoch_jiffies(ht));
		stat_add(ht, HOTTIER_STAT_TURNOVERS, 1);
	} else if (ht->turning_over) {
		since = jiffies_to_msecs(jiffies - ht->turnover_at);
		ht->turning_over =
			hottier_policy_turnover_second(&ht->policy, since,
						       halflife);
	}
	ht->sample_at = now;
	mutex_unlock(&ht->tick_lock);
	queue_delayed_work(ht->wq, &ht->sample_work, HZ);
}

/* At resume: the detector starts afresh (a suspended device read nothing). */
void hottier_ticks_start(struct hottier *ht)
{
	mutex_lock(&ht->tick_lock);
	ht->tick_at = jiffies;
	ht->sample_at = ht->tick_at;
	ht->turning_over = false;
	hottier_turnover_init(&ht->turnover);
	mutex_unlock(&ht->tick_lock);
	queue_delayed_work(ht->wq, &ht->tick_work, epoch_jiffies(ht));
	queue_delayed_work(ht->wq, &ht->sample_work, HZ);
}

void hottier_ticks_stop(struct hottier *ht)
{
	cancel_delayed_work_sync(&ht->sample_work);
	cancel_delayed_work_sync(&ht->tick_work);
}

/*
 * The promotion worker. Copies that wait for their slot, a write or the
 * rate limit are tried first; then new work items, each with its slot,
 * while the QoS allows more copies in flight and a migration context is
 * free (a reserved slot holds one: at most HOTTIER_MAX_MIGRATIONS). A
 * victim's slot belongs to the candidate that evicted it until its copy
 * starts: waiting never evicts another replica.
 */
static void do_promote(struct work_struct *ws)
{
	struct hottier *ht = container_of(to_delayed_work(ws), struct hottier,
					  promote_work);
	struct hottier_migration *mig;
	unsigned int allowed;
	bool waiting;
	int i, r;

	if (!READ_ONCE(ht->running) || is_degraded(ht))
		return;
	hottier_policy_repin(&ht->policy);
	allowed = qos_allowed(ht);
	waiting = start_waiting(ht, allowed);

	while (READ_ONCE(ht->running) && !is_degraded(ht) &&
	       atomic_read(&ht->migrating) < allowed) {
		i = find_first_zero_bit(&ht->migs_busy, HOTTIER_MAX_MIGRATIONS);
		if (i >= HOTTIER_MAX_MIGRATIONS ||
		    test_and_set_bit_lock(i, &ht->migs_busy))
			break;
		mig = &ht->migs[i];
		r = hottier_policy_next(&ht->policy, &mig->w);
		if (r) {
			clear_bit_unlock(i, &ht->migs_busy);
			if (r == -EAGAIN) {
				cond_resched();
				continue;
			}
			break;
		}
		if (mig->w.evict) {
			if (!hottier_replica_evict(ht, &mig->w)) {
				clear_bit_unlock(i, &ht->migs_busy);
				cond_resched();
				continue;
			}
			/* Its record is invalidated before the slot is reused. */
			if (!hottier_persist_evicted(ht, &mig->w)) {
				hottier_policy_cancel(&ht->policy, &mig->w);
				release_mig(ht, mig);
				break;
			}
		}
		WRITE_ONCE(mig->state, HOTTIER_MIG_WAITING);
		if (!start_copy(ht, mig)) {
			waiting = true;
			break;
		}
		cond_resched();
	}
	if (waiting)
		kick_promote(ht, msecs_to_jiffies(HOTTIER_RETRY_MS));
	else if (hottier_policy_wants_work(&ht->policy) &&
		 atomic_read(&ht->migrating) >= allowed)
		/* Held back by the QoS: look again next period. */
		kick_promote(ht, nsecs_to_jiffies(HOTTIER_QOS_PERIOD_NS));
}

/*
 * The map, the policy's heat table and the per-CPU statistics: all the
 * memory the data path will use, allocated at table load. A load that
 * cannot have it fails, saying how much it asked for.
 */
int hottier_alloc_tables(struct hottier *ht, char **error)
{
	/* A table with no SSD has no slot; its map one, never used. */
	u64 nr_slots = max_t(u64, ht->layout.nr_slots, 1);
	u64 tracked = hottier_max_tracked(&ht->args, nr_slots);
	u64 nr_extents = ((ht->ti->len - 1) >> ht->extent_shift) + 1;
	int r;

	if (nr_slots >= HOTTIER_NIL) {
		*error = "SSD has too many slots for this extent size";
		return -EINVAL;
	}
	r = hottier_map_init(&ht->map, nr_slots);
	if (r) {
		snprintf(ht->error, sizeof(ht->error),
			 "Cannot allocate the slot map: %llu bytes for %llu slots",
			 hottier_map_bytes(nr_slots), nr_slots);
		*error = ht->error;
		return r;
	}
	r = hottier_map_init_ranges(&ht->map, nr_extents);
	if (r) {
		snprintf(ht->error, sizeof(ht->error),
			 "Cannot allocate the range index: %llu bytes for %llu extents",
			 hottier_map_range_bytes(nr_slots, nr_extents),
			 nr_extents);
		*error = ht->error;
		return r;
	}
	r = hottier_policy_init(&ht->policy, &ht->map, tracked);
	if (r) {
		snprintf(ht->error, sizeof(ht->error),
			 "Cannot allocate the heat table and victim levels: %llu bytes for %llu extents",
			 hottier_heat_bytes(tracked) +
			 hottier_policy_levels_bytes(nr_slots), tracked);
		*error = ht->error;
		return r;
	}
	hottier_policy_set_threshold(&ht->policy, ht->args.promote_threshold);
	ht->stats = alloc_percpu(struct hottier_stats);
	if (!ht->stats) {
		*error = "Cannot allocate the statistics";
		return -ENOMEM;
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
		ht->migs[i].w.slot = HOTTIER_NIL;
	}
	hottier_tokens_init(&ht->tokens, ktime_get_ns());
	return 0;
}

void hottier_migrate_init(struct hottier *ht)
{
	INIT_DELAYED_WORK(&ht->promote_work, do_promote);
	INIT_DELAYED_WORK(&ht->pin_retry_work, do_pin_retry);
	atomic_set(&ht->pin_retry_s, 1);
	INIT_DELAYED_WORK(&ht->tick_work, do_tick);
	INIT_DELAYED_WORK(&ht->sample_work, do_sample);
	mutex_init(&ht->tick_lock);
	init_waitqueue_head(&ht->migrate_wait);
}
