// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: hot-extent SSD tiering.
 *
 * The HDD holds every byte; the SSD holds clean replicas of the hottest
 * extents. Reads feed a heat table (dm-hottier-heat.c); a worker copies the
 * extents the policy (dm-hottier-policy.c) chooses to the SSD with kcopyd;
 * reads of a replicated extent go to the SSD; writes go to the HDD and, for
 * a replicated extent, to the SSD too (write_policy through) or drop the
 * replica first (write_policy around).
 *
 * How the invariants are kept:
 *  - A replica is installed only if no write overlapped its copy: a copy
 *    starts only with no write in flight to its extent and records the
 *    extent's write generation; it is installed only if that is unchanged
 *    (struct hottier_wtrack, complete_copy()).
 *  - A slot is reused only after every I/O sent to it completed: each I/O
 *    holds a reference on its slot (struct hottier_slot).
 *  - Writes to one replicated extent are serialised, so both devices apply
 *    them in the same order (hottier_slot.writing).
 *
 * See Documentation/hottier.rst for the table line, status and messages.
 */
#include "dm-hottier-args.h"
#include "dm-hottier-compat.h"
#include "dm-hottier-heat.h"
#include "dm-hottier-policy.h"
#include "dm-hottier-route.h"

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/device-mapper.h>
#include <linux/dm-io.h>
#include <linux/dm-kcopyd.h>
#include <linux/hash.h>
#include <linux/kfifo.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#define DM_MSG_PREFIX "hottier"

DECLARE_DM_KCOPYD_THROTTLE_WITH_MODULE_PARM(hottier_copy_throttle,
					    "Percentage of time kcopyd may copy extents to the SSD");

/* Bio numbers of an empty flush: dm core clones it num_flush_bios times. */
enum hottier_flush_nr {
	HOTTIER_FLUSH_HDD,
	HOTTIER_FLUSH_SSD,
	HOTTIER_NR_FLUSH_BIOS,
};

/* Status INFO counters, in the order they are printed. */
enum hottier_stat {
	HOTTIER_STAT_READS,
	HOTTIER_STAT_WRITES,
	HOTTIER_STAT_READ_SECTORS,
	HOTTIER_STAT_WRITE_SECTORS,
	HOTTIER_STAT_DISCARDS,
	HOTTIER_STAT_FLUSHES,
	HOTTIER_STAT_SSD_FLUSH_ERRORS,
	/* printed after the slot usage: */
	HOTTIER_STAT_READ_HITS,
	HOTTIER_STAT_READ_MISSES,
	HOTTIER_STAT_PROMOTIONS,
	HOTTIER_STAT_DEMOTIONS,
	HOTTIER_STAT_COPIES_DISCARDED,
	/* printed after the scrub result and the latency estimates: */
	HOTTIER_STAT_REPLICA_READS_SSD,
	HOTTIER_STAT_REPLICA_READS_HDD,
	HOTTIER_STAT_SSD_ERRORS,
	HOTTIER_NR_STATS,
};

/*
 * Writes in flight and a write generation, per bucket of extents. A write
 * or discard counts itself in and bumps the generation at map time, and
 * counts itself out at end_io. Extents sharing a bucket only cause extra
 * retries or discarded copies, never a missed one.
 */
#define HOTTIER_WTRACK_BUCKETS	1024

struct hottier_wtrack {
	spinlock_t lock;	/* protects inflight and gen */
	unsigned int inflight;
	unsigned int gen;
};

/*
 * An SSD slot. refs: one for an installed replica, one per I/O sent to the
 * slot (and one for a copy into it); the slot is free again once they are
 * all dropped. extent, writing and waiting are protected by the heat-set
 * lock of the extent the slot holds.
 */
struct hottier_slot {
	atomic_t refs;
	bool writing;			/* a write-through is in flight */
	u64 extent;
	struct bio_list waiting;	/* writes queued behind it */
};

/* A copy HDD -> SSD in flight. */
struct hottier_migration {
	struct hottier *ht;
	struct work_struct work;	/* completion, on ht->wq */
	u64 extent;
	u32 slot;
	unsigned int gen;		/* write generation at the start */
	int invalidations;		/* ht->invalidations at the start */
	bool failed;
	bool ssd_failed;		/* the write to the SSD failed */
};

/* Per-bio state (ti->per_io_data_size). */
struct hottier_io {
	u64 first, last;	/* extents counted in wtrack, if counted */
	bool flush;		/* an empty flush (to either member) */
	bool counted;
	bool write_through;	/* holds slots[slot].writing */
	u32 slot;		/* slot referenced, or HOTTIER_NO_SLOT */
	blk_status_t ssd_status; /* the write-through SSD clone's result */
	int dev;		/* a read's device (enum hottier_route_dev), or -1 */
	u64 start_ns;		/* when the read was sent */
	struct bvec_iter iter;	/* the read as mapped, for a retry on the HDD */
	unsigned short bi_flags; /* ... and its flags (as dm-bio-record.h) */
};

#define HOTTIER_NR_CANDIDATES	256
#define HOTTIER_RETRY_MS	10
#define HOTTIER_SCRUB_CHUNK	(64 * 1024)
#define HOTTIER_SCRUB_TRIES	20
#define HOTTIER_DROP_WALK	64
#define HOTTIER_QOS_PERIOD_NS	(100ULL * NSEC_PER_MSEC)

/* Bits of hottier.mode. */
#define HOTTIER_DEGRADED	0

/*
 * A device's claim on its members: no two hottier devices may share an HDD
 * or an SSD. Tables of one mapped device (a reload builds the new table while
 * the old one is live) share the claim.
 */
struct hottier_claim {
	struct list_head list;
	struct mapped_device *md;
	dev_t hdd;
	dev_t ssd;
};

static DEFINE_MUTEX(claims_lock);	/* protects claims */
static LIST_HEAD(claims);

struct hottier {
	struct dm_target *ti;
	struct dm_dev *hdd;
	struct dm_dev *ssd;

	struct mutex lock;		/* serialises messages, scrub, sysfs stores */
	struct hottier_kobj *sysfs;	/* while resumed; resume/suspend only */
	struct hottier_args args;	/* the configuration; device paths unused */
	unsigned int extent_shift;
	struct hottier_layout layout;

	struct hottier_claim claim;	/* on the claims list when .md is set */

	struct hottier_heat heat;
	struct hottier_ghost ghost;
	struct hottier_seq seq;

	struct hottier_slot *slots;
	spinlock_t free_lock;		/* protects free_slots and nr_free */
	u32 *free_slots;
	u32 nr_free;
	atomic_t resident;
	atomic_t pinned;

	struct hottier_wtrack wtrack[HOTTIER_WTRACK_BUCKETS];
	atomic_t invalidations;		/* copies started before are dropped */

	spinlock_t cand_lock;		/* protects candidates */
	DECLARE_KFIFO(candidates, u64, HOTTIER_NR_CANDIDATES);

	spinlock_t redispatch_lock;	/* protects redispatch */
	struct bio_list redispatch;	/* writes to map again, in order */
	struct work_struct redispatch_work;

	struct workqueue_struct *wq;
	struct delayed_work promote_work;
	struct delayed_work tick_work;
	struct dm_kcopyd_client *kcopyd;
	struct bio_set bs;
	struct hottier_migration migs[HOTTIER_MAX_MIGRATIONS];
	unsigned long migs_busy;	/* a bit per migs[] entry in use */
	atomic_t migrating;
	wait_queue_head_t migrate_wait;
	struct hottier_tokens tokens;	/* used by promote_work only */
	bool running;			/* copies may start: resumed */
	bool wanted;			/* entries wait for queue_wanted() */

