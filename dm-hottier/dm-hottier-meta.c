// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: the on-SSD superblock and replica map records (format only).
 */
#include "dm-hottier-meta.h"
#include "dm-hottier-compat.h"

#include <linux/build_bug.h>
#include <linux/ctype.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>

static_assert(sizeof(struct hottier_sb_disk) <= HOTTIER_META_BLOCK);
/* Where Documentation/hottier.rst says the feature words are. */
static_assert(offsetof(struct hottier_sb_disk, compat) == 3976);
static_assert(sizeof(struct hottier_rec_disk) == HOTTIER_MAP_ENTRY_BYTES);
static_assert(HOTTIER_SB_SECTORS * 512 == HOTTIER_META_BLOCK);

/*
 * Printable ASCII, no blanks (a table line splits on them), 1 to 64
 * bytes: what WWNs, serials and UUIDs are made of.
 */
bool hottier_id_valid(const char *id)
{
	size_t n = strnlen(id, HOTTIER_ID_MAX + 1);
	size_t i;

	if (!n || n > HOTTIER_ID_MAX)
		return false;
	/* Not isgraph(): the kernel's takes Latin-1 letters too. */
	for (i = 0; i < n; i++)
		if ((unsigned char)id[i] <= ' ' || (unsigned char)id[i] >= 0x7f)
			return false;
	return true;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_id_valid);

u32 hottier_meta_csum(u32 seed, const void *p, size_t len)
{
	return hottier_crc32c(seed, p, len);
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_meta_csum);

static u32 sb_csum(const void *block)
{
	return hottier_meta_csum(~0U, block + sizeof(__le32),
				 HOTTIER_META_BLOCK - sizeof(__le32));
}

/* @block: HOTTIER_META_BLOCK bytes, all written. */
void hottier_sb_encode(const struct hottier_sb *sb, void *block)
{
	struct hottier_sb_disk *d = block;
	u32 i, n = min_t(u32, sb->nr_pins, HOTTIER_SB_MAX_PINS);

	memset(block, 0, HOTTIER_META_BLOCK);
	d->version = cpu_to_le32(HOTTIER_META_VERSION);
	d->magic = cpu_to_le64(HOTTIER_META_MAGIC);
	d->flags = cpu_to_le32(sb->flags);
	d->nonce = cpu_to_le32(sb->nonce);
	d->seq = cpu_to_le64(sb->seq);
	d->extent_sectors = cpu_to_le64(sb->extent_sectors);
	d->meta_sectors = cpu_to_le64(sb->meta_sectors);
	d->nr_slots = cpu_to_le64(sb->nr_slots);
	d->hdd_sectors = cpu_to_le64(sb->hdd_sectors);
	memcpy(d->hdd_id, sb->hdd_id, strnlen(sb->hdd_id, HOTTIER_ID_MAX));
	d->nr_pins = cpu_to_le32(n);
	for (i = 0; i < n; i++) {
		d->pins[i].first_sector = cpu_to_le64(sb->pins[i].first_sector);
		d->pins[i].nr_sectors = cpu_to_le64(sb->pins[i].nr_sectors);
	}
	/* What this module writes is what it kept: the features it knows. */
	d->compat = cpu_to_le32(sb->compat & HOTTIER_COMPAT_KNOWN);
	d->incompat = cpu_to_le32(sb->incompat & HOTTIER_INCOMPAT_KNOWN);
	d->csum = cpu_to_le32(sb_csum(block));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_sb_encode);

/*
 * What @block (sector 0, HOTTIER_META_BLOCK bytes) holds; *@sb if ours,
 * of version 1 or 2 (sb->version says which), or with an incompat
 * feature this module does not know (sb->incompat says which).
 */
enum hottier_sb_kind hottier_sb_decode(const void *block,
				       struct hottier_sb *sb)
{
	const struct hottier_sb_disk *d = block;
	u32 i, version;

	if (!memchr_inv(block, 0, HOTTIER_META_BLOCK))
		return HOTTIER_SB_ZERO;
	if (le64_to_cpu(d->magic) != HOTTIER_META_MAGIC)
		return HOTTIER_SB_FOREIGN;
	if (le32_to_cpu(d->csum) != sb_csum(block))
		return HOTTIER_SB_CORRUPT;
	version = le32_to_cpu(d->version);
	if (version != HOTTIER_META_VERSION &&
	    version != HOTTIER_META_VERSION_V1)
		return HOTTIER_SB_NEWER;
	if (le32_to_cpu(d->nr_pins) > HOTTIER_SB_MAX_PINS ||
	    memchr(d->hdd_id, 0, HOTTIER_ID_MAX) == d->hdd_id)
		return HOTTIER_SB_CORRUPT;

