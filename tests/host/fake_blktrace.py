#!/usr/bin/env python3
"""A stand-in for blktrace (and iowatcher) in hottierctl's host tests.

    fake_blktrace.py SPEC.json -d DEV... -o - [-r DEBUGFS]
    fake_blktrace.py SPEC.json --iowatcher [iowatcher arguments...]

SPEC.json holds {"devices": {path: "major:minor"}, "events": [[path, cpu,
time_ns, action, rwbs, sector, nr, from "major:minor" or null,
from_sector], ...], "fail": error line, "die": error line, "dropped": n,
"torn": true, "log": [...]}. As blktrace it writes a time note for every
traced device (what the kernel writes when a trace starts), then the
events, as struct blk_io_trace records on stdout, the way "blktrace -o -"
does; then it
waits for SIGINT and exits 0, adding "SIGINT" to "stops" in SPEC.json
(the real one tears the kernel's traces down then). With "fail" it prints
the line and exits 1 at once; with "die", once the events are written;
with "torn", a record of zeros follows the events. As
iowatcher it writes a small SVG to its -o file. Every call is appended to
"log".
"""

import json
import signal
import struct
import sys
import time

RECORD = struct.Struct("=IIQQIIIIIHH")
MAGIC = 0x65617400 | 7
TC_READ, TC_WRITE, TC_SYNC = 1 << 0, 1 << 1, 1 << 3
TC_QUEUE, TC_ISSUE, TC_COMPLETE = 1 << 4, 1 << 6, 1 << 7
TC_NOTIFY = 1 << 10
ACTIONS = {"Q": 1 | TC_QUEUE << 16, "D": 7 | TC_ISSUE << 16,
           "C": 8 | TC_COMPLETE << 16, "A": 15 | TC_QUEUE << 16}
TN_TIMESTAMP = 1 | TC_NOTIFY << 16


def dev_t(devnum):
    major, minor = (int(x) for x in devnum.split(":"))
    return (major << 20) | minor


class Writer:
    def __init__(self, out):
        self.out = out
        self.seq = {}

    def record(self, device, cpu, when, action, sector=0, nbytes=0,
               pdu=b"", pid=0):
        seq = self.seq[device, cpu] = self.seq.get((device, cpu), 0) + 1
        self.out.write(RECORD.pack(MAGIC, seq, when, sector, nbytes, action,
                                   pid, device, cpu, 0, len(pdu)) + pdu)

    def note(self, device, cpu, when):
        self.record(device, cpu, when, TN_TIMESTAMP,
                    pdu=struct.pack("=II", 1700000000, 0))

    def event(self, device, cpu, when, action, rwbs, sector, nr,
              source=None, source_sector=0):
        what = ACTIONS[action]
        what |= (TC_WRITE if "W" in rwbs else TC_READ) << 16
        if "S" in rwbs:
            what |= TC_SYNC << 16
        pdu = b""
        if action == "A":
            pdu = struct.pack(">IIQ", dev_t(source), device, source_sector)
        self.record(device, cpu, when, what, sector, nr * 512, pdu, pid=42)


def blktrace(spec, args):
    paths = [args[i + 1] for i, a in enumerate(args) if a == "-d"]
    if spec.get("fail"):
        print(spec["fail"], file=sys.stderr)
        return 1
    stopped = []
    signal.signal(signal.SIGINT, lambda *_: stopped.append(1))
    w = Writer(sys.stdout.buffer)
    for path in paths:
        w.note(dev_t(spec["devices"][path]), 0, 1)
    for (path, cpu, when, action, rwbs, sector, nr, source,
         source_sector) in spec.get("events", []):
        w.event(dev_t(spec["devices"][path]), cpu, when, action, rwbs,
                sector, nr, source, source_sector)
    if spec.get("torn"):
        sys.stdout.buffer.write(bytes(RECORD.size))
    sys.stdout.buffer.flush()
    if spec.get("die"):
        print(spec["die"], file=sys.stderr)
        return 1
    deadline = time.monotonic() + 60
    while not stopped and time.monotonic() < deadline:
        time.sleep(0.01)
    if stopped:
        append(spec["path"], "stops", "SIGINT")
    if spec.get("dropped"):
        print(f"\nYou have {spec['dropped']} (  1.0%) dropped events\n"
              "Consider using a larger buffer size (-b) and/or more "
              "buffers (-n)", file=sys.stderr)
    return 0


def iowatcher(args):
    with open(args[args.index("-o") + 1], "w") as f:
        f.write("<svg xmlns='http://www.w3.org/2000/svg'/>\n")
    return 0


def append(path, key, item):
    """Appends item to SPEC.json's list key; returns the spec."""
    with open(path) as f:
        spec = json.load(f)
    spec.setdefault(key, []).append(item)
    with open(path, "w") as f:
        json.dump(spec, f)
    return spec


def main():
    path, args = sys.argv[1], sys.argv[2:]
    spec = append(path, "log", args)
    if args[:1] == ["--iowatcher"]:
        return iowatcher(args[1:])
    spec["path"] = path
    return blktrace(spec, args)


if __name__ == "__main__":
    sys.exit(main())
