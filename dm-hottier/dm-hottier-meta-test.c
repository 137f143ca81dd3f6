// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for dm-hottier's on-SSD format: the superblock and the
 * replica map records, their checksums and the identity checks.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/string.h>

#include "dm-hottier-meta.h"

static struct hottier_sb *example_sb(struct kunit *test)
{
	struct hottier_sb *sb = kunit_kzalloc(test, sizeof(*sb), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sb);
	sb->version = HOTTIER_META_VERSION;
	sb->flags = HOTTIER_SB_CLEAN;
	sb->nonce = 0xdeadbeef;
	sb->seq = 7;
	sb->extent_sectors = 128;
	sb->meta_sectors = 256;
	sb->nr_slots = 1000;
	sb->hdd_sectors = 1ULL << 31;
	strscpy(sb->hdd_id, "wwn-0x5000c500a1b2c3d4", sizeof(sb->hdd_id));
	sb->nr_pins = 2;
	sb->pins[0].first_sector = 0;
	sb->pins[0].nr_sectors = 2048;
	sb->pins[1].first_sector = 1ULL << 30;
	sb->pins[1].nr_sectors = 8;
	return sb;
}

static void *block(struct kunit *test)
{
	void *b = kunit_kzalloc(test, HOTTIER_META_BLOCK, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	return b;
}

/* The format is crc32c (Castagnoli), not another CRC: its check value. */
static void csum_is_crc32c(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, hottier_meta_csum(~0U, "123456789", 9) ^ ~0U,
			0xe3069283U);
}

/* The offsets Documentation/hottier.rst gives for the superblock. */
static void superblock_fields_sit_where_the_docs_say(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, version), 4UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, magic), 8UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, flags), 16UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, nonce), 20UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, seq), 24UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, extent_sectors),
			32UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, hdd_sectors),
			56UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, hdd_id), 64UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, nr_pins), 128UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, pins), 136UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, compat), 3976UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_sb_disk, incompat),
			3980UL);
	KUNIT_EXPECT_EQ(test, sizeof(struct hottier_sb_disk), 3984UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_rec_disk, heat), 8UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct hottier_rec_disk, csum), 12UL);
}

static void superblock_round_trips(struct kunit *test)
{
	struct hottier_sb *sb = example_sb(test), *out = example_sb(test);
	u8 *b = block(test);

	memset(out, 0x5a, sizeof(*out));
	hottier_sb_encode(sb, b);
	/* Little-endian on every machine. */
	KUNIT_EXPECT_EQ(test, b[8], (u8)'h');
	KUNIT_EXPECT_EQ(test, b[14], (u8)'r');
	KUNIT_EXPECT_EQ(test, b[4], (u8)HOTTIER_META_VERSION);
	KUNIT_ASSERT_EQ(test, hottier_sb_decode(b, out), HOTTIER_SB_OURS);
	KUNIT_EXPECT_EQ(test, memcmp(sb, out, sizeof(*sb)), 0);
}

static void a_zeroed_block_is_new_and_anything_else_foreign(struct kunit *test)
{
	struct hottier_sb *sb = example_sb(test);
	u8 *b = block(test);

	KUNIT_EXPECT_EQ(test, hottier_sb_decode(b, sb), HOTTIER_SB_ZERO);
	/* One byte anywhere, even at the end, is not a new SSD. */
	b[HOTTIER_META_BLOCK - 1] = 1;
	KUNIT_EXPECT_EQ(test, hottier_sb_decode(b, sb), HOTTIER_SB_FOREIGN);
	/* An ext4 superblock's magic, at 1024 + 56. */
	memset(b, 0, HOTTIER_META_BLOCK);
	b[1080] = 0x53;
	b[1081] = 0xef;
	KUNIT_EXPECT_EQ(test, hottier_sb_decode(b, sb), HOTTIER_SB_FOREIGN);
}

static void a_flipped_bit_anywhere_is_corrupt(struct kunit *test)
{
	struct hottier_sb *sb = example_sb(test);
	static const unsigned int at[] = { 0, 4, 20, 64, 200, 3975, 4095 };
	u8 *b = block(test);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(at); i++) {
		hottier_sb_encode(sb, b);
		b[at[i]] ^= 0x10;
		KUNIT_EXPECT_EQ_MSG(test, hottier_sb_decode(b, sb),
				    HOTTIER_SB_CORRUPT, "byte %u", at[i]);
	}
}

/* @sb encoded into @b, for the test to change before resum(). */
static struct hottier_sb_disk *encoded(const struct hottier_sb *sb, u8 *b)
{
	hottier_sb_encode(sb, b);
	return (struct hottier_sb_disk *)b;
}

/* An encoded superblock, changed by the test: its checksum again. */
static void resum(u8 *b)
{
	struct hottier_sb_disk *d = (struct hottier_sb_disk *)b;

	d->csum = cpu_to_le32(hottier_meta_csum(~0U, b + 4,
						HOTTIER_META_BLOCK - 4));
}

