/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-hottier: the on-SSD format of the superblock and the replica map,
 * in the area the SSD layout reserves (sectors 0-7, then 16 bytes a slot).
 * Little-endian, versioned, checksummed with crc32c. Encoding, decoding
 * and the identity checks only: plain C with no bio, so KUnit drives it.
 * Documentation/hottier.rst, "On-SSD map", describes the same format.
 */
#ifndef DM_HOTTIER_META_H
#define DM_HOTTIER_META_H

#include <linux/types.h>

#include "dm-hottier-args.h"

/* "hottier" and a NUL, read as a little-endian u64. */
#define HOTTIER_META_MAGIC	0x0072656974746f68ULL
/*
 * Version 2 added the feature words and fixed what a map open at a
 * takeover may be trusted with: a version-1 map is taken over only if it
 * was stopped cleanly (a build of that version may not have kept its
 * records while it ran, whatever its flags say).
 */
#define HOTTIER_META_VERSION	2
#define HOTTIER_META_VERSION_V1	1
#define HOTTIER_META_BLOCK	4096
/* Pinned ranges the superblock holds, in sectors (any extent size). */
#define HOTTIER_SB_MAX_PINS	240

/* Superblock flags. */
#define HOTTIER_SB_CLEAN	BIT(0)	/* the map was written at a clean stop */
/*
 * The records are kept crash-safe while the map is open: a valid record
 * is trusted after a crash too. A map without it is trusted only clean.
 */
#define HOTTIER_SB_LIVE		BIT(1)

/*
 * Feature bits. A compat feature may be ignored by a module that does not
 * know it (it clears the bit when it writes the superblock, since it did
 * not keep the feature); a map with an incompat feature this module does
 * not know is never trusted: the takeover drops it, pins and all, and the
 * device starts cold. Every change in what the map means sets a new bit,
 * or bumps the version. None is defined yet in version 2.
 */
#define HOTTIER_COMPAT_KNOWN	0U
#define HOTTIER_INCOMPAT_KNOWN	0U

/* Record flags. */
#define HOTTIER_REC_VALID	BIT(0)	/* the slot holds a clean replica */
#define HOTTIER_REC_PINNED	BIT(1)
/*
 * The slot holds the extent's replica, written through since it was last
 * recorded: after a crash it is kept only if it equals the HDD. Without
 * HOTTIER_REC_VALID, so a module that predates it drops such a record.
 */
#define HOTTIER_REC_INTENT	BIT(2)

struct hottier_pin_disk {
	__le64 first_sector;
	__le64 nr_sectors;
} __packed;

/*
 * Sector 0. csum is crc32c (seed ~0) of the HOTTIER_META_BLOCK bytes that
 * follow it, the unused tail zero.
 */
struct hottier_sb_disk {
	__le32 csum;
	__le32 version;
	__le64 magic;
	__le32 flags;
	__le32 nonce;		/* seeds every record's checksum */
	__le64 seq;		/* takeovers since the map was formatted */
	__le64 extent_sectors;
	__le64 meta_sectors;
	__le64 nr_slots;
	__le64 hdd_sectors;	/* the HDD's length when last written */
	u8 hdd_id[HOTTIER_ID_MAX];	/* NUL-padded */
	__le32 nr_pins;
	__le32 reserved;
	struct hottier_pin_disk pins[HOTTIER_SB_MAX_PINS];
	/* Version 2: zero in a version-1 superblock (its tail is zero). */
	__le32 compat;
	__le32 incompat;
} __packed;

/*
 * One slot's record, at byte 4096 + 16 * slot. csum is crc32c, seeded
 * with the superblock's nonce and the slot number, of the 12 bytes before
 * it: a record of an older format or of another slot never checks out, so
 * a new format needs no pass over the map, and a torn sector leaves each
 * record old or new (records never straddle a sector).
 */
struct hottier_rec_disk {
	__le64 extent;
	__le16 heat;		/* quarter reads, as the in-memory slot */
	__le16 flags;
	__le32 csum;
} __packed;

/* The superblock, decoded. */
struct hottier_sb {
	u32 version;		/* decoded: 1 or 2; encoded as 2 */
	u32 compat;		/* decoded: as on the SSD; encoded as known */
	u32 incompat;
	u32 flags;
	u32 nonce;
	u64 seq;
	u64 extent_sectors;
	u64 meta_sectors;
	u64 nr_slots;
	u64 hdd_sectors;
	char hdd_id[HOTTIER_ID_MAX + 1];
	u32 nr_pins;
	struct {
		u64 first_sector;
		u64 nr_sectors;
	} pins[HOTTIER_SB_MAX_PINS];
};

/* What sector 0 holds. */
enum hottier_sb_kind {
	HOTTIER_SB_ZERO,	/* zeroes: a new SSD, formatted on use */
	HOTTIER_SB_OURS,	/* a superblock of ours that checks out */
	HOTTIER_SB_CORRUPT,	/* our magic, a bad checksum: an empty map */
	HOTTIER_SB_NEWER,	/* a version this module does not know */
	/* Ours, with an incompat feature this module does not know. */
	HOTTIER_SB_INCOMPAT,
	HOTTIER_SB_FOREIGN,	/* anything else: formatted only on request */
};

struct hottier_rec {
	u64 extent;
	u16 heat;
	u16 flags;
};

bool hottier_id_valid(const char *id);
u32 hottier_meta_csum(u32 seed, const void *p, size_t len);
void hottier_sb_encode(const struct hottier_sb *sb, void *block);
enum hottier_sb_kind hottier_sb_decode(const void *block,
				       struct hottier_sb *sb);
int hottier_sb_check(const struct hottier_sb *sb, const char *hdd_id,
		     u64 extent_sectors, const struct hottier_layout *layout,
		     char **error);
void hottier_rec_encode(u32 nonce, u32 slot, const struct hottier_rec *rec,
			struct hottier_rec_disk *d);
bool hottier_rec_decode(u32 nonce, u32 slot,
			const struct hottier_rec_disk *d,
			struct hottier_rec *rec);

#endif /* DM_HOTTIER_META_H */
