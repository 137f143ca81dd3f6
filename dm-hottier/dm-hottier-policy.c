// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: promotion and eviction decisions, migration rate limit.
 */
#include "dm-hottier-policy.h"
#include "dm-hottier-compat.h"

#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/time64.h>

/*
 * Promote an extent whose heat reached the threshold into a free slot;
 * with none free, only if it is hotter than the coldest replica by one
 * more threshold's worth (hysteresis: extents of equal heat never swap).
 * A pinned extent needs no heat and evicts any unpinned replica.
 */
enum hottier_promote_action
hottier_policy_promote(u32 heat, bool pinned, u32 threshold_heat,
		       bool free_slot, const struct hottier_victim *victim)
{
	if (!pinned && heat < threshold_heat)
		return HOTTIER_PROMOTE_NONE;
	if (free_slot)
		return HOTTIER_PROMOTE_FREE;
	if (!victim->found)
		return HOTTIER_PROMOTE_NONE;
	if (pinned || (u64)heat >= (u64)victim->heat + threshold_heat)
		return HOTTIER_PROMOTE_EVICT;
	return HOTTIER_PROMOTE_NONE;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_promote);

/* Eviction order: the coldest first; equal heat, the lower extent first. */
bool hottier_policy_colder(u32 heat, u64 extent, u32 than_heat,
			   u64 than_extent)
{
	if (heat != than_heat)
		return heat < than_heat;
	return extent < than_extent;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_policy_colder);

void hottier_tokens_init(struct hottier_tokens *t, u64 now_ns)
{
	t->bytes = 0;
	t->last_ns = now_ns;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_tokens_init);

/* Rate 0: unlimited. */
bool hottier_tokens_take(struct hottier_tokens *t, u64 now_ns,
			 u64 rate_bytes_per_s, u64 bytes)
{
	u64 elapsed, secs;
	u32 ns;

	if (!rate_bytes_per_s)
		return true;
	elapsed = now_ns > t->last_ns ? now_ns - t->last_ns : 0;
	t->last_ns = now_ns;
	/*
	 * The time elapsed pays off any debt first, however long it took;
	 * past the debt, no more than a second of credit is kept. Once the
	 * whole seconds alone cover what the bucket lacks it is full, so the
	 * product below stays within that and cannot overflow.
	 */
	secs = div_u64_rem(elapsed, NSEC_PER_SEC, &ns);
	if (t->bytes >= (s64)rate_bytes_per_s ||
	    secs > div64_u64(rate_bytes_per_s - t->bytes, rate_bytes_per_s))
		t->bytes = rate_bytes_per_s;
	else
		t->bytes = min_t(s64, t->bytes + secs * rate_bytes_per_s +
				 mul_u64_u64_div_u64(ns, rate_bytes_per_s,
						     NSEC_PER_SEC),
				 (s64)rate_bytes_per_s);
	if (t->bytes < 0)
		return false;
	t->bytes -= bytes;
	return true;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_tokens_take);
