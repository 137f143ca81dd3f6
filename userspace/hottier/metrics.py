"""hottierctl metrics: every hottier device's status fields and tunables
in Prometheus's text exposition format (version 0.0.4), for the node
exporter's textfile collector (written atomically with --output) or any
scraper of a file.

One metric family per status field, labelled device="NAME", its HELP
ending "(status field FIELD)"; counters end in _total; units are in the
names, in base units: sectors become bytes, microseconds seconds."""

import errno
import os

from . import HottierError
from .table import SECTOR

COUNTER, GAUGE = "counter", "gauge"
US = 1e-6                       # a microsecond, in seconds

# The numeric status fields, in FIELDS' order: (field, metric, type,
# scale, help). The text fields (mode, scrub, map) follow in STATES.
NUMBERS = (
    ("reads", "hottier_reads_total", COUNTER, 1,
     "Read bios mapped, after splitting at extents"),
    ("writes", "hottier_writes_total", COUNTER, 1,
     "Write bios mapped, flushes without data excluded"),
    ("read_sectors", "hottier_read_bytes_total", COUNTER, SECTOR,
     "Bytes read"),
    ("write_sectors", "hottier_written_bytes_total", COUNTER, SECTOR,
     "Bytes written"),
    ("discards", "hottier_discards_total", COUNTER, 1,
     "Discard bios mapped"),
    ("flushes", "hottier_flushes_total", COUNTER, 1,
     "Flushes without data sent to the HDD"),
    ("ssd_flush_errors", "hottier_ssd_flush_errors_total", COUNTER, 1,
     "Always 0: flushes go to the HDD alone (kept for the status' order)"),
    ("slots_used", "hottier_slots_used", GAUGE, 1,
     "SSD slots holding a replica"),
    ("slots_total", "hottier_slots", GAUGE, 1, "Slots on the SSD"),
    ("read_hits", "hottier_read_hits_total", COUNTER, 1,
     "Reads of extents that had a replica, served by either member"),
    ("read_misses", "hottier_read_misses_total", COUNTER, 1,
     "Reads of extents without a replica, served by the HDD"),
    ("promotions", "hottier_promotions_total", COUNTER, 1,
     "Replicas installed"),
    ("demotions", "hottier_demotions_total", COUNTER, 1,
     "Replicas dropped: evicted, demoted, invalidated, or dropped by a "
     "write, discard or write error"),
    ("copies_discarded", "hottier_copies_discarded_total", COUNTER, 1,
     "Copies not installed because a write or discard reached their "
     "bucket of extents while they ran"),
    ("migrations", "hottier_migrations_in_flight", GAUGE, 1,
     "Copies in flight"),
    ("pinned", "hottier_pinned_extents", GAUGE, 1, "Pinned extents"),
    ("tracked", "hottier_tracked_extents", GAUGE, 1, "Extents with heat"),
    ("scrub_checked", "hottier_scrub_checked_replicas", GAUGE, 1,
     "Replicas compared by the running or last scrub"),
    ("scrub_mismatches", "hottier_scrub_mismatched_replicas", GAUGE, 1,
     "Replicas that differed from the HDD in the last scrub (0 unless "
     "something is broken)"),
    ("ssd_latency_us", "hottier_ssd_read_latency_seconds", GAUGE, US,
     "The SSD's read latency estimate"),
    ("hdd_latency_us", "hottier_hdd_read_latency_seconds", GAUGE, US,
     "The HDD's read latency estimate"),
    ("replica_reads_ssd", "hottier_replica_reads_ssd_total", COUNTER, 1,
     "Reads of replicated extents sent to the SSD"),
    ("replica_reads_hdd", "hottier_replica_reads_hdd_total", COUNTER, 1,
     "Reads of replicated extents sent to the HDD by routing"),
    ("ssd_errors", "hottier_ssd_errors_total", COUNTER, 1,
     "SSD read, write and copy errors"),
    ("migrations_allowed", "hottier_migrations_allowed", GAUGE, 1,
     "Copies the migration QoS allows in flight"),
    ("scrub_slots", "hottier_scrub_slots", GAUGE, 1,
     "Slots the running or last scrub has gone through"),
    ("map_loaded", "hottier_map_loaded_replicas", GAUGE, 1,
     "Replicas restored from the on-SSD map when the device started"),
    ("map_dropped", "hottier_map_dropped_records", GAUGE, 1,
     "Map records found when the device started and not kept"),
    ("map_checked", "hottier_map_checked_replicas", GAUGE, 1,
     "Restored replicas compared with the HDD when the device started, "
     "as map_verify asks"),
    ("map_writes", "hottier_map_writes_total", COUNTER, 1,
     "Writes to the on-SSD map area since the table was loaded"),
    ("turnovers", "hottier_turnovers_total", COUNTER, 1,
     "Working-set turnovers the policy detected"),
    ("migrations_waiting", "hottier_migrations_waiting", GAUGE, 1,
     "Copies decided, their slot reserved, not started yet"),
    ("hdd_read_errors", "hottier_hdd_read_errors_total", COUNTER, 1,
     "HDD reads that failed"),
    ("read_retries", "hottier_read_retries_total", COUNTER, 1,
     "Failed reads sent again to the other member"),
)

