"""Fake /sys, /proc and dmsetup for hottierctl's host tests."""

import errno
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "userspace"))

from hottier import HottierError, cli  # noqa: E402
from hottier.system import System  # noqa: E402
from hottier.table import FIELDS  # noqa: E402

FAKE_DMSETUP = os.path.join(HERE, "fake_dmsetup.py")
KEYS = {"discard": "passdown", "write_policy": "through",
        "promote_threshold": "4", "sequential_cutoff_kb": "4096",
        "heat_halflife_ms": "60000", "max_migrations": "4",
        "migration_mbps": "0", "max_tracked": "0", "routing": "latency",
        "migration_budget_us": "0", "ssd_error_threshold": "8",
        "map_verify": "0"}
STATS = dict(zip(FIELDS, [
    1000, 50, 8000, 400, 0, 3, 0, 120, 512, 700, 100, 130, 10, 2, 1, 4,
    900, 0, 0, 120, 4100, 650, 50, 0, 3, "rw", 0, "idle", "open", 96, 0,
    32, 2, 1, 2, 0, 0]))


def status_line(sectors, stats):
    values = [str(stats[f]) for f in FIELDS]
    values[7:9] = [f"{values[7]}/{values[8]}"]
    return f"0 {sectors} hottier " + " ".join(values)


def table_line(sectors, hdd, ssd, extent, keys):
    words = " ".join(f"{k} {v}" for k, v in keys.items())
    return (f"0 {sectors} hottier {hdd} {ssd} {extent} {2 * len(keys)} "
            f"{words}")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


class FakeSystem(System):
    """System with block device nodes and exclusive opens faked."""

    def __init__(self, blockdevs, busy, **kw):
        super().__init__(**kw)
        self.blockdevs = blockdevs
        self.busy = busy

    def block_devnum(self, path):
        if path not in self.blockdevs:
            raise HottierError(f"{path}: No such file or directory")
        return self.blockdevs[path]

    def open_exclusive(self, path):
        if path in self.busy:
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))


