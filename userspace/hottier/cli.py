"""hottierctl's command line: one function per subcommand."""

import argparse
import json
import os
import sys
import time

from . import (HottierError, __version__, create, fiemap, members, queues,
               report, tab)
from .table import (DEFAULT_EXTENT, FIELDS, SECTOR, TABLE_ONLY,
                    parse_assignments, parse_extent)
from .system import System
from .tab import check_name

TOP_MAX = 1000


class Parser(argparse.ArgumentParser):
    """Usage errors as one line and exit status 2."""

    def error(self, message):
        self.exit(2, f"hottierctl: {message} (see '{self.prog} --help')\n")


def arg_type(convert, what):
    """An argparse type from a converter; its refusal is a usage error."""
    def parse(text):
        try:
            value = convert(text)
        except (HottierError, ValueError) as e:
            raise argparse.ArgumentTypeError(str(e) if isinstance(
                e, HottierError) else f"'{text}': expected {what}")
        return value
    parse.__name__ = what
    return parse


def bounded(lo, hi, kind=int):
    def convert(text):
        value = kind(text)
        if not lo <= value <= hi:
            raise ValueError(text)
        return value
    return convert


def emit(out, value, as_json, lines):
    """value as JSON, or the human lines."""
    if as_json:
        print(json.dumps(value, indent=2), file=out)
    else:
        for line in lines:
            print(line, file=out)


def member_path(system, spec):
    """A member given on the command line: a path, by-id/NAME and its kin,
    or VG/LV (tab.device_path()); a VG/LV must be active."""
    path = tab.device_path(spec, system.dev_root, relative=True)
    if tab.lv_name(spec) and not os.path.exists(path):
        raise HottierError(f"{spec}: no active logical volume of that name "
                           f"({path} does not exist)")
    return path


def cmd_create(system, args, out):
    keys = parse_assignments(args.set or [])
    hdd = member_path(system, args.hdd)
    ssd = member_path(system, args.ssd)
    create.create(system, args.name, hdd, ssd, args.extent_size,
                  keys, format_ssd=args.format_ssd)
    print(f"{args.name}: created /dev/mapper/{args.name} over {hdd} "
          f"(HDD) and {ssd} (SSD), "
          f"{report.human_bytes(args.extent_size * SECTOR)} extents",
          file=out)


def cmd_remove(system, args, out):
    create.remove(system, args.name)
    print(f"{args.name}: removed", file=out)


def cmd_attach(system, args, out):
    if args.ssd:
        ssd = member_path(system, args.ssd)
    else:
        listed = [e for e in tab.load(args.tab, system.dev_root)
                  if e.name == args.name]
        if not listed:
            raise HottierError(f"{args.tab} lists no {args.name}: give "
                               "the SSD")
        ssd = listed[0].ssd
        if not os.path.exists(ssd):
            raise HottierError(f"{ssd}, {args.name}'s SSD in {args.tab}, "
                               "is not present yet")
    create.attach(system, args.name, ssd)
    stats = system.device(args.name).stats()
    record = {"name": args.name, "ssd": ssd, "mode": stats["mode"],
              "map": stats["map"], "replicas_restored": stats["map_loaded"],
              "replicas_dropped": stats["map_dropped"],
              "pinned": stats["pinned"]}
    if stats["map"] == "off":
        kept = "no map kept (no hdd_id): the SSD starts cold"
    else:
        kept = (f"{stats['map_loaded']} replicas restored, "
                f"{stats['map_dropped']} dropped, {stats['pinned']} "
                "extents pinned")
    emit(out, record, args.json,
         [f"{args.name}: {ssd} attached as its SSD, mode {stats['mode']}; "
          f"{kept}"])


def cmd_resize(system, args, out):
    old, new = create.resize(system, args.name)
    record = {"name": args.name, "old_sectors": old, "new_sectors": new,
              "resized": new != old}
    if new == old:
        lines = [f"{args.name}: already as long as its HDD, {old} sectors "
                 f"({report.human_bytes(old * SECTOR)})"]
    else:
        lines = [f"{args.name}: {old} to {new} sectors "
                 f"({report.human_bytes(old * SECTOR)} to "
                 f"{report.human_bytes(new * SECTOR)}); replicas and pins "
                 "kept; grow the filesystem on it now (resize2fs, "
                 "xfs_growfs)"]
    emit(out, record, args.json, lines)


