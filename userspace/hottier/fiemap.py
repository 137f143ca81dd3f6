"""A file's extents on the device under it (FIEMAP), as the extent-aligned
sector ranges the pin and unpin messages take."""

import errno
import fcntl
import os
import stat
import struct

from . import HottierError
from .system import devnum, stat_kind
from .table import SECTOR

FS_IOC_FIEMAP = 0xC020660B              # _IOWR('f', 11, struct fiemap)
FIEMAP_FLAG_SYNC = 0x1
FIEMAP_MAX_OFFSET = (1 << 64) - 1
HEADER = struct.Struct("=QQIIII")       # struct fiemap
EXTENT = struct.Struct("=QQQ16xI12x")   # struct fiemap_extent

EXTENT_LAST = 0x1
EXTENT_UNKNOWN = 0x2
EXTENT_DELALLOC = 0x4
EXTENT_ENCODED = 0x8
EXTENT_DATA_INLINE = 0x200
EXTENT_DATA_TAIL = 0x400

# Data stored in metadata blocks: no extent of its own to pin.
SKIPPED = EXTENT_DATA_INLINE | EXTENT_DATA_TAIL
REFUSED = {EXTENT_UNKNOWN: "its location is unknown",
           EXTENT_DELALLOC: "it is not allocated yet",
           EXTENT_ENCODED: "it is compressed or encoded"}

# Filesystems whose FIEMAP physical addresses are byte offsets on the one
# block device they are mounted from.
SECTOR_ADDRESSED = ("ext2", "ext3", "ext4", "xfs")


def fiemap(path, batch=256):
    """(logical, physical, length, flags) of every extent of path, after
    syncing its dirty data (FIEMAP_FLAG_SYNC)."""
    extents, start = [], 0
    fd = os.open(path, os.O_RDONLY)
    try:
        while True:
            buf = bytearray(HEADER.pack(start, FIEMAP_MAX_OFFSET,
                                        FIEMAP_FLAG_SYNC, 0, batch, 0) +
                            bytes(EXTENT.size * batch))
            fcntl.ioctl(fd, FS_IOC_FIEMAP, buf, True)
            mapped = HEADER.unpack_from(buf)[3]
            got = [EXTENT.unpack_from(buf, HEADER.size + EXTENT.size * i)
                   for i in range(mapped)]
            extents += got
            if not got or got[-1][3] & EXTENT_LAST:
                return extents
            start = got[-1][0] + got[-1][2]
    finally:
        os.close(fd)


def device_extents(path, extents):
    """(physical, length) of the extents that have a place of their own
    on the device; refuses extents whose place is not known."""
    placed = []
    for logical, physical, length, flags in extents:
        for flag, why in REFUSED.items():
            if flags & flag:
                raise HottierError(f"{path}: the extent at byte {logical} "
                                   f"cannot be pinned: {why}")
        if not flags & SKIPPED:
            placed.append((physical, length))
    return placed


def sector_ranges(extents, extent_sectors, device_sectors):
    """The (start_sector, nr_sectors) ranges, extent aligned and merged,
    that cover byte ranges (physical, length) of a device of
    device_sectors sectors, and the number of extents they hold."""
    spans = []
    for physical, length in sorted(extents):
        if length == 0:
            continue
        if physical + length > device_sectors * SECTOR:
            raise HottierError(f"byte range {physical}+{length} is beyond "
                               "the end of the device")
        first = physical // SECTOR // extent_sectors
        last = (physical + length - 1) // SECTOR // extent_sectors
        if spans and first <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], last)
        else:
            spans.append([first, last])
    ranges = [(f * extent_sectors,
               min((l + 1) * extent_sectors, device_sectors) -
               f * extent_sectors) for f, l in spans]
    return ranges, sum(l - f + 1 for f, l in spans)


def filesystem_type(system, path, dev):
    """The type of the filesystem that holds path: the mount of its device
    number or, for a filesystem whose files carry an anonymous device
    number (btrfs), the deepest mount point above it."""
    mounts = system.mounts()
    fstype = next((t for d, _, t in mounts if d == dev), None)
    if fstype:
        return fstype
    real = os.path.realpath(path)
    deepest = None                      # a later mount hides an earlier one
    for _, where, fstype in mounts:
        if real == where or real.startswith(where.rstrip("/") + "/"):
            if deepest is None or len(where) >= deepest[0]:
                deepest = (len(where), fstype)
    return deepest[1] if deepest else None


def check_file(system, device, path):
    """Refuses path unless it is a regular file on device, in a filesystem
    whose FIEMAP addresses are sectors of it."""
    dev = devnum(stat_kind(path, stat.S_ISREG, "regular file").st_dev)
    fstype = filesystem_type(system, path, dev)
    if fstype not in SECTOR_ADDRESSED:
        raise HottierError(f"{path} is on {fstype or 'an unknown filesystem'}"
                           ", whose FIEMAP addresses are not sectors of one "
                           "device; only ext4, XFS, ext3 and ext2 files can "
                           "be pinned")
    if dev != device.devnum():
        raise HottierError(f"{path} is not on {device.name} (it is on "
                           f"device {dev})")


def file_ranges(system, device, path):
    """The ranges of device that hold path's data, and their extents."""
    check_file(system, device, path)
    try:
        extents = fiemap(path)
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.ENOTTY):
            raise HottierError(f"{path}: the filesystem does not support "
                               "FIEMAP")
        raise HottierError(f"{path}: FIEMAP failed: {e.strerror}")
    return sector_ranges(device_extents(path, extents),
                         device.table()["extent_sectors"], device.sectors())
