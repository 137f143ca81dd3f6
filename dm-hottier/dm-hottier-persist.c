// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: the on-SSD map (format in dm-hottier-meta.c). Its records
 * are kept crash-safe while the device runs, and written whole at a clean
 * stop, as dm-cache does with its metadata:
 *
 *  - A table with hdd_id takes the map over when it first resumes (the
 *    constructor only checks the superblock, and only when no other table
 *    of the device holds the SSD: on a reload the old table still writes
 *    the map when it suspends). If the map is this HDD's, at this extent
 *    size and layout, and was stopped cleanly or kept live, its valid
 *    records' replicas come back. Before any I/O the superblock is
 *    rewritten without the clean flag, with FUA.
 *  - A record becomes valid only through a commit (commit_work, every
 *    HOTTIER_COMMIT_MS while replicas wait): a replica copied since the
 *    last commit, or not written since the one before, is recorded in
 *    memory, then the HDD is flushed and its record written with
 *    PREFLUSH (its copy) and FUA. md's write-intent bitmap, cleared
 *    lazily, is the pattern. A commit rides the caller's flush when the
 *    caller flushes: it holds the next one and its HDD flush ends it.
 *  - Anything that would change what a recorded replica (HOTTIER_MR_REC)
 *    means waits for its invalidation to be on the SSD (FUA): the first
 *    write-through to it, a write-around, discard or write zeroes that
 *    drops it, a drop by a message or an error (its slot is not reused
 *    before), and an eviction (its copy does not start before). So does
 *    any other write, discard or write zeroes to the extent until then,
 *    though it finds no replica (__hottier_rec_dropping()). Writes to
 *    replicas that are not recorded, and reads, add no metadata I/O.
 *  - Degraded, the SSD cannot be trusted to take an invalidation: the
 *    superblock gets a new nonce before any write that meets a recorded
 *    replica goes to the HDD, so no record checks out again. If even that
 *    write fails, such writes fail, and ssd_reset is refused: the HDD is
 *    never written behind a record a later activation would trust.
 *  - A clean stop (postsuspend, which a removal runs too) of a healthy
 *    device flushes the HDD, writes every resident slot's record under a
 *    new nonce (older records never check out again), then the superblock
 *    with the clean flag, after a flush of the SSD and with FUA.
 *  - Pins live in the superblock: a pin or unpin message returns after the
 *    superblock holding it is on the SSD (FUA), so pins survive a crash.
 *  - A table without hdd_id invalidates any map of ours when it takes the
 *    SSD over, so that map is never trusted later.
 *
 * The in-memory side (a record marked for invalidation or to commit, the
 * dropped slots and the I/O that waits) is the replica core's
 * (dm-hottier-core.c), which queues this file's workers; the I/O that
 * waited goes back to the data path through ht->invalidated, and restored
 * pins to the target through ht->sb, so nothing here calls above it.
 *
 * The takeover, the clean stop and the pins run at construction, or in
 * suspend, resume and message context under ht->lock; records are written
 * under ht->rec_lock, from the commit and invalidation workers and from
 * the promotion worker (an eviction).
 */
#include "dm-hottier.h"

#include <linux/random.h>
#include <linux/vmalloc.h>

#define HOTTIER_ERR_NEWER \
	"SSD holds a map of a newer format: use a newer dm-hottier, or format_ssd yes"
#define HOTTIER_ERR_FOREIGN \
	"SSD holds data that is not a hottier map: add format_ssd yes to overwrite it"

/*
 * Records read or written at a time: 65536 of them, so a takeover reads
 * the map in I/Os as large as a sequential read would use.
 */
#define HOTTIER_META_IO		(1024 * 1024)
#define RECS_PER_IO		(HOTTIER_META_IO / HOTTIER_MAP_ENTRY_BYTES)

/* Records written at a time by a commit or an invalidation. */
#define HOTTIER_REC_IO		(64 * 1024)
/* The witness of degraded mode is tried this long before writes fail. */
#define HOTTIER_WITNESS_MS	2000
#define HOTTIER_WITNESS_TRIES	10

static int kill_records(struct hottier *ht);

/* A table with no SSD keeps no map: hdd_id waits for the SSD's reload. */
static bool persistent(struct hottier *ht)
{
	return ht->ssd && ht->args.hdd_id[0];
}

static int write_records(struct hottier *ht, u32 nonce);

/* A unit of records (rec_unit()), in bytes and in records. */
static u32 unit_bytes(struct hottier *ht)
{
	return SECTOR_SIZE << ht->rec_unit_shift;
}

static u32 recs_per_unit(struct hottier *ht)
{
	return HOTTIER_RECS_PER_SECTOR << ht->rec_unit_shift;
}

/* Synchronous I/O of @bytes at @sector of the SSD, from @buf. */
static int meta_io_buf(struct hottier *ht, blk_opf_t opf, sector_t sector,
		       size_t bytes, void *buf)
{
	struct dm_io_region where = {
		.bdev = ht->ssd->bdev,
		.sector = sector,
		.count = bytes >> SECTOR_SHIFT,
	};
	struct dm_io_request req = {
		.bi_opf = opf,
		.mem.type = DM_IO_VMA,
		.mem.ptr.vma = buf,
		.client = ht->meta_io,
	};

	if (op_is_write(opf))
		WRITE_ONCE(ht->map_writes, ht->map_writes + 1);
	return hottier_dm_io(&req, &where);
}

/* ... from ht->meta_buf (ht->lock). */
static int meta_io(struct hottier *ht, blk_opf_t opf, sector_t sector,
		   size_t bytes)
{
	return meta_io_buf(ht, opf, sector, bytes, ht->meta_buf);
}

static int read_sb(struct hottier *ht, struct hottier_sb *sb,
		   enum hottier_sb_kind *kind)
{
	int r = meta_io(ht, REQ_OP_READ, 0, HOTTIER_META_BLOCK);

	if (!r)
		*kind = hottier_sb_decode(ht->meta_buf, sb);
	return r;
}

/*
 * ht->sb to sector 0 from @buf, durable when this returns (after a flush
 * if asked). rec_lock held: the invalidation worker writes it too.
 */
static int write_sb_buf(struct hottier *ht, bool flush, void *buf)
{
	lockdep_assert_held(&ht->rec_lock);
	hottier_sb_encode(ht->sb, buf);
	return meta_io_buf(ht, REQ_OP_WRITE | REQ_FUA |
			   (flush ? REQ_PREFLUSH : 0), 0, HOTTIER_META_BLOCK,
			   buf);
}

