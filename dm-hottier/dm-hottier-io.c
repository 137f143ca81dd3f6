// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: the data path. map sends a read to the replica or the HDD
 * (routing by measured latency), a write to the HDD and, through, to the
 * replica; end_io samples latency, retries a failed read on the other
 * member and ends write-throughs. Writes are tracked per bucket of extents so a
 * copy that overlapped one is never installed.
 */
#include "dm-hottier.h"

static void raise_event(struct work_struct *ws)
{
	struct hottier *ht = container_of(ws, struct hottier, event_work);

	dm_table_event(ht->ti->table);
}

/*
 * An HDD I/O ended with @error or not: the first failure after a success
 * raises a dm event and logs a line, so that dmeventd and an administrator
 * learn that the pool fails (a pool gone, a link down) while replicas
 * still serve reads; a success ends the outage.
 */
static void hdd_done(struct hottier *ht, blk_status_t error)
{
	if (likely(!error)) {
		if (unlikely(test_bit(HOTTIER_HDD_FAILING, &ht->mode)))
			clear_bit(HOTTIER_HDD_FAILING, &ht->mode);
		return;
	}
	if (test_and_set_bit(HOTTIER_HDD_FAILING, &ht->mode))
		return;
	DMERR_LIMIT("%s: the HDD fails I/O (error %d); replicas serve reads",
		    ht_name(ht), blk_status_to_errno(error));
	queue_work(ht->wq, &ht->event_work);
}

/* @now: the time if the caller read the clock already, else 0. */
static void start_read(struct hottier *ht, struct hottier_io *io,
		       enum hottier_route_dev dev, u64 now)
{
	struct hottier_lat *l = &ht->lat[dev];
	unsigned long tick = jiffies;

	io->dev = dev;
	if (!hottier_lat_timed(dev == HOTTIER_ROUTE_HDD &&
			       READ_ONCE(ht->args.migration_budget_us), tick,
			       this_cpu_read(ht->stats->lat_jiffies[dev]))) {
		io->start_ns = 0;
		hottier_lat_start_untimed(l);
		return;
	}
	this_cpu_write(ht->stats->lat_jiffies[dev], tick);
	io->start_ns = now ?: ktime_get_ns();
	hottier_lat_start(l, io->start_ns);
}

/* Where a read of a replicated extent goes; *@now: the clock, if read. */
static enum hottier_route_dev route_read(struct hottier *ht, u64 *now)
{
	enum hottier_routing mode = READ_ONCE(ht->args.routing);

	if (mode == HOTTIER_ROUTING_SSD)
		return HOTTIER_ROUTE_SSD;
	*now = ktime_get_ns();
	return hottier_route(mode, &ht->lat[HOTTIER_ROUTE_SSD],
			     &ht->lat[HOTTIER_ROUTE_HDD], *now);
}

/* Probes */

static void probe_endio(struct bio *bio)
{
	struct hottier_probe *p = bio->bi_private;

	hottier_lat_done(&p->ht->lat[p->dev], p->start_ns, ktime_get_ns(),
			 !bio->bi_status);
	bio_uninit(bio);
	clear_bit_unlock(0, &p->busy);
	wake_up_var(&p->busy);
}

/*
 * Submitted from a work item: a member whose queue blocks its submitter
 * (nbd on 6.12 while it waits for a reconnect) blocks a worker, never a
 * reader.
 */
static void do_probe(struct work_struct *ws)
{
	struct hottier_probe *p = container_of(ws, struct hottier_probe, work);
	struct hottier *ht = p->ht;
	struct block_device *bdev = p->dev == HOTTIER_ROUTE_SSD ?
		ht->ssd->bdev : ht->hdd->bdev;
	unsigned int lbs = bdev_logical_block_size(bdev);

	bio_init(&p->bio, bdev, &p->bvec, 1, REQ_OP_READ);
	p->bio.bi_iter.bi_sector = round_down(p->sector, lbs >> SECTOR_SHIFT);
	__bio_add_page(&p->bio, p->page, lbs, 0);
	p->bio.bi_end_io = probe_endio;
	p->bio.bi_private = p;
	p->start_ns = ktime_get_ns();
	submit_bio(&p->bio);
}

