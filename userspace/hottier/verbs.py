"""The administrator's messages as verbs: scrub, ssd-reset, invalidate,
reset-stats, promote and demote (Documentation/hottier.rst, "Messages").
Each function sends its message through Device.message(), turns the
kernel's refusal into one line, and returns what hottierctl prints: a
record for --json and the lines of text."""

import errno
import os
import sys
import time

from . import HottierError, fiemap
from .report import human_bytes
from .table import SECTOR, field_value, parse_size

# The refusals a message may meet, as dmsetup names them (strerror).
ERRNOS = (errno.EBUSY, errno.EIO, errno.ENOSPC, errno.E2BIG, errno.EINVAL,
          errno.ENOMEM)


def refused_with(error):
    """The errno a failed dmsetup message ends with, or None."""
    text = str(error)
    return next((code for code in ERRNOS
                 if text.endswith(os.strerror(code))), None)


def send(device, words, why=None):
    """Sends the message words; a refusal becomes one line: why[errno] if
    given, else the message, the errno and a pointer to the kernel log."""
    try:
        return device.message(*words)
    except HottierError as e:
        code = refused_with(e)
        if code is None:
            raise HottierError(f"{device.name}: {' '.join(words)}: {e}") \
                from None
        if why and code in why:
            raise HottierError(f"{device.name}: {why[code]}") from None
        raise HottierError(f"{device.name}: '{' '.join(words)}' refused by "
                           f"the kernel (-{errno.errorcode[code]}: "
                           f"{os.strerror(code)}; see dmesg)") from None


# invalidate, ssd-reset, reset-stats

MAP_NOT_INVALIDATED = ("the SSD's map cannot be invalidated (the SSD "
                       "refuses writes; see dmesg)")


def dropped_lines(name, before, after):
    """What a drop of every replica did to the slots, and the pins."""
    line = (f"{name}: every replica dropped: SSD slots used "
            f"{before['slots_used']} -> {after['slots_used']}")
    if before["pinned"]:
        line += f"; the {before['pinned']} pinned extents are copied again"
    return line


def invalidate(device):
    before = device.stats()
    send(device, ["invalidate"], {
        errno.EIO: f"invalidate refused (-EIO): {MAP_NOT_INVALIDATED}"})
    after = device.stats()
    return ({"name": device.name, "message": "invalidate",
             "slots_used_before": before["slots_used"],
             "slots_used": after["slots_used"], "pinned": before["pinned"]},
            [dropped_lines(device.name, before, after)])


def ssd_reset(device):
    before = device.stats()
    send(device, ["ssd_reset"], {
        errno.EIO: f"ssd_reset refused (-EIO): {MAP_NOT_INVALIDATED}; the "
                   f"mode stays {before['mode']}, try again once the SSD "
                   "takes writes"})
    after = device.stats()
    was = ("" if before["mode"] == after["mode"]
           else f" (was {before['mode']})")
    return ({"name": device.name, "message": "ssd_reset",
             "mode_before": before["mode"], "mode": after["mode"],
             "ssd_errors_before": before["ssd_errors"],
             "slots_used_before": before["slots_used"],
             "slots_used": after["slots_used"],
             "pinned": before["pinned"]},
            [f"{device.name}: SSD reset: mode {after['mode']}{was}, "
             f"{before['ssd_errors']} SSD errors forgotten",
             dropped_lines(device.name, before, after)])


def reset_stats(device):
    send(device, ["reset_stats"])
    return ({"name": device.name, "message": "reset_stats"},
            [f"{device.name}: status counters set to zero"])


MESSAGES = {"invalidate": invalidate, "ssd-reset": ssd_reset,
            "reset-stats": reset_stats}


# promote and demote: ranges, or the ranges that hold files

def parse_range(text):
    """START+LEN: sectors, or sizes with K, M or G (table.parse_size);
    refuses a malformed range or one of no sectors."""
    start, plus, length = text.partition("+")
    try:
        if not plus:
            raise HottierError(text)
        start, length = parse_size(start), parse_size(length)
    except HottierError:
        raise HottierError(f"bad range '{text}': expected START+LEN, each "
                           "a number of 512-byte sectors or a size with K, "
                           "M or G (such as 2048+2048 or 1G+64M)") from None
    if not length:
        raise HottierError(f"bad range '{text}': no sectors")
    return start, length


