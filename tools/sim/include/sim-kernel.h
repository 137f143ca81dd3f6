/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel as dm-hottier's pure core (heat, map, policy) sees it, for a
 * single-threaded userspace build: every <linux/...> header the simulator
 * compiles them against includes this one. Locks are counters that check
 * their pairing, atomics plain ints, allocations calloc(); hash_64() and
 * the bit helpers are the kernel's generic versions, so sets, buckets and
 * victim searches come out as in the module.
 */
#ifndef SIM_KERNEL_H
#define SIM_KERNEL_H

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef unsigned int gfp_t;
typedef u64 sector_t;

#define U8_MAX		((u8)~0U)
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)
#define S64_MAX		((s64)(U64_MAX >> 1))

#define __acquires(x)
#define __releases(x)
#define __must_hold(x)
#undef __always_inline
#define __always_inline	inline __attribute__((always_inline))
#define __maybe_unused	__attribute__((unused))
#define fallthrough	__attribute__((fallthrough))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)
#define EXPORT_SYMBOL_NS_GPL(sym, ns)
#define IS_ENABLED(option)	0
#define IS_MODULE(option)	0
#define IS_BUILTIN(option)	0

#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))

#define WARN_ON(c)		sim_warn(!!(c), #c, __FILE__, __LINE__)
#define WARN_ON_ONCE(c)		WARN_ON(c)
#define BUG_ON(c)		assert(!(c))
#define might_sleep()		do { } while (0)
#define cond_resched()		do { } while (0)
#define lockdep_assert_held(l)	do { (void)(l); } while (0)
#define lockdep_set_class(l, k)	do { } while (0)
#define pr_warn(...)		fprintf(stderr, __VA_ARGS__)
#define pr_err(...)		fprintf(stderr, __VA_ARGS__)
#define pr_info(...)		do { } while (0)
#define pr_debug(...)		do { } while (0)

/* A warning the module would log: the simulator counts them. */
extern unsigned long sim_warnings;
static inline int sim_warn(int c, const char *what, const char *file, int line)
{
	if (c) {
		sim_warnings++;
		fprintf(stderr, "sim: WARN_ON(%s) at %s:%d\n", what, file, line);
	}
	return c;
}

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define container_of(p, type, member) \
	((type *)((char *)(p) - offsetof(type, member)))
/* Each argument evaluated once, as the kernel's (some are calls). */
#define min(a, b) ({ __typeof__(a) __a = (a); __typeof__(b) __b = (b); \
	__a < __b ? __a : __b; })
#define max(a, b) ({ __typeof__(a) __a = (a); __typeof__(b) __b = (b); \
	__a > __b ? __a : __b; })
#define min_t(t, a, b) ({ t __a = (a); t __b = (b); __a < __b ? __a : __b; })
#define max_t(t, a, b) ({ t __a = (a); t __b = (b); __a > __b ? __a : __b; })
#define clamp_t(t, v, lo, hi)	min_t(t, max_t(t, v, lo), hi)
#define clamp(v, lo, hi)	min(max(v, lo), hi)
#define swap(a, b) \
	do { __typeof__(a) __t = (a); (a) = (b); (b) = __t; } while (0)
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define DIV_ROUND_UP_ULL(n, d)	((u64)DIV_ROUND_UP((u64)(n), (u64)(d)))
#define round_up(x, y)		((((x) - 1) | ((__typeof__(x))((y) - 1))) + 1)
#define round_down(x, y)	((x) & ~((__typeof__(x))((y) - 1)))
#define PAGE_SIZE		4096UL
#define PAGE_SHIFT		12
#define PAGE_ALIGN(x)		(((x) + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1))

/* Sizes and time */
#define SZ_1K		0x00000400
#define SZ_4K		0x00001000
#define SZ_64K		0x00010000
#define SZ_1M		0x00100000
#define SZ_1G		0x40000000
#define NSEC_PER_USEC	1000L
#define NSEC_PER_MSEC	1000000L
#define NSEC_PER_SEC	1000000000L
#define USEC_PER_SEC	1000000L
#define MSEC_PER_SEC	1000L