	memset(sb, 0, sizeof(*sb));
	sb->version = version;
	sb->compat = le32_to_cpu(d->compat);
	sb->incompat = le32_to_cpu(d->incompat);
	if (sb->incompat & ~HOTTIER_INCOMPAT_KNOWN)
		return HOTTIER_SB_INCOMPAT;
	sb->flags = le32_to_cpu(d->flags);
	sb->nonce = le32_to_cpu(d->nonce);
	sb->seq = le64_to_cpu(d->seq);
	sb->extent_sectors = le64_to_cpu(d->extent_sectors);
	sb->meta_sectors = le64_to_cpu(d->meta_sectors);
	sb->nr_slots = le64_to_cpu(d->nr_slots);
	sb->hdd_sectors = le64_to_cpu(d->hdd_sectors);
	memcpy(sb->hdd_id, d->hdd_id, HOTTIER_ID_MAX);
	sb->nr_pins = le32_to_cpu(d->nr_pins);
	for (i = 0; i < sb->nr_pins; i++) {
		sb->pins[i].first_sector = le64_to_cpu(d->pins[i].first_sector);
		sb->pins[i].nr_sectors = le64_to_cpu(d->pins[i].nr_sectors);
	}
	return HOTTIER_SB_OURS;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_sb_decode);

/*
 * Whether a superblock of ours may be taken over by a table for the HDD
 * named @hdd_id with @extent_sectors on an SSD of @layout. A grown HDD
 * keeps the map; a shrunk one keeps the replicas that still fit.
 */
int hottier_sb_check(const struct hottier_sb *sb, const char *hdd_id,
		     u64 extent_sectors, const struct hottier_layout *layout,
		     char **error)
{
	if (strcmp(sb->hdd_id, hdd_id)) {
		*error = "SSD holds the map of another HDD (hdd_id differs): format it to reuse it";
		return -EBUSY;
	}
	if (sb->extent_sectors != extent_sectors) {
		*error = "SSD's map has another extent size: use it, or format the SSD";
		return -EINVAL;
	}
	if (sb->meta_sectors != layout->meta_sectors ||
	    sb->nr_slots != layout->nr_slots) {
		*error = "SSD's map has another layout (the SSD changed size): format it";
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_sb_check);

static u32 rec_csum(u32 nonce, u32 slot, const struct hottier_rec_disk *d)
{
	return hottier_meta_csum(nonce ^ slot, d,
				 offsetof(struct hottier_rec_disk, csum));
}

void hottier_rec_encode(u32 nonce, u32 slot, const struct hottier_rec *rec,
			struct hottier_rec_disk *d)
{
	d->extent = cpu_to_le64(rec->extent);
	d->heat = cpu_to_le16(rec->heat);
	d->flags = cpu_to_le16(rec->flags);
	d->csum = cpu_to_le32(rec_csum(nonce, slot, d));
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_rec_encode);

/*
 * True if @d is @slot's record under @nonce, and names a replica: valid,
 * or an intent (HOTTIER_REC_INTENT, then not HOTTIER_REC_VALID).
 */
bool hottier_rec_decode(u32 nonce, u32 slot,
			const struct hottier_rec_disk *d,
			struct hottier_rec *rec)
{
	u16 flags = le16_to_cpu(d->flags);

	/* Most records of a map are empty: no checksum for those. */
	if (!(flags & (HOTTIER_REC_VALID | HOTTIER_REC_INTENT)) ||
	    le32_to_cpu(d->csum) != rec_csum(nonce, slot, d))
		return false;
	rec->extent = le64_to_cpu(d->extent);
	rec->heat = le16_to_cpu(d->heat);
	rec->flags = flags;
	if (flags & HOTTIER_REC_VALID)
		rec->flags &= ~HOTTIER_REC_INTENT;
	return true;
}
EXPORT_SYMBOL_FOR_HOTTIER_TESTS(hottier_rec_decode);
