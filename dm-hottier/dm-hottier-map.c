// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: the SSD's slots, their references and free list, the
 * extent -> slot index and the range index. See dm-hottier-map.h.
 */
#include "dm-hottier-map.h"
#include "dm-hottier-compat.h"

#include <linux/bitmap.h>
#include <linux/gfp.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

static u32 bucket_bits(u64 nr_slots)
{
	/* The largest power of two not above nr_slots: 1 to 2 per bucket. */
	return max_t(u32, ilog2(max_t(u64, nr_slots, 1)), 6);
}

static u32 nr_chunks(u64 n)
{
	return DIV_ROUND_UP_ULL(n, HOTTIER_MAP_CHUNK);
}

/* Words of a hierarchical bitmap of @nbits, all its rows. */
u64 hottier_hbm_words(unsigned long nbits)
{
	unsigned long n = nbits;
	u64 words = 0;

	do {
		words += BITS_TO_LONGS(n);
		n = BITS_TO_LONGS(n);
	} while (n > 1);
	return words;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_hbm_words);

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

/* Table loads never wake the OOM killer, nor warn: they fail. */
#define HOTTIER_MAP_GFP	(GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

/*
 * Hierarchical bitmaps (struct hottier_hbm): the range index's, and the
 * policy's victim levels
 */

/*
 * Zeroed memory that costs what it asks for, to the page: kvmalloc() would
 * round a bitmap of 1M slots (130 KiB) up to a 256 KiB kmalloc.
 */
static void *zalloc_exact(size_t size)
{
	if (size <= PAGE_SIZE)
		return kzalloc(size, HOTTIER_MAP_GFP);
	return __vmalloc(size, HOTTIER_MAP_GFP | __GFP_ZERO);
}