def cmd_replace_ssd(system, args, out):
    ssd = member_path(system, args.ssd)
    old = create.replace_ssd(system, args.name, ssd,
                             format_ssd=args.format_ssd)
    old_name = system.block_name(old)
    record = {"name": args.name, "old_ssd": old_name, "ssd": ssd}
    lines = [f"{args.name}: its SSD is now {ssd}, in place of {old_name}, "
             "whose map is invalidated; the pins are copied again, other "
             "replicas as they heat"]
    try:
        listed = [e for e in tab.load(args.tab, system.dev_root)
                  if e.name == args.name]
    except HottierError:
        listed = []
    if listed and os.path.realpath(listed[0].ssd) != os.path.realpath(ssd):
        record["tab_names_old_ssd"] = True
        lines.append(f"hottierctl: {args.tab} still names {listed[0].ssd} "
                     f"as {args.name}'s SSD: edit it before the next boot")
    emit(out, record, args.json, lines)


def list_record(device):
    t = device.table()
    stats = device.stats()
    return {"name": device.name, "kernel_name": device.kname,
            "sectors": t["length"], "hdd": device.system.block_name(t["hdd"]),
            "ssd": device.system.block_name(t["ssd"]),
            "extent_sectors": t["extent_sectors"], "mode": stats["mode"],
            "suspended": device.suspended()}


def cmd_list(system, args, out):
    records = [list_record(system.device(n)) for n in system.hottier_names()]
    lines = report.list_lines(records) if records else ["no hottier devices"]
    emit(out, records, args.json, lines)


def status_records(system, names):
    records = []
    for name in names:
        device = system.device(name)
        records.append(report.status_record(device, device.stats()))
    return records


def redraw(lines, drawn):
    """ANSI text that replaces the drawn lines above the cursor."""
    up = f"\x1b[{drawn}F" if drawn else ""
    return up + "".join(f"\x1b[2K{line}\n" for line in lines) + "\x1b[J"


def watch(system, args, names, out):
    """Redraws the status every args.watch seconds until Ctrl-C."""
    before, drawn = {}, 0
    try:
        while True:
            records = status_records(system, names)
            if args.json:
                print(json.dumps(records), file=out, flush=True)
            else:
                lines = [line for r in records for line in
                         report.status_lines(r, before.get(r["name"]),
                                             args.watch)]
                out.write(redraw(lines, drawn))
                out.flush()
                drawn = len(lines)
            before = {r["name"]: r for r in records}
            time.sleep(args.watch)
    except KeyboardInterrupt:
        return


def cmd_status(system, args, out):
    names = [args.name] if args.name else system.hottier_names()
    if args.watch:
        watch(system, args, names, out)
        return
    records = status_records(system, names)
    lines = [line for r in records for line in report.status_lines(r)]
    emit(out, records[0] if args.name else records, args.json,
         lines or ["no hottier devices"])


def cmd_set(system, args, out):
    keys = parse_assignments(args.assignments)
    for key in keys:
        if key in TABLE_ONLY:
            raise HottierError(f"{key} changes only with a table reload")
    device = system.device(args.name)
    old = device.config()
    for key, value in keys.items():
        device.set(key, value)
        print(f"{key}: {old[key]} -> {value}", file=out)


def cmd_get(system, args, out):
    device = system.device(args.name)
    values = device.config()
    if args.key in FIELDS:
        values = device.stats()
    elif args.key and args.key not in values:
        raise HottierError(f"unknown key '{args.key}' (keys: "
                           f"{', '.join(values)}; fields: see status)")
    if args.key:
        emit(out, {args.key: values[args.key]}, args.json,
             [values[args.key]])
    else:
        emit(out, values, args.json, [f"{k}={v}" for k, v in values.items()])


def cmd_tune_queues(system, args, out):
    device = system.device(args.name)
    changes, notes = queues.plan(device, args.read_ahead_kb)
    if not args.dry_run:
        queues.apply(changes)
    lines = [f"{c.path}: {c.old} -> {c.new}" for c in changes]
    if not changes:
        lines = [f"{args.name}: nothing to change"]
    elif args.dry_run:
        lines.append("dry run: nothing changed")
    emit(out, {"changes": [c._asdict() for c in changes],
               "applied": not args.dry_run and bool(changes),
               "notes": notes}, args.json, lines)
    for note in notes:
        print(f"hottierctl: note: {note}", file=sys.stderr)


