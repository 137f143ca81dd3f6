/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: promotion and eviction decisions, and the migration rate
 * limit. Plain C with no bio: the target decides when, this decides what.
 */
#ifndef DM_HOTTIER_POLICY_H
#define DM_HOTTIER_POLICY_H

#include <linux/types.h>

enum hottier_promote_action {
	HOTTIER_PROMOTE_NONE,	/* leave the extent on the HDD */
	HOTTIER_PROMOTE_FREE,	/* copy it into a free slot */
	HOTTIER_PROMOTE_EVICT,	/* evict the victim, then copy it there */
};

/* What is known about the coldest unpinned, idle replica. */
struct hottier_victim {
	bool found;
	u32 heat;
};

enum hottier_promote_action
hottier_policy_promote(u32 heat, bool pinned, u32 threshold_heat,
		       bool free_slot, const struct hottier_victim *victim);
bool hottier_policy_colder(u32 heat, u64 extent, u32 than_heat,
			   u64 than_extent);

/*
 * Token bucket for migration_mbps: up to one second of credit is kept, and
 * a copy larger than that may run the bucket into debt, which later copies
 * wait out.
 */
struct hottier_tokens {
	s64 bytes;
	u64 last_ns;
};

void hottier_tokens_init(struct hottier_tokens *t, u64 now_ns);
bool hottier_tokens_take(struct hottier_tokens *t, u64 now_ns,
			 u64 rate_bytes_per_s, u64 bytes);

#endif /* DM_HOTTIER_POLICY_H */
