/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: the structures the target's files share.
 *
 *   dm-hottier-target.c   ctr/dtr, suspend/resume, status, limits
 *   dm-hottier-io.c       map and end_io: routing, write-through, retry,
 *                         write tracking
 *   dm-hottier-migrate.c  slots, replicas, copies, the promotion worker,
 *                         migration QoS
 *   dm-hottier-message.c  messages and scrub
 *   dm-hottier-persist.c  the on-SSD map: takeover, clean stop, pins
 *   dm-hottier-sysfs.c    /sys/block/dm-N/hottier/
 *
 * Heat, policy, route, meta (the on-SSD format) and args are plain C with no bio, so KUnit drives
 * them; their headers are included here.
 */
#ifndef DM_HOTTIER_H
#define DM_HOTTIER_H

#include "dm-hottier-args.h"
#include "dm-hottier-compat.h"
#include "dm-hottier-heat.h"
#include "dm-hottier-map.h"
#include "dm-hottier-meta.h"
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
#include <linux/percpu.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#define DM_MSG_PREFIX "hottier"

/* Status INFO counters, in the order they are printed. */
enum hottier_stat {
	HOTTIER_STAT_READS,
	HOTTIER_STAT_WRITES,
	HOTTIER_STAT_READ_SECTORS,
	HOTTIER_STAT_WRITE_SECTORS,
	HOTTIER_STAT_DISCARDS,
	HOTTIER_STAT_FLUSHES,
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
	/* not printed: the turnover detector's, reads continuing no stream */
	HOTTIER_STAT_FRESH_READS,
	HOTTIER_STAT_FRESH_HITS,
	/* printed last: */
	HOTTIER_STAT_TURNOVERS,
	HOTTIER_STAT_HDD_READ_ERRORS,
	HOTTIER_STAT_READ_RETRIES,
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
 * A promotion's state. promote_work alone takes a FREE context (its bit in
 * migs_busy), makes it WAITING and then COPYING, or cancels it; the copy's
 * completion alone makes a COPYING one FREE again, last.
 */
enum hottier_mig_state {
	HOTTIER_MIG_FREE,
	HOTTIER_MIG_WAITING,	/* its slot's I/O, a write or the rate limit */
	HOTTIER_MIG_COPYING,
};

/* A promotion: its work item and slot from the policy. */
struct hottier_migration {
	struct hottier *ht;
	struct work_struct work;	/* completion, on ht->wq */
	struct hottier_work w;
	int state;			/* enum hottier_mig_state */
	unsigned int gen;		/* write generation at the start */
	int invalidations;		/* ht->invalidations at the start */
	bool failed;
	bool ssd_failed;		/* the write to the SSD failed */
};

/* Status counters, per CPU: summed when read. */
struct hottier_stats {
	u64 v[HOTTIER_NR_STATS];
	/* The tick of the last read timed, per member (route.h) */
	unsigned long lat_jiffies[HOTTIER_ROUTE_NR];
};

/* Per-bio state (ti->per_io_data_size). */
struct hottier_io {
	u64 first, last;	/* extents counted in wtrack, if counted */
	bool flush;		/* an empty flush (to either member) */
	bool counted;
	bool write_through;	/* holds a cell, and so SF_WRITING, of its slot */
	u32 slot;		/* slot referenced, or HOTTIER_NIL */
	/*
	 * A write-through's cell, in ht->wt_cells under its extent's map
	 * lock: the target sectors [cell_start, cell_end) it writes (the
	 * whole extent while its record's invalidation is awaited), and the
	 * writes that overlap them, waiting for it to end.
	 */
	struct hlist_node cell;
	sector_t cell_start, cell_end;
	struct bio_list waiters;
	blk_status_t ssd_status; /* the write-through SSD clone's result */
	bool inval_wt;		/* a write-through behind an invalidation */
	int dev;		/* a read's device (enum hottier_route_dev), or -1 */
	bool retried;		/* a read sent again after it failed */
	bool unsent;		/* failed here, never sent to the HDD */
	u64 start_ns;		/* read sent, write mapped; 0: not timed */
	struct bvec_iter iter;	/* the read as mapped, for a retry */
	unsigned short bi_flags; /* ... and its flags (as dm-bio-record.h) */
};

