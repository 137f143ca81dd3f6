// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: per-extent read heat and sequential stream detection.
 * See dm-hottier-heat.h for the data structures.
 */
#include "dm-hottier-heat.h"
#include "dm-hottier-compat.h"

#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/mm.h>

/* 2^(-k/4) in 1/1024ths, for the epochs within one half-life. */
static const u16 quarter_decay[HOTTIER_EPOCHS_PER_HALFLIFE] = {
	1024, 861, 724, 609
};

/* Heat after a number of epochs: halved every HOTTIER_EPOCHS_PER_HALFLIFE. */
u32 hottier_heat_decay(u32 heat, u32 epochs)
{
	u32 halvings = epochs / HOTTIER_EPOCHS_PER_HALFLIFE;

	if (halvings >= 32)
		return 0;
	heat >>= halvings;
	return (u32)(((u64)heat *
		      quarter_decay[epochs % HOTTIER_EPOCHS_PER_HALFLIFE]) >> 10);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_decay);

/* Sets are not a power of two in number: scale a 32-bit hash into range. */
static u32 set_index(const struct hottier_heat *h, u64 extent)
{
	return (u32)(((u64)hash_64(extent, 32) * h->nr_sets) >> 32);
}

/* Table loads never wake the OOM killer, nor warn: they fail. */
#define HOTTIER_HEAT_GFP	(GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

static u64 nr_sets_for(u64 max_tracked)
{
	return div64_u64(max_tracked + HOTTIER_HEAT_WAYS - 1,
			 HOTTIER_HEAT_WAYS);
}

static u32 nr_heat_chunks(u64 nr_sets)
{
	return div64_u64(nr_sets + HOTTIER_HEAT_CHUNK_SETS - 1,
			 HOTTIER_HEAT_CHUNK_SETS);
}

/* What hottier_heat_init() allocates for max_tracked, in bytes. */
u64 hottier_heat_bytes(u64 max_tracked)
{
	u64 nr_sets = nr_sets_for(max_tracked);

	return nr_sets * sizeof(struct hottier_heat_set) +
	       nr_heat_chunks(nr_sets) * sizeof(void *);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_bytes);

struct hottier_heat_set *hottier_heat_set(struct hottier_heat *h, u32 i)
{
	return &h->sets[i / HOTTIER_HEAT_CHUNK_SETS]
		       [i % HOTTIER_HEAT_CHUNK_SETS];
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_set);

/* Capacity: max_tracked rounded up to whole sets. */
int hottier_heat_init(struct hottier_heat *h, u64 max_tracked)
{
	u64 nr_sets = nr_sets_for(max_tracked);
	u32 i, nr;

	h->sets = NULL;
	if (!nr_sets || nr_sets > U32_MAX)
		return -EINVAL;
	nr = nr_heat_chunks(nr_sets);
	h->nr_sets = nr_sets;
	h->sets = kvcalloc(nr, sizeof(*h->sets), HOTTIER_HEAT_GFP);
	if (!h->sets)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		u64 left = nr_sets - (u64)i * HOTTIER_HEAT_CHUNK_SETS;

		h->sets[i] = kvcalloc(min_t(u64, left, HOTTIER_HEAT_CHUNK_SETS),
				      sizeof(**h->sets), HOTTIER_HEAT_GFP);
		if (!h->sets[i]) {
			hottier_heat_exit(h);
			return -ENOMEM;
		}
	}
	for (i = 0; i < h->nr_sets; i++)
		spin_lock_init(&hottier_heat_set(h, i)->lock);
	atomic_set(&h->epoch, 0);
	atomic_set(&h->tracked, 0);
	return 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_init);

void hottier_heat_exit(struct hottier_heat *h)
{
	u32 i;

	if (!h->sets)
		return;
	for (i = 0; i < nr_heat_chunks(h->nr_sets); i++)
		kvfree(h->sets[i]);
	kvfree(h->sets);
	h->sets = NULL;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_exit);

u64 hottier_heat_capacity(const struct hottier_heat *h)
{
	return (u64)h->nr_sets * HOTTIER_HEAT_WAYS;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_capacity);

/* One epoch: 1/HOTTIER_EPOCHS_PER_HALFLIFE of the half-life. */
void hottier_heat_tick(struct hottier_heat *h)
{
	atomic_inc(&h->epoch);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_tick);

/*
 * Set @i locked, every way's heat brought up to the table's epoch, and the
 * epochs it went unread counted.
 */
