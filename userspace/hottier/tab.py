"""/etc/hottiertab: the devices `hottierctl activate` creates at boot.

One device a line, fields separated by blanks:

    name  hdd  ssd  extent  [key=value ...]

name is the dm name (/dev/mapper/<name>); hdd and ssd are absolute paths
(/dev/sdb, /dev/disk/by-id/...), by-id/..., by-path/..., by-uuid/...,
by-partuuid/... below /dev/disk, or VG/LV for an LVM logical volume
(/dev/VG/LV); extent is a size (1M, 512K, 2048 for sectors); the keys are
the table's optional keys. # starts a comment.
"""

import os
import re
from collections import namedtuple

from . import HottierError
from .table import parse_assignments, parse_extent

DEFAULT_PATH = "/etc/hottiertab"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,126}")


# A hottiertab line: name, members, extent, its key=value settings (a
# dict) and its line number. A named tuple, not a dataclass: importing
# dataclasses costs hottierctl a second at every start under TCG.
Entry = namedtuple("Entry", "name hdd ssd extent_sectors keys line")


def check_name(name):
    if not NAME.fullmatch(name):
        raise HottierError(f"bad device name '{name}': letters, digits and "
                           "._+- (not first), at most 127")
    return name


DISK_LINK = re.compile(r"by-[a-z]+/\S+")
# LVM's VG and LV names: these characters, not starting with a hyphen, and
# neither "." nor "..".
LVM_NAME = re.compile(r"[A-Za-z0-9+_.][A-Za-z0-9+_.-]{0,126}")


def lv_name(spec):
    """(VG, LV) if spec names a logical volume as VG/LV, else None.
    by-id/NAME and its kin are /dev/disk links, not a VG named by-id."""
    parts = spec.split("/")
    if len(parts) != 2 or DISK_LINK.fullmatch(spec):
        return None
    if all(LVM_NAME.fullmatch(p) and p not in (".", "..") for p in parts):
        return tuple(parts)
    return None


def lv_path(vg, lv, dev="/dev"):
    """The node of logical volume VG/LV: /dev/VG/LV, the link udev (or LVM
    without udev) makes for an active LV; else its device-mapper node,
    /dev/mapper/VG-LV with the hyphens in each name doubled; else
    /dev/VG/LV, which is missing while the LV is not active."""
    path = os.path.join(dev, vg, lv)
    if os.path.exists(path):
        return path
    mapper = os.path.join(dev, "mapper", vg.replace("-", "--") + "-" +
                          lv.replace("-", "--"))
    return mapper if os.path.exists(mapper) else path


def device_path(spec, dev="/dev", relative=False):
    """An absolute path as it is; by-id/X and its kin below /dev/disk;
    VG/LV as the logical volume's node (lv_path()). Anything else is
    refused, or with relative (the command line) a path as it is."""
    if spec.startswith("/"):
        return spec
    if DISK_LINK.fullmatch(spec):
        return os.path.join(dev, "disk", spec)
    names = lv_name(spec)
    if names:
        return lv_path(*names, dev=dev)
    if relative:
        return spec
    raise HottierError(f"device '{spec}': expected an absolute path, "
                       "by-id/NAME or VG/LV")


def parse_line(words, number, dev="/dev"):
    if len(words) < 4:
        raise HottierError("expected: name hdd ssd extent [key=value ...]")
    name, hdd, ssd, extent = words[:4]
    return Entry(check_name(name), device_path(hdd, dev),
                 device_path(ssd, dev), parse_extent(extent),
                 parse_assignments(words[4:]), number)


def parse(text, path=DEFAULT_PATH, dev="/dev"):
    """The entries of a hottiertab, members resolved to paths (a VG/LV as
    it is now: see lv_path()); an error names the file and line."""
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        try:
            entry = parse_line(words, number, dev)
            if any(e.name == entry.name for e in entries):
                raise HottierError(f"'{entry.name}' listed twice")
        except HottierError as e:
            raise HottierError(f"{path}:{number}: {e}")
        entries.append(entry)
    return entries


def load(path=DEFAULT_PATH, dev="/dev"):
    try:
        with open(path) as f:
            return parse(f.read(), path, dev)
    except OSError as e:
        raise HottierError(f"{path}: {e.strerror}")
