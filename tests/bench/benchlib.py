"""What the benchmarks share (tests/bench/zipf.py, tests/bench/workloads.py):
the emulated devices and the stacks built on them (dm-hottier, dm-cache
smq writethrough, dm-linear), their status read through the dm ioctl and
parsed, fio's iolog read back, and the static oracle computed from it.

Runs inside the guest as root (the device parts) and on the host (the
arithmetic: tests/host/test_bench_workloads.py). Python standard library
only.
"""

import collections
import fcntl
import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "lib"))
import devices  # noqa: E402

SECTOR = 512
HDD_LATENCY_MS = 4.0
SSD_LATENCY_US = 100
CACHE_META_MB = 8

# dmsetup status INFO after "<start> <len> hottier" (Documentation/hottier.rst)
HOTTIER_INFO = ["reads", "writes", "read_sectors", "write_sectors",
                "discards", "flushes", "ssd_flush_errors", "used_total",
                "read_hits", "read_misses", "promotions", "demotions",
                "copies_discarded", "migrations", "pinned", "tracked",
                "scrub_checked", "scrub_mismatches"]
# dm-cache (Documentation/admin-guide/device-mapper/cache.rst)
CACHE_INFO = ["md_block_size", "md_used_total", "block_size", "used_total",
              "read_hits", "read_misses", "write_hits", "write_misses",
              "demotions", "promotions", "dirty"]


# DM_TABLE_STATUS on /dev/mapper/control (linux/dm-ioctl.h): the status is
# read once a second, without a dmsetup fork and exec each time (slow under
# TCG), and with DM_NOFLUSH_FLAG as "dmsetup status --noflush" so that
# reading it does not make dm-cache commit its metadata.
DM_TABLE_STATUS = 0xC138FD0C    # _IOWR(0xfd, 12, struct dm_ioctl)
DM_IOCTL_SIZE = 312             # sizeof(struct dm_ioctl)
DM_BUFFER_FULL_FLAG = 1 << 8
DM_NOFLUSH_FLAG = 1 << 11
DM_IOCTL_HEAD = "=3IIIIiIIIQ128s"   # version .. dev, name
DM_TARGET_SPEC = "=QQiI16s"         # struct dm_target_spec, 40 bytes


class DmStatusReader:
    """INFO status of a one-target dm device, as "dmsetup status" prints
    it: "<start> <length> <target> <info>"."""

    def __init__(self, name):
        self.name = name
        self.fd = os.open("/dev/mapper/control", os.O_RDWR)

    def __call__(self):
        size = 16384
        while True:
            buf = bytearray(size)
            struct.pack_into(DM_IOCTL_HEAD, buf, 0, 4, 0, 0, size,
                             DM_IOCTL_SIZE, 0, 0, DM_NOFLUSH_FLAG, 0, 0, 0,
                             self.name.encode())
            fcntl.ioctl(self.fd, DM_TABLE_STATUS, buf, True)
            (_, _, _, _, start, count, _, flags, _, _, _, _) = \
                struct.unpack_from(DM_IOCTL_HEAD, buf, 0)
            if not flags & DM_BUFFER_FULL_FLAG:
                break
            size *= 4
        if count != 1:
            raise RuntimeError(f"{self.name}: {count} targets")
        sector, length, _, _, ttype = struct.unpack_from(DM_TARGET_SPEC,
                                                         buf, start)
        off = start + struct.calcsize(DM_TARGET_SPEC)
        info = bytes(buf[off:buf.index(0, off)]).decode()
        return f"{sector} {length} {ttype.rstrip(bytes(1)).decode()} {info}"

    def close(self):
        os.close(self.fd)


