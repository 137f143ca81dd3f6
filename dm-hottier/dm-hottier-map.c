// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: the SSD's slots, the extent -> slot index and the victim
 * queues. See dm-hottier-map.h.
 */
#include "dm-hottier-map.h"
#include "dm-hottier-compat.h"

#include <linux/gfp.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>

/* Table loads never wake the OOM killer, nor warn: they fail. */
#define HOTTIER_MAP_GFP	(GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

static u32 bucket_bits(u64 nr_slots)
{
	/* The largest power of two not above nr_slots: 1 to 2 per bucket. */
	return max_t(u32, ilog2(max_t(u64, nr_slots, 1)), 6);
}

static u32 nr_chunks(u64 n)
{
	return DIV_ROUND_UP_ULL(n, HOTTIER_MAP_CHUNK);
}

/* What hottier_map_init() allocates for nr_slots, in bytes. */
u64 hottier_map_bytes(u64 nr_slots)
{
	u64 nr_buckets = 1ULL << bucket_bits(nr_slots);

	return nr_slots * sizeof(struct hottier_mslot) +
	       nr_buckets * sizeof(u32) +
	       (u64)(nr_chunks(nr_slots) + nr_chunks(nr_buckets)) *
	       sizeof(void *);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_bytes);

static u32 *bucket(struct hottier_map *m, u32 b)
{
	return &m->buckets[b >> HOTTIER_MAP_CHUNK_SHIFT]
			  [b & (HOTTIER_MAP_CHUNK - 1)];
}

static u32 bucket_of(struct hottier_map *m, u64 extent)
{
	return hash_64(extent, m->bucket_bits);
}

/* List links: a slot's, or a head's (index nr_slots + head). */
static u32 *next_of(struct hottier_map *m, u32 i)
{
	return i < m->nr_slots ? &hottier_mslot(m, i)->next :
				 &m->head[i - m->nr_slots].next;
}

static u32 *prev_of(struct hottier_map *m, u32 i)
{
	return i < m->nr_slots ? &hottier_mslot(m, i)->prev :
				 &m->head[i - m->nr_slots].prev;
}

static u32 head_index(struct hottier_map *m, unsigned int head)
{
	return m->nr_slots + head;
}

static bool mq_empty(struct hottier_map *m, unsigned int head)
{
	return m->head[head].next == head_index(m, head);
}

static void mq_add_tail(struct hottier_map *m, unsigned int head, u32 i)
{
	u32 h = head_index(m, head);
	u32 last = m->head[head].prev;

	*next_of(m, last) = i;
	*prev_of(m, i) = last;
	*next_of(m, i) = h;
	m->head[head].prev = i;
}

static void mq_del(struct hottier_map *m, u32 i)
{
	u32 prev = *prev_of(m, i), next = *next_of(m, i);

	*next_of(m, prev) = next;
	*prev_of(m, next) = prev;
	*next_of(m, i) = HOTTIER_NIL;
	*prev_of(m, i) = HOTTIER_NIL;
}

/* Move all of @from to the tail of @to (both heads). */
static void mq_splice_tail(struct hottier_map *m, unsigned int from,
			   unsigned int to)
{
	u32 first = m->head[from].next, last = m->head[from].prev;
	u32 t = head_index(m, to), tail = m->head[to].prev;

	if (mq_empty(m, from))
		return;
	*next_of(m, tail) = first;
	*prev_of(m, first) = tail;
	*next_of(m, last) = t;
	m->head[to].prev = last;
	m->head[from].next = head_index(m, from);
	m->head[from].prev = head_index(m, from);
}

static void free_chunks(void **chunks, u32 n)
{
	u32 i;

	if (!chunks)
		return;
	for (i = 0; i < n; i++)
		kvfree(chunks[i]);
	kvfree(chunks);
}

