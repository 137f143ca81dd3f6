// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: comparing replicas with the HDD. The scrub message compares
 * every replica in a worker; the on-SSD map's takeover compares intents
 * and map_verify's sample (dm-hottier-persist.c) with the same helpers.
 */
#include "dm-hottier.h"

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

/* The two buffers hottier_compare_extent() reads into, or -ENOMEM. */
int hottier_compare_alloc(struct page **a, struct page **b)
{
	unsigned int order = get_order(HOTTIER_SCRUB_CHUNK);

	*a = alloc_pages(GFP_KERNEL, order);
	*b = alloc_pages(GFP_KERNEL, order);
	if (*a && *b)
		return 0;
	hottier_compare_free(*a, *b);
	*a = NULL;
	*b = NULL;
	return -ENOMEM;
}

void hottier_compare_free(struct page *a, struct page *b)
{
	unsigned int order = get_order(HOTTIER_SCRUB_CHUNK);

	if (a)
		__free_pages(a, order);
	if (b)
		__free_pages(b, order);
}

/*
 * Compare a replica with its HDD extent, through @a and @b (pages of
 * HOTTIER_SCRUB_CHUNK): 1 if they differ, 0 if not, < 0 if a read failed.
 */
int hottier_compare_extent(struct hottier *ht, u64 extent, u32 slot,
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
 * A replica that differs from the HDD is dropped at once, pinned or not
 * (a pinned one is copied again): it must never serve a read. Returns 1
 * for a mismatch, 0 for a match or no replica, -EBUSY if writes never
 * left it alone.
 */
static void drop_mismatch(struct hottier *ht, u32 slot, u64 extent)
{
	DMERR_LIMIT("%s: scrub: the replica of extent %llu differs from the HDD: dropped",
		    ht_name(ht), (unsigned long long)extent);
	hottier_drop_replica(ht, slot, extent);
}

static int scrub_slot(struct hottier *ht, u32 slot, struct page *a,
		      struct page *b)
{
	struct hottier_mslot *s = hottier_mslot(&ht->map, slot);
	struct hottier_wtrack *wt;
	unsigned long flags;
	unsigned int gen;
	struct hottier_mlock *lock;
	int tries, r;
	bool quiet;
	u64 extent;

	for (tries = 0; tries < HOTTIER_SCRUB_TRIES; tries++) {
		extent = hottier_mslot_extent(s);
		lock = hottier_map_lock(&ht->map, extent, &flags);
		if (hottier_mslot_state(s) != HOTTIER_S_RESIDENT ||
		    hottier_mslot_extent(s) != extent) {
			hottier_map_unlock(lock, flags);
			return 0;
		}
		hottier_slot_get(ht, slot);
		hottier_map_unlock(lock, flags);

		wt = hottier_wtrack_of(ht, extent);
		spin_lock_irqsave(&wt->lock, flags);
		quiet = !wt->inflight;
		gen = wt->gen;
		spin_unlock_irqrestore(&wt->lock, flags);

		r = quiet ? hottier_compare_extent(ht, extent, slot, a, b) :
			    -EAGAIN;

		spin_lock_irqsave(&wt->lock, flags);
		quiet = !wt->inflight && wt->gen == gen;
		spin_unlock_irqrestore(&wt->lock, flags);
		hottier_slot_put(ht, slot);
		if (r >= 0 && quiet) {
			WRITE_ONCE(ht->scrub_checked, ht->scrub_checked + 1);
			if (r)
				drop_mismatch(ht, slot, extent);
			return r;
		}
		if (r < 0 && r != -EAGAIN)
			return r;
		msleep(HOTTIER_RETRY_MS);
	}
	return -EBUSY;
}

static const char * const scrub_state_names[HOTTIER_NR_SCRUB_STATES] = {
	[HOTTIER_SCRUB_IDLE] = "idle",
	[HOTTIER_SCRUB_RUNNING] = "running",
	[HOTTIER_SCRUB_DONE] = "done",
	[HOTTIER_SCRUB_BUSY] = "busy",
	[HOTTIER_SCRUB_ERROR] = "error",
	[HOTTIER_SCRUB_STOPPED] = "stopped",
};

const char *hottier_scrub_state_name(int state)
{
	return scrub_state_names[state];
}

/*
 * The scrub, in a worker: every slot's replica compared with its HDD
 * extent, the progress in the status (scrub_slots of slots_total), and an
 * event when it ends. Messages, sysfs and I/O go on meanwhile.
 */
static void do_scrub(struct work_struct *ws)
{
	struct hottier *ht = container_of(ws, struct hottier, scrub_work);
	int state = HOTTIER_SCRUB_DONE, r;
	struct page *a, *b;
	u32 slot;

	if (hottier_compare_alloc(&a, &b)) {
		state = HOTTIER_SCRUB_ERROR;
		goto out;
	}
	for (slot = 0; slot < ht->map.nr_slots; slot++) {
		if (READ_ONCE(ht->scrub_stop)) {
			state = HOTTIER_SCRUB_STOPPED;
			break;
		}
		r = scrub_slot(ht, slot, a, b);
		if (r < 0) {
			state = r == -EBUSY ? HOTTIER_SCRUB_BUSY :
					      HOTTIER_SCRUB_ERROR;
			DMERR("%s: scrub stopped at slot %u: error %d",
			      ht_name(ht), slot, r);
			break;
		}
		WRITE_ONCE(ht->scrub_mismatches, ht->scrub_mismatches + r);
		WRITE_ONCE(ht->scrub_slots, slot + 1);
		cond_resched();
	}
out:
	hottier_compare_free(a, b);
	/* Who reads the state as ended sees the counters as they ended. */
	smp_store_release(&ht->scrub_state, state);
	dm_table_event(ht->ti->table);
}

/* "scrub": starts the scrub; -EBUSY while one runs. */
int hottier_scrub_start(struct hottier *ht)
{
	if (READ_ONCE(ht->scrub_state) == HOTTIER_SCRUB_RUNNING)
		return -EBUSY;
	WRITE_ONCE(ht->scrub_checked, 0);
	WRITE_ONCE(ht->scrub_mismatches, 0);
	WRITE_ONCE(ht->scrub_slots, 0);
	WRITE_ONCE(ht->scrub_stop, false);
	WRITE_ONCE(ht->scrub_state, HOTTIER_SCRUB_RUNNING);
	queue_work(ht->wq, &ht->scrub_work);
	return 0;
}

void hottier_scrub_init(struct hottier *ht)
{
	INIT_WORK(&ht->scrub_work, do_scrub);
	ht->scrub_state = HOTTIER_SCRUB_IDLE;
}

/* At suspend: a running scrub stops (state "stopped") before this returns. */
void hottier_scrub_stop(struct hottier *ht)
{
	WRITE_ONCE(ht->scrub_stop, true);
	cancel_work_sync(&ht->scrub_work);
	if (READ_ONCE(ht->scrub_state) == HOTTIER_SCRUB_RUNNING)
		WRITE_ONCE(ht->scrub_state, HOTTIER_SCRUB_STOPPED);
}
