"""Stacks (issue 15, item 1; Documentation/hottier.rst, "Stacking"): a
hottier device over an LVM LV striped over two PVs with an LV as its SSD
(made by hottierctl from VG/LV names), over an md RAID1, and LVM on top of
a hottier device.

Every test writes known data, reads it back through the device with
O_DIRECT (or through ext4, with checksums), and checks in the status that
the reads were served by replicas on the SSD, and where the stack allows it
that the data is where the pool puts it (each stripe, each mirror leg).

LVM runs with a configuration of its own (LVM_SYSTEM_DIR, lvm.conf in a
temporary directory): the guest's /etc is the host's, read-only. It
scans null_blk devices (types), uses no devices file, keeps its metadata
backups in the temporary directory, and syncs with the guest's udev, which
makes the /dev/VG/LV links. The guest's udev runs LVM's own rules with the
host's lvm.conf, which may autoactivate a VG found on a dm device: the VGs
here are made with --setautoactivation n, so only the tests activate them.
"""

import contextlib
import hashlib
import os
import random
import subprocess
import tempfile
import time

import pytest

import devices
import hotio
from conftest import hottier_table, info, scrub, unique
from directio import Direct, poll

pytestmark = pytest.mark.system

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
HOTTIERCTL = os.path.join(REPO, "userspace", "hottierctl")
MiB = 1 << 20
EXTENT = 128                    # 64 KiB
DATA = 2 * MiB                  # 32 extents of known data
NO_PROMOTE = ("promote_threshold", "1000000", "routing", "ssd")

LVM_CONF = """\
devices {{
	use_devicesfile = 0
	obtain_device_list_from_udev = 0
	external_device_info_source = "none"
	types = [ "nullb", 16 ]
	hints = "none"
{filter}}}
activation {{
	udev_sync = 1
	udev_rules = 1
	verify_udev_operations = 1
	monitoring = 0
}}
backup {{
	backup_dir = "{dir}/backup"
	archive_dir = "{dir}/archive"
}}
"""


class Lvm:
    """LVM commands under a configuration of their own (LVM_SYSTEM_DIR).
    configure(reject=paths) sets a global_filter that hides those devices
    from LVM, as the admin guide tells for a hottier device's HDD."""

    def __init__(self, root):
        self.dir = os.path.join(root, "lvm")
        os.makedirs(self.dir)
        self.env = dict(os.environ, LVM_SYSTEM_DIR=self.dir)
        self.vgs = []
        self.configure()

    def configure(self, reject=()):
        rules = ", ".join(f'"r|^{p}$|"' for p in reject)
        text = LVM_CONF.format(
            dir=self.dir,
            filter=f"\tglobal_filter = [ {rules} ]\n" if rules else "")
        with open(os.path.join(self.dir, "lvm.conf"), "w") as f:
            f.write(text)

    def __call__(self, *args, check=True):
        r = subprocess.run(["lvm", *args], capture_output=True, text=True,
                           env=self.env)
        if check and r.returncode:
            raise AssertionError(f"lvm {' '.join(args)}: exit "
                                 f"{r.returncode}\n{r.stdout}{r.stderr}")
        return r

    def vgcreate(self, stack, vg, *pvs, extent="1M"):
        """A VG over pvs (vgcreate labels them) that only an explicit
        vgchange -ay activates; removed with its LVs when stack closes."""
        self("vgcreate", "--setautoactivation", "n", "-s", extent, vg, *pvs)
        self.vgs.append(vg)
        stack.callback(self.remove_vg, vg)

    def lvcreate(self, vg, lv, *args, pvs=()):
        self("lvcreate", "--yes", "-n", lv, *args, vg, *pvs)
        path = f"/dev/{vg}/{lv}"
        devices.wait_for(path)
        devices.settle()
        return path

    def remove_vg(self, vg):
        """Remove vg and its LVs; an LV left active (its PV gone, say) is
        removed with dmsetup so that nothing holds the devices."""
        if vg not in self.vgs:
            return
        self.vgs.remove(vg)
        self("vgremove", "-ff", "--yes", vg, check=False)
        for name in os.listdir("/dev/mapper"):
            if name.startswith(vg + "-"):
                devices.run("dmsetup", "remove", "--retry", name,
                            check=False)

    def cleanup(self):
        for vg in list(self.vgs):
            self.remove_vg(vg)