static void **alloc_chunks(u64 n, size_t size)
{
	u32 i, nr = nr_chunks(n);
	void **chunks = kvcalloc(nr, sizeof(*chunks), HOTTIER_MAP_GFP);

	if (!chunks)
		return NULL;
	for (i = 0; i < nr; i++) {
		u64 left = n - (u64)i * HOTTIER_MAP_CHUNK;

		chunks[i] = kvmalloc_array(min_t(u64, left, HOTTIER_MAP_CHUNK),
					   size, HOTTIER_MAP_GFP);
		if (!chunks[i]) {
			free_chunks(chunks, i);
			return NULL;
		}
	}
	return chunks;
}

/* Every slot free, slot 0 handed out first. -ENOMEM: see map_bytes(). */
int hottier_map_init(struct hottier_map *m, u32 nr_slots)
{
	u32 i, nr_buckets;

	memset(m, 0, sizeof(*m));
	if (!nr_slots || nr_slots >= HOTTIER_NIL - HOTTIER_NR_MQ)
		return -EINVAL;
	m->nr_slots = nr_slots;
	m->bucket_bits = bucket_bits(nr_slots);
	nr_buckets = 1U << m->bucket_bits;
	m->slots = (struct hottier_mslot **)
		alloc_chunks(nr_slots, sizeof(struct hottier_mslot));
	m->buckets = (u32 **)alloc_chunks(nr_buckets, sizeof(u32));
	if (!m->slots || !m->buckets) {
		hottier_map_exit(m);
		return -ENOMEM;
	}
	for (i = 0; i < HOTTIER_MAP_LOCKS; i++)
		spin_lock_init(&m->locks[i].lock);
	spin_lock_init(&m->qlock);
	for (i = 0; i < HOTTIER_NR_MQ; i++) {
		m->head[i].next = head_index(m, i);
		m->head[i].prev = head_index(m, i);
	}
	for (i = 0; i < nr_buckets; i++)
		*bucket(m, i) = HOTTIER_NIL;
	for (i = 0; i < nr_slots; i++) {
		struct hottier_mslot *s = hottier_mslot(m, i);

		memset(s, 0, sizeof(*s));
		s->hnext = HOTTIER_NIL;
		s->state = HOTTIER_S_FREE;
		s->queue = HOTTIER_SQ_FREE;
		mq_add_tail(m, HOTTIER_MQ_FREE, i);
	}
	m->nr_free = nr_slots;
	atomic_set(&m->resident, 0);
	return 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_init);

void hottier_map_exit(struct hottier_map *m)
{
	free_chunks((void **)m->slots, nr_chunks(m->nr_slots));
	free_chunks((void **)m->buckets,
		    nr_chunks(1ULL << m->bucket_bits));
	m->slots = NULL;
	m->buckets = NULL;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_exit);

struct hottier_mlock *hottier_map_lock(struct hottier_map *m, u64 extent,
				       unsigned long *flags)
	__acquires(lock->lock)
{
	struct hottier_mlock *lock = &m->locks[bucket_of(m, extent) %
					       HOTTIER_MAP_LOCKS];

	spin_lock_irqsave(&lock->lock, *flags);
	return lock;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_lock);