def pin_room(stats):
    """Extents a pin may still take: every slot not already pinned (a
    pinned extent evicts any unpinned replica, as the kernel's own check
    on the pin message counts)."""
    return stats["slots_total"] - stats["pinned"]


def send_ranges(device, verb, ranges):
    """pin or unpin each range; a pin that fails undoes the ones before."""
    done = []
    try:
        for start, nr in ranges:
            device.message(verb, str(start), str(nr))
            done.append((start, nr))
    except HottierError:
        for start, nr in done if verb == "pin" else []:
            device.message("unpin", str(start), str(nr))
        raise


def cmd_pin(system, args, out):
    device = system.device(args.name)
    ranges, extents = fiemap.file_ranges(system, device, args.path)
    verb = args.command
    stats = device.stats() if verb == "pin" else None
    if stats and extents > pin_room(stats):
        raise HottierError(
            f"{args.path} covers {extents} extents, more than the "
            f"{pin_room(stats)} slots of {args.name} not pinned already "
            f"({stats['slots_total']} slots, {stats['pinned']} pinned)")
    send_ranges(device, verb, ranges)
    size = sum(nr for _, nr in ranges) * SECTOR
    emit(out, {"path": args.path, "extents": extents,
               "ranges": [{"start_sector": s, "nr_sectors": n}
                          for s, n in ranges]}, args.json,
         [f"{verb}ned {args.path}: {extents} extents "
          f"({report.human_bytes(size)}) in {len(ranges)} ranges"])


def cmd_heat(system, args, out):
    device = system.device(args.name)
    bands = report.parse_heat(device.message("heat"))
    top = report.parse_top(device.message("top", str(args.top)))
    extent = device.table()["extent_sectors"]
    emit(out, {"name": args.name, "extent_sectors": extent, "bands": bands,
               "top": top}, args.json,
         report.heat_lines(args.name, extent, bands, top))


def cmd_scrub(system, args, out):
    from . import verbs     # here, as trace: the messages' verbs

    device = system.device(args.name)
    record, lines = verbs.scrub(device, wait=not args.no_wait)
    emit(out, record, args.json, lines)
    verbs.scrub_status(record)


def cmd_message(system, args, out):
    from . import verbs

    record, lines = verbs.MESSAGES[args.command](system.device(args.name))
    emit(out, record, args.json, lines)


def sector_range(text):
    """START+LEN of promote and demote (verbs.parse_range())."""
    from . import verbs

    return verbs.parse_range(text)


def cmd_move(system, args, out):
    from . import verbs

    record, lines = verbs.move(system, system.device(args.name),
                               args.command, args.ranges, args.paths)
    emit(out, record, args.json, lines)


def positive_seconds(text):
    """SECONDS of a trace: a number above 0, at most a day."""
    from . import trace     # here: its imports cost every other command

    value = float(text)
    if not 0 < value <= trace.SECONDS_MAX:     # also refuses nan
        raise ValueError(text)
    return value


def cmd_trace(system, args, out):
    from . import trace

    device = system.device(args.name)
    rec = trace.trace(system, device, args.seconds, outdir=args.output,
                      svg=args.svg)
    emit(out, rec, args.json, trace.trace_lines(rec))


def tab_entries(system, args):
    """The hottiertab's entries named on the command line (all if none)."""
    entries = tab.load(args.tab, system.dev_root)
    unknown = [n for n in args.names if n not in {e.name for e in entries}]
    if unknown:
        raise HottierError(f"{args.tab} lists no {', '.join(unknown)}")
    if args.names:
        entries = [e for e in entries if e.name in args.names]
    return entries


def wait_for_members(system, args, err, step=0.5):
    """The tab's entries once every member they name exists, or once
    args.wait seconds passed: members that an md array or an LVM volume
    group brings up after udev settled (LVM activates a volume group in a
    unit of its own). The tab is read again each time, since VG/LV
    resolves to the node that exists (tab.lv_path())."""
    deadline = time.monotonic() + args.wait
    started = None
    while True:
        entries = tab_entries(system, args)
        missing = [p for e in entries for p in (e.hdd, e.ssd)
                   if not os.path.exists(p)]
        if not missing or time.monotonic() >= deadline:
            if started is not None:
                print(f"hottierctl: waited {time.monotonic() - started:.1f}"
                      " s for members", file=err)
            return entries
        if started is None:
            started = time.monotonic()
            print(f"hottierctl: waiting up to {args.wait:g} s for "
                  f"{', '.join(missing)}", file=err)
        time.sleep(step)


