"""Members hidden from the system (issue 15, item 2; Documentation/
hottier.rst, "Members"): the udev rules 59- and 68-hottier-members.rules
with hottierctl udev-member, and hottierctl lvm-filter, keyed on a
hottiertab.

The rules are installed in /run/udev/rules.d for each test only, with the
repository's hottierctl in them, and removed at teardown. The tab is the
guest's /etc/hottiertab when /etc is an overlay (vng's default: writes stay
in the guest), so the rules run as installed; else a file of the test's,
with the rules' /etc/hottiertab pointed at it.

The guest's udev runs the host's Debian rules: 60-persistent-storage.rules
(blkid, by-uuid links) for loop devices, 60-persistent-storage-dm.rules for
dm devices; null_blk devices (nullb is not in 60-persistent-storage's list)
get no by-uuid link with or without the rules. So the HDD members are a
dm-linear (an LV's path through the rules) and a loop device (a disk's)
over null_blk devices, and the test first checks that without the rules
the member does claim the filesystem's by-uuid link. How long each step
took goes to $HOTTIER_RESULTS/members-phases.txt.
"""

import contextlib
import json
import os
import subprocess
import tempfile
import time

import pytest

import devices
from conftest import hottier_table, unique
from test_stacks import LVM_CONF, lvm_warnings

pytestmark = pytest.mark.system

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
HOTTIERCTL = os.path.join(REPO, "userspace", "hottierctl")
RULES = ("59-hottier-members.rules", "68-hottier-members.rules")
RULES_DIR = "/run/udev/rules.d"
ETC_TAB = "/etc/hottiertab"
EXTENT = 128                    # 64 KiB


class Phases:
    """How long each step of a test took, appended to
    $HOTTIER_RESULTS/members-phases.txt: the guest runs under TCG."""

    def __init__(self, test):
        self.test, self.t = test, time.monotonic()
        self.path = os.path.join(os.environ.get("HOTTIER_RESULTS", "/tmp"),
                                 "members-phases.txt")

    def __call__(self, what):
        now = time.monotonic()
        with open(self.path, "a") as f:
            f.write(f"{self.test}: {what}: {now - self.t:.1f} s\n")
        self.t = now


def etc_is_an_overlay():
    with open("/proc/self/mounts") as f:
        return any(line.split()[1:3] == ["/etc", "overlay"] for line in f)


@contextlib.contextmanager
def member_rules(text):
    """The two rule files installed with a hottiertab holding text; yields
    the tab's path. Everything is removed on exit, and udev reloaded."""
    with contextlib.ExitStack() as stack:
        if etc_is_an_overlay():
            assert not os.path.exists(ETC_TAB), "the guest has a hottiertab"
            tab = ETC_TAB
        else:
            tab = os.path.join(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="members")), "hottiertab")
        with open(tab, "w") as f:
            f.write(text)
        stack.callback(os.unlink, tab)
        os.makedirs(RULES_DIR, exist_ok=True)
        stack.callback(devices.run, "udevadm", "control", "--reload")
        for rule in RULES:
            with open(os.path.join(REPO, "userspace", rule)) as f:
                body = f.read().replace("/usr/local/sbin/hottierctl",
                                        HOTTIERCTL)
            if tab != ETC_TAB:
                body = body.replace(ETC_TAB, tab)
            path = os.path.join(RULES_DIR, rule)
            with open(path, "w") as f:
                f.write(body)
            stack.callback(os.unlink, path)
        devices.run("udevadm", "control", "--reload")
        yield tab


def trigger(*paths):
    """A change event for each device, as `udevadm trigger` at boot or
    after a tab edit sends; then wait for udev."""
    devices.run("udevadm", "trigger", "--action=change", *paths)
    devices.run("udevadm", "settle", "--timeout=60")


def props(path):
    out = devices.run("udevadm", "info", "--query=property", path).stdout
    return dict(line.split("=", 1) for line in out.splitlines()
                if "=" in line)


def symlinks(path):
    return devices.run("udevadm", "info", "--query=symlink",
                       path).stdout.split()


def claimants(link):
    """Every device in udev's database that claims /dev/<link>."""
    out = devices.run("udevadm", "info", "--export-db").stdout
    found = []
    for record in out.split("\n\n"):
        lines = record.splitlines()
        if f"S: {link}" in lines:
            found += ["/dev/" + line[3:] for line in lines
                      if line.startswith("N: ")]
    return sorted(found)


def fs_uuid(path):
    return devices.run("blkid", "-p", "-o", "value", "-s", "UUID",
                       path).stdout.strip()


