"""A pool served over the network: the HDD member is an NBD device,
qemu-nbd on loopback inside the guest (server and client through the
kernel's nbd driver), over a 4 ms null_blk. Documentation/hottier.rst, A
pool over the network."""

import hashlib
import os
import signal
import subprocess
import time

import pytest

import devices
import directio
import hotio
from conftest import info, scrub, unique

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
HOTTIERCTL = os.path.join(REPO, "userspace", "hottierctl")
POOL_MB = 256
DATA_MB = 16            # written, pinned, and read back
HDD_ID = "nbd-pool-test-1"


class Nbd:
    """@backing exported by qemu-nbd on /dev/nbd<index>; kill() is the
    server gone (the client then fails requests at once)."""

    def __init__(self, backing, index):
        devices.modprobe("nbd", "nbds_max=4")
        self.path = f"/dev/nbd{index}"
        self.pidfile = f"/tmp/qemu-nbd-{index}.pid"
        devices.run("qemu-nbd", "-c", self.path, "-f", "raw",
                    "--cache=none", f"--pid-file={self.pidfile}", backing)
        hotio.wait_until(lambda: devices.sectors(self.path) > 0, 30,
                         what=f"{self.path} connected")
        with open(self.pidfile) as f:
            self.pid = int(f.read())

    def kill(self):
        os.kill(self.pid, signal.SIGKILL)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        devices.run("qemu-nbd", "-d", self.path, check=False)
        devices.settle()


