#!/usr/bin/env python3
"""dm-hottier's real-boot scenario, inside the booted Debian system.

hottier-boot-test.service (scripts/boot-image.sh) runs run.sh from the
"boottest" disk after multi-user.target; run.sh runs this script with the
disk's directory as its argument. The stage is kept on the root overlay,
/var/lib/hottier-boot-test/stage, so each boot of one run does the next:

  install  put the project's files in place (module under
           /lib/modules/<kver>/updates and depmod; make install-userspace's
           tree; hottier.service enabled; /etc/hottiertab; an fstab line
           mounting the device's ext4 by UUID), then reboot
  first    hottier.service activated the device before local-fs.target,
           the fstab filesystem is mounted from /dev/mapper/NAME, by-uuid
           points at the device, status works; write files (fsync), pin
           one, read another until it is promoted; reboot
  second   the shutdown's deactivate removed the device ("NAME: removed"
           in the last boot's journal); the device came back warm (the
           replicas restored equal those resident), data intact; write a
           file (fsync), start reads and say READY-TO-KILL: the host
           kills QEMU
  crash    after the kill: the device came up, the takeover after a crash
           is in the kernel log, the fstab fsck passed, e2fsck -fn of the
           unmounted device is clean, every file is intact; hottier.service
           waits 5 s for members from now on (a drop-in); power off
  missing  booted without the SSD's disk: the device came up without it
           (mode no_ssd, the log line, hottierctl status says why), the
           filesystem mounted from it, every file intact; write a file
           (fsync), say READY-TO-ATTACH: the host plugs the disk in, and
           hottierctl attach gives it back: the map's pins kept, its
           replicas dropped (the HDD was written), the pins copied again,
           every file intact, a clean scrub; power off

The stack (config "stack"), checked at each boot after install: a second
device whose HDD is an md RAID1 (named in the tab by its md-uuid link)
and whose SSD is another disk, an LVM volume group on the device and an
ext4 LV in fstab. install makes the array (mdadm.conf), the device, the
PV, VG and LV, the global_filter of `hottierctl lvm-filter` (in
lvmlocal.conf), a file; then every boot: the array was up before
hottier.service created the device, LVM activated the LV on it and fstab
mounted it, the PV is seen once (on the device, never on the raw array),
the raw array has no by-uuid link and SYSTEMD_READY=0, the file is intact.

Everything goes to the second serial port (the host's channel log), one
line at a time: "CHECK <stage> <name> PASS|FAIL <detail>", "INFO ...",
"FIG key=value", and the kernel log and the unit's journal prefixed with
"K| " and "J| ". Plain Python 3 standard library.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import time

STATE_DIR = "/var/lib/hottier-boot-test"
# hottierctl's own parser, from the tree the install stage put in place
# (make install-userspace, PREFIX /usr/local): the status fields in order.
USERSPACE = "/usr/local/lib/hottierctl"

out = None
stage = "?"
failures = 0


def say(line):
    out.write(line.rstrip("\n") + "\n")
    out.flush()


def check(name, ok, detail=""):
    global failures
    if not ok:
        failures += 1
    say(f"CHECK {stage} {name} {'PASS' if ok else 'FAIL'} {detail}".rstrip())
    return ok


def run(*cmd, check_rc=False):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if check_rc and p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stdout}")
    return p


def sh(cmd):
    return run("/bin/sh", "-c", cmd)


def dump(prefix, text):
    for line in text.splitlines():
        say(prefix + line)


def read_state():
    try:
        with open(f"{STATE_DIR}/state.json") as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def write_state(state):
    tmp = f"{STATE_DIR}/state.json.tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, f"{STATE_DIR}/state.json")
    fd = os.open(STATE_DIR, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def set_stage(name):
    with open(f"{STATE_DIR}/stage.tmp", "w") as f:
        f.write(name + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.rename(f"{STATE_DIR}/stage.tmp", f"{STATE_DIR}/stage")
    fd = os.open(STATE_DIR, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def status(name):
    """The device's status fields by name, or None if it is not there."""
    p = run("dmsetup", "status", name)
    if p.returncode:
        return None
    if USERSPACE not in sys.path:
        sys.path.insert(0, USERSPACE)
    from hottier.table import parse_status
    return parse_status(p.stdout)