class Tree:
    """A sysfs tree with block devices, /proc mounts and dmsetup state."""

    def __init__(self, tmp_path):
        self.sys = str(tmp_path / "sys")
        self.proc = str(tmp_path / "proc")
        self.dev = str(tmp_path / "dev")        # for VG/LV: not made here
        self.state = str(tmp_path / "dmsetup.json")
        self.state_dir = str(tmp_path / "var-lib-hottier")
        self.dirs = {}
        self.blockdevs = {}
        self.busy = set()
        os.makedirs(os.path.join(self.sys, "module", "dm_hottier"))
        write(os.path.join(self.proc, "self", "mountinfo"), "")
        write(os.path.join(self.proc, "swaps"), "Filename Type Size\n")
        self.new_boot("0f0e0d0c-0b0a-4908-8706-050403020100")
        self.save({"targets": ["hottier", "linear"], "devices": {}})

    def new_boot(self, boot_id):
        """What /proc says this boot is."""
        write(os.path.join(self.proc, "sys", "kernel", "random", "boot_id"),
              boot_id + "\n")

    def load(self):
        with open(self.state) as f:
            return json.load(f)

    def save(self, state):
        with open(self.state, "w") as f:
            json.dump(state, f)

    def dmsetup_log(self):
        return self.load().get("log", [])

    def messages(self):
        return [" ".join(c[3:]) for c in self.dmsetup_log()
                if c[0] == "message"]

    def system(self, euid=0):
        return FakeSystem(self.blockdevs, self.busy, sysfs_root=self.sys,
                          dmsetup=[sys.executable, FAKE_DMSETUP, self.state],
                          proc_root=self.proc, modprobe=["true"], euid=euid,
                          dev_root=self.dev, state_dir=self.state_dir)

    def run(self, *argv, euid=0):
        """(exit status, stdout) of hottierctl argv against this tree."""
        out = io.StringIO()
        rc = cli.main(list(argv), system=self.system(euid), out=out)
        return rc, out.getvalue()

    def link(self, target, link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(target, link)

    def block(self, name, devnum, sectors=2097152, scheduler=None,
              slaves=(), virtual=False, node=None):
        """A whole block device; slaves are names of devices below it."""
        bus = "virtual" if virtual else "pci0000:00"
        base = os.path.join(self.sys, "devices", bus, "block", name)
        self._node(base, name, devnum, sectors, node)
        if scheduler is not None:
            write(os.path.join(base, "queue", "scheduler"), scheduler)
        write(os.path.join(base, "queue", "read_ahead_kb"), "128\n")
        os.makedirs(os.path.join(base, "slaves"))
        for slave in slaves:
            self.link(self.dirs[slave], os.path.join(base, "slaves", slave))
            self.link(base, os.path.join(self.dirs[slave], "holders", name))
        self.link(base, os.path.join(self.sys, "block", name))
        return base

    def partition(self, disk, name, devnum, sectors=1048576, node=None):
        base = os.path.join(self.dirs[disk], name)
        self._node(base, name, devnum, sectors, node)
        write(os.path.join(base, "partition"), "1\n")
        return base

    def _node(self, base, name, devnum, sectors, node):
        write(os.path.join(base, "dev"), devnum + "\n")
        write(os.path.join(base, "size"), f"{sectors}\n")
        os.makedirs(os.path.join(base, "holders"))
        self.link(base, os.path.join(self.sys, "dev", "block", devnum))
        self.dirs[name] = base
        self.blockdevs[node or f"/dev/{name}"] = devnum

    def hottier(self, name, kname="dm-3", devnum="253:3", hdd="sdb",
                ssd="nvme0n1", sectors=2097152, extent=2048, stats=None,
                keys=None, suspended=False):
        """A hottier device over the devices named hdd and ssd (None: a
        table with no SSD, "-")."""
        stats = dict(STATS, **(stats or {}))
        keys = dict(KEYS, **(keys or {}))
        base = self.block(kname, devnum, sectors, scheduler="none",
                          slaves=sorted({hdd, ssd} - {None}), virtual=True)
        write(os.path.join(base, "dm", "name"), name + "\n")
        write(os.path.join(base, "dm", "uuid"), f"HOTTIER-{name}\n")
        write(os.path.join(base, "dm", "suspended"),
              "1\n" if suspended else "0\n")
        if not suspended:
            files = dict(keys, extent_sectors=extent, **stats)
            for f, v in files.items():
                write(os.path.join(base, "hottier", f), f"{v}\n")
        hdd_num, ssd_num = (read(os.path.join(self.dirs[d], "dev")).strip()
                            if d else "-" for d in (hdd, ssd))
        state = self.load()
        state["devices"][name] = {
            "table": table_line(sectors, hdd_num, ssd_num, extent, keys),
            "status": status_line(sectors, stats)}
        self.save(state)
        return base

    def set_dmsetup(self, **changes):
        state = self.load()
        state.update(changes)
        self.save(state)

    def set_messages(self, name, messages):
        state = self.load()
        state["devices"][name]["messages"] = messages
        self.save(state)

    def set_effects(self, name, message, kname="dm-3", **fields):
        """The sysfs values of device name (kernel name kname) that the
        message, once accepted, sets."""
        state = self.load()
        base = os.path.join(self.sys, "block", kname, "hottier")
        state["devices"][name].setdefault("effects", {})[message] = {
            os.path.join(base, f): f"{v}\n" for f, v in fields.items()}
        self.save(state)

    def mount(self, devnum, where, fstype):
        with open(os.path.join(self.proc, "self", "mountinfo"), "a") as f:
            f.write(f"36 25 {devnum} / {where} rw,relatime shared:1 - "
                    f"{fstype} /dev/x rw\n")
