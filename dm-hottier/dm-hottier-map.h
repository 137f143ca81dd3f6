/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: the SSD's slots and the extent -> slot index. Plain C with no
 * bio, so KUnit drives it.
 *
 * Every slot has a 16-byte record, allocated in chunks when the table is
 * loaded; nothing is allocated afterwards. A slot is:
 *   FREE      on the free list;
 *   RESERVED  taken for a copy, or evicted for one: in no index or queue,
 *             waiting for the I/O still sent to it to drain (refs);
 *   COPYING   in the index under its extent, a copy into it running: reads
 *             of the extent go to the HDD;
 *   RESIDENT  in the index, holding a replica; on a victim level of the
 *             policy's by its worth, or pinned.
 *
 * The index is a chained hash: a u32 head per bucket, a u32 link per slot,
 * buckets under HOTTIER_MAP_LOCKS spinlocks. Lookup is O(1) and takes the
 * lock of its extent's bucket only. A free slot's link chains the free
 * list instead.
 *
 * A resident slot's heat and epoch are kept here (the meta word), but
 * what they are worth, and the victim levels that file slots by it, are
 * the policy's (struct hottier_levels, dm-hottier-policy.h): this map never
 * calls the policy; whoever installs, removes or pins a replica tells it.
 */
#ifndef DM_HOTTIER_MAP_H
#define DM_HOTTIER_MAP_H

#include "dm-hottier-heat.h"

#include <linux/atomic.h>
#include <linux/bitfield.h>
#include <linux/bits.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#define HOTTIER_NIL			U32_MAX
#define HOTTIER_MAP_LOCKS		256
/* Slot records and buckets are allocated in chunks of this many. */
#define HOTTIER_MAP_CHUNK_SHIFT		14
#define HOTTIER_MAP_CHUNK		BIT(HOTTIER_MAP_CHUNK_SHIFT)

/* A slot's record: meta. */
#define HOTTIER_MS_EXTENT_HI		GENMASK(7, 0)
#define HOTTIER_MS_STATE		GENMASK(9, 8)
#define HOTTIER_MS_FLAGS		GENMASK(11, 10)
#define HOTTIER_MS_REC			GENMASK(14, 12)	/* the on-SSD map's */
#define HOTTIER_MS_EPOCH		GENMASK(19, 15)
#define HOTTIER_MS_HEAT			GENMASK(31, 20)
/* Resident heat is kept in quarter reads. */
#define HOTTIER_SLOT_HEAT_SHIFT		(HOTTIER_HEAT_SHIFT - 2)
#define HOTTIER_SLOT_HEAT_MAX		(FIELD_MAX(HOTTIER_MS_HEAT) << \
					 HOTTIER_SLOT_HEAT_SHIFT)
#define HOTTIER_EPOCH_MASK		FIELD_MAX(HOTTIER_MS_EPOCH)

enum hottier_slot_state {
	HOTTIER_S_FREE,
	HOTTIER_S_RESERVED,
	HOTTIER_S_COPYING,
	HOTTIER_S_RESIDENT,
};

enum hottier_slot_flag {
	HOTTIER_SF_PINNED	= BIT(0),	/* never a victim */
	HOTTIER_SF_WRITING	= BIT(1),	/* a write-through in flight */
};

/*
 * The on-SSD map's bits of a slot (dm-hottier-persist.c). A slot taken
 * into the index (__hottier_map_insert) starts with neither; removing it
 * keeps them, for its owner to invalidate the record before the slot is
 * used again.
 */
enum hottier_slot_rec {
	HOTTIER_MR_REC		= BIT(0),	/* its record on the SSD is valid */
	HOTTIER_MR_PEND		= BIT(1),	/* copied, or no write since a commit */
	/*
	 * Its record on the SSD is an intent: written through since it was
	 * recorded, so after a crash it is kept only if it equals the HDD.
	 */
	HOTTIER_MR_INTENT	= BIT(2),
	HOTTIER_MR_ALL		= HOTTIER_MR_REC | HOTTIER_MR_PEND |
				  HOTTIER_MR_INTENT,
};

/*
 * meta is written under the bucket lock of the slot's extent while the
 * slot is in the index, else by its owner (the last reference, or
 * free_lock for the free list); lockless readers take hints from it
 * (READ_ONCE).
 */
