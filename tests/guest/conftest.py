"""Fixtures for tests that run inside the guest (scripts/vm-run.sh)."""

import itertools
import os
import re
import subprocess
import sys
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "lib"))

import devices  # noqa: E402
from directio import poll  # noqa: E402

# The matrix builds one module per kernel and names it in HOTTIER_MODULE.
MODULE = os.environ.get("HOTTIER_MODULE") or os.path.join(
    REPO, "dm-hottier", "dm-hottier.ko")
INFO_FIELDS = ["reads", "writes", "read_sectors", "write_sectors", "discards",
               "flushes", "ssd_flush_errors", "slots_used", "slots_total",
               "read_hits", "read_misses", "promotions", "demotions",
               "copies_discarded", "migrations", "pinned", "tracked",
               "scrub_checked", "scrub_mismatches", "ssd_latency_us",
               "hdd_latency_us", "replica_reads_ssd", "replica_reads_hdd",
               "ssd_errors", "migrations_allowed", "mode", "scrub_slots",
               "scrub", "map", "map_loaded", "map_dropped", "map_checked",
               "map_writes", "turnovers", "migrations_waiting",
               "hdd_read_errors", "read_retries"]
TEXT_FIELDS = ("mode", "scrub", "map")
_names = itertools.count()


def module_loaded():
    return os.path.isdir("/sys/module/dm_hottier")


def load_module():
    if not module_loaded():
        devices.modprobe("dm-mod")
        subprocess.run(["insmod", MODULE], check=True)


# What each test is, for scripts/matrix.sh to pick a tier's tests by
# marker expression (tests/README.md lists the tiers).
MARKERS = {
    "measure": "its figures are timings: run in a boot of its own, on an "
               "idle host",
    "system": "the device among LVM, md and udev",
    "crash": "crash cuts and power cuts replayed",
    "cli": "hottierctl and its trace",
    "race": "I/O racing copies, suspends and a crash: every kernel runs it",
    "kernel": "what differs between kernels: 6.12 runs it",
    "args": "a refusal of the arguments alone, the same on every kernel",
    "debug": "the debug kernel's smoke tests (KASAN, lockdep)",
    "debug_soak": "what make soak adds on the debug kernel",
    "soak": "a variant that only make soak runs",
}


def pytest_configure(config):
    for name, what in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")
    if config.option.collectonly:
        return      # listing what a tier picks needs no guest
    if os.geteuid() != 0 or not os.path.isdir("/sys/kernel/config"):
        pytest.exit("guest tests run as root inside the guest: "
                    "use 'make guest-test' (scripts/vm-run.sh)", returncode=2)
    if not os.path.exists(MODULE):
        pytest.exit(f"{MODULE} is not built: run 'make'", returncode=2)
    devices.modprobe("null_blk", "nr_devices=0")
    for mod in ("dm-delay", "dm-flakey"):
        devices.modprobe(mod)


def pytest_collection_modifyitems(config, items):
    """Measurements first, in the order collected: in a boot that runs
    them beside other tests, they still find a fresh guest."""
    items.sort(key=lambda item: item.get_closest_marker("measure") is None)


@pytest.fixture
def hottier_module():
    load_module()
    yield MODULE


def unique(prefix):
    return f"{prefix}{next(_names)}"


@pytest.fixture
def pair(hottier_module):
    """A zero-latency HDD (512 MiB: XFS needs 300) and SSD (64 MiB)."""
    with devices.fast(unique("hdd"), 512) as h, \
         devices.fast(unique("ssd"), 64) as s:
        yield h, s


@pytest.fixture
def cached_pair(hottier_module):
    """A small zero-latency pair with volatile write caches, so that
    flushes are real requests on both.  Only for light, single-threaded
    I/O: see devices.NullBlk about null_blk's cache."""
    with devices.fast(unique("hdd"), 256, cache_mb=4) as h, \
         devices.fast(unique("ssd"), 64, cache_mb=4) as s:
        yield h, s


def hottier_table(hdd, ssd, extent=2048, opts=(), length=None):
    length = devices.sectors(hdd) if length is None else length
    tail = f" {len(opts)} {' '.join(opts)}" if opts else ""
    return f"0 {length} hottier {hdd} {ssd} {extent}{tail}"


