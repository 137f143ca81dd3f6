/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: per-extent read heat of extents without a replica, and scan
 * detection.
 *
 * Plain C with no bio in its interfaces, so KUnit drives it directly.
 *
 * The heat table is set-associative: max_tracked entries, preallocated,
 * in sets of HOTTIER_HEAT_WAYS, each set under its own spinlock. An extent
 * hashes to one set; a new extent takes a free way or recycles the entry
 * of its set worth least that is not a queued promotion candidate. An
 * entry's worth is its heat, quartered for every epoch it went unread
 * (HOTTIER_HEAT_IDLE_SHIFT), so that heat a hot set left behind when it
 * moved gives way to the extents read now.
 * Memory is fixed when the table is built, whatever the workload.
 *
 * Heat is fixed point (HOTTIER_HEAT_ONE per read) and decays lazily: a
 * global epoch advances HOTTIER_EPOCHS_PER_HALFLIFE times per half-life
 * (hottier_heat_tick()), and a set is brought up to date, all its ways at
 * once, when it is locked. An entry is 8 bytes: its extent (below
 * HOTTIER_EXTENT_LIMIT), heat, epochs unread and flags.
 */
#ifndef DM_HOTTIER_HEAT_H
#define DM_HOTTIER_HEAT_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/spinlock.h>
#include <linux/sizes.h>
#include <linux/types.h>

#define HOTTIER_HEAT_WAYS		16
#define HOTTIER_HEAT_SHIFT		4
#define HOTTIER_HEAT_ONE		BIT(HOTTIER_HEAT_SHIFT)
/* Heat saturates here (HOTTIER_HEAT_BITS of an entry): 32767 reads. */
#define HOTTIER_HEAT_BITS		19
#define HOTTIER_HEAT_MAX		(BIT(HOTTIER_HEAT_BITS) - 1)
/* Epochs an entry went unread, counted up to HOTTIER_HEAT_IDLE_MAX. */
#define HOTTIER_HEAT_IDLE_BITS		3
#define HOTTIER_HEAT_IDLE_MAX		(BIT(HOTTIER_HEAT_IDLE_BITS) - 1)
/* An entry's worth is its heat shifted right this much per unread epoch. */
#define HOTTIER_HEAT_IDLE_SHIFT		2
/* Extents are below this: 40 bits of an entry, and of a slot's record. */
#define HOTTIER_EXTENT_BITS		40
#define HOTTIER_EXTENT_LIMIT		BIT_ULL(HOTTIER_EXTENT_BITS)
#define HOTTIER_EPOCHS_PER_HALFLIFE	4

enum hottier_entry_flag {
	HOTTIER_E_VALID		= BIT(0),	/* the way holds an extent */
	HOTTIER_E_QUEUED	= BIT(1),	/* a promotion candidate */
};

/* Entries that must stay tracked: recycling them would lose state. */
#define HOTTIER_E_BUSY	HOTTIER_E_QUEUED

/* An extent without a replica (a replica's heat lives in its slot). */
struct hottier_heat_entry {
	u64 extent:HOTTIER_EXTENT_BITS;	/* HDD extent index */
	u64 heat:HOTTIER_HEAT_BITS;	/* as of the set's epoch */
	u64 idle:HOTTIER_HEAT_IDLE_BITS; /* epochs since its last read */
	u64 flags:2;			/* enum hottier_entry_flag */
};

/*
 * The epoch is the low 16 bits of the table's: a set left untouched for
 * 65536 epochs may decay less than it should, never more.
 */
struct hottier_heat_set {
	spinlock_t lock;	/* protects epoch and way[] */
	u16 epoch;		/* every way's heat is as of this epoch */
	struct hottier_heat_entry way[HOTTIER_HEAT_WAYS];
};

/*
 * Sets are allocated in chunks of at most this many bytes: a power of two,
 * so that no allocation rounds up (a set's size depends on the kernel's
 * spinlock_t).
 */