def unit_prop(unit, prop):
    p = run("systemctl", "show", "-p", prop, "--value", unit)
    return p.stdout.strip()


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_file(path, mib):
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(1 << 20))
        f.flush()
        os.fsync(f.fileno())
    fd = os.open(os.path.dirname(path), os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    return sha256(path)


def direct_read(path, bs="256K"):
    return sh(f"dd if={path} of=/dev/null bs={bs} iflag=direct 2>&1").returncode


def boot_time():
    p = run("systemd-analyze", "time")
    line = " ".join(p.stdout.split())
    say(f"INFO {stage} systemd-analyze time: {line}")
    first = p.stdout.splitlines()[0] if p.stdout else ""
    m = re.search(r"=\s*(.+?)\s*$", first)
    if m:
        say(f"FIG {stage}_boot={m.group(1).replace(' ', '')}")


def dump_logs(cfg):
    dump("K| ", run("dmesg").stdout)
    dump("J| ", run("journalctl", "-b", "-o", "short-monotonic",
                    "--no-pager", "-u", "hottier.service",
                    "-u", "systemd-fsck@*", "-u", "*.mount").stdout)


def device_common(cfg):
    """hottier.service active, device present, status works."""
    name = cfg["name"]
    check("service-active",
          unit_prop("hottier.service", "ActiveState") == "active"
          and unit_prop("hottier.service", "Result") == "success",
          f"ActiveState={unit_prop('hottier.service', 'ActiveState')} "
          f"Result={unit_prop('hottier.service', 'Result')}")
    check("device-present", os.path.exists(f"/dev/mapper/{name}"))
    p = run("/usr/local/sbin/hottierctl", "status", name)
    check("hottierctl-status", p.returncode == 0, f"exit {p.returncode}")
    dump("INFO status| ", p.stdout)
    mnt = cfg["mountpoint"]
    src = run("findmnt", "-no", "SOURCE", mnt).stdout.strip()
    dev = os.path.realpath(f"/dev/mapper/{name}")
    check("mounted-from-device",
          bool(src) and os.path.realpath(src) == dev,
          f"findmnt {mnt}: {src!r} (device {dev})")


def md_uuid(path):
    p = run("mdadm", "--detail", "--export", path, check_rc=True)
    return dict(line.split("=", 1) for line in p.stdout.split()
                if "=" in line)["MD_UUID"]


def install_stack(cfg, state):
    """The stack's array, device, LVM and file (see the module's text);
    the device deactivated at the end, as a shutdown would."""
    st = cfg["stack"]
    md = f"/dev/md/{st['md']}"
    members = [f"/dev/disk/by-id/virtio-{s}" for s in st["md_serials"]]
    run("mdadm", "--create", md, "--run", "--level=1", "--raid-devices=2",
        "--metadata=1.2", "--assume-clean", *members, check_rc=True)
    # udev makes /dev/md/NAME from the array's event, after mdadm returns:
    # a loaded host once ran the next mdadm before it was there.
    run("udevadm", "settle", "-t", "60")
    deadline = time.monotonic() + 60
    while not os.path.exists(md):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{md}: udev made no link in 60 s")
        time.sleep(0.2)
    os.makedirs("/etc/mdadm", exist_ok=True)
    scan = run("mdadm", "--detail", "--scan", check_rc=True).stdout
    with open("/etc/mdadm/mdadm.conf", "a") as f:
        f.write(scan)
    hdd = f"/dev/disk/by-id/md-uuid-{md_uuid(md)}"
    with open("/etc/hottiertab", "a") as f:
        f.write(f"{st['name']} {hdd} "
                f"/dev/disk/by-id/virtio-{st['ssd_serial']} {st['extent']}\n")
    run("udevadm", "trigger", "--action=change", "--subsystem-match=block")
    run("udevadm", "settle", "-t", "60")
    p = run("/usr/local/sbin/hottierctl", "lvm-filter", check_rc=True)
    with open("/etc/lvm/lvmlocal.conf", "a") as f:
        f.write(p.stdout)
    run("/usr/local/sbin/hottierctl", "activate", st["name"], check_rc=True)
    dev = f"/dev/mapper/{st['name']}"
    vg, lv, mnt = st["vg"], st["lv"], st["mountpoint"]
    run("pvcreate", "-q", dev, check_rc=True)
    run("vgcreate", "-q", vg, dev, check_rc=True)
    run("lvcreate", "-q", "-y", "-L", "40M", "-n", lv, vg, check_rc=True)
    run("udevadm", "settle", "-t", "60")
    run("mkfs.ext4", "-q", f"/dev/{vg}/{lv}", check_rc=True)
    with open("/etc/fstab", "a") as f:
        f.write(f"/dev/{vg}/{lv} {mnt} ext4 defaults 0 2\n")
    os.makedirs(mnt, exist_ok=True)
    run("mount", mnt, check_rc=True)
    state["stack"] = write_file(f"{mnt}/stack.dat", 4)
    run("umount", mnt, check_rc=True)
    # LVM's event activation (lvm-activate-<vg>, from the PV's udev
    # event) may run late and activate the VG again: until it is down.
    for _ in range(10):
        run("udevadm", "settle", "-t", "60")
        run("vgchange", "-q", "-an", vg, check_rc=True)
        p = run("/usr/local/sbin/hottierctl", "deactivate", st["name"])
        if p.returncode == 0:
            break
        time.sleep(1)
    else:
        raise RuntimeError(f"hottierctl deactivate {st['name']}: {p.stdout}")
    dump("INFO stack| ", sh("cat /etc/mdadm/mdadm.conf /etc/lvm/lvmlocal.conf "
                            "/etc/hottiertab; cat /proc/mdstat").stdout)


def check_stack(cfg, state):
    """The stack after a boot (see the module's text)."""
    st = cfg["stack"]
    name, vg, lv, mnt = st["name"], st["vg"], st["lv"], st["mountpoint"]
    journal = run("journalctl", "-b", "-o", "cat", "--no-pager",
                  "-u", "hottier.service").stdout
    check("stack-created-at-boot",
          re.search(rf"^{re.escape(name)}: created$", journal, re.M)
          is not None and os.path.exists(f"/dev/mapper/{name}"),
          "hottier.service said: " + "; ".join(journal.splitlines()[-6:]))
    md = os.path.realpath(f"/dev/md/{st['md']}")
    deps = run("dmsetup", "deps", "-o", "devname", name).stdout.strip()
    check("stack-hdd-is-the-array", f"({os.path.basename(md)})" in deps,
          f"{name}: {deps}; /dev/md/{st['md']} is {md}")
    lvdev = os.path.realpath(f"/dev/{vg}/{lv}")
    lvdeps = run("dmsetup", "deps", "-o", "devname",
                 f"{vg}-{lv}").stdout.strip()
    src = run("findmnt", "-no", "SOURCE", mnt).stdout.strip()
    check("stack-lv-mounted-on-the-device",
          bool(src) and os.path.realpath(src) == lvdev
          and f"({name})" in lvdeps,
          f"findmnt {mnt}: {src!r}; {vg}-{lv} deps: {lvdeps}")
    p = run("pvs", "--noheadings", "-o", "pv_name,vg_name")
    pvs = [line.split() for line in p.stdout.splitlines() if line.strip()]
    check("stack-pv-seen-once",
          pvs == [[f"/dev/mapper/{name}", vg]] and "uplicate" not in p.stdout,
          f"pvs: {pvs}; said: {p.stdout.strip()!r}")
    props = run("udevadm", "info", "-q", "property", md).stdout
    links = run("udevadm", "info", "-q", "symlink", md).stdout
    check("stack-array-hidden",
          "SYSTEMD_READY=0" in props and "by-uuid" not in links
          and "ID_FS_TYPE=LVM2_member" not in props,
          f"{md}: links {links.strip()}; "
          f"{[x for x in props.split() if x.startswith(('SYSTEMD_READY', 'ID_FS_TYPE', 'HOTTIER'))]}")
    check("stack-data-intact",
          os.path.exists(f"{mnt}/stack.dat")
          and sha256(f"{mnt}/stack.dat") == state.get("stack"))
    s = status(name)
    if s is not None:
        say(f"FIG {stage}_stack_map={s['map']}")
        say(f"FIG {stage}_stack_loaded={s['map_loaded']}")


def stage_install(cfg, disk):
    kver = os.uname().release
    upd = f"/lib/modules/{kver}/updates"
    os.makedirs(upd, exist_ok=True)
    run("cp", f"{disk}/dm-hottier.ko", f"{upd}/dm-hottier.ko", check_rc=True)
    run("depmod", "-a", kver, check_rc=True)
    run("cp", "-a", f"{disk}/destdir/.", "/", check_rc=True)
    run("systemctl", "enable", "hottier.service", check_rc=True)
    with open("/etc/hottiertab", "w") as f:
        f.write(f"{cfg['name']} /dev/disk/by-id/virtio-{cfg['hdd_serial']} "
                f"/dev/disk/by-id/virtio-{cfg['ssd_serial']} {cfg['extent']}\n")
    with open("/etc/fstab", "a") as f:
        f.write(f"UUID={cfg['uuid']} {cfg['mountpoint']} ext4 defaults 0 2\n")
    os.makedirs(cfg["mountpoint"], exist_ok=True)
    if "stack" in cfg:
        state = read_state()
        install_stack(cfg, state)
        write_state(state)
    check("installed", True,
          "module, hottierctl, rules, unit, hottiertab, fstab"
          + (", md array, LVM on the second device" if "stack" in cfg
             else ""))
    dump("INFO installed| ", sh("modinfo -F filename dm-hottier; "
                               "systemctl is-enabled hottier.service; "
                               "cat /etc/hottiertab /etc/fstab").stdout)
    return "first", "reboot"


def stage_first(cfg, disk):
    name = cfg["name"]
    mnt = cfg["mountpoint"]
    boot_time()
    device_common(cfg)
    if "stack" in cfg:
        check_stack(cfg, read_state())
    ht = int(unit_prop("hottier.service", "ActiveEnterTimestampMonotonic") or 0)
    lfs = int(unit_prop("local-fs.target", "ActiveEnterTimestampMonotonic") or 0)
    mount_unit = run("systemd-escape", "-p", "--suffix=mount", mnt).stdout.strip()
    mnt_start = int(unit_prop(mount_unit, "InactiveExitTimestampMonotonic") or 0)
    check("activated-before-local-fs",
          0 < ht < lfs and ht <= mnt_start,
          f"hottier.service active at {ht / 1e6:.3f}s, {mount_unit} started "
          f"at {mnt_start / 1e6:.3f}s, local-fs.target at {lfs / 1e6:.3f}s")
    dev = os.path.realpath(f"/dev/mapper/{name}")
    link = f"/dev/disk/by-uuid/{cfg['uuid']}"
    hdd_links = run("udevadm", "info", "-q", "symlink",
                    f"/dev/disk/by-id/virtio-{cfg['hdd_serial']}").stdout
    check("by-uuid-is-the-device",
          os.path.realpath(link) == dev and "by-uuid" not in hdd_links,
          f"{link} -> {os.path.realpath(link)}; HDD's links: {hdd_links.strip()}")
    blame = sh("systemd-analyze blame | grep -E 'hottier|srv-hot|fsck'").stdout
    dump("BLAME| ", blame)
    check("blame-lists-hottier", "hottier.service" in blame, blame.strip())

    # Files, a pin and promoted reads.
    state = read_state()
    state["pinned"] = write_file(f"{mnt}/pinned.dat", 4)
    state["data"] = write_file(f"{mnt}/data.dat", 8)
    p = run("/usr/local/sbin/hottierctl", "pin", name, f"{mnt}/pinned.dat")
    check("pin", p.returncode == 0, p.stdout.strip())
    for _ in range(8):
        direct_read(f"{mnt}/data.dat")
    run("sync")
    st = settle(name)
    check("promoted", st["slots_used"] > st["pinned"] > 0,
          f"slots_used={st['slots_used']} pinned={st['pinned']} "
          f"promotions={st['promotions']}")
    # The hit ratio of one more pass over both files, warm: what the
    # second boot's same pass is compared with.
    ratio = pass_hit_ratio(name, mnt)
    say(f"FIG before_slots_used={st['slots_used']}")
    say(f"FIG before_pinned={st['pinned']}")
    say(f"FIG before_hit_ratio={ratio:.3f}")
    state["before"] = st
    state["hit_ratio"] = ratio
    write_state(state)
    dump_logs(cfg)
    return "second", "reboot"


def pass_hit_ratio(name, mnt):
    """Read hits over reads of one direct pass over the two files."""
    run("dmsetup", "message", name, "0", "reset_stats", check_rc=True)
    for f in ("pinned.dat", "data.dat"):
        direct_read(f"{mnt}/{f}")
    st = status(name)
    return st["read_hits"] / max(1, st["read_hits"] + st["read_misses"])


def settle(name, secs=60):
    """Status once no copy is in flight and slots_used holds still."""
    last = None
    deadline = time.monotonic() + secs
    while True:
        st = status(name)
        if (st["migrations"] == 0 and last is not None
                and st["slots_used"] == last["slots_used"]):
            return st
        if time.monotonic() > deadline:
            return st
        last = st
        time.sleep(1)


def stage_second(cfg, disk):
    name = cfg["name"]
    mnt = cfg["mountpoint"]
    boot_time()
    state = read_state()
    prev = run("journalctl", "-b", "-1", "-o", "short-monotonic", "--no-pager",
               "-u", "hottier.service").stdout
    dump("J-1| ", prev)
    # hottierctl deactivate removed each device, or found it removed by
    # lvm2's blkdeactivate (blk-availability.service stops first); either
    # remove writes the map clean, so no map was left open.
    names = [name] + ([cfg["stack"]["name"]] if "stack" in cfg else [])
    said = {n: re.search(rf"\b{re.escape(n)}: (removed|not active)$", prev,
                         re.M) for n in names}
    kmsg = run("dmesg").stdout
    check("deactivated-at-shutdown",
          all(said.values()) and "left open" not in kmsg,
          "hottier.service at the last shutdown: " + "; ".join(
              f"{n}: {m[1] if m else 'nothing'}" for n, m in said.items())
          + "; kernel log: " + ("a map left open" if "left open" in kmsg
                                else "every map clean"))
    device_common(cfg)
    if "stack" in cfg:
        check_stack(cfg, state)
    st = status(name)
    before = state["before"]["slots_used"]
    m = re.search(r"(\d+) replicas restored from the SSD's map, (\d+) intents",
                  kmsg)
    restored = int(m.group(1)) if m else -1
    say(f"FIG warm_restored={st['map_loaded']}")
    say(f"FIG warm_ratio={st['map_loaded'] / max(1, before):.3f}")
    check("warm-after-reboot",
          st["map_loaded"] == before and restored == before
          and st["pinned"] == state["before"]["pinned"],
          f"map_loaded={st['map_loaded']} kernel log restored={restored} "
          f"of {before} resident before the reboot "
          f"({st['map_loaded'] / max(1, before):.2f}); pinned "
          f"{st['pinned']} of {state['before']['pinned']}; map={st['map']}")
    check("data-intact",
          sha256(f"{mnt}/pinned.dat") == state["pinned"]
          and sha256(f"{mnt}/data.dat") == state["data"])
    # The same pass as before the reboot (sha256 above read through the
    # page cache, which the pass bypasses).
    after = pass_hit_ratio(name, mnt)
    hit_before = float(state["hit_ratio"])
    say(f"FIG after_hit_ratio={after:.3f}")
    check("warm-hit-ratio", after >= 0.9 * hit_before,
          f"hit ratio of a pass over the files {after:.3f} after the reboot, "
          f"{hit_before:.3f} before (x{after / max(1e-9, hit_before):.3f})")

    # For the kill: a file made durable, then reads until QEMU dies.
    state["crash"] = write_file(f"{mnt}/crash.dat", 4)
    run("sync")
    write_state(state)
    say(f"INFO crash.dat sha256 {state['crash']}")
    st = status(name)
    say(f"FIG kill_slots_used={st['slots_used']}")
    dump_logs(cfg)
    return "crash", "kill"


def stage_crash(cfg, disk):
    name = cfg["name"]
    mnt = cfg["mountpoint"]
    boot_time()
    state = read_state()
    device_common(cfg)
    if "stack" in cfg:
        check_stack(cfg, state)
    kmsg = run("dmesg").stdout
    check("takeover-after-crash",
          "the SSD's map was left open: recorded replicas kept" in kmsg,
          "kernel log: " + "; ".join(
              line.split("] ", 1)[-1] for line in kmsg.splitlines()
              if "SSD's map" in line or "intents" in line))
    st = status(name)
    say(f"FIG crash_restored={st['map_loaded']}")
    say(f"FIG crash_dropped={st['map_dropped']}")
    # fstab's pass 2: systemd-fsck@<the by-uuid link>.service ran e2fsck
    # -p on the device (replaying the journal) before the mount.
    fsck = run("systemd-escape", "-p", "--template=systemd-fsck@.service",
               f"/dev/disk/by-uuid/{cfg['uuid']}").stdout.strip()
    res = unit_prop(fsck, "Result")
    act = unit_prop(fsck, "ActiveState")
    said = run("journalctl", "-b", "-o", "cat", "--no-pager",
               "-t", "systemd-fsck").stdout.strip().replace("\n", "; ")
    check("boot-fsck", act == "active" and res == "success",
          f"{fsck}: {act}, {res}; it said: {said}")
    p = run("umount", mnt)
    ok = p.returncode == 0
    p = run("e2fsck", "-fn", f"/dev/mapper/{name}")
    dump("INFO e2fsck| ", p.stdout)
    check("e2fsck-clean", ok and p.returncode == 0, f"exit {p.returncode}")
    run("mount", mnt)
    files = {"pinned.dat": state["pinned"], "data.dat": state["data"],
             "crash.dat": state["crash"]}
    bad = [f for f, h in files.items()
           if not os.path.exists(f"{mnt}/{f}") or sha256(f"{mnt}/{f}") != h]
    check("data-intact", not bad, "bad: " + ",".join(bad) if bad else
          "pinned.dat, data.dat, crash.dat (fsynced before the kill)")
    p = run("dmsetup", "message", name, "0", "scrub")
    for _ in range(60):
        st = status(name)
        if st["scrub"] != "running":
            break
        time.sleep(1)
    check("scrub-clean", st["scrub"] == "done" and st["scrub_mismatches"] == 0,
          f"scrub {st['scrub']}, {st['scrub_mismatches']} mismatches of "
          f"{st['scrub_checked']}")
    state["crash_pinned"] = st["pinned"]
    write_state(state)
    # The next boot is without the SSD: the unit's 60 s wait for a late
    # member would only lengthen it.
    os.makedirs("/etc/systemd/system/hottier.service.d", exist_ok=True)
    with open("/etc/systemd/system/hottier.service.d/wait.conf", "w") as f:
        f.write("[Service]\nExecStart=\nExecStart=/usr/local/sbin/hottierctl "
                "activate --wait 5\n")
    dump_logs(cfg)
    return "missing", "poweroff"


def scrub_done(name):
    run("dmsetup", "message", name, "0", "scrub")
    for _ in range(60):
        st = status(name)
        if st["scrub"] != "running":
            return st
        time.sleep(1)
    return st


def stage_missing(cfg, disk):
    name = cfg["name"]
    mnt = cfg["mountpoint"]
    state = read_state()
    ssd = f"/dev/disk/by-id/virtio-{cfg['ssd_serial']}"
    boot_time()
    check("ssd-absent", not os.path.exists(ssd), ssd)
    device_common(cfg)
    if "stack" in cfg:
        check_stack(cfg, state)
    st = status(name)
    p = run("/usr/local/sbin/hottierctl", "status", name)
    kmsg = run("dmesg").stdout
    check("up-without-the-ssd",
          st["mode"] == "no_ssd" and "no SSD: degraded" in kmsg
          and f"hottierctl attach {name}" in p.stdout,
          f"mode {st['mode']}; kernel log: " + "; ".join(
              line.split("] ", 1)[-1] for line in kmsg.splitlines()
              if "no SSD" in line))
    files = {"pinned.dat": state["pinned"], "data.dat": state["data"],
             "crash.dat": state["crash"]}
    bad = [f for f, h in files.items() if sha256(f"{mnt}/{f}") != h]
    check("data-intact-without-the-ssd", not bad, ",".join(bad))
    files["missing.dat"] = write_file(f"{mnt}/missing.dat", 2)
    run("sync")
    say("READY-TO-ATTACH")
    deadline = time.monotonic() + 60
    while not os.path.exists(ssd) and time.monotonic() < deadline:
        time.sleep(0.5)
    check("ssd-plugged-in", os.path.exists(ssd), ssd)
    p = run("/usr/local/sbin/hottierctl", "attach", name)
    dump("INFO attach| ", p.stdout)
    st = settle(name)
    kmsg = run("dmesg").stdout
    check("attached", p.returncode == 0 and st["mode"] == "rw"
          and st["map"] == "open",
          f"exit {p.returncode}; mode {st['mode']}, map {st['map']}")
    say(f"FIG missing_restored={st['map_loaded']}")
    say(f"FIG missing_dropped={st['map_dropped']}")
    say(f"FIG missing_pinned={st['pinned']}")
    check("replicas-dropped-pins-kept",
          "the HDD was written while the SSD was missing" in kmsg
          and st["map_loaded"] == 0 and st["map_dropped"] > 0
          and st["pinned"] == state["crash_pinned"]
          and st["slots_used"] >= st["pinned"] > 0,
          f"map_loaded={st['map_loaded']} map_dropped={st['map_dropped']} "
          f"pinned={st['pinned']} of {state['crash_pinned']} "
          f"slots_used={st['slots_used']}")
    run("sh", "-c", "echo 3 > /proc/sys/vm/drop_caches")
    bad = [f for f, h in files.items() if sha256(f"{mnt}/{f}") != h]
    check("data-intact-after-attach", not bad, ",".join(bad) or
          ", ".join(files))
    st = scrub_done(name)
    check("scrub-clean-after-attach",
          st["scrub"] == "done" and st["scrub_mismatches"] == 0,
          f"scrub {st['scrub']}, {st['scrub_mismatches']} mismatches of "
          f"{st['scrub_checked']}")
    dump_logs(cfg)
    return "done", "poweroff"


def main():
    global out, stage
    disk = sys.argv[1]
    with open(f"{disk}/config.json") as f:
        cfg = json.load(f)
    out = open(cfg.get("channel", "/dev/ttyS1"), "w")
    os.makedirs(STATE_DIR, exist_ok=True)
    try:
        with open(f"{STATE_DIR}/stage") as f:
            stage = f.read().strip()
    except FileNotFoundError:
        stage = "install"
    say(f"STAGE {stage} begin uptime={open('/proc/uptime').read().split()[0]}")
    # hottier-boot-test.service is Type=exec: the boot finishes without it.
    p = subprocess.run(["timeout", "120", "systemctl", "is-system-running",
                        "--wait"], stdout=subprocess.PIPE, text=True)
    say(f"INFO {stage} system {p.stdout.strip()} at uptime "
        f"{open('/proc/uptime').read().split()[0]}")
    if p.stdout.strip() == "degraded":
        dump("INFO failed units| ", run("systemctl", "--failed",
                                         "--no-legend").stdout)
    stages = {"install": stage_install, "first": stage_first,
              "second": stage_second, "crash": stage_crash,
              "missing": stage_missing}
    if stage not in stages:
        say(f"STAGE {stage} nothing to do")
        run("systemctl", "poweroff")
        return 0
    try:
        nxt, action = stages[stage](cfg, disk)
    except Exception as e:  # a broken stage still ends the run
        check("stage-ran", False, f"{type(e).__name__}: {e}")
        dump_logs(cfg)
        nxt, action = "done", "poweroff"
    set_stage(nxt)
    run("sync")
    say(f"STAGE {stage} end failures={failures} next={nxt} action={action}")
    if action == "kill":
        mnt = cfg["mountpoint"]
        sh(f"(while :; do dd if={mnt}/data.dat of=/dev/null bs=256K "
           f"iflag=direct 2>/dev/null; cat {mnt}/pinned.dat > /dev/null; "
           f"done) >/dev/null 2>&1 &")
        time.sleep(2)
        say("READY-TO-KILL")
        time.sleep(600)
        action = "poweroff"
    run("systemctl", "--no-block", action)
    return 0


if __name__ == "__main__":
    sys.exit(main())