struct hottier_heat_set *hottier_heat_lock_set(struct hottier_heat *h, u32 i,
					       unsigned long *flags)
	__acquires(set->lock)
{
	struct hottier_heat_set *set = hottier_heat_set(h, i);
	u16 now, epochs;
	int w;

	spin_lock_irqsave(&set->lock, *flags);
	now = atomic_read(&h->epoch);
	if (set->epoch == now)
		return set;
	epochs = now - set->epoch;
	for (w = 0; w < HOTTIER_HEAT_WAYS; w++) {
		struct hottier_heat_entry *e = &set->way[w];

		if (!(e->flags & HOTTIER_E_VALID))
			continue;
		e->heat = hottier_heat_decay(e->heat, epochs);
		e->idle = min_t(u32, e->idle + epochs, HOTTIER_HEAT_IDLE_MAX);
	}
	set->epoch = now;
	return set;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_lock_set);

struct hottier_heat_set *hottier_heat_lock(struct hottier_heat *h, u64 extent,
					   unsigned long *flags)
	__acquires(set->lock)
{
	return hottier_heat_lock_set(h, set_index(h, extent), flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_lock);

void hottier_heat_unlock(struct hottier_heat_set *set, unsigned long flags)
	__releases(set->lock)
{
	spin_unlock_irqrestore(&set->lock, flags);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_unlock);

struct hottier_heat_entry *__hottier_heat_find(struct hottier_heat_set *set,
					       u64 extent)
{
	int i;

	for (i = 0; i < HOTTIER_HEAT_WAYS; i++) {
		struct hottier_heat_entry *e = &set->way[i];

		if ((e->flags & HOTTIER_E_VALID) && e->extent == extent)
			return e;
	}
	return NULL;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_heat_find);

/* The set was brought up to date when it was locked. */
u32 __hottier_heat_read(struct hottier_heat_entry *e)
{
	return e->heat;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_heat_read);

/*
 * What the entry is worth keeping: its heat, quartered for every epoch it
 * went unread. Heat remembers a half-life of reads; an extent no longer
 * read keeps most of it for that long, and would hold its way against the
 * extents read now, which enter at one read.
 */
u32 __hottier_heat_worth(const struct hottier_heat_entry *e)
{
	return e->heat >> (e->idle * HOTTIER_HEAT_IDLE_SHIFT);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_heat_worth);

/* A read: @amount more heat, and the entry was read this epoch. */
u32 __hottier_heat_add(struct hottier_heat_entry *e, u32 amount)
{
	e->heat = min_t(u64, (u64)e->heat + amount, HOTTIER_HEAT_MAX);
	e->idle = 0;
	return e->heat;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_heat_add);

/* The way a new extent takes: a free one, else the one worth least not busy. */
static struct hottier_heat_entry *victim_way(struct hottier_heat_set *set)
{
	struct hottier_heat_entry *best = NULL;
	u32 best_worth = U32_MAX;
	int i;

	for (i = 0; i < HOTTIER_HEAT_WAYS; i++) {
		struct hottier_heat_entry *e = &set->way[i];
		u32 worth;

		if (!(e->flags & HOTTIER_E_VALID))
			return e;
		if (e->flags & HOTTIER_E_BUSY)
			continue;
		worth = __hottier_heat_worth(e);
		if (worth < best_worth) {
			best = e;
			best_worth = worth;
		}
	}
	return best;
}

/*
 * Find the extent's entry or make one with initial_heat. NULL when every
 * way of the set is busy: the extent is then simply not tracked.
 */
struct hottier_heat_entry *__hottier_heat_get(struct hottier_heat *h,
					      struct hottier_heat_set *set,
					      u64 extent, u32 initial_heat)
{
	struct hottier_heat_entry *e = __hottier_heat_find(set, extent);

	if (e)
		return e;
	if (WARN_ON_ONCE(extent >= HOTTIER_EXTENT_LIMIT))
		return NULL;
	e = victim_way(set);
	if (!e)
		return NULL;
	if (!(e->flags & HOTTIER_E_VALID))
		atomic_inc(&h->tracked);
	e->extent = extent;
	e->heat = min_t(u32, initial_heat, HOTTIER_HEAT_MAX);
	e->idle = 0;
	e->flags = HOTTIER_E_VALID;
	return e;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_heat_get);

void __hottier_heat_forget(struct hottier_heat *h, struct hottier_heat_entry *e)
{
	if (e->flags & HOTTIER_E_VALID)
		atomic_dec(&h->tracked);
	e->flags = 0;
	e->heat = 0;
	e->idle = 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(__hottier_heat_forget);

/*
 * Every entry goes, set by set (a working-set turnover: the heat of the old
 * set would keep the new one's out of the table). A queued candidate's
 * entry goes too: the candidate queue skips what it cannot find. May
 * sleep.
 */
void hottier_heat_forget_all(struct hottier_heat *h)
{
	struct hottier_heat_set *set;
	unsigned long flags;
	u32 i;
	int w;

	for (i = 0; i < h->nr_sets; i++) {
		set = hottier_heat_lock_set(h, i, &flags);
		for (w = 0; w < HOTTIER_HEAT_WAYS; w++)
			__hottier_heat_forget(h, &set->way[w]);
		hottier_heat_unlock(set, flags);
		if (!(i % 1024))
			cond_resched();
	}
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_forget_all);

/* Sequential streams */

void hottier_seq_init(struct hottier_seq *s)
{
	int i;

	for (i = 0; i < HOTTIER_SEQ_BUCKETS; i++) {
		spin_lock_init(&s->b[i].lock);
		s->b[i].next = U64_MAX;
		s->b[i].run = 0;
	}
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_seq_init);

static struct hottier_seq_bucket *seq_bucket(struct hottier_seq *s, u64 sector)
{
	return &s->b[hash_64(sector, ilog2(HOTTIER_SEQ_BUCKETS))];
}

/*
 * Note a read of [sector, sector + nr_sectors); true if it continues a
 * stream that is now longer than cutoff_sectors (0: detection off).
 * *@fresh (if not NULL): the read continues no stream, it starts somewhere
 * new (always, with detection off). Called where bios are mapped, which
 * may sleep (a member's submission waits for a tag), never from an
 * interrupt: the bucket locks leave interrupts on.
 */
static bool seq_note(struct hottier_seq *s, u64 sector, u32 nr_sectors,
		     u64 cutoff_sectors, bool *fresh)
{
	struct hottier_seq_bucket *b;
	u64 run = 0;

	if (fresh)
		*fresh = true;
	if (!cutoff_sectors)
		return false;

	b = seq_bucket(s, sector);
	spin_lock(&b->lock);
	if (b->next == sector) {
		run = b->run;
		b->next = U64_MAX;
	}
	spin_unlock(&b->lock);

	if (fresh)
		*fresh = !run;
	run += nr_sectors;
	b = seq_bucket(s, sector + nr_sectors);
	spin_lock(&b->lock);
	b->next = sector + nr_sectors;
	b->run = run;
	spin_unlock(&b->lock);

	return run > cutoff_sectors;
}

bool hottier_seq_note(struct hottier_seq *s, u64 sector, u32 nr_sectors,
		      u64 cutoff_sectors)
{
	return seq_note(s, sector, nr_sectors, cutoff_sectors, NULL);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_seq_note);

/*
 * Note a read of [sector, sector + nr_sectors), which lies inside one
 * extent of 2^extent_shift sectors, and say whether it heats that extent.
 * A read heats, except one that continues a stream longer than the cutoff
 * in an extent the stream already entered: such a stream heats each extent
 * once per pass, by the read that enters it (which starts at the extent's
 * first sector, reads being split at extent boundaries). A file streamed
 * often thus heats with its popularity, and a backup's single pass adds
 * one read's worth to each extent, whatever its length. *@fresh (if not
 * NULL), as for seq_note(): the read continues no stream (the turnover
 * detector counts only those).
 */
bool hottier_seq_read(struct hottier_seq *s, u64 sector, u32 nr_sectors,
		      u64 cutoff_sectors, unsigned int extent_shift, bool *fresh)
{
	if (!seq_note(s, sector, nr_sectors, cutoff_sectors, fresh))
		return true;
	return !(sector & ((1ULL << extent_shift) - 1));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_seq_read);

/* Administrators' views */

unsigned int hottier_heat_band(u32 heat)
{
	return min_t(unsigned int, fls(heat >> HOTTIER_HEAT_SHIFT),
		     HOTTIER_HEAT_BANDS - 1);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_band);

/* The reads a band covers, both ends included. */
void hottier_heat_band_range(unsigned int band, u32 *lo_reads, u32 *hi_reads)
{
	*lo_reads = band ? 1U << (band - 1) : 0;
	if (band == HOTTIER_HEAT_BANDS - 1)
		*hi_reads = U32_MAX >> HOTTIER_HEAT_SHIFT;
	else
		*hi_reads = band ? (1U << band) - 1 : 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_heat_band_range);

/*
 * Keeps the @n hottest entries offered so far in top[0..*used), hottest
 * first; of equal heat, the one offered first stays ahead.
 */
void hottier_top_add(struct hottier_top *top, unsigned int n,
		     unsigned int *used, const struct hottier_top *t)
{
	unsigned int i;

	if (!n || (*used == n && t->heat <= top[n - 1].heat))
		return;
	i = *used < n ? (*used)++ : n - 1;
	for (; i > 0 && top[i - 1].heat < t->heat; i--)
		top[i] = top[i - 1];
	top[i] = *t;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_top_add);
