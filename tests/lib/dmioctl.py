"""`dmsetup status` and `dmsetup message` through device-mapper's ioctls.

Under TCG, starting dmsetup costs about 0.2 s, and the tests poll a
device's status counters thousands of times: these are the same two ioctls
dmsetup makes (DM_TABLE_STATUS, DM_TARGET_MSG, <linux/dm-ioctl.h>), on
/dev/mapper/control, with the same output. Create, reload and remove go
through dmsetup, which syncs with udev, and so do suspend and resume but
in the crash cuts, which suspend and resume their shims 100 times a run
(suspend() and resume() here: DM_DEV_SUSPEND, with no udev cookie).

create() and remove() are for private devices (devices.PrivateDmDevice):
their udev cookie carries only the flags that turn udev's device-mapper
rules off (no /dev/mapper link, no blkid probe, no watch), as LVM does
for its hidden layers, and nothing waits for udev (3.3 s a device
created and removed beside a load, under TCG). test_crash.py checks its
crash images through them. remove() with a cookie of
0 removes a device dmsetup made, without waiting for udev to handle it.
"""

import errno
import fcntl
import os
import struct
import subprocess
import time

CONTROL = "/dev/mapper/control"

# struct dm_ioctl: version[3], data_size, data_start, target_count,
# open_count, flags, event_nr, padding, dev, name[128], uuid[129], data[7].
_HEADER = struct.Struct("=3IIIIiIIIQ128s129s7s")
_SPEC = struct.Struct("=QQiI16s")          # struct dm_target_spec
_DATA_START = (_HEADER.size + 7) & ~7      # where the kernel puts results

_DM_IOCTL = 0xfd
_DEV_CREATE_CMD = 3
_DEV_REMOVE_CMD = 4
_DEV_SUSPEND_CMD = 6
_TABLE_LOAD_CMD = 9
_TABLE_STATUS_CMD = 12
_TARGET_MSG_CMD = 14
_SUSPEND = 1 << 1
_BUFFER_FULL = 1 << 8
_SKIP_LOCKFS = 1 << 10
_NOFLUSH = 1 << 11
_DATA_OUT = 1 << 16

# A udev cookie with flags and no semaphore (libdevmapper.h: the flags are
# its top 16 bits; `dmsetup udevcomplete` ignores a cookie whose low bits
# are 0): DM_UDEV_DISABLE_DM_RULES_FLAG, _SUBSYSTEM_RULES_FLAG,
# _DISK_RULES_FLAG and _OTHER_RULES_FLAG.
PRIVATE_COOKIE = (0x01 | 0x02 | 0x04 | 0x08) << 16


def _iowr(nr):
    return (3 << 30) | (_HEADER.size << 16) | (_DM_IOCTL << 8) | nr


def _call(cmd, name, payload=b"", flags=0, targets=0, event_nr=0):
    """One ioctl on the device called name; the buffer it filled and the
    header's fields. Grows the buffer while the kernel says it is full.
    event_nr is the udev cookie of a resume or a remove."""
    size = max(64 << 10, _DATA_START + len(payload))
    while True:
        buf = bytearray(size)
        _HEADER.pack_into(buf, 0, 4, 0, 0, size, _DATA_START, targets, 0,
                          flags, event_nr, 0, 0, name.encode(), b"", b"")
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


def _targets(table):
    """DM_TABLE_LOAD's payload for a table of lines "start length type
    params": a dm_target_spec each, its params after it, 8-byte aligned,
    next the bytes from this spec to the next one."""
    out = b""
    lines = [line.split(None, 3) for line in table.splitlines()
             if line.strip()]
    for words in lines:
        if len(words) < 3:
            raise ValueError(f"not a table line: {' '.join(words)}")
        params = (words[3] if len(words) > 3 else "").encode() + b"\0"
        params += bytes(-(_SPEC.size + len(params)) % 8)
        out += _SPEC.pack(int(words[0]), int(words[1]), 0,
                          _SPEC.size + len(params), words[2].encode())
        out += params
    return out, len(lines)


def create(name, table, cookie=PRIVATE_COOKIE):
    """`dmsetup create name --table table` without waiting for udev: the
    device, its table loaded and resumed with cookie. Returns its device
    number (its node is /dev/dm-<minor>, made by devtmpfs). A table the
    target refuses leaves no device."""
    payload, n = _targets(table)
    _, fields = _call(_DEV_CREATE_CMD, name)
    try:
        _call(_TABLE_LOAD_CMD, name, payload, targets=n)
        _call(_DEV_SUSPEND_CMD, name, event_nr=cookie)
    except OSError:
        _call(_DEV_REMOVE_CMD, name, event_nr=cookie)
        raise
    return fields[10]


def remove(name, cookie=PRIVATE_COOKIE, retries=25):
    """`dmsetup remove --retry name` without waiting for udev: retried
    while the device is busy (5 s, as dmsetup). A cookie of 0 lets udev's
    rules handle the removal as usual (its links), in their own time."""
    for attempt in range(retries + 1):
        try:
            _call(_DEV_REMOVE_CMD, name, event_nr=cookie)
            return ""
        except OSError as e:
            if e.errno != errno.EBUSY or attempt == retries:
                raise
            time.sleep(0.2)


def run(args, fn, *fn_args):
    """fn(*fn_args) as a CompletedProcess of the dmsetup command args:
    CalledProcessError, as devices.run() raises, when the ioctl fails.
    The CompletedProcess's stdout is what fn returned."""
    try:
        out = fn(*fn_args)
    except OSError as e:
        what = errno.errorcode.get(e.errno, str(e.errno))
        raise subprocess.CalledProcessError(
            1, args, "", f"device-mapper: {args[1]} ioctl on {args[2]} "
            f"failed: {e.strerror} ({what})\n") from e
    return subprocess.CompletedProcess(args, 0, out, "")
