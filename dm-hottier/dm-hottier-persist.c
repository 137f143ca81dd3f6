// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: the on-SSD map (format in dm-hottier-meta.c), kept with a
 * clean-shutdown flag, as dm-cache keeps its metadata:
 *
 *  - A table with hdd_id takes the map over when it first resumes (the
 *    constructor only checks the superblock, and only when no other table
 *    of the device holds the SSD: on a reload the old table still writes
 *    the map when it suspends). If the map was written at a clean stop, by
 *    this HDD, at this extent size and layout, its replicas come back.
 *    Before any I/O, the superblock is rewritten without the clean flag,
 *    with FUA: from then on, until the next clean stop, the records are
 *    not trusted, so a crash or power loss at any instant leaves a map
 *    that the next activation drops (invariant 8).
 *  - A clean stop (postsuspend, which a removal runs too) of a healthy
 *    device flushes the HDD, writes every resident slot's record under a
 *    new nonce (older records never check out again), then the superblock
 *    with the clean flag, after a flush of the SSD and with FUA.
 *  - Pins live in the superblock: a pin or unpin message returns after the
 *    superblock holding it is on the SSD (FUA), so pins survive a crash.
 *  - A table without hdd_id invalidates any map of ours when it takes the
 *    SSD over, so that map is never trusted later.
 *
 * All of it runs at construction, or in suspend, resume and message
 * context under ht->lock (a message may come while the device suspends):
 * nothing here is on the I/O path.
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

static bool persistent(struct hottier *ht)
{
	return ht->args.hdd_id[0];
}

/* Synchronous I/O of @bytes at @sector of the SSD, from ht->meta_buf. */
static int meta_io(struct hottier *ht, blk_opf_t opf, sector_t sector,
		   size_t bytes)
{
	struct dm_io_region where = {
		.bdev = ht->ssd->bdev,
		.sector = sector,
		.count = bytes >> SECTOR_SHIFT,
	};
	struct dm_io_request req = {
		.bi_opf = opf,
		.mem.type = DM_IO_VMA,
		.mem.ptr.vma = ht->meta_buf,
		.client = ht->meta_io,
	};

	if (op_is_write(opf))
		WRITE_ONCE(ht->map_writes, ht->map_writes + 1);
	return hottier_dm_io(&req, &where);
}

static int read_sb(struct hottier *ht, struct hottier_sb *sb,
		   enum hottier_sb_kind *kind)
{
	int r = meta_io(ht, REQ_OP_READ, 0, HOTTIER_META_BLOCK);

	if (!r)
		*kind = hottier_sb_decode(ht->meta_buf, sb);
	return r;
}

/* ht->sb to sector 0, durable when this returns (after a flush if asked). */
static int write_sb(struct hottier *ht, bool flush)
{
	hottier_sb_encode(ht->sb, ht->meta_buf);
	return meta_io(ht, REQ_OP_WRITE | REQ_FUA | (flush ? REQ_PREFLUSH : 0),
		       0, HOTTIER_META_BLOCK);
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

	n = hottier_policy_pin_ranges(&ht->policy, NULL, NULL, 0, true);
	if (n > HOTTIER_SB_MAX_PINS)
		return -ENOSPC;
	n = hottier_policy_pin_ranges(&ht->policy, first, last, n, false);
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
	if (!ht->meta_buf || !ht->sb || !ht->pin_buf) {
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
}

/*
 * Read the records of the map written at the last clean stop: their
 * replicas are put back if @restore, else (a crash) only counted as
 * dropped. The counts go to the status.
 */
static int load_map(struct hottier *ht, bool restore)
{
	u64 nr_extents = ((ht->ti->len - 1) >> ht->extent_shift) + 1;
	u16 epoch = hottier_policy_epoch(&ht->policy);
	struct hottier_rec_disk *d = ht->meta_buf;
	u32 slot, i, n, restored = 0, dropped = 0;
	struct hottier_rec rec;
	int r = 0;

	if (restore)
		hottier_map_restore_begin(&ht->map);
	for (slot = 0; slot < ht->layout.nr_slots; slot += n) {
		n = min_t(u64, RECS_PER_IO, ht->layout.nr_slots - slot);
		r = meta_io(ht, REQ_OP_READ, HOTTIER_SB_SECTORS +
			    div_u64((u64)slot * HOTTIER_MAP_ENTRY_BYTES,
				    SECTOR_SIZE),
			    round_up(n * HOTTIER_MAP_ENTRY_BYTES, SECTOR_SIZE));
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
						 HOTTIER_SLOT_HEAT_SHIFT, epoch))
				dropped++;
			else
				restored++;
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
	if (restore)
		DMINFO("%s: %u replicas restored from the SSD's map, %u dropped",
		       ht_name(ht), restored, dropped);
	return 0;
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
	unsigned int order = get_order(HOTTIER_SCRUB_CHUNK);
	u32 want = ht->args.map_verify, slot;
	u64 step, seen = 0, checked = 0;
	struct hottier_mslot *s;
	struct page *a, *b;
	int r = 0;

	if (!want || !ht->map_loaded || ht->map_handed_over)
		return;
	step = max_t(u64, 1, div_u64(ht->map_loaded, want));
	a = alloc_pages(GFP_KERNEL, order);
	b = alloc_pages(GFP_KERNEL, order);
	if (!a || !b)
		r = -ENOMEM;
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
	if (a)
		__free_pages(a, order);
	if (b)
		__free_pages(b, order);
	WRITE_ONCE(ht->map_checked, checked);
	if (!r) {
		DMINFO("%s: %llu replicas restored match the HDD", ht_name(ht),
		       checked);
		return;
	}
	hottier_drop_range(ht, 0, U64_MAX - 1, true);
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
 * The first resume: read what the SSD holds, restore it if it was left
 * clean by this HDD's map, and mark it in use. *@pins: the superblock's
 * pins should be applied (a clean or crashed map of ours).
 */
static int take_over(struct hottier *ht, bool *pins)
{
	struct hottier_sb *sb = ht->sb;
	enum hottier_sb_kind kind;
	char *why = NULL;
	int r;

	*pins = false;
	r = read_sb(ht, sb, &kind);
	if (r)
		return r;
	if (kind == HOTTIER_SB_OURS && !ht->args.format_ssd &&
	    !hottier_sb_check(sb, ht->args.hdd_id, ht->args.extent_sectors,
			      &ht->layout, &why)) {
		*pins = true;
		if (sb->flags & HOTTIER_SB_CLEAN) {
			if (!load_map(ht, true))
				verify_map(ht);
		} else {
			/* A crash: only the pins are kept. */
			load_map(ht, false);
			DMWARN("%s: the SSD's map was not stopped cleanly: %llu replicas dropped",
			       ht_name(ht), ht->map_dropped);
			sb->nonce = get_random_u32();
		}
	} else {
		if (kind == HOTTIER_SB_CORRUPT)
			DMWARN("%s: the SSD's superblock fails its checksum: an empty map",
			       ht_name(ht));
		else if (why)
			/* A reload that changed the extent size, say. */
			DMINFO("%s: the SSD's map is not taken over: %s",
			       ht_name(ht), why);
		format_sb(ht);
	}
	sb->flags &= ~HOTTIER_SB_CLEAN;
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
	bool pins = false;
	int r;

	if (!ht->taken_over) {
		r = take_over(ht, &pins);
		if (r)
			return r;
		WRITE_ONCE(ht->taken_over, true);
		ht->sb_pins = pins;
	} else {
		ht->sb->flags &= ~HOTTIER_SB_CLEAN;
		ht->sb->seq++;
	}
	r = write_sb(ht, false);
	if (!r)
		WRITE_ONCE(ht->map_failed, false);
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
	} else if (!ht->taken_over) {
		r = invalidate_map(ht);
		if (r)
			DMWARN("%s: cannot invalidate a map on the SSD (error %d)",
			       ht_name(ht), r);
		WRITE_ONCE(ht->taken_over, true);
		r = 0;
	}
	mutex_unlock(&ht->lock);
	return r;
}