#define HOTTIER_RETRY_MS	10
/* The longest wait between tries of pinned copies that failed. */
#define HOTTIER_PIN_RETRY_MAX_S	64
#define HOTTIER_SCRUB_CHUNK	(64 * 1024)
#define HOTTIER_SCRUB_TRIES	20
#define HOTTIER_DROP_WALK	64
/* Commits of the on-SSD map, while replicas wait to be recorded. */
#define HOTTIER_COMMIT_MS	1000
/* Records in a sector of the on-SSD map. */
#define HOTTIER_RECS_PER_SECTOR	(SECTOR_SIZE / HOTTIER_MAP_ENTRY_BYTES)
/* hottier.stuck_victim when there is none. */
#define HOTTIER_NO_VICTIM	U64_MAX
#define HOTTIER_QOS_PERIOD_NS	(100ULL * NSEC_PER_MSEC)

/* The scrub's state, the last status field. */
enum hottier_scrub_state {
	HOTTIER_SCRUB_IDLE,		/* none since the table was loaded */
	HOTTIER_SCRUB_RUNNING,
	HOTTIER_SCRUB_DONE,		/* went through every slot */
	HOTTIER_SCRUB_BUSY,		/* writes never left a replica alone */
	HOTTIER_SCRUB_ERROR,		/* a read failed, or no memory */
	HOTTIER_SCRUB_STOPPED,		/* the device was suspended */
	HOTTIER_NR_SCRUB_STATES,
};

/* What the SSD's superblock says of the on-SSD map, as the status shows it. */
enum hottier_map_state {
	HOTTIER_MAP_OFF,		/* no hdd_id: no map is kept */
	HOTTIER_MAP_PENDING,		/* not read yet: the first resume does */
	HOTTIER_MAP_OPEN,		/* marked in use: a crash drops it */
	HOTTIER_MAP_CLEAN,		/* written at a clean stop */
	HOTTIER_MAP_FAILED,		/* a stop could not write it: left open */
	HOTTIER_NR_MAP_STATES,
};

/* Bits of hottier.mode. */
#define HOTTIER_DEGRADED	0
/* The HDD failed an I/O and has completed none since (an event each time). */
#define HOTTIER_HDD_FAILING	1
/* The table has no SSD ("-"): degraded for its whole life. */
#define HOTTIER_NO_SSD		2
/* ... and its first resume logged it and raised an event. */
#define HOTTIER_NO_SSD_TOLD	3

/*
 * A device's claim on its members: no two hottier devices may share an HDD
 * or an SSD. Tables of one mapped device (a reload builds the new table while
 * the old one is live) share the claim.
 */
struct hottier_claim {
	struct list_head list;
	struct mapped_device *md;
	dev_t hdd;
	dev_t ssd;			/* 0: the table has no SSD */
	/*
	 * A table with no SSD wrote or discarded on the HDD: the SSD it
	 * waits for holds replicas that may be stale. Set once, by the
	 * I/O path; read by a reload's constructor.
	 */
	bool hdd_written;
};

/*
 * A probe of a member that routing latency left unused for a period: a
 * read of one logical block of its own, sent from a work item, whose only
 * use is its latency sample (dm-hottier-io.c, send_probe()). At most one
 * per member is in flight: bit 0 of @busy, set by send_probe() and
 * cleared by the completion.
 */
struct hottier_probe {
	struct hottier *ht;
	enum hottier_route_dev dev;
	unsigned long busy;
	sector_t sector;	/* on the member, set with busy */
	u64 start_ns;		/* at submission */
	struct work_struct work;
	struct page *page;	/* the member's logical block */
	unsigned int order;	/* of page */
	struct bio_vec bvec;
	struct bio bio;		/* last: it ends in a flexible array */
};

struct hottier {
	struct dm_target *ti;
	struct dm_dev *hdd;
	struct dm_dev *ssd;

	struct mutex lock;		/* serialises messages, sysfs stores */
	struct hottier_kobj *sysfs;	/* while resumed; resume/suspend only */
	struct hottier_args args;	/* the configuration; device paths unused */
	unsigned int extent_shift;
	struct hottier_layout layout;

	struct hottier_claim claim;	/* on the claims list when .md is set */

	struct hottier_map map;		/* residency and copy state */
	struct hottier_policy policy;	/* heat and promotion state */
	struct hottier_seq seq;

	struct hottier_wtrack wtrack[HOTTIER_WTRACK_BUCKETS];
	atomic_t invalidations;		/* copies started before are dropped */

	/*
	 * Write-throughs in flight (struct hottier_io.cell), a list per map
	 * lock, each protected by that lock: a write waits only for those
	 * it overlaps, so both members apply overlapping writes in one order.
	 */
	struct hlist_head wt_cells[HOTTIER_MAP_LOCKS];

	spinlock_t deferred_lock;	/* protects deferred */
	struct bio_list deferred;	/* large discards, for range_work */
	struct work_struct range_work;

