"""What hottierctl prints: pure functions from values to lines."""

from .table import SECTOR

BAR_WIDTH = 40


def human_bytes(n):
    """1 MiB, 1.5 GiB: binary units, one decimal unless whole."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            break
        n /= 1024
    return f"{n:.0f} {unit}" if n == int(n) else f"{n:.1f} {unit}"


def percent(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def ratio(part, whole):
    return part / whole if whole else None


def hit_ratio(stats):
    """read_hits / (read_hits + read_misses); None before any read."""
    return ratio(stats["read_hits"], stats["read_hits"] + stats["read_misses"])


def columns(rows):
    """Rows of words as left-aligned columns."""
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    return [("  ".join(str(w).ljust(n) for w, n in zip(r, widths))).rstrip()
            for r in rows]


def status_record(device, stats):
    """One device's status for --json: every field, the hit ratio, where
    it is and whether it is suspended."""
    return {"name": device.name, "device": f"/dev/mapper/{device.name}",
            "kernel_name": device.kname, "suspended": device.suspended(),
            "hit_ratio": hit_ratio(stats), **stats}


def interval_line(before, after, seconds):
    """Hit ratio and read rate between two samples (for --watch)."""
    hits = after["read_hits"] - before["read_hits"]
    reads = hits + after["read_misses"] - before["read_misses"]
    return (f"last {seconds:g}s", f"{percent(ratio(hits, reads))} hits, "
            f"{reads / seconds:.0f} reads/s")


def map_line(rec):
    """The on-SSD map's state and what the takeover found."""
    if rec["mode"] == "no_ssd":
        return "none: the device has no SSD"
    if rec["map"] == "off":
        return "off (no hdd_id: the SSD starts cold)"
    checked = (f" ({rec['map_checked']} compared with the HDD)"
               if rec["map_checked"] else "")
    return (f"{rec['map']}, {rec['map_loaded']} replicas restored{checked} "
            f"and {rec['map_dropped']} dropped at start, "
            f"{rec['map_writes']} writes")


def status_lines(rec, before=None, seconds=None):
    """The human status of one device, as status_record gives it."""
    state = rec["mode"] + (", suspended" if rec["suspended"] else "")
    if rec["mode"] == "no_ssd":
        state += (": the SSD was missing at creation, every I/O goes to "
                  f"the HDD; once it is there: hottierctl attach "
                  f"{rec['name']}")
    used, total = rec["slots_used"], rec["slots_total"]
    rows = [
        ("hit ratio", f"{percent(rec['hit_ratio'])} ({rec['read_hits']} "
                      f"hits, {rec['read_misses']} misses)"),
        ("SSD slots", f"{used}/{total} used ({percent(ratio(used, total))})"
                      f", {rec['pinned']} pinned"),
        ("promotions", f"{rec['promotions']}, demotions {rec['demotions']}"
                       f", copies discarded {rec['copies_discarded']}"),
        ("migrations", f"{rec['migrations']} in flight, "
                       f"{rec['migrations_waiting']} waiting, "
                       f"{rec['migrations_allowed']} allowed"),
        ("latency", f"SSD {rec['ssd_latency_us']} us, "
                    f"HDD {rec['hdd_latency_us']} us"),
        ("replica reads", f"SSD {rec['replica_reads_ssd']}, "
                          f"HDD {rec['replica_reads_hdd']}"),
        ("working set", f"moved {rec['turnovers']} "
                        f"time{'' if rec['turnovers'] == 1 else 's'} "
                        "(turnovers detected)"),
        ("errors", f"SSD {rec['ssd_errors']}, HDD reads "
                   f"{rec['hdd_read_errors']}, reads retried "
                   f"{rec['read_retries']}"),
        ("SSD map", map_line(rec)),
    ]
    if before is not None:
        rows.insert(1, interval_line(before, rec, seconds))
    return ([f"{rec['name']} ({rec['kernel_name']}): {state}"] +
            ["  " + line for line in columns(rows)])


def list_lines(records):
    rows = [("NAME", "DEVICE", "SIZE", "HDD", "SSD", "EXTENT", "MODE")]
    rows += [(r["name"], r["kernel_name"], human_bytes(r["sectors"] * SECTOR),
              r["hdd"], r["ssd"], human_bytes(r["extent_sectors"] * SECTOR),
              r["mode"] + (",suspended" if r["suspended"] else ""))
             for r in records]
    return columns(rows)


def parse_heat(text):
    """The heat message's "<lo>-<hi> <count>" lines."""
    bands = []
    for line in text.split("\n"):
        if line.strip():
            band, count = line.split()
            lo, hi = band.split("-")
            bands.append({"lo": int(lo), "hi": int(hi),
                          "extents": int(count)})
    return bands


def parse_top(text):
    """The top message's "<start> <heat> <resident|-> <pinned|->" lines."""
    top = []
    for line in text.split("\n"):
        if line.strip():
            start, heat, resident, pinned = line.split()
            top.append({"start_sector": int(start), "heat": int(heat),
                        "resident": resident == "resident",
                        "pinned": pinned == "pinned"})
    return top


def bar(count, most):
    """A bar of count in BAR_WIDTH for most; any count shows."""
    if not count:
        return ""
    return "#" * max(1, round(BAR_WIDTH * count / most))


def heat_lines(name, extent_sectors, bands, top):
    """The heat histogram as bars, then the top extents."""
    most = max((b["extents"] for b in bands), default=0)
    tracked = sum(b["extents"] for b in bands)
    lines = [f"{name}: {tracked} extents tracked "
             f"({human_bytes(extent_sectors * SECTOR)} each), by heat "
             "in reads"]
    rows = [(f"{b['lo']}-{b['hi']}", str(b["extents"]),
             bar(b["extents"], most)) for b in bands]
    lines += ["  " + line for line in columns(rows)] if rows else []
    if not top:
        return lines + ["no extent is tracked"]
    lines.append(f"hottest {len(top)}:")
    rows = [("START", "OFFSET", "HEAT", "RESIDENT", "PINNED")]
    rows += [(str(t["start_sector"]),
              human_bytes(t["start_sector"] * SECTOR), str(t["heat"]),
              "yes" if t["resident"] else "-",
              "yes" if t["pinned"] else "-") for t in top]
    return lines + ["  " + line for line in columns(rows)]
