"""Where hottierctl meets the system: sysfs, dmsetup, /proc. Every path
and command is injectable, so tests run against fake trees."""

import errno
import glob
import os
import shlex
import stat
import subprocess

from . import HottierError
from .table import FIELDS, KEYS, field_value, parse_status, parse_table

UUID_PREFIX = "HOTTIER-"


# What a sysfs open, read or write fails with when the directory goes
# under it: ENOENT at lookup, ENODEV once the file is being removed.
GONE = (errno.ENOENT, errno.ENODEV)


def read_text(path):
    with open(path) as f:
        return f.read().strip()


def write_text(path, value):
    """One write of a sysfs value; OSError carries the kernel's refusal.
    The file is never created: a creating open (the shell's ">") of a
    file missing from a sysfs directory that is being built or torn down
    fails with EACCES, since sysfs directories cannot create files; this
    open fails with ENOENT, which says what happened."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w") as f:
        f.write(value)


# udev runs RUN programs with a minimal environment (a PATH without sbin,
# or none): the system tools are looked for in these too.
SYSTEM_PATH = "/usr/local/sbin:/usr/sbin:/sbin:/usr/local/bin:/usr/bin:/bin"


def which(name, path):
    """The first executable file name in the directories of path, or None
    (shutil.which() without the cost of importing shutil at every start
    of hottierctl)."""
    for d in path.split(os.pathsep):
        f = os.path.join(d or os.curdir, name)
        if os.path.isfile(f) and os.access(f, os.X_OK):
            return f
    return None


def command(cmd, env=os.environ):
    """A command as a list: a string is split as a shell would; a bare
    program name is found in PATH, then in the system directories."""
    words = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    if words and os.sep not in words[0]:
        path = ":".join(p for p in (env.get("PATH"), SYSTEM_PATH) if p)
        words[0] = which(words[0], path) or words[0]
    return words


class System:
    """sysfs under sysfs_root, mounts and swaps from proc_root, device
    nodes named for VG/LV (tab.lv_path()) under dev_root; dmsetup and
    modprobe are commands (lists, or strings split as a shell would);
    what hottierctl keeps across boots under state_dir. from_env() takes
    them from HOTTIER_SYSFS_ROOT, HOTTIER_PROC_ROOT, HOTTIER_DMSETUP,
    HOTTIER_MODPROBE and HOTTIER_STATE_DIR."""

    def __init__(self, sysfs_root="/sys", dmsetup="dmsetup",
                 proc_root="/proc", modprobe="modprobe", euid=None,
                 dev_root="/dev", state_dir="/var/lib/hottier"):
        self.sysfs_root = sysfs_root
        self.dev_root = dev_root
        self.state_dir = state_dir
        self.dmsetup_cmd = command(dmsetup)
        self.proc_root = proc_root
        self.modprobe_cmd = command(modprobe)
        self.euid = os.geteuid() if euid is None else euid

    @classmethod
    def from_env(cls, env=os.environ):
        return cls(sysfs_root=env.get("HOTTIER_SYSFS_ROOT", "/sys"),
                   dmsetup=env.get("HOTTIER_DMSETUP", "dmsetup"),
                   proc_root=env.get("HOTTIER_PROC_ROOT", "/proc"),
                   modprobe=env.get("HOTTIER_MODPROBE", "modprobe"),
                   state_dir=env.get("HOTTIER_STATE_DIR",
                                     "/var/lib/hottier"))

    def sys(self, *parts):
        return os.path.join(self.sysfs_root, *parts)

    def dmsetup(self, *args):
        """dmsetup's stdout; its last error line if it fails."""
        cmd = self.dmsetup_cmd + list(args)
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            raise HottierError(f"cannot run {cmd[0]}: {e.strerror}")
        if r.returncode:
            lines = [line for line in r.stderr.splitlines()
                     if line.strip() and line != "Command failed."]
            lines = lines or [f"exit status {r.returncode}"]
            raise HottierError(f"dmsetup {args[0]} failed: {lines[-1]}")
        return r.stdout

    def dm_exists(self, name):
        try:
            self.dmsetup("info", name)
        except HottierError:
            return False
        return True

    def block_devnum(self, path):
        """"major:minor" of the block device at path."""
        return devnum(stat_kind(path, stat.S_ISBLK, "block device").st_rdev)

    def open_exclusive(self, path):
        """Opens and closes path with O_EXCL: fails (EBUSY) while a
        filesystem, a dm or md device or a program holds it."""
        os.close(os.open(path, os.O_RDONLY | os.O_EXCL))

    def require_root(self):
        if self.euid != 0:
            raise HottierError("must be run as root")

    def module_loaded(self):
        if os.path.isdir(self.sys("module", "dm_hottier")):
            return True
        try:
            return "hottier" in self.dmsetup("targets").split()
        except HottierError:            # no device-mapper at all
            return False

    def require_module(self, load=False):
        """Refuses to go on without the target; with load, modprobes it
        first (dmsetup create would too, with a vaguer error)."""
        if self.module_loaded():
            return
        if load:
            subprocess.run(self.modprobe_cmd + ["dm-hottier"],
                           capture_output=True)
            if self.module_loaded():
                return
        raise HottierError("the dm-hottier module is not loaded "
                           "(modprobe dm-hottier)")

    def dm_kname(self, name):
        """The kernel name (dm-N) of the dm device called name, or None."""
        for path in sorted(glob.glob(self.sys("block", "dm-*", "dm",
                                              "name"))):
            if read_text(path) == name:
                return path.split(os.sep)[-3]
        return None

    def device(self, name):
        """The hottier device called name; refuses any other."""
        kname = self.dm_kname(name)
        if kname is None:
            raise HottierError(f"no device named '{name}'")
        dev = Device(self, name, kname)
        dev.table()                     # refuses a device of another target
        return dev

    def hottier_names(self):
        """Names of the hottier devices, as dmsetup lists them."""
        out = self.dmsetup("table", "--target", "hottier")
        return [line.split(":", 1)[0] for line in out.splitlines()
                if ": " in line]

    def devnum_path(self, devnum):
        """The sysfs directory of a block device given as "major:minor"."""
        return os.path.realpath(self.sys("dev", "block", devnum))

    def boot_id(self):
        """This boot's random id (proc's boot_id), or "" if unreadable."""
        try:
            return read_text(os.path.join(self.proc_root, "sys", "kernel",
                                          "random", "boot_id"))
        except OSError:
            return ""

    def block_name(self, devnum):
        """The kernel name (sda, nvme0n1p2) of "major:minor"; "-" (a table
        with no SSD) and a number with no device come back as given."""
        path = self.devnum_path(devnum)
        return os.path.basename(path) if os.path.isdir(path) else devnum

    def mounts(self):
        """(major:minor, mount point, fs type) of every mount."""
        mounts = []
        with open(os.path.join(self.proc_root, "self", "mountinfo")) as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields = left.split()
                mounts.append((fields[2], unescape(fields[4]),
                               right.split()[0]))
        return mounts

    def swaps(self):
        """Paths of the active swap areas."""
        try:
            with open(os.path.join(self.proc_root, "swaps")) as f:
                return [line.split()[0] for line in f.readlines()[1:]]
        except FileNotFoundError:
            return []