#define HOTTIER_HEAT_CHUNK_BYTES	SZ_1M
#define HOTTIER_HEAT_CHUNK_SETS		(HOTTIER_HEAT_CHUNK_BYTES / \
					 sizeof(struct hottier_heat_set))

struct hottier_heat {
	struct hottier_heat_set **sets;	/* chunks of HOTTIER_HEAT_CHUNK_SETS */
	u32 nr_sets;
	atomic_t epoch;		/* advanced by hottier_heat_tick() */
	atomic_t tracked;	/* valid entries */
};

int hottier_heat_init(struct hottier_heat *h, u64 max_tracked);
void hottier_heat_exit(struct hottier_heat *h);
u64 hottier_heat_bytes(u64 max_tracked);
u64 hottier_heat_capacity(const struct hottier_heat *h);
struct hottier_heat_set *hottier_heat_set(struct hottier_heat *h, u32 i);
void hottier_heat_tick(struct hottier_heat *h);
void hottier_heat_forget_all(struct hottier_heat *h);
u32 hottier_heat_decay(u32 heat, u32 epochs);
struct hottier_heat_set *hottier_heat_lock_set(struct hottier_heat *h, u32 i,
					       unsigned long *flags)
	__acquires(set->lock);

struct hottier_heat_set *hottier_heat_lock(struct hottier_heat *h, u64 extent,
					   unsigned long *flags)
	__acquires(set->lock);
void hottier_heat_unlock(struct hottier_heat_set *set, unsigned long flags)
	__releases(set->lock);

/* These expect the set's lock held (hottier_heat_lock()). */
struct hottier_heat_entry *__hottier_heat_find(struct hottier_heat_set *set,
					       u64 extent);
struct hottier_heat_entry *__hottier_heat_get(struct hottier_heat *h,
					      struct hottier_heat_set *set,
					      u64 extent, u32 initial_heat);
u32 __hottier_heat_read(struct hottier_heat_entry *e);
u32 __hottier_heat_worth(const struct hottier_heat_entry *e);
u32 __hottier_heat_add(struct hottier_heat_entry *e, u32 amount);
void __hottier_heat_forget(struct hottier_heat *h,
			   struct hottier_heat_entry *e);

/*
 * Sequential-stream detection: the expected next sector of recent read
 * streams, hashed into buckets with a lock each. A read continuing a stream
 * adds to the stream's length; once a stream is longer than the cutoff its
 * reads are sequential and heat nothing.
 */
#define HOTTIER_SEQ_BUCKETS	64

struct hottier_seq_bucket {
	spinlock_t lock;	/* protects next and run */
	u64 next;		/* the sector the stream reads next */
	u64 run;		/* sectors read in sequence so far */
};

struct hottier_seq {
	struct hottier_seq_bucket b[HOTTIER_SEQ_BUCKETS];
};

void hottier_seq_init(struct hottier_seq *s);
bool hottier_seq_note(struct hottier_seq *s, u64 sector, u32 nr_sectors,
		      u64 cutoff_sectors);
bool hottier_seq_read(struct hottier_seq *s, u64 sector, u32 nr_sectors,
		      u64 cutoff_sectors, unsigned int extent_shift, bool *fresh);

/*
 * Views for administrators (the heat and top messages). Band 0 holds heat
 * under one read, band b (0 < b < HOTTIER_HEAT_BANDS - 1) heat of 2^(b-1)
 * to 2^b - 1 reads, the last band all that is hotter.
 */
#define HOTTIER_HEAT_BANDS	16

unsigned int hottier_heat_band(u32 heat);
void hottier_heat_band_range(unsigned int band, u32 *lo_reads, u32 *hi_reads);

struct hottier_top {
	u64 extent;
	u32 heat;
	bool resident;
	bool pinned;
};

void hottier_top_add(struct hottier_top *top, unsigned int n,
		     unsigned int *used, const struct hottier_top *t);

#endif /* DM_HOTTIER_HEAT_H */