def covered(ranges, extent):
    """The number of extents the ranges (START, LEN in sectors) cover,
    each counted once: fiemap.sector_ranges()'s count, which pin uses."""
    end = max((s + n for s, n in ranges), default=0)
    return fiemap.sector_ranges([(s * SECTOR, n * SECTOR)
                                 for s, n in ranges], extent, end)[1]


def check_ranges(device, verb, ranges, slots_total):
    """Refuses, before anything is sent, a range past the end of the
    device, or a promote of more extents than the SSD has slots (the
    kernel's own refusals)."""
    length = device.table()["length"]
    extent = device.table()["extent_sectors"]
    for start, nr in ranges:
        if start + nr > length:
            raise HottierError(f"range {start}+{nr} goes past the end of "
                               f"{device.name} ({length} sectors)")
        extents = covered([(start, nr)], extent)
        if verb == "promote" and extents > slots_total:
            raise HottierError(f"range {start}+{nr} covers {extents} "
                               f"extents, more than the {slots_total} "
                               f"slots of {device.name}'s SSD")


def file_ranges(system, device, paths):
    """The merged extent-aligned ranges that hold the files' data."""
    spans = []
    for path in paths:
        ranges, _ = fiemap.file_ranges(system, device, path)
        spans += [(s * SECTOR, n * SECTOR) for s, n in ranges]
    ranges, _ = fiemap.sector_ranges(spans,
                                     device.table()["extent_sectors"],
                                     device.sectors())
    return ranges


def move(system, device, verb, ranges=None, paths=None):
    """promote or demote the ranges (START, LEN) given, or those that hold
    the files at paths; every range is checked before the first is
    sent."""
    if paths:
        ranges = file_ranges(system, device, paths)
        if not ranges:
            raise HottierError(f"{', '.join(paths)}: no data with a place "
                               f"of its own on {device.name} (empty, or "
                               "inline in the inode)")
    before = device.stats()
    check_ranges(device, verb, ranges, before["slots_total"])
    for i, (start, nr) in enumerate(ranges):
        sent = f" ({i} of {len(ranges)} ranges sent before it)" if i else ""
        send(device, [verb, str(start), str(nr)], {
            errno.EIO: f"{verb} {start} {nr} refused (-EIO): "
                       f"{MAP_NOT_INVALIDATED}{sent}",
            errno.ENOSPC: f"{verb} {start} {nr} refused (-ENOSPC): more "
                          f"extents than the SSD has slots{sent}",
            errno.EINVAL: f"{verb} {start} {nr} refused (-EINVAL: see "
                          f"dmesg){sent}"})
    extents = covered(ranges, device.table()["extent_sectors"])
    size = human_bytes(sum(nr for _, nr in ranges) * SECTOR)
    record = {"name": device.name, "message": verb, "extents": extents,
              "ranges": [{"start_sector": s, "nr_sectors": n}
                         for s, n in ranges]}
    if paths:
        record["paths"] = list(paths)
    what = (f"{device.name}: {extents} extents ({size}) in {len(ranges)} "
            f"range{'' if len(ranges) == 1 else 's'}")
    if verb == "promote":
        return record, [f"{what} queued for promotion: copied as the "
                        "policy admits them (hottierctl status shows the "
                        "slots used)"]
    after = device.stats()
    record.update(slots_used_before=before["slots_used"],
                  slots_used=after["slots_used"])
    return record, [f"{what} demoted: SSD slots used {before['slots_used']} "
                    f"-> {after['slots_used']} (pinned extents keep their "
                    "replicas)"]


# scrub

# Status fields a scrub is followed by; its state first: who reads the
# state as ended reads the counters as they ended.
SCRUB_FIELDS = ("scrub", "scrub_slots", "scrub_checked", "scrub_mismatches",
                "slots_total")
POLL_SECONDS = 0.5
LINE_SECONDS = 5            # a progress line this often when not a tty
# Why a scrub ended without completing, by its state; "idle" is the state
# of a new table: the device was reloaded under the scrub.
ENDINGS = {"busy": "writes never left a replica alone",
           "error": "a read failed; dmesg says which",
           "stopped": "the device was suspended",
           "idle": "the device was reloaded: its new table has no scrub"}
MISMATCHES = 3              # exit statuses (hottierctl(8), EXIT STATUS)
INCOMPLETE = 4