static void a_later_version_is_refused_not_misread(struct kunit *test)
{
	struct hottier_sb *sb = example_sb(test);
	struct hottier_sb_disk *d;
	u8 *b = block(test);

	d = encoded(sb, b);
	d->version = cpu_to_le32(HOTTIER_META_VERSION + 1);
	resum(b);
	KUNIT_EXPECT_EQ(test, hottier_sb_decode(b, sb), HOTTIER_SB_NEWER);
	/* Version 0 was never written: not ours to read either. */
	d->version = 0;
	resum(b);
	KUNIT_EXPECT_EQ(test, hottier_sb_decode(b, sb), HOTTIER_SB_NEWER);
}

/*
 * A version-1 superblock (feature words zero, as its tail was) decodes,
 * saying its version, for the takeover to trust it only if clean; what
 * this module writes is version 2.
 */
static void a_version_1_superblock_decodes_and_says_so(struct kunit *test)
{
	struct hottier_sb *sb = example_sb(test), *out = example_sb(test);
	struct hottier_sb_disk *d;
	u8 *b = block(test);

	d = encoded(sb, b);
	KUNIT_EXPECT_EQ(test, b[4], (u8)2);
	d->version = cpu_to_le32(HOTTIER_META_VERSION_V1);
	resum(b);
	KUNIT_ASSERT_EQ(test, hottier_sb_decode(b, out), HOTTIER_SB_OURS);
	KUNIT_EXPECT_EQ(test, out->version, 1U);
	out->version = sb->version;
	KUNIT_EXPECT_EQ(test, memcmp(sb, out, sizeof(*sb)), 0);
}

/*
 * An incompat feature this module does not know: never decoded as ours
 * (the takeover drops the map), whichever bit. An unknown compat feature
 * is read past, and cleared when the superblock is written again.
 */
static void unknown_features_incompat_dropped_compat_cleared(struct kunit *test)
{
	struct hottier_sb *sb = example_sb(test), *out = example_sb(test);
	struct hottier_sb_disk *d;
	u8 *b = block(test);
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		if (HOTTIER_INCOMPAT_KNOWN & BIT(bit))
			continue;
		d = encoded(sb, b);
		d->incompat = cpu_to_le32(BIT(bit));
		resum(b);
		KUNIT_EXPECT_EQ_MSG(test, hottier_sb_decode(b, out),
				    HOTTIER_SB_INCOMPAT, "bit %u", bit);
		KUNIT_EXPECT_EQ(test, out->incompat, (u32)BIT(bit));
	}
	d = encoded(sb, b);
	d->compat = cpu_to_le32(~HOTTIER_COMPAT_KNOWN);
	resum(b);
	KUNIT_ASSERT_EQ(test, hottier_sb_decode(b, out), HOTTIER_SB_OURS);
	KUNIT_EXPECT_EQ(test, out->compat, ~HOTTIER_COMPAT_KNOWN);
	KUNIT_EXPECT_EQ(test, out->hdd_id[0], sb->hdd_id[0]);
	hottier_sb_encode(out, b);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->compat), HOTTIER_COMPAT_KNOWN);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->incompat), HOTTIER_INCOMPAT_KNOWN);
}

static void check_refuses_another_owner_extent_or_layout(struct kunit *test)
{
	struct hottier_sb *sb = example_sb(test);
	struct hottier_layout l = { .meta_sectors = 256, .nr_slots = 1000 };
	char *error = NULL;

	KUNIT_EXPECT_EQ(test, hottier_sb_check(sb, sb->hdd_id, 128, &l, &error),
			0);
	KUNIT_EXPECT_PTR_EQ(test, error, NULL);

	KUNIT_EXPECT_EQ(test, hottier_sb_check(sb, "wwn-0x5000c500ffffffff",
					       128, &l, &error), -EBUSY);
	KUNIT_EXPECT_NOT_NULL(test, strstr(error, "another HDD"));
	KUNIT_EXPECT_EQ(test, hottier_sb_check(sb, sb->hdd_id, 256, &l, &error),
			-EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(error, "extent size"));
	l.nr_slots = 999;
	KUNIT_EXPECT_EQ(test, hottier_sb_check(sb, sb->hdd_id, 128, &l, &error),
			-EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(error, "layout"));
}

