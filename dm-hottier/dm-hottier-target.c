// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: hot-extent SSD tiering.
 *
 * The HDD holds every byte; the SSD will hold clean replicas of the hottest
 * extents. This version maps all I/O to the HDD and flushes the SSD with
 * every flush, ready for replicas.
 *
 * See Documentation/hottier.rst for the table line, status and messages.
 */
#include "dm-hottier-args.h"
#include "dm-hottier-compat.h"

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/device-mapper.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#define DM_MSG_PREFIX "hottier"

/* Bio numbers of an empty flush: dm core clones it num_flush_bios times. */
enum hottier_flush_nr {
	HOTTIER_FLUSH_HDD,
	HOTTIER_FLUSH_SSD,
	HOTTIER_NR_FLUSH_BIOS,
};

/* Status INFO counters, in the order they are printed. */
enum hottier_stat {
	HOTTIER_STAT_READS,
	HOTTIER_STAT_WRITES,
	HOTTIER_STAT_READ_SECTORS,
	HOTTIER_STAT_WRITE_SECTORS,
	HOTTIER_STAT_DISCARDS,
	HOTTIER_STAT_FLUSHES,
	HOTTIER_STAT_SSD_FLUSH_ERRORS,
	HOTTIER_NR_STATS,
};

/*
 * A device's claim on its members: no two hottier devices may share an HDD
 * or an SSD. Tables of one mapped device (a reload builds the new table while
 * the old one is live) share the claim.
 */
struct hottier_claim {
	struct list_head list;
	struct mapped_device *md;
	dev_t hdd;
	dev_t ssd;
};

static DEFINE_MUTEX(claims_lock);	/* protects claims */
static LIST_HEAD(claims);

struct hottier {
	struct dm_target *ti;
	struct dm_dev *hdd;
	struct dm_dev *ssd;

	struct hottier_args args;	/* the configuration; device paths unused */

	struct hottier_claim claim;	/* on the claims list when .md is set */

	atomic64_t stats[HOTTIER_NR_STATS];
};

/* Claims */

static bool claim_conflicts(const struct hottier_claim *c, dev_t dev)
{
	return c->hdd == dev || c->ssd == dev;
}

static int claim_members(struct hottier *ht, char **error)
{
	struct hottier_claim *c;
	int r = 0;

	ht->claim.hdd = ht->hdd->bdev->bd_dev;
	ht->claim.ssd = ht->ssd->bdev->bd_dev;

	mutex_lock(&claims_lock);
	list_for_each_entry(c, &claims, list) {
		if (c->md == dm_table_get_md(ht->ti->table))
			continue;
		if (claim_conflicts(c, ht->claim.hdd)) {
			*error = "HDD is already used by another hottier device";
			r = -EBUSY;
			break;
		}
		if (claim_conflicts(c, ht->claim.ssd)) {
			*error = "SSD is already used by another hottier device";
			r = -EBUSY;
			break;
		}
	}
	if (!r) {
		ht->claim.md = dm_table_get_md(ht->ti->table);
		list_add(&ht->claim.list, &claims);
	}
	mutex_unlock(&claims_lock);
	return r;
}

static void release_claim(struct hottier *ht)
{
	if (!ht->claim.md)
		return;
	mutex_lock(&claims_lock);
	list_del(&ht->claim.list);
	mutex_unlock(&claims_lock);
}

/* Constructor and destructor */

/* Copes with a partly built object, so the constructor has one error path. */
static void hottier_destroy(struct hottier *ht)
{
	release_claim(ht);
	if (ht->ssd)
		dm_put_device(ht->ti, ht->ssd);
	if (ht->hdd)
		dm_put_device(ht->ti, ht->hdd);
	kfree(ht);
}

static int get_devices(struct hottier *ht, char **error)
{
	struct dm_target *ti = ht->ti;
	int r;

	/* The mode's type changed in 6.5 (blk_mode_t): pass it straight on. */
	r = dm_get_device(ti, ht->args.hdd_path, dm_table_get_mode(ti->table),
			  &ht->hdd);
	if (r) {
		*error = "Error opening HDD device";
		return r;
	}
	r = dm_get_device(ti, ht->args.ssd_path, dm_table_get_mode(ti->table),
			  &ht->ssd);
	if (r) {
		*error = "Error opening SSD device";
		return r;
	}
	if (ht->hdd->bdev->bd_dev == ht->ssd->bdev->bd_dev) {
		*error = "HDD and SSD must be different devices";
		return -EINVAL;
	}
	return hottier_check_geometry(ti->len, bdev_nr_sectors(ht->hdd->bdev),
				      bdev_nr_sectors(ht->ssd->bdev),
				      ht->args.extent_sectors, error);
}