# The text fields as state sets: a gauge per known state, 1 for the
# current one (and a sample for a state this version does not know).
STATES = (
    ("mode", "hottier_mode", ("rw", "degraded", "no_ssd"),
     "The device's mode, 1 for the current one"),
    ("scrub", "hottier_scrub_state",
     ("idle", "running", "done", "busy", "error", "stopped"),
     "The scrub's state, 1 for the current one"),
    ("map", "hottier_map_state",
     ("off", "pending", "open", "clean", "failed"),
     "The on-SSD map's state, 1 for the current one"),
)

# The numeric table keys (and the extent size) as gauges:
# (key, metric, scale, help).
CONFIG = (
    ("extent_sectors", "hottier_extent_bytes", SECTOR, "Extent size"),
    ("promote_threshold", "hottier_config_promote_threshold_reads", 1,
     "Tunable promote_threshold: reads that make an extent a promotion "
     "candidate on a full SSD"),
    ("sequential_cutoff_kb", "hottier_config_sequential_cutoff_bytes",
     1024, "Tunable sequential_cutoff_kb (0: no stream detection)"),
    ("heat_halflife_ms", "hottier_config_heat_halflife_seconds", 1e-3,
     "Tunable heat_halflife_ms"),
    ("max_migrations", "hottier_config_max_migrations", 1,
     "Tunable max_migrations: copies in flight at once"),
    ("migration_mbps", "hottier_config_migration_bytes_per_second",
     1 << 20, "Tunable migration_mbps: copy bandwidth cap (0: none)"),
    ("max_tracked", "hottier_config_max_tracked_extents", 1,
     "Table key max_tracked: heat-table entries (0: one per slot)"),
    ("migration_budget_us", "hottier_config_migration_budget_seconds", US,
     "Tunable migration_budget_us: foreground latency copies back off "
     "for (0: off)"),
    ("ssd_error_threshold", "hottier_config_ssd_error_threshold", 1,
     "Tunable ssd_error_threshold: SSD errors before the device "
     "degrades"),
    ("map_verify", "hottier_config_map_verify_replicas", 1,
     "Table key map_verify: restored replicas compared with the HDD at "
     "activation"),
)
# The text table keys, as labels of hottier_config_info.
CONFIG_TEXT = ("discard", "write_policy", "routing")


def scale_by(value, scale):
    """value in base units: a fraction of a unit divides, so that 4100 us
    is 0.0041 s, not the 0.0040999999999999995 of 4100 * 1e-6."""
    return value * scale if scale >= 1 else value / round(1 / scale)


def escape_label(value):
    return (str(value).replace("\\", "\\\\").replace("\n", "\\n")
            .replace('"', '\\"'))