/*
 * Under routing latency, a replica read sent to one member at @now may
 * find the other one due for a probe (hottier_probe_due()): a read of
 * @sector there, the block the caller's read would have read, whose data
 * is not used.
 */
static void maybe_probe(struct hottier *ht, enum hottier_route_dev dev,
			sector_t sector, u64 now)
{
	struct hottier_probe *p = ht->probe[dev];

	if (!now || !hottier_probe_due(&ht->lat[dev], now) ||
	    test_and_set_bit_lock(0, &p->busy))
		return;
	p->sector = sector;
	hottier_lat_start(&ht->lat[dev], now);
	queue_work(ht->wq, &p->work);
}

/* Write tracking */

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
		wtrack_adjust(hottier_wtrack_of(ht, e), delta);
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

/*
 * An empty flush goes to the HDD alone. The SSD holds only clean replicas,
 * and the on-SSD map flushes its own writes: a commit writes its records
 * with PREFLUSH, and a replica written through since its record was
 * written is an intent, compared with the HDD after a crash. So nothing a
 * caller's fsync promises needs the SSD's cache, and a slow or dying SSD
 * never stalls one. While a commit of the map is due, the flush is held
 * for it: the commit's HDD flush ends it (hottier_persist_ride()).
 */
static int map_flush(struct hottier *ht, struct bio *bio)
{
	stat_add(ht, HOTTIER_STAT_FLUSHES, 1);
	if (hottier_persist_ride(ht, bio))
		return DM_MAPIO_SUBMITTED;
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
 * A read of a replicated extent goes to the member routing picks, and heats
 * the replica's slot; any other read goes to the HDD and is offered to the
 * policy as a miss. A sequential stream past the cutoff heats each extent
 * once per pass (hottier_seq_read()). A read that continues no stream is
 * counted for the turnover detector, with its hit.
 */
static int map_read(struct hottier *ht, struct bio *bio, struct hottier_io *io)
{
	sector_t offset = dm_target_offset(ht->ti, bio->bi_iter.bi_sector);
	u64 extent = offset >> ht->extent_shift;
	u64 cutoff = (u64)READ_ONCE(ht->args.sequential_cutoff_kb) * 2;
	struct hottier_map *m = &ht->map;
	unsigned long flags;
	struct hottier_mlock *lock;
	bool heats, fresh;
	u64 now = 0;
	u32 slot;

	io->iter = bio->bi_iter;
	io->bi_flags = bio->bi_flags;
	heats = hottier_seq_read(&ht->seq, offset, bio_sectors(bio), cutoff,
				 ht->extent_shift, &fresh);
	if (fresh)
		stat_add(ht, HOTTIER_STAT_FRESH_READS, 1);
	lock = hottier_map_lock(m, extent, &flags);
	slot = __hottier_map_find(m, extent);
	if (slot != HOTTIER_NIL && !is_degraded(ht) &&
	    hottier_mslot_state(hottier_mslot(m, slot)) ==
	    HOTTIER_S_RESIDENT) {
		if (heats)
			__hottier_policy_hit(&ht->policy, slot);
		stat_add(ht, HOTTIER_STAT_READ_HITS, 1);
		if (fresh)
			stat_add(ht, HOTTIER_STAT_FRESH_HITS, 1);
		if (route_read(ht, &now) == HOTTIER_ROUTE_SSD) {
			io->slot = slot;
			hottier_map_get(m, slot);
			hottier_map_unlock(lock, flags);
			stat_add(ht, HOTTIER_STAT_REPLICA_READS_SSD, 1);
			remap_ssd(ht, bio, offset, slot);
			start_read(ht, io, HOTTIER_ROUTE_SSD, now);
			maybe_probe(ht, HOTTIER_ROUTE_HDD, offset, now);
			return DM_MAPIO_REMAPPED;
		}
		hottier_map_unlock(lock, flags);
		stat_add(ht, HOTTIER_STAT_REPLICA_READS_HDD, 1);
		remap_hdd(ht, bio, offset);
		start_read(ht, io, HOTTIER_ROUTE_HDD, now);
		/* The slot may be reused by then: any block of it times the SSD. */
		maybe_probe(ht, HOTTIER_ROUTE_SSD, slot_sector(ht, slot) +
			    (offset & (ht->args.extent_sectors - 1)), now);
		return DM_MAPIO_REMAPPED;
	}
	hottier_map_unlock(lock, flags);
	stat_add(ht, HOTTIER_STAT_READ_MISSES, 1);
	if (!is_degraded(ht) && hottier_policy_miss(&ht->policy, extent, !heats))
		kick_promote(ht, 0);
	remap_hdd(ht, bio, offset);
	start_read(ht, io, HOTTIER_ROUTE_HDD, 0);
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
	/* Nobody polls this clone: it must complete by interrupt. */
	bio_clear_polled(clone);
	clone->bi_end_io = ssd_write_endio;
	clone->bi_private = bio;
	bio_inc_remaining(bio);
	submit_bio_noacct(clone);
}

/* The write-throughs in flight to extents of @lock (ht->wt_cells). */
static struct hlist_head *wt_cells(struct hottier *ht,
				   struct hottier_mlock *lock)
{
	return &ht->wt_cells[lock - ht->map.locks];
}

/* A write-through to @slot in flight over [start, end), or NULL; locked. */
static struct hottier_io *__wt_overlap(struct hlist_head *cells, u32 slot,
				       sector_t start, sector_t end)
{
	struct hottier_io *c;

	hlist_for_each_entry(c, cells, cell)
		if (c->slot == slot && c->cell_start < end &&
		    start < c->cell_end)
			return c;
	return NULL;
}

/*
 * A write goes to the HDD; to a replicated extent, also to the SSD
 * (through), after the write-throughs in flight that it overlaps (it
 * waits in its cell's list), or it drops the replica first (around).
 * The first write to a recorded replica holds the whole extent until it
 * ends: no other write may reach the HDD before its record is an intent.
 * Queued writes come back here from redispatch_work.
 */
static int map_write(struct hottier *ht, struct bio *bio, struct hottier_io *io)
{
	sector_t offset = dm_target_offset(ht->ti, bio->bi_iter.bi_sector);
	u64 extent = offset >> ht->extent_shift;
	struct hottier_map *m = &ht->map;
	struct hottier_mslot *s;
	unsigned long flags;
	struct hottier_mlock *lock;
	struct hottier_io *busy;
	bool pinned, recorded;
	sector_t start, end;
	u32 slot;

	if (!io->counted) {
		io->first = extent;
		io->last = extent;
		io->counted = true;
		wtrack_range(ht, extent, extent, 1);
		/* Copies must not slow a writer either (migration QoS). */
		if (READ_ONCE(ht->args.migration_budget_us))
			io->start_ns = ktime_get_ns();
	}

	lock = hottier_map_lock(m, extent, &flags);
	slot = __hottier_map_find(m, extent);
	s = slot == HOTTIER_NIL ? NULL : hottier_mslot(m, slot);
	if (!s || hottier_mslot_state(s) != HOTTIER_S_RESIDENT) {
		if (!lock->dropping)
			goto hdd;
		/*
		 * A replica of an extent of this lock, maybe this one, was
		 * dropped and its record is not invalidated yet: the HDD is
		 * written after it is.
		 */
		hottier_map_unlock(lock, flags);
		remap_hdd(ht, bio, offset);
		hottier_rec_defer(ht, bio, HOTTIER_NIL);
		return DM_MAPIO_SUBMITTED;
	}
	/*
	 * Degraded: replicas go stale and are dropped by ssd_reset; a
	 * recorded one waits for the SSD's map to be invalidated.
	 */
	if (is_degraded(ht)) {
		if (!hottier_recorded(ht, s))
			goto hdd;
		hottier_map_unlock(lock, flags);
		remap_hdd(ht, bio, offset);
		hottier_rec_defer(ht, bio, HOTTIER_NIL);
		return DM_MAPIO_SUBMITTED;
	}
	if (READ_ONCE(ht->args.write_policy) == HOTTIER_WRITE_AROUND) {
		recorded = __hottier_replica_remove(ht, lock, slot, &pinned);
		hottier_map_unlock(lock, flags);
		remap_hdd(ht, bio, offset);
		if (!hottier_replica_dropped(ht, slot, pinned, recorded))
			return DM_MAPIO_REMAPPED;
		/* The HDD is written after the record is invalidated. */
		hottier_rec_defer(ht, bio, HOTTIER_NIL);
		return DM_MAPIO_SUBMITTED;
	}
	recorded = READ_ONCE(ht->records_live) &&
		   (hottier_mslot_rec(s) & HOTTIER_MR_REC);
	start = recorded ? extent_first_sector(ht, extent) : offset;
	end = recorded ? start + extent_len(ht, extent) :
			 offset + bio_sectors(bio);
	busy = __wt_overlap(wt_cells(ht, lock), slot, start, end);
	if (busy) {
		bio_list_add(&busy->waiters, bio);
		hottier_map_unlock(lock, flags);
		return DM_MAPIO_SUBMITTED;
	}
	io->cell_start = start;
	io->cell_end = end;
	bio_list_init(&io->waiters);
	hlist_add_head(&io->cell, wt_cells(ht, lock));
	__hottier_mslot_set_flags(s, HOTTIER_SF_WRITING, 0);
	io->write_through = true;
	io->slot = slot;
	hottier_map_get(m, slot);
	if (recorded) {
		/*
		 * The first write to a recorded replica: its record becomes
		 * an intent first (an activation after a crash compares it).
		 */
		__hottier_mslot_set_rec(s, HOTTIER_MR_INTENT,
					HOTTIER_MR_REC | HOTTIER_MR_PEND);
		hottier_map_unlock(lock, flags);
		io->inval_wt = true;
		hottier_rec_defer(ht, bio, slot);
		return DM_MAPIO_SUBMITTED;
	}
	/* Recorded at a commit only if no write comes before. */
	__hottier_mslot_set_rec(s, 0, HOTTIER_MR_PEND);
	hottier_map_unlock(lock, flags);
	submit_ssd_write(ht, bio, offset, slot);
	remap_hdd(ht, bio, offset);
	return DM_MAPIO_REMAPPED;

hdd:
	hottier_map_unlock(lock, flags);
	remap_hdd(ht, bio, offset);
	return DM_MAPIO_REMAPPED;
}

/*
 * Discards and write-zeroes may span many extents: their replicas are
 * dropped (pinned ones too: they are copied again) before the HDD gets
 * them. A short range is done here; a longer one waits for range_work,
 * which may sleep, so map never walks the map.
 */
static int map_range(struct hottier *ht, struct bio *bio, struct hottier_io *io)
{
	sector_t offset = dm_target_offset(ht->ti, bio->bi_iter.bi_sector);
	unsigned long flags;
	bool wait = false;
	u64 extent;

	io->first = offset >> ht->extent_shift;
	io->last = (offset + bio_sectors(bio) - 1) >> ht->extent_shift;
	io->counted = true;
	wtrack_range(ht, io->first, io->last, 1);
	remap_hdd(ht, bio, offset);
	/*
	 * Even with no replica left, an extent may have a record being
	 * invalidated (drop_slot() says so): no shortcut.
	 */
	if (io->last - io->first < HOTTIER_DROP_WALK) {
		for (extent = io->first; extent <= io->last; extent++)
			if (hottier_drop_extent(ht, extent, true) > 1)
				wait = true;
		if (!wait)
			return DM_MAPIO_REMAPPED;
		/* The HDD gets it once the records are invalidated. */
		hottier_rec_defer(ht, bio, HOTTIER_NIL);
		return DM_MAPIO_SUBMITTED;
	}
	spin_lock_irqsave(&ht->deferred_lock, flags);
	bio_list_add(&ht->deferred, bio);
	spin_unlock_irqrestore(&ht->deferred_lock, flags);
	queue_work(ht->wq, &ht->range_work);
	return DM_MAPIO_SUBMITTED;
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

/* Long discards and write-zeroes: drop their replicas, then send them. */
static void do_ranges(struct work_struct *ws)
{
	struct hottier *ht = container_of(ws, struct hottier, range_work);
	struct bio_list bios;
	struct bio *bio;

	take_bios(&ht->deferred_lock, &ht->deferred, &bios);
	while ((bio = bio_list_pop(&bios))) {
		struct hottier_io *io = dm_per_bio_data(bio, sizeof(*io));

		/* An extent the walk found no replica of may have one too. */
		if (hottier_drop_range(ht, io->first, io->last, true) ||
		    hottier_map_any_dropping(&ht->map))
			hottier_rec_defer(ht, bio, HOTTIER_NIL);
		else
			dm_submit_bio_remap(bio, NULL);
	}
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
int hottier_map(struct dm_target *ti, struct bio *bio)
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
	io->slot = HOTTIER_NIL;
	io->ssd_status = BLK_STS_OK;
	io->inval_wt = false;
	io->dev = -1;
	io->retried = false;
	io->unsent = false;
	io->start_ns = 0;
	if (io->flush)
		return map_flush(ht, bio);

	account_bio(ht, bio);
	/* The SSD this table waits for may hold replicas this changes. */
	if (unlikely(!ht->ssd) && bio_op(bio) != REQ_OP_READ &&
	    !READ_ONCE(ht->claim.hdd_written))
		WRITE_ONCE(ht->claim.hdd_written, true);

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return map_read(ht, bio, io);
	case REQ_OP_WRITE:
		return map_write(ht, bio, io);
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		return map_range(ht, bio, io);
	default:
		/*
		 * Not offered by the target: passed on untracked, it could
		 * change the HDD under a replica.
		 */
		DMERR_LIMIT("%s: unsupported bio operation %u", ht_name(ht),
			    bio_op(bio));
		return DM_MAPIO_KILL;
	}
}

/*
 * Both halves of a write-through are done: a failure of either drops the
 * replica (it must never differ from the HDD), and the writes waiting for
 * this one may go. The slot is still referenced by @io.
 */
static void end_write_through(struct hottier *ht, struct hottier_io *io,
			      blk_status_t error)
{
	struct hottier_mslot *s = hottier_mslot(&ht->map, io->slot);
	bool dropped = false, recorded = false, pinned;
	struct bio_list waiting;
	unsigned long flags;
	struct hottier_mlock *lock;

	if (io->ssd_status)
		hottier_ssd_error(ht);
	/* io->first: the extent written, whatever the slot holds by now. */
	lock = hottier_map_lock(&ht->map, io->first, &flags);
	hlist_del(&io->cell);
	if (!__wt_overlap(wt_cells(ht, lock), io->slot, 0, ht->ti->len))
		__hottier_mslot_set_flags(s, 0, HOTTIER_SF_WRITING);
	if ((error || io->ssd_status) &&
	    hottier_mslot_state(s) == HOTTIER_S_RESIDENT &&
	    __hottier_map_find(&ht->map, io->first) == io->slot) {
		recorded = __hottier_replica_remove(ht, lock, io->slot,
						    &pinned);
		dropped = true;
	}
	/* Under the extent's lock: no new waiter joins meanwhile. */
	waiting = io->waiters;
	hottier_map_unlock(lock, flags);
	/* Recorded (an intent): its slot goes after the invalidation. */
	if (dropped)
		hottier_replica_dropped(ht, io->slot, pinned, recorded);

	if (!bio_list_empty(&waiting)) {
		spin_lock_irqsave(&ht->redispatch_lock, flags);
		bio_list_merge(&ht->redispatch, &waiting);
		spin_unlock_irqrestore(&ht->redispatch_lock, flags);
		queue_work(ht->wq, &ht->redispatch_work);
	}
}

/*
 * The I/O that waited for invalidations of the on-SSD map's records (from
 * the invalidation worker): sent, or failed with @status. A write-through
 * that waited to unrecord its replica starts both halves now.
 */
static void io_invalidated(struct hottier *ht, struct bio_list *bios,
			   blk_status_t status)
{
	struct bio *bio;

	while ((bio = bio_list_pop(bios))) {
		struct hottier_io *io = dm_per_bio_data(bio, sizeof(*io));
		sector_t offset;

		if (status) {
			io->unsent = true;
			bio->bi_status = status;
			bio_endio(bio);
			continue;
		}
		if (io->inval_wt) {
			offset = dm_target_offset(ht->ti,
						  bio->bi_iter.bi_sector);
			submit_ssd_write(ht, bio, offset, io->slot);
			remap_hdd(ht, bio, offset);
		}
		dm_submit_bio_remap(bio, NULL);
	}
}

/*
 * Failed reads are sent again from retry_work, once: to the SSD if the
 * read holds a reference to a replica's slot (take_replica()), else to the
 * HDD.
 */
static void do_retry(struct work_struct *ws)
{
	struct hottier *ht = container_of(ws, struct hottier, retry_work);
	struct bio_list bios;
	struct bio *bio;
	sector_t offset;

	take_bios(&ht->retry_lock, &ht->retry, &bios);

	while ((bio = bio_list_pop(&bios))) {
		struct hottier_io *io = dm_per_bio_data(bio, sizeof(*io));

		bio->bi_iter = io->iter;
		bio->bi_flags = io->bi_flags;
		bio->bi_status = BLK_STS_OK;
		offset = dm_target_offset(ht->ti, bio->bi_iter.bi_sector);
		stat_add(ht, HOTTIER_STAT_READ_RETRIES, 1);
		if (io->slot != HOTTIER_NIL) {
			remap_ssd(ht, bio, offset, io->slot);
			start_read(ht, io, HOTTIER_ROUTE_SSD, 0);
		} else {
			remap_hdd(ht, bio, offset);
			start_read(ht, io, HOTTIER_ROUTE_HDD, 0);
		}
		dm_submit_bio_remap(bio, NULL);
	}
}

/*
 * A read of @io's extent failed on the HDD: if the extent has a replica the
 * SSD serves, @io takes a reference to its slot, for a retry there. The
 * replica is as good as at map time: a write since either updated it or
 * dropped it.
 */
static bool take_replica(struct hottier *ht, struct hottier_io *io)
{
	sector_t offset = dm_target_offset(ht->ti, io->iter.bi_sector);
	struct hottier_map *m = &ht->map;
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 slot;

	if (is_degraded(ht))
		return false;
	lock = hottier_map_lock(m, offset >> ht->extent_shift, &flags);
	slot = __hottier_map_find(m, offset >> ht->extent_shift);
	if (slot != HOTTIER_NIL &&
	    hottier_mslot_state(hottier_mslot(m, slot)) == HOTTIER_S_RESIDENT)
		hottier_map_get(m, slot);
	else
		slot = HOTTIER_NIL;
	hottier_map_unlock(lock, flags);
	io->slot = slot;
	return slot != HOTTIER_NIL;
}

/*
 * A read completed: its device's estimates take the sample. True if it
 * failed and was queued to be sent again (do_retry()): a failed SSD read
 * goes to the HDD, and a failed HDD read of an extent with a replica goes
 * to the SSD, so that an error reaches the caller only when both members
 * failed the read, or when the one member that holds its data did.
 */
static bool end_read(struct hottier *ht, struct bio *bio,
		     struct hottier_io *io, blk_status_t error)
{
	struct hottier_lat *l = &ht->lat[io->dev];
	unsigned long flags;
	u64 now;

	if (io->dev == HOTTIER_ROUTE_HDD)
		hdd_done(ht, error);
	if (io->start_ns) {
		now = ktime_get_ns();
		hottier_lat_done(l, io->start_ns, now, !error);
		if (!error && io->dev == HOTTIER_ROUTE_HDD)
			hottier_qos_note(ht, now - io->start_ns);
	} else {
		hottier_lat_done_untimed(l);
	}
	if (!error)
		return false;
	if (io->dev == HOTTIER_ROUTE_SSD)
		hottier_ssd_error(ht);
	else
		stat_add(ht, HOTTIER_STAT_HDD_READ_ERRORS, 1);
	if (io->retried)
		return false;
	if (io->dev == HOTTIER_ROUTE_SSD) {
		if (io->slot != HOTTIER_NIL) {
			hottier_slot_put(ht, io->slot);
			io->slot = HOTTIER_NIL;
		}
	} else if (!take_replica(ht, io)) {
		return false;
	}
	io->dev = -1;
	io->retried = true;
	spin_lock_irqsave(&ht->retry_lock, flags);
	bio_list_add(&ht->retry, bio);
	spin_unlock_irqrestore(&ht->retry_lock, flags);
	queue_work(ht->wq, &ht->retry_work);
	return true;
}

int hottier_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct hottier *ht = ti->private;
	struct hottier_io *io;

	io = dm_per_bio_data(bio, sizeof(*io));
	if (io->flush)
		return DM_ENDIO_DONE;

	if (io->dev >= 0) {
		if (end_read(ht, bio, io, *error))
			return DM_ENDIO_INCOMPLETE;
	} else {
		/* A write or a discard: its HDD half, this bio. */
		if (!io->unsent)
			hdd_done(ht, *error);
		/* A write, timed for the QoS controller. */
		if (io->start_ns && !*error)
			hottier_qos_note(ht, ktime_get_ns() - io->start_ns);
	}
	if (io->write_through)
		end_write_through(ht, io, *error);
	if (io->slot != HOTTIER_NIL)
		hottier_slot_put(ht, io->slot);
	if (io->counted)
		wtrack_range(ht, io->first, io->last, -1);
	return DM_ENDIO_DONE;
}