	struct hottier_lat lat[2];	/* by enum hottier_route_dev */
	atomic64_t read_seq;		/* replica reads, for the fresh share */
	struct hottier_qos qos;		/* the QoS controller; promote_work */
	u64 qos_last_ns;		/* last QoS update; promote_work */
	u64 qos_budget_ns;		/* the budget in force; promote_work */
	atomic_t qos_reads;		/* foreground HDD reads this period */
	atomic_t qos_near;		/* ... of them over half the budget */
	atomic_t qos_over;		/* ... of them over the budget */

	atomic_t ssd_errors;		/* since creation or ssd_reset */
	unsigned long mode;		/* HOTTIER_DEGRADED, until ssd_reset */
	struct work_struct event_work;	/* dm_table_event() off the I/O path */

	spinlock_t retry_lock;		/* protects retry */
	struct bio_list retry;		/* failed SSD reads, for the HDD */
	struct work_struct retry_work;

	u64 scrub_checked;		/* under lock */
	u64 scrub_mismatches;

	atomic64_t stats[HOTTIER_NR_STATS];
};

/* Claims */

static bool claim_conflicts(const struct hottier_claim *c, dev_t dev)
{
	return c->hdd == dev || c->ssd == dev;
}

static int claim_members(struct hottier *ht, char **error)
{
	struct hottier_claim *c;
	int r = 0;

	ht->claim.hdd = ht->hdd->bdev->bd_dev;
	ht->claim.ssd = ht->ssd->bdev->bd_dev;

	mutex_lock(&claims_lock);
	list_for_each_entry(c, &claims, list) {
		if (c->md == dm_table_get_md(ht->ti->table))
			continue;
		if (claim_conflicts(c, ht->claim.hdd)) {
			*error = "HDD is already used by another hottier device";
			r = -EBUSY;
			break;
		}
		if (claim_conflicts(c, ht->claim.ssd)) {
			*error = "SSD is already used by another hottier device";
			r = -EBUSY;
			break;
		}
	}
	if (!r) {
		ht->claim.md = dm_table_get_md(ht->ti->table);
		list_add(&ht->claim.list, &claims);
	}
	mutex_unlock(&claims_lock);
	return r;
}

static void release_claim(struct hottier *ht)
{
	if (!ht->claim.md)
		return;
	mutex_lock(&claims_lock);
	list_del(&ht->claim.list);
	mutex_unlock(&claims_lock);
}

/* Geometry */

static sector_t extent_first_sector(struct hottier *ht, u64 extent)
{
	return (sector_t)extent << ht->extent_shift;
}

/* The last extent may be short: the target need not end on an extent. */
static sector_t extent_len(struct hottier *ht, u64 extent)
{
	sector_t start = extent_first_sector(ht, extent);

	return min_t(sector_t, ht->args.extent_sectors, ht->ti->len - start);
}

static sector_t slot_sector(struct hottier *ht, u32 slot)
{
	return ht->layout.meta_sectors + ((sector_t)slot << ht->extent_shift);
}

static u32 threshold_heat(struct hottier *ht)
{
	return READ_ONCE(ht->args.promote_threshold) * HOTTIER_HEAT_ONE;
}

static void stat_add(struct hottier *ht, enum hottier_stat s, u64 v)
{
	atomic64_add(v, &ht->stats[s]);
}

static void kick_promote(struct hottier *ht, unsigned long delay)
{
	mod_delayed_work(ht->wq, &ht->promote_work, delay);
}

static const char *ht_name(struct hottier *ht)
{
	return dm_device_name(dm_table_get_md(ht->ti->table));
}

static bool is_degraded(struct hottier *ht)
{
	return test_bit(HOTTIER_DEGRADED, &ht->mode);
}

static void raise_event(struct work_struct *ws)
{
	struct hottier *ht = container_of(ws, struct hottier, event_work);

	dm_table_event(ht->ti->table);
}

/*
 * An SSD read, write or copy failed. At ssd_error_threshold errors the
 * device degrades, once: replicas unused, no promotions, a dm event.
 */
static void ssd_error(struct hottier *ht)
{
	stat_add(ht, HOTTIER_STAT_SSD_ERRORS, 1);
	if (atomic_inc_return(&ht->ssd_errors) <
	    READ_ONCE(ht->args.ssd_error_threshold))
		return;
	if (test_and_set_bit(HOTTIER_DEGRADED, &ht->mode))
		return;
	DMERR("%s: %d SSD errors: degraded, the SSD is not used until ssd_reset",
	      ht_name(ht), atomic_read(&ht->ssd_errors));
	queue_work(ht->wq, &ht->event_work);
}

static void start_read(struct hottier *ht, struct hottier_io *io,
		       enum hottier_route_dev dev)
{
	io->dev = dev;
	io->start_ns = ktime_get_ns();
	atomic_inc(&ht->lat[dev].inflight);
}

/* Where a read of a replicated extent goes. */
static enum hottier_route_dev route_read(struct hottier *ht)
{
	struct hottier_lat *ssd = &ht->lat[HOTTIER_ROUTE_SSD];
	struct hottier_lat *hdd = &ht->lat[HOTTIER_ROUTE_HDD];

	return hottier_route(READ_ONCE(ht->args.routing),
			     atomic64_read(&ssd->ewma_ns),
			     atomic_read(&ssd->inflight),
			     atomic64_read(&hdd->ewma_ns),
			     atomic_read(&hdd->inflight),
			     atomic64_inc_return(&ht->read_seq));
}

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

static void slot_get(struct hottier *ht, u32 slot)
{
	atomic_inc(&ht->slots[slot].refs);
}

/* The last reference returns the slot to the free list. */
static void slot_put(struct hottier *ht, u32 slot)
{
	if (atomic_dec_and_test(&ht->slots[slot].refs)) {
		slot_free(ht, slot);
		kick_promote(ht, 0);
	}
}

/* Write tracking */

static struct hottier_wtrack *wtrack_of(struct hottier *ht, u64 extent)
{
	return &ht->wtrack[hash_64(extent, ilog2(HOTTIER_WTRACK_BUCKETS))];
}

static void wtrack_adjust(struct hottier_wtrack *wt, int delta)
{
	unsigned long flags;

	spin_lock_irqsave(&wt->lock, flags);
	wt->inflight += delta;
	if (delta > 0)
		wt->gen++;
	spin_unlock_irqrestore(&wt->lock, flags);
}

/* Count writes in (+1) or out (-1) of every extent in [first, last]. */
static void wtrack_range(struct hottier *ht, u64 first, u64 last, int delta)
{
	u64 e;
	int i;

	if (last - first >= HOTTIER_WTRACK_BUCKETS) {
		for (i = 0; i < HOTTIER_WTRACK_BUCKETS; i++)
			wtrack_adjust(&ht->wtrack[i], delta);
		return;
	}
	for (e = first; e <= last; e++)
		wtrack_adjust(wtrack_of(ht, e), delta);
}

/* Replicas */

/* Drop the entry's replica; the slot frees once its I/O has completed. */
static void __drop_replica(struct hottier *ht, struct hottier_heat_entry *e,
			   bool evicted)
{
	u32 slot = e->slot;

	e->flags &= ~HOTTIER_E_RESIDENT;
	e->slot = HOTTIER_NO_SLOT;
	atomic_dec(&ht->resident);
	stat_add(ht, HOTTIER_STAT_DEMOTIONS, 1);
	if (evicted)
		hottier_ghost_add(&ht->ghost, e->extent);
	slot_put(ht, slot);
}