def mkfs(path):
    devices.run("mkfs.ext4", "-q", "-F", "-E", "nodiscard", path)
    devices.settle()
    return fs_uuid(path)


def loop(stack, backing):
    devices.modprobe("loop")
    path = devices.run("losetup", "--show", "-f", backing).stdout.strip()
    stack.callback(devices.run, "losetup", "-d", path, check=False)
    devices.wait_for(path)
    devices.settle()
    return path


def assert_hidden(path, role, name):
    p = props(path)
    assert (p.get("HOTTIER_MEMBER"), p.get("HOTTIER_DEVICE"),
            p.get("SYSTEMD_READY"), p.get("UDISKS_IGNORE")) == \
        (role, name, "0", "1"), p
    # 69-lvm and the rest see no filesystem on it.
    assert not p.get("ID_FS_TYPE") and not p.get("ID_FS_USAGE"), p
    return p


def test_members_lose_their_filesystem_links_up_and_down(hottier_module):
    """Two tab entries. The first is up: its HDD a loop device (a disk's
    path through 60-persistent-storage.rules), named by its node, which
    claims the device's by-uuid link until the rules are installed and a
    change event is triggered. The second is down: its HDD a dm-linear (an
    LV's path, 60-persistent-storage-dm.rules) created after the rules
    are, named by a by-id link that its own first events make (found by
    68-hottier-members.rules); its filesystem then has no by-uuid link at
    all until the device comes up."""
    phase = Phases("udev")
    with contextlib.ExitStack() as stack:
        raw1 = stack.enter_context(devices.fast(unique("mhdd"), 32))
        ssd1 = stack.enter_context(devices.fast(unique("mssd"), 16))
        raw2 = stack.enter_context(devices.fast(unique("mhdd"), 32))
        ssd2 = stack.enter_context(devices.fast(unique("mssd"), 16))
        phase("four null_blk")
        hdd1 = loop(stack, raw1.path)
        phase("loop")
        name1, name2 = unique("mem"), unique("mem")
        d1 = stack.enter_context(devices.DmDevice(
            name1, hottier_table(hdd1, ssd1.path, EXTENT)))
        phase("hottier device")
        uuid1 = mkfs(d1.path)
        phase("mkfs")
        assert uuid1 and fs_uuid(hdd1) == uuid1
        link1 = f"disk/by-uuid/{uuid1}"
        uuid2 = mkfs(raw2.path)
        link2 = f"disk/by-uuid/{uuid2}"
        phase("second mkfs")
        lin_name = unique("mem.hdd+")
        by_id2 = f"disk/by-id/dm-name-{lin_name}"

        # Without the rules the member claims the link too (and may get
        # it: udev picks one claimant).
        trigger(hdd1)
        phase("trigger without the rules")
        assert link1 in symlinks(hdd1)
        assert claimants(link1) == sorted(
            os.path.realpath(p) for p in (hdd1, d1.path)), claimants(link1)
        phase("claimants")

        tab = (f"# test\n{name1} {hdd1} {ssd1.path} 64K\n"
               f"{name2}  by-id/dm-name-{lin_name}  {ssd2.path}  64K\n")
        with member_rules(tab) as tab_path:
            phase(f"rules installed, the tab is {tab_path}")
            trigger(hdd1, ssd1.path, ssd2.path)
            phase("trigger with the rules")
            p = assert_hidden(hdd1, "hdd", name1)
            assert p.get("HOTTIER_MEMBER_FS_TYPE") == "ext4", p
            assert p.get("ID_FS_UUID") == uuid1, p  # kept for diagnosis
            assert link1 not in symlinks(hdd1)
            assert claimants(link1) == [os.path.realpath(d1.path)]
            assert os.path.realpath(f"/dev/{link1}") == \
                os.path.realpath(d1.path)
            for ssd, name in ((ssd1, name1), (ssd2, name2)):
                s = props(ssd.path)
                assert (s.get("HOTTIER_MEMBER"), s.get("HOTTIER_DEVICE"),
                        s.get("SYSTEMD_READY"), s.get("UDISKS_IGNORE")) == \
                    ("ssd", name, "0", "1"), s
            top = props(d1.path)
            assert "HOTTIER_MEMBER" not in top, top
            assert top.get("SYSTEMD_READY") != "0", top
            assert top.get("ID_FS_UUID") == uuid1, top

            # The second entry's HDD appears: hidden from its first events.
            phase("checks")
            assert not os.path.lexists(f"/dev/{by_id2}")
            lin = stack.enter_context(devices.linear(lin_name, raw2.path))
            phase("linear member")
            p = assert_hidden(lin.path, "hdd", name2)
            assert p.get("HOTTIER_MEMBER_FS_TYPE") == "ext4", p
            assert by_id2 in symlinks(lin.path)     # the tab's name stays
            assert os.path.realpath(f"/dev/{by_id2}") == \
                os.path.realpath(lin.path)
            assert claimants(link2) == []
            assert not os.path.lexists(f"/dev/{link2}")

            # It comes up: the link is the device's alone.
            d2 = stack.enter_context(devices.DmDevice(
                name2, hottier_table(lin.path, ssd2.path, EXTENT)))
            phase("second hottier device")
            assert claimants(link2) == [os.path.realpath(d2.path)]
            assert os.path.realpath(f"/dev/{link2}") == \
                os.path.realpath(d2.path)

        # Rules gone: the next event gives the member its link back.
        phase("rules removed")
        trigger(hdd1)
        assert "HOTTIER_MEMBER" not in props(hdd1)
        assert link1 in symlinks(hdd1)
        phase("trigger after")
    phase("teardown")


