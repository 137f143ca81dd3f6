"""Emulated block devices for dm-hottier's guest tests.

Everything here runs inside the guest (scripts/vm-run.sh) as root:

* null_blk devices made through configfs, each with its own size, latency
  (completion_nsec, which needs irqmode=2), queue depth and media errors
  (badblocks): an "HDD" has milliseconds of latency and depth 1, an "SSD"
  about 100 us and depth 32;
* file-backed virtio disks (vm-run.sh --disk NAME=FILE), for data that must
  survive a guest restart;
* device-mapper devices (dm-linear, dm-delay, dm-flakey, dm-error) to put
  under a member device to make it slow or failing.
"""

import contextlib
import glob
import os
import re
import subprocess
import time

import dmioctl

CONFIGFS_NULLB = "/sys/kernel/config/nullb"


def run(*cmd, check=True, input=None):
    """Run a command, return CompletedProcess with text output."""
    return subprocess.run(cmd, check=check, capture_output=True, text=True,
                          input=input)


def modprobe(name, *params):
    """Load a module; one built into the kernel (the debug tier builds dm
    and null_blk in) is already there: its /sys/module entry says so.
    One loaded already is left as it is (as modprobe would: its parameters
    are not changed), without running modprobe, which under TCG takes most
    of a second."""
    sysdir = "/sys/module/" + name.replace("-", "_")
    if os.path.isdir(sysdir):
        return
    r = run("modprobe", name, *params, check=False)
    if r.returncode and not os.path.isdir(sysdir):
        raise subprocess.CalledProcessError(r.returncode, r.args, r.stdout,
                                            r.stderr)


def sectors(path):
    """Size of a block device in 512-byte sectors."""
    return int(run("blockdev", "--getsz", path).stdout)