/*
 * Queue an extent for the promotion worker, once. False if the queue is
 * full: a read will offer the extent again, and extents a message asked
 * for (HOTTIER_E_WANTED, pinned) are found by queue_wanted().
 */
static bool __post_candidate(struct hottier *ht, struct hottier_heat_entry *e)
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
static void with_entry(struct hottier *ht, u64 extent,
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
static void apply_in_range(struct hottier *ht, u64 first, u64 last,
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
			with_entry(ht, e, fn);
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

static void drop_any(struct hottier *ht, struct hottier_heat_entry *e)
{
	if (e->flags & HOTTIER_E_RESIDENT)
		__drop_replica(ht, e, false);
}

/*
 * Data changed under a discard or write-zeroes: replicas go, pins stay.
 * Called from map, so it never sleeps: a long range is matched against the
 * slots rather than walked extent by extent.
 */
static void drop_range(struct hottier *ht, u64 first, u64 last)
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
			with_entry(ht, extent, drop_any);
		return;
	}
	for (i = 0; i < ht->layout.nr_slots; i++) {
		extent = READ_ONCE(ht->slots[i].extent);
		if (extent < first || extent > last)
			continue;
		set = hottier_heat_lock(&ht->heat, extent, &flags);
		e = __hottier_heat_find(set, extent);
		if (e && e->slot == i)
			drop_any(ht, e);
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
	struct hottier_wtrack *wt = wtrack_of(ht, mig->extent);
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
			ssd_error(ht);
		slot_put(ht, mig->slot);
	}
	clear_bit(mig - ht->migs, &ht->migs_busy);
	if (atomic_dec_and_test(&ht->migrating))
		wake_up(&ht->migrate_wait);
	kick_promote(ht, 0);
}

/* Start copying extent into slot; false if a write is in flight to it. */
static bool start_copy(struct hottier *ht, u64 extent, u32 slot)
{
	struct hottier_wtrack *wt = wtrack_of(ht, extent);
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	struct hottier_migration *mig;
	struct dm_io_region from, to;
	unsigned long flags, wflags;
	unsigned int gen;
	int i;

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

	/* Only promote_work allocates: a free entry exists below the limit. */
	i = find_first_zero_bit(&ht->migs_busy, HOTTIER_MAX_MIGRATIONS);
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
		__drop_replica(ht, e, true);
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
		with_entry(ht, extent, unqueue_one);
		return 0;
	case HOTTIER_PROMOTE_EVICT:
		with_entry(ht, victim_extent, evict_one);
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
	    !__post_candidate(ht, e))
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
	apply_in_range(ht, 0, U64_MAX - 1, queue_wanted_one);
}

static u64 budget_ns(struct hottier *ht)
{
	return (u64)READ_ONCE(ht->args.migration_budget_us) * NSEC_PER_USEC;
}

/* A foreground HDD read completed in @ns: the QoS controller's input. */
static void qos_note(struct hottier *ht, u64 ns)
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
static void qos_restart(struct hottier *ht)
{
	ht->qos_budget_ns = budget_ns(ht);
	hottier_qos_start(&ht->qos, ht->args.max_migrations, ht->qos_budget_ns);
	ht->qos_last_ns = ktime_get_ns();
	atomic_set(&ht->qos_reads, 0);
	atomic_set(&ht->qos_near, 0);
	atomic_set(&ht->qos_over, 0);
}

/* For status: what the controller allows now. */
static unsigned int migrations_allowed(struct hottier *ht)
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
		qos_restart(ht);
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
				with_entry(ht, extent, unqueue_one);
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

/* I/O */

static void account_bio(struct hottier *ht, struct bio *bio)
{
	switch (bio_op(bio)) {
	case REQ_OP_READ:
		stat_add(ht, HOTTIER_STAT_READS, 1);
		stat_add(ht, HOTTIER_STAT_READ_SECTORS, bio_sectors(bio));
		break;
	case REQ_OP_WRITE:
		stat_add(ht, HOTTIER_STAT_WRITES, 1);
		stat_add(ht, HOTTIER_STAT_WRITE_SECTORS, bio_sectors(bio));
		break;
	case REQ_OP_DISCARD:
		stat_add(ht, HOTTIER_STAT_DISCARDS, 1);
		break;
	default:
		break;
	}
}

static bool is_empty_flush(struct bio *bio)
{
	return (bio->bi_opf & REQ_PREFLUSH) && !bio_sectors(bio);
}

static int map_flush(struct hottier *ht, struct bio *bio)
{
	if (dm_bio_get_target_bio_nr(bio) == HOTTIER_FLUSH_SSD) {
		bio_set_dev(bio, ht->ssd->bdev);
		return DM_MAPIO_REMAPPED;
	}
	stat_add(ht, HOTTIER_STAT_FLUSHES, 1);
	bio_set_dev(bio, ht->hdd->bdev);
	return DM_MAPIO_REMAPPED;
}

static void remap_hdd(struct hottier *ht, struct bio *bio, sector_t offset)
{
	bio_set_dev(bio, ht->hdd->bdev);
	bio->bi_iter.bi_sector = offset;
}

static void remap_ssd(struct hottier *ht, struct bio *bio, sector_t offset,
		      u32 slot)
{
	bio_set_dev(bio, ht->ssd->bdev);
	bio->bi_iter.bi_sector = slot_sector(ht, slot) +
		(offset & (ht->args.extent_sectors - 1));
}

/*
 * A read heats its extent (unless it belongs to a sequential stream past
 * the cutoff) and goes to the replica if there is one.
 */
static int map_read(struct hottier *ht, struct bio *bio, struct hottier_io *io)
{
	sector_t offset = dm_target_offset(ht->ti, bio->bi_iter.bi_sector);
	u64 extent = offset >> ht->extent_shift;
	u64 cutoff = (u64)READ_ONCE(ht->args.sequential_cutoff_kb) * 2;
	u32 threshold = threshold_heat(ht), heat = 0;
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;
	bool scan;

	io->iter = bio->bi_iter;
	io->bi_flags = bio->bi_flags;
	scan = hottier_seq_note(&ht->seq, offset, bio_sectors(bio), cutoff);
	set = hottier_heat_lock(&ht->heat, extent, &flags);
	e = __hottier_heat_find(set, extent);
	if (!e && !scan)
		e = __hottier_heat_get(&ht->heat, set, extent,
				       hottier_ghost_take(&ht->ghost, extent) ?
				       threshold - HOTTIER_HEAT_ONE : 0);
	if (e && !scan)
		heat = __hottier_heat_add(&ht->heat, e, HOTTIER_HEAT_ONE);
	if (e && (e->flags & HOTTIER_E_RESIDENT) && !is_degraded(ht)) {
		stat_add(ht, HOTTIER_STAT_READ_HITS, 1);
		if (route_read(ht) == HOTTIER_ROUTE_SSD) {
			io->slot = e->slot;
			slot_get(ht, io->slot);
			hottier_heat_unlock(set, flags);
			stat_add(ht, HOTTIER_STAT_REPLICA_READS_SSD, 1);
			remap_ssd(ht, bio, offset, io->slot);
			start_read(ht, io, HOTTIER_ROUTE_SSD);
			return DM_MAPIO_REMAPPED;
		}
		hottier_heat_unlock(set, flags);
		stat_add(ht, HOTTIER_STAT_REPLICA_READS_HDD, 1);
		remap_hdd(ht, bio, offset);
		start_read(ht, io, HOTTIER_ROUTE_HDD);
		return DM_MAPIO_REMAPPED;
	}
	if (e && !scan && !is_degraded(ht) &&
	    (heat >= threshold || (e->flags & HOTTIER_E_PINNED)))
		__post_candidate(ht, e);
	hottier_heat_unlock(set, flags);
	stat_add(ht, HOTTIER_STAT_READ_MISSES, 1);
	remap_hdd(ht, bio, offset);
	start_read(ht, io, HOTTIER_ROUTE_HDD);
	return DM_MAPIO_REMAPPED;
}