	spinlock_t redispatch_lock;	/* protects redispatch */
	struct bio_list redispatch;	/* writes to map again, in order */
	struct work_struct redispatch_work;

	struct workqueue_struct *wq;
	struct delayed_work promote_work;
	/*
	 * Pinned extents asked for again after a failed copy, in
	 * pin_retry_s seconds (complete_copy()).
	 */
	struct delayed_work pin_retry_work;
	atomic_t pin_retry_s;
	struct delayed_work tick_work;
	struct delayed_work sample_work;	/* the turnover detector's */
	/*
	 * Serialises the policy's ticks, by tick_work or by a turnover that
	 * sample_work starts, and protects the fields below.
	 */
	struct mutex tick_lock;
	unsigned long tick_at;		/* jiffies of the last tick */
	unsigned long sample_at;	/* ... of the last sample */
	unsigned long turnover_at;	/* ... the turnover began */
	bool turning_over;		/* its epoch is not over */
	struct hottier_turnover turnover;
	struct dm_kcopyd_client *kcopyd;
	struct bio_set bs;
	struct hottier_migration migs[HOTTIER_MAX_MIGRATIONS];
	unsigned long migs_busy;	/* a bit per migs[] entry in use */
	atomic_t migrating;
	wait_queue_head_t migrate_wait;
	struct hottier_tokens tokens;	/* used by promote_work only */
	bool running;			/* copies may start: resumed */

	struct hottier_lat lat[2];	/* by enum hottier_route_dev */
	struct hottier_probe *probe[2];	/* by enum hottier_route_dev */
	struct hottier_qos qos;		/* the QoS controller; promote_work */
	u64 qos_last_ns;		/* last QoS update; promote_work */
	u64 qos_budget_ns;		/* the budget in force; promote_work */
	atomic_t qos_ios;		/* foreground HDD I/Os this period */
	atomic_t qos_near;		/* ... of them over half the budget */
	atomic_t qos_over;		/* ... of them over the budget */

	atomic_t ssd_errors;		/* since creation or ssd_reset */
	unsigned long mode;		/* HOTTIER_DEGRADED (until ssd_reset), ... */
	struct work_struct event_work;	/* dm_table_event() off the I/O path */

	spinlock_t retry_lock;		/* protects retry */
	struct bio_list retry;		/* failed SSD reads, for the HDD */
	struct work_struct retry_work;

	/* The scrub: scrub_work alone writes these; status reads them. */
	struct work_struct scrub_work;
	int scrub_state;		/* enum hottier_scrub_state */
	bool scrub_stop;		/* suspend: the scrub stops at once */
	u64 scrub_slots;		/* slots gone through */
	u64 scrub_checked;
	u64 scrub_mismatches;

	/*
	 * The on-SSD map (dm-hottier-persist.c): used at construction, and
	 * at resume, suspend and in messages under ht->lock, never on the I/O
	 * path. The status reads the counters and the state without a lock.
	 */
	struct dm_io_client *meta_io;
	void *meta_buf;			/* vmalloc: see hottier_persist_ctr */
	struct hottier_sb *sb;		/* the superblock as last written */
	u64 *pin_buf;			/* pinned ranges, to encode */
	bool taken_over;		/* the first resume read the SSD */
	/*
	 * Take the SSD's pins over, not its replicas: drop_replicas, or a
	 * reload after a table with no SSD wrote the HDD.
	 */
	bool drop_replicas;
	bool sb_pins;			/* its pins are to be applied */
	bool map_failed;		/* the last stop could not write it */
	bool map_handed_over;		/* a reload: the old table was live */
	u64 map_writes;			/* writes to the map area */
	u64 map_loaded;			/* replicas restored at the takeover */
	u64 map_dropped;		/* ... records found and not restored */
	u64 map_intents;		/* ... of them intents, to compare */
	u64 map_checked;		/* ... replicas compared (map_verify) */