def cmd_activate(system, args, out):
    if args.wait < 0:
        raise HottierError(f"--wait {args.wait:g}: expected seconds, 0 or "
                           "more")
    entries = wait_for_members(system, args, sys.stderr)
    if not create.activate(system, entries, out, sys.stderr):
        raise HottierError("some devices were not created")


def cmd_deactivate(system, args, out):
    entries = tab_entries(system, args)
    if not system.module_loaded():
        for e in entries:               # no module, no hottier device
            print(f"{e.name}: not active", file=out)
        return
    if not create.deactivate(system, entries, out, sys.stderr):
        raise HottierError("some devices were not removed")


def cmd_udev_member(system, args, out):
    """For udev's IMPORT{program}: HOTTIER_MEMBER=hdd|ssd and
    HOTTIER_DEVICE=name if the tab lists the device as a member; nothing
    (and status 0) otherwise, or if the tab cannot be read. The
    hottierctl script runs members.udev_main() instead, which imports
    less; this is the same with argparse's usage errors."""
    for line in members.udev_member(vars(args), system.dev_root):
        print(line, file=out)


def cmd_lvm_filter(system, args, out):
    try:
        with open(args.tab) as f:
            text = f.read()
    except OSError as e:
        raise HottierError(f"{args.tab}: {e.strerror}")
    patterns, listed = members.lvm_filter(members.member_specs(text),
                                          system.dev_root)
    config = members.lvm_config(patterns)
    emit(out, {"tab": args.tab, "global_filter": patterns,
               "members": listed, "config": "\n".join(config) + "\n"},
         args.json, config)


def cmd_metrics(system, args, out):
    from . import metrics   # here: only this command needs it

    text = metrics.exposition(system, args.names)
    if args.output:
        metrics.write_atomic(args.output, text)
    else:
        out.write(text)


# Commands that read only the tab: no root, no module.
TAB_ONLY = ("udev-member", "lvm-filter")


def add_command(subs, name, func, help, device=True, json_output=False):
    p = subs.add_parser(name, help=help, description=help)
    p.set_defaults(func=func)
    if device:
        p.add_argument("name", metavar="NAME", help="the dm device name")
    if json_output:
        p.add_argument("--json", action="store_true",
                       help="print JSON instead of text")
    return p


def add_tab_entries(p):
    p.add_argument("names", metavar="NAME", nargs="*",
                   help="only these entries (default: all)")
    p.add_argument("--tab", default=tab.DEFAULT_PATH, metavar="FILE",
                   help=f"the table of devices (default {tab.DEFAULT_PATH})")