struct hottier_mslot {
	u32 extent_lo;		/* COPYING, RESIDENT: extent, low 32 bits */
	u32 hnext;		/* index chain (bucket lock); free list (free_lock) */
	atomic_t refs;		/* the replica or reservation, and each I/O */
	u32 meta;		/* HOTTIER_MS_*: extent, state, flags, heat */
};

/*
 * A hierarchical bitmap: w[0] has a bit per slot, w[k] a bit per word of
 * w[k - 1] that is not zero. Its user locks it.
 */
#define HOTTIER_HBM_DEPTH	8

#define HOTTIER_HBM_NONE	ULONG_MAX

struct hottier_hbm {
	unsigned long *w[HOTTIER_HBM_DEPTH];
	unsigned long nbits[HOTTIER_HBM_DEPTH];
	unsigned int depth;
	unsigned long count;	/* bits set */
	unsigned long hand;	/* where the next victim search starts */
};

/* One of the map's bucket locks (hottier_map_lock()). */
struct hottier_mlock {
	spinlock_t lock;	/* protects its buckets' chains, slots, dropping */
	/*
	 * Recorded replicas of its extents taken out of the index whose
	 * records on the SSD are not invalidated yet: while there are, a
	 * write to one of its extents that finds no replica waits for the
	 * invalidation (the HDD must not change under a valid record).
	 */
	unsigned int dropping;
};

struct hottier_map {
	struct hottier_mslot **slots;	/* chunks of HOTTIER_MAP_CHUNK */
	u32 **buckets;			/* chunks of HOTTIER_MAP_CHUNK */
	u32 nr_slots;
	u32 bucket_bits;
	struct hottier_mlock locks[HOTTIER_MAP_LOCKS];	/* b % LOCKS */
	spinlock_t free_lock;	/* protects free, nr_free */
	u32 free;		/* the free list's first slot */
	u32 nr_free;
	atomic_t resident;	/* RESIDENT slots */
	/*
	 * The range index: a bit per group of 1 << rshift HDD extents that
	 * has a slot (COPYING or RESIDENT). A group is one extent while the
	 * HDD has at most HOTTIER_RANGE_BITS_PER_SLOT extents a slot; past
	 * that, groups are as small as HOTTIER_RANGE_GROUPS_PER_SLOT a slot
	 * allow, and rcount[] counts each group's slots. With no index
	 * (w[0] NULL: more than 1 << HOTTIER_RANGE_SHIFT_MAX extents a
	 * group) ranges are walked.
	 */
	spinlock_t rlock;	/* protects extents, rcount */
	struct hottier_hbm extents;
	u16 *rcount;
	unsigned int rshift;
};

#define HOTTIER_RANGE_BITS_PER_SLOT	64
#define HOTTIER_RANGE_GROUPS_PER_SLOT	4
#define HOTTIER_RANGE_SHIFT_MAX		15	/* a group's count fits a u16 */

/*
 * The extents of a range that may have a slot, for range operations: with
 * the range index, the extents in the range of each group that has a slot
 * (O(depth) each: exactly the extents with a slot when a group is one
 * extent, else at most 1 << rshift for each group with a slot); without
 * it, every extent of the range, or the extent of every slot, whichever
 * is fewer.
 * The caller looks each up under its bucket lock.
 */
enum hottier_range_walk {
	HOTTIER_RW_INDEX,
	HOTTIER_RW_EXTENTS,
	HOTTIER_RW_SLOTS,
};

struct hottier_range_iter {
	u64 next, last;
	u32 slot;
	enum hottier_range_walk how;
	unsigned long visits;	/* extents or slots looked at */
};

u64 hottier_hbm_words(unsigned long nbits);
int hottier_hbm_init(struct hottier_hbm *b, unsigned long nbits);
void hottier_hbm_exit(struct hottier_hbm *b);
void hottier_hbm_set(struct hottier_hbm *b, unsigned long i);
bool hottier_hbm_clear(struct hottier_hbm *b, unsigned long i);
unsigned long hottier_hbm_find(const struct hottier_hbm *b,
			       unsigned long from);