@pytest.fixture
def hottier(pair):
    """A hottier device over the pair, 1 MiB extents."""
    h, s = pair
    with devices.DmDevice(unique("ht"), hottier_table(h.path, s.path)) as d:
        d.hdd, d.ssd = h, s
        yield d


def info(dev):
    """Status INFO counters by name, in Documentation/hottier.rst's order."""
    fields = dev.status().split()[3:]
    # <used>/<total> slots is one field, as in dm-cache.
    fields[7:8] = fields[7].split("/")
    assert len(fields) == len(INFO_FIELDS), fields
    # Every field is a number but the mode (rw or degraded) and the scrub
    # state.
    return {f: v if f in TEXT_FIELDS else int(v)
            for f, v in zip(INFO_FIELDS, fields)}


def scrub(dev, timeout=300.0):
    """Run a scrub (the message starts it in a worker) and wait for its
    end; the status counters then hold its result."""
    dev.message("scrub")
    deadline = time.monotonic() + timeout
    while True:
        i = info(dev)
        if i["scrub"] != "running":
            return i
        assert time.monotonic() < deadline, f"scrub still running: {i}"
        time.sleep(0.1)


def no_copy_left(i):
    """No copy in flight, and none decided that waits to start."""
    return i["migrations"] == 0 and i["migrations_waiting"] == 0


def settled(d, want):
    """The status once want replicas are in and no copy is in flight."""
    return poll(lambda: info(d), lambda i: i["slots_used"] >= want and
                i["migrations"] == 0, 120, f"{want} replicas")


def wait_copies_done(dev, timeout=120.0):
    """No copy in flight or waiting, and none started in the last half
    second (a queued candidate is picked up at once by the worker)."""
    deadline = time.monotonic() + timeout
    while True:
        first = poll(lambda: info(dev), no_copy_left, timeout,
                     "no copy in flight or waiting")
        time.sleep(0.5)
        last = info(dev)
        if no_copy_left(last) and \
                last["promotions"] == first["promotions"] and \
                last["copies_discarded"] == first["copies_discarded"]:
            return last
        assert time.monotonic() < deadline, last


def copies_stopped(dev, timeout=120.0):
    """Start no more copies (promote_threshold out of reach), then wait
    for those already queued or in flight (wait_copies_done)."""
    dev.message("promote_threshold", "1000000")
    return wait_copies_done(dev, timeout)


COMMIT_S = 1.0                  # HOTTIER_COMMIT_MS


def recorded(d, timeout=60.0):
    """The status once the commits are done: no map write for three
    commit periods (a replica is marked at one, recorded at the next)."""
    deadline = time.monotonic() + timeout
    last, since = info(d)["map_writes"], time.monotonic()
    while time.monotonic() - since < 3 * COMMIT_S:
        assert time.monotonic() < deadline, "the map never stopped changing"
        time.sleep(0.2)
        now = info(d)["map_writes"]
        if now != last:
            last, since = now, time.monotonic()
    return info(d)


class KernelLog:
    """Kernel log lines printed after the mark taken at construction, as
    dmesg prints them ("[seconds] text"). Read from /dev/kmsg, opened at
    its end at the mark: under TCG starting dmesg costs about 0.2 s."""

    def __init__(self):
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self.fd, 0, os.SEEK_END)
        self.lines = []

    def __del__(self):
        os.close(self.fd)

    def new(self):
        while True:
            try:
                rec = os.read(self.fd, 8192)
            except BlockingIOError:
                break
            except BrokenPipeError:     # records overwritten: go on
                continue
            # "prio,seq,usec,flags;text\n", then " KEY=value" lines.
            head, _, text = rec.decode(errors="replace").partition(";")
            usec = int(head.split(",")[2])
            text = text.split("\n", 1)[0]
            self.lines.append(f"[{usec / 1e6:12.6f}] "
                              f"{_kmsg_unescape(text)}")
        return "\n".join(self.lines)


def _kmsg_unescape(text):
    """/dev/kmsg writes unprintable bytes as \\xNN, dmesg prints them."""
    if "\\x" not in text:
        return text
    return re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(int(m[1], 16)), text)
