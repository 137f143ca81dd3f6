"""/etc/hottiertab: the devices `hottierctl activate` creates at boot.

One device a line, fields separated by blanks:

    name  hdd  ssd  extent  [key=value ...]

name is the dm name (/dev/mapper/<name>); hdd and ssd are absolute paths
(/dev/sdb, /dev/disk/by-id/...) or by-id/..., by-path/..., by-uuid/...,
by-partuuid/... below /dev/disk; extent is a size (1M, 512K, 2048 for
sectors); the keys are the table's optional keys. # starts a comment.
"""

import re
from dataclasses import dataclass, field

from . import HottierError
from .table import parse_assignments, parse_extent

DEFAULT_PATH = "/etc/hottiertab"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,126}")


@dataclass
class Entry:
    name: str
    hdd: str
    ssd: str
    extent_sectors: int
    keys: dict = field(default_factory=dict)
    line: int = 0


def check_name(name):
    if not NAME.fullmatch(name):
        raise HottierError(f"bad device name '{name}': letters, digits and "
                           "._+- (not first), at most 127")
    return name


def device_path(spec):
    """An absolute path as it is; by-id/X and its kin below /dev/disk."""
    if spec.startswith("/"):
        return spec
    if re.fullmatch(r"by-[a-z]+/\S+", spec):
        return "/dev/disk/" + spec
    raise HottierError(f"device '{spec}': expected an absolute path or "
                       "by-id/NAME")


def parse_line(words, number):
    if len(words) < 4:
        raise HottierError("expected: name hdd ssd extent [key=value ...]")
    name, hdd, ssd, extent = words[:4]
    return Entry(check_name(name), device_path(hdd), device_path(ssd),
                 parse_extent(extent), parse_assignments(words[4:]), number)


def parse(text, path=DEFAULT_PATH):
    """The entries of a hottiertab; an error names the file and line."""
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        try:
            entry = parse_line(words, number)
            if any(e.name == entry.name for e in entries):
                raise HottierError(f"'{entry.name}' listed twice")
        except HottierError as e:
            raise HottierError(f"{path}:{number}: {e}")
        entries.append(entry)
    return entries


def load(path=DEFAULT_PATH):
    try:
        with open(path) as f:
            return parse(f.read(), path)
    except OSError as e:
        raise HottierError(f"{path}: {e.strerror}")