static void records_check_out_only_for_their_slot_and_format(struct kunit *test)
{
	struct hottier_rec in = { .extent = (1ULL << 40) - 1, .heat = 4095,
				  .flags = HOTTIER_REC_VALID |
					   HOTTIER_REC_PINNED };
	struct hottier_rec out = {};
	struct hottier_rec_disk d;
	u8 *raw = (u8 *)&d;
	int i;

	hottier_rec_encode(0x1234, 77, &in, &d);
	KUNIT_EXPECT_TRUE(test, hottier_rec_decode(0x1234, 77, &d, &out));
	KUNIT_EXPECT_EQ(test, out.extent, in.extent);
	KUNIT_EXPECT_EQ(test, out.heat, in.heat);
	KUNIT_EXPECT_EQ(test, out.flags, in.flags);
	/* Another slot's, or a record of an earlier format: never trusted. */
	KUNIT_EXPECT_FALSE(test, hottier_rec_decode(0x1234, 78, &d, &out));
	KUNIT_EXPECT_FALSE(test, hottier_rec_decode(0x1235, 77, &d, &out));
	/* Any flipped bit. */
	for (i = 0; i < sizeof(d); i++) {
		raw[i] ^= 1;
		KUNIT_EXPECT_FALSE_MSG(test,
				       hottier_rec_decode(0x1234, 77, &d, &out),
				       "byte %d", i);
		raw[i] ^= 1;
	}
	/*
	 * An intent (written through since recorded) names its replica
	 * too; with HOTTIER_REC_VALID beside it, the record is valid.
	 */
	in.flags = HOTTIER_REC_INTENT;
	hottier_rec_encode(0x1234, 77, &in, &d);
	KUNIT_EXPECT_TRUE(test, hottier_rec_decode(0x1234, 77, &d, &out));
	KUNIT_EXPECT_EQ(test, out.flags, (u16)HOTTIER_REC_INTENT);
	KUNIT_EXPECT_EQ(test, out.extent, in.extent);
	KUNIT_EXPECT_FALSE(test, hottier_rec_decode(0x1234, 78, &d, &out));
	in.flags = HOTTIER_REC_INTENT | HOTTIER_REC_VALID;
	hottier_rec_encode(0x1234, 77, &in, &d);
	KUNIT_EXPECT_TRUE(test, hottier_rec_decode(0x1234, 77, &d, &out));
	KUNIT_EXPECT_EQ(test, out.flags, (u16)HOTTIER_REC_VALID);
	/* A record that checks out but says "empty" holds no replica. */
	in.flags = 0;
	hottier_rec_encode(0x1234, 77, &in, &d);
	KUNIT_EXPECT_FALSE(test, hottier_rec_decode(0x1234, 77, &d, &out));
	/* Zeroes never hold a replica, whatever the nonce. */
	memset(&d, 0, sizeof(d));
	for (i = 0; i < 1000; i++)
		KUNIT_EXPECT_FALSE(test, hottier_rec_decode(i * 7919, i, &d,
							    &out));
}

static void ids_are_printable_words(struct kunit *test)
{
	static const char lvm_id[] =
		"lvm-LVM-Xq3cY1Zw0j2RbQk1sN9u2kqkPj0mO3sVd8tE0H2m1ZbY6w4c";
	char long_id[HOTTIER_ID_MAX + 2];

	KUNIT_EXPECT_TRUE(test, hottier_id_valid("wwn-0x5000c500a1b2c3d4"));
	KUNIT_EXPECT_TRUE(test, hottier_id_valid(lvm_id));
	KUNIT_EXPECT_FALSE(test, hottier_id_valid(""));
	KUNIT_EXPECT_FALSE(test, hottier_id_valid("two words"));
	KUNIT_EXPECT_FALSE(test, hottier_id_valid("tab\there"));
	/* UTF-8 and Latin-1 letters, DEL: printable ASCII only. */
	KUNIT_EXPECT_FALSE(test, hottier_id_valid("disque-\xc3\xa9t\xc3\xa9"));
	KUNIT_EXPECT_FALSE(test, hottier_id_valid("serial\xe9"));
	KUNIT_EXPECT_FALSE(test, hottier_id_valid("del\x7f"));
	KUNIT_EXPECT_TRUE(test, hottier_id_valid("!~"));
	memset(long_id, 'a', sizeof(long_id));
	long_id[HOTTIER_ID_MAX] = '\0';
	KUNIT_EXPECT_TRUE(test, hottier_id_valid(long_id));
	long_id[HOTTIER_ID_MAX] = 'a';
	long_id[HOTTIER_ID_MAX + 1] = '\0';
	KUNIT_EXPECT_FALSE(test, hottier_id_valid(long_id));
}

static struct kunit_case hottier_meta_cases[] = {
	KUNIT_CASE(csum_is_crc32c),
	KUNIT_CASE(superblock_fields_sit_where_the_docs_say),
	KUNIT_CASE(superblock_round_trips),
	KUNIT_CASE(a_zeroed_block_is_new_and_anything_else_foreign),
	KUNIT_CASE(a_flipped_bit_anywhere_is_corrupt),
	KUNIT_CASE(a_later_version_is_refused_not_misread),
	KUNIT_CASE(a_version_1_superblock_decodes_and_says_so),
	KUNIT_CASE(unknown_features_incompat_dropped_compat_cleared),
	KUNIT_CASE(check_refuses_another_owner_extent_or_layout),
	KUNIT_CASE(records_check_out_only_for_their_slot_and_format),
	KUNIT_CASE(ids_are_printable_words),
	{}
};

static struct kunit_suite hottier_meta_suite = {
	.name = "dm-hottier-meta",
	.test_cases = hottier_meta_cases,
};

kunit_test_suite(hottier_meta_suite);