def stat_kind(path, is_kind, kind):
    """os.stat(path), refused unless is_kind(st_mode)."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise HottierError(f"{path}: {e.strerror}")
    if not is_kind(st.st_mode):
        raise HottierError(f"{path}: not a {kind}")
    return st


def devnum(dev):
    """"major:minor" of a device number."""
    return f"{os.major(dev)}:{os.minor(dev)}"


def typed(value):
    """A number as an int, anything else as it is."""
    text = str(value)
    return int(text) if text.isdigit() else text


def unescape(path):
    """mountinfo's octal escapes (\\040 for a space) undone."""
    return path.encode().decode("unicode_escape").encode(
        "latin-1").decode()


class Device:
    """A hottier device: its dm name, kernel name (dm-N), and the sysfs
    directory its live table has while resumed."""

    def __init__(self, system, name, kname):
        self.system = system
        self.name = name
        self.kname = kname
        self._table = None

    def sysdir(self, *parts):
        return self.system.sys("block", self.kname, *parts)

    def devnum(self):
        return read_text(self.sysdir("dev"))

    def sectors(self):
        return int(read_text(self.sysdir("size")))

    def suspended(self):
        return read_text(self.sysdir("dm", "suspended")) == "1"

    def table(self):
        if self._table is None:
            line = self.system.dmsetup("table", self.name)
            if " hottier " not in f" {line} ":
                raise HottierError(f"'{self.name}' is not a hottier device")
            self._table = parse_table(line)
        return self._table

    def stats(self):
        """Every status field: from sysfs, or dmsetup status while
        suspended."""
        values = self.read_all(FIELDS)
        if values is None:
            return parse_status(self.system.dmsetup("status", self.name))
        return {f: field_value(f, v) for f, v in values.items()}

    def config(self):
        """extent_sectors and every key with its current value."""
        values = self.read_all(["extent_sectors", *KEYS])
        if values is None:
            t = self.table()
            values = {"extent_sectors": t["extent_sectors"], **t["keys"]}
        return {k: typed(v) for k, v in values.items()}

    def read_all(self, names):
        """The sysfs files named, or None if the directory is absent
        (suspended) or goes while they are read (a suspend or reload under
        us)."""
        try:
            return {n: self.read(n) for n in names}
        except OSError as e:
            if e.errno in GONE:
                return None
            raise

    def read(self, name):
        return read_text(self.sysdir("hottier", name))

    def set(self, key, value):
        """A tunable through sysfs, or the <key> <value> message while
        suspended; the kernel's refusal becomes one line."""
        try:
            write_text(self.sysdir("hottier", key), value)
        except OSError as e:
            if e.errno in GONE:
                # No directory (suspended), or a suspend or reload took
                # it away: the message reaches the live table.
                self.message(key, value)
                return
            if e.errno == errno.EINVAL:
                raise HottierError(f"{self.name}: {key}={value} refused by "
                                   "the kernel (see dmesg)")
            raise HottierError(f"{self.name}: cannot set {key}: "
                               f"{e.strerror}")

    def message(self, *words):
        return self.system.dmsetup("message", self.name, "0", *words)