/* ... from ht->meta_buf (ht->lock and rec_lock held). */
static int write_sb(struct hottier *ht, bool flush)
{
	return write_sb_buf(ht, flush, ht->meta_buf);
}

/*
 * The policy's pins, into ht->sb, as sector ranges: 1 if that changed
 * them, 0 if not.
 */
static int pins_to_sb(struct hottier *ht)
{
	struct hottier_sb *sb = ht->sb;
	u64 *first = ht->pin_buf, *last = ht->pin_buf + HOTTIER_SB_MAX_PINS;
	u64 start, len;
	bool changed;
	u32 n, i;

	/*
	 * Pins and unpins are refused past the limit; should a reload still
	 * bring more, the first are kept, not the whole map lost.
	 */
	n = hottier_policy_pin_ranges(&ht->policy, NULL, NULL, 0, true);
	if (n > HOTTIER_SB_MAX_PINS)
		DMWARN("%s: %u pinned ranges: only the first %u are kept on the SSD",
		       ht_name(ht), n, HOTTIER_SB_MAX_PINS);
	n = hottier_policy_pin_ranges(&ht->policy, first, last,
				      HOTTIER_SB_MAX_PINS, false);
	changed = n != sb->nr_pins;
	for (i = 0; i < n; i++) {
		start = first[i] << ht->extent_shift;
		len = (last[i] - first[i] + 1) << ht->extent_shift;
		changed |= sb->pins[i].first_sector != start ||
			   sb->pins[i].nr_sectors != len;
		sb->pins[i].first_sector = start;
		sb->pins[i].nr_sectors = len;
	}
	sb->nr_pins = n;
	return changed;
}

/*
 * Constructor: buffers, and the superblock check, unless @live (another
 * table of this device holds the SSD and will write the map when it
 * suspends: it is read at resume).
 */
int hottier_persist_ctr(struct hottier *ht, bool live, char **error)
{
	enum hottier_sb_kind kind;
	struct hottier_sb *sb;
	int r;

	/* Without a map, only a superblock is ever read or written. */
	ht->meta_buf = vmalloc(persistent(ht) ? HOTTIER_META_IO :
			       HOTTIER_META_BLOCK);
	ht->sb = kzalloc(sizeof(*ht->sb), GFP_KERNEL);
	ht->pin_buf = kcalloc(2 * HOTTIER_SB_MAX_PINS, sizeof(u64), GFP_KERNEL);
	if (persistent(ht)) {
		/* The constructor refused logical blocks over 4 KiB. */
		ht->rec_unit_shift =
			ilog2(bdev_logical_block_size(ht->ssd->bdev) >>
			      SECTOR_SHIFT);
		ht->nr_rec_units = DIV_ROUND_UP(ht->layout.nr_slots,
						recs_per_unit(ht));
		ht->rec_buf = vmalloc(HOTTIER_REC_IO);
		ht->rec_dirty = bitmap_zalloc(ht->nr_rec_units, GFP_KERNEL);
		ht->rec_inval = bitmap_zalloc(ht->nr_rec_units, GFP_KERNEL);
		ht->rec_write = bitmap_zalloc(ht->nr_rec_units, GFP_KERNEL);
	}
	if (!ht->meta_buf || !ht->sb || !ht->pin_buf ||
	    (persistent(ht) && (!ht->rec_buf || !ht->rec_dirty ||
				!ht->rec_inval || !ht->rec_write))) {
		*error = "Cannot allocate the on-SSD map's buffers";
		return -ENOMEM;
	}
	ht->meta_io = dm_io_client_create();
	if (IS_ERR(ht->meta_io)) {
		r = PTR_ERR(ht->meta_io);
		ht->meta_io = NULL;
		*error = "Cannot create the on-SSD map's I/O client";
		return r;
	}
	ht->map_handed_over = live;
	if (live || !persistent(ht) || ht->args.format_ssd)
		return 0;

	sb = ht->sb;
	r = read_sb(ht, sb, &kind);
	if (r) {
		/* Resume tries again, and refuses if the SSD cannot be used. */
		DMWARN("%s: cannot read the SSD's superblock (error %d)",
		       ht_name(ht), r);
		return 0;
	}
	switch (kind) {
	case HOTTIER_SB_ZERO:
	case HOTTIER_SB_CORRUPT:
	case HOTTIER_SB_INCOMPAT:	/* the takeover drops it */
		return 0;
	case HOTTIER_SB_OURS:
		r = hottier_sb_check(sb, ht->args.hdd_id,
				     ht->args.extent_sectors, &ht->layout,
				     error);
		if (r)
			DMERR("%s: the SSD's map is of hdd_id %s, %llu-sector extents, %llu slots",
			      ht_name(ht), sb->hdd_id, sb->extent_sectors,
			      sb->nr_slots);
		return r;
	case HOTTIER_SB_NEWER:
		*error = HOTTIER_ERR_NEWER;
		return -EINVAL;
	default:
		*error = HOTTIER_ERR_FOREIGN;
		return -EINVAL;
	}
}

void hottier_persist_dtr(struct hottier *ht)
{
	if (ht->meta_io)
		dm_io_client_destroy(ht->meta_io);
	vfree(ht->meta_buf);
	kfree(ht->sb);
	kfree(ht->pin_buf);
	vfree(ht->rec_buf);
	bitmap_free(ht->rec_dirty);
	bitmap_free(ht->rec_inval);
	bitmap_free(ht->rec_write);
}

/* A replica restored from its record: the record is valid. */
/* @slot's record on the SSD is @mr (HOTTIER_MR_REC or HOTTIER_MR_INTENT). */
static void set_recorded(struct hottier *ht, u32 slot, u64 extent,
			 unsigned int mr)
{
	struct hottier_mlock *lock;
	unsigned long flags;

	lock = hottier_map_lock(&ht->map, extent, &flags);
	__hottier_mslot_set_rec(hottier_mslot(&ht->map, slot), mr,
				HOTTIER_MR_ALL & ~mr);
	hottier_map_unlock(lock, flags);
}

/*
 * Read the map's valid records and intents: their replicas are put back
 * if @restore (intents to be compared by resync_intents()), else (a crash
 * of a map not kept live) only counted as dropped. The counts go to the
 * status.
 */