def round_up(x, m):
    return -(-x // m) * m


def hottier_meta_sectors(ssd_sectors, extent):
    """Superblock (8 sectors) and a 16-byte map entry for every extent the
    SSD could hold, rounded up to an extent (Documentation/hottier.rst)."""
    entries = ssd_sectors // extent
    return round_up(8 + -(-16 * entries // SECTOR), extent)


def hottier_slots(ssd_sectors, extent):
    return (ssd_sectors - hottier_meta_sectors(ssd_sectors, extent)) // extent


def hottier_ssd_sectors(usable_sectors, extent):
    """The smallest SSD whose slots hold exactly usable_sectors."""
    want = usable_sectors // extent
    s = usable_sectors + extent
    while hottier_slots(s, extent) < want:
        s += extent
    assert hottier_slots(s, extent) == want
    return s


# After scrub_mismatches (0.3 prints them all; an older module fewer).
HOTTIER_EXTRA = ["ssd_latency_us", "hdd_latency_us", "replica_reads_ssd",
                 "replica_reads_hdd", "ssd_errors", "migrations_allowed"]
# The working-set turnovers detected: field 33, used/total counted as one.
HOTTIER_TURNOVERS_FIELD = 32


def parse_status(kind, line):
    f = line.split()
    names = HOTTIER_INFO if kind == "hottier" else CACHE_INFO
    if len(f) < 3 + len(names) or f[2] != ("hottier" if kind == "hottier"
                                           else "cache"):
        raise RuntimeError(f"unexpected {kind} status: {line!r}")
    v = dict(zip(names, f[3:3 + len(names)]))
    used, total = v.pop("used_total").split("/")
    out = {"used": int(used), "total": int(total)}
    for k in ("read_hits", "read_misses", "promotions", "demotions"):
        out[k] = int(v[k])
    if kind == "hottier":
        for k in ("reads", "writes", "copies_discarded", "migrations",
                  "tracked", "ssd_flush_errors"):
            out[k] = int(v[k])
        extra = f[3 + len(names):3 + len(names) + len(HOTTIER_EXTRA)]
        for k, x in zip(HOTTIER_EXTRA, extra):
            out[k] = int(x)
        if len(f) > 3 + HOTTIER_TURNOVERS_FIELD:     # since the field came
            out["turnovers"] = int(f[3 + HOTTIER_TURNOVERS_FIELD])
    else:
        out["md_used_total"] = v["md_used_total"]
        out["dirty"] = int(v["dirty"])
        for k in ("write_hits", "write_misses"):
            out[k] = int(v[k])
    return out


def ssd_reads(kind, s):
    """Reads the SSD served, from one parsed status: dm-hottier's replica
    reads sent to the SSD (a replica read may be routed to the HDD), and
    dm-cache's read hits (writethrough: a hit is served by the cache
    device). None where the status does not say."""
    if kind == "hottier":
        return s.get("replica_reads_ssd")
    return s.get("read_hits")


def ratio(hits, misses):
    return hits / (hits + misses) if hits + misses else None


def kernel_log_lines():
    return devices.run("dmesg").stdout.splitlines()


class Stack:
    """Fresh emulated HDD and SSD, the target on top; removed on exit.

    p: hdd_mb, ssd_nullb_mb, hottier_ssd_sectors, usable_sectors,
    hottier_args ("key value ..."); cfg: kind (hottier, cache or linear),
    unit (extent or cache block, sectors), name, and optionally
    hottier_args replacing p's. Device names start with prefix."""

    def __init__(self, p, cfg, prefix="bz_"):
        self.p, self.cfg, self.objs, self.prefix = p, cfg, [], prefix
        self.reader = None

    def _keep(self, obj):
        self.objs.append(obj)
        return obj

    def __enter__(self):
        p, cfg, pre = self.p, self.cfg, self.prefix
        try:
            hdd = self._keep(devices.hdd(pre + "hdd", p.hdd_mb,
                                         latency_ms=HDD_LATENCY_MS))
            length = devices.sectors(hdd.path)
            if cfg["kind"] == "linear":
                table = f"0 {length} linear {hdd.path} 0"
            else:
                ssd = self._keep(devices.ssd(pre + "ssd", p.ssd_nullb_mb,
                                             latency_us=SSD_LATENCY_US))
            if cfg["kind"] == "hottier":
                ssd_dev = self._keep(devices.DmDevice(
                    pre + "ssdl",
                    f"0 {p.hottier_ssd_sectors} linear {ssd.path} 0"))
                words = cfg.get("hottier_args", p.hottier_args).split()
                opt = f" {len(words)} {' '.join(words)}" if words else ""
                table = (f"0 {length} hottier {hdd.path} {ssd_dev.path} "
                         f"{cfg['unit']}{opt}")
            elif cfg["kind"] == "cache":
                ssd_dev = self._keep(devices.DmDevice(
                    pre + "ssdl", f"0 {p.usable_sectors} linear {ssd.path} 0"))
                meta = self._keep(devices.ssd(pre + "meta", CACHE_META_MB,
                                              latency_us=SSD_LATENCY_US))
                table = (f"0 {length} cache {meta.path} {ssd_dev.path} "
                         f"{hdd.path} {cfg['unit']} 1 writethrough smq 0")
            self.table_line = table
            self.dev = self._keep(devices.DmDevice(pre + cfg["name"], table))
            if cfg["kind"] != "linear":
                self.reader = DmStatusReader(self.dev.name)
                line = self.reader()
                want = devices.run("dmsetup", "status", "--noflush",
                                   self.dev.name).stdout.strip()
                if line.split()[:3] != want.split()[:3]:
                    raise RuntimeError(f"status ioctl: {line!r}, "
                                       f"dmsetup: {want!r}")
        except BaseException:
            self.__exit__()
            raise
        return self

    def status(self):
        """The parsed status; None for dm-linear (no counters)."""
        if self.reader is None:
            return None
        return parse_status(self.cfg["kind"], self.reader())

    def __exit__(self, *exc):
        if getattr(self, "reader", None):
            self.reader.close()
            self.reader = None
        for obj in reversed(self.objs):
            obj.remove()
        self.objs = []


def read_offsets(iolog):
    """Reads per 4 KiB-aligned offset in a fio (version 2 or 3) iolog."""
    counts = collections.Counter()
    with open(iolog) as f:
        for line in f:
            w = line.split()
            # v3: "<msec> <file> read <offset> <len>"; v2 has no msec.
            if len(w) >= 4 and w[-3] == "read":
                counts[int(w[-2])] += 1
    return counts


def read_extents(iolog, counts=None):
    """Reads per (offset, length) in a fio (version 2 or 3) iolog, added
    to counts (a Counter) if given."""
    counts = collections.Counter() if counts is None else counts
    with open(iolog) as f:
        for line in f:
            w = line.split()
            if len(w) >= 4 and w[-3] == "read":
                counts[(int(w[-2]), int(w[-1]))] += 1
    return counts


def unit_bytes_read(extents, unit):
    """Bytes read per unit (index = offset // unit) from
    {(offset, length): reads}, a read split at unit boundaries."""
    per = collections.Counter()
    for (off, length), n in extents.items():
        end = off + length
        while off < end:
            u = off // unit
            nxt = min(end, (u + 1) * unit)
            per[u] += (nxt - off) * n
            off = nxt
    return per


def oracle_bytes(extents, capacity_bytes, units):
    """The oracle by bytes: the share of bytes read that the most read
    units fitting in capacity hold (for reads of any size; for 4 KiB
    reads the same as oracle())."""
    total = sum(length * n for (_, length), n in extents.items())
    res = {}
    for unit in units:
        per = unit_bytes_read(extents, unit)
        cap = capacity_bytes // unit
        top = sorted(per.values(), reverse=True)[:cap]
        res[unit_name(unit)] = {
            "unit_bytes": unit, "capacity_units": cap,
            "units_read": len(per),
            "oracle": round(sum(top) / total, 4) if total else None}
    return res


def file_oracle(extents, files, capacity_bytes):
    """The oracle of whole files: the most popular files that fit. files
    is [(start, length)] in bytes; the files are taken in order of bytes
    read from them per byte of their size (ties: the earlier file), each
    that still fits is placed (a file that does not fit is skipped, a
    smaller one after it may fit). Returns the share of all bytes read
    that the placed files hold, and the files placed (indexes)."""
    total = sum(length * n for (_, length), n in extents.items())
    got = [0] * len(files)
    for (off, length), n in extents.items():
        for i, (fs, fl) in enumerate(files):
            a, b = max(off, fs), min(off + length, fs + fl)
            if a < b:
                got[i] += (b - a) * n
    order = sorted(range(len(files)),
                   key=lambda i: (-got[i] / files[i][1], i))
    placed, room, held = [], capacity_bytes, 0
    for i in order:
        if got[i] and files[i][1] <= room:
            placed.append(i)
            room -= files[i][1]
            held += got[i]
    return {"oracle": round(held / total, 4) if total else None,
            "files_placed": sorted(placed), "bytes_read": total,
            "bytes_per_file": got}


def oracle(counts, capacity_bytes, units):
    """Static placement of the most read units that fit in capacity."""
    n = sum(counts.values())
    res = {}
    for unit in units:
        per = collections.Counter()
        for off, c in counts.items():
            per[off // unit] += c
        cap = capacity_bytes // unit
        top = sorted(per.values(), reverse=True)[:cap]
        res[unit_name(unit)] = {
            "unit_bytes": unit, "capacity_units": cap,
            "units_read": len(per),
            "oracle": round(sum(top) / n, 4) if n else None,
            "oracle_cold": round((sum(top) - len(top)) / n, 4) if n else None,
        }
    return res


def unit_name(nbytes):
    return f"{nbytes >> 20}MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10}KiB"


def window_ratio(samples, i, j):
    a, b = samples[i], samples[j]
    return ratio(b["read_hits"] - a["read_hits"],
                 b["read_misses"] - a["read_misses"])


def align(samples):
    """Counters from the sample taken before fio started (udev's probe of
    the new device already read it), times from the last sample before the
    first read of fio (fio itself can take seconds to start in the guest)."""
    base = samples[0]

    def nreads(s):
        return s["read_hits"] + s["read_misses"]

    first = next((i for i, s in enumerate(samples)
                  if nreads(s) > nreads(base)), 1)
    t0 = samples[first - 1]["t"]
    out = [dict(s, t=round(s["t"] - t0, 3),
                read_hits=s["read_hits"] - base["read_hits"],
                read_misses=s["read_misses"] - base["read_misses"])
           for s in samples[first - 1:]]
    return {"samples": out, "fio_start_s": t0,
            "baseline": {k: base[k] for k in ("read_hits", "read_misses",
                                               "used", "promotions")}}


def run_sampled(cmd, sample_s, take):
    """Run cmd (fio) and call take() every sample_s seconds while it runs;
    returns (returncode, stdout, stderr)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    k = 1
    while True:
        try:
            proc.wait(timeout=max(0.0, t0 + k * sample_s - time.monotonic()))
            break
        except subprocess.TimeoutExpired:
            pass
        take()
        k += 1
    out, err = proc.communicate()
    return proc.returncode, out, err
