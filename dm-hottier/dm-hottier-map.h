/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: the SSD's slots and the extent -> slot index. Plain C with no
 * bio, so KUnit drives it.
 *
 * Every slot has a 32-byte record, allocated in chunks when the table is
 * loaded; nothing is allocated afterwards. A slot is:
 *   FREE      on the free list;
 *   RESERVED  taken for a copy, or evicted for one: in no index or queue,
 *             waiting for the I/O still sent to it to drain (refs);
 *   COPYING   in the index under its extent, a copy into it running: reads
 *             of the extent go to the HDD;
 *   RESIDENT  in the index, holding a replica; on a victim queue by its
 *             heat band, or on the pinned list.
 *
 * The index is a chained hash: a u32 head per bucket, a u32 link per slot,
 * buckets under HOTTIER_MAP_LOCKS spinlocks. Lookup is O(1) and takes the
 * lock of its extent's bucket only.
 *
 * Victims come from HOTTIER_MAP_LEVELS queues, one per heat band (a slot
 * is queued at the band of its heat when it was installed). Hits update a
 * slot's heat under its bucket lock and never touch the queues: a victim
 * search looks at the heads of the lowest levels, moves a slot that got
 * hotter up to its band, and evicts the first that did not, visiting at
 * most HOTTIER_VICTIM_VISITS slots. Heat halves every half-life, so then
 * every level moves down one (hottier_map_age(), O(levels)). Pinned slots
 * are on a list of their own and never visited.
 */
#ifndef DM_HOTTIER_MAP_H
#define DM_HOTTIER_MAP_H

#include "dm-hottier-heat.h"

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#define HOTTIER_NIL			U32_MAX
#define HOTTIER_MAP_LEVELS		HOTTIER_HEAT_BANDS
#define HOTTIER_VICTIM_VISITS		64
#define HOTTIER_MAP_LOCKS		256
/* Slot records and buckets are allocated in chunks of this many. */
#define HOTTIER_MAP_CHUNK_SHIFT		14
#define HOTTIER_MAP_CHUNK		BIT(HOTTIER_MAP_CHUNK_SHIFT)
/* Resident heat is a u16 in HOTTIER_HEAT_ONE units. */
#define HOTTIER_SLOT_HEAT_MAX		U16_MAX

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

/* Which list a slot is on (map->qlock). */
enum hottier_slot_queue {
	HOTTIER_SQ_NONE,
	HOTTIER_SQ_LEVEL,	/* one of the victim levels */
	HOTTIER_SQ_PINNED,
	HOTTIER_SQ_FREE,
};

struct hottier_mslot {
	u64 extent;		/* COPYING, RESIDENT: the HDD extent */
	u32 hnext;		/* index chain; bucket lock */
	u32 prev, next;		/* list links; map->qlock */
	atomic_t refs;		/* the replica or reservation, and each I/O */
	u16 heat;		/* RESIDENT: heat as of .epoch; bucket lock */
	u16 epoch;
	u8 state;		/* enum hottier_slot_state; bucket lock */
	u8 flags;		/* enum hottier_slot_flag; bucket lock */
	u8 queue;		/* enum hottier_slot_queue; map->qlock */
	u8 spare;		/* room for the on-SSD map's state bits */
};

/* List heads: indexes nr_slots + i in the links. */
enum {
	HOTTIER_MQ_PINNED = HOTTIER_MAP_LEVELS,
	HOTTIER_MQ_FREE,
	HOTTIER_NR_MQ,
};

struct hottier_mhead {
	u32 prev, next;
};

/* One of the map's bucket locks (hottier_map_lock()). */
struct hottier_mlock {
	spinlock_t lock;	/* protects its buckets' chains and slots */
};

struct hottier_map {
	struct hottier_mslot **slots;	/* chunks of HOTTIER_MAP_CHUNK */
	u32 **buckets;			/* chunks of HOTTIER_MAP_CHUNK */
	u32 nr_slots;
	u32 bucket_bits;
	struct hottier_mlock locks[HOTTIER_MAP_LOCKS];	/* b % LOCKS */
	spinlock_t qlock;	/* protects head[], slots' prev, next, queue */
	struct hottier_mhead head[HOTTIER_NR_MQ];
	u32 nr_free;		/* qlock */
	u32 nr_levelled;	/* qlock */
	u32 nr_pinned;		/* qlock */
	atomic_t resident;
};

u64 hottier_map_bytes(u64 nr_slots);
int hottier_map_init(struct hottier_map *m, u32 nr_slots);
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

/* These expect the extent's bucket lock held (hottier_map_lock()). */
u32 __hottier_map_find(struct hottier_map *m, u64 extent);
u32 __hottier_map_hit(struct hottier_map *m, u32 slot, u16 epoch);
void __hottier_map_insert(struct hottier_map *m, u32 slot, u64 extent);
void __hottier_map_install(struct hottier_map *m, u32 slot, u32 heat,
			   u16 epoch);
void __hottier_map_remove(struct hottier_map *m, u32 slot);
void __hottier_map_set_pinned(struct hottier_map *m, u32 slot, bool pinned);

u32 hottier_mslot_heat(const struct hottier_mslot *s, u16 epoch);
u32 hottier_map_alloc(struct hottier_map *m);
void hottier_map_get(struct hottier_map *m, u32 slot);
bool hottier_map_put(struct hottier_map *m, u32 slot);
u32 hottier_map_victim(struct hottier_map *m, u16 epoch, u32 *heat,
		       u64 *extent, unsigned int *visits);
void hottier_map_age(struct hottier_map *m);
u32 hottier_map_nr_free(struct hottier_map *m);

#endif /* DM_HOTTIER_MAP_H */