	/*
	 * Records kept while the map is open (dm-hottier-persist.c): a
	 * commit records replicas left alone for a period; a write, discard,
	 * drop or eviction that meets a recorded replica waits for its
	 * invalidation. The bitmaps have a bit per unit of records (a logical
	 * block of the SSD, read and written whole).
	 */
	/*
	 * rec_lock protects rec_buf, every write of the map area and of the
	 * superblock, and records_live and records_stuck.
	 */
	struct mutex rec_lock;
	void *rec_buf;			/* HOTTIER_REC_IO bytes */
	unsigned long *rec_dirty;	/* units with a replica to record */
	unsigned long *rec_inval;	/* units with a record to invalidate */
	unsigned long *rec_write;	/* units a commit writes */
	u32 nr_rec_units;
	/* A unit of records: the SSD's logical block, 1 << this sectors. */
	unsigned int rec_unit_shift;
	bool records_live;		/* a slot's HOTTIER_MR_REC is trusted */
	bool records_stuck;		/* ... and could not be invalidated */
	/* protects inval_slots, inval_bios, stuck_victim (or NO_VICTIM) */
	spinlock_t inval_lock;
	u32 inval_slots;		/* dropped slots, chained by hnext */
	struct bio_list inval_bios;	/* I/O waiting for an invalidation */
	u64 stuck_victim;		/* an eviction's, its record not killed */
	/*
	 * The data path's, for the I/O that waited for an invalidation:
	 * sent, or failed with the status (set by hottier_io_init(), so
	 * persist calls nothing above it).
	 */
	void (*invalidated)(struct hottier *ht, struct bio_list *bios,
			    blk_status_t status);
	struct work_struct inval_work;
	struct delayed_work commit_work;
	/* protects ride_bios, commit_due, flushes_seen */
	spinlock_t ride_lock;
	struct bio_list ride_bios;	/* caller's flushes a commit ends */
	bool commit_due;		/* ... and it waits for one */
	bool flushes_seen;		/* a caller's flush since the last */

	struct hottier_stats __percpu *stats;
	char error[96];			/* a constructor error with numbers */
};

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
	HOTTIER_F_MIGRATIONS_ALLOWED, HOTTIER_F_MODE, HOTTIER_F_SCRUB_SLOTS,
	HOTTIER_F_SCRUB, HOTTIER_F_MAP, HOTTIER_F_MAP_LOADED,
	HOTTIER_F_MAP_DROPPED, HOTTIER_F_MAP_CHECKED, HOTTIER_F_MAP_WRITES,
	HOTTIER_F_TURNOVERS, HOTTIER_F_MIGRATIONS_WAITING,
	HOTTIER_F_HDD_READ_ERRORS, HOTTIER_F_READ_RETRIES, HOTTIER_NR_FIELDS,
};

extern const char * const hottier_field_names[HOTTIER_NR_FIELDS];

/* Geometry and small helpers */

static inline sector_t extent_first_sector(struct hottier *ht, u64 extent)
{
	return (sector_t)extent << ht->extent_shift;
}

/* The last extent may be short: the target need not end on an extent. */
static inline sector_t extent_len(struct hottier *ht, u64 extent)
{
	sector_t start = extent_first_sector(ht, extent);

	return min_t(sector_t, ht->args.extent_sectors, ht->ti->len - start);
}

/* The unit of the on-SSD map that holds @slot's record. */
static inline u32 rec_unit(struct hottier *ht, u32 slot)
{
	return (slot / HOTTIER_RECS_PER_SECTOR) >> ht->rec_unit_shift;
}

static inline sector_t slot_sector(struct hottier *ht, u32 slot)
{
	return ht->layout.meta_sectors + ((sector_t)slot << ht->extent_shift);
}

static inline void stat_add(struct hottier *ht, enum hottier_stat s, u64 v)
{
	this_cpu_add(ht->stats->v[s], v);
}

static inline void kick_promote(struct hottier *ht, unsigned long delay)
{
	mod_delayed_work(ht->wq, &ht->promote_work, delay);
}

static inline const char *ht_name(struct hottier *ht)
{
	return dm_device_name(dm_table_get_md(ht->ti->table));
}

static inline bool is_degraded(struct hottier *ht)
{
	return test_bit(HOTTIER_DEGRADED, &ht->mode);
}

static inline struct hottier_wtrack *hottier_wtrack_of(struct hottier *ht,
						       u64 extent)
{
	return &ht->wtrack[hash_64(extent, ilog2(HOTTIER_WTRACK_BUCKETS))];
}

/*
 * A slot's record on the SSD names its extent (valid, or an intent): a
 * drop or an eviction waits for its invalidation.
 */
static inline bool hottier_recorded(struct hottier *ht,
				    const struct hottier_mslot *s)
{
	return READ_ONCE(ht->records_live) &&
	       (hottier_mslot_rec(s) & (HOTTIER_MR_REC | HOTTIER_MR_INTENT));
}

/*
 * The files' interfaces, lowest layer first; a file calls only what is
 * below it (scripts/layers.py checks the built objects).
 */

/* dm-hottier-core.c: the replica core */
void hottier_slot_get(struct hottier *ht, u32 slot);
void hottier_slot_put(struct hottier *ht, u32 slot);
void hottier_rec_kick_commit(struct hottier *ht);
void hottier_rec_mark_dirty(struct hottier *ht, u32 slot);
bool __hottier_rec_dropping(struct hottier *ht, struct hottier_mlock *lock,
			    u32 slot);
