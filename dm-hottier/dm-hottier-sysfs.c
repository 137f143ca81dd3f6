// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier sysfs: /sys/block/dm-N/hottier/, a file per table key
 * (read-write but max_tracked, read-only) and per status field (read-only),
 * plus extent_sectors. The directory belongs to the live table: added at
 * resume, deleted at postsuspend, so a reload's two tables never collide
 * and a never-resumed table has none. Deleting it waits for the show and
 * store calls running; those take no lock held across a suspend (a store
 * takes ht->lock, as a message does).
 */
#include "dm-hottier.h"

/* A refused value is logged up to this many characters. */
#define HOTTIER_LOGGED_VALUE	40

struct hottier_kobj {
	struct kobject kobj;
	struct hottier *ht;	/* valid while the kobject is in sysfs */
};

struct hottier_attr {
	struct attribute attr;
	int key;		/* enum hottier_key, or -1 */
	int field;		/* enum hottier_field, or -1 */
};

#define HOTTIER_EXTENT_ATTR	(HOTTIER_NR_KEYS + HOTTIER_NR_FIELDS)
static struct hottier_attr hottier_attrs[HOTTIER_EXTENT_ATTR + 1];
static struct attribute *hottier_attr_list[HOTTIER_EXTENT_ATTR + 2];
static const struct attribute_group hottier_attr_group = {
	.attrs = hottier_attr_list,
};

static const struct attribute_group *hottier_attr_groups[] = {
	&hottier_attr_group, NULL,
};

static struct hottier *kobj_ht(struct kobject *kobj)
{
	return container_of(kobj, struct hottier_kobj, kobj)->ht;
}

static ssize_t hottier_attr_show(struct kobject *kobj, struct attribute *attr,
				 char *buf)
{
	struct hottier_attr *a = container_of(attr, struct hottier_attr, attr);
	struct hottier *ht = kobj_ht(kobj);
	char value[32];

	if (a->key >= 0)
		hottier_format_value(&ht->args, a->key, value, sizeof(value));
	else if (a->field >= 0)
		hottier_format_field(ht, a->field, value, sizeof(value));
	else
		scnprintf(value, sizeof(value), "%llu",
			  (unsigned long long)ht->args.extent_sectors);
	return sysfs_emit(buf, "%s\n", value);
}

/*
 * As the "<key> <value>" message: blanks around the value are trimmed, a
 * bad value is refused with a log line, nothing kept.
 */
static ssize_t hottier_attr_store(struct kobject *kobj, struct attribute *attr,
				  const char *buf, size_t len)
{
	struct hottier_attr *a = container_of(attr, struct hottier_attr, attr);
	struct hottier *ht = kobj_ht(kobj);
	char *copy, *value, *error = NULL;
	int r;

	if (a->key < 0)
		return -EPERM;
	copy = kstrndup(buf, len, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	value = strim(copy);
	mutex_lock(&ht->lock);
	r = hottier_set_key(&ht->args, attr->name, value, true, &error);
	mutex_unlock(&ht->lock);
	if (r)
		DMERR("%s: sysfs %s %.*s%s: %s", ht_name(ht), attr->name,
		      HOTTIER_LOGGED_VALUE, value,
		      strlen(value) > HOTTIER_LOGGED_VALUE ? "..." : "", error);
	else
		hottier_keys_changed(ht);
	kfree(copy);
	return r ?: len;
}

static const struct sysfs_ops hottier_sysfs_ops = {
	.show = hottier_attr_show,
	.store = hottier_attr_store,
};

static void hottier_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct hottier_kobj, kobj));
}

static const struct kobj_type hottier_ktype = {
	.sysfs_ops = &hottier_sysfs_ops,
	.default_groups = hottier_attr_groups,
	.release = hottier_kobj_release,
};

/* Names and modes of the files, from the key and field tables. */
void hottier_sysfs_init(void)
{
	struct hottier_attr *a;
	int i;

	for (i = 0; i <= HOTTIER_EXTENT_ATTR; i++) {
		a = &hottier_attrs[i];
		a->key = i < HOTTIER_NR_KEYS ? i : -1;
		a->field = a->key < 0 && i < HOTTIER_EXTENT_ATTR ?
			   i - HOTTIER_NR_KEYS : -1;
		if (a->key >= 0) {
			a->attr.name = hottier_key_name(i);
			a->attr.mode = hottier_key_table_only(i) ? 0444 : 0644;
		} else {
			a->attr.name = a->field >= 0 ? hottier_field_names[a->field] :
				       "extent_sectors";
			a->attr.mode = 0444;
		}
		hottier_attr_list[i] = &a->attr;
	}
	hottier_attr_list[HOTTIER_EXTENT_ATTR + 1] = NULL;
}

void hottier_sysfs_add(struct hottier *ht)
{
	struct gendisk *disk = dm_disk(dm_table_get_md(ht->ti->table));
	struct hottier_kobj *hk = kzalloc(sizeof(*hk), GFP_KERNEL);
	int r;

	if (!hk) {
		DMERR("%s: no memory for the sysfs directory", ht_name(ht));
		return;
	}
	hk->ht = ht;
	r = kobject_init_and_add(&hk->kobj, &hottier_ktype,
				 &disk_to_dev(disk)->kobj, "hottier");
	if (r) {
		DMERR("%s: sysfs directory not added: error %d", ht_name(ht), r);
		kobject_put(&hk->kobj);
		return;
	}
	ht->sysfs = hk;
}

/* Returns once no show or store runs; the memory goes with the last put. */
void hottier_sysfs_remove(struct hottier *ht)
{
	if (!ht->sysfs)
		return;
	kobject_del(&ht->sysfs->kobj);
	kobject_put(&ht->sysfs->kobj);
	ht->sysfs = NULL;
}