def lvm(env, *args, check=True):
    r = subprocess.run(["lvm", *args], capture_output=True, text=True,
                       env=env)
    if check and r.returncode:
        raise AssertionError(f"lvm {' '.join(args)}: exit {r.returncode}\n"
                             f"{r.stdout}{r.stderr}")
    return r


def pv_names(r):
    return sorted(os.path.realpath(line.split()[0])
                  for line in r.stdout.splitlines() if line.strip())


def test_lvm_filter_hides_a_member_carrying_a_pv_label(hottier_module,
                                                       tmp_path):
    """A PV on the hottier device: its raw HDD carries the same label.
    With the global_filter hottierctl lvm-filter prints for the tab, pvs
    sees the hottier device alone; without it, the member too."""
    with contextlib.ExitStack() as stack:
        raw = stack.enter_context(devices.fast(unique("mhdd"), 32))
        ssd = stack.enter_context(devices.fast(unique("mssd"), 16))
        # The member is a dm-linear 1 MiB into the null_blk, so that the
        # null_blk itself shows no label (LVM scans it too).
        lin = stack.enter_context(devices.DmDevice(
            unique("mem.pv+"),
            f"0 {devices.sectors(raw.path) - 2048} linear {raw.path} 2048"))
        name = unique("mem")
        tab = tmp_path / "hottiertab"
        tab.write_text(f"{name} by-id/dm-name-{lin.name} {ssd.path} 64K\n")
        d = stack.enter_context(devices.DmDevice(
            name, hottier_table(lin.path, ssd.path, EXTENT)))

        r = subprocess.run([HOTTIERCTL, "lvm-filter", "--tab", str(tab),
                            "--json"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        escaped = lin.name.replace(".", "\\.").replace("+", "\\+")
        assert out["global_filter"] == [
            f"r|^/dev/disk/by-id/dm-name-{escaped}$|",
            f"r|^{ssd.path}$|"], out
        text = subprocess.run([HOTTIERCTL, "lvm-filter", "--tab", str(tab)],
                              capture_output=True, text=True).stdout
        assert text == out["config"]
        section = text[text.index("{") + 1:text.rindex("}")]

        conf_dir = tmp_path / "lvm"
        conf_dir.mkdir()
        env = dict(os.environ, LVM_SYSTEM_DIR=str(conf_dir))
        base = LVM_CONF

        def configure(filtered):
            (conf_dir / "lvm.conf").write_text(base.format(
                dir=conf_dir, filter=section.lstrip("\n") if filtered
                else ""))

        configure(False)
        lvm(env, "pvcreate", "-y", d.path)
        stack.callback(lvm, env, "pvremove", "-ff", "-y", d.path,
                       check=False)
        devices.settle()
        assert devices.run("blkid", "-p", "-o", "value", "-s", "TYPE",
                           lin.path).stdout.strip() == "LVM2_member"

        # No filter: LVM finds the label on the member too.
        r = lvm(env, "pvs", "--noheadings", "-o", "pv_name", check=False)
        assert lvm_warnings(r) or os.path.realpath(lin.path) in \
            pv_names(r), (r.stdout, r.stderr)

        configure(True)
        r = lvm(env, "pvs", "--noheadings", "-o", "pv_name")
        assert lvm_warnings(r) == [], r.stderr
        assert pv_names(r) == [os.path.realpath(d.path)], r.stdout