static int load_map(struct hottier *ht, bool restore)
{
	u64 nr_extents = ((ht->ti->len - 1) >> ht->extent_shift) + 1;
	u16 epoch = hottier_policy_epoch(&ht->policy);
	struct hottier_rec_disk *d = ht->meta_buf;
	u32 slot, i, n, restored = 0, dropped = 0, intents = 0;
	struct hottier_rec rec;
	bool intent;
	int r = 0;

	if (restore)
		hottier_map_restore_begin(&ht->map);
	for (slot = 0; slot < ht->layout.nr_slots; slot += n) {
		n = min_t(u64, RECS_PER_IO, ht->layout.nr_slots - slot);
		r = meta_io(ht, REQ_OP_READ, HOTTIER_SB_SECTORS +
			    div_u64((u64)slot * HOTTIER_MAP_ENTRY_BYTES,
				    SECTOR_SIZE),
			    round_up(n * HOTTIER_MAP_ENTRY_BYTES,
				     unit_bytes(ht)));
		if (r)
			break;
		for (i = 0; i < n; i++) {
			if (!hottier_rec_decode(ht->sb->nonce, slot + i, &d[i],
						&rec))
				continue;
			/* A shrunk HDD: the extent is gone. */
			if (!restore || rec.extent >= nr_extents ||
			    !hottier_map_restore(&ht->map, slot + i, rec.extent,
						 (u32)rec.heat <<
						 HOTTIER_SLOT_HEAT_SHIFT, epoch)) {
				dropped++;
			} else {
				hottier_policy_restored(&ht->policy, slot + i);
				intent = rec.flags & HOTTIER_REC_INTENT;
				set_recorded(ht, slot + i, rec.extent, intent ?
					     HOTTIER_MR_INTENT : HOTTIER_MR_REC);
				if (intent)
					intents++;
				else
					restored++;
			}
		}
		cond_resched();
	}
	if (restore)
		hottier_map_restore_end(&ht->map);
	if (r) {
		/* Doubt drops them all. */
		if (restore)
			hottier_drop_range(ht, 0, U64_MAX - 1, true);
		DMERR("%s: reading the SSD's map failed (error %d): it starts cold",
		      ht_name(ht), r);
		return r;
	}
	WRITE_ONCE(ht->map_loaded, restored);
	WRITE_ONCE(ht->map_dropped, dropped);
	ht->map_intents = intents;
	if (restore)
		DMINFO("%s: %u replicas restored from the SSD's map, %u intents, %u dropped",
		       ht_name(ht), restored, intents, dropped);
	return 0;
}

/*
 * At an activation after a crash, before any I/O: the replicas whose
 * records are intents were written through while the map was open, so the
 * crash may have left the HDD or the SSD half written. Each is compared
 * with the HDD: one that equals it is kept (and recorded again at a
 * commit), one that differs or cannot be read is dropped, its record
 * invalidated first. md resyncs the regions its write-intent bitmap
 * marks; here the HDD is the truth, so a resync is a comparison.
 */
static void resync_intents(struct hottier *ht)
{
	u64 extent, kept = 0, dropped = 0;
	struct hottier_mslot *s;
	struct page *a, *b;
	u32 slot;
	int nomem, r;

	if (!ht->map_intents)
		return;
	nomem = hottier_compare_alloc(&a, &b);
	for (slot = 0; slot < ht->layout.nr_slots; slot++) {
		s = hottier_mslot(&ht->map, slot);
		if (hottier_mslot_state(s) != HOTTIER_S_RESIDENT ||
		    !(hottier_mslot_rec(s) & HOTTIER_MR_INTENT))
			continue;
		extent = hottier_mslot_extent(s);
		r = nomem ?: hottier_compare_extent(ht, extent, slot, a, b);
		if (r) {
			hottier_drop_extent(ht, extent, true);
			dropped++;
		} else {
			hottier_rec_mark_dirty(ht, slot);
			kept++;
		}
		cond_resched();
	}
	hottier_compare_free(a, b);
	flush_work(&ht->inval_work);
	ht->map_intents = 0;
	WRITE_ONCE(ht->map_loaded, ht->map_loaded + kept);
	WRITE_ONCE(ht->map_dropped, ht->map_dropped + dropped);
	DMINFO("%s: intents: %llu replicas equal the HDD and are kept, %llu dropped",
	       ht_name(ht), kept, dropped);
}

/*
 * map_verify, at an activation (not a reload: the old table was live):
 * compare up to that many of the replicas just restored with the HDD,
 * spread over the SSD. A difference, or a read that fails, drops them all:
 * the HDD may have been written while the device was down. The pins are
 * copied again.
 */
static void verify_map(struct hottier *ht)
{
	u32 want = ht->args.map_verify, slot = 0;
	u64 step, seen = 0, checked = 0;
	struct hottier_mslot *s;
	struct page *a, *b;
	int r;

	if (!want || !ht->map_loaded || ht->map_handed_over)
		return;
	step = max_t(u64, 1, div_u64(ht->map_loaded, want));
	r = hottier_compare_alloc(&a, &b);
	for (slot = 0; !r && slot < ht->layout.nr_slots && checked < want;
	     slot++) {
		s = hottier_mslot(&ht->map, slot);
		if (hottier_mslot_state(s) != HOTTIER_S_RESIDENT ||
		    seen++ % step)
			continue;
		r = hottier_compare_extent(ht, hottier_mslot_extent(s), slot,
					   a, b);
		checked++;
		cond_resched();
	}
	hottier_compare_free(a, b);
	WRITE_ONCE(ht->map_checked, checked);
	if (!r) {
		DMINFO("%s: %llu replicas restored match the HDD", ht_name(ht),
		       checked);
		return;
	}
	/* Their records are invalidated before the first I/O. */
	hottier_drop_range(ht, 0, U64_MAX - 1, true);
	flush_work(&ht->inval_work);
	WRITE_ONCE(ht->map_dropped, ht->map_dropped + ht->map_loaded);
	WRITE_ONCE(ht->map_loaded, 0);
	if (r > 0)
		DMWARN("%s: slot %u differs from the HDD: every replica dropped",
		       ht_name(ht), slot - 1);
	else
		DMERR("%s: verifying the SSD's map failed (error %d): every replica dropped",
		      ht_name(ht), r);
}

/* A new map: no record of an older one checks out under its nonce. */
static void format_sb(struct hottier *ht)
{
	struct hottier_sb *sb = ht->sb;

	memset(sb, 0, sizeof(*sb));
	sb->flags = HOTTIER_SB_LIVE;
	sb->nonce = get_random_u32();
	sb->seq = 0;
	sb->extent_sectors = ht->args.extent_sectors;
	sb->meta_sectors = ht->layout.meta_sectors;
	sb->nr_slots = ht->layout.nr_slots;
	strscpy(sb->hdd_id, ht->args.hdd_id, sizeof(sb->hdd_id));
}