/* After the members are open: each member's probe and its logical block. */
int hottier_io_ctr(struct hottier *ht, char **error)
{
	/* A table with no SSD probes nothing: its SSD probe is never sent. */
	struct block_device *bdev[] = {
		[HOTTIER_ROUTE_SSD] = ht->ssd ? ht->ssd->bdev : ht->hdd->bdev,
		[HOTTIER_ROUTE_HDD] = ht->hdd->bdev,
	};
	struct hottier_probe *p;
	int i;

	for (i = 0; i < HOTTIER_ROUTE_NR; i++) {
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		if (!p)
			goto nomem;
		ht->probe[i] = p;
		p->ht = ht;
		p->dev = i;
		INIT_WORK(&p->work, do_probe);
		p->order = get_order(bdev_logical_block_size(bdev[i]));
		p->page = alloc_pages(GFP_KERNEL, p->order);
		if (!p->page)
			goto nomem;
	}
	return 0;
nomem:
	*error = "Cannot allocate the latency probes";
	return -ENOMEM;
}

/* No bio is mapped: wait for the probes in flight (postsuspend). */
void hottier_io_stop(struct hottier *ht)
{
	struct hottier_probe *p;
	int i;

	for (i = 0; i < HOTTIER_ROUTE_NR; i++) {
		p = ht->probe[i];
		flush_work(&p->work);
		wait_var_event(&p->busy, !test_bit(0, &p->busy));
	}
}

void hottier_io_dtr(struct hottier *ht)
{
	struct hottier_probe *p;
	int i;

	for (i = 0; i < HOTTIER_ROUTE_NR; i++) {
		p = ht->probe[i];
		if (!p)
			continue;
		if (p->page)
			__free_pages(p->page, p->order);
		kfree(p);
	}
}

void hottier_io_init(struct hottier *ht)
{
	int i;

	spin_lock_init(&ht->redispatch_lock);
	bio_list_init(&ht->redispatch);
	INIT_WORK(&ht->redispatch_work, do_redispatch);
	spin_lock_init(&ht->retry_lock);
	bio_list_init(&ht->retry);
	INIT_WORK(&ht->retry_work, do_retry);
	INIT_WORK(&ht->event_work, raise_event);
	for (i = 0; i < HOTTIER_MAP_LOCKS; i++)
		INIT_HLIST_HEAD(&ht->wt_cells[i]);
	spin_lock_init(&ht->deferred_lock);
	bio_list_init(&ht->deferred);
	INIT_WORK(&ht->range_work, do_ranges);
	ht->invalidated = io_invalidated;
	for (i = 0; i < HOTTIER_WTRACK_BUCKETS; i++)
		spin_lock_init(&ht->wtrack[i].lock);
}