static void ssd_write_endio(struct bio *clone)
{
	struct bio *bio = clone->bi_private;
	struct hottier_io *io = dm_per_bio_data(bio, sizeof(*io));

	io->ssd_status = clone->bi_status;
	bio_put(clone);
	bio_endio(bio);
}

/* The SSD half of a write-through; the bio completes after both halves. */
static void submit_ssd_write(struct hottier *ht, struct bio *bio,
			     sector_t offset, u32 slot)
{
	struct bio *clone = bio_alloc_clone(ht->ssd->bdev, bio, GFP_NOIO,
					    &ht->bs);

	clone->bi_iter.bi_sector = slot_sector(ht, slot) +
		(offset & (ht->args.extent_sectors - 1));
	clone->bi_end_io = ssd_write_endio;
	clone->bi_private = bio;
	bio_inc_remaining(bio);
	submit_bio_noacct(clone);
}

/*
 * A write goes to the HDD; to a replicated extent, also to the SSD
 * (through), one write at a time per extent, or it drops the replica first
 * (around). Queued writes come back here from redispatch_work.
 */
static int map_write(struct hottier *ht, struct bio *bio, struct hottier_io *io)
{
	sector_t offset = dm_target_offset(ht->ti, bio->bi_iter.bi_sector);
	u64 extent = offset >> ht->extent_shift;
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	struct hottier_slot *slot;
	unsigned long flags;

	if (!io->counted) {
		io->first = extent;
		io->last = extent;
		io->counted = true;
		wtrack_range(ht, extent, extent, 1);
	}

	set = hottier_heat_lock(&ht->heat, extent, &flags);
	e = __hottier_heat_find(set, extent);
	/* Degraded: replicas go stale and are dropped by ssd_reset. */
	if (!e || !(e->flags & HOTTIER_E_RESIDENT) || is_degraded(ht))
		goto hdd;
	if (READ_ONCE(ht->args.write_policy) == HOTTIER_WRITE_AROUND) {
		__drop_replica(ht, e, false);
		goto hdd;
	}
	slot = &ht->slots[e->slot];
	if (slot->writing) {
		bio_list_add(&slot->waiting, bio);
		hottier_heat_unlock(set, flags);
		return DM_MAPIO_SUBMITTED;
	}
	slot->writing = true;
	io->write_through = true;
	io->slot = e->slot;
	slot_get(ht, io->slot);
	hottier_heat_unlock(set, flags);
	submit_ssd_write(ht, bio, offset, io->slot);
	remap_hdd(ht, bio, offset);
	return DM_MAPIO_REMAPPED;

hdd:
	hottier_heat_unlock(set, flags);
	remap_hdd(ht, bio, offset);
	return DM_MAPIO_REMAPPED;
}

/* Discards and write-zeroes may span many extents: drop their replicas. */
static int map_range(struct hottier *ht, struct bio *bio, struct hottier_io *io)
{
	sector_t offset = dm_target_offset(ht->ti, bio->bi_iter.bi_sector);

	io->first = offset >> ht->extent_shift;
	io->last = (offset + bio_sectors(bio) - 1) >> ht->extent_shift;
	io->counted = true;
	wtrack_range(ht, io->first, io->last, 1);
	drop_range(ht, io->first, io->last);
	remap_hdd(ht, bio, offset);
	return DM_MAPIO_REMAPPED;
}

/* Empty a list filled from end_io, under its irq-safe lock. */
static void take_bios(spinlock_t *lock, struct bio_list *from,
		      struct bio_list *to)
{
	spin_lock_irq(lock);
	*to = *from;
	bio_list_init(from);
	spin_unlock_irq(lock);
}

static void do_redispatch(struct work_struct *ws)
{
	struct hottier *ht = container_of(ws, struct hottier, redispatch_work);
	struct bio_list bios;
	struct bio *bio;

	take_bios(&ht->redispatch_lock, &ht->redispatch, &bios);

	while ((bio = bio_list_pop(&bios))) {
		struct hottier_io *io = dm_per_bio_data(bio, sizeof(*io));

		if (map_write(ht, bio, io) == DM_MAPIO_REMAPPED)
			dm_submit_bio_remap(bio, NULL);
	}
}

/*
 * Reads and writes arrive inside one extent (max_io_len); discards and
 * write-zeroes may span many extents and are remapped as ranges.
 */
static int hottier_map(struct dm_target *ti, struct bio *bio)
{
	struct hottier *ht = ti->private;
	struct hottier_io *io = dm_per_bio_data(bio, sizeof(*io));

	/*
	 * Every bio's state is set here: end_io must not guess from the
	 * bio, whose flags a member without a write cache changes (the
	 * block layer strips REQ_PREFLUSH and ends the flush at once).
	 */
	io->flush = is_empty_flush(bio);
	io->counted = false;
	io->write_through = false;
	io->slot = HOTTIER_NO_SLOT;
	io->ssd_status = BLK_STS_OK;
	io->dev = -1;
	if (io->flush)
		return map_flush(ht, bio);

	account_bio(ht, bio);

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return map_read(ht, bio, io);
	case REQ_OP_WRITE:
		return map_write(ht, bio, io);
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		return map_range(ht, bio, io);
	default:
		remap_hdd(ht, bio, dm_target_offset(ti, bio->bi_iter.bi_sector));
		return DM_MAPIO_REMAPPED;
	}
}

/*
 * Both halves of a write-through are done: a failure of either drops the
 * replica (it must never differ from the HDD), and the next queued write
 * to the extent may go.
 */
static void end_write_through(struct hottier *ht, struct hottier_io *io,
			      blk_status_t error)
{
	struct hottier_slot *slot = &ht->slots[io->slot];
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	struct bio_list waiting;
	unsigned long flags;

	set = hottier_heat_lock(&ht->heat, slot->extent, &flags);
	slot->writing = false;
	waiting = slot->waiting;
	bio_list_init(&slot->waiting);
	if (io->ssd_status)
		ssd_error(ht);
	if (error || io->ssd_status) {
		e = __hottier_heat_find(set, slot->extent);
		if (e && (e->flags & HOTTIER_E_RESIDENT) && e->slot == io->slot)
			__drop_replica(ht, e, false);
	}
	hottier_heat_unlock(set, flags);

	if (!bio_list_empty(&waiting)) {
		spin_lock_irqsave(&ht->redispatch_lock, flags);
		bio_list_merge(&ht->redispatch, &waiting);
		spin_unlock_irqrestore(&ht->redispatch_lock, flags);
		queue_work(ht->wq, &ht->redispatch_work);
	}
}

/* Failed SSD reads are sent again, to the HDD, from retry_work. */
static void do_retry(struct work_struct *ws)
{
	struct hottier *ht = container_of(ws, struct hottier, retry_work);
	struct bio_list bios;
	struct bio *bio;

	take_bios(&ht->retry_lock, &ht->retry, &bios);

	while ((bio = bio_list_pop(&bios))) {
		struct hottier_io *io = dm_per_bio_data(bio, sizeof(*io));

		bio->bi_iter = io->iter;
		bio->bi_flags = io->bi_flags;
		bio->bi_status = BLK_STS_OK;
		remap_hdd(ht, bio, dm_target_offset(ht->ti,
						    bio->bi_iter.bi_sector));
		start_read(ht, io, HOTTIER_ROUTE_HDD);
		dm_submit_bio_remap(bio, NULL);
	}
}

