"""scripts/kernel-reports.sh finds the kernel's report lines, and only them."""

import os
import subprocess

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts",
                      "kernel-reports.sh")

REPORTS = [
    "[   12.345678] BUG: KASAN: slab-use-after-free in hottier_map+0x1/0x2",
    "[    3.000001] BUG: kernel NULL pointer dereference, address: 0000",
    "[    3.000001] BUG: sleeping function called from invalid context",
    "[    9.1] WARNING: CPU: 1 PID: 77 at drivers/md/dm.c:100 f+0x1/0x2",
    "[    9.1] WARNING: possible circular locking dependency detected",
    "[    9.1] Oops: 0002 [#1] PREEMPT SMP NOPTI",
    "[    9.1] general protection fault, probably for non-canonical address",
    "[    9.1] Kernel panic - not syncing: Fatal exception",
    "[    9.1] UBSAN: shift-out-of-bounds in drivers/md/x.c:1:2",
    "[  999.9] INFO: task kworker/0:1:42 blocked for more than 900 seconds.",
    "[  999.9] rcu: INFO: rcu_preempt self-detected stall on CPU",
    "kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
]

CLEAN = [
    "[    0.000000] Linux version 6.1.0-56-amd64",
    "[   14.554041] dm_hottier: loading out-of-tree module taints kernel.",
    "[   16.0] device-mapper: table: 254:1: hottier: Extent size must be a"
    " power of two (-EINVAL)",
    "[   16.0] EXT4-fs (dm-0): mounted filesystem with ordered data mode.",
    "[   16.0] some driver says: no BUG: here mid-line",
]


def scan(tmp_path, lines):
    log = tmp_path / "kernel.log"
    log.write_text("\n".join(lines) + "\n")
    return subprocess.run(["bash", SCRIPT, str(log)], capture_output=True,
                          text=True)


@pytest.mark.parametrize("line", REPORTS)
def test_each_report_kind_is_found(tmp_path, line):
    r = scan(tmp_path, CLEAN + [line])
    assert r.returncode == 0
    assert r.stdout.strip() == line


def test_a_clean_log_has_no_reports(tmp_path):
    r = scan(tmp_path, CLEAN)
    assert r.returncode == 1
    assert r.stdout == ""
