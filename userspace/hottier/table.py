"""The table line, its keys and the status line, as
Documentation/hottier.rst defines them."""

import re

from . import HottierError

SECTOR = 512
EXTENT_MIN = 64                 # sectors (32 KiB)
EXTENT_MAX = 2097152            # sectors (1 GiB)
DEFAULT_EXTENT = "1M"

# Optional table keys: a tuple of names, or (min, max) and the values
# allowed besides that range. TABLE_ONLY keys change with a table reload only.
KEYS = {
    "discard": ("passdown", "ignore"),
    "write_policy": ("through", "around"),
    "promote_threshold": (1, 1000000),
    "sequential_cutoff_kb": (0, 4194304),
    "heat_halflife_ms": (100, 86400000),
    "max_migrations": (1, 64),
    "migration_mbps": (0, 1000000),
    "max_tracked": (16, 67108864, 0),
    "routing": ("latency", "ssd"),
    "migration_budget_us": (0, 10000000),
    "ssd_error_threshold": (1, 1000000),
    "map_verify": (0, 1000000),
}
TABLE_ONLY = ("discard", "max_tracked", "map_verify")
TUNABLES = tuple(k for k in KEYS if k not in TABLE_ONLY)

# The status INFO fields in their order; "used/total" is one field there
# and two sysfs files (slots_used, slots_total).
FIELDS = ("reads", "writes", "read_sectors", "write_sectors", "discards",
          "flushes", "ssd_flush_errors", "slots_used", "slots_total",
          "read_hits", "read_misses", "promotions", "demotions",
          "copies_discarded", "migrations", "pinned", "tracked",
          "scrub_checked", "scrub_mismatches", "ssd_latency_us",
          "hdd_latency_us", "replica_reads_ssd", "replica_reads_hdd",
          "ssd_errors", "migrations_allowed", "mode", "scrub_slots", "scrub",
          "map", "map_loaded", "map_dropped", "map_checked", "map_writes",
          "turnovers", "migrations_waiting", "hdd_read_errors",
          "read_retries")
TEXT_FIELDS = ("mode", "scrub", "map")

_UNITS = {"": None, "s": 1, "k": 2, "kb": 2, "kib": 2, "m": 2048,
          "mb": 2048, "mib": 2048, "g": 2097152, "gb": 2097152,
          "gib": 2097152}


def parse_size(text):
    """Sectors in a size: a bare number is sectors, "s" too; K, M, G (KiB,
    MiB, GiB) are binary units and must come to whole sectors."""
    m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", text)
    unit = m and m.group(2).lower()
    if not m or unit not in _UNITS:
        raise HottierError(f"bad size '{text}': expected a number of "
                           "sectors, or a number with K, M or G")
    n = int(m.group(1))
    return n if unit == "" else n * _UNITS[unit]


def parse_extent(text):
    """Extent size in sectors, checked as the target checks it."""
    n = parse_size(text)
    if not EXTENT_MIN <= n <= EXTENT_MAX:
        raise HottierError(f"extent size {text}: must be 32K to 1G "
                           f"({EXTENT_MIN} to {EXTENT_MAX} sectors)")
    if n & (n - 1):
        raise HottierError(f"extent size {text}: must be a power of two")
    return n


def describe(key):
    """The values a key takes, as the error messages say them."""
    spec = KEYS[key]
    if isinstance(spec[0], str):
        return " or ".join(spec)
    extra = "".join(f"{v} or " for v in spec[2:])
    return f"{extra}{spec[0]} to {spec[1]}"


def check_hdd_id(value):
    """hdd_id's value: printable ASCII, no blanks, 1 to 64 bytes; "none" keeps
    no map."""
    if not value or len(value.encode()) > 64 or any(
            not c.isascii() or not c.isprintable() or c.isspace()
            for c in value):
        raise HottierError(f"hdd_id '{value}': expected 1 to 64 printable "
                           "ASCII characters, no blanks")
    return value


def check_value(key, value):
    """Refuses an unknown key or a value out of its range; returns the
    value as the kernel takes it."""
    if key not in KEYS:
        raise HottierError(f"unknown key '{key}' (keys: {', '.join(KEYS)})")
    spec = KEYS[key]
    if isinstance(spec[0], str):
        ok = value in spec
    else:
        ok = value.isdigit() and (spec[0] <= int(value) <= spec[1] or
                                  int(value) in spec[2:])
    if not ok:
        raise HottierError(f"bad value '{value}' for {key}: expected "
                           f"{describe(key)}")
    return str(int(value)) if value.isdigit() else value


def parse_assignments(words):
    """key=value words into an ordered dict of checked values; a key given
    twice is refused."""
    keys = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq or not key or not value:
            raise HottierError(f"'{word}': expected key=value")
        if key in keys:
            raise HottierError(f"{key} given twice")
        keys[key] = (check_hdd_id(value) if key == "hdd_id"
                     else check_value(key, value))
    return keys


def build_table(hdd_sectors, hdd, ssd, extent_sectors, keys):
    """The table line for dmsetup: the whole HDD, then the keys."""
    line = f"0 {hdd_sectors} hottier {hdd} {ssd} {extent_sectors}"
    if keys:
        words = [w for kv in keys.items() for w in kv]
        line += f" {len(words)} {' '.join(words)}"
    return line


def parse_table(line):
    """A hottier table line as dmsetup table prints it: members, extent
    size and keys."""
    words = line.split()
    if len(words) < 6 or words[2] != "hottier":
        raise HottierError(f"not a hottier table line: '{line.strip()}'")
    nargs = int(words[6]) if len(words) > 6 else 0
    opts = words[7:7 + nargs]
    return {"length": int(words[1]), "hdd": words[3], "ssd": words[4],
            "extent_sectors": int(words[5]),
            "keys": dict(zip(opts[0::2], opts[1::2]))}


def parse_status(line):
    """The INFO line "0 <len> hottier <fields...>" into FIELDS; fields a
    later version appends are ignored."""
    words = line.split()
    if len(words) < 4 or words[2] != "hottier":
        raise HottierError(f"not a hottier status line: '{line.strip()}'")
    values = words[3:]
    slots = values[7].split("/") if len(values) > 7 else []
    values[7:8] = slots
    if len(slots) != 2 or len(values) < len(FIELDS):
        raise HottierError(f"unexpected hottier status line: '{line.strip()}'")
    return {f: field_value(f, v) for f, v in zip(FIELDS, values)}


def field_value(field, text):
    """A status field's value: a number, or text for mode."""
    text = text.strip()
    return text if field in TEXT_FIELDS else int(text)