/* No hdd_id: a map of ours on the SSD is invalidated, once. */
static int invalidate_map(struct hottier *ht)
{
	enum hottier_sb_kind kind;
	int r = read_sb(ht, ht->sb, &kind);

	if (r || kind == HOTTIER_SB_ZERO || kind == HOTTIER_SB_FOREIGN)
		return r;
	memset(ht->meta_buf, 0, HOTTIER_META_BLOCK);
	return meta_io(ht, REQ_OP_WRITE | REQ_FUA, 0, HOTTIER_META_BLOCK);
}

/*
 * Whether the records of this HDD's map may be restored: it was stopped
 * cleanly, or it was kept live while open, which only a version-2 map
 * says for sure. A version-1 map left open keeps only its pins.
 */
static bool sb_trusted(struct hottier *ht, struct hottier_sb *sb)
{
	if (sb->flags & HOTTIER_SB_CLEAN)
		return true;
	if (!(sb->flags & HOTTIER_SB_LIVE))
		return false;
	if (sb->version == HOTTIER_META_VERSION)
		return true;
	DMWARN("%s: the SSD's map is of version %u and was left open: its records are not trusted",
	       ht_name(ht), sb->version);
	return false;
}

/*
 * The first resume: read what the SSD holds, restore it if it is this
 * HDD's map, stopped cleanly or kept live, and mark it in use. *@pins: the
 * superblock's pins should be applied. *@rewrite: records were found and
 * not restored (a shrunk HDD, say): the map is written anew under a new
 * nonce, so they never check out again.
 */
static int take_over(struct hottier *ht, bool *pins, bool *rewrite)
{
	struct hottier_sb *sb = ht->sb;
	enum hottier_sb_kind kind;
	char *why = NULL;
	int r;

	*pins = false;
	*rewrite = false;
	r = read_sb(ht, sb, &kind);
	if (r)
		return r;
	if (kind == HOTTIER_SB_OURS && !ht->args.format_ssd &&
	    !hottier_sb_check(sb, ht->args.hdd_id, ht->args.extent_sectors,
			      &ht->layout, &why)) {
		*pins = true;
		if (ht->drop_replicas) {
			load_map(ht, false);
			DMWARN("%s: %s: the SSD's pins kept, %llu replicas dropped",
			       ht_name(ht), ht->args.drop_replicas ?
			       "drop_replicas" :
			       "the HDD was written while the SSD was missing",
			       ht->map_dropped);
			sb->nonce = get_random_u32();
		} else if (sb_trusted(ht, sb)) {
			if (!(sb->flags & HOTTIER_SB_CLEAN))
				DMINFO("%s: the SSD's map was left open: recorded replicas kept",
				       ht_name(ht));
			r = load_map(ht, true);
			if (r)
				sb->nonce = get_random_u32();
			else
				*rewrite = ht->map_dropped;
		} else {
			/* A crash of a map not kept live: only the pins. */
			load_map(ht, false);
			DMWARN("%s: the SSD's map was not stopped cleanly: %llu replicas dropped",
			       ht_name(ht), ht->map_dropped);
			sb->nonce = get_random_u32();
		}
	} else {
		if (kind == HOTTIER_SB_CORRUPT)
			DMWARN("%s: the SSD's superblock fails its checksum: an empty map",
			       ht_name(ht));
		else if (kind == HOTTIER_SB_INCOMPAT && !ht->args.format_ssd)
			DMWARN("%s: the map has unknown incompat features %#x: an empty map",
			       ht_name(ht),
			       sb->incompat & ~HOTTIER_INCOMPAT_KNOWN);
		else if (why)
			/* A reload that changed the extent size, say. */
			DMINFO("%s: the SSD's map is not taken over: %s",
			       ht_name(ht), why);
		format_sb(ht);
	}
	sb->version = HOTTIER_META_VERSION;
	sb->flags = (sb->flags & ~HOTTIER_SB_CLEAN) | HOTTIER_SB_LIVE;
	sb->seq++;
	return 0;
}

/*
 * Resume: the first one takes the SSD over, every one marks the map in
 * use before I/O flows. An error leaves the device suspended: the map on
 * the SSD could not be marked, and a later activation would trust it.
 */
static int mark_in_use(struct hottier *ht)
{
	bool pins = false, rewrite = false, first = !ht->taken_over;
	int r;

	mutex_lock(&ht->rec_lock);
	if (first) {
		r = take_over(ht, &pins, &rewrite);
		if (r)
			goto out;
		WRITE_ONCE(ht->taken_over, true);
		ht->sb_pins = pins;
		if (rewrite) {
			ht->sb->nonce = get_random_u32();
			r = write_records(ht, ht->sb->nonce);
			if (r)
				goto out;
		}
	} else {
		ht->sb->flags &= ~HOTTIER_SB_CLEAN;
		ht->sb->seq++;
	}
	r = write_sb(ht, rewrite);
	if (!r) {
		/* A witness: the slots poisoned meanwhile can be released. */
		if (ht->records_stuck)
			queue_work(ht->wq, &ht->inval_work);
		WRITE_ONCE(ht->map_failed, false);
		WRITE_ONCE(ht->records_stuck, false);
		WRITE_ONCE(ht->records_live, true);
	}
out:
	mutex_unlock(&ht->rec_lock);
	if (!r && first) {
		resync_intents(ht);
		verify_map(ht);
	}
	return r;
}

int hottier_persist_resume(struct hottier *ht)
{
	int r = 0;

	mutex_lock(&ht->lock);
	if (persistent(ht)) {
		r = mark_in_use(ht);
		if (r)
			DMERR("%s: cannot mark the SSD's map in use (error %d): not resumed",
			      ht_name(ht), r);
	} else if (!ht->taken_over && ht->ssd) {
		mutex_lock(&ht->rec_lock);
		r = invalidate_map(ht);
		mutex_unlock(&ht->rec_lock);
		if (r)
			DMWARN("%s: cannot invalidate a map on the SSD (error %d)",
			       ht_name(ht), r);
		WRITE_ONCE(ht->taken_over, true);
		r = 0;
	}
	mutex_unlock(&ht->lock);
	return r;
}

/*
 * Before a pin or an unpin of the extents [first, last] (@pin): whether
 * the superblock will have room for the pinned ranges after it. -E2BIG,
 * and a log line, if not: then nothing may change.
 */
