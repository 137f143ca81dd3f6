/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: constructor argument parsing.
 *
 * Plain functions with no bio and no dm_target in their interfaces, so the
 * KUnit suite can drive every refusal directly.
 */
#ifndef DM_HOTTIER_ARGS_H
#define DM_HOTTIER_ARGS_H

#include <linux/types.h>

/* Extent size bounds, in 512-byte sectors: 32 KiB .. 1 GiB. */
#define HOTTIER_MIN_EXTENT_SECTORS	64ULL
#define HOTTIER_MAX_EXTENT_SECTORS	2097152ULL

/* Positional arguments: <hdd_dev> <ssd_dev> <extent_sectors>. */
#define HOTTIER_NR_POSITIONAL		3

/*
 * The SSD's layout: a 4 KiB superblock at sector 0, then the replica map
 * (HOTTIER_MAP_ENTRY_BYTES per slot, sized for every slot the SSD could
 * hold), rounded up to a whole extent; the slots follow.
 */
#define HOTTIER_SB_SECTORS		8ULL
#define HOTTIER_MAP_ENTRY_BYTES		16ULL

enum hottier_discard {
	HOTTIER_DISCARD_PASSDOWN,	/* discards go to the HDD */
	HOTTIER_DISCARD_IGNORE,		/* the device does not offer discard */
};

enum hottier_write_policy {
	HOTTIER_WRITE_THROUGH,		/* resident extents: HDD and SSD */
	HOTTIER_WRITE_AROUND,		/* drop the replica, write the HDD */
};

/* Optional keys; one bit each, to refuse a key given twice. */
enum hottier_key {
	HOTTIER_KEY_DISCARD,
	HOTTIER_KEY_WRITE_POLICY,
	HOTTIER_KEY_PROMOTE_THRESHOLD,
	HOTTIER_KEY_SEQUENTIAL_CUTOFF_KB,
	HOTTIER_KEY_HEAT_HALFLIFE_MS,
	HOTTIER_KEY_MAX_MIGRATIONS,
	HOTTIER_KEY_MIGRATION_MBPS,
	HOTTIER_KEY_MAX_TRACKED,
	HOTTIER_KEY_ROUTING,
	HOTTIER_KEY_MIGRATION_BUDGET_US,
	HOTTIER_KEY_SSD_ERROR_THRESHOLD,
	HOTTIER_KEY_MAP_VERIFY,
	HOTTIER_NR_KEYS,
};

/*
 * hdd_id, the HDD's identity that turns the on-SSD map on: printable, no
 * blanks, at most this long (hottier_id_valid()).
 */
#define HOTTIER_ID_MAX			64

/* The bound of max_migrations: migration contexts are preallocated. */
#define HOTTIER_MAX_MIGRATIONS		64

struct hottier_args {
	const char *hdd_path;
	const char *ssd_path;
	u64 extent_sectors;
	enum hottier_discard discard;
	enum hottier_write_policy write_policy;
	u32 promote_threshold;		/* reads */
	u32 sequential_cutoff_kb;	/* 0: no scan detection */
	u32 heat_halflife_ms;
	u32 max_migrations;
	u32 migration_mbps;		/* 0: unlimited */
	u32 max_tracked;		/* 0: one per slot */
	u32 routing;			/* enum hottier_routing */
	u32 migration_budget_us;	/* 0: no migration QoS */
	u32 ssd_error_threshold;	/* SSD errors before degraded */
	u32 map_verify;			/* replicas compared at activation */
	/* Table-only, outside keys[]: "" keeps no map on the SSD. */
	char hdd_id[HOTTIER_ID_MAX + 1];
	bool format_ssd;		/* one-shot: never printed */
	bool drop_replicas;		/* one-shot: never printed */
	bool no_ssd;			/* the SSD given as "-" */
};

struct hottier_layout {
	u64 meta_sectors;		/* superblock and map; slots follow */
	u64 nr_slots;
};

int hottier_parse_args(unsigned int argc, char **argv,
		       struct hottier_args *args, char **error);
bool hottier_is_key(const char *name);
bool hottier_key_table_only(enum hottier_key key);
int hottier_set_key(struct hottier_args *args, const char *key,
		    const char *value, bool runtime, char **error);
int hottier_check_geometry(u64 target_len, u64 hdd_sectors, u64 ssd_sectors,
			   u64 extent_sectors, char **error);
void hottier_layout(u64 ssd_sectors, u64 extent_sectors,
		    struct hottier_layout *layout);
u64 hottier_max_tracked(const struct hottier_args *args, u64 nr_slots);
const char *hottier_key_name(enum hottier_key key);
int hottier_format_value(const struct hottier_args *args, enum hottier_key key,
			 char *buf, size_t len);
const char *hottier_discard_name(enum hottier_discard discard);
const char *hottier_write_policy_name(enum hottier_write_policy policy);
const char *hottier_routing_name(u32 routing);

#endif /* DM_HOTTIER_ARGS_H */