def devnum(path):
    """major:minor, as dmsetup table names a member."""
    rdev = os.stat(path).st_rdev
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def ctl(*args):
    r = subprocess.run([HOTTIERCTL, *args], capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


class Created(devices.DmDevice):
    """A device made by hottierctl create; removed by dmsetup."""

    def __init__(self, name, hdd, ssd, *extra):
        self.name = name
        self.path = f"/dev/mapper/{name}"
        self.wait_remove = True
        out = ctl("create", name, "--hdd", hdd, "--ssd", ssd, *extra)
        assert out.startswith(f"{name}: created"), out
        devices.settle()


def digests(path, mb):
    with directio.Direct(path) as f:
        return [hashlib.sha256(f.read(i << 20, 1 << 20)).hexdigest()
                for i in range(mb)]


class Verifier(hotio.Background):
    """A thread reading the first DATA_MB of path in 64 KiB pieces, each
    compared with what was written; errors and mismatches counted."""

    def __init__(self, path, data):
        super().__init__()
        self.path, self.data = path, data
        self.reads = self.errors = self.wrong = 0

    def _run(self):
        piece = 64 << 10
        n = 0
        with directio.Direct(self.path) as f:
            while not self.stop.is_set():
                off = (n * 7919 % (len(self.data) // piece)) * piece
                n += 1
                try:
                    got = f.read(off, piece)
                except OSError:
                    self.errors += 1
                    continue
                self.reads += 1
                if got != self.data[off:off + piece]:
                    self.wrong += 1


def test_a_pool_over_nbd_keeps_its_replicas_serving_when_the_server_dies(
        hottier_module):
    """hottierctl creates the device over /dev/nbd0; data written through
    it reads back the same through the device and on the NBD device, and
    scrub finds the replicas equal. The server is killed under a
    verifying reader of the pinned, replicated data: no read errs and
    none differs, while a miss fails with EIO at once. A new server on
    /dev/nbd1 and a table reload onto it (the same hdd_id) keep every
    replica, and the whole device reads as the pool holds it."""
    with devices.hdd(unique("pool"), POOL_MB, hw_queue_depth=32) as pool, \
            devices.ssd(unique("ssd"), 64) as s, \
            Nbd(pool.path, 0) as nbd:
        name = unique("nt")
        with Created(name, nbd.path, s.path, "--extent-size", "64K",
                     "--set", f"hdd_id={HDD_ID}",
                     "--set", "promote_threshold=1000000") as d:
            data = os.urandom(DATA_MB << 20)
            with directio.Direct(d.path, write=True,
                                 max_bytes=len(data)) as f:
                f.write(0, data)
            d.message("pin", "0", str(DATA_MB * 2048))
            extents = DATA_MB * 16
            hotio.wait_until(lambda: info(d)["slots_used"] >= extents and
                             info(d)["migrations"] == 0, 120,
                             what=f"{extents} replicas")
            want = [hashlib.sha256(data[i << 20:(i + 1) << 20]).hexdigest()
                    for i in range(DATA_MB)]
            assert digests(d.path, DATA_MB) == want
            assert digests(nbd.path, DATA_MB) == want
            sc = scrub(d)
            assert sc["scrub_mismatches"] == 0 and \
                sc["scrub_checked"] == extents, sc

            with Verifier(d.path, data) as v:
                hotio.wait_until(lambda: v.reads > 50, 60,
                                 what="the verifier")
                nbd.kill()
                killed = time.monotonic()
                # A miss: past the pinned data, no replica.
                with pytest.raises(OSError) as e:
                    with directio.Direct(d.path) as f:
                        f.read((DATA_MB + 8) << 20, 4096)
                miss_s = time.monotonic() - killed
                assert e.value.errno == 5, e.value     # EIO
                n = v.reads
                hotio.wait_until(lambda: v.reads > n + 200, 60,
                                 what="replica reads with the server gone")
            down = info(d)
            print(f"server killed: {v.reads} verified reads, {v.errors} "
                  f"errors, {v.wrong} wrong; a miss failed after "
                  f"{miss_s:.2f} s; hdd_read_errors "
                  f"{down['hdd_read_errors']}, read_retries "
                  f"{down['read_retries']}")
            assert v.errors == 0 and v.wrong == 0, vars(v)
            assert down["mode"] == "rw" and down["ssd_errors"] == 0, down

            with Nbd(pool.path, 1) as back:
                table = d.table().replace(
                    f" {devnum(nbd.path)} ",
                    f" {devnum(back.path)} ")
                assert devnum(back.path) in table, table
                d.reload(table)
                c = info(d)
                assert c["slots_used"] == extents, c
                assert digests(d.path, POOL_MB) == \
                    digests(back.path, POOL_MB)
                d.remove()


# Issue 41's goal: at least 3x dm-linear's IOPS (x4.08 measured by hand,
# at a hit ratio of 0.76). The first run here gave x5.28 (584 against 3083
# IOPS, hit ratio 0.958) alone on the host, so the goal itself is the
# floor, in the 6.1 suite beside the other lane: the two runs are 8 s
# each, one after the other in one guest.
ZIPF_FLOOR = 3.0
ZIPF_S = 8


def zipf_iops(path, seconds):
    rc, report, tail = hotio.fio(
        path, "--name=z", "--rw=randread", "--bs=4k", "--direct=1",
        "--ioengine=libaio", "--iodepth=4", "--size=128M",
        "--random_distribution=zipf:1.2", "--randseed=4242",
        "--time_based", f"--runtime={seconds}", "--norandommap")
    assert rc == 0 and report, tail
    return hotio.total(report, "read", "iops")


def test_zipf_over_an_nbd_pool_against_dm_linear(hottier_module):
    """4k random reads, zipf 1.2 over 128 MiB of the pool, with a 64 MiB
    SSD at 64 KiB extents: dm-linear over the NBD device, then the hottier
    device after a warm-up, in the same guest."""
    with devices.hdd(unique("pool"), POOL_MB, hw_queue_depth=32) as pool, \
            devices.ssd(unique("ssd"), 64) as s, \
            Nbd(pool.path, 0) as nbd:
        with devices.linear(unique("nl"), nbd.path) as lin:
            base = zipf_iops(lin.path, ZIPF_S)
        with Created(unique("nz"), nbd.path, s.path, "--extent-size", "64K",
                     "--set", "hdd_id=none") as d:
            zipf_iops(d.path, 2 * ZIPF_S)
            before = info(d)
            iops = zipf_iops(d.path, ZIPF_S)
            after = info(d)
        hits = after["read_hits"] - before["read_hits"]
        reads = hits + after["read_misses"] - before["read_misses"]
        res = {"dm_linear_iops": round(base), "hottier_iops": round(iops),
               "ratio": round(iops / max(base, 1e-9), 2),
               "hit_ratio": round(hits / max(reads, 1), 3)}
        print(res)
        hotio.save("nbd-zipf.json", res)
        assert res["ratio"] >= ZIPF_FLOOR, res