class ScrubFailed(HottierError):
    """A scrub that found mismatches or did not complete: one line, and an
    exit status of its own."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def scrub_fields(device):
    """The scrub's status fields: from sysfs, or dmsetup status while the
    device is suspended."""
    values = device.read_all(SCRUB_FIELDS)
    if values is None:
        stats = device.stats()
        return {f: stats[f] for f in SCRUB_FIELDS}
    return {f: field_value(f, v) for f, v in values.items()}


def progress_text(name, f):
    total = f["slots_total"]
    share = f" ({100 * f['scrub_slots'] // total}%)" if total else ""
    return (f"scrub of {name}: {f['scrub_slots']} of {total} slots{share}, "
            f"{f['scrub_checked']} replicas checked, "
            f"{f['scrub_mismatches']} mismatches")


class Progress:
    """The scrub's progress on err: a line redrawn in place on a terminal,
    else a line every LINE_SECONDS."""

    def __init__(self, err):
        self.err = err
        self.tty = err.isatty()
        self.drawn = False
        self.last = None

    def show(self, text, now):
        if self.tty:
            self.err.write(f"\r\x1b[K{text}")
            self.drawn = True
        elif self.last is None or now - self.last >= LINE_SECONDS:
            self.err.write(text + "\n")
            self.last = now
        else:
            return
        self.err.flush()

    def end(self):
        """Clears the line drawn on a terminal."""
        if self.drawn:
            self.err.write("\r\x1b[K")
            self.err.flush()
            self.drawn = False


def start_scrub(device):
    send(device, ["scrub"], {
        errno.EBUSY: "a scrub is already running (-EBUSY): wait for its end "
                     f"(hottierctl status {device.name} --json shows scrub "
                     "and scrub_slots)"})


def follow_scrub(device, err):
    """The scrub's fields once it has ended, its progress shown on err
    meanwhile. Ctrl-C stops following it, not the scrub."""
    progress = Progress(err)
    try:
        while True:
            f = scrub_fields(device)
            if f["scrub"] != "running":
                return f
            progress.show(progress_text(device.name, f), time.monotonic())
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        progress.end()
        print(f"hottierctl: {device.name}: no longer followed; the scrub "
              "goes on in the kernel", file=err)
        raise
    finally:
        progress.end()


def scrub(device, wait=True, err=None):
    """Starts a scrub and, with wait, follows it to its end."""
    err = err or sys.stderr
    started = time.monotonic()
    start_scrub(device)
    if not wait:
        f = scrub_fields(device)
        return ({"name": device.name, "started": True, "state": f["scrub"],
                 "slots_total": f["slots_total"]},
                [f"{device.name}: scrub started ({f['slots_total']} slots "
                 f"to go through); hottierctl status {device.name} --json "
                 "shows scrub_slots"])
    f = follow_scrub(device, err)
    record = {"name": device.name, "state": f["scrub"],
              "complete": f["scrub"] == "done",
              "checked": f["scrub_checked"],
              "mismatches": f["scrub_mismatches"],
              "slots": f["scrub_slots"], "slots_total": f["slots_total"],
              "seconds": round(time.monotonic() - started, 1)}
    ended = "ended" if f["scrub"] == "idle" else f["scrub"]
    line = (f"{device.name}: scrub {ended} after {f['scrub_slots']} of "
            f"{f['slots_total']} slots: {f['scrub_checked']} replicas "
            f"checked, {f['scrub_mismatches']} mismatches")
    if f["scrub_mismatches"]:
        line += " (dropped; dmesg names their extents)"
    if f["scrub"] in ENDINGS:
        line += f" ({ENDINGS[f['scrub']]})"
    return record, [line]


def scrub_status(record):
    """Refuses, with its exit status, a scrub that found mismatches or did
    not complete; nothing for one that has not ended (--no-wait)."""
    name = record["name"]
    if record.get("mismatches"):
        raise ScrubFailed(f"{name}: {record['mismatches']} replicas "
                          "differed from the HDD and were dropped",
                          MISMATCHES)
    if record.get("complete") is False:
        raise ScrubFailed(f"{name}: the scrub did not complete "
                          f"({record['state']}: "
                          f"{ENDINGS.get(record['state'], 'see dmesg')})",
                          INCOMPLETE)
