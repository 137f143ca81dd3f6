"""create and activate: checks on the members, then one dmsetup create
that leaves nothing behind if it fails."""

import errno
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


def check_members(system, hdd, ssd):
    """The two members, refused if they are one device, one is a partition
    of the other, or either is busy."""
    h = Member(system, hdd)
    s = Member(system, ssd)
    if h.devnum == s.devnum:
        raise HottierError(f"{hdd} and {ssd} are the same device "
                           f"({h.devnum})")
    for a, b in ((h, s), (s, h)):
        if b.sysdir.startswith(a.sysdir + os.sep):
            raise HottierError(f"{b.path} is a partition of {a.path}")
    check_free(system, h)
    check_free(system, s)
    return h, s


def create(system, name, hdd, ssd, extent_sectors, keys):
    """Loads a hottier table over hdd and ssd as name; returns the table
    line. If dmsetup fails, the device it may have left is removed."""
    if system.dm_kname(name) is not None:
        raise HottierError(f"a device named '{name}' already exists")
    h, s = check_members(system, hdd, ssd)
    table = build_table(h.sectors(), h.devnum, s.devnum, extent_sectors,
                        keys)
    try:
        system.dmsetup("create", name, "--uuid", UUID_PREFIX + name,
                       "--table", table)
    except HottierError as e:
        if system.dm_exists(name):
            system.dmsetup("remove", name)
        raise HottierError(f"create {name}: {e} (dmesg says why)")
    return table


def activate(system, entries, out=sys.stdout, err=sys.stderr):
    """Creates each entry whose members exist and that is not active;
    returns False if a create failed."""
    ok = True
    for entry in entries:
        missing = [p for p in (entry.hdd, entry.ssd)
                   if not os.path.exists(p)]
        if system.dm_exists(entry.name):
            print(f"{entry.name}: already active", file=out)
        elif missing:
            print(f"hottierctl: {entry.name}: {', '.join(missing)} not "
                  "present; skipped", file=err)
        else:
            try:
                create(system, entry.name, entry.hdd, entry.ssd,
                       entry.extent_sectors, entry.keys)
                print(f"{entry.name}: created", file=out)
            except HottierError as e:
                print(f"hottierctl: {e}", file=err)
                ok = False
    return ok
