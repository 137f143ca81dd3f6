"""devices.PrivateDmDevice, through which test_crash.py checks its crash
images: made and removed with device-mapper's ioctls and a udev cookie
that turns udev's device-mapper rules off, as LVM's hidden layers are. Its table is the one given, its node is the kernel's, and
udev neither links nor probes it; a refused table leaves no device."""

import os
import subprocess

import pytest

import devices
from conftest import unique


def dm_exists(name):
    return subprocess.run(["dmsetup", "info", name], capture_output=True,
                          check=False).returncode == 0


def udev_properties(path):
    out = devices.run("udevadm", "info", "--query=property",
                      f"--name={path}").stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def test_a_private_device_has_its_table_and_udev_leaves_it_alone():
    with devices.fast(unique("pv"), 16) as n:
        # A filesystem under it: udev's blkid would find it and link it.
        devices.run("mkfs.ext4", "-q", "-F", n.path)
        half = devices.sectors(n.path) // 2
        table = (f"0 {half} linear {n.path} 0\n"
                 f"{half} {half} linear {n.path} {half}")
        name = unique("priv")
        with devices.PrivateDmDevice(name, table) as p:
            lines = devices.run("dmsetup", "table",
                                name).stdout.strip().splitlines()
            assert len(lines) == 2, lines
            assert lines[0].split()[:3] == ["0", str(half), "linear"], lines
            st = os.stat(p.path)
            dev = devices.run("dmsetup", "info", "-c", "--noheadings",
                              "-o", "major,minor", name).stdout.strip()
            assert f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" == dev
            # Its reads are the member's.
            with open(p.path, "rb") as a, open(n.path, "rb") as b:
                assert a.read(1 << 20) == b.read(1 << 20)
            devices.settle()
            assert not os.path.exists(f"/dev/mapper/{name}")
            props = udev_properties(p.path)
            assert props.get("DM_UDEV_DISABLE_DISK_RULES_FLAG") == "1", props
            assert "ID_FS_TYPE" not in props, props
            # The same table through dmsetup, for comparison: linked and
            # probed.
            with devices.DmDevice(unique("pub"), table) as d:
                assert udev_properties(d.path).get("ID_FS_TYPE") == "ext4"
        assert not dm_exists(name)
        devices.settle()


def test_a_refused_table_raises_and_leaves_no_device():
    name = unique("priv")
    with pytest.raises(subprocess.CalledProcessError) as e:
        devices.PrivateDmDevice(name, "0 8 linear /dev/no-such-device 0")
    assert "create ioctl" in e.value.stderr, e.value.stderr
    assert not dm_exists(name)