/* After resume's pins were taken over: those the superblock holds. */
void hottier_persist_apply_pins(struct hottier *ht)
{
	struct hottier_sb *sb = ht->sb;
	u32 i, refused = 0;

	if (!ht->sb_pins)
		return;
	ht->sb_pins = false;
	mutex_lock(&ht->lock);
	for (i = 0; i < sb->nr_pins; i++)
		if (hottier_pin_sectors(ht, sb->pins[i].first_sector,
					sb->pins[i].first_sector +
					sb->pins[i].nr_sectors))
			refused++;
	mutex_unlock(&ht->lock);
	if (refused)
		DMWARN("%s: %u of %u pinned ranges on the SSD could not be pinned again",
		       ht_name(ht), refused, sb->nr_pins);
}

/*
 * Before a pin: whether the superblock will have room for it (a new range
 * adds at most one). -E2BIG if not.
 */
int hottier_persist_pin_room(struct hottier *ht)
{
	if (!persistent(ht))
		return 0;
	if (hottier_policy_pin_ranges(&ht->policy, NULL, NULL, 0, true) <
	    HOTTIER_SB_MAX_PINS)
		return 0;
	DMERR("%s: pin: at most %u pinned ranges are kept on the SSD",
	      ht_name(ht), HOTTIER_SB_MAX_PINS);
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
	r = pins_to_sb(ht);
	if (r > 0)
		r = write_sb(ht, false);
	if (r)
		DMERR("%s: cannot write the pins to the SSD (error %d)",
		      ht_name(ht), r);
	return r;
}

/*
 * Replicas were dropped by a message (ht->lock held). While suspended after
 * a clean stop, the SSD's map still holds them: it is marked unclean, so a
 * removal now never brings them back.
 */
int hottier_persist_dropped(struct hottier *ht)
{
	int r;

	if (!persistent(ht) || !(ht->sb->flags & HOTTIER_SB_CLEAN))
		return 0;
	ht->sb->flags &= ~HOTTIER_SB_CLEAN;
	r = write_sb(ht, false);
	if (r)
		DMERR("%s: cannot mark the SSD's map unclean (error %d)",
		      ht_name(ht), r);
	return r;
}

/* Every resident slot's record, under @nonce; chunks without one skipped. */
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
			valid++;
		}
		if (valid) {
			r = meta_io(ht, REQ_OP_WRITE, HOTTIER_SB_SECTORS +
				    div_u64((u64)slot * HOTTIER_MAP_ENTRY_BYTES,
					    SECTOR_SIZE),
				    round_up(n * HOTTIER_MAP_ENTRY_BYTES,
					     SECTOR_SIZE));
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
	if (!r)
		r = write_records(ht, nonce);
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
	}
	return r;
}

void hottier_persist_stop(struct hottier *ht)
{
	if (!persistent(ht) || !ht->taken_over || is_degraded(ht))
		return;
	mutex_lock(&ht->lock);
	if (write_map(ht))
		WRITE_ONCE(ht->map_failed, true);
	mutex_unlock(&ht->lock);
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
	if (READ_ONCE(ht->map_failed))
		return HOTTIER_MAP_FAILED;
	if (READ_ONCE(ht->sb->flags) & HOTTIER_SB_CLEAN)
		return HOTTIER_MAP_CLEAN;
	return HOTTIER_MAP_OPEN;
}
