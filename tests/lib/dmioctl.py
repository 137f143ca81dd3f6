"""`dmsetup status` and `dmsetup message` through device-mapper's ioctls.

Under TCG, starting dmsetup costs about 0.2 s, and the tests poll a
device's status counters thousands of times: these are the same two ioctls
dmsetup makes (DM_TABLE_STATUS, DM_TARGET_MSG, <linux/dm-ioctl.h>), on
/dev/mapper/control, with the same output. Create, reload and remove go
through dmsetup, which syncs with udev, and so do suspend and resume but
in the crash cuts, which suspend and resume their shims 100 times a run
(suspend() and resume() here: DM_DEV_SUSPEND, with no udev cookie).
"""

import errno
import fcntl
import os
import struct
import subprocess

CONTROL = "/dev/mapper/control"

# struct dm_ioctl: version[3], data_size, data_start, target_count,
# open_count, flags, event_nr, padding, dev, name[128], uuid[129], data[7].
_HEADER = struct.Struct("=3IIIIiIIIQ128s129s7s")
_SPEC = struct.Struct("=QQiI16s")          # struct dm_target_spec
_DATA_START = (_HEADER.size + 7) & ~7      # where the kernel puts results

_DM_IOCTL = 0xfd
_DEV_SUSPEND_CMD = 6
_TABLE_STATUS_CMD = 12
_TARGET_MSG_CMD = 14
_SUSPEND = 1 << 1
_BUFFER_FULL = 1 << 8
_SKIP_LOCKFS = 1 << 10
_NOFLUSH = 1 << 11
_DATA_OUT = 1 << 16


def _iowr(nr):
    return (3 << 30) | (_HEADER.size << 16) | (_DM_IOCTL << 8) | nr


def _call(cmd, name, payload=b"", flags=0):
    """One ioctl on the device called name; the buffer it filled and the
    header's fields. Grows the buffer while the kernel says it is full."""
    size = 64 << 10
    while True:
        buf = bytearray(size)
        _HEADER.pack_into(buf, 0, 4, 0, 0, size, _DATA_START, 0, 0, flags,
                          0, 0, 0, name.encode(), b"", b"")
        buf[_DATA_START:_DATA_START + len(payload)] = payload
        fd = os.open(CONTROL, os.O_RDWR)
        try:
            fcntl.ioctl(fd, _iowr(cmd), buf)
        finally:
            os.close(fd)
        fields = _HEADER.unpack_from(buf)
        flags = fields[7]
        if not flags & _BUFFER_FULL:
            return buf, fields
        size *= 4


def _cstring(buf, at):
    end = buf.index(0, at)
    return buf[at:end].decode()


def status(name):
    """What `dmsetup status name` prints: a line per target, start,
    length, target type and its status."""
    buf, fields = _call(_TABLE_STATUS_CMD, name)
    data_start, count = fields[4], fields[5]
    lines = []
    at = data_start
    for _ in range(count):
        start, length, _st, nxt, ttype = _SPEC.unpack_from(buf, at)
        ttype = ttype.split(b"\0", 1)[0].decode()
        params = _cstring(buf, at + _SPEC.size)
        lines.append(f"{start} {length} {ttype} {params}".rstrip())
        at = data_start + nxt
    return "".join(line + "\n" for line in lines)


def message(name, sector, *words):
    """What `dmsetup message name sector words...` prints: the target's
    answer, if it gave one, ending in a newline."""
    payload = struct.pack("=Q", sector) + " ".join(words).encode() + b"\0"
    buf, fields = _call(_TARGET_MSG_CMD, name, payload)
    if not fields[7] & _DATA_OUT:
        return ""
    out = _cstring(buf, fields[4])
    return out if not out or out.endswith("\n") else out + "\n"


def suspend(name, noflush=False, nolockfs=False):
    """`dmsetup suspend [--noflush] [--nolockfs] name`, without waiting
    for udev (a suspend sends no event)."""
    flags = _SUSPEND | (_NOFLUSH if noflush else 0) | \
        (_SKIP_LOCKFS if nolockfs else 0)
    _call(_DEV_SUSPEND_CMD, name, flags=flags)
    return ""


def resume(name):
    """`dmsetup resume name` with no udev cookie: udev handles the change
    event the resume sends on its own time (udevadm settle waits for it)."""
    _call(_DEV_SUSPEND_CMD, name)
    return ""


def run(args, fn, *fn_args):
    """fn(*fn_args) as a CompletedProcess of the dmsetup command args:
    CalledProcessError, as devices.run() raises, when the ioctl fails."""
    try:
        out = fn(*fn_args)
    except OSError as e:
        what = errno.errorcode.get(e.errno, str(e.errno))
        raise subprocess.CalledProcessError(
            1, args, "", f"device-mapper: {args[1]} ioctl on {args[2]} "
            f"failed: {e.strerror} ({what})\n") from e
    return subprocess.CompletedProcess(args, 0, out, "")
