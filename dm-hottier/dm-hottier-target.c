// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: hot-extent SSD tiering.
 *
 * The HDD holds every byte; the SSD holds clean replicas of the hottest
 * extents. Reads feed a heat table (dm-hottier-heat.c); a worker copies the
 * extents the policy (dm-hottier-policy.c) chooses to the SSD with kcopyd;
 * reads of a replicated extent go to the SSD; writes go to the HDD and, for
 * a replicated extent, to the SSD too (write_policy through) or drop the
 * replica first (write_policy around).
 *
 * How the invariants are kept:
 *  - A replica is installed only if no write overlapped its copy: a copy
 *    starts only with no write in flight to its extent and records the
 *    extent's write generation; it is installed only if that is unchanged
 *    (struct hottier_wtrack, complete_copy()).
 *  - A slot is reused only after every I/O sent to it completed: each I/O
 *    holds a reference on its slot (hottier_slot_get(), the map's slot
 *    refs).
 *  - Overlapping writes to a replicated extent are serialised, so both
 *    devices apply them in the same order (a write-through's cell,
 *    ht->wt_cells); writes that do not overlap run in parallel.
 *
 * See Documentation/hottier.rst for the table line, status and messages.
 */
#include "dm-hottier.h"

static DEFINE_MUTEX(claims_lock);	/* protects claims */
static LIST_HEAD(claims);

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
	ht->claim.ssd = ht->ssd ? ht->ssd->bdev->bd_dev : 0;

	mutex_lock(&claims_lock);
	list_for_each_entry(c, &claims, list) {
		if (c->md == dm_table_get_md(ht->ti->table))
			continue;
		if (claim_conflicts(c, ht->claim.hdd)) {
			*error = "HDD is already used by another hottier device";
			r = -EBUSY;
			break;
		}
		if (ht->ssd && claim_conflicts(c, ht->claim.ssd)) {
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

/*
 * Whether another table of this device holds the same SSD: a reload, whose
 * old table is live and writes the on-SSD map when it suspends.
 */
static bool ssd_held_by_old_table(struct hottier *ht)
{
	struct hottier_claim *c;
	bool held = false;

	if (!ht->ssd)
		return false;
	mutex_lock(&claims_lock);
	list_for_each_entry(c, &claims, list)
		if (c != &ht->claim && c->md == ht->claim.md &&
		    c->ssd == ht->claim.ssd)
			held = true;
	mutex_unlock(&claims_lock);
	return held;
}

/*
 * Whether a table of this device with no SSD wrote the HDD: a reload that
 * attaches the SSD then takes over its map's pins, not its replicas. Asked
 * at the new table's first resume, once dm has suspended the old table:
 * it wrote nothing after that.
 */
static bool hdd_written_without_ssd(struct hottier *ht)
{
	struct hottier_claim *c;
	bool written = false;

	mutex_lock(&claims_lock);
	list_for_each_entry(c, &claims, list)
		if (c != &ht->claim && c->md == ht->claim.md && !c->ssd &&
		    READ_ONCE(c->hdd_written))
			written = true;
	mutex_unlock(&claims_lock);
	return written;
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
	/* First: inherit_pins() reads a claimant's pins under claims_lock. */
	release_claim(ht);
	if (ht->wq) {
		hottier_scrub_stop(ht);
		hottier_ticks_stop(ht);
		cancel_delayed_work_sync(&ht->promote_work);
		cancel_delayed_work_sync(&ht->pin_retry_work);
		cancel_delayed_work_sync(&ht->commit_work);
		cancel_work_sync(&ht->inval_work);
		destroy_workqueue(ht->wq);
	}
	if (!IS_ERR_OR_NULL(ht->kcopyd))
		dm_kcopyd_client_destroy(ht->kcopyd);
	bioset_exit(&ht->bs);
	hottier_persist_dtr(ht);
	hottier_io_dtr(ht);
	hottier_policy_exit(&ht->policy);
	hottier_map_exit(&ht->map);
	free_percpu(ht->stats);
	if (ht->ssd)
		dm_put_device(ht->ti, ht->ssd);
	if (ht->hdd)
		dm_put_device(ht->ti, ht->hdd);
	kfree(ht);
}

/* A table with no SSD ("-"): the HDD's own checks. */
static int check_hdd_alone(struct hottier *ht, char **error)
{
	struct block_device *hdd = ht->hdd->bdev;

	if ((ht->args.extent_sectors << SECTOR_SHIFT) %
	    bdev_logical_block_size(hdd)) {
		*error = "Extent size must be a multiple of both devices' logical block sizes";
		return -EINVAL;
	}
	if (ht->ti->len > bdev_nr_sectors(hdd)) {
		*error = "Target length exceeds the HDD's size";
		return -EINVAL;
	}
	return 0;
}

static int get_devices(struct hottier *ht, char **error)
{
	struct dm_target *ti = ht->ti;
	unsigned int lbs;
	int r;

	/* The mode's type changed in 6.5 (blk_mode_t): pass it straight on. */
	r = dm_get_device(ti, ht->args.hdd_path, dm_table_get_mode(ti->table),
			  &ht->hdd);
	if (r) {
		*error = "Error opening HDD device";
		return r;
	}
	if (ht->args.no_ssd)
		return check_hdd_alone(ht, error);
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
	/*
	 * Replicas are whole extents of both members, and the on-SSD map
	 * reads and writes whole logical blocks of the SSD, each inside its
	 * 4 KiB superblock or its records.
	 */
	lbs = max(bdev_logical_block_size(ht->hdd->bdev),
		  bdev_logical_block_size(ht->ssd->bdev));
	if ((ht->args.extent_sectors << SECTOR_SHIFT) % lbs) {
		*error = "Extent size must be a multiple of both devices' logical block sizes";
		return -EINVAL;
	}
	if (ht->args.hdd_id[0] &&
	    bdev_logical_block_size(ht->ssd->bdev) > HOTTIER_META_BLOCK) {
		*error = "The on-SSD map (hdd_id) needs SSD logical blocks of 4 KiB or less";
		return -EINVAL;
	}
	return hottier_check_geometry(ti->len, bdev_nr_sectors(ht->hdd->bdev),
				      bdev_nr_sectors(ht->ssd->bdev),
				      ht->args.extent_sectors, error);
}

static void init_state(struct hottier *ht)
{
	mutex_init(&ht->lock);
	hottier_io_init(ht);
	hottier_migrate_init(ht);
	hottier_scrub_init(ht);
	hottier_persist_init(ht);
}

static void init_target(struct hottier *ht)
{
	struct dm_target *ti = ht->ti;

	/* The HDD alone: see map_flush(). */
	ti->num_flush_bios = 1;
	ti->flush_supported = true;
	if (ht->args.discard == HOTTIER_DISCARD_PASSDOWN) {
		ti->num_discard_bios = 1;
		/* The HDD alone takes discards: see hottier_io_hints(). */
		ti->discards_supported = true;
	}
	ti->num_write_zeroes_bios = 1;
	ti->per_io_data_size = sizeof(struct hottier_io);
}

/*
 * Construct a hottier mapping:
 * <hdd_dev> <ssd_dev> <extent_sectors> [<#args> <key> <value>...]
 *
 * Nothing is written to the SSD until the table is resumed: on a reload,
 * the old table is still live. With hdd_id, the SSD's superblock is read
 * to check whose map it holds, unless the old table holds the SSD.
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
	init_state(ht);

	r = hottier_parse_args(argc, argv, &ht->args, &ti->error);
	if (r)
		goto bad;
	ht->extent_shift = ilog2(ht->args.extent_sectors);
	/* Slot records and heat entries keep 40 bits of an extent. */
	if (((ti->len - 1) >> ht->extent_shift) >= HOTTIER_EXTENT_LIMIT) {
		ti->error = "Device too long: at most 2^40 extents";
		r = -EINVAL;
		goto bad;
	}

	r = get_devices(ht, &ti->error);
	if (r)
		goto bad;
	if (ht->ssd)
		hottier_layout(bdev_nr_sectors(ht->ssd->bdev),
			       ht->args.extent_sectors, &ht->layout);
	r = hottier_io_ctr(ht, &ti->error);
	if (r)
		goto bad;

	r = claim_members(ht, &ti->error);
	if (r)
		goto bad;
	if (!ht->ssd) {
		/* Until a reload gives one: no replica, no SSD I/O. */
		set_bit(HOTTIER_NO_SSD, &ht->mode);
		set_bit(HOTTIER_DEGRADED, &ht->mode);
	} else {
		ht->drop_replicas = ht->args.drop_replicas;
	}
	r = hottier_alloc_tables(ht, &ti->error);
	if (r)
		goto bad;
	r = hottier_init_migration(ht, &ti->error);
	if (r)
		goto bad;
	r = hottier_persist_ctr(ht, ssd_held_by_old_table(ht), &ti->error);
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
	/* dm suspends a live table before destroying it: this is a guard. */
	hottier_sysfs_remove(ti->private);
	hottier_destroy(ti->private);
}

/* Suspend and resume */

/*
 * dm core has drained the target's bios; stop starting copies, wait for
 * those in flight, and let their completions run.
 */
static void hottier_postsuspend(struct dm_target *ti)
{
	struct hottier *ht = ti->private;

	hottier_sysfs_remove(ht);
	hottier_scrub_stop(ht);
	WRITE_ONCE(ht->running, false);
	cancel_delayed_work_sync(&ht->promote_work);
	hottier_cancel_waiting(ht);
	wait_event(ht->migrate_wait, !atomic_read(&ht->migrating));
	/* A retry of the pins not run yet: the resume asks for them. */
	if (cancel_delayed_work_sync(&ht->pin_retry_work))
		hottier_policy_pins_dropped(&ht->policy);
	hottier_ticks_stop(ht);
	/* A member's reads stuck in flight hold this as they hold dm's. */
	hottier_io_stop(ht);
	flush_workqueue(ht->wq);
	/* Nothing changes the map now: a clean stop writes it. */
	hottier_persist_stop(ht);
}

/*
 * Pins belong to the device, not to one table. A reload's new table takes
 * them over from the old one when it resumes: dm swaps tables while the
 * device is suspended and destroys the old table only after the new one has
 * resumed. Extent sizes may differ, so pins travel as sector ranges. A
 * plain resume finds no other table of its device pinning anything.
 */
static u32 inherit_pins(struct hottier *ht)
{
	u32 n = 0, i, refused = 0, old_shift = 0;
	u64 *first = NULL, *last = NULL;
	struct hottier_claim *c;
	struct hottier *old;

	mutex_lock(&claims_lock);
	list_for_each_entry(c, &claims, list) {
		if (c == &ht->claim || c->md != ht->claim.md)
			continue;
		old = container_of(c, struct hottier, claim);
		if (!hottier_policy_nr_pinned(&old->policy))
			continue;
		n = hottier_policy_pin_ranges(&old->policy, NULL, NULL, 0, true);
		first = kvmalloc_array(n, sizeof(*first), GFP_KERNEL);
		last = kvmalloc_array(n, sizeof(*last), GFP_KERNEL);
		if (first && last)
			n = hottier_policy_pin_ranges(&old->policy, first, last,
						      n, false);
		old_shift = old->extent_shift;
		break;
	}
	mutex_unlock(&claims_lock);
	if (!n)
		goto out;
	if (!first || !last) {
		DMERR("%s: no memory to take over %u pinned ranges",
		      dm_device_name(ht->claim.md), n);
		goto out;
	}

	mutex_lock(&ht->lock);
	for (i = 0; i < n; i++)
		if (hottier_pin_sectors(ht, first[i] << old_shift,
					(last[i] + 1) << old_shift))
			refused++;
	mutex_unlock(&ht->lock);
	if (refused)
		DMWARN("%s: %u of %u pinned ranges of the old table could not be pinned again",
		       dm_device_name(ht->claim.md), refused, n);
out:
	kvfree(first);
	kvfree(last);
	return n;
}

/*
 * A reload that replaces the SSD: the old table, suspended and swapped
 * out but not destroyed yet, may have written its map clean at its
 * suspend. From this table's resume on, the HDD is written without that
 * SSD, so its map is invalidated first.
 *
 * The old table is the one of this device that took its SSD over (a
 * table loaded beside it never resumed). Its invalidation is SSD I/O,
 * with retries, so it runs after claims_lock is dropped: no other
 * device's create waits for it. That is safe because dm destroys the
 * old table only once this resume has returned, in the same ioctl.
 */
static void retire_replaced_ssd(struct hottier *ht)
{
	struct hottier *old = NULL;
	struct hottier_claim *c;

	mutex_lock(&claims_lock);
	list_for_each_entry(c, &claims, list) {
		if (c == &ht->claim || c->md != ht->claim.md ||
		    c->ssd == ht->claim.ssd)
			continue;
		old = container_of(c, struct hottier, claim);
		if (READ_ONCE(old->taken_over))
			break;
		old = NULL;
	}
	mutex_unlock(&claims_lock);
	if (old)
		hottier_persist_retire(old);
}

/*
 * Before any I/O: the map of a replaced SSD is invalidated, and the
 * on-SSD map is read (at the first resume) and marked in use. A map that
 * cannot be marked refuses the resume.
 */
static int hottier_preresume(struct dm_target *ti)
{
	struct hottier *ht = ti->private;
	unsigned int noio = memalloc_noio_save();
	int r;

	retire_replaced_ssd(ht);
	if (hdd_written_without_ssd(ht)) {
		/* A table with no SSD that replaces one carries it on. */
		if (!ht->ssd)
			WRITE_ONCE(ht->claim.hdd_written, true);
		else if (!ht->taken_over)
			ht->drop_replicas = true;
	}
	r = hottier_persist_resume(ht);

	memalloc_noio_restore(noio);
	return r;
}

/*
 * After the first resume took the on-SSD map over: the pins its
 * superblock holds (persist hands them back, the target pins them).
 */
static void apply_sb_pins(struct hottier *ht)
{
	struct hottier_sb *sb = ht->sb;
	u32 i, refused = 0;

	if (!ht->sb_pins)
		return;
	ht->sb_pins = false;
	mutex_lock(&ht->lock);
	for (i = 0; i < sb->nr_pins; i++)
		if (hottier_pin_sectors(ht, sb->pins[i].first_sector,
					sb->pins[i].first_sector +
					sb->pins[i].nr_sectors))
			refused++;
	mutex_unlock(&ht->lock);
	if (refused)
		DMWARN("%s: %u of %u pinned ranges on the SSD could not be pinned again",
		       ht_name(ht), refused, sb->nr_pins);
}

/*
 * Called while the device is still suspended: memory allocated here (the
 * pins taken over, the sysfs directory) must not wait on I/O to it. Pins
 * come from the old table of a reload, else from the on-SSD map.
 */
static void hottier_resume(struct dm_target *ti)
{
	struct hottier *ht = ti->private;
	unsigned int noio = memalloc_noio_save();

	if (!inherit_pins(ht))
		apply_sb_pins(ht);
	mutex_lock(&ht->lock);
	hottier_persist_pins(ht);
	mutex_unlock(&ht->lock);
	WRITE_ONCE(ht->running, true);
	if (test_bit(HOTTIER_NO_SSD, &ht->mode) &&
	    !test_and_set_bit(HOTTIER_NO_SSD_TOLD, &ht->mode)) {
		DMWARN("%s: no SSD: degraded, the HDD serves every I/O until a reload",
		       ht_name(ht));
		queue_work(ht->wq, &ht->event_work);
	}
	hottier_persist_started(ht);
	hottier_qos_restart(ht);
	hottier_ticks_start(ht);
	kick_promote(ht, 0);
	hottier_sysfs_add(ht);
	memalloc_noio_restore(noio);
}

/* Each member is reported with its own length: the SSD is not the HDD. */
static int hottier_iterate_devices(struct dm_target *ti,
				   iterate_devices_callout_fn fn, void *data)
{
	struct hottier *ht = ti->private;
	int r;

	r = fn(ti, ht->hdd, 0, ti->len, data);
	if (r || !ht->ssd)
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
	.version = {0, 3, 0},
	.features = DM_TARGET_SINGLETON,
	.module = THIS_MODULE,
	.ctr = hottier_ctr,
	.dtr = hottier_dtr,
	.map = hottier_map,
	.end_io = hottier_end_io,
	.postsuspend = hottier_postsuspend,
	.preresume = hottier_preresume,
	.resume = hottier_resume,
	.status = hottier_status,
	.message = hottier_message,
	.iterate_devices = hottier_iterate_devices,
	.io_hints = hottier_io_hints,
};

static int __init dm_hottier_init(void)
{
	int r;

	hottier_sysfs_init();
	r = dm_register_target(&hottier_target);

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

