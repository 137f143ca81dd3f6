// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-hottier: what the administrator reads, and a tunable's effect: the
 * status line (INFO fields and the TABLE line), one field as the status
 * and sysfs print it, and what follows a runtime key's change (a message
 * or a sysfs write).
 */
#include "dm-hottier.h"

/* A runtime key was set (a message or sysfs): the policy follows. */
void hottier_keys_changed(struct hottier *ht)
{
	hottier_policy_set_threshold(&ht->policy,
				     READ_ONCE(ht->args.promote_threshold));
	kick_promote(ht, 0);
}

static void emit_args(struct hottier *ht, char *result, unsigned int maxlen,
		      unsigned int *szp)
{
	unsigned int sz = *szp;
	char value[24];
	int k;

	DMEMIT(" %d", 2 * HOTTIER_NR_KEYS + (ht->args.hdd_id[0] ? 2 : 0));
	for (k = 0; k < HOTTIER_NR_KEYS; k++) {
		hottier_format_value(&ht->args, k, value, sizeof(value));
		DMEMIT(" %s %s", hottier_key_name(k), value);
	}
	/* format_ssd is never printed: a table fed back never formats. */
	if (ht->args.hdd_id[0])
		DMEMIT(" hdd_id %s", ht->args.hdd_id);
	*szp = sz;
}

/*
 * Status INFO fields, in order (Documentation/hottier.rst):
 *   <reads> <writes> <read_sectors> <write_sectors> <discards> <flushes>
 *   <ssd_flush_errors> <used_slots>/<total_slots> <read_hits> <read_misses>
 *   <promotions> <demotions> <copies_discarded> <migrations_in_flight>
 *   <pinned> <tracked> <scrub_checked> <scrub_mismatches>
 *   <ssd_latency_us> <hdd_latency_us> <replica_reads_ssd>
 *   <replica_reads_hdd> <ssd_errors> <migrations_allowed> <mode>
 *   <scrub_slots> <scrub> <map> <map_loaded> <map_dropped> <map_checked>
 *   <map_writes> <turnovers> <migrations_waiting> <hdd_read_errors>
 *   <read_retries>
 *
 * Status TABLE: the table line that recreates this device, every optional
 * key with its current value.
 */

const char * const hottier_field_names[HOTTIER_NR_FIELDS] = {
	"reads", "writes", "read_sectors", "write_sectors", "discards",
	"flushes", "ssd_flush_errors", "slots_used", "slots_total",
	"read_hits", "read_misses", "promotions", "demotions",
	"copies_discarded", "migrations", "pinned", "tracked",
	"scrub_checked", "scrub_mismatches", "ssd_latency_us",
	"hdd_latency_us", "replica_reads_ssd", "replica_reads_hdd",
	"ssd_errors", "migrations_allowed", "mode", "scrub_slots", "scrub",
	"map", "map_loaded", "map_dropped", "map_checked", "map_writes",
	"turnovers", "migrations_waiting", "hdd_read_errors", "read_retries",
};

static u64 lat_us(struct hottier *ht, enum hottier_route_dev dev)
{
	return div_u64(atomic64_read(&ht->lat[dev].ewma_ns), NSEC_PER_USEC);
}

/*
 * A field's value; HOTTIER_F_MODE is 1 when degraded (printed "no_ssd" for
 * a table with no SSD, which is degraded too), HOTTIER_F_SCRUB an
 * enum hottier_scrub_state, HOTTIER_F_MAP an enum hottier_map_state.
 */
