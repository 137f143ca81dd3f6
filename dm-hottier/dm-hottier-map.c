// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: the SSD's slots, the extent -> slot index and the victim
 * queues. See dm-hottier-map.h.
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
static u64 hbm_words(unsigned long nbits)
{
	unsigned long n = nbits;
	u64 words = 0;

	do {
		words += BITS_TO_LONGS(n);
		n = BITS_TO_LONGS(n);
	} while (n > 1);
	return words;
}

/* What hottier_map_init() allocates for nr_slots, in bytes. */
u64 hottier_map_bytes(u64 nr_slots)
{
	u64 nr_buckets = 1ULL << bucket_bits(nr_slots);

	return nr_slots * sizeof(struct hottier_mslot) +
	       nr_buckets * sizeof(u32) +
	       (u64)(nr_chunks(nr_slots) + nr_chunks(nr_buckets)) *
	       sizeof(void *) +
	       HOTTIER_MAP_LEVELS * hbm_words(max_t(u64, nr_slots, 1)) *
	       sizeof(unsigned long);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_bytes);

/* Table loads never wake the OOM killer, nor warn: they fail. */
#define HOTTIER_MAP_GFP	(GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

/* Hierarchical bitmaps (struct hottier_hbm): a victim level each */

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

static int hbm_init(struct hottier_hbm *b, unsigned long nbits)
{
	unsigned long *w, n = nbits;
	unsigned int k = 0;

	memset(b, 0, sizeof(*b));
	if (WARN_ON_ONCE(nbits > BIT_ULL(6 * (HOTTIER_HBM_DEPTH - 1)) ||
			 !nbits))
		return -EINVAL;
	w = zalloc_exact(hbm_words(nbits) * sizeof(*w));
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

static void hbm_exit(struct hottier_hbm *b)
{
	kvfree(b->w[0]);
	b->w[0] = NULL;
}

static bool hbm_test(const struct hottier_hbm *b, unsigned long i)
{
	return test_bit(i, b->w[0]);
}

static void hbm_set(struct hottier_hbm *b, unsigned long i)
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

/* True if @i was set. */
static bool hbm_clear(struct hottier_hbm *b, unsigned long i)
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

/* The first bit set at or after @from, or HOTTIER_HBM_NONE: O(depth). */
static unsigned long hbm_find(const struct hottier_hbm *b, unsigned long from)
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

/* Word @j of row @k of @src, and all below it, into @dst; @src's cleared. */
static void hbm_merge_word(struct hottier_hbm *dst, struct hottier_hbm *src,
			   unsigned int k, unsigned long j)
{
	unsigned long word = src->w[k][j];
	unsigned int t;

	if (k)
		for_each_set_bit(t, &word, BITS_PER_LONG)
			hbm_merge_word(dst, src, k - 1, j * BITS_PER_LONG + t);
	dst->w[k][j] |= word;
	src->w[k][j] = 0;
}

/* @dst |= @src, @src emptied: time in proportion to @src's words in use. */
static void hbm_merge(struct hottier_hbm *dst, struct hottier_hbm *src)
{
	if (!src->count)
		return;
	hbm_merge_word(dst, src, src->depth - 1, 0);
	dst->count += src->count;
	src->count = 0;
}

/* Slots, buckets, levels */

static u32 *bucket(struct hottier_map *m, u32 b)
{
	return &m->buckets[b >> HOTTIER_MAP_CHUNK_SHIFT]
			  [b & (HOTTIER_MAP_CHUNK - 1)];
}

static u32 bucket_of(struct hottier_map *m, u64 extent)
{
	return hash_64(extent, m->bucket_bits);
}

static struct hottier_hbm *level(struct hottier_map *m, unsigned int lvl)
{
	return &m->level[(m->base + lvl) % HOTTIER_MAP_LEVELS];
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

static void set_heat(struct hottier_mslot *s, u32 heat, u16 epoch)
{
	u32 meta = s->meta;

	heat = min_t(u32, heat, HOTTIER_SLOT_HEAT_MAX);
	meta = u32_replace_bits(meta, heat >> HOTTIER_SLOT_HEAT_SHIFT,
				HOTTIER_MS_HEAT);
	meta = u32_replace_bits(meta, epoch & HOTTIER_EPOCH_MASK,
				HOTTIER_MS_EPOCH);
	WRITE_ONCE(s->meta, meta);
}

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
	for (i = 0; i < HOTTIER_MAP_LEVELS; i++)
		if (hbm_init(&m->level[i], nr_slots))
			goto nomem;
	for (i = 0; i < HOTTIER_MAP_LOCKS; i++) {
		spin_lock_init(&m->locks[i].lock);
		m->locks[i].dropping = 0;
	}
	spin_lock_init(&m->qlock);
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
	atomic_set(&m->nr_cut, 0);
	m->turnover_heat = 0;
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
 * pin their replicas again): false, and nothing done, if the slot is
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
	return PAGE_ALIGN(hbm_words(groups) * sizeof(unsigned long)) +
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
	r = hbm_init(&m->extents, groups);
	if (r || !shift)
		return r;
	m->rcount = zalloc_exact(groups * sizeof(u16));
	if (!m->rcount) {
		hbm_exit(&m->extents);
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
			hbm_set(&m->extents, g);
		else
			hbm_clear(&m->extents, g);
	} else if (set) {
		if (!m->rcount[g]++)
			hbm_set(&m->extents, g);
	} else if (!WARN_ON_ONCE(!m->rcount[g]) && !--m->rcount[g]) {
		hbm_clear(&m->extents, g);
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
		e = hbm_find(&m->extents, min_t(u64, it->next >> m->rshift,
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
	unsigned int i;

	hbm_exit(&m->extents);
	kvfree(m->rcount);
	m->rcount = NULL;

	for (i = 0; i < HOTTIER_MAP_LEVELS; i++)
		hbm_exit(&m->level[i]);
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

/* Epochs from a slot's last read (or install) to @epoch. */
static u32 meta_idle(u32 meta, u16 epoch)
{
	return (epoch - FIELD_GET(HOTTIER_MS_EPOCH, meta)) & HOTTIER_EPOCH_MASK;
}

/* A slot's heat, @epochs after its epoch. */
static u32 meta_heat(u32 meta, u32 epochs)
{
	return hottier_heat_decay(FIELD_GET(HOTTIER_MS_HEAT, meta) <<
				  HOTTIER_SLOT_HEAT_SHIFT, epochs);
}

/* A resident slot's heat, decayed to @epoch (unlocked readers: a hint). */
u32 hottier_mslot_heat(const struct hottier_mslot *s, u16 epoch)
{
	u32 meta = READ_ONCE(s->meta);

	return meta_heat(meta, meta_idle(meta, epoch));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_mslot_heat);

/*
 * The rate rule's shift for a slot @idle epochs after its last read: the
 * reads its rate then (heat x ln2 / half-life, ln2 as 709 / 1024) says it
 * missed over the idle - 1 whole epochs since, past HOTTIER_RATE_GRACE.
 * The slot's heat is as of its last read until the refresh brings it up
 * (HOTTIER_IDLE_MAX epochs on), when its worth is nothing anyway. At most
 * 16380 x 709 x 30, within a u32.
 */
static u32 meta_rate_shift(u32 meta, u32 idle)
{
	u32 last = FIELD_GET(HOTTIER_MS_HEAT, meta) << HOTTIER_SLOT_HEAT_SHIFT;
	u32 missed;

	if (idle < 2)
		return 0;
	missed = last * 709 * (idle - 1) /
		 (1024 * HOTTIER_HEAT_ONE * HOTTIER_EPOCHS_PER_HALFLIFE);
	return missed > HOTTIER_RATE_GRACE ? missed - HOTTIER_RATE_GRACE : 0;
}

/*
 * What a resident slot is worth keeping at @epoch: its heat, quartered
 * for every epoch past HOTTIER_IDLE_GRACE since its last read (the rule of
 * the heat table's entries, after a grace: a replica cost a copy), and
 * halved for every read the rate rule says it missed. The victim levels
 * file it by its worth, and a candidate must beat its worth. @rate_shift
 * is meta_rate_shift()'s, for a caller that has it already.
 */
static u32 worth_shifted(u32 meta, u32 idle, u32 rate_shift)
{
	u32 heat = meta_heat(meta, idle), shift;

	if (idle <= HOTTIER_IDLE_GRACE)
		return heat;
	shift = (idle - HOTTIER_IDLE_GRACE) * HOTTIER_HEAT_IDLE_SHIFT +
		rate_shift;
	return shift < 32 ? heat >> shift : 0;
}

static u32 meta_worth(u32 meta, u32 idle)
{
	return worth_shifted(meta, idle, meta_rate_shift(meta, idle));
}

/*
 * Cut: the rate rule took the slot's worth down HOTTIER_RATE_CUT_SHIFT
 * halvings or more, and below a read. A replica whose reads stopped that
 * abruptly gives its slot to a candidate at the free-slot bar.
 */
static bool meta_cut(u32 meta, u32 idle)
{
	u32 rate_shift = meta_rate_shift(meta, idle);

	return rate_shift >= HOTTIER_RATE_CUT_SHIFT &&
	       worth_shifted(meta, idle, rate_shift) < HOTTIER_HEAT_ONE;
}

u32 hottier_mslot_worth(const struct hottier_mslot *s, u16 epoch)
{
	u32 meta = READ_ONCE(s->meta);

	return meta_worth(meta, meta_idle(meta, epoch));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_mslot_worth);

/* Whether the rate rule cut a resident slot at @epoch (a hint unlocked). */
bool hottier_mslot_cut(const struct hottier_mslot *s, u16 epoch)
{
	u32 meta = READ_ONCE(s->meta);

	return meta_cut(meta, meta_idle(meta, epoch));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_mslot_cut);

/* In a working-set turnover, and unread since the turnover's epoch began. */
static bool turnover_unread(struct hottier_map *m, u32 meta, u16 epoch)
{
	return READ_ONCE(m->turnover_heat) &&
	       READ_ONCE(m->turnover_epoch) == epoch &&
	       FIELD_GET(HOTTIER_MS_EPOCH, meta) !=
	       (epoch & HOTTIER_EPOCH_MASK);
}

/*
 * In a working-set turnover: unread since the turnover's epoch began, and its
 * heat at its last read (its rate then) says it missed the reads the
 * turnover's seconds so far allow (hottier_map_turnover()).
 */
static bool turnover_cut(struct hottier_map *m, u32 meta, u16 epoch)
{
	return turnover_unread(m, meta, epoch) &&
	       FIELD_GET(HOTTIER_MS_HEAT, meta) << HOTTIER_SLOT_HEAT_SHIFT >=
	       READ_ONCE(m->turnover_heat);
}

/* An unpinned replica the rate rule or a turnover cut: counted in nr_cut. */
static bool counts_cut(struct hottier_map *m, u32 meta, u16 epoch)
{
	return !(FIELD_GET(HOTTIER_MS_FLAGS, meta) & HOTTIER_SF_PINNED) &&
	       (meta_cut(meta, meta_idle(meta, epoch)) ||
		turnover_cut(m, meta, epoch));
}

/* hottier_mslot_worth(), nothing for a replica a turnover cut. */
u32 hottier_map_worth(struct hottier_map *m, u32 slot, u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);

	if (turnover_cut(m, READ_ONCE(s->meta), epoch))
		return 0;
	return hottier_mslot_worth(s, epoch);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_worth);

/* Cut by the rate rule or by a turnover (a hint unlocked). */
bool hottier_map_cut(struct hottier_map *m, u32 slot, u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);

	return turnover_cut(m, READ_ONCE(s->meta), epoch) ||
	       hottier_mslot_cut(s, epoch);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_cut);

/* A free slot, RESERVED with one reference, or HOTTIER_NIL. */
u32 hottier_map_alloc(struct hottier_map *m)
{
	struct hottier_mslot *s;
	unsigned long flags;
	u32 slot;

	spin_lock_irqsave(&m->qlock, flags);
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
	WARN_ON_ONCE(hottier_mslot_state(s) != HOTTIER_S_RESERVED);
	spin_lock_irqsave(&m->qlock, flags);
	free_push(m, slot);
	spin_unlock_irqrestore(&m->qlock, flags);
	return true;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_put);

u32 hottier_map_nr_free(struct hottier_map *m)
{
	return READ_ONCE(m->nr_free);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_nr_free);

/* Cut replicas left: while there are, the bar is the free-slot bar. */
u32 hottier_map_nr_cut(struct hottier_map *m)
{
	return atomic_read(&m->nr_cut);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_nr_cut);

/*
 * A cut replica was evicted; or (@none_left) the victim search found a
 * replica worth a read or more at the bottom, so no cut one is left.
 */
void hottier_map_cut_gone(struct hottier_map *m, bool none_left)
{
	if (none_left)
		atomic_set(&m->nr_cut, 0);
	else
		atomic_dec_if_positive(&m->nr_cut);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_cut_gone);

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

static unsigned int band_of(u32 heat)
{
	return min_t(unsigned int, hottier_heat_band(heat),
		     HOTTIER_MAP_LEVELS - 1);
}

/* A resident slot goes where it belongs; qlock held. */
static void __enqueue(struct hottier_map *m, u32 slot, u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);

	if (is_pinned(s))
		m->nr_pinned++;
	else
		hbm_set(level(m, band_of(hottier_mslot_worth(s, epoch))), slot);
}

static void __dequeue(struct hottier_map *m, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	unsigned int lvl;

	if (is_pinned(s)) {
		m->nr_pinned--;
		return;
	}
	for (lvl = 0; lvl < HOTTIER_MAP_LEVELS; lvl++)
		if (hbm_clear(&m->level[lvl], slot))
			return;
	WARN_ON_ONCE(1);
}

/* The copy into a COPYING slot completed: RESIDENT with @heat. */
void __hottier_map_install(struct hottier_map *m, u32 slot, u32 heat,
			   u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	unsigned long flags;

	set_heat(s, heat, epoch);
	atomic_inc(&m->resident);
	spin_lock_irqsave(&m->qlock, flags);
	set_state(s, HOTTIER_S_RESIDENT);
	__enqueue(m, slot, epoch);
	spin_unlock_irqrestore(&m->qlock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_install);

/*
 * Take a COPYING or RESIDENT slot out of the index and its level: it is
 * RESERVED again, its reference now the caller's (to put, or to reuse the
 * slot once its I/O drained).
 */
void __hottier_map_remove(struct hottier_map *m, u32 slot)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	u32 *p = bucket(m, bucket_of(m, hottier_mslot_extent(s)));
	unsigned long flags;

	while (*p != slot && *p != HOTTIER_NIL)
		p = &hottier_mslot(m, *p)->hnext;
	if (WARN_ON_ONCE(*p != slot))
		return;
	*p = s->hnext;
	s->hnext = HOTTIER_NIL;
	range_index(m, hottier_mslot_extent(s), false);
	if (state_of(s) != HOTTIER_S_RESIDENT) {
		set_state(s, HOTTIER_S_RESERVED);
		return;
	}
	atomic_dec(&m->resident);
	spin_lock_irqsave(&m->qlock, flags);
	__dequeue(m, slot);
	set_state(s, HOTTIER_S_RESERVED);
	spin_unlock_irqrestore(&m->qlock, flags);
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

/* Pin or unpin a slot; a resident one moves in or out of the levels. */
void __hottier_map_set_pinned(struct hottier_map *m, u32 slot, bool pinned)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	bool resident = state_of(s) == HOTTIER_S_RESIDENT;
	unsigned long flags;

	if (is_pinned(s) == pinned)
		return;
	spin_lock_irqsave(&m->qlock, flags);
	if (resident)
		__dequeue(m, slot);
	__hottier_mslot_set_flags(s, pinned ? HOTTIER_SF_PINNED : 0,
				  pinned ? 0 : HOTTIER_SF_PINNED);
	if (resident)
		__enqueue(m, slot, FIELD_GET(HOTTIER_MS_EPOCH, s->meta));
	spin_unlock_irqrestore(&m->qlock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_set_pinned);

/*
 * The slot to evict: from the lowest level up, the first slot from the
 * level's hand on whose worth is still within its level's band; a slot
 * read since it was put there moves up to its band instead. At most
 * HOTTIER_VICTIM_VISITS slots are looked at: then the least worth of them
 * is the victim. Returns the slot (still RESIDENT: the caller removes it
 * under its bucket lock, checking it is still the same) with its worth
 * and extent, or HOTTIER_NIL if no unpinned replica exists. Pinned slots
 * are never visited.
 */
u32 hottier_map_victim(struct hottier_map *m, u16 epoch, u32 *heat,
		       u64 *extent, unsigned int *visits)
{
	u32 best = HOTTIER_NIL, best_heat = U32_MAX, slot, h;
	unsigned int lvl, band, n = 0;
	unsigned long i;
	struct hottier_hbm *b;
	unsigned long flags;

	spin_lock_irqsave(&m->qlock, flags);
	for (lvl = 0; lvl < HOTTIER_MAP_LEVELS &&
	     n < HOTTIER_VICTIM_VISITS; lvl++) {
		b = level(m, lvl);
		while (n < HOTTIER_VICTIM_VISITS && b->count) {
			i = hbm_find(b, b->hand);
			if (i == HOTTIER_HBM_NONE)
				i = hbm_find(b, 0);
			slot = i;
			/*
			 * The hand stays on the slot: one refused as a victim
			 * (too hot to evict for this candidate) is offered
			 * again, as a queue's head would be.
			 */
			b->hand = slot;
			n++;
			h = hottier_map_worth(m, slot, epoch);
			if (h < best_heat) {
				best = slot;
				best_heat = h;
			}
			band = band_of(h);
			if (band <= lvl) {
				best = slot;
				best_heat = h;
				goto out;
			}
			hbm_clear(b, slot);
			hbm_set(level(m, band), slot);
		}
	}
out:
	if (best != HOTTIER_NIL)
		*extent = hottier_mslot_extent(hottier_mslot(m, best));
	spin_unlock_irqrestore(&m->qlock, flags);
	*heat = best_heat;
	if (visits)
		*visits = n;
	return best;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_victim);

/*
 * A half-life passed: resident heat halved, so every level moves down one.
 * The ring turns; the lowest level merges into the next.
 */
void hottier_map_age(struct hottier_map *m)
{
	unsigned long flags;

	spin_lock_irqsave(&m->qlock, flags);
	hbm_merge(level(m, 1), level(m, 0));
	m->base = (m->base + 1) % HOTTIER_MAP_LEVELS;
	spin_unlock_irqrestore(&m->qlock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_age);

/*
 * A slot goes down to the level of its worth, if it is above it: an idle
 * one, or one a turnover's first read started afresh.
 */
static void refile(struct hottier_map *m, u32 slot, u16 epoch)
{
	unsigned int lvl, band;
	unsigned long flags;

	spin_lock_irqsave(&m->qlock, flags);
	band = band_of(hottier_map_worth(m, slot, epoch));
	/* Only a resident, unpinned slot is on a level. */
	for (lvl = band + 1; lvl < HOTTIER_MAP_LEVELS; lvl++)
		if (hbm_clear(level(m, lvl), slot)) {
			hbm_set(level(m, band), slot);
			break;
		}
	spin_unlock_irqrestore(&m->qlock, flags);
}

/*
 * A read of the replica in @slot: one more read of heat. In a working-set
 * turnover, a replica's first read since the turnover began starts its heat
 * afresh, as the turnover started the heat table's: candidates and replicas
 * are weighed on the same reads, those since the turnover. It goes down to
 * the level of that heat, where the victim search finds it.
 */
u32 __hottier_map_hit(struct hottier_map *m, u32 slot, u16 epoch)
{
	struct hottier_mslot *s = hottier_mslot(m, slot);
	bool afresh = turnover_unread(m, s->meta, epoch);
	u32 heat = HOTTIER_HEAT_ONE;

	if (!afresh)
		heat += hottier_mslot_heat(s, epoch);
	heat = min_t(u32, heat, HOTTIER_SLOT_HEAT_MAX);
	set_heat(s, heat, epoch);
	if (afresh)
		refile(m, slot, epoch);
	return heat;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_map_hit);

/*
 * One epoch's refresh, of every slot. A replica unread past
 * HOTTIER_IDLE_GRACE epochs moves down to the level of its worth; one
 * HOTTIER_IDLE_MAX or more behind gets that epoch, with its heat as of it
 * (so it still counts as that idle). The unpinned replicas the rate rule
 * cut are counted. May sleep.
 */
void hottier_map_refresh(struct hottier_map *m, u16 epoch)
{
	u32 slot, meta, idle, cut = 0;
	u16 behind = epoch - HOTTIER_IDLE_MAX;
	struct hottier_mlock *lock;
	struct hottier_mslot *s;
	unsigned long flags;
	u64 extent;

	for (slot = 0; slot < m->nr_slots; slot++) {
		s = hottier_mslot(m, slot);
		meta = READ_ONCE(s->meta);
		if (!(slot % 4096))
			cond_resched();
		if (FIELD_GET(HOTTIER_MS_STATE, meta) != HOTTIER_S_RESIDENT)
			continue;
		idle = meta_idle(meta, epoch);
		if (counts_cut(m, meta, epoch))
			cut++;
		/*
		 * One worth less than a read an epoch ago went to the lowest
		 * level then, and stays there: no lock for it (a full SSD of
		 * cold replicas costs a read of each record an epoch).
		 */
		if (idle > HOTTIER_IDLE_GRACE &&
		    (idle == HOTTIER_IDLE_GRACE + 1 ||
		     meta_worth(meta, idle - 1) >= HOTTIER_HEAT_ONE))
			refile(m, slot, epoch);
		if (idle < HOTTIER_IDLE_MAX)
			continue;
		extent = hottier_mslot_extent(s);
		lock = hottier_map_lock(m, extent, &flags);
		meta = s->meta;
		idle = meta_idle(meta, epoch);
		if (__hottier_map_find(m, extent) == slot &&
		    state_of(s) == HOTTIER_S_RESIDENT &&
		    idle > HOTTIER_IDLE_MAX)
			set_heat(s, meta_heat(meta, idle - HOTTIER_IDLE_MAX),
				 behind);
		hottier_map_unlock(lock, flags);
	}
	atomic_set(&m->nr_cut, cut);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_refresh);

/*
 * A working-set turnover, for the epoch @epoch (the one it began): replicas
 * unread since with a heat at their last read of @heat or more are cut
 * (0: the turnover ends; U32_MAX: none yet). The target sets it once a
 * second of the turnover, from the reads the turnover's seconds say such a
 * replica missed, then refiles (hottier_map_turnover_refile()).
 */
void hottier_map_turnover(struct hottier_map *m, u16 epoch, u32 heat)
{
	WRITE_ONCE(m->turnover_epoch, epoch);
	WRITE_ONCE(m->turnover_heat, heat);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_turnover);

/*
 * A second of a turnover: every replica it cut goes down to the lowest
 * level, where the victim search finds it first, and the cut replicas
 * are counted again (the rate rule's too). May sleep; as costly as an
 * epoch's refresh, once a second for the turnover's epoch.
 */
void hottier_map_turnover_refile(struct hottier_map *m, u16 epoch)
{
	u32 slot, meta, cut = 0;
	struct hottier_mslot *s;

	for (slot = 0; slot < m->nr_slots; slot++) {
		s = hottier_mslot(m, slot);
		meta = READ_ONCE(s->meta);
		if (!(slot % 4096))
			cond_resched();
		if (FIELD_GET(HOTTIER_MS_STATE, meta) != HOTTIER_S_RESIDENT ||
		    !counts_cut(m, meta, epoch))
			continue;
		cut++;
		if (turnover_cut(m, meta, epoch))
			refile(m, slot, epoch);
	}
	atomic_set(&m->nr_cut, cut);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_map_turnover_refile);