/* Bits */
#define BITS_PER_LONG		64
#define BIT(nr)			(1UL << (nr))
#define BIT_ULL(nr)		(1ULL << (nr))
#define BIT_MASK(nr)		(1UL << ((nr) % BITS_PER_LONG))
#define BIT_WORD(nr)		((nr) / BITS_PER_LONG)
#define BITS_TO_LONGS(nr)	DIV_ROUND_UP(nr, BITS_PER_LONG)
#define GENMASK(h, l) \
	(((~0UL) - (1UL << (l)) + 1) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
#define GENMASK_ULL(h, l)	((u64)GENMASK(h, l))
#define __bf_shf(x)		(__builtin_ffsll(x) - 1)
#define FIELD_MAX(mask)		((__typeof__(mask))((mask) >> __bf_shf(mask)))
#define FIELD_PREP(mask, val)	(((__typeof__(mask))(val) << __bf_shf(mask)) & (mask))
#define FIELD_GET(mask, reg)	((__typeof__(mask))(((reg) & (mask)) >> __bf_shf(mask)))

static inline unsigned long __ffs(unsigned long w) { return __builtin_ctzl(w); }
static inline unsigned long __fls(unsigned long w) { return 63 - __builtin_clzl(w); }
static inline int fls(unsigned int x) { return x ? 32 - __builtin_clz(x) : 0; }
static inline int fls64(u64 x) { return x ? 64 - __builtin_clzll(x) : 0; }
#define ilog2(n)	(fls64((u64)(n)) - 1)
#define is_power_of_2(n)	((n) != 0 && (((n) & ((n) - 1)) == 0))
static inline unsigned long roundup_pow_of_two(unsigned long n)
{
	return n <= 1 ? 1 : 1UL << fls64(n - 1);
}
static inline unsigned int hweight_long(unsigned long w)
{
	return __builtin_popcountl(w);
}

#define lower_32_bits(n)	((u32)((n) & 0xffffffff))
#define upper_32_bits(n)	((u32)((u64)(n) >> 32))
#define u32_replace_bits(old, val, mask) \
	(((old) & ~(u32)(mask)) | (u32)FIELD_PREP(mask, val))
#define BITMAP_FIRST_WORD_MASK(start) (~0UL << ((start) & (BITS_PER_LONG - 1)))
#define BITMAP_LAST_WORD_MASK(nbits) (~0UL >> (-(nbits) & (BITS_PER_LONG - 1)))

static inline unsigned long find_next_bit(const unsigned long *addr,
					  unsigned long size,
					  unsigned long offset)
{
	unsigned long w;

	while (offset < size) {
		w = addr[BIT_WORD(offset)] & BITMAP_FIRST_WORD_MASK(offset);
		if (w) {
			offset = round_down(offset, BITS_PER_LONG) + __ffs(w);
			return offset < size ? offset : size;
		}
		offset = round_down(offset, BITS_PER_LONG) + BITS_PER_LONG;
	}
	return size;
}
#define find_first_bit(addr, size)	find_next_bit(addr, size, 0)
#define for_each_set_bit(bit, addr, size) \
	for ((bit) = 0; (bit) = find_next_bit((addr), (size), (bit)), \
	     (bit) < (size); (bit)++)

static inline bool test_bit(long nr, const volatile unsigned long *addr)
{
	return 1UL & (addr[BIT_WORD(nr)] >> (nr & (BITS_PER_LONG - 1)));
}
static inline void __set_bit(long nr, volatile unsigned long *addr)
{
	addr[BIT_WORD(nr)] |= BIT_MASK(nr);
}
static inline void __clear_bit(long nr, volatile unsigned long *addr)
{
	addr[BIT_WORD(nr)] &= ~BIT_MASK(nr);
}
#define set_bit(nr, a)		__set_bit(nr, a)
#define clear_bit(nr, a)	__clear_bit(nr, a)

/* Hashing: the generic hash_64() (x86 has no arch version of it). */
#define GOLDEN_RATIO_32	0x61C88647
#define GOLDEN_RATIO_64	0x61C8864680B583EBull
static inline u32 hash_64(u64 val, unsigned int bits)
{
	return val * GOLDEN_RATIO_64 >> (64 - bits);
}
static inline u32 hash_32(u32 val, unsigned int bits)
{
	return val * GOLDEN_RATIO_32 >> (32 - bits);
}

/* 64-bit division */
static inline u64 div_u64_rem(u64 n, u32 d, u32 *rem)
{
	*rem = n % d;
	return n / d;
}
static inline u64 div_u64(u64 n, u32 d) { return n / d; }
static inline s64 div_s64(s64 n, s32 d) { return n / d; }
static inline u64 div64_u64(u64 n, u64 d) { return n / d; }
static inline s64 div64_s64(s64 n, s64 d) { return n / d; }
static inline u64 mul_u64_u64_div_u64(u64 a, u64 b, u64 c)
{
	return (u64)((unsigned __int128)a * b / c);
}
static inline u64 mul_u32_u32(u32 a, u32 b) { return (u64)a * b; }

/* Atomics: one thread. */
typedef struct { int counter; } atomic_t;
typedef struct { s64 counter; } atomic64_t;
#define ATOMIC_INIT(i)		{ (i) }
#define atomic_read(v)		((v)->counter)
#define atomic_set(v, i)	((v)->counter = (i))
#define atomic_inc(v)		((void)++(v)->counter)
#define atomic_dec(v)		((void)--(v)->counter)
#define atomic_add(i, v)	((void)((v)->counter += (i)))
#define atomic_sub(i, v)	((void)((v)->counter -= (i)))
#define atomic_inc_return(v)	(++(v)->counter)
#define atomic_dec_return(v)	(--(v)->counter)
#define atomic_dec_and_test(v)	(--(v)->counter == 0)
#define atomic_inc_not_zero(v)	((v)->counter ? ++(v)->counter : 0)
static inline int atomic_dec_if_positive(atomic_t *v)
{
	int n = v->counter - 1;

	if (n >= 0)
		v->counter = n;
	return n;
}
#define atomic64_read(v)	atomic_read(v)
#define atomic64_set(v, i)	atomic_set(v, i)
#define atomic64_add(i, v)	atomic_add(i, v)
#define smp_mb()		__sync_synchronize()
#define smp_wmb()		smp_mb()
#define smp_rmb()		smp_mb()

/* Locks: one thread, so a lock only checks that it is taken in pairs. */
typedef struct { int held; } spinlock_t;
#define spin_lock_init(l)	((l)->held = 0)
#define spin_lock(l)		do { assert(!(l)->held); (l)->held = 1; } while (0)
#define spin_unlock(l)		do { assert((l)->held); (l)->held = 0; } while (0)
#define spin_lock_irq(l)	spin_lock(l)
#define spin_unlock_irq(l)	spin_unlock(l)
#define spin_lock_irqsave(l, f)	do { (f) = 0; spin_lock(l); } while (0)
#define spin_unlock_irqrestore(l, f) do { (void)(f); spin_unlock(l); } while (0)
#define spin_lock_nested(l, n)	spin_lock(l)
#define spin_is_locked(l)	((l)->held)

/* Memory */
#define GFP_KERNEL		0x1u
#define GFP_NOIO		0x2u
#define GFP_NOWAIT		0x4u
#define GFP_ATOMIC		0x8u
#define __GFP_NOWARN		0x10u
#define __GFP_RETRY_MAYFAIL	0x20u
#define __GFP_ZERO		0x40u
#define __GFP_NORETRY		0x80u
static inline void *kmalloc(size_t n, gfp_t gfp)
{
	return gfp & __GFP_ZERO ? calloc(1, n ? n : 1) : malloc(n ? n : 1);
}
#define kzalloc(n, gfp)		kmalloc(n, (gfp) | __GFP_ZERO)
#define kcalloc(n, s, gfp)	kmalloc((size_t)(n) * (s), (gfp) | __GFP_ZERO)
#define kmalloc_array(n, s, gfp) kmalloc((size_t)(n) * (s), gfp)
#define kvmalloc(n, gfp)	kmalloc(n, gfp)
#define kvzalloc(n, gfp)	kzalloc(n, gfp)
#define kvcalloc(n, s, gfp)	kcalloc(n, s, gfp)
#define kvmalloc_array(n, s, gfp) kmalloc_array(n, s, gfp)
#define vmalloc(n)		kmalloc(n, 0)
#define vzalloc(n)		kzalloc(n, 0)
#define __vmalloc(n, gfp)	kmalloc(n, gfp)
#define kfree(p)		free((void *)(p))
#define kvfree(p)		free((void *)(p))
#define vfree(p)		free((void *)(p))

/* Lists, as <linux/list.h> */
struct list_head {
	struct list_head *next, *prev;
};
#define LIST_HEAD_INIT(name)	{ &(name), &(name) }
#define LIST_HEAD(name)		struct list_head name = LIST_HEAD_INIT(name)
static inline void INIT_LIST_HEAD(struct list_head *l)
{
	l->next = l;
	l->prev = l;
}
static inline void __list_add(struct list_head *n, struct list_head *prev,
			      struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}
static inline void list_add(struct list_head *n, struct list_head *h)
{
	__list_add(n, h, h->next);
}
static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	__list_add(n, h->prev, h);
}
static inline void list_del(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	e->next = e->prev = NULL;
}
static inline void list_del_init(struct list_head *e)
{
	list_del(e);
	INIT_LIST_HEAD(e);
}
static inline void list_move_tail(struct list_head *e, struct list_head *h)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	list_add_tail(e, h);
}
static inline void list_move(struct list_head *e, struct list_head *h)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	list_add(e, h);
}
static inline int list_empty(const struct list_head *h) { return h->next == h; }
#define list_empty_careful(h)	list_empty(h)
#define list_entry(p, type, member)	container_of(p, type, member)
#define list_first_entry(h, type, member) list_entry((h)->next, type, member)
#define list_last_entry(h, type, member) list_entry((h)->prev, type, member)
#define list_first_entry_or_null(h, type, member) \
	(list_empty(h) ? NULL : list_first_entry(h, type, member))