int hottier_persist_pin_room(struct hottier *ht, u64 first, u64 last,
			     bool pin)
{
	u32 n;

	if (!persistent(ht))
		return 0;
	n = hottier_policy_pin_ranges_after(&ht->policy, first, last, pin);
	if (n <= HOTTIER_SB_MAX_PINS)
		return 0;
	DMERR("%s: %s refused: it would make %u pinned ranges, and at most %u are kept on the SSD",
	      ht_name(ht), pin ? "pin" : "unpin", n, HOTTIER_SB_MAX_PINS);
	return -E2BIG;
}

/*
 * A pin or unpin, or a resume, may have changed the pins (ht->lock held):
 * durable before the message returns; nothing is written if they are
 * what the superblock holds. Before the first resume, the takeover writes
 * them.
 */
int hottier_persist_pins(struct hottier *ht)
{
	int r;

	if (!persistent(ht) || !ht->taken_over)
		return 0;
	mutex_lock(&ht->rec_lock);
	r = pins_to_sb(ht);
	if (r > 0)
		r = write_sb(ht, false);
	mutex_unlock(&ht->rec_lock);
	if (r)
		DMERR("%s: cannot write the pins to the SSD (error %d)",
		      ht_name(ht), r);
	return r;
}

/*
 * Every resident slot's record, under @nonce; chunks without one skipped.
 * Each is recorded (HOTTIER_MR_REC) once the superblock has @nonce.
 * rec_lock held.
 */
static int write_records(struct hottier *ht, u32 nonce)
{
	u16 epoch = hottier_policy_epoch(&ht->policy);
	struct hottier_rec_disk *d = ht->meta_buf;
	struct hottier_rec rec;
	struct hottier_mslot *s;
	u32 slot, i, n, valid;
	int r;

	for (slot = 0; slot < ht->layout.nr_slots; slot += n) {
		n = min_t(u64, RECS_PER_IO, ht->layout.nr_slots - slot);
		memset(d, 0, HOTTIER_META_IO);
		for (i = 0, valid = 0; i < n; i++) {
			s = hottier_mslot(&ht->map, slot + i);
			if (hottier_mslot_state(s) != HOTTIER_S_RESIDENT)
				continue;
			rec.extent = hottier_mslot_extent(s);
			rec.heat = hottier_mslot_heat(s, epoch) >>
				   HOTTIER_SLOT_HEAT_SHIFT;
			rec.flags = HOTTIER_REC_VALID;
			if (hottier_mslot_flags(s) & HOTTIER_SF_PINNED)
				rec.flags |= HOTTIER_REC_PINNED;
			hottier_rec_encode(nonce, slot + i, &rec, &d[i]);
			set_recorded(ht, slot + i, rec.extent, HOTTIER_MR_REC);
			valid++;
		}
		if (valid) {
			r = meta_io(ht, REQ_OP_WRITE, HOTTIER_SB_SECTORS +
				    div_u64((u64)slot * HOTTIER_MAP_ENTRY_BYTES,
					    SECTOR_SIZE),
				    round_up(n * HOTTIER_MAP_ENTRY_BYTES,
					     unit_bytes(ht)));
			if (r)
				return r;
		}
		cond_resched();
	}
	return 0;
}

/*
 * A clean stop (postsuspend: no I/O, no copy in flight). Degraded, the
 * SSD missed writes: the map stays marked in use, so it is dropped.
 */
static int write_map(struct hottier *ht)
{
	struct hottier_sb *sb = ht->sb;
	u32 nonce = get_random_u32();
	int r;

	/* The HDD first: the replicas copy what it holds durably. */
	r = blkdev_issue_flush(ht->hdd->bdev);
	if (!r) {
		/* Everything is written again: nothing waits for a commit. */
		bitmap_zero(ht->rec_dirty, ht->nr_rec_units);
		bitmap_zero(ht->rec_inval, ht->nr_rec_units);
		r = write_records(ht, nonce);
	}
	if (!r)
		r = min(pins_to_sb(ht), 0);
	if (r) {
		DMERR("%s: cannot write the SSD's map (error %d): it starts cold",
		      ht_name(ht), r);
		return r;
	}
	sb->nonce = nonce;
	sb->flags |= HOTTIER_SB_CLEAN;
	sb->hdd_sectors = ht->ti->len;
	/* The records and the replicas are durable before the flag. */
	r = write_sb(ht, true);
	if (r) {
		sb->flags &= ~HOTTIER_SB_CLEAN;
		DMERR("%s: cannot write the SSD's superblock (error %d): it starts cold",
		      ht_name(ht), r);
		return r;
	}
	WRITE_ONCE(ht->records_stuck, false);
	WRITE_ONCE(ht->records_live, true);
	return 0;
}

void hottier_persist_stop(struct hottier *ht)
{
	if (!persistent(ht))
		return;
	cancel_delayed_work_sync(&ht->commit_work);
	flush_work(&ht->inval_work);
	if (!ht->taken_over || is_degraded(ht))
		return;
	mutex_lock(&ht->lock);
	mutex_lock(&ht->rec_lock);
	if (write_map(ht))
		WRITE_ONCE(ht->map_failed, true);
	mutex_unlock(&ht->rec_lock);
	mutex_unlock(&ht->lock);
}

/*
 * The table of a reload that replaces the SSD resumes: this table is
 * suspended and swapped out, and its SSD's map must never check out again
 * (a removal of that SSD, later put back with this HDD, starts cold). An
 * SSD that cannot take the write (the failed one being replaced, say)
 * only gets an error: the new table resumes anyway.
 */
void hottier_persist_retire(struct hottier *ht)
{
	if (!persistent(ht))
		return;
	mutex_lock(&ht->rec_lock);
	if (ht->taken_over) {
		if (kill_records(ht))
			DMERR("%s: cannot invalidate the replaced SSD's map: format_ssd it",
			      ht_name(ht));
		else
			DMINFO("%s: the SSD is replaced: its map is invalidated",
			       ht_name(ht));
	}
	mutex_unlock(&ht->rec_lock);
}

/* Records kept while open */

/*
 * Units [@first, @first + @n) of records from what memory holds: a slot
 * has a valid record if its replica is resident and recorded, an intent if
 * it was written through since. Written with FUA, after a flush of the SSD
 * if @flush. rec_lock held.
 */