int hottier_hbm_init(struct hottier_hbm *b, unsigned long nbits)
{
	unsigned long *w, n = nbits;
	unsigned int k = 0;

	memset(b, 0, sizeof(*b));
	if (WARN_ON_ONCE(nbits > BIT_ULL(6 * (HOTTIER_HBM_DEPTH - 1)) ||
			 !nbits))
		return -EINVAL;
	w = zalloc_exact(hottier_hbm_words(nbits) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	do {
		b->w[k] = w;
		b->nbits[k] = n;
		w += BITS_TO_LONGS(n);
		n = BITS_TO_LONGS(n);
		k++;
	} while (n > 1);
	b->depth = k;
	return 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_hbm_init);

void hottier_hbm_exit(struct hottier_hbm *b)
{
	kvfree(b->w[0]);
	b->w[0] = NULL;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_hbm_exit);

static bool hbm_test(const struct hottier_hbm *b, unsigned long i)
{
	return test_bit(i, b->w[0]);
}

void hottier_hbm_set(struct hottier_hbm *b, unsigned long i)
{
	unsigned int k;

	if (hbm_test(b, i))
		return;
	b->count++;
	for (k = 0; k < b->depth; k++) {
		unsigned long *word = &b->w[k][BIT_WORD(i)];
		bool was_empty = !*word;

		*word |= BIT_MASK(i);
		if (!was_empty)
			break;
		i = BIT_WORD(i);
	}
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_hbm_set);

/* True if @i was set. */
bool hottier_hbm_clear(struct hottier_hbm *b, unsigned long i)
{
	unsigned int k;

	if (!hbm_test(b, i))
		return false;
	b->count--;
	for (k = 0; k < b->depth; k++) {
		unsigned long *word = &b->w[k][BIT_WORD(i)];

		*word &= ~BIT_MASK(i);
		if (*word)
			break;
		i = BIT_WORD(i);
	}
	return true;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_hbm_clear);

/* The first bit set at or after @from, or HOTTIER_HBM_NONE: O(depth). */
unsigned long hottier_hbm_find(const struct hottier_hbm *b,
			       unsigned long from)
{
	unsigned long word, i = from;
	unsigned int k;

	for (k = 0; k < b->depth; k++) {
		if (i >= b->nbits[k])
			return HOTTIER_HBM_NONE;
		word = b->w[k][BIT_WORD(i)] & BITMAP_FIRST_WORD_MASK(i);
		if (word) {
			i = (i & ~(BITS_PER_LONG - 1)) + __ffs(word);
			while (k--)
				i = i * BITS_PER_LONG + __ffs(b->w[k][i]);
			return i;
		}
		i = BIT_WORD(i) + 1;
	}
	return HOTTIER_HBM_NONE;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_hbm_find);

/* Slots, buckets */

static u32 *bucket(struct hottier_map *m, u32 b)
{
	return &m->buckets[b >> HOTTIER_MAP_CHUNK_SHIFT]
			  [b & (HOTTIER_MAP_CHUNK - 1)];
}

static u32 bucket_of(struct hottier_map *m, u64 extent)
{
	return hash_64(extent, m->bucket_bits);
}

static unsigned int state_of(const struct hottier_mslot *s)
{
	return FIELD_GET(HOTTIER_MS_STATE, s->meta);
}

static void set_state(struct hottier_mslot *s, unsigned int state)
{
	WRITE_ONCE(s->meta, u32_replace_bits(s->meta, state,
					     HOTTIER_MS_STATE));
}

static bool is_pinned(const struct hottier_mslot *s)
{
	return FIELD_GET(HOTTIER_MS_FLAGS, s->meta) & HOTTIER_SF_PINNED;
}

void __hottier_mslot_set_flags(struct hottier_mslot *s, unsigned int set,
			       unsigned int clear)
{
	u32 flags = (FIELD_GET(HOTTIER_MS_FLAGS, s->meta) & ~clear) | set;

	WRITE_ONCE(s->meta, u32_replace_bits(s->meta, flags,
					     HOTTIER_MS_FLAGS));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_mslot_set_flags);

void __hottier_mslot_set_rec(struct hottier_mslot *s, unsigned int set,
			     unsigned int clear)
{
	u32 rec = (FIELD_GET(HOTTIER_MS_REC, s->meta) & ~clear) | set;

	WRITE_ONCE(s->meta, u32_replace_bits(s->meta, rec, HOTTIER_MS_REC));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_mslot_set_rec);

/* A slot's heat as of @epoch, its last read's (or install's). */
void __hottier_mslot_set_heat(struct hottier_mslot *s, u32 heat, u16 epoch)
{
	u32 meta = s->meta;

	heat = min_t(u32, heat, HOTTIER_SLOT_HEAT_MAX);
	meta = u32_replace_bits(meta, heat >> HOTTIER_SLOT_HEAT_SHIFT,
				HOTTIER_MS_HEAT);
	meta = u32_replace_bits(meta, epoch & HOTTIER_EPOCH_MASK,
				HOTTIER_MS_EPOCH);
	WRITE_ONCE(s->meta, meta);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_mslot_set_heat);

static void free_push(struct hottier_map *m, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);

	WRITE_ONCE(s->meta, FIELD_PREP(HOTTIER_MS_STATE, HOTTIER_S_FREE));
	s->hnext = m->free;
	m->free = slot;
	m->nr_free++;
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
	if (!nr_slots || nr_slots == HOTTIER_NIL)
		return -EINVAL;
	m->nr_slots = nr_slots;
	m->bucket_bits = bucket_bits(nr_slots);
	nr_buckets = 1U << m->bucket_bits;
	m->slots = (struct hottier_mslot **)
		alloc_chunks(nr_slots, sizeof(struct hottier_mslot));
	m->buckets = (u32 **)alloc_chunks(nr_buckets, sizeof(u32));
	if (!m->slots || !m->buckets)
		goto nomem;
	for (i = 0; i < HOTTIER_MAP_LOCKS; i++) {
		spin_lock_init(&m->locks[i].lock);
		m->locks[i].dropping = 0;
	}
	spin_lock_init(&m->free_lock);
	spin_lock_init(&m->rlock);
	for (i = 0; i < nr_buckets; i++)
		*bucket(m, i) = HOTTIER_NIL;
	m->free = HOTTIER_NIL;
	for (i = nr_slots; i-- > 0; ) {
		atomic_set(&hottier_mslot(m, i)->refs, 0);
		hottier_mslot(m, i)->extent_lo = 0;
		free_push(m, i);
	}
	atomic_set(&m->resident, 0);
	return 0;
nomem:
	hottier_map_exit(m);
	return -ENOMEM;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_init);