static void init_target(struct hottier *ht)
{
	struct dm_target *ti = ht->ti;

	ti->num_flush_bios = HOTTIER_NR_FLUSH_BIOS;
	ti->flush_supported = true;
	if (ht->args.discard == HOTTIER_DISCARD_PASSDOWN) {
		ti->num_discard_bios = 1;
		/* The HDD alone takes discards: see hottier_io_hints(). */
		ti->discards_supported = true;
	}
	ti->num_write_zeroes_bios = 1;
}

/*
 * Construct a hottier mapping:
 * <hdd_dev> <ssd_dev> <extent_sectors> [<#args> <key> <value>...]
 */
static int hottier_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct hottier *ht;
	int r;

	ht = kzalloc(sizeof(*ht), GFP_KERNEL);
	if (!ht) {
		ti->error = "Cannot allocate hottier context";
		return -ENOMEM;
	}
	ht->ti = ti;

	r = hottier_parse_args(argc, argv, &ht->args, &ti->error);
	if (r)
		goto bad;

	r = get_devices(ht, &ti->error);
	if (r)
		goto bad;

	r = claim_members(ht, &ti->error);
	if (r)
		goto bad;

	r = dm_set_target_max_io_len(ti, ht->args.extent_sectors);
	if (r) {
		ti->error = "Cannot set the extent size as the maximum I/O size";
		goto bad;
	}
	init_target(ht);
	/* Paths point into argv, which dm core frees after the constructor. */
	ht->args.hdd_path = NULL;
	ht->args.ssd_path = NULL;
	ti->private = ht;
	return 0;

bad:
	hottier_destroy(ht);
	return r;
}

static void hottier_dtr(struct dm_target *ti)
{
	hottier_destroy(ti->private);
}

/* I/O */

static void stat_add(struct hottier *ht, enum hottier_stat s, u64 v)
{
	atomic64_add(v, &ht->stats[s]);
}

static void account_bio(struct hottier *ht, struct bio *bio)
{
	switch (bio_op(bio)) {
	case REQ_OP_READ:
		stat_add(ht, HOTTIER_STAT_READS, 1);
		stat_add(ht, HOTTIER_STAT_READ_SECTORS, bio_sectors(bio));
		break;
	case REQ_OP_WRITE:
		stat_add(ht, HOTTIER_STAT_WRITES, 1);
		stat_add(ht, HOTTIER_STAT_WRITE_SECTORS, bio_sectors(bio));
		break;
	case REQ_OP_DISCARD:
		stat_add(ht, HOTTIER_STAT_DISCARDS, 1);
		break;
	default:
		break;
	}
}

static bool is_empty_flush(struct bio *bio)
{
	return (bio->bi_opf & REQ_PREFLUSH) && !bio_sectors(bio);
}

static int map_flush(struct hottier *ht, struct bio *bio)
{
	if (dm_bio_get_target_bio_nr(bio) == HOTTIER_FLUSH_SSD) {
		bio_set_dev(bio, ht->ssd->bdev);
		return DM_MAPIO_REMAPPED;
	}
	stat_add(ht, HOTTIER_STAT_FLUSHES, 1);
	bio_set_dev(bio, ht->hdd->bdev);
	return DM_MAPIO_REMAPPED;
}

/*
 * Reads and writes arrive inside one extent (max_io_len); discards and
 * write-zeroes may span many extents and are remapped as ranges.
 */
static int hottier_map(struct dm_target *ti, struct bio *bio)
{
	struct hottier *ht = ti->private;

	if (is_empty_flush(bio))
		return map_flush(ht, bio);

	account_bio(ht, bio);
	bio_set_dev(bio, ht->hdd->bdev);
	bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	return DM_MAPIO_REMAPPED;
}

