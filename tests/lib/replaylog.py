"""Replay of a dm-log-writes log (Debian does not package replay-log).

The format, from Documentation/admin-guide/device-mapper/log-writes.rst
and drivers/md/dm-log-writes.c: sector 0 holds the super (magic, version,
nr_entries, sectorsize, little-endian); then, for each entry, one
sectorsize block starting with the entry (sector, nr_sectors, flags,
data_len) and, for a mark, its text after it; then, unless the entry is a
discard, nr_sectors blocks of the data written. Sectors and counts are in
sectorsize units.

What the log holds is what a power cut keeps: a write appears when a
flush that covers it completes (written just before the flush's entry),
or when it completes with FUA; writes that completed and were never
flushed are not in it. So the device as of a mark is the base it was
logged from with every data entry before the mark applied.
"""

import os
import struct

MAGIC = 0x6a736677736872
SUPER = struct.Struct("<QQQI")
ENTRY = struct.Struct("<QQQQ")

FLUSH = 1 << 0
FUA = 1 << 1
DISCARD = 1 << 2
MARK = 1 << 3
METADATA = 1 << 4


class Entry:
    __slots__ = ("index", "sector", "nr_sectors", "flags", "data_at",
                 "mark")

    def __init__(self, index, sector, nr_sectors, flags, data_at, mark):
        self.index = index
        self.sector = sector
        self.nr_sectors = nr_sectors
        self.flags = flags
        self.data_at = data_at          # byte offset of the data in the log
        self.mark = mark

    def __repr__(self):
        return (f"Entry({self.index}, sector={self.sector}, "
                f"nr={self.nr_sectors}, flags={self.flags:#x}, "
                f"mark={self.mark!r})")


class Log:
    """The entries of the log on the device at path."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            head = f.read(SUPER.size)
            magic, version, nr_entries, sectorsize = SUPER.unpack(head)
            if magic != MAGIC or version != 1:
                raise ValueError(f"{path}: not a dm-log-writes log "
                                 f"(magic {magic:#x}, version {version})")
            self.sectorsize = sectorsize
            self.entries = []
            pos = sectorsize
            for i in range(nr_entries):
                f.seek(pos)
                block = f.read(sectorsize)
                if len(block) != sectorsize:
                    raise ValueError(f"{path}: entry {i} past the end")
                sector, nr, flags, data_len = ENTRY.unpack_from(block)
                mark = None
                if flags & MARK:
                    mark = block[ENTRY.size:ENTRY.size + data_len].decode()
                pos += sectorsize
                self.entries.append(Entry(i, sector, nr, flags, pos, mark))
                if not flags & DISCARD:
                    pos += nr * sectorsize

    def mark_index(self, name):
        for e in self.entries:
            if e.mark == name:
                return e.index
        raise KeyError(f"{self.path}: no mark {name!r}")

    def replay(self, target, start, end):
        """Apply entries [start, end) to the device or file target: data
        written, discards as zeroes (what null_blk returns after one)."""
        fd = os.open(target, os.O_WRONLY)
        try:
            with open(self.path, "rb") as log:
                for e in self.entries[start:end]:
                    if not e.nr_sectors:
                        continue
                    length = e.nr_sectors * self.sectorsize
                    if e.flags & DISCARD:
                        data = bytes(length)
                    else:
                        log.seek(e.data_at)
                        data = log.read(length)
                    os.pwrite(fd, data, e.sector * self.sectorsize)
            os.fsync(fd)
        finally:
            os.close(fd)