@pytest.fixture
def lvm(hottier_module):
    with tempfile.TemporaryDirectory(prefix="stacks") as root:
        tool = Lvm(root)
        try:
            yield tool
        finally:
            tool.cleanup()      # a safety net: the tests remove their VGs


def null_blk(stack, prefix, mb):
    return stack.enter_context(devices.fast(unique(prefix), mb))


def hottier(stack, hdd, ssd, name=None):
    """A hottier device with 64 KiB extents that promotes only on request
    and reads every replica from the SSD (routing ssd)."""
    return stack.enter_context(devices.DmDevice(
        name or unique("stk"), hottier_table(hdd, ssd, EXTENT, NO_PROMOTE)))


class Existing(devices.DmDevice):
    """A dm device made by someone else (hottierctl): DmDevice's status,
    message and table, without the create."""

    def __init__(self, name):
        self.name = name
        self.path = f"/dev/mapper/{name}"


def pattern(seed, length=DATA):
    return random.Random(seed).randbytes(length)


def write_direct(path, offset, data):
    with Direct(path, write=True, max_bytes=len(data)) as f:
        f.write(offset, data)
    devices.settle()            # udev probes a device closed after writing


def read_direct(path, offset, length):
    with Direct(path, max_bytes=length) as f:
        return f.read(offset, length)


def devnum(path):
    st = os.stat(path)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def node(devno):
    """/dev/<kernel name> of "major:minor"."""
    return "/dev/" + os.path.basename(os.path.realpath(
        f"/sys/dev/block/{devno}"))