void hottier_map_unlock(struct hottier_mlock *lock, unsigned long flags)
	__releases(lock->lock)
{
	spin_unlock_irqrestore(&lock->lock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_unlock);

/* The slot copying or holding @extent, or HOTTIER_NIL. */
u32 __hottier_map_find(struct hottier_map *m, u64 extent)
{
	u32 i = *bucket(m, bucket_of(m, extent));

	while (i != HOTTIER_NIL) {
		struct hottier_mslot *s = hottier_mslot(m, i);

		if (s->extent == extent)
			return i;
		i = s->hnext;
	}
	return HOTTIER_NIL;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_find);

/* A resident slot's heat, decayed to @epoch (unlocked readers: a hint). */
u32 hottier_mslot_heat(const struct hottier_mslot *s, u16 epoch)
{
	return hottier_heat_decay(READ_ONCE(s->heat),
				  (u16)(epoch - READ_ONCE(s->epoch)));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_mslot_heat);

/* A read of the replica in @slot: one more read of heat. */
u32 __hottier_map_hit(struct hottier_map *m, u32 slot, u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	u32 heat = hottier_mslot_heat(s, epoch) + HOTTIER_HEAT_ONE;

	heat = min_t(u32, heat, HOTTIER_SLOT_HEAT_MAX);
	WRITE_ONCE(s->heat, heat);
	WRITE_ONCE(s->epoch, epoch);
	return heat;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_hit);

/* A free slot, RESERVED with one reference, or HOTTIER_NIL. */
u32 hottier_map_alloc(struct hottier_map *m)
{
	struct hottier_mslot *s;
	unsigned long flags;
	u32 slot = HOTTIER_NIL;

	spin_lock_irqsave(&m->qlock, flags);
	if (!mq_empty(m, HOTTIER_MQ_FREE)) {
		slot = m->head[HOTTIER_MQ_FREE].next;
		mq_del(m, slot);
		m->nr_free--;
		s = hottier_mslot(m, slot);
		s->queue = HOTTIER_SQ_NONE;
		s->state = HOTTIER_S_RESERVED;
		s->flags = 0;
		atomic_set(&s->refs, 1);
	}
	spin_unlock_irqrestore(&m->qlock, flags);
	return slot;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_alloc);

void hottier_map_get(struct hottier_map *m, u32 slot)
{
	atomic_inc(&hottier_mslot(m, slot)->refs);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_get);

/*
 * Drop a reference; the last one frees the slot (it must be RESERVED: in
 * no index). True if the slot was freed.
 */
bool hottier_map_put(struct hottier_map *m, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	unsigned long flags;

	if (!atomic_dec_and_test(&s->refs))
		return false;
	WARN_ON_ONCE(READ_ONCE(s->state) != HOTTIER_S_RESERVED);
	spin_lock_irqsave(&m->qlock, flags);
	s->state = HOTTIER_S_FREE;
	s->flags = 0;
	s->queue = HOTTIER_SQ_FREE;
	mq_add_tail(m, HOTTIER_MQ_FREE, slot);
	m->nr_free++;
	spin_unlock_irqrestore(&m->qlock, flags);
	return true;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_put);

u32 hottier_map_nr_free(struct hottier_map *m)
{
	return READ_ONCE(m->nr_free);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_nr_free);

/* A RESERVED slot starts a copy of @extent: in the index, COPYING. */
void __hottier_map_insert(struct hottier_map *m, u32 slot, u64 extent)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	u32 *b = bucket(m, bucket_of(m, extent));

	s->extent = extent;
	s->state = HOTTIER_S_COPYING;
	s->flags = 0;
	s->hnext = *b;
	*b = slot;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_insert);

/* Queue a resident slot where it belongs; qlock held. */
static void __enqueue(struct hottier_map *m, u32 slot, u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);

	if (s->flags & HOTTIER_SF_PINNED) {
		mq_add_tail(m, HOTTIER_MQ_PINNED, slot);
		s->queue = HOTTIER_SQ_PINNED;
		m->nr_pinned++;
	} else {
		mq_add_tail(m, hottier_heat_band(hottier_mslot_heat(s, epoch)),
			    slot);
		s->queue = HOTTIER_SQ_LEVEL;
		m->nr_levelled++;
	}
}

static void __dequeue(struct hottier_map *m, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);

	switch (s->queue) {
	case HOTTIER_SQ_LEVEL:
		m->nr_levelled--;
		break;
	case HOTTIER_SQ_PINNED:
		m->nr_pinned--;
		break;
	default:
		return;
	}
	mq_del(m, slot);
	s->queue = HOTTIER_SQ_NONE;
}