void hottier_rec_drop(struct hottier *ht, u32 slot);
void hottier_rec_defer(struct hottier *ht, struct bio *bio, u32 slot);
void hottier_rec_installed(struct hottier *ht, u32 slot, u64 extent);
void __hottier_replica_set_pinned(struct hottier *ht, u32 slot, bool pinned);
bool __hottier_replica_remove(struct hottier *ht, struct hottier_mlock *lock,
			      u32 slot, bool *pinned);
bool hottier_replica_evict(struct hottier *ht, struct hottier_work *w);
void hottier_replica_start(struct hottier *ht, struct hottier_work *w);
void hottier_replica_done(struct hottier *ht, struct hottier_work *w,
			  bool ok);
bool hottier_replica_dropped(struct hottier *ht, u32 slot, bool pinned,
			     bool recorded);
int hottier_drop_replica(struct hottier *ht, u32 slot, u64 extent);
int hottier_drop_extent(struct hottier *ht, u64 extent, bool pinned_too);
bool hottier_drop_range(struct hottier *ht, u64 first, u64 last,
			bool pinned_too);
bool hottier_enter_degraded(struct hottier *ht);
void hottier_ssd_error(struct hottier *ht);
u64 hottier_stat_read(struct hottier *ht, enum hottier_stat s);

/* dm-hottier-scrub.c */
int hottier_compare_alloc(struct page **a, struct page **b);
void hottier_compare_free(struct page *a, struct page *b);
int hottier_compare_extent(struct hottier *ht, u64 extent, u32 slot,
			   struct page *a, struct page *b);
void hottier_scrub_init(struct hottier *ht);
int hottier_scrub_start(struct hottier *ht);
void hottier_scrub_stop(struct hottier *ht);
const char *hottier_scrub_state_name(int state);

/* dm-hottier-persist.c */
void hottier_persist_init(struct hottier *ht);
int hottier_persist_ctr(struct hottier *ht, bool live, char **error);
void hottier_persist_dtr(struct hottier *ht);
int hottier_persist_resume(struct hottier *ht);
int hottier_persist_pin_room(struct hottier *ht, u64 first, u64 last,
			     bool pin);
int hottier_persist_pins(struct hottier *ht);
int hottier_persist_sync(struct hottier *ht);
bool hottier_persist_evicted(struct hottier *ht, struct hottier_work *w);
void hottier_persist_started(struct hottier *ht);
void hottier_persist_stop(struct hottier *ht);
bool hottier_persist_ride(struct hottier *ht, struct bio *bio);
void hottier_persist_retire(struct hottier *ht);
int hottier_persist_state(struct hottier *ht);
const char *hottier_map_state_name(int state);

/* dm-hottier-migrate.c */
void hottier_migrate_init(struct hottier *ht);
void hottier_ticks_start(struct hottier *ht);
void hottier_ticks_stop(struct hottier *ht);
int hottier_alloc_tables(struct hottier *ht, char **error);
int hottier_init_migration(struct hottier *ht, char **error);
void hottier_cancel_waiting(struct hottier *ht);
void hottier_qos_note(struct hottier *ht, u64 ns);
void hottier_qos_restart(struct hottier *ht);
unsigned int hottier_migrations_allowed(struct hottier *ht);
unsigned int hottier_migrations_waiting(struct hottier *ht);

/* dm-hottier-io.c */
void hottier_io_init(struct hottier *ht);
int hottier_io_ctr(struct hottier *ht, char **error);
void hottier_io_stop(struct hottier *ht);
void hottier_io_dtr(struct hottier *ht);
int hottier_map(struct dm_target *ti, struct bio *bio);
int hottier_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error);

/* dm-hottier-status.c */
void hottier_keys_changed(struct hottier *ht);
int hottier_format_field(struct hottier *ht, enum hottier_field f, char *buf,
			 size_t size);
void hottier_status(struct dm_target *ti, status_type_t type,
		    unsigned int status_flags, char *result,
		    unsigned int maxlen);

/* dm-hottier-message.c */
int hottier_message(struct dm_target *ti, unsigned int argc, char **argv,
		    char *result, unsigned int maxlen);
int hottier_promote_range(struct hottier *ht, u64 first, u64 last, bool pin);
int hottier_pin_sectors(struct hottier *ht, u64 start, u64 end);

/* dm-hottier-sysfs.c */
void hottier_sysfs_init(void);
void hottier_sysfs_add(struct hottier *ht);
void hottier_sysfs_remove(struct hottier *ht);

#endif /* DM_HOTTIER_H */