#define list_next_entry(p, member) \
	list_entry((p)->member.next, __typeof__(*(p)), member)
#define list_prev_entry(p, member) \
	list_entry((p)->member.prev, __typeof__(*(p)), member)
#define list_for_each_entry(p, h, member) \
	for (p = list_first_entry(h, __typeof__(*p), member); \
	     &p->member != (h); p = list_next_entry(p, member))
#define list_for_each_entry_safe(p, n, h, member) \
	for (p = list_first_entry(h, __typeof__(*p), member), \
	     n = list_next_entry(p, member); &p->member != (h); \
	     p = n, n = list_next_entry(n, member))

/*
 * kfifo, for the element sizes and the calls the policy uses: a ring of
 * a power-of-two size, in and out counters that run free.
 */
#define DECLARE_KFIFO(name, type, size) \
	struct { unsigned int in, out, mask; type buf[size]; } name
#define INIT_KFIFO(f) \
	((f).in = (f).out = 0, (f).mask = ARRAY_SIZE((f).buf) - 1)
#define kfifo_len(f)		((f)->in - (f)->out)
#define kfifo_is_empty(f)	((f)->in == (f)->out)
#define kfifo_is_full(f)	(kfifo_len(f) > (f)->mask)
#define kfifo_reset(f)		((f)->in = (f)->out = 0)
#define kfifo_in(f, p, n) ({ \
	__typeof__(f) __f = (f); unsigned int __i, __n = (n); \
	if (__n > __f->mask + 1 - kfifo_len(__f)) \
		__n = __f->mask + 1 - kfifo_len(__f); \
	for (__i = 0; __i < __n; __i++) \
		__f->buf[__f->in++ & __f->mask] = (p)[__i]; \
	__n; })
#define kfifo_out(f, p, n) ({ \
	__typeof__(f) __f = (f); unsigned int __i, __n = (n); \
	if (__n > kfifo_len(__f)) \
		__n = kfifo_len(__f); \
	for (__i = 0; __i < __n; __i++) \
		(p)[__i] = __f->buf[__f->out++ & __f->mask]; \
	__n; })
#define kfifo_in_spinlocked(f, p, n, lock) ({ \
	unsigned long __fl; unsigned int __r; \
	spin_lock_irqsave(lock, __fl); __r = kfifo_in(f, p, n); \
	spin_unlock_irqrestore(lock, __fl); __r; })

/* What the compat header names and the pure core never calls. */
struct queue_limits {
	unsigned int max_discard_sectors;
	unsigned int max_hw_discard_sectors;
	unsigned int discard_granularity;
};

#endif /* SIM_KERNEL_H */