/*
 * Restoring a map read from the SSD, before the map is used: begin takes
 * every slot off the free list; each restored slot becomes RESIDENT with
 * its replica's reference; end frees the rest, slot 0 first. Not locked:
 * nothing else uses the map yet.
 */
void hottier_map_restore_begin(struct hottier_map *m)
{
	m->free = HOTTIER_NIL;
	m->nr_free = 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_restore_begin);

/*
 * @slot holds a replica of @extent, unpinned (pins are the policy's, and
 * pin their replicas again), on no victim level yet (the caller files it:
 * hottier_policy_restored()): false, and nothing done, if the slot is
 * restored already or the extent has a slot. No I/O reaches this map yet,
 * but its locks are taken as the I/O path takes them (the bucket lock with
 * interrupts off, the range index's under it): lockdep knows them by class,
 * across tables.
 */
bool hottier_map_restore(struct hottier_map *m, u32 slot, u64 extent,
			 u32 heat, u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	struct hottier_mlock *lock;
	unsigned long flags;
	bool ok;

	lock = hottier_map_lock(m, extent, &flags);
	ok = state_of(s) == HOTTIER_S_FREE &&
	     __hottier_map_find(m, extent) == HOTTIER_NIL;
	if (ok) {
		atomic_set(&s->refs, 1);
		__hottier_map_insert(m, slot, extent);
		__hottier_map_install(m, slot, heat, epoch);
	}
	hottier_map_unlock(lock, flags);
	return ok;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_restore);

void hottier_map_restore_end(struct hottier_map *m)
{
	u32 i;

	for (i = m->nr_slots; i-- > 0; )
		if (state_of(hottier_mslot(m, i)) == HOTTIER_S_FREE)
			free_push(m, i);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_restore_end);

/*
 * log2 of the extents in a group of the range index for @nr_extents (see
 * struct hottier_map), or -1 for no index.
 */
static int range_shift(u64 nr_slots, u64 nr_extents)
{
	int shift;

	if (!nr_extents || !nr_slots)
		return -1;
	if (nr_extents <= nr_slots * HOTTIER_RANGE_BITS_PER_SLOT)
		return 0;
	for (shift = 1; shift <= HOTTIER_RANGE_SHIFT_MAX; shift++)
		if (DIV_ROUND_UP_ULL(nr_extents, 1ULL << shift) <=
		    nr_slots * HOTTIER_RANGE_GROUPS_PER_SLOT)
			return shift;
	return -1;
}

static u64 range_groups(u64 nr_extents, int shift)
{
	return DIV_ROUND_UP_ULL(nr_extents, 1ULL << shift);
}

/* What hottier_map_init_ranges() allocates, in bytes. */
u64 hottier_map_range_bytes(u64 nr_slots, u64 nr_extents)
{
	int shift = range_shift(nr_slots, nr_extents);
	u64 groups;

	if (shift < 0)
		return 0;
	groups = range_groups(nr_extents, shift);
	return PAGE_ALIGN(hottier_hbm_words(groups) * sizeof(unsigned long)) +
	       (shift ? PAGE_ALIGN(groups * sizeof(u16)) : 0);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_range_bytes);

/*
 * The range index for an HDD of @nr_extents, after hottier_map_init(), or
 * none if a group would be more than 1 << HOTTIER_RANGE_SHIFT_MAX extents.
 */
int hottier_map_init_ranges(struct hottier_map *m, u64 nr_extents)
{
	int shift = range_shift(m->nr_slots, nr_extents);
	u64 groups;
	int r;

	if (shift < 0)
		return 0;
	groups = range_groups(nr_extents, shift);
	r = hottier_hbm_init(&m->extents, groups);
	if (r || !shift)
		return r;
	m->rcount = zalloc_exact(groups * sizeof(u16));
	if (!m->rcount) {
		hottier_hbm_exit(&m->extents);
		return -ENOMEM;
	}
	m->rshift = shift;
	return 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_init_ranges);