def parser():
    top = Parser(prog="hottierctl",
                 description="Create, watch and tune dm-hottier devices.")
    top.add_argument("--version", action="version",
                     version=f"hottierctl {__version__}")
    subs = top.add_subparsers(dest="command", required=True,
                              metavar="COMMAND")

    p = add_command(subs, "create", cmd_create,
                    "create a hottier device over an HDD and an SSD")
    p.add_argument("--hdd", required=True, metavar="DEV",
                   help="the pool that holds every byte: a path, "
                        "by-id/NAME (below /dev/disk) or VG/LV")
    p.add_argument("--ssd", required=True, metavar="DEV",
                   help="the fast device that holds replicas (the same "
                        "forms)")
    p.add_argument("--extent-size", default=parse_extent(DEFAULT_EXTENT),
                   type=arg_type(parse_extent, "a size"), metavar="SIZE",
                   help="1M (default), 512K, or sectors: a power of two "
                        "from 32K to 1G")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="an optional table key (repeatable); hdd_id=ID "
                        "names the HDD for the SSD's map (found in sysfs "
                        "if not given), hdd_id=none keeps no map")
    p.add_argument("--format-ssd", action="store_true",
                   help="overwrite what the SSD holds (another HDD's map, "
                        "or data that is not a hottier map): once")

    add_command(subs, "remove", cmd_remove, "remove a hottier device")
    add_command(subs, "list", cmd_list, "list the hottier devices",
                device=False, json_output=True)

    p = add_command(subs, "status", cmd_status,
                    "hit ratio, slots, promotions, latencies, mode",
                    device=False, json_output=True)
    p.add_argument("name", metavar="NAME", nargs="?",
                   help="one device (default: every hottier device)")
    p.add_argument("--watch", metavar="SECONDS",
                   type=arg_type(bounded(0.1, 86400, float), "seconds"),
                   help="redraw every SECONDS until Ctrl-C")

    p = add_command(subs, "set", cmd_set, "change tunables at runtime")
    p.add_argument("assignments", metavar="KEY=VALUE", nargs="+")

    p = add_command(subs, "get", cmd_get,
                    "print tunables, or one tunable or status field",
                    json_output=True)
    p.add_argument("key", metavar="KEY", nargs="?")

    p = add_command(subs, "tune-queues", cmd_tune_queues,
                    "set the schedulers of the disks under each member "
                    "and the device's read-ahead", json_output=True)
    p.add_argument("--dry-run", action="store_true",
                   help="show the changes without making them")
    p.add_argument("--read-ahead-kb", metavar="KB",
                   default=queues.READ_AHEAD_KB,
                   type=arg_type(bounded(0, 65536), "KiB"),
                   help=f"read-ahead of the hottier device (default "
                        f"{queues.READ_AHEAD_KB})")

    for verb, what in (("pin", "keep a file's extents on the SSD"),
                       ("unpin", "let a file's extents be evicted again")):
        p = add_command(subs, verb, cmd_pin, what, json_output=True)
        p.add_argument("path", metavar="PATH",
                       help="a file on a filesystem on the device")

    p = add_command(subs, "heat", cmd_heat,
                    "heat histogram and hottest extents", json_output=True)
    p.add_argument("--top", metavar="N", default=10,
                   type=arg_type(bounded(1, TOP_MAX), f"1 to {TOP_MAX}"),
                   help="how many extents to list (default 10)")

    p = add_command(subs, "scrub", cmd_scrub,
                    "compare every replica with the HDD, showing the "
                    "progress, and print the result (exit 3 if replicas "
                    "differed, 4 if it did not complete)", json_output=True)
    p.add_argument("--no-wait", action="store_true",
                   help="start the scrub and return")
    for verb, what in (
            ("ssd-reset", "leave degraded mode: drop every replica, use "
                          "the SSD again"),
            ("invalidate", "drop every replica (pinned extents are copied "
                           "again)"),
            ("reset-stats", "set the status counters to zero")):
        add_command(subs, verb, cmd_message, what, json_output=True)
    for verb, what in (("promote", "queue extents for promotion to the SSD"),
                       ("demote", "drop the replicas of unpinned extents")):
        p = add_command(subs, verb, cmd_move, what, json_output=True)
        g = p.add_mutually_exclusive_group(required=True)
        g.add_argument("--range", action="append", dest="ranges",
                       metavar="START+LEN",
                       type=arg_type(sector_range, "START+LEN"),
                       help="sectors, or sizes with K, M or G (1G+64M); "
                            "repeatable")
        g.add_argument("paths", metavar="FILE", nargs="*", default=[],
                       help="files on a filesystem on the device (their "
                            "extents, as pin finds them)")

    p = add_command(subs, "trace", cmd_trace,
                    "blktrace the device and both members for a while: "
                    "reads and writes of each, Q2C latency, the SSD's "
                    "share of the reads, the target's own copies",
                    json_output=True)
    p.add_argument("seconds", metavar="SECONDS",
                   type=arg_type(positive_seconds,
                                 "a positive number of seconds"),
                   help="how long to trace (up to a day)")
    p.add_argument("--output", metavar="DIR",
                   help="keep the raw traces (<dev>.blktrace.<cpu>) and "
                        "blkparse's text in DIR (default: a temporary "
                        "directory, removed)")
    p.add_argument("--svg", metavar="FILE",
                   help="draw iowatcher's graph of the three traces")

    p = add_command(subs, "activate", cmd_activate,
                    "create the devices listed in hottiertab whose HDD "
                    "exists (one whose SSD is missing comes up without it, "
                    "degraded, until attach)", device=False)
    add_tab_entries(p)
    p.add_argument("--wait", type=float, default=0, metavar="SECONDS",
                   help="wait up to SECONDS for missing members first (an "
                   "md array or LVM volume coming up; hottier.service "
                   "waits 60)")

    add_command(subs, "resize", cmd_resize,
                "reload the device with its HDD's length, once the HDD has "
                "grown (lvextend, mdadm --grow); replicas and pins stay",
                json_output=True)

    p = add_command(subs, "replace-ssd", cmd_replace_ssd,
                    "reload the device over another SSD (under load: I/O "
                    "waits for the swap); the old SSD's map is invalidated",
                    json_output=True)
    p.add_argument("ssd", metavar="DEV",
                   help="the new SSD: a path, by-id/NAME or VG/LV")
    p.add_argument("--format-ssd", action="store_true",
                   help="overwrite what the new SSD holds (another HDD's "
                        "map, or other data)")
    p.add_argument("--tab", default=tab.DEFAULT_PATH, metavar="FILE",
                   help="checked for an entry that still names the old SSD "
                        f"(default {tab.DEFAULT_PATH})")

    p = add_command(subs, "attach", cmd_attach,
                    "reload a device created without its SSD (missing at "
                    "boot) over the SSD, once it is there; its map is taken "
                    "over, its replicas only if the HDD was not written "
                    "meanwhile", json_output=True)
    p.add_argument("ssd", metavar="DEV", nargs="?",
                   help="the SSD: a path, by-id/NAME or VG/LV (default: "
                        "the one hottiertab names)")
    p.add_argument("--tab", default=tab.DEFAULT_PATH, metavar="FILE",
                   help=f"the table of devices (default {tab.DEFAULT_PATH})")

    p = add_command(subs, "deactivate", cmd_deactivate,
                    "remove the devices listed in hottiertab that are "
                    "active, last listed first (at shutdown, once their "
                    "filesystems are unmounted)", device=False)
    add_tab_entries(p)

    p = add_command(subs, "udev-member", cmd_udev_member,
                    "for udev rules: say whether hottiertab lists a block "
                    "device as a member (HOTTIER_MEMBER=hdd|ssd, "
                    "HOTTIER_DEVICE=NAME)", device=False)
    p.add_argument("devnode", metavar="DEVNAME",
                   help="the device node (udev's $devnode)")
    p.add_argument("links", metavar="LINK", nargs="*",
                   help="its links below /dev so far (udev's $links)")
    p.add_argument("--devnum", metavar="MAJOR:MINOR",
                   help="its number (default: that of DEVNAME)")
    p.add_argument("--links-only", action="store_true",
                   help="print only HOTTIER_MEMBER_LINKS, the LINKs "
                        "without by-uuid and by-label, for a device known "
                        "to be a member")
    p.add_argument("--tab", default=tab.DEFAULT_PATH, metavar="FILE",
                   help=f"the table of devices (default {tab.DEFAULT_PATH})")

    p = add_command(subs, "lvm-filter", cmd_lvm_filter,
                    "print the LVM global_filter that hides the members "
                    "hottiertab lists", device=False, json_output=True)
    p.add_argument("--tab", default=tab.DEFAULT_PATH, metavar="FILE",
                   help=f"the table of devices (default {tab.DEFAULT_PATH})")

    p = add_command(subs, "metrics", cmd_metrics,
                    "print every status field and tunable in Prometheus's "
                    "text format", device=False)
    p.add_argument("names", metavar="NAME", nargs="*",
                   help="only these devices (default: every hottier device)")
    p.add_argument("--output", metavar="FILE",
                   help="write FILE atomically instead (for the node "
                        "exporter's textfile collector: a .prom file in "
                        "its directory)")
    return top


def main(argv=None, system=None, out=None):
    """Runs one command; returns the exit status."""
    out = out or sys.stdout
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:             # --help, --version, usage errors
        return e.code
    system = system or System.from_env()
    try:
        if getattr(args, "name", None) and args.command == "create":
            check_name(args.name)
        if args.command in TAB_ONLY:
            args.func(system, args, out)
            return 0
        system.require_root()
        if args.command not in ("deactivate", "metrics"):
            system.require_module(load=args.command in ("create",
                                                        "activate"))
        args.func(system, args, out)
    except HottierError as e:
        print(f"hottierctl: {e}", file=sys.stderr)
        return getattr(e, "status", 1)      # verbs.ScrubFailed: 3 or 4
    except KeyboardInterrupt:
        return 130
    return 0