/*
 * A read completed: its device's estimate takes the sample. True if it
 * failed on the SSD and was queued for the HDD: the caller never sees an
 * SSD error when the HDD can serve the read.
 */
static bool end_read(struct hottier *ht, struct bio *bio,
		     struct hottier_io *io, blk_status_t error)
{
	struct hottier_lat *l = &ht->lat[io->dev];
	u64 now = ktime_get_ns();
	unsigned long flags;

	atomic_dec(&l->inflight);
	if (!error) {
		hottier_lat_sample(l, now - io->start_ns);
		if (io->dev == HOTTIER_ROUTE_HDD)
			qos_note(ht, now - io->start_ns);
		return false;
	}
	if (io->dev != HOTTIER_ROUTE_SSD)
		return false;
	ssd_error(ht);
	if (io->slot != HOTTIER_NO_SLOT) {
		slot_put(ht, io->slot);
		io->slot = HOTTIER_NO_SLOT;
	}
	io->dev = -1;
	spin_lock_irqsave(&ht->retry_lock, flags);
	bio_list_add(&ht->retry, bio);
	spin_unlock_irqrestore(&ht->retry_lock, flags);
	queue_work(ht->wq, &ht->retry_work);
	return true;
}

static int hottier_end_io(struct dm_target *ti, struct bio *bio,
			  blk_status_t *error)
{
	struct hottier *ht = ti->private;
	struct hottier_io *io;

	io = dm_per_bio_data(bio, sizeof(*io));
	if (io->flush) {
		/* The SSD holds only clean replicas: its flush failing loses nothing. */
		if (*error && dm_bio_get_target_bio_nr(bio) == HOTTIER_FLUSH_SSD) {
			stat_add(ht, HOTTIER_STAT_SSD_FLUSH_ERRORS, 1);
			*error = BLK_STS_OK;
		}
		return DM_ENDIO_DONE;
	}

	if (io->dev >= 0 && end_read(ht, bio, io, *error))
		return DM_ENDIO_INCOMPLETE;
	if (io->write_through)
		end_write_through(ht, io, *error);
	if (io->slot != HOTTIER_NO_SLOT)
		slot_put(ht, io->slot);
	if (io->counted)
		wtrack_range(ht, io->first, io->last, -1);
	return DM_ENDIO_DONE;
}

/* Constructor and destructor */

static void sysfs_add(struct hottier *ht);
static void sysfs_remove(struct hottier *ht);

/* Copes with a partly built object, so the constructor has one error path. */
static void hottier_destroy(struct hottier *ht)
{
	/* First: inherit_pins() reads a claimant's heat under claims_lock. */
	release_claim(ht);
	if (ht->wq) {
		cancel_delayed_work_sync(&ht->tick_work);
		cancel_delayed_work_sync(&ht->promote_work);
		destroy_workqueue(ht->wq);
	}
	if (!IS_ERR_OR_NULL(ht->kcopyd))
		dm_kcopyd_client_destroy(ht->kcopyd);
	bioset_exit(&ht->bs);
	hottier_ghost_exit(&ht->ghost);
	hottier_heat_exit(&ht->heat);
	kvfree(ht->free_slots);
	kvfree(ht->slots);
	if (ht->ssd)
		dm_put_device(ht->ti, ht->ssd);
	if (ht->hdd)
		dm_put_device(ht->ti, ht->hdd);
	kfree(ht);
}

static int get_devices(struct hottier *ht, char **error)
{
	struct dm_target *ti = ht->ti;
	int r;

	/* The mode's type changed in 6.5 (blk_mode_t): pass it straight on. */
	r = dm_get_device(ti, ht->args.hdd_path, dm_table_get_mode(ti->table),
			  &ht->hdd);
	if (r) {
		*error = "Error opening HDD device";
		return r;
	}
	r = dm_get_device(ti, ht->args.ssd_path, dm_table_get_mode(ti->table),
			  &ht->ssd);
	if (r) {
		*error = "Error opening SSD device";
		return r;
	}
	if (ht->hdd->bdev->bd_dev == ht->ssd->bdev->bd_dev) {
		*error = "HDD and SSD must be different devices";
		return -EINVAL;
	}
	return hottier_check_geometry(ti->len, bdev_nr_sectors(ht->hdd->bdev),
				      bdev_nr_sectors(ht->ssd->bdev),
				      ht->args.extent_sectors, error);
}

/* Slots, heat table and ghost list: all memory the data path will use. */
static int alloc_tables(struct hottier *ht, char **error)
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

static int init_migration(struct hottier *ht, char **error)
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

static void init_state(struct hottier *ht)
{
	int i;

	mutex_init(&ht->lock);
	spin_lock_init(&ht->free_lock);
	spin_lock_init(&ht->cand_lock);
	spin_lock_init(&ht->redispatch_lock);
	INIT_KFIFO(ht->candidates);
	bio_list_init(&ht->redispatch);
	INIT_WORK(&ht->redispatch_work, do_redispatch);
	INIT_DELAYED_WORK(&ht->promote_work, do_promote);
	INIT_DELAYED_WORK(&ht->tick_work, do_tick);
	INIT_WORK(&ht->event_work, raise_event);
	INIT_WORK(&ht->retry_work, do_retry);
	spin_lock_init(&ht->retry_lock);
	bio_list_init(&ht->retry);
	init_waitqueue_head(&ht->migrate_wait);
	for (i = 0; i < HOTTIER_WTRACK_BUCKETS; i++)
		spin_lock_init(&ht->wtrack[i].lock);
}

static void init_target(struct hottier *ht)
{
	struct dm_target *ti = ht->ti;

	ti->num_flush_bios = HOTTIER_NR_FLUSH_BIOS;
	ti->flush_supported = true;
	if (ht->args.discard == HOTTIER_DISCARD_PASSDOWN) {
		ti->num_discard_bios = 1;
		/* The HDD alone takes discards: see hottier_io_hints(). */
		ti->discards_supported = true;
	}
	ti->num_write_zeroes_bios = 1;
	ti->per_io_data_size = sizeof(struct hottier_io);
}

/*
 * Construct a hottier mapping:
 * <hdd_dev> <ssd_dev> <extent_sectors> [<#args> <key> <value>...]
 *
 * Nothing is read from or written to the SSD until the table is resumed:
 * on a reload, the old table is still live.
 */
static int hottier_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct hottier *ht;
	int r;

	ht = kzalloc(sizeof(*ht), GFP_KERNEL);
	if (!ht) {
		ti->error = "Cannot allocate hottier context";
		return -ENOMEM;
	}
	ht->ti = ti;
	init_state(ht);

	r = hottier_parse_args(argc, argv, &ht->args, &ti->error);
	if (r)
		goto bad;
	ht->extent_shift = ilog2(ht->args.extent_sectors);

	r = get_devices(ht, &ti->error);
	if (r)
		goto bad;
	hottier_layout(bdev_nr_sectors(ht->ssd->bdev), ht->args.extent_sectors,
		       &ht->layout);

	r = claim_members(ht, &ti->error);
	if (r)
		goto bad;
	r = alloc_tables(ht, &ti->error);
	if (r)
		goto bad;
	r = init_migration(ht, &ti->error);
	if (r)
		goto bad;

	r = dm_set_target_max_io_len(ti, ht->args.extent_sectors);
	if (r) {
		ti->error = "Cannot set the extent size as the maximum I/O size";
		goto bad;
	}
	init_target(ht);
	/* Paths point into argv, which dm core frees after the constructor. */
	ht->args.hdd_path = NULL;
	ht->args.ssd_path = NULL;
	ti->private = ht;
	return 0;