static void range_index(struct hottier_map *m, u64 extent, bool set)
{
	u64 g = extent >> m->rshift;

	if (!m->extents.w[0] || WARN_ON_ONCE(g >= m->extents.nbits[0]))
		return;
	spin_lock(&m->rlock);
	if (!m->rshift) {
		if (set)
			hottier_hbm_set(&m->extents, g);
		else
			hottier_hbm_clear(&m->extents, g);
	} else if (set) {
		if (!m->rcount[g]++)
			hottier_hbm_set(&m->extents, g);
	} else if (!WARN_ON_ONCE(!m->rcount[g]) && !--m->rcount[g]) {
		hottier_hbm_clear(&m->extents, g);
	}
	spin_unlock(&m->rlock);
}

void hottier_map_range_start(struct hottier_map *m,
			     struct hottier_range_iter *it, u64 first, u64 last)
{
	it->next = first;
	it->last = last;
	it->slot = 0;
	it->visits = 0;
	if (m->extents.w[0])
		it->how = HOTTIER_RW_INDEX;
	else if (last - first < m->nr_slots)
		it->how = HOTTIER_RW_EXTENTS;
	else
		it->how = HOTTIER_RW_SLOTS;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_range_start);

/* The next extent of the range that may have a slot; false at the end. */
bool hottier_map_range_next(struct hottier_map *m,
			    struct hottier_range_iter *it, u64 *extent)
{
	unsigned long flags, e;
	struct hottier_mslot *s;
	unsigned int state;

	if (it->next > it->last)
		return false;
	switch (it->how) {
	case HOTTIER_RW_INDEX:
		spin_lock_irqsave(&m->rlock, flags);
		e = hottier_hbm_find(&m->extents,
				     min_t(u64, it->next >> m->rshift,
					   ULONG_MAX));
		spin_unlock_irqrestore(&m->rlock, flags);
		if (e == HOTTIER_HBM_NONE)
			return false;
		e = max_t(u64, (u64)e << m->rshift, it->next);
		if (e > it->last)
			return false;
		break;
	case HOTTIER_RW_EXTENTS:
		e = it->next;
		break;
	default:
		for (; it->slot < m->nr_slots; it->slot++) {
			it->visits++;
			s = hottier_mslot(m, it->slot);
			state = hottier_mslot_state(s);
			e = hottier_mslot_extent(s);
			if ((state == HOTTIER_S_COPYING ||
			     state == HOTTIER_S_RESIDENT) &&
			    e >= it->next && e <= it->last) {
				it->slot++;
				*extent = e;
				return true;
			}
		}
		return false;
	}
	it->visits++;
	it->next = (u64)e + 1;
	*extent = e;
	return true;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_range_next);