def kname(path):
    """The kernel's name of the block device at path ("dm-3"), found from
    its device number: udev makes /dev/mapper/NAME a link to ../dm-N, but
    with no udev (HOTTIER_VM_UDEV=none) libdevmapper makes it a node."""
    rdev = os.stat(path).st_rdev
    return os.path.basename(os.path.realpath(
        f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}"))


def wait_for(path, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear in {timeout}s")
        time.sleep(0.05)


def settle():
    """Wait for udev's probing (blkid reads) of new or written devices."""
    run("udevadm", "settle", "--timeout=30", check=False)


class NullBlk:
    """A null_blk device configured through configfs before power-on.

    The kernel names the disk after the configfs item: /dev/<name>.

    cache_mb gives the device a volatile write cache, so that flushes are
    real requests.  Keep such devices to light I/O: null_blk's flush
    (null_make_cache_space) loops without sleeping until pages that other
    contexts hold locked are written back; on 6.1, under mkfs plus
    promotion copies, a kblockd worker spun there for 1000 s.
    """

    def __init__(self, name, size_mb, *, memory_backed=True,
                 completion_nsec=None, hw_queue_depth=None, irqmode=None,
                 blocksize=512, discard=True, cache_mb=0, badblocks=(),
                 max_sectors=None):
        modprobe("null_blk", "nr_devices=0")
        if completion_nsec is not None and irqmode is None:
            irqmode = 2     # completion_nsec only applies to the timer mode
        self.name = name
        self.dir = os.path.join(CONFIGFS_NULLB, name)
        self.path = f"/dev/{name}"
        os.mkdir(self.dir)
        try:
            attrs = {"size": size_mb, "memory_backed": int(memory_backed),
                     "blocksize": blocksize}
            if irqmode is not None:
                attrs["irqmode"] = irqmode
            if completion_nsec is not None:
                attrs["completion_nsec"] = completion_nsec
            if hw_queue_depth is not None:
                attrs["hw_queue_depth"] = hw_queue_depth
            if max_sectors is not None:
                attrs["max_sectors"] = max_sectors
            if discard and memory_backed:
                attrs["discard"] = 1
            if cache_mb:
                attrs["cache_size"] = cache_mb   # volatile cache: flushes
            for key, value in attrs.items():
                self._set(key, value)
            for start, end in badblocks:
                self.add_badblocks(start, end)
            self._set("power", 1)
            wait_for(self.path)
        except BaseException:
            self.remove()
            raise

    def _set(self, attr, value):
        with open(os.path.join(self.dir, attr), "w") as f:
            f.write(f"{value}\n")

    # Before the badblocks rewrite (6.7), a range longer than BB_MAX_LEN
    # (512 sectors) is stored out of order and badblocks_check() misses
    # most of it (seen on 6.1: reads of a "bad" 32 MiB device succeed).
    # Ranges are given in ascending pieces no longer than that.
    BB_MAX_LEN = 512

    def _badblocks(self, sign, start, end):
        for s in range(start, end + 1, self.BB_MAX_LEN):
            e = min(s + self.BB_MAX_LEN - 1, end)
            self._set("badblocks", f"{sign}{s}-{e}")

    def add_badblocks(self, start, end):
        """Make sectors [start, end] fail with a media error."""
        self._badblocks("+", start, end)

    def clear_badblocks(self, start, end):
        self._badblocks("-", start, end)

    def remove(self):
        if not os.path.isdir(self.dir):
            return
        with contextlib.suppress(OSError):
            self._set("power", 0)
        os.rmdir(self.dir)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def hdd(name, size_mb, latency_ms=4.0, **kw):
    """A slow, shallow device: milliseconds per I/O, queue depth 1."""
    kw.setdefault("hw_queue_depth", 1)
    return NullBlk(name, size_mb, completion_nsec=int(latency_ms * 1e6), **kw)


def ssd(name, size_mb, latency_us=100, **kw):
    """A fast, deep device: about 100 us per I/O, queue depth 32."""
    kw.setdefault("hw_queue_depth", 32)
    return NullBlk(name, size_mb, completion_nsec=int(latency_us * 1e3), **kw)


def fast(name, size_mb, **kw):
    """A zero-latency device, for functional tests that need speed."""
    return NullBlk(name, size_mb, **kw)


SCSI_DEBUG = "/sys/bus/pseudo/drivers/scsi_debug"


@contextlib.contextmanager
def scsi_debug(size_mb, sector_size, count):
    """count SCSI disks of size_mb and sector_size-byte logical blocks,
    each with a store of its own, as /dev paths. sd refuses I/O that is
    not a multiple of the sector size, as real 4Kn disks do (null_blk's
    blocksize takes 512-byte writes). scsi_debug is one module: one such
    set at a time, unloaded at the end. sd is loaded first: with udev's
    drivers rule left out (HOTTIER_VM_UDEV=dm) nothing else loads it for
    the new disks."""
    modprobe("sd_mod")
    run("modprobe", "scsi_debug", f"dev_size_mb={size_mb}",
        f"sector_size={sector_size}", f"add_host={count}",
        "per_host_store=1", "num_tgts=1", "max_luns=1")
    try:
        deadline = time.monotonic() + 30
        while True:
            found = sorted(glob.glob(f"{SCSI_DEBUG}/adapter*/host*/"
                                     "target*/*:*/block/*"),
                           key=lambda p: int(re.search(
                               r"adapter(\d+)", p).group(1)))
            if len(found) == count or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert len(found) == count, found
        paths = [f"/dev/{os.path.basename(p)}" for p in found]
        for path in paths:
            wait_for(path)
        settle()
        yield paths
    finally:
        settle()
        for _ in range(50):
            if run("rmmod", "scsi_debug", check=False).returncode == 0:
                break
            time.sleep(0.2)


def logical_block_size(path):
    name = os.path.basename(os.path.realpath(path))
    with open(f"/sys/class/block/{name}/queue/logical_block_size") as f:
        return int(f.read())


def virtio_disk(name, timeout=10.0):
    """The device node of a file-backed disk given to vm-run.sh as
    --disk NAME=FILE: a virtio-blk disk whose serial is NAME."""
    deadline = time.monotonic() + timeout
    while True:
        for blk in sorted(os.listdir("/sys/block")):
            serial = os.path.join("/sys/block", blk, "serial")
            if os.path.exists(serial):
                with open(serial) as f:
                    if f.read().strip() == name:
                        wait_for(f"/dev/{blk}")
                        return f"/dev/{blk}"
        if time.monotonic() > deadline:
            raise FileNotFoundError(f"no virtio disk with serial {name}")
        time.sleep(0.1)


class DmDevice:
    """A device-mapper device made from a table; removed on exit."""

    def __init__(self, name, table, wait_remove=True):
        """wait_remove=False: remove() does not wait for udev to handle
        the removal (the next settle() does); for a name never used
        again."""
        self.name = name
        self.path = f"/dev/mapper/{name}"
        self.wait_remove = wait_remove
        run("dmsetup", "create", name, "--table", table)
        wait_for(self.path)
        settle()

    def table(self):
        return run("dmsetup", "table", self.name).stdout.strip()

    def status(self):
        return dmioctl.run(("dmsetup", "status", self.name), dmioctl.status,
                           self.name).stdout.strip()

    def message(self, *words):
        return dmioctl.run(("dmsetup", "message", self.name, "0", *words),
                           dmioctl.message, self.name, 0, *words)

    def reload(self, table):
        run("dmsetup", "reload", self.name, "--table", table)
        run("dmsetup", "resume", self.name)

    def suspend(self):
        run("dmsetup", "suspend", self.name)

    def resume(self):
        run("dmsetup", "resume", self.name)

    def remove(self):
        if not os.path.exists(self.path):
            return
        if self.wait_remove:
            run("dmsetup", "remove", "--retry", self.name)
        else:
            dmioctl.run(("dmsetup", "remove", self.name), dmioctl.remove,
                        self.name, 0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class PrivateDmDevice(DmDevice):
    """A device-mapper device that udev leaves alone, as LVM's hidden
    layers: created and removed through the ioctls with a cookie that
    turns udev's device-mapper rules off (dmioctl.PRIVATE_COOKIE), and
    never waited for. No /dev/mapper link: its path is the /dev/dm-N node
    devtmpfs makes. For devices only the test itself reads."""

    def __init__(self, name, table):
        self.name = name
        dev = dmioctl.run(("dmsetup", "create", name), dmioctl.create,
                          name, table).stdout
        self.path = f"/dev/dm-{os.minor(dev)}"
        wait_for(self.path)

    def remove(self):
        dmioctl.run(("dmsetup", "remove", self.name), dmioctl.remove,
                    self.name)


def linear_table(dev):
    """dm-linear over the whole of dev."""
    return f"0 {sectors(dev)} linear {dev} 0"


def linear(name, dev):
    return DmDevice(name, linear_table(dev))


def delay(name, dev, read_ms, write_ms=None):
    """dm-delay under a member: every read (and write) waits read_ms."""
    write_ms = read_ms if write_ms is None else write_ms
    n = sectors(dev)
    return DmDevice(name, f"0 {n} delay {dev} 0 {read_ms} {dev} 0 {write_ms}")


def delay_table(dev, read_ms, write_ms=None):
    write_ms = read_ms if write_ms is None else write_ms
    return f"0 {sectors(dev)} delay {dev} 0 {read_ms} {dev} 0 {write_ms}"


def flakey_table(dev, up_s, down_s, *features):
    """dm-flakey: up for up_s seconds, then down_s seconds in the given
    error mode (error_reads, error_writes; default: all I/O fails)."""
    feat = f" {len(features)} {' '.join(features)}" if features else ""
    return f"0 {sectors(dev)} flakey {dev} 0 {up_s} {down_s}{feat}"


def flakey(name, dev, up_s, down_s, *features):
    return DmDevice(name, flakey_table(dev, up_s, down_s, *features))


def error(name, nr_sectors):
    """dm-error: every I/O fails."""
    return DmDevice(name, f"0 {nr_sectors} error")


def kernel_memory():
    """Kernel memory a target may hold: unreclaimable slab (kmalloc, large
    kmallocs included), vmalloc and per-CPU, in bytes, with the per-CPU
    counters folded in first."""
    with open("/proc/sys/vm/stat_refresh", "w") as f:
        f.write("1\n")
    m = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":")
            m[key] = int(value.split()[0]) * 1024
    return m["SUnreclaim"] + m["VmallocUsed"] + m["Percpu"]
