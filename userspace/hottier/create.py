"""create and activate: checks on the members, then one dmsetup create
that leaves nothing behind if it fails."""

import errno
import hashlib
import json
import os
import sys

from . import HottierError
from .system import UUID_PREFIX, read_text
from .table import build_table


class Member:
    """One of the two devices: its path, number and sysfs directory."""

    def __init__(self, system, path):
        self.path = path
        self.devnum = system.block_devnum(path)
        self.sysdir = system.devnum_path(self.devnum)

    def parts(self):
        """Its sysfs directory and those of its partitions."""
        subdirs = sorted(os.listdir(self.sysdir))
        return [self.sysdir] + [os.path.join(self.sysdir, d) for d in subdirs
                                if os.path.isfile(os.path.join(
                                    self.sysdir, d, "partition"))]

    def sectors(self):
        return int(read_text(os.path.join(self.sysdir, "size")))

    def identity(self):
        """What names this device whatever its path (hdd_id, see
        Documentation/hottier.rst, "On-SSD map"), or None: the WWN, else
        the serial, else the MD array's or the device-mapper UUID (an LV's
        is "LVM-" and its VG and LV UUIDs); a partition's is its disk's
        and "-part<N>"."""
        disk, suffix = self.sysdir, ""
        if os.path.isfile(os.path.join(disk, "partition")):
            suffix = "-part" + read_text(os.path.join(disk, "partition"))
            disk = os.path.dirname(disk)
        for prefix, attr in (("wwn-", "wwid"), ("wwn-", "device/wwid"),
                             ("serial-", "serial"),
                             ("serial-", "device/serial"),
                             ("md-uuid-", "md/uuid"),
                             ("dm-uuid-", "dm/uuid")):
            try:
                value = read_text(os.path.join(disk, attr))
            except OSError:
                continue
            if value:
                return hdd_id(prefix + value + suffix)
        return None


ID_MAX = 64


def hdd_id(text):
    """text as a table word: printable, no blanks, at most ID_MAX bytes
    (a longer one keeps its head and a hash of the whole)."""
    word = "".join(c if c.isprintable() and not c.isspace() and c.isascii()
                   else "_" for c in text.strip())
    if len(word) > ID_MAX:
        digest = hashlib.sha256(word.encode()).hexdigest()[:16]
        word = word[:ID_MAX - 17] + "-" + digest
    return word


def map_keys(h, keys, format_ssd=False):
    """keys with the HDD's identity (hdd_id), which keeps the SSD's map:
    given as hdd_id=..., or found in sysfs; hdd_id=none keeps no map.
    format_ssd adds the one-shot request to format the SSD. Returns the
    keys and a warning to print once the device exists, or None."""
    keys = dict(keys)
    given = keys.pop("hdd_id", None)
    ident = given if given is not None else h.identity()
    warning = None
    if ident == "none":
        ident = None
    elif ident is None:
        warning = (f"hottierctl: {h.path}: no WWN, serial or UUID found: "
                   "the SSD keeps no map (set hdd_id=<id> to keep one)")
    if format_ssd:
        if ident is None:
            raise HottierError("--format-ssd needs the HDD's identity "
                               "(hdd_id)")
        keys["format_ssd"] = "yes"
    if ident is not None:
        keys["hdd_id"] = ident
    return keys, warning


def check_free(system, member):
    """Refuses a member that is mounted, swapped on, held by another block
    device or open exclusively."""
    devnums = {read_text(os.path.join(p, "dev")): p for p in member.parts()}
    for devnum, where, _ in system.mounts():
        if devnum in devnums:
            raise HottierError(f"{member.path} is mounted on {where}")
    for swap in system.swaps():
        try:
            swapped = system.block_devnum(swap) in devnums
        except HottierError:            # a swap file
            continue
        if swapped:
            raise HottierError(f"{member.path} is in use as swap ({swap})")
    for part in devnums.values():
        holders = sorted(os.listdir(os.path.join(part, "holders")))
        if holders:
            raise HottierError(f"{member.path} is in use by "
                               f"{', '.join(holders)}")
    try:
        system.open_exclusive(member.path)
    except OSError as e:
        why = "in use" if e.errno == errno.EBUSY else e.strerror
        raise HottierError(f"{member.path}: {why} (cannot open it "
                           "exclusively)")