void hottier_map_exit(struct hottier_map *m)
{
	hottier_hbm_exit(&m->extents);
	kvfree(m->rcount);
	m->rcount = NULL;
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

/*
 * A recorded replica of an extent under @lock (held) left the index, and
 * its record is being invalidated: writes to the extents under @lock that
 * find no replica wait until __hottier_map_dropped() says none is left.
 */
void __hottier_map_dropping(struct hottier_map *m, struct hottier_mlock *lock)
{
	lock->dropping++;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_dropping);

/* Its record is invalidated (@lock held): true if none is left there. */
bool __hottier_map_dropped(struct hottier_map *m, struct hottier_mlock *lock)
{
	if (WARN_ON_ONCE(!lock->dropping))
		return true;
	return !--lock->dropping;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_dropped);

/*
 * Whether a record is being invalidated under any lock, each looked at
 * under its lock: for a range too long to look up extent by extent. A
 * replica dropped before this looked at its lock is counted there.
 */
bool hottier_map_any_dropping(struct hottier_map *m)
{
	unsigned long flags;
	bool any = false;
	unsigned int i;

	for (i = 0; i < HOTTIER_MAP_LOCKS && !any; i++) {
		spin_lock_irqsave(&m->locks[i].lock, flags);
		any = m->locks[i].dropping;
		spin_unlock_irqrestore(&m->locks[i].lock, flags);
	}
	return any;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_any_dropping);

/* The slot copying or holding @extent, or HOTTIER_NIL. */
u32 __hottier_map_find(struct hottier_map *m, u64 extent)
{
	u32 i = *bucket(m, bucket_of(m, extent));

	while (i != HOTTIER_NIL) {
		struct hottier_mslot *s = hottier_mslot(m, i);

		if (hottier_mslot_extent(s) == extent)
			return i;
		i = s->hnext;
	}
	return HOTTIER_NIL;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_find);

/* A resident slot's heat, decayed to @epoch (unlocked readers: a hint). */
u32 hottier_mslot_heat(const struct hottier_mslot *s, u16 epoch)
{
	u32 meta = READ_ONCE(s->meta);

	return hottier_meta_heat(meta, hottier_meta_idle(meta, epoch));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_mslot_heat);

/* A free slot, RESERVED with one reference, or HOTTIER_NIL. */
u32 hottier_map_alloc(struct hottier_map *m)
{
	struct hottier_mslot *s;
	unsigned long flags;
	u32 slot;

	spin_lock_irqsave(&m->free_lock, flags);
	slot = m->free;
	if (slot != HOTTIER_NIL) {
		s = hottier_mslot(m, slot);
		m->free = s->hnext;
		m->nr_free--;
		s->hnext = HOTTIER_NIL;
		WRITE_ONCE(s->meta, FIELD_PREP(HOTTIER_MS_STATE,
					       HOTTIER_S_RESERVED));
		atomic_set(&s->refs, 1);
	}
	spin_unlock_irqrestore(&m->free_lock, flags);
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
	WARN_ON_ONCE(hottier_mslot_state(s) != HOTTIER_S_RESERVED);
	spin_lock_irqsave(&m->free_lock, flags);
	free_push(m, slot);
	spin_unlock_irqrestore(&m->free_lock, flags);
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

	if (WARN_ON_ONCE(extent >= HOTTIER_EXTENT_LIMIT))
		return;
	WRITE_ONCE(s->extent_lo, lower_32_bits(extent));
	WRITE_ONCE(s->meta,
		   FIELD_PREP(HOTTIER_MS_EXTENT_HI, upper_32_bits(extent)) |
		   FIELD_PREP(HOTTIER_MS_STATE, HOTTIER_S_COPYING));
	s->hnext = *b;
	*b = slot;
	range_index(m, extent, true);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_insert);

/*
 * The copy into a COPYING slot completed: RESIDENT with @heat, on no
 * victim level yet (the caller files it, __hottier_policy_installed()).
 */
void __hottier_map_install(struct hottier_map *m, u32 slot, u32 heat,
			   u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);

	__hottier_mslot_set_heat(s, heat, epoch);
	atomic_inc(&m->resident);
	set_state(s, HOTTIER_S_RESIDENT);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_install);

/*
 * Take a COPYING or RESIDENT slot out of the index (the caller took a
 * resident one off its victim level first, __hottier_policy_removing()):
 * it is RESERVED again, its reference now the caller's (to put, or to
 * reuse the slot once its I/O drained).
 */
void __hottier_map_remove(struct hottier_map *m, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	u32 *p = bucket(m, bucket_of(m, hottier_mslot_extent(s)));

	while (*p != slot && *p != HOTTIER_NIL)
		p = &hottier_mslot(m, *p)->hnext;
	if (WARN_ON_ONCE(*p != slot))
		return;
	*p = s->hnext;
	s->hnext = HOTTIER_NIL;
	range_index(m, hottier_mslot_extent(s), false);
	if (state_of(s) == HOTTIER_S_RESIDENT)
		atomic_dec(&m->resident);
	set_state(s, HOTTIER_S_RESERVED);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_remove);

/* @extent has a slot, copying or resident. Expects its lock not held. */
bool hottier_map_has_slot(struct hottier_map *m, u64 extent)
{
	struct hottier_mlock *lock;
	unsigned long flags;
	bool r;

	lock = hottier_map_lock(m, extent, &flags);
	r = __hottier_map_find(m, extent) != HOTTIER_NIL;
	hottier_map_unlock(lock, flags);
	return r;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_has_slot);

/*
 * Under @extent's lock: @slot still holds @extent's replica, resident and
 * unpinned, so an eviction the policy decided on may still take it.
 */
bool __hottier_map_evictable(struct hottier_map *m, u32 slot, u64 extent)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);

	return __hottier_map_find(m, extent) == slot &&
	       state_of(s) == HOTTIER_S_RESIDENT && !is_pinned(s);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_evictable);