u64 hottier_map_bytes(u64 nr_slots);
u64 hottier_map_range_bytes(u64 nr_slots, u64 nr_extents);
int hottier_map_init(struct hottier_map *m, u32 nr_slots);
int hottier_map_init_ranges(struct hottier_map *m, u64 nr_extents);
void hottier_map_range_start(struct hottier_map *m,
			     struct hottier_range_iter *it, u64 first, u64 last);
bool hottier_map_range_next(struct hottier_map *m,
			    struct hottier_range_iter *it, u64 *extent);
void hottier_map_exit(struct hottier_map *m);

static inline struct hottier_mslot *hottier_mslot(struct hottier_map *m,
						  u32 slot)
{
	return &m->slots[slot >> HOTTIER_MAP_CHUNK_SHIFT]
			[slot & (HOTTIER_MAP_CHUNK - 1)];
}

struct hottier_mlock *hottier_map_lock(struct hottier_map *m, u64 extent,
				       unsigned long *flags)
	__acquires(lock->lock);
void hottier_map_unlock(struct hottier_mlock *lock, unsigned long flags)
	__releases(lock->lock);
void __hottier_map_dropping(struct hottier_map *m,
			    struct hottier_mlock *lock);
bool __hottier_map_dropped(struct hottier_map *m, struct hottier_mlock *lock);
bool hottier_map_any_dropping(struct hottier_map *m);

/* These expect the extent's bucket lock held (hottier_map_lock()). */
u32 __hottier_map_find(struct hottier_map *m, u64 extent);
void __hottier_map_insert(struct hottier_map *m, u32 slot, u64 extent);
void __hottier_map_install(struct hottier_map *m, u32 slot, u32 heat,
			   u16 epoch);
void __hottier_map_remove(struct hottier_map *m, u32 slot);
bool hottier_map_has_slot(struct hottier_map *m, u64 extent);
bool __hottier_map_evictable(struct hottier_map *m, u32 slot, u64 extent);

/* Epochs from a slot's last read (or install) to @epoch. */
static inline u32 hottier_meta_idle(u32 meta, u16 epoch)
{
	return (epoch - FIELD_GET(HOTTIER_MS_EPOCH, meta)) & HOTTIER_EPOCH_MASK;
}

/* A slot's heat, @epochs after its epoch. */
static inline u32 hottier_meta_heat(u32 meta, u32 epochs)
{
	return hottier_heat_decay(FIELD_GET(HOTTIER_MS_HEAT, meta) <<
				  HOTTIER_SLOT_HEAT_SHIFT, epochs);
}

u32 hottier_mslot_heat(const struct hottier_mslot *s, u16 epoch);

static inline u64 hottier_mslot_extent(const struct hottier_mslot *s)
{
	return READ_ONCE(s->extent_lo) |
	       (u64)FIELD_GET(HOTTIER_MS_EXTENT_HI, READ_ONCE(s->meta)) << 32;
}

static inline unsigned int hottier_mslot_state(const struct hottier_mslot *s)
{
	return FIELD_GET(HOTTIER_MS_STATE, READ_ONCE(s->meta));
}

static inline unsigned int hottier_mslot_flags(const struct hottier_mslot *s)
{
	return FIELD_GET(HOTTIER_MS_FLAGS, READ_ONCE(s->meta));
}

static inline unsigned int hottier_mslot_rec(const struct hottier_mslot *s)
{
	return FIELD_GET(HOTTIER_MS_REC, READ_ONCE(s->meta));
}

/* Under the bucket lock, or by the slot's owner (see the record). */
void __hottier_mslot_set_flags(struct hottier_mslot *s, unsigned int set,
			       unsigned int clear);
void __hottier_mslot_set_rec(struct hottier_mslot *s, unsigned int set,
			     unsigned int clear);
void __hottier_mslot_set_heat(struct hottier_mslot *s, u32 heat, u16 epoch);
u32 hottier_map_alloc(struct hottier_map *m);
void hottier_map_restore_begin(struct hottier_map *m);
bool hottier_map_restore(struct hottier_map *m, u32 slot, u64 extent,
			 u32 heat, u16 epoch);
void hottier_map_restore_end(struct hottier_map *m);
void hottier_map_get(struct hottier_map *m, u32 slot);
bool hottier_map_put(struct hottier_map *m, u32 slot);
u32 hottier_map_nr_free(struct hottier_map *m);

#endif /* DM_HOTTIER_MAP_H */