def check_distinct(h, s):
    """Refuses two members that are one device, or where one is a
    partition of the other."""
    if h.devnum == s.devnum:
        raise HottierError(f"{h.path} and {s.path} are the same device "
                           f"({h.devnum})")
    for a, b in ((h, s), (s, h)):
        if b.sysdir.startswith(a.sysdir + os.sep):
            raise HottierError(f"{b.path} is a partition of {a.path}")


def check_members(system, hdd, ssd):
    """The two members, refused if they are one device, one is a partition
    of the other, or either is busy."""
    h = Member(system, hdd)
    s = Member(system, ssd)
    check_distinct(h, s)
    check_free(system, h)
    check_free(system, s)
    return h, s


def live_member(system, devnum):
    """The member a live table names by "major:minor"."""
    return Member(system, "/dev/" + system.block_name(devnum))


# A device that ran without its SSD: the HDD may have been written under
# the replicas the SSD's map records. A note per device under
# system.state_dir says so across boots, until the SSD is back.
NO_SSD_SUFFIX = ".no-ssd"


def no_ssd_path(system, name):
    return os.path.join(system.state_dir, name + NO_SSD_SUFFIX)


def no_ssd_note(system, name):
    """The note that name ran without its SSD ({"boot_id", "ssd"}), or
    None."""
    try:
        with open(no_ssd_path(system, name)) as f:
            note = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {"boot_id": ""}          # unreadable: from no known boot
    return note if isinstance(note, dict) else {"boot_id": ""}