def promote_all(d, sector, nr_sectors):
    """Promote the extents of the range and wait for their copies."""
    extents = -(-nr_sectors // EXTENT)
    d.message("promote", str(sector), str(nr_sectors))
    return poll(lambda: info(d), lambda i: i["promotions"] >= extents and
                i["migrations"] == 0, 120, f"{extents} promotions")


def dm_active(name):
    """Whether a dm device called name exists (an active LV: VG-LV)."""
    for kname in os.listdir("/sys/block"):
        path = f"/sys/block/{kname}/dm/name"
        if os.path.exists(path):
            with open(path) as f:
                if f.read().strip() == name:
                    return True
    return False


def read_from_replicas(d, offset, data):
    """data is at offset of d, promoted: read it back, every read a hit
    served by the SSD."""
    d.message("reset_stats")
    assert read_direct(d.path, offset, len(data)) == data
    i = info(d)
    assert i["read_misses"] == 0, i
    assert i["read_hits"] >= len(data) // (EXTENT * 512), i
    assert i["replica_reads_ssd"] == i["read_hits"], i
    return i


def tier_and_check(d, seed):
    """Known data through d, promoted; a write across two replicated
    extents (write-through: both members); everything read back from the
    replicas; a scrub finds every replica equal to its HDD extent.
    Returns the data now at the start of d."""
    data = bytearray(pattern(seed))
    write_direct(d.path, 0, bytes(data))
    i = promote_all(d, 0, len(data) // 512)
    assert i["slots_used"] >= len(data) // (EXTENT * 512), i

    patch = pattern(seed + 1, 64 << 10)
    where = 5 * (EXTENT * 512) + 4096
    write_direct(d.path, where, patch)
    data[where:where + len(patch)] = patch
    read_from_replicas(d, 0, bytes(data))
    s = scrub(d)
    assert s["scrub_mismatches"] == 0, s
    assert s["scrub_checked"] == s["slots_used"] >= i["slots_used"], s
    return bytes(data)


def ctl(*args):
    r = subprocess.run([HOTTIERCTL, *args], capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


def test_hdd_an_lv_striped_over_two_pvs_ssd_an_lv_by_vg_lv_name(lvm):
    """hottierctl create --hdd VG/pool --ssd VG/ssd: the HDD an LV striped
    over two PVs, the SSD an LV on a third PV of the same VG."""
    with contextlib.ExitStack() as stack:
        pvs = [null_blk(stack, "pv", 40) for _ in range(2)]
        fast = null_blk(stack, "fast", 24)
        vg = unique("stkvg")
        lvm.vgcreate(stack, vg, *(p.path for p in pvs), fast.path)
        hdd = lvm.lvcreate(vg, "pool", "-i2", "-I64k", "-L64M",
                           pvs=[p.path for p in pvs])
        ssd = lvm.lvcreate(vg, "ssd", "-L16M", pvs=[fast.path])

        name = unique("stkctl")
        stack.callback(devices.run, "dmsetup", "remove", "--retry", name,
                       check=False)
        out = ctl("create", name, "--hdd", f"{vg}/pool", "--ssd",
                  f"{vg}/ssd", "--extent-size", "64K",
                  "--set", "promote_threshold=1000000",
                  "--set", "routing=ssd")
        assert out.startswith(f"{name}: created /dev/mapper/{name} over "
                              f"/dev/{vg}/pool (HDD) and /dev/{vg}/ssd "
                              "(SSD)"), out
        devices.settle()
        d = Existing(name)
        words = d.table().split()
        assert words[3:6] == [devnum(hdd), devnum(ssd), str(EXTENT)], words
        # The HDD is named by its LV's UUID, so the SSD LV keeps a map.
        assert words[words.index("hdd_id") + 1].startswith(
            "dm-uuid-LVM-"), words
        data = tier_and_check(d, seed=11)

        # The HDD holds every byte, striped: 64 KiB chunks alternate
        # between the two PVs, at the offsets the LV's table gives.
        words = devices.run("dmsetup", "table",
                            f"{vg}-pool").stdout.split()
        assert words[2:5] == ["striped", "2", "128"], words
        legs = [(node(words[5]), int(words[6])),
                (node(words[7]), int(words[8]))]
        assert sorted(p for p, _ in legs) == sorted(p.path for p in pvs)
        chunk = 128 * 512
        for n in range(len(data) // chunk):
            path, start = legs[n % 2]
            offset = start * 512 + (n // 2) * chunk
            assert read_direct(path, offset, chunk) == \
                data[n * chunk:(n + 1) * chunk], f"chunk {n} on {path}"


def free_md():
    minor = 100
    while os.path.exists(f"/sys/block/md{minor}"):
        minor += 1
    return f"/dev/md{minor}"


def stop_md(path, members):
    """Stop the array and wipe its superblocks, so that udev's incremental
    assembly cannot bring it back while the legs go."""
    devices.run("mdadm", "--stop", path, check=False)
    devices.run("mdadm", "--zero-superblock", *members, check=False)


def test_hdd_as_an_md_raid1(hottier_module):
    with contextlib.ExitStack() as stack:
        legs = [null_blk(stack, "leg", 48) for _ in range(2)]
        ssd = null_blk(stack, "ssd", 16)
        md = free_md()
        members = [leg.path for leg in legs]
        stack.callback(stop_md, md, members)
        devices.run("mdadm", "--create", md, "--run", "--quiet",
                    "--level=1", "--raid-devices=2", "--assume-clean",
                    "--bitmap=none", "--metadata=1.2", *members)
        devices.wait_for(md)
        devices.settle()
        kname = os.path.basename(md)
        with open(f"/sys/block/{kname}/md/level") as f:
            assert f.read().strip() == "raid1"

        d = hottier(stack, md, ssd.path)
        data = tier_and_check(d, seed=21)

        # Both legs hold every byte, at the array's data offset.
        for leg in legs:
            leg_name = os.path.basename(leg.path)
            with open(f"/sys/block/{kname}/md/dev-{leg_name}/offset") as f:
                start = int(f.read()) * 512
            assert read_direct(leg.path, start, len(data)) == data, leg.path


def lvm_warnings(r):
    return [line for line in r.stderr.splitlines()
            if "WARNING" in line or "uplicate" in line]


def files(root, seed):
    """Eight files of known data in a directory; their SHA-256s."""
    rng = random.Random(seed)
    os.makedirs(os.path.join(root, "dir"))
    sums = {}
    for n in range(8):
        rel = os.path.join("dir", f"f{n}")
        data = rng.randbytes((n + 1) * 48 << 10)
        with open(os.path.join(root, rel), "wb") as f:
            f.write(data)
        sums[rel] = hashlib.sha256(data).hexdigest()
    return sums


def checksums(root, names):
    out = {}
    for rel in names:
        with open(os.path.join(root, rel), "rb") as f:
            out[rel] = hashlib.sha256(f.read()).hexdigest()
    return out


@contextlib.contextmanager
def mounted(dev, where):
    devices.run("mount", dev, where)
    try:
        yield where
    finally:
        devices.run("umount", where)


def test_lvm_on_top_of_a_hottier_device(lvm, tmp_path):
    with contextlib.ExitStack() as stack:
        raw = null_blk(stack, "hdd", 32)
        ssd = null_blk(stack, "ssd", 48)
        d = hottier(stack, raw.path, ssd.path)
        table = d.table()
        vg = unique("stkvg")
        lvm.configure(reject=[raw.path])
        lvm.vgcreate(stack, vg, d.path)
        lv = lvm.lvcreate(vg, "data", "-l100%FREE")
        devices.run("mkfs.ext4", "-q", "-F", lv)
        where = str(tmp_path / "mnt")
        os.mkdir(where)
        with mounted(lv, where):
            sums = files(where, seed=41)

        # The HDD maps one to one: the raw member carries the same PV
        # label. LVM without the filter sees the PV twice.
        r = devices.run("blkid", "-p", "-o", "value", "-s", "TYPE", raw.path)
        assert r.stdout.strip() == "LVM2_member"
        lvm.configure()
        r = lvm("pvs")
        assert "duplicate" in r.stderr.lower() or \
            "Not using device" in r.stderr, r.stderr
        lvm.configure(reject=[raw.path])

        # With it, one PV, the hottier device, and no warning.
        r = lvm("pvs", "--noheadings", "-o", "pv_name,vg_name")
        assert lvm_warnings(r) == [], r.stderr
        rows = [line.split() for line in r.stdout.splitlines()
                if line.split()[1:] == [vg]]
        assert len(rows) == 1, r.stdout
        assert os.path.realpath(rows[0][0]) == os.path.realpath(d.path)
        r = lvm("vgs", "--noheadings", "-o", "pv_count,lv_count", vg)
        assert lvm_warnings(r) == [], r.stderr
        assert r.stdout.split() == ["1", "1"], r.stdout

        # Down and up again: deactivate, remove and recreate the hottier
        # device, re-scan; the LV activates and the files are intact,
        # read from replicas.
        lvm("vgchange", "-an", vg)
        assert not dm_active(f"{vg}-data")
        # The first DmDevice's exit removes the new one too, after the VG.
        d.remove()
        d = devices.DmDevice(d.name, table)
        r = lvm("pvscan", "--cache")
        assert lvm_warnings(r) == [], r.stderr
        assert not dm_active(f"{vg}-data")
        r = lvm("vgchange", "-ay", vg)
        assert lvm_warnings(r) == [], r.stderr
        assert dm_active(f"{vg}-data")
        devices.wait_for(lv)
        devices.settle()

        promote_all(d, 0, int(table.split()[1]))
        d.message("reset_stats")
        with mounted(lv, where):
            assert checksums(where, sums) == sums
            i = info(d)
        assert i["read_misses"] == 0 and i["read_hits"] > 0, i
        assert i["replica_reads_ssd"] == i["read_hits"], i


def test_an_lv_hdd_grows_online_keeping_replicas_and_pins(lvm, tmp_path):
    """Issue 15, item 3: the HDD LV is extended under a mounted ext4,
    hottierctl resize reloads the device with the LV's new length,
    resize2fs grows the filesystem while mounted; the replicas and pins
    stay, every file is intact and the grown space takes data."""
    with contextlib.ExitStack() as stack:
        pv = null_blk(stack, "pv", 160)
        ssd = null_blk(stack, "ssd", 24)
        vg = unique("stkvg")
        lvm.vgcreate(stack, vg, pv.path)
        hdd = lvm.lvcreate(vg, "pool", "-L64M")
        name = unique("stkgrow")
        stack.callback(devices.run, "dmsetup", "remove", "--retry", name,
                       check=False)
        ctl("create", name, "--hdd", f"{vg}/pool", "--ssd", ssd.path,
            "--extent-size", "64K", "--set", "promote_threshold=1000000",
            "--set", "routing=ssd")
        devices.settle()
        d = Existing(name)
        devices.run("mkfs.ext4", "-q", "-F", d.path)
        where = str(tmp_path / "mnt")
        os.mkdir(where)
        with mounted(d.path, where):
            sums = files(where, seed=51)
            os.sync()
            d.message("pin", "0", str(8 * 2048))
            before = poll(lambda: info(d), lambda i: i["slots_used"] >= 128
                          and i["migrations"] == 0, 120, "the pins' copies")
            size = os.statvfs(where)
            lvm("lvextend", "-L+64M", f"{vg}/pool")
            devices.settle()
            assert devices.sectors(hdd) == 2 * 131072
            out = ctl("resize", name)
            assert out.startswith(f"{name}: 131072 to 262144 sectors "
                                  "(64 MiB to 128 MiB)"), out
            assert devices.sectors(d.path) == 262144
            after = info(d)
            # Restored from the SSD's map by the new table.
            assert after["map_loaded"] == before["slots_used"], after
            assert (after["slots_used"], after["pinned"]) == \
                (before["slots_used"], before["pinned"]), (before, after)
            devices.run("resize2fs", d.path)
            grown = os.statvfs(where)
            assert grown.f_blocks * grown.f_frsize > \
                1.8 * size.f_blocks * size.f_frsize, (size, grown)
            # More than the old filesystem held: the new space is used.
            big = random.Random(52).randbytes(72 * MiB)
            with open(os.path.join(where, "big"), "wb") as f:
                f.write(big)
            os.sync()
            assert checksums(where, sums) == sums
            assert checksums(where, ["big"]) == \
                {"big": hashlib.sha256(big).hexdigest()}
            r = subprocess.run([HOTTIERCTL, "resize", name, "--json"],
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
            assert '"resized": false' in r.stdout, r.stdout
        r = devices.run("e2fsck", "-fn", d.path, check=False)
        assert r.returncode == 0, r.stdout + r.stderr


def test_replace_ssd_under_load_invalidates_the_old_ssds_map(
        hottier_module, tmp_path):
    """Issue 15, item 3: hottierctl replace-ssd while fio writes and
    verifies: no error reaches fio, the pins are copied to the new SSD,
    every replica equals the HDD, and the old SSD's map is invalidated
    before the new table's first I/O: a device over the HDD and the old
    SSD afterwards restores nothing."""
    hdd_id = "wwn-0x5000c500feed0015"
    with contextlib.ExitStack() as stack:
        hdd = null_blk(stack, "hdd", 64)
        old = null_blk(stack, "ssd", 24)
        new = null_blk(stack, "ssd", 24)
        name = unique("stkrep")
        stack.callback(devices.run, "dmsetup", "remove", "--retry", name,
                       check=False)
        ctl("create", name, "--hdd", hdd.path, "--ssd", old.path,
            "--extent-size", "64K", "--set", f"hdd_id={hdd_id}",
            "--set", "promote_threshold=1000000", "--set", "routing=ssd")
        devices.settle()
        d = Existing(name)
        write_direct(d.path, 0, pattern(61, 32 * MiB))
        d.message("pin", "0", str(4 * 2048))
        before = poll(lambda: info(d), lambda i: i["slots_used"] >= 64 and
                      i["migrations"] == 0, 120, "the pins' copies")
        # fio writes and verifies 16 MiB past the pins, and reads them.
        with hotio.Fio(d.path, "--name=rep", "--rw=randrw", "--bs=4k",
                       "--iodepth=8", "--offset=4m", "--size=16m",
                       "--time_based", "--runtime=12", "--verify=crc32c",
                       "--verify_backlog=256", "--do_verify=1",
                       "--randseed=61") as fio:
            time.sleep(3)
            out = ctl("replace-ssd", name, new.path, "--tab",
                      str(tmp_path / "none"))
            assert out.startswith(f"{name}: its SSD is now {new.path}, in "
                                  f"place of {os.path.basename(old.path)}"
                                  ), out
            assert fio.running(), "fio ended before the swap"
            rc, report, err = fio.wait()
        assert rc == 0 and report is not None, err
        assert all(j["error"] == 0 for j in report["jobs"]), report
        words = d.table().split()
        assert words[4] == devnum(new.path), words
        after = poll(lambda: info(d), lambda i: i["slots_used"] >= 64 and
                     i["migrations"] == 0, 120, "the pins' copies again")
        assert after["pinned"] == before["pinned"], (before, after)
        assert after["map_loaded"] == 0, after
        s = scrub(d)
        assert s["scrub_mismatches"] == 0 and s["scrub_checked"] >= 64, s
        expect = read_direct(hdd.path, 0, 32 * MiB)
        assert read_direct(d.path, 0, 32 * MiB) == expect
        devices.run("dmsetup", "remove", name)

        # The old SSD's map: a device over it restores no replica (its
        # pins, kept in its superblock, are copied again from the HDD).
        back = stack.enter_context(devices.DmDevice(unique("stkold"),
                                   hottier_table(hdd.path, old.path, EXTENT,
                                                 ("hdd_id", hdd_id,
                                                  *NO_PROMOTE))))
        i = info(back)
        assert i["map_loaded"] == 0 and i["slots_used"] <= \
            before["slots_used"], i
        assert read_direct(back.path, 0, 32 * MiB) == expect