static int write_rec_units(struct hottier *ht, u32 first, u32 n, bool flush)
{
	u16 epoch = hottier_policy_epoch(&ht->policy);
	struct hottier_rec_disk *d = ht->rec_buf;
	u32 slot = first * recs_per_unit(ht), end, i;
	struct hottier_mslot *s;
	struct hottier_rec rec;
	u32 meta, mr;

	lockdep_assert_held(&ht->rec_lock);
	end = min_t(u64, (u64)(first + n) * recs_per_unit(ht),
		    ht->layout.nr_slots);
	memset(d, 0, n * unit_bytes(ht));
	for (i = 0; slot < end; slot++, i++) {
		s = hottier_mslot(&ht->map, slot);
		meta = READ_ONCE(s->meta);
		mr = FIELD_GET(HOTTIER_MS_REC, meta);
		if (FIELD_GET(HOTTIER_MS_STATE, meta) != HOTTIER_S_RESIDENT ||
		    !(mr & (HOTTIER_MR_REC | HOTTIER_MR_INTENT)))
			continue;
		/* Recorded: its extent changes only after an invalidation. */
		rec.extent = hottier_mslot_extent(s);
		rec.heat = hottier_mslot_heat(s, epoch) >>
			   HOTTIER_SLOT_HEAT_SHIFT;
		rec.flags = mr & HOTTIER_MR_REC ? HOTTIER_REC_VALID :
			    HOTTIER_REC_INTENT;
		if (FIELD_GET(HOTTIER_MS_FLAGS, meta) & HOTTIER_SF_PINNED)
			rec.flags |= HOTTIER_REC_PINNED;
		hottier_rec_encode(ht->sb->nonce, slot, &rec, &d[i]);
	}
	return meta_io_buf(ht, REQ_OP_WRITE | REQ_FUA |
			   (flush ? REQ_PREFLUSH : 0),
			   HOTTIER_SB_SECTORS +
			   ((sector_t)first << ht->rec_unit_shift),
			   n * unit_bytes(ht), ht->rec_buf);
}

/* The run of set bits of @map from @first: units for one HOTTIER_REC_IO. */
static u32 rec_run(struct hottier *ht, unsigned long *map, u32 first)
{
	u32 n = 1, max = HOTTIER_REC_IO / unit_bytes(ht);

	while (first + n < ht->nr_rec_units && n < max &&
	       test_bit(first + n, map))
		n++;
	return n;
}

/*
 * Degraded, or an invalidation or a commit failed: no record may check
 * out any more. The superblock gets a new nonce; if even that fails for
 * HOTTIER_WITNESS_MS, the SSD is stuck: what waits for an invalidation
 * fails, and the slots and victims whose records it could not kill stay
 * poisoned (do_invalidate()). The new nonce is kept even then: the SSD
 * may hold either, and any superblock written later (a resume, a pin)
 * must not bring the old one back. rec_lock held.
 */
static int kill_records(struct hottier *ht)
{
	int r, tries = 0;

	ht->sb->nonce = get_random_u32();
	ht->sb->flags &= ~HOTTIER_SB_CLEAN;
	/* An SSD that fails for a moment gets HOTTIER_WITNESS_MS. */
	while ((r = write_sb_buf(ht, false, ht->rec_buf)) &&
	       ++tries < HOTTIER_WITNESS_TRIES)
		msleep(HOTTIER_WITNESS_MS / HOTTIER_WITNESS_TRIES);
	if (r) {
		if (!ht->records_stuck)
			DMERR("%s: cannot invalidate the SSD's map (error %d): writes refused",
			      ht_name(ht), r);
		WRITE_ONCE(ht->records_stuck, true);
		/*
		 * Stop using the SSD: nothing else may be written to it. If
		 * it was not degraded yet, the witness is tried once more.
		 */
		hottier_enter_degraded(ht);
		return r;
	}
	WRITE_ONCE(ht->records_live, false);
	WRITE_ONCE(ht->records_stuck, false);
	bitmap_zero(ht->rec_dirty, ht->nr_rec_units);
	bitmap_zero(ht->rec_inval, ht->nr_rec_units);
	DMWARN("%s: the SSD's map is invalidated: a crash now brings it back cold",
	       ht_name(ht));
	return 0;
}

/*
 * Write every sector of records waiting for an invalidation, or kill the
 * records if the SSD is degraded or the write fails. 0 when no record
 * that was invalidated still checks out. rec_lock held.
 */
static int write_invalidations(struct hottier *ht)
{
	u32 sec, n, i;
	int r;

	lockdep_assert_held(&ht->rec_lock);
	if (!ht->records_live)
		return 0;
	if (is_degraded(ht))
		return kill_records(ht);
	for (sec = find_first_bit(ht->rec_inval, ht->nr_rec_units);
	     sec < ht->nr_rec_units;
	     sec = find_next_bit(ht->rec_inval, ht->nr_rec_units, sec + n)) {
		n = rec_run(ht, ht->rec_inval, sec);
		for (i = 0; i < n; i++)
			clear_bit(sec + i, ht->rec_inval);
		r = write_rec_units(ht, sec, n, false);
		if (r) {
			DMERR_LIMIT("%s: cannot invalidate records on the SSD (error %d)",
				    ht_name(ht), r);
			hottier_ssd_error(ht);
			return kill_records(ht);
		}
	}
	return 0;
}

/*
 * A record of @extent marked by __hottier_rec_dropping() is written:
 * writes to the extents of its lock stop waiting for invalidations once
 * none is left there.
 */
static void dropped(struct hottier *ht, u64 extent)
{
	struct hottier_mlock *lock;
	unsigned long flags;

	lock = hottier_map_lock(&ht->map, extent, &flags);
	__hottier_map_dropped(&ht->map, lock);
	hottier_map_unlock(lock, flags);
}

/*
 * The invalidation failed and the SSD is stuck: the dropped slots of
 * @slot's chain go back on the list, unfreed, and the writes to their
 * extents keep waiting (and failing) until a witness lands: the SSD may
 * still hold their valid records.
 */
static void poison(struct hottier *ht, u32 slot)
{
	u32 last = slot;

	if (slot == HOTTIER_NIL)
		return;
	while (hottier_mslot(&ht->map, last)->hnext != HOTTIER_NIL)
		last = hottier_mslot(&ht->map, last)->hnext;
	spin_lock_irq(&ht->inval_lock);
	hottier_mslot(&ht->map, last)->hnext = ht->inval_slots;
	ht->inval_slots = slot;
	spin_unlock_irq(&ht->inval_lock);
}

/*
 * The invalidation worker: the records of dropped slots and of replicas
 * about to be written through, then the slots go back and the I/O that
 * waited is sent. If the SSD is stuck, that I/O fails and the slots stay
 * poisoned; a run after the witness lands releases them, and the victim
 * of an eviction whose invalidation failed.
 */