def write_no_ssd_note(system, name, ssd):
    """Before the device comes up without its SSD: durable first, so that
    a crash after the create cannot lose it. A note there already is
    kept: the device has run without its SSD since that boot."""
    path = no_ssd_path(system, name)
    if no_ssd_note(system, name) is not None:
        return
    try:
        os.makedirs(system.state_dir, exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"boot_id": system.boot_id(), "ssd": ssd}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fd = os.open(system.state_dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        raise HottierError(f"cannot write {path}: {e.strerror}: the "
                           "device is not created without its SSD")


def clear_no_ssd_note(system, name):
    try:
        os.unlink(no_ssd_path(system, name))
    except FileNotFoundError:
        pass


def forget_no_ssd_boot(system, name):
    """The device's table with no SSD goes (remove, deactivate): what it
    wrote is forgotten with it, so the note no longer names this boot."""
    note = no_ssd_note(system, name)
    if note is None or not note.get("boot_id"):
        return
    note["boot_id"] = ""
    path = no_ssd_path(system, name)
    try:
        with open(path + ".tmp", "w") as f:
            json.dump(note, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(path + ".tmp", path)
    except OSError as e:
        raise HottierError(f"cannot write {path}: {e.strerror}")


def stale_replicas(system, name, keys, live_without_ssd=False):
    """Whether the SSD's replicas must be dropped (its pins kept) when
    name gets its SSD back. A new table, over an SSD that a note says
    waited: yes. A reload of the live table with no SSD (attach): no
    only if that table is the one the note was written for, in this
    boot, since the kernel drops them itself if that table wrote the HDD
    (Documentation/hottier.rst, "An SSD missing at boot"); a table with
    no note, made by hand, has an unknown past. Only a device that keeps
    a map has replicas to drop."""
    if "hdd_id" not in keys:
        return False
    note = no_ssd_note(system, name)
    if not live_without_ssd:
        return note is not None
    return not (note and note.get("boot_id") and
                note["boot_id"] == system.boot_id())


def create(system, name, hdd, ssd, extent_sectors, keys, format_ssd=False,
           missing_ssd=None):
    """Loads a hottier table over hdd and ssd as name, with the HDD's
    identity (map_keys()); returns the table line. With ssd None, the
    table has no SSD ("-"): the device runs degraded on the HDD alone,
    and a note says so until the SSD is attached (missing_ssd names it).
    Over an SSD that waited for such a device, the SSD's replicas are
    dropped and its pins kept. If dmsetup fails, the device it may have
    left is removed."""
    if system.dm_kname(name) is not None:
        raise HottierError(f"a device named '{name}' already exists")
    if ssd is None:
        h = Member(system, hdd)
        check_free(system, h)
    else:
        h, s = check_members(system, hdd, ssd)
    keys, warning = map_keys(h, keys, format_ssd)
    if ssd is None:
        write_no_ssd_note(system, name, missing_ssd)
    elif not format_ssd and stale_replicas(system, name, keys):
        keys["drop_replicas"] = "yes"
    table = build_table(h.sectors(), h.devnum,
                        "-" if ssd is None else s.devnum, extent_sectors,
                        keys)
    try:
        system.dmsetup("create", name, "--uuid", UUID_PREFIX + name,
                       "--table", table)
    except HottierError as e:
        if system.dm_exists(name):
            system.dmsetup("remove", name)
        raise HottierError(f"create {name}: {e} (dmesg says why)")
    if ssd is not None:
        clear_no_ssd_note(system, name)
    if warning:
        print(warning, file=sys.stderr)
    return table


def activate(system, entries, out=sys.stdout, err=sys.stderr):
    """Creates each entry that is not active and whose HDD exists: over
    its SSD, or without it if the SSD is missing (degraded, on the HDD
    alone, until "hottierctl attach"); an entry whose HDD is missing is
    skipped. Returns False if a create failed."""
    ok = True
    for entry in entries:
        ssd = entry.ssd if os.path.exists(entry.ssd) else None
        if system.dm_exists(entry.name):
            print(f"{entry.name}: already active", file=out)
            continue
        if not os.path.exists(entry.hdd):
            missing = [p for p in (entry.hdd, entry.ssd)
                       if not os.path.exists(p)]
            print(f"hottierctl: {entry.name}: {', '.join(missing)} not "
                  "present; skipped", file=err)
            continue
        try:
            create(system, entry.name, entry.hdd, ssd, entry.extent_sectors,
                   entry.keys, missing_ssd=entry.ssd)
        except HottierError as e:
            print(f"hottierctl: {e}", file=err)
            ok = False
            continue
        if ssd is not None:
            print(f"{entry.name}: created", file=out)
            continue
        print(f"{entry.name}: created without its SSD", file=out)
        print(f"hottierctl: {entry.name}: {entry.ssd} not present: "
              "degraded, every I/O on the HDD; once the SSD is back: "
              f"hottierctl attach {entry.name}", file=err)
    return ok


def deactivate(system, entries, out=sys.stdout, err=sys.stderr):
    """Removes each entry's device, last listed first, so that a device
    listed over another goes before it; returns False if one is a device
    of another target or could not be removed (open: a filesystem still
    mounted, a holder such as LVM still active). A remove writes the
    map clean: the next activation restores every replica without a
    comparison."""
    ok = True
    for entry in reversed(entries):
        if not system.dm_exists(entry.name):
            print(f"{entry.name}: not active", file=out)
            continue
        try:
            remove(system, entry.name)
            print(f"{entry.name}: removed", file=out)
        except HottierError as e:
            print(f"hottierctl: {entry.name}: {e}; left active", file=err)
            ok = False
    return ok


def remove(system, name):
    """Removes a hottier device; one with no SSD leaves its note saying
    that its past is unknown (forget_no_ssd_boot())."""
    t = system.device(name).table()
    system.dmsetup("remove", name)
    if t["ssd"] == "-":
        forget_no_ssd_boot(system, name)


def new_ssd(system, name, t, ssd):
    """The SSD at path ssd, checked as the new SSD of device name, whose
    live table is t: not its SSD already, not its HDD or on its disk,
    free."""
    new = Member(system, ssd)
    if new.devnum == t["ssd"]:
        raise HottierError(f"{ssd} is already {name}'s SSD")
    try:
        check_distinct(live_member(system, t["hdd"]), new)
    except HottierError:
        raise HottierError(f"{ssd} is {name}'s HDD or shares its disk")
    check_free(system, new)
    return new


def attach(system, name, ssd):
    """Reloads a device running with no SSD over the SSD at path ssd,
    every other argument as it was. Its map is taken over if it belongs
    to this HDD (hdd_id), with its replicas if the HDD was not written
    meanwhile (stale_replicas(); the kernel checks too), else with its
    pins only. Returns the table line."""
    t = system.device(name).table()
    if t["ssd"] != "-":
        raise HottierError(f"{name} has its SSD "
                           f"({system.block_name(t['ssd'])}): nothing to "
                           "attach (replace-ssd swaps it for another)")
    new = new_ssd(system, name, t, ssd)
    keys = dict(t["keys"])
    if stale_replicas(system, name, keys, live_without_ssd=True):
        keys["drop_replicas"] = "yes"
    line = build_table(t["length"], t["hdd"], new.devnum,
                       t["extent_sectors"], keys)
    swap_table(system, name, t, line, "attach", "running without an SSD")
    clear_no_ssd_note(system, name)
    return line


def swap_table(system, name, t, line, what, kept):
    """Loads line in place of the live table t (parse_table()'s) and
    resumes the device with it. A refused load changes nothing; a new
    table that does not resume (its map cannot be marked in use, say) is
    replaced by t's line again."""
    try:
        system.dmsetup("reload", name, "--table", line)
    except HottierError as e:
        raise HottierError(f"{what} {name}: {e} (dmesg says why); the "
                           "device is unchanged")
    try:
        system.dmsetup("resume", name)
    except HottierError as e:
        try:
            system.dmsetup("reload", name, "--table", build_table(
                t["length"], t["hdd"], t["ssd"], t["extent_sectors"],
                t["keys"]))
            system.dmsetup("resume", name)
        except HottierError as again:
            raise HottierError(f"{what} {name}: {e}, and the old table "
                               f"did not come back ({again}): the device "
                               "is suspended (dmesg says why)")
        raise HottierError(f"{what} {name}: {e} (dmesg says why); the "
                           f"device keeps {kept}")


def resize(system, name):
    """Reloads the device with the length its HDD has now (grown: an LV
    extended, an array grown), the rest of the table as it is; the
    replicas and pins come back through the SSD's map, which the old
    table's suspend writes clean. Returns (old, new) in sectors; a device
    already as long as its HDD is left alone. Never shrinks: a filesystem
    on it would lose its end."""
    t = system.device(name).table()
    hdd = live_member(system, t["hdd"])
    hdd_sectors = hdd.sectors()
    old = t["length"]
    if hdd_sectors < old:
        raise HottierError(f"{name}: its HDD {os.path.basename(hdd.path)} "
                           f"has {hdd_sectors} sectors, fewer than the "
                           f"device's {old}: not shrunk (remove and create "
                           "it again to shrink)")
    if hdd_sectors == old:
        return old, old
    swap_table(system, name, t, build_table(
        hdd_sectors, t["hdd"], t["ssd"], t["extent_sectors"], t["keys"]),
        "resize", "its old length")
    return old, hdd_sectors


def replace_ssd(system, name, ssd, format_ssd=False):
    """Reloads the device over the SSD at path ssd, every other argument
    as it was. The new table's resume invalidates the old SSD's map before
    any I/O (the kernel does: see "Replacing the SSD" in the docs); the
    pins are copied to the new SSD, other replicas as they heat again.
    I/O waits for the swap and sees no error. Returns the old SSD's
    "major:minor"."""
    t = system.device(name).table()
    new = new_ssd(system, name, t, ssd)
    keys = dict(t["keys"])
    if format_ssd:
        if "hdd_id" not in keys:
            raise HottierError("--format-ssd needs the HDD's identity "
                               "(hdd_id): this device keeps no map")
        keys["format_ssd"] = "yes"
    # If the new table does not resume, the old SSD's map may be
    # invalidated already: the old table comes back cold, with its pins.
    swap_table(system, name, t, build_table(
        t["length"], t["hdd"], new.devnum, t["extent_sectors"], keys),
        "replace-ssd", "its old SSD")
    return t["ssd"]