static u64 field_value(struct hottier *ht, enum hottier_field f)
{
	switch (f) {
	case HOTTIER_F_READS ... HOTTIER_F_FLUSHES:
		return hottier_stat_read(ht, HOTTIER_STAT_READS +
					 (f - HOTTIER_F_READS));
	case HOTTIER_F_SSD_FLUSH_ERRORS:
		/*
		 * Flushes no longer go to the SSD (map_flush()): 0, kept so
		 * the fields after it keep their places.
		 */
		return 0;
	case HOTTIER_F_SLOTS_USED:
		return atomic_read(&ht->map.resident);
	case HOTTIER_F_SLOTS_TOTAL:
		return ht->layout.nr_slots;
	case HOTTIER_F_READ_HITS ... HOTTIER_F_COPIES_DISCARDED:
		return hottier_stat_read(ht, HOTTIER_STAT_READ_HITS +
					 (f - HOTTIER_F_READ_HITS));
	case HOTTIER_F_MIGRATIONS:
		return atomic_read(&ht->migrating);
	case HOTTIER_F_PINNED:
		return hottier_policy_nr_pinned(&ht->policy);
	case HOTTIER_F_TRACKED:
		/* Extents with heat: in the heat table, or with a replica. */
		return atomic_read(&ht->policy.heat.tracked) +
		       atomic_read(&ht->map.resident);
	case HOTTIER_F_SCRUB_CHECKED:
		return READ_ONCE(ht->scrub_checked);
	case HOTTIER_F_SCRUB_MISMATCHES:
		return READ_ONCE(ht->scrub_mismatches);
	case HOTTIER_F_SSD_LATENCY_US:
		return lat_us(ht, HOTTIER_ROUTE_SSD);
	case HOTTIER_F_HDD_LATENCY_US:
		return lat_us(ht, HOTTIER_ROUTE_HDD);
	case HOTTIER_F_REPLICA_READS_SSD ... HOTTIER_F_SSD_ERRORS:
		return hottier_stat_read(ht, HOTTIER_STAT_REPLICA_READS_SSD +
					 (f - HOTTIER_F_REPLICA_READS_SSD));
	case HOTTIER_F_MIGRATIONS_ALLOWED:
		return hottier_migrations_allowed(ht);
	case HOTTIER_F_MODE:
		return is_degraded(ht);
	case HOTTIER_F_SCRUB_SLOTS:
		return READ_ONCE(ht->scrub_slots);
	case HOTTIER_F_SCRUB:
		return READ_ONCE(ht->scrub_state);
	case HOTTIER_F_MAP:
		return hottier_persist_state(ht);
	case HOTTIER_F_MAP_LOADED:
		return READ_ONCE(ht->map_loaded);
	case HOTTIER_F_MAP_DROPPED:
		return READ_ONCE(ht->map_dropped);
	case HOTTIER_F_MAP_CHECKED:
		return READ_ONCE(ht->map_checked);
	case HOTTIER_F_MAP_WRITES:
		return READ_ONCE(ht->map_writes);
	case HOTTIER_F_TURNOVERS:
		return hottier_stat_read(ht, HOTTIER_STAT_TURNOVERS);
	case HOTTIER_F_MIGRATIONS_WAITING:
		return hottier_migrations_waiting(ht);
	case HOTTIER_F_HDD_READ_ERRORS:
		return hottier_stat_read(ht, HOTTIER_STAT_HDD_READ_ERRORS);
	case HOTTIER_F_READ_RETRIES:
		return hottier_stat_read(ht, HOTTIER_STAT_READ_RETRIES);
	default:
		return 0;
	}
}

/* One field as the status and sysfs print it; returns the length. */
int hottier_format_field(struct hottier *ht, enum hottier_field f, char *buf,
			 size_t size)
{
	if (f == HOTTIER_F_MODE)
		return scnprintf(buf, size, "%s",
				 test_bit(HOTTIER_NO_SSD, &ht->mode) ? "no_ssd" :
				 field_value(ht, f) ? "degraded" : "rw");
	if (f == HOTTIER_F_SCRUB)
		return scnprintf(buf, size, "%s",
				 hottier_scrub_state_name(field_value(ht, f)));
	if (f == HOTTIER_F_MAP)
		return scnprintf(buf, size, "%s",
				 hottier_map_state_name(field_value(ht, f)));
	return scnprintf(buf, size, "%llu",
			 (unsigned long long)field_value(ht, f));
}

/* The SSD as the table line gives it: "-" for a table with none. */
static const char *ssd_name(struct hottier *ht)
{
	return ht->ssd ? ht->ssd->name : "-";
}

void hottier_status(struct dm_target *ti, status_type_t type,
		    unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct hottier *ht = ti->private;
	unsigned int sz = 0;
	char value[24];
	int f;

	switch (type) {
	case STATUSTYPE_INFO:
		for (f = 0; f < HOTTIER_NR_FIELDS; f++) {
			hottier_format_field(ht, f, value, sizeof(value));
			DMEMIT("%s%s", !f ? "" : f == HOTTIER_F_SLOTS_TOTAL ?
			       "/" : " ", value);
		}
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%s %s %llu", ht->hdd->name, ssd_name(ht),
		       (unsigned long long)ht->args.extent_sectors);
		emit_args(ht, result, maxlen, &sz);
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",hdd=%s,ssd=%s,extent_sectors=%llu,discard=%s,write_policy=%s;",
		       ht->hdd->name, ssd_name(ht),
		       (unsigned long long)ht->args.extent_sectors,
		       hottier_discard_name(ht->args.discard),
		       hottier_write_policy_name(ht->args.write_policy));
		break;
	}
}