def escape_help(text):
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def number(value):
    """A sample value: an int as it is, a float as Python spells it
    shortest (Go's ParseFloat reads both)."""
    if isinstance(value, float) and value.is_integer() and \
            abs(value) < 2 ** 53:
        return str(int(value))
    return repr(value)


class Families:
    """Metric families in the order first added, each with its samples:
    the text format wants every sample of a family together."""

    def __init__(self):
        self.families = {}

    def add(self, name, kind, help, labels, value):
        family = self.families.setdefault(name, (kind, help, []))
        family[2].append((labels, value))

    def text(self):
        lines = []
        for name, (kind, help, samples) in self.families.items():
            lines.append(f"# HELP {name} {escape_help(help)}")
            lines.append(f"# TYPE {name} {kind}")
            for labels, value in samples:
                words = ",".join(f'{k}="{escape_label(v)}"'
                                 for k, v in labels.items())
                lines.append(f"{name}{{{words}}} {number(value)}")
        return "".join(line + "\n" for line in lines)


def add_device(families, device):
    """Every metric of one hottier device."""
    stats = device.stats()
    config = device.config()
    t = device.table()
    system = device.system
    dev = {"device": device.name}
    families.add("hottier_info", GAUGE,
                 "The device: its kernel name and members (always 1)",
                 dict(dev, kernel_name=device.kname,
                      hdd=system.block_name(t["hdd"]),
                      ssd=system.block_name(t["ssd"])), 1)
    families.add("hottier_size_bytes", GAUGE, "Size of the device", dev,
                 t["length"] * SECTOR)
    families.add("hottier_suspended", GAUGE,
                 "1 while the device is suspended (the values then come "
                 "from dmsetup status)", dev, int(device.suspended()))
    for field, name, kind, scale, help in NUMBERS:
        families.add(name, kind, f"{help} (status field {field})", dev,
                     scale_by(stats[field], scale))
    families.add("hottier_degraded", GAUGE,
                 "1 while the device is degraded, after SSD errors or with "
                 "no SSD (status field mode)", dev,
                 int(stats["mode"] in ("degraded", "no_ssd")))
    for field, name, known, help in STATES:
        current = stats[field]
        for state in known + (() if current in known else (current,)):
            families.add(name, GAUGE, f"{help} (status field {field})",
                         dict(dev, state=state), int(state == current))
    families.add("hottier_config_info", GAUGE,
                 "The text table keys as labels (always 1)",
                 dict(dev, **{k: config[k] for k in CONFIG_TEXT
                              if k in config}), 1)
    for key, name, scale, help in CONFIG:
        if isinstance(config.get(key), int):
            families.add(name, GAUGE, help, dev,
                         scale_by(config[key], scale))


def gone(system, name):
    """Whether the hottier device name went away (removed while being
    read)."""
    try:
        return name not in system.hottier_names()
    except HottierError:
        return False


def exposition(system, names=()):
    """The text of every hottier device's metrics, or of those named
    (each must exist). Without names, none without the module, and a
    device removed while it is read is left out."""
    if names:
        system.require_module()
    elif not system.module_loaded():
        return ""
    families = Families()
    for name in dict.fromkeys(names or system.hottier_names()):
        try:
            device = system.device(name)
            add_device(families, device)
        except HottierError:
            if names or not gone(system, name):
                raise
    return families.text()


def write_atomic(path, text):
    """Writes path as a whole or not at all: a file in the same directory,
    synced, then renamed over it (and the directory synced), so that a
    reader such as the node exporter never sees half of it. Mode 0644:
    the node exporter reads it as another user."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory,
                       f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        try:
            os.unlink(tmp)              # left by a crash of this pid
        except FileNotFoundError:
            pass
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL |
                     os.O_CLOEXEC, 0o644)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
                f.flush()
                os.fchmod(f.fileno(), 0o644)
                os.fsync(f.fileno())
            os.rename(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        except OSError as e:            # some filesystems refuse: no matter
            if e.errno not in (errno.EINVAL, errno.EROFS):
                raise
        finally:
            os.close(fd)
    except OSError as e:
        raise HottierError(f"{path}: {e.strerror}")
