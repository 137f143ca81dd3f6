"""O_DIRECT block I/O, the target's SSD layout, and polling.

Reads here bypass the page cache, so every one reaches the target (and its
heat table) and blktrace sees it on a member. Open a device read-only unless
writing: closing a block device opened for writing makes udev probe it, and
those probe reads land on the members.
"""

import mmap
import os
import time

SECTOR = 512


class Direct:
    """A block device (or file) opened with O_DIRECT and one page-aligned
    buffer of max_bytes for its reads and writes."""

    def __init__(self, path, write=False, max_bytes=1 << 20):
        flags = (os.O_RDWR if write else os.O_RDONLY) | os.O_DIRECT
        self.path = path
        self.fd = os.open(path, flags)
        self.buf = mmap.mmap(-1, max_bytes)     # anonymous: page aligned

    def read(self, offset, length):
        """length bytes at offset (both multiples of the block size)."""
        with memoryview(self.buf) as whole, whole[:length] as mv:
            n = os.preadv(self.fd, [mv], offset)
            if n != length:
                raise OSError(f"short read of {self.path} at {offset}: "
                              f"{n} of {length}")
            return bytes(mv)

    def write(self, offset, data):
        length = len(data)
        self.buf[:length] = data
        with memoryview(self.buf) as whole, whole[:length] as mv:
            n = os.pwritev(self.fd, [mv], offset)
            if n != length:
                raise OSError(f"short write of {self.path} at {offset}: "
                              f"{n} of {length}")

    def read_sectors(self, sector, count):
        return self.read(sector * SECTOR, count * SECTOR)

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
            self.buf.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def meta_sectors(ssd_sectors, extent):
    """The SSD's metadata area (Documentation/hottier.rst, SSD layout):
    8 sectors of superblock and 16 bytes of map per extent the SSD could
    hold, rounded up to a whole extent."""
    raw = 8 + -(-16 * (ssd_sectors // extent) // SECTOR)
    return -(-raw // extent) * extent


def nr_slots(ssd_sectors, extent):
    return (ssd_sectors - meta_sectors(ssd_sectors, extent)) // extent


def slot_sector(ssd_sectors, extent, slot):
    return meta_sectors(ssd_sectors, extent) + slot * extent


def poll(fetch, pred, timeout=120.0, what="condition", interval=0.1):
    """Call fetch() until pred(value) holds; return that value. Raises
    AssertionError with the last value after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if pred(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for "
                                 f"{what}; last: {value}")
        time.sleep(interval)


class Phases:
    """Prints how long each phase of a test took (pytest -s shows it)."""

    def __init__(self, name):
        self.name = name
        self.start = self.last = time.monotonic()

    def __call__(self, what):
        now = time.monotonic()
        print(f"[{self.name} {now - self.start:6.1f}s +{now - self.last:5.1f}s]"
              f" {what}", flush=True)
        self.last = now