bad:
	hottier_destroy(ht);
	return r;
}

static void hottier_dtr(struct dm_target *ti)
{
	/* dm suspends a live table before destroying it: this is a guard. */
	sysfs_remove(ti->private);
	hottier_destroy(ti->private);
}

/* Suspend and resume */

/*
 * dm core has drained the target's bios; stop starting copies, wait for
 * those in flight, and let their completions run.
 */
static void hottier_postsuspend(struct dm_target *ti)
{
	struct hottier *ht = ti->private;

	sysfs_remove(ht);
	WRITE_ONCE(ht->running, false);
	cancel_delayed_work_sync(&ht->promote_work);
	wait_event(ht->migrate_wait, !atomic_read(&ht->migrating));
	cancel_delayed_work_sync(&ht->tick_work);
	flush_workqueue(ht->wq);
}

static int promote_range(struct hottier *ht, u64 first, u64 last, bool pin);

/*
 * The start sectors of @old's pinned extents, at most @max of them. @old is
 * on the claims list (claims_lock held), so its heat table is not freed.
 */
static u32 pinned_sectors(struct hottier *old, u64 *sectors, u32 max)
{
	struct hottier_heat_set *set;
	unsigned long flags;
	u32 i, n = 0;
	int w;

	for (i = 0; i < old->heat.nr_sets && n < max; i++) {
		set = &old->heat.sets[i];
		spin_lock_irqsave(&set->lock, flags);
		for (w = 0; w < HOTTIER_HEAT_WAYS && n < max; w++) {
			struct hottier_heat_entry *e = &set->way[w];

			if ((e->flags & (HOTTIER_E_VALID | HOTTIER_E_PINNED)) ==
			    (HOTTIER_E_VALID | HOTTIER_E_PINNED))
				sectors[n++] = e->extent << old->extent_shift;
		}
		spin_unlock_irqrestore(&set->lock, flags);
	}
	return n;
}

/*
 * Pins belong to the device, not to one table. A reload's new table takes
 * them over from the old one when it resumes: dm swaps tables while the
 * device is suspended and destroys the old table only after the new one has
 * resumed. Extent sizes may differ, so pins travel as sector ranges. A
 * plain resume finds no other table of its device pinning anything.
 */
static void inherit_pins(struct hottier *ht)
{
	u32 n = 0, i, refused = 0, old_sectors = 0;
	struct hottier_claim *c;
	struct hottier *old;
	u64 *sectors = NULL;
	u64 first, last;

	mutex_lock(&claims_lock);
	list_for_each_entry(c, &claims, list) {
		if (c == &ht->claim || c->md != ht->claim.md)
			continue;
		old = container_of(c, struct hottier, claim);
		n = atomic_read(&old->pinned);
		if (!n)
			continue;
		sectors = kvmalloc_array(n, sizeof(*sectors), GFP_KERNEL);
		if (sectors) {
			n = pinned_sectors(old, sectors, n);
			old_sectors = old->args.extent_sectors;
		}
		break;
	}
	mutex_unlock(&claims_lock);
	if (!n)
		return;
	if (!sectors) {
		DMERR("%s: no memory to take over %u pinned extents",
		      dm_device_name(ht->claim.md), n);
		return;
	}

	mutex_lock(&ht->lock);
	for (i = 0; i < n; i++) {
		if (sectors[i] >= ht->ti->len)
			continue;
		first = sectors[i] >> ht->extent_shift;
		last = (min_t(u64, sectors[i] + old_sectors, ht->ti->len) - 1) >>
			ht->extent_shift;
		if (promote_range(ht, first, last, true))
			refused++;
	}
	mutex_unlock(&ht->lock);
	if (refused)
		DMWARN("%s: %u of %u pinned extents of the old table could not be pinned again",
		       dm_device_name(ht->claim.md), refused, n);
	kvfree(sectors);
}

/*
 * Called while the device is still suspended: memory allocated here (the
 * pins taken over, the sysfs directory) must not wait on I/O to it.
 */
static void hottier_resume(struct dm_target *ti)
{
	struct hottier *ht = ti->private;
	unsigned int noio = memalloc_noio_save();

	inherit_pins(ht);
	WRITE_ONCE(ht->running, true);
	qos_restart(ht);
	queue_delayed_work(ht->wq, &ht->tick_work,
			   msecs_to_jiffies(ht->args.heat_halflife_ms /
					    HOTTIER_EPOCHS_PER_HALFLIFE));
	kick_promote(ht, 0);
	sysfs_add(ht);
	memalloc_noio_restore(noio);
}

/* Status */

static void emit_args(struct hottier *ht, char *result, unsigned int maxlen,
		      unsigned int *szp)
{
	unsigned int sz = *szp;
	char value[24];
	int k;

	DMEMIT(" %d", 2 * HOTTIER_NR_KEYS);
	for (k = 0; k < HOTTIER_NR_KEYS; k++) {
		hottier_format_value(&ht->args, k, value, sizeof(value));
		DMEMIT(" %s %s", hottier_key_name(k), value);
	}
	*szp = sz;
}

/*
 * Status INFO fields, in order (Documentation/hottier.rst):
 *   <reads> <writes> <read_sectors> <write_sectors> <discards> <flushes>
 *   <ssd_flush_errors> <used_slots>/<total_slots> <read_hits> <read_misses>
 *   <promotions> <demotions> <copies_discarded> <migrations_in_flight>
 *   <pinned> <tracked> <scrub_checked> <scrub_mismatches>
 *   <ssd_latency_us> <hdd_latency_us> <replica_reads_ssd>
 *   <replica_reads_hdd> <ssd_errors> <migrations_allowed> <mode>
 *
 * Status TABLE: the table line that recreates this device, every optional
 * key with its current value.
 */
/*
 * The status INFO fields, in their order; sysfs has a file for each, the
 * slot usage as two (slots_used, slots_total), printed "used/total" in the
 * status as dm-cache does.
 */
enum hottier_field {
	HOTTIER_F_READS, HOTTIER_F_WRITES, HOTTIER_F_READ_SECTORS,
	HOTTIER_F_WRITE_SECTORS, HOTTIER_F_DISCARDS, HOTTIER_F_FLUSHES,
	HOTTIER_F_SSD_FLUSH_ERRORS, HOTTIER_F_SLOTS_USED, HOTTIER_F_SLOTS_TOTAL,
	HOTTIER_F_READ_HITS, HOTTIER_F_READ_MISSES, HOTTIER_F_PROMOTIONS,
	HOTTIER_F_DEMOTIONS, HOTTIER_F_COPIES_DISCARDED, HOTTIER_F_MIGRATIONS,
	HOTTIER_F_PINNED, HOTTIER_F_TRACKED, HOTTIER_F_SCRUB_CHECKED,
	HOTTIER_F_SCRUB_MISMATCHES, HOTTIER_F_SSD_LATENCY_US,
	HOTTIER_F_HDD_LATENCY_US, HOTTIER_F_REPLICA_READS_SSD,
	HOTTIER_F_REPLICA_READS_HDD, HOTTIER_F_SSD_ERRORS,
	HOTTIER_F_MIGRATIONS_ALLOWED, HOTTIER_F_MODE,
	HOTTIER_NR_FIELDS,
};