static int hottier_end_io(struct dm_target *ti, struct bio *bio,
			  blk_status_t *error)
{
	struct hottier *ht = ti->private;

	/* The SSD holds only clean replicas: its flush failing loses nothing. */
	if (*error && is_empty_flush(bio) &&
	    dm_bio_get_target_bio_nr(bio) == HOTTIER_FLUSH_SSD) {
		stat_add(ht, HOTTIER_STAT_SSD_FLUSH_ERRORS, 1);
		*error = BLK_STS_OK;
	}
	return DM_ENDIO_DONE;
}

/* Status, messages, limits */

/*
 * Status INFO fields, in order (Documentation/hottier.rst):
 *   <reads> <writes> <read_sectors> <write_sectors> <discards> <flushes>
 *   <ssd_flush_errors>
 *
 * Status TABLE: the table line that recreates this device.
 */
static void hottier_status(struct dm_target *ti, status_type_t type,
			   unsigned int status_flags, char *result,
			   unsigned int maxlen)
{
	struct hottier *ht = ti->private;
	unsigned int sz = 0;
	int i;

	switch (type) {
	case STATUSTYPE_INFO:
		for (i = 0; i < HOTTIER_NR_STATS; i++)
			DMEMIT("%s%llu", i ? " " : "",
			       (unsigned long long)atomic64_read(&ht->stats[i]));
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%s %s %llu 2 discard %s", ht->hdd->name, ht->ssd->name,
		       (unsigned long long)ht->args.extent_sectors,
		       hottier_discard_name(ht->args.discard));
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",hdd=%s,ssd=%s,extent_sectors=%llu,discard=%s;",
		       ht->hdd->name, ht->ssd->name,
		       (unsigned long long)ht->args.extent_sectors,
		       hottier_discard_name(ht->args.discard));
		break;
	}
}

static void reset_stats(struct hottier *ht)
{
	int i;

	for (i = 0; i < HOTTIER_NR_STATS; i++)
		atomic64_set(&ht->stats[i], 0);
}

static int hottier_message(struct dm_target *ti, unsigned int argc,
			   char **argv, char *result, unsigned int maxlen)
{
	struct hottier *ht = ti->private;

	if (argc == 1 && !strcasecmp(argv[0], "reset_stats")) {
		reset_stats(ht);
		return 0;
	}
	DMERR("%s: unsupported message '%s' with %u argument(s)",
	      dm_device_name(dm_table_get_md(ti->table)),
	      argc ? argv[0] : "", argc);
	return -EINVAL;
}

/* Each member is reported with its own length: the SSD is not the HDD. */
static int hottier_iterate_devices(struct dm_target *ti,
				   iterate_devices_callout_fn fn, void *data)
{
	struct hottier *ht = ti->private;
	int r;

	r = fn(ti, ht->hdd, 0, ti->len, data);
	if (r)
		return r;
	return fn(ti, ht->ssd, 0, bdev_nr_sectors(ht->ssd->bdev), data);
}

/*
 * Both members are stacked into the limits (reads will go to the SSD), but
 * discards go to the HDD alone: its discard limits apply, whatever the SSD
 * supports.
 */
static void hottier_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct hottier *ht = ti->private;
	struct block_device *hdd = ht->hdd->bdev;

	if (ht->args.discard == HOTTIER_DISCARD_PASSDOWN)
		hottier_limits_set_discard(limits, bdev_max_discard_sectors(hdd),
					   bdev_discard_granularity(hdd));
	else
		hottier_limits_set_discard(limits, 0, 0);
}

static struct target_type hottier_target = {
	.name = "hottier",
	.version = {0, 1, 0},
	.module = THIS_MODULE,
	.ctr = hottier_ctr,
	.dtr = hottier_dtr,
	.map = hottier_map,
	.end_io = hottier_end_io,
	.status = hottier_status,
	.message = hottier_message,
	.iterate_devices = hottier_iterate_devices,
	.io_hints = hottier_io_hints,
};

static int __init dm_hottier_init(void)
{
	int r = dm_register_target(&hottier_target);

	if (r)
		DMERR("register failed %d", r);
	return r;
}

static void __exit dm_hottier_exit(void)
{
	dm_unregister_target(&hottier_target);
}

module_init(dm_hottier_init);
module_exit(dm_hottier_exit);

MODULE_DESCRIPTION(DM_NAME " hot-extent SSD tiering target");
MODULE_AUTHOR("dm-hottier developers");
MODULE_LICENSE("GPL");