/* The copy into a COPYING slot completed: RESIDENT with @heat. */
void __hottier_map_install(struct hottier_map *m, u32 slot, u32 heat,
			   u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	unsigned long flags;

	s->heat = min_t(u32, heat, HOTTIER_SLOT_HEAT_MAX);
	s->epoch = epoch;
	s->state = HOTTIER_S_RESIDENT;
	atomic_inc(&m->resident);
	spin_lock_irqsave(&m->qlock, flags);
	__enqueue(m, slot, epoch);
	spin_unlock_irqrestore(&m->qlock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_install);

/*
 * Take a COPYING or RESIDENT slot out of the index and its queue: it is
 * RESERVED again, its reference now the caller's (to put, or to reuse the
 * slot once its I/O drained).
 */
void __hottier_map_remove(struct hottier_map *m, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	u32 *p = bucket(m, bucket_of(m, s->extent));
	unsigned long flags;

	while (*p != slot && *p != HOTTIER_NIL)
		p = &hottier_mslot(m, *p)->hnext;
	if (WARN_ON_ONCE(*p != slot))
		return;
	*p = s->hnext;
	s->hnext = HOTTIER_NIL;
	if (s->state == HOTTIER_S_RESIDENT)
		atomic_dec(&m->resident);
	s->state = HOTTIER_S_RESERVED;
	spin_lock_irqsave(&m->qlock, flags);
	__dequeue(m, slot);
	spin_unlock_irqrestore(&m->qlock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_remove);

/* Pin or unpin a slot; a resident one moves between its queues. */
void __hottier_map_set_pinned(struct hottier_map *m, u32 slot, bool pinned)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	unsigned long flags;

	if (!!(s->flags & HOTTIER_SF_PINNED) == pinned)
		return;
	spin_lock_irqsave(&m->qlock, flags);
	if (pinned)
		s->flags |= HOTTIER_SF_PINNED;
	else
		s->flags &= ~HOTTIER_SF_PINNED;
	if (s->queue != HOTTIER_SQ_NONE) {
		__dequeue(m, slot);
		__enqueue(m, slot, s->epoch);
	}
	spin_unlock_irqrestore(&m->qlock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_set_pinned);

/*
 * The slot to evict: from the lowest level up, the first slot whose heat
 * is still within its level's band; a slot that got hotter since it was
 * queued moves up to its band instead. At most HOTTIER_VICTIM_VISITS slots
 * are looked at: then the coldest of them is the victim. Returns the slot
 * (still RESIDENT: the caller removes it under its bucket lock, checking
 * it is still the same) with its heat and extent, or HOTTIER_NIL if no
 * unpinned replica exists. Pinned slots are never visited.
 */
u32 hottier_map_victim(struct hottier_map *m, u16 epoch, u32 *heat,
		       u64 *extent, unsigned int *visits)
{
	u32 best = HOTTIER_NIL, best_heat = U32_MAX, slot, h;
	unsigned int level, band, n = 0;
	unsigned long flags;

	spin_lock_irqsave(&m->qlock, flags);
	for (level = 0; level < HOTTIER_MAP_LEVELS &&
	     n < HOTTIER_VICTIM_VISITS; level++) {
		while (n < HOTTIER_VICTIM_VISITS &&
		       !mq_empty(m, level)) {
			slot = m->head[level].next;
			n++;
			h = hottier_mslot_heat(hottier_mslot(m, slot), epoch);
			if (h < best_heat) {
				best = slot;
				best_heat = h;
			}
			band = hottier_heat_band(h);
			if (band <= level) {
				best = slot;
				best_heat = h;
				goto out;
			}
			mq_del(m, slot);
			mq_add_tail(m, band, slot);
		}
	}
out:
	if (best != HOTTIER_NIL)
		*extent = hottier_mslot(m, best)->extent;
	spin_unlock_irqrestore(&m->qlock, flags);
	*heat = best_heat;
	if (visits)
		*visits = n;
	return best;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_victim);

/* A half-life passed: resident heat halved, so every level moves down. */
void hottier_map_age(struct hottier_map *m)
{
	unsigned long flags;
	unsigned int level;

	spin_lock_irqsave(&m->qlock, flags);
	for (level = 1; level < HOTTIER_MAP_LEVELS; level++)
		mq_splice_tail(m, level, level - 1);
	spin_unlock_irqrestore(&m->qlock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_age);