static const char * const field_names[HOTTIER_NR_FIELDS] = {
	"reads", "writes", "read_sectors", "write_sectors", "discards",
	"flushes", "ssd_flush_errors", "slots_used", "slots_total",
	"read_hits", "read_misses", "promotions", "demotions",
	"copies_discarded", "migrations", "pinned", "tracked",
	"scrub_checked", "scrub_mismatches", "ssd_latency_us",
	"hdd_latency_us", "replica_reads_ssd", "replica_reads_hdd",
	"ssd_errors", "migrations_allowed", "mode",
};

static u64 stat_read(struct hottier *ht, enum hottier_stat s)
{
	return atomic64_read(&ht->stats[s]);
}

static u64 lat_us(struct hottier *ht, enum hottier_route_dev dev)
{
	return div_u64(atomic64_read(&ht->lat[dev].ewma_ns), NSEC_PER_USEC);
}

/* A field's value; HOTTIER_F_MODE is 1 when degraded. */
static u64 field_value(struct hottier *ht, enum hottier_field f)
{
	switch (f) {
	case HOTTIER_F_READS ... HOTTIER_F_SSD_FLUSH_ERRORS:
		return stat_read(ht, HOTTIER_STAT_READS + (f - HOTTIER_F_READS));
	case HOTTIER_F_SLOTS_USED:
		return atomic_read(&ht->resident);
	case HOTTIER_F_SLOTS_TOTAL:
		return ht->layout.nr_slots;
	case HOTTIER_F_READ_HITS ... HOTTIER_F_COPIES_DISCARDED:
		return stat_read(ht, HOTTIER_STAT_READ_HITS +
				 (f - HOTTIER_F_READ_HITS));
	case HOTTIER_F_MIGRATIONS:
		return atomic_read(&ht->migrating);
	case HOTTIER_F_PINNED:
		return atomic_read(&ht->pinned);
	case HOTTIER_F_TRACKED:
		return atomic_read(&ht->heat.tracked);
	case HOTTIER_F_SCRUB_CHECKED:
		return READ_ONCE(ht->scrub_checked);
	case HOTTIER_F_SCRUB_MISMATCHES:
		return READ_ONCE(ht->scrub_mismatches);
	case HOTTIER_F_SSD_LATENCY_US:
		return lat_us(ht, HOTTIER_ROUTE_SSD);
	case HOTTIER_F_HDD_LATENCY_US:
		return lat_us(ht, HOTTIER_ROUTE_HDD);
	case HOTTIER_F_REPLICA_READS_SSD ... HOTTIER_F_SSD_ERRORS:
		return stat_read(ht, HOTTIER_STAT_REPLICA_READS_SSD +
				 (f - HOTTIER_F_REPLICA_READS_SSD));
	case HOTTIER_F_MIGRATIONS_ALLOWED:
		return migrations_allowed(ht);
	case HOTTIER_F_MODE:
		return is_degraded(ht);
	default:
		return 0;
	}
}

/* One field as the status and sysfs print it; returns the length. */
static int format_field(struct hottier *ht, enum hottier_field f, char *buf,
			size_t size)
{
	if (f == HOTTIER_F_MODE)
		return scnprintf(buf, size, "%s",
				 field_value(ht, f) ? "degraded" : "rw");
	return scnprintf(buf, size, "%llu",
			 (unsigned long long)field_value(ht, f));
}

static void hottier_status(struct dm_target *ti, status_type_t type,
			   unsigned int status_flags, char *result,
			   unsigned int maxlen)
{
	struct hottier *ht = ti->private;
	unsigned int sz = 0;
	char value[24];
	int f;

	switch (type) {
	case STATUSTYPE_INFO:
		for (f = 0; f < HOTTIER_NR_FIELDS; f++) {
			format_field(ht, f, value, sizeof(value));
			DMEMIT("%s%s", !f ? "" : f == HOTTIER_F_SLOTS_TOTAL ?
			       "/" : " ", value);
		}
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%s %s %llu", ht->hdd->name, ht->ssd->name,
		       (unsigned long long)ht->args.extent_sectors);
		emit_args(ht, result, maxlen, &sz);
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",hdd=%s,ssd=%s,extent_sectors=%llu,discard=%s,write_policy=%s;",
		       ht->hdd->name, ht->ssd->name,
		       (unsigned long long)ht->args.extent_sectors,
		       hottier_discard_name(ht->args.discard),
		       hottier_write_policy_name(ht->args.write_policy));
		break;
	}
}

/*
 * sysfs: /sys/block/dm-N/hottier/, a file per table key (read-write but
 * max_tracked, read-only) and per status field (read-only), plus
 * extent_sectors. The directory belongs to the live table: added at
 * resume, deleted at postsuspend, so a reload's two tables never collide
 * and a never-resumed table has none. Deleting it waits for the show and
 * store calls running; those take no lock held across a suspend (a store
 * takes ht->lock, as a message does).
 */
struct hottier_kobj {
	struct kobject kobj;
	struct hottier *ht;	/* valid while the kobject is in sysfs */
};

struct hottier_attr {
	struct attribute attr;
	int key;		/* enum hottier_key, or -1 */
	int field;		/* enum hottier_field, or -1 */
};

#define HOTTIER_EXTENT_ATTR	(HOTTIER_NR_KEYS + HOTTIER_NR_FIELDS)
static struct hottier_attr hottier_attrs[HOTTIER_EXTENT_ATTR + 1];
static struct attribute *hottier_attr_list[HOTTIER_EXTENT_ATTR + 2];
static const struct attribute_group hottier_attr_group = {
	.attrs = hottier_attr_list,
};

static const struct attribute_group *hottier_attr_groups[] = {
	&hottier_attr_group, NULL,
};

static struct hottier *kobj_ht(struct kobject *kobj)
{
	return container_of(kobj, struct hottier_kobj, kobj)->ht;
}

static ssize_t hottier_attr_show(struct kobject *kobj, struct attribute *attr,
				 char *buf)
{
	struct hottier_attr *a = container_of(attr, struct hottier_attr, attr);
	struct hottier *ht = kobj_ht(kobj);
	int n;

	if (a->key >= 0)
		n = hottier_format_value(&ht->args, a->key, buf, PAGE_SIZE - 1);
	else if (a->field >= 0)
		n = format_field(ht, a->field, buf, PAGE_SIZE - 1);
	else
		n = scnprintf(buf, PAGE_SIZE - 1, "%llu",
			      (unsigned long long)ht->args.extent_sectors);
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

/* As the "<key> <value>" message: a bad value is refused, nothing kept. */
static ssize_t hottier_attr_store(struct kobject *kobj, struct attribute *attr,
				  const char *buf, size_t len)
{
	struct hottier_attr *a = container_of(attr, struct hottier_attr, attr);
	struct hottier *ht = kobj_ht(kobj);
	char value[32], *error = NULL;
	int r;

	if (a->key < 0)
		return -EPERM;
	if (len >= sizeof(value))
		return -EINVAL;
	memcpy(value, buf, len);
	value[len] = '\0';
	strim(value);
	mutex_lock(&ht->lock);
	r = hottier_set_key(&ht->args, attr->name, value, true, &error);
	mutex_unlock(&ht->lock);
	if (r) {
		DMERR("%s: sysfs %s %s: %s", ht_name(ht), attr->name, value,
		      error);
		return r;
	}
	kick_promote(ht, 0);
	return len;
}

static const struct sysfs_ops hottier_sysfs_ops = {
	.show = hottier_attr_show,
	.store = hottier_attr_store,
};

static void hottier_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct hottier_kobj, kobj));
}

static const struct kobj_type hottier_ktype = {
	.sysfs_ops = &hottier_sysfs_ops,
	.default_groups = hottier_attr_groups,
	.release = hottier_kobj_release,
};

