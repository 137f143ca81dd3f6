"""Filesystems and fio on top of the target, including reconfiguration."""

import hashlib
import json
import os
import subprocess
import tempfile
import threading
import time

import pytest


MKFS = {"ext4": ["mkfs.ext4", "-q", "-F"], "xfs": ["mkfs.xfs", "-q", "-f"]}
FSCK = {"ext4": ["e2fsck", "-f", "-n"], "xfs": ["xfs_repair", "-n"]}


def fill_files(root, count=24):
    """Files of varied sizes; returns {name: sha256}."""
    sums = {}
    for i in range(count):
        data = os.urandom(4096 * (1 + (i * 37) % 200) + i)
        name = f"f{i:03d}"
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
        sums[name] = hashlib.sha256(data).hexdigest()
    return sums


def check_files(root, sums):
    for name, digest in sums.items():
        with open(os.path.join(root, name), "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == digest, name


@pytest.mark.parametrize("fstype", [
    pytest.param("ext4", marks=pytest.mark.kernel),
    pytest.param("xfs", marks=pytest.mark.soak)])
def test_filesystem_files_survive_remount_and_fsck_is_clean(hottier, fstype):
    subprocess.run(MKFS[fstype] + [hottier.path], check=True,
                   capture_output=True)
    with tempfile.TemporaryDirectory() as mnt:
        subprocess.run(["mount", hottier.path, mnt], check=True)
        try:
            sums = fill_files(mnt)
        finally:
            subprocess.run(["umount", mnt], check=True)
        # Drop every cached page so the check reads through the target.
        subprocess.run(["blockdev", "--flushbufs", hottier.path], check=True)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        subprocess.run(["mount", hottier.path, mnt], check=True)
        try:
            check_files(mnt, sums)
            # Remove of a mounted device is refused and changes nothing.
            r = subprocess.run(["dmsetup", "remove", hottier.name],
                               capture_output=True, text=True)
            assert r.returncode != 0
            assert os.path.exists(hottier.path)
            check_files(mnt, sums)
        finally:
            subprocess.run(["umount", mnt], check=True)
    r = subprocess.run(FSCK[fstype] + [hottier.path], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def fio(*args):
    r = subprocess.run(["fio", "--output-format=json", *args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = r.stdout[r.stdout.index("{"):]
    return json.loads(out)


def fio_errors(result):
    return sum(j.get("error", 0) for j in result["jobs"])


VERIFY = ["--name=verify", "--ioengine=libaio", "--direct=1", "--bs=4k",
          "--iodepth=16", "--verify=crc32c", "--verify_fatal=1",
          "--randseed=4242", "--size=64M"]


def test_fio_random_writes_then_verified_reads(hottier):
    fio(f"--filename={hottier.path}", *VERIFY, "--rw=randwrite",
        "--do_verify=0")
    # Drop the target's clones from any cache: read back through it.
    res = fio(f"--filename={hottier.path}", *VERIFY, "--rw=randwrite",
              "--verify_only=1")
    assert fio_errors(res) == 0


def test_suspend_resume_and_reload_under_fio_keep_data(hottier):
    table = hottier.table()
    stop = threading.Event()
    errors = []

    def churn():
        try:
            while not stop.is_set():
                hottier.suspend()
                time.sleep(0.2)
                hottier.resume()
                time.sleep(0.3)
                hottier.reload(table)
                time.sleep(0.3)
        except Exception as e:      # surfaced below
            errors.append(e)

    t = threading.Thread(target=churn)
    t.start()
    try:
        res = fio(f"--filename={hottier.path}", *VERIFY, "--rw=randwrite",
                  "--verify_backlog=256", "--size=32M")
    finally:
        stop.set()
        t.join()
    assert not errors, errors
    assert fio_errors(res) == 0
    assert hottier.table() == table
    res = fio(f"--filename={hottier.path}", *VERIFY, "--rw=randwrite",
              "--size=32M", "--verify_only=1")
    assert fio_errors(res) == 0
