"""tune-queues: the seeds' queue tuning, applied where it takes effect.

I/O schedulers act on request queues, which only physical disks have in a
stack: md, LVM and dm devices pass bios down. So the walk goes from each
member through slaves/ to the disks at the bottom: "none" for the SSD's
(no seek to hide, a scheduler only adds latency), mq-deadline (or bfq) for
the HDD's, so reads overtake the copies' large requests.

A pool served over the network (an NBD or RBD disk at the bottom of the
HDD) gets "none" as well: the server's own queues see its disks' seeks,
and a client-side scheduler only delays the requests it sends.

Read-ahead is set on the hottier device itself: it is done by the page
cache of the device a file or block device is read through, which is the
hottier device; the members' read_ahead_kb only applies to reads of the
member device nodes, never to the bios dm sends them.
"""

import os
from collections import namedtuple

from . import HottierError
from .system import read_text, write_text

SSD_SCHEDULERS = ("none",)
HDD_SCHEDULERS = ("mq-deadline", "bfq")
NETWORK_SCHEDULERS = ("none",)
# Kernel names of the network block devices' disks.
NETWORK_DISKS = ("nbd", "rbd")
READ_AHEAD_KB = 32


# One sysfs file to write: its path, value now and value wanted.
Change = namedtuple("Change", "path old new")


def disks_under(path):
    """Kernel names of the disks at the bottom of the block device whose
    sysfs directory is path: a partition stands for its disk, a device
    with slaves/ for theirs."""
    if os.path.isfile(os.path.join(path, "partition")):
        path = os.path.dirname(path)
    slaves = os.path.join(path, "slaves")
    below = sorted(os.listdir(slaves)) if os.path.isdir(slaves) else []
    if not below:
        return [os.path.basename(path)]
    disks = []
    for name in below:
        for disk in disks_under(os.path.realpath(os.path.join(slaves, name))):
            if disk not in disks:
                disks.append(disk)
    return disks


def parse_scheduler(text):
    """(current, offered) from "[mq-deadline] kyber bfq none"."""
    words = text.split()
    offered = [w.strip("[]") for w in words]
    current = [w.strip("[]") for w in words if w.startswith("[")]
    if not current and len(offered) == 1:
        current = offered
    return (current[0] if current else ""), offered


def scheduler_change(path, wanted, notes):
    """The change that puts the first offered of wanted in path, or None
    (already there, or nothing wanted offered: a note says so)."""
    try:
        current, offered = parse_scheduler(read_text(path))
    except FileNotFoundError:
        notes.append(f"{path}: no such file; left alone")
        return None
    choice = next((s for s in wanted if s in offered), None)
    if choice is None:
        notes.append(f"{path}: offers none of {', '.join(wanted)}; "
                     f"left as {current or 'it is'}")
        return None
    return Change(path, current, choice) if choice != current else None


def hdd_schedulers(disk):
    """What a disk under the HDD member should use: none for a network
    block device's, else an elevator."""
    if disk.startswith(NETWORK_DISKS) and disk[3:4].isdigit():
        return NETWORK_SCHEDULERS
    return HDD_SCHEDULERS


def plan(device, read_ahead_kb=READ_AHEAD_KB):
    """(changes, notes): what tune-queues would change on device."""
    system = device.system
    table = device.table()
    ssd = ([] if table["ssd"] == "-" else
           disks_under(system.devnum_path(table["ssd"])))
    hdd = disks_under(system.devnum_path(table["hdd"]))
    shared = [d for d in ssd if d in hdd]
    notes = [f"{d} is under both the HDD and the SSD; its scheduler is "
             "left alone" for d in shared]
    wanted = [(d, SSD_SCHEDULERS) for d in ssd if d not in shared] + \
             [(d, hdd_schedulers(d)) for d in hdd if d not in shared]
    changes = [scheduler_change(system.sys("block", d, "queue", "scheduler"),
                                schedulers, notes)
               for d, schedulers in wanted]
    path = device.sysdir("queue", "read_ahead_kb")
    old = read_text(path)
    if old != str(read_ahead_kb):
        changes.append(Change(path, old, str(read_ahead_kb)))
    return [c for c in changes if c], notes


def apply(changes):
    for c in changes:
        try:
            write_text(c.path, c.new)
        except OSError as e:
            raise HottierError(f"cannot write {c.new} to {c.path}: "
                               f"{e.strerror}")