/* Names and modes of the files, from the key and field tables. */
static void init_attrs(void)
{
	struct hottier_attr *a;
	int i;

	for (i = 0; i <= HOTTIER_EXTENT_ATTR; i++) {
		a = &hottier_attrs[i];
		a->key = i < HOTTIER_NR_KEYS ? i : -1;
		a->field = a->key < 0 && i < HOTTIER_EXTENT_ATTR ?
			   i - HOTTIER_NR_KEYS : -1;
		if (a->key >= 0) {
			a->attr.name = hottier_key_name(i);
			a->attr.mode = hottier_key_table_only(i) ? 0444 : 0644;
		} else {
			a->attr.name = a->field >= 0 ? field_names[a->field] :
				       "extent_sectors";
			a->attr.mode = 0444;
		}
		hottier_attr_list[i] = &a->attr;
	}
	hottier_attr_list[HOTTIER_EXTENT_ATTR + 1] = NULL;
}

static void sysfs_add(struct hottier *ht)
{
	struct gendisk *disk = dm_disk(dm_table_get_md(ht->ti->table));
	struct hottier_kobj *hk = kzalloc(sizeof(*hk), GFP_KERNEL);
	int r;

	if (!hk) {
		DMERR("%s: no memory for the sysfs directory", ht_name(ht));
		return;
	}
	hk->ht = ht;
	r = kobject_init_and_add(&hk->kobj, &hottier_ktype,
				 &disk_to_dev(disk)->kobj, "hottier");
	if (r) {
		DMERR("%s: sysfs directory not added: error %d", ht_name(ht), r);
		kobject_put(&hk->kobj);
		return;
	}
	ht->sysfs = hk;
}

/* Returns once no show or store runs; the memory goes with the last put. */
static void sysfs_remove(struct hottier *ht)
{
	if (!ht->sysfs)
		return;
	kobject_del(&ht->sysfs->kobj);
	kobject_put(&ht->sysfs->kobj);
	ht->sysfs = NULL;
}

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
		__drop_replica(ht, e, false);
}

static void unpin_one(struct hottier *ht, struct hottier_heat_entry *e)
{
	if (e->flags & HOTTIER_E_PINNED) {
		e->flags &= ~HOTTIER_E_PINNED;
		atomic_dec(&ht->pinned);
	}
}

/*
 * promote: raise each extent's heat to the threshold and queue it; pin:
 * the same, and the extents are never evicted. Refused (-ENOSPC) when the
 * extents cannot all be tracked or pinned extents would outnumber slots;
 * a refused pin leaves nothing pinned.
 */
static int promote_range(struct hottier *ht, u64 first, u64 last, bool pin)
{
	u32 threshold = threshold_heat(ht);
	struct hottier_heat_entry *e;
	struct hottier_heat_set *set;
	unsigned long flags;
	u64 extent;

	if (last - first >= ht->layout.nr_slots ||
	    (pin && atomic_read(&ht->pinned) + (last - first + 1) >
	     ht->layout.nr_slots))
		return -ENOSPC;

	for (extent = first; extent <= last; extent++) {
		set = hottier_heat_lock(&ht->heat, extent, &flags);
		e = __hottier_heat_get(&ht->heat, set, extent, threshold);
		if (!e) {
			hottier_heat_unlock(set, flags);
			if (pin && extent > first)
				apply_in_range(ht, first, extent - 1, unpin_one);
			return -ENOSPC;
		}
		if (__hottier_heat_read(&ht->heat, e) < threshold)
			e->heat = threshold;
		if (pin && !(e->flags & HOTTIER_E_PINNED)) {
			e->flags |= HOTTIER_E_PINNED;
			atomic_inc(&ht->pinned);
		}
		if (!(e->flags & (HOTTIER_E_RESIDENT | HOTTIER_E_COPYING)))
			e->flags |= HOTTIER_E_WANTED | HOTTIER_E_ASKED;
		if (!__post_candidate(ht, e))
			WRITE_ONCE(ht->wanted, true);
		hottier_heat_unlock(set, flags);
	}
	return 0;
}

/* Drop every replica, and make copies in flight drop theirs. */
static void invalidate(struct hottier *ht)
{
	atomic_inc(&ht->invalidations);
	apply_in_range(ht, 0, U64_MAX - 1, drop_any);
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
		slot_get(ht, slot);
		hottier_heat_unlock(set, flags);

		wt = wtrack_of(ht, extent);
		spin_lock_irqsave(&wt->lock, flags);
		quiet = !wt->inflight;
		gen = wt->gen;
		spin_unlock_irqrestore(&wt->lock, flags);

		r = quiet ? compare_extent(ht, extent, slot, a, b) : -EAGAIN;

		spin_lock_irqsave(&wt->lock, flags);
		quiet = !wt->inflight && wt->gen == gen;
		spin_unlock_irqrestore(&wt->lock, flags);
		slot_put(ht, slot);
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
		return promote_range(ht, first, last, false);
	if (!strcasecmp(verb, "pin"))
		return promote_range(ht, first, last, true);
	if (!strcasecmp(verb, "demote")) {
		apply_in_range(ht, first, last, demote_one);
		return 0;
	}
	if (!strcasecmp(verb, "unpin")) {
		apply_in_range(ht, first, last, unpin_one);
		return 0;
	}
	return -EINVAL;
}

static int hottier_message(struct dm_target *ti, unsigned int argc,
			   char **argv, char *result, unsigned int maxlen)
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

/* Each member is reported with its own length: the SSD is not the HDD. */
static int hottier_iterate_devices(struct dm_target *ti,
				   iterate_devices_callout_fn fn, void *data)
{
	struct hottier *ht = ti->private;
	int r;

	r = fn(ti, ht->hdd, 0, ti->len, data);
	if (r)
		return r;
	return fn(ti, ht->ssd, 0, bdev_nr_sectors(ht->ssd->bdev), data);
}

/*
 * Both members are stacked into the limits (reads will go to the SSD), but
 * discards go to the HDD alone: its discard limits apply, whatever the SSD
 * supports.
 */
static void hottier_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct hottier *ht = ti->private;
	struct block_device *hdd = ht->hdd->bdev;

	if (ht->args.discard == HOTTIER_DISCARD_PASSDOWN)
		hottier_limits_set_discard(limits, bdev_max_discard_sectors(hdd),
					   bdev_discard_granularity(hdd));
	else
		hottier_limits_set_discard(limits, 0, 0);
}

static struct target_type hottier_target = {
	.name = "hottier",
	.version = {0, 3, 0},
	.features = DM_TARGET_SINGLETON,
	.module = THIS_MODULE,
	.ctr = hottier_ctr,
	.dtr = hottier_dtr,
	.map = hottier_map,
	.end_io = hottier_end_io,
	.postsuspend = hottier_postsuspend,
	.resume = hottier_resume,
	.status = hottier_status,
	.message = hottier_message,
	.iterate_devices = hottier_iterate_devices,
	.io_hints = hottier_io_hints,
};

static int __init dm_hottier_init(void)
{
	int r;

	init_attrs();
	r = dm_register_target(&hottier_target);

	if (r)
		DMERR("register failed %d", r);
	return r;
}

static void __exit dm_hottier_exit(void)
{
	dm_unregister_target(&hottier_target);
}

module_init(dm_hottier_init);
module_exit(dm_hottier_exit);

MODULE_DESCRIPTION(DM_NAME " hot-extent SSD tiering target");
MODULE_AUTHOR("dm-hottier developers");
MODULE_LICENSE("GPL");
