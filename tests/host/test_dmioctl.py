"""dmioctl's DM_TABLE_LOAD payload, as <linux/dm-ioctl.h> lays it out (the
guest tests load it into a kernel: test_private_devices.py)."""

import os
import struct
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import dmioctl  # noqa: E402

SPEC = struct.Struct("=QQiI16s")


def specs(payload, n):
    """The (start, length, type, params) of n specs, following next."""
    out, at = [], 0
    for _ in range(n):
        start, length, status, nxt, ttype = SPEC.unpack_from(payload, at)
        assert status == 0
        assert nxt % 8 == 0 and nxt > SPEC.size
        params = payload[at + SPEC.size:at + nxt]
        assert params.rstrip(b"\0") == params.split(b"\0", 1)[0]
        out.append((start, length, ttype.rstrip(b"\0").decode(),
                    params.split(b"\0", 1)[0].decode()))
        at += nxt
    assert at == len(payload)
    return out


def test_one_target_with_its_params_nul_ended_and_aligned():
    payload, n = dmioctl._targets("0 2048 linear /dev/nullb0 0")
    assert n == 1
    assert specs(payload, n) == [(0, 2048, "linear", "/dev/nullb0 0")]


def test_several_targets_next_is_relative_to_each_spec():
    table = ("0 100 linear /dev/a 0\n"
             "100 8 error\n"
             "108 16 hottier /dev/b /dev/c 256 2 routing ssd\n")
    payload, n = dmioctl._targets(table)
    assert n == 3
    assert specs(payload, n) == [
        (0, 100, "linear", "/dev/a 0"),
        (100, 8, "error", ""),
        (108, 16, "hottier", "/dev/b /dev/c 256 2 routing ssd")]


@pytest.mark.parametrize("params", ["", "x", "1234567", "12345678",
                                    "a b c d e f g h i j"])
def test_every_params_length_pads_to_8(params):
    payload, _ = dmioctl._targets(f"0 8 t {params}")
    assert len(payload) % 8 == 0
    assert specs(payload, 1)[0][3] == params


@pytest.mark.parametrize("table", ["0 8", "zero 8 linear /dev/a 0",
                                   "0 8 linear /dev/a 0\n8"])
def test_a_line_that_is_not_a_table_line_is_refused(table):
    with pytest.raises(ValueError):
        dmioctl._targets(table)


def test_private_cookie_carries_flags_only():
    # The low 16 bits, the semaphore's, are 0: no one waits on it.
    assert dmioctl.PRIVATE_COOKIE & 0xffff == 0
    # The disk rules' flag (blkid, links) and the dm rules' (the
    # /dev/mapper link) among them.
    flags = dmioctl.PRIVATE_COOKIE >> 16
    assert flags & 0x04 and flags & 0x01