static void do_invalidate(struct work_struct *ws)
{
	struct hottier *ht = container_of(ws, struct hottier, inval_work);
	struct hottier_mslot *s;
	struct bio_list bios;
	u64 victim;
	u32 slot, next;
	int r;

	spin_lock_irq(&ht->inval_lock);
	slot = ht->inval_slots;
	ht->inval_slots = HOTTIER_NIL;
	bios = ht->inval_bios;
	bio_list_init(&ht->inval_bios);
	spin_unlock_irq(&ht->inval_lock);

	mutex_lock(&ht->rec_lock);
	r = write_invalidations(ht);
	mutex_unlock(&ht->rec_lock);

	if (r) {
		poison(ht, slot);
		ht->invalidated(ht, &bios, BLK_STS_IOERR);
		return;
	}
	spin_lock_irq(&ht->inval_lock);
	victim = ht->stuck_victim;
	ht->stuck_victim = HOTTIER_NO_VICTIM;
	spin_unlock_irq(&ht->inval_lock);
	if (victim != HOTTIER_NO_VICTIM)
		dropped(ht, victim);
	for (; slot != HOTTIER_NIL; slot = next) {
		s = hottier_mslot(&ht->map, slot);
		next = s->hnext;
		s->hnext = HOTTIER_NIL;
		/* Ours: dropped, out of the index. */
		__hottier_mslot_set_rec(s, 0, HOTTIER_MR_ALL);
		dropped(ht, hottier_mslot_extent(s));
		hottier_slot_put(ht, slot);
	}
	ht->invalidated(ht, &bios, BLK_STS_OK);
}

/*
 * An evicted victim's slot, the caller's (the promotion worker's): its
 * record, marked as the eviction took it out of the index (@w->dropping),
 * is invalidated before the copy into it starts. False if that failed:
 * the slot is given back (the SSD is stuck, so the device is degraded and
 * copies nothing until a witness lands), and writes to the victim's
 * extents keep waiting for an invalidation until then, when
 * do_invalidate() releases them. A second victim meanwhile (none is
 * expected: a stuck SSD stops the promotions) keeps them waiting for the
 * table's life, which is slow but safe.
 */
bool hottier_persist_evicted(struct hottier *ht, struct hottier_work *w)
{
	struct hottier_mslot *s = hottier_mslot(&ht->map, w->slot);
	int r;

	if (!w->dropping)
		return true;
	mutex_lock(&ht->rec_lock);
	__hottier_mslot_set_rec(s, 0, HOTTIER_MR_ALL);
	r = write_invalidations(ht);
	mutex_unlock(&ht->rec_lock);
	w->dropping = false;
	if (!r) {
		dropped(ht, w->victim);
		return true;
	}
	spin_lock_irq(&ht->inval_lock);
	if (ht->stuck_victim == HOTTIER_NO_VICTIM)
		ht->stuck_victim = w->victim;
	spin_unlock_irq(&ht->inval_lock);
	return false;
}

/*
 * Replicas were dropped by a message (ht->lock held): their records are
 * invalidated before it returns. -EIO if they could not be: then the
 * witness is tried again, since the SSD may take writes by now.
 */
int hottier_persist_sync(struct hottier *ht)
{
	int r;

	if (!persistent(ht))
		return 0;
	flush_work(&ht->inval_work);
	if (!READ_ONCE(ht->records_stuck))
		return 0;
	/* A run of the worker tries the witness, and releases the poisoned. */
	queue_work(ht->wq, &ht->inval_work);
	flush_work(&ht->inval_work);
	r = READ_ONCE(ht->records_stuck);
	if (r)
		DMERR("%s: the SSD's map cannot be invalidated", ht_name(ht));
	return r ? -EIO : 0;
}

/* Resumed: replicas that wait to be recorded get a commit. */
void hottier_persist_started(struct hottier *ht)
{
	if (persistent(ht) && !bitmap_empty(ht->rec_dirty, ht->nr_rec_units))
		hottier_rec_kick_commit(ht);
}

/*
 * One slot of a dirty sector, at a commit: a replica that waits
 * (HOTTIER_MR_PEND) and has no write in flight is recorded (true: the
 * sector is written); one written since the last commit is marked, for
 * the next. rec_lock held.
 */
static bool commit_slot(struct hottier *ht, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(&ht->map, slot);
	u64 extent = hottier_mslot_extent(s);
	struct hottier_mlock *lock;
	unsigned long flags;
	bool recorded = false;
	unsigned int rec;

	lock = hottier_map_lock(&ht->map, extent, &flags);
	if (__hottier_map_find(&ht->map, extent) != slot ||
	    hottier_mslot_state(s) != HOTTIER_S_RESIDENT)
		goto out;
	rec = hottier_mslot_rec(s);
	if (rec & HOTTIER_MR_REC)
		goto out;
	if (hottier_mslot_flags(s) & HOTTIER_SF_WRITING) {
		__hottier_mslot_set_rec(s, 0, HOTTIER_MR_PEND);
		set_bit(rec_unit(ht, slot), ht->rec_dirty);
	} else if (rec & HOTTIER_MR_PEND) {
		__hottier_mslot_set_rec(s, HOTTIER_MR_REC,
					HOTTIER_MR_PEND | HOTTIER_MR_INTENT);
		recorded = true;
	} else {
		__hottier_mslot_set_rec(s, HOTTIER_MR_PEND, 0);
		set_bit(rec_unit(ht, slot), ht->rec_dirty);
	}
out:
	hottier_map_unlock(lock, flags);
	return recorded;
}

/*
 * A caller's empty flush, while a commit is due: held, and ended by the
 * commit's HDD flush, issued after it arrived (dm-cache and dm-thin hold
 * flushes for their commits too). So a caller that flushes pays for the
 * commit's HDD flush, which no longer comes on top of its own.
 */
bool hottier_persist_ride(struct hottier *ht, struct bio *bio)
{
	bool held;

	if (!persistent(ht) || !READ_ONCE(ht->records_live))
		return false;
	spin_lock(&ht->ride_lock);
	ht->flushes_seen = true;
	held = ht->commit_due;
	if (held)
		bio_list_add(&ht->ride_bios, bio);
	spin_unlock(&ht->ride_lock);
	if (held)
		mod_delayed_work(ht->wq, &ht->commit_work, 0);
	return held;
}

/* The flushes held so far, to end after an HDD flush issued from now. */
static void take_rides(struct hottier *ht, struct bio_list *rides)
{
	spin_lock(&ht->ride_lock);
	bio_list_merge(rides, &ht->ride_bios);
	bio_list_init(&ht->ride_bios);
	ht->commit_due = false;
	spin_unlock(&ht->ride_lock);
}

static void end_rides(struct bio_list *rides, int r)
{
	struct bio *bio;

	while ((bio = bio_list_pop(rides))) {
		bio->bi_status = errno_to_blk_status(r);
		bio_endio(bio);
	}
}

/* A commit that cannot take the flushes held ends them with one of its own. */
static void flush_rides(struct hottier *ht)
{
	struct bio_list rides = BIO_EMPTY_LIST;

	take_rides(ht, &rides);
	if (!bio_list_empty(&rides))
		end_rides(&rides, blkdev_issue_flush(ht->hdd->bdev));
}

/*
 * The commit is due. If the caller flushed since the last one, it waits
 * up to another HOTTIER_COMMIT_MS for a flush to ride, so a caller that
 * flushes every few seconds (a journal's commit) adds no HDD flush of its
 * own; then it flushes the HDD itself.
 */
static bool wait_for_ride(struct hottier *ht)
{
	bool wait;

	spin_lock(&ht->ride_lock);
	wait = !ht->commit_due && ht->flushes_seen;
	ht->commit_due = wait;
	ht->flushes_seen = false;
	spin_unlock(&ht->ride_lock);
	if (wait)
		queue_delayed_work(ht->wq, &ht->commit_work,
				   msecs_to_jiffies(HOTTIER_COMMIT_MS));
	return wait;
}

/*
 * The commit, under rec_lock: the replicas that wait (HOTTIER_MR_PEND:
 * copied, or not written since the last commit) are recorded in memory
 * first, so a write that reaches one from then on waits for its
 * invalidation, which waits for this commit; then the HDD is flushed
 * (what they copied, and every write that completed before, is durable),
 * which ends the caller's flushes it rode, and their record sectors are
 * written with PREFLUSH (the copies) and FUA. Replicas written since the
 * last commit wait for the next.
 *
 * A held flush never waits for the SSD: if an invalidation or an eviction
 * holds rec_lock (its records on the way to the SSD), the flushes held
 * are ended by an HDD flush of their own first.
 */
static void do_commit(struct work_struct *ws)
{
	struct hottier *ht = container_of(to_delayed_work(ws), struct hottier,
					  commit_work);
	struct bio_list rides = BIO_EMPTY_LIST;
	u32 sec, n, slot, end;
	bool flush = true, hdd_failed;
	int r = 0;

	if (!READ_ONCE(ht->running) || !READ_ONCE(ht->records_live) ||
	    bitmap_empty(ht->rec_dirty, ht->nr_rec_units)) {
		flush_rides(ht);
		return;
	}
	if (wait_for_ride(ht))
		return;
	if (!mutex_trylock(&ht->rec_lock)) {
		flush_rides(ht);
		mutex_lock(&ht->rec_lock);
	}
	if (!ht->records_live)
		goto out;
	for (sec = find_first_bit(ht->rec_dirty, ht->nr_rec_units);
	     sec < ht->nr_rec_units;
	     sec = find_next_bit(ht->rec_dirty, ht->nr_rec_units, sec + 1)) {
		clear_bit(sec, ht->rec_dirty);
		slot = sec * recs_per_unit(ht);
		end = min_t(u64, slot + recs_per_unit(ht), ht->layout.nr_slots);
		for (; slot < end; slot++)
			if (commit_slot(ht, slot))
				__set_bit(sec, ht->rec_write);
		cond_resched();
	}
	take_rides(ht, &rides);
	if (bitmap_empty(ht->rec_write, ht->nr_rec_units) &&
	    bio_list_empty(&rides))
		goto out;
	r = blkdev_issue_flush(ht->hdd->bdev);
	hdd_failed = r != 0;
	end_rides(&rides, r);
	if (bitmap_empty(ht->rec_write, ht->nr_rec_units))
		goto out;
	for (sec = find_first_bit(ht->rec_write, ht->nr_rec_units);
	     !r && sec < ht->nr_rec_units;
	     sec = find_next_bit(ht->rec_write, ht->nr_rec_units, sec + n)) {
		n = rec_run(ht, ht->rec_write, sec);
		r = write_rec_units(ht, sec, n, flush);
		flush = false;
	}
	bitmap_zero(ht->rec_write, ht->nr_rec_units);
	/*
	 * The replicas just recorded in memory may not be on the SSD, or be
	 * there before their copies are durable; the next invalidation of a
	 * sector would write them valid without a flush. So the records are
	 * killed: a crash from here brings the map back cold.
	 */
	if (r) {
		DMERR_LIMIT("%s: a commit of the SSD's map failed (error %d)",
			    ht_name(ht), r);
		if (!hdd_failed)
			hottier_ssd_error(ht);
		kill_records(ht);
	}
out:
	if (!bitmap_empty(ht->rec_dirty, ht->nr_rec_units))
		hottier_rec_kick_commit(ht);
	mutex_unlock(&ht->rec_lock);
	flush_rides(ht);
}

void hottier_persist_init(struct hottier *ht)
{
	mutex_init(&ht->rec_lock);
	spin_lock_init(&ht->inval_lock);
	ht->inval_slots = HOTTIER_NIL;
	ht->stuck_victim = HOTTIER_NO_VICTIM;
	bio_list_init(&ht->inval_bios);
	INIT_WORK(&ht->inval_work, do_invalidate);
	INIT_DELAYED_WORK(&ht->commit_work, do_commit);
	spin_lock_init(&ht->ride_lock);
	bio_list_init(&ht->ride_bios);
}

static const char * const map_state_names[HOTTIER_NR_MAP_STATES] = {
	[HOTTIER_MAP_OFF] = "off",
	[HOTTIER_MAP_PENDING] = "pending",
	[HOTTIER_MAP_OPEN] = "open",
	[HOTTIER_MAP_CLEAN] = "clean",
	[HOTTIER_MAP_FAILED] = "failed",
};

const char *hottier_map_state_name(int state)
{
	return map_state_names[state];
}

/* For the status, without ht->lock: a state the map was in. */
int hottier_persist_state(struct hottier *ht)
{
	if (!persistent(ht))
		return HOTTIER_MAP_OFF;
	if (!READ_ONCE(ht->taken_over))
		return HOTTIER_MAP_PENDING;
	if (READ_ONCE(ht->map_failed) || READ_ONCE(ht->records_stuck))
		return HOTTIER_MAP_FAILED;
	if (READ_ONCE(ht->sb->flags) & HOTTIER_SB_CLEAN)
		return HOTTIER_MAP_CLEAN;
	return HOTTIER_MAP_OPEN;
}
