"""The members hottiertab lists, hidden from the rest of the system: the
udev matcher (hottierctl udev-member, run by 59- and 68-hottier-members.rules
for every block device event) and LVM's global_filter (hottierctl
lvm-filter). See Documentation/hottier.rst, "Members".

Both key on the file, not on live tables: a member must stay hidden while
its device is down too. Both read the file tolerantly (a line that
`activate` refuses still names its members: hiding one too many is the
safe side) and import nothing beyond the standard library and tab, so the
matcher starts fast.
"""

import os
import stat
import sys

from .tab import DISK_LINK, DEFAULT_PATH, lv_name

ROLES = ("hdd", "ssd")


def member_specs(text):
    """(device name, role, spec) of every member the file names: the
    second and third words of each line, as written."""
    specs = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) < 3:
            continue
        for role, spec in zip(ROLES, words[1:3]):
            specs.append((words[0], role, spec))
    return specs


def read_specs(path):
    """member_specs() of the file at path; none if it cannot be read."""
    try:
        with open(path) as f:
            return member_specs(f.read())
    except OSError:
        return []


def names(spec, dev="/dev"):
    """Every path a member spec may name the device by: the path itself;
    by-id/X and its kin below /dev/disk; VG/LV as /dev/VG/LV and as
    /dev/mapper/VG-LV (hyphens doubled), whichever of them exists now."""
    if spec.startswith("/"):
        return [os.path.normpath(spec)]
    if DISK_LINK.fullmatch(spec):
        return [os.path.join(dev, "disk", spec)]
    lv = lv_name(spec)
    if lv:
        vg, name = lv
        return [os.path.join(dev, vg, name),
                os.path.join(dev, "mapper", vg.replace("-", "--") + "-" +
                             name.replace("-", "--"))]
    return []


def block_devnum(path):
    """"major:minor" of the block device path leads to, or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def match(specs, devnode, links=(), devnum=None, dev="/dev",
          resolve=block_devnum):
    """The (device name, role) whose member is the device at devnode, or
    None. A spec names it if one of its names is devnode, or one of the
    links udev has given the device in this event (relative to dev, as
    udev's $links), or a path that leads to the device's number devnum
    now (a link a previous event made: the links 60-persistent-storage
    makes are not there yet when 59-hottier-members.rules runs)."""
    here = {os.path.normpath(devnode)}
    here.update(os.path.normpath(os.path.join(dev, link))
                for link in links if link)
    for name, role, spec in specs:
        for path in names(spec, dev):
            if path in here:
                return name, role
    if devnum is None:
        return None
    for name, role, spec in specs:
        for path in names(spec, dev):
            if resolve(path) == devnum:
                return name, role
    return None


# The links that name a filesystem, not a device: they belong to the
# hottier device alone.
FS_LINKS = ("disk/by-uuid/", "disk/by-label/")


def kept_links(links):
    """links without the filesystem ones, as one value for udev: udev 252
    cannot remove a link (its SYMLINK-= adds it), so the rule assigns the
    member's links anew, SYMLINK="$env{HOTTIER_MEMBER_LINKS}"."""
    return " ".join(link for link in links
                    if link and not link.startswith(FS_LINKS))


def udev_lines(found, links=()):
    """What udev's IMPORT{program} reads: KEY=value lines."""
    if found is None:
        return []
    name, role = found
    return [f"HOTTIER_MEMBER={role}", f"HOTTIER_DEVICE={name}",
            *links_lines(links)]


def links_lines(links):
    """HOTTIER_MEMBER_LINKS, and HOTTIER_MEMBER_LINKS_SET=1 to tell an
    empty list from a matcher that did not run: the rule assigns the links
    only then, never wiping a member's by-id links on a failure."""
    return [f"HOTTIER_MEMBER_LINKS={kept_links(links)}",
            "HOTTIER_MEMBER_LINKS_SET=1"]


# LVM's regular expressions (libdm's regex): these are special.
LVM_SPECIAL = set(".*+?^$|()[]{}\\")


def lvm_regex(path):
    """An anchored LVM pattern for exactly path, in | delimiters."""
    body = "".join("\\" + c if c in LVM_SPECIAL else c for c in path)
    return f"^{body}$"


def lvm_filter(specs, dev="/dev"):
    """(patterns, members): a global_filter's reject patterns, one per name
    of each member (sorted, no duplicates), and per member what it
    rejects."""
    patterns, members = [], []
    for name, role, spec in specs:
        paths = names(spec, dev)
        members.append({"device": name, "role": role, "spec": spec,
                        "names": paths})
        for path in paths:
            pattern = f"r|{lvm_regex(path)}|"
            if pattern not in patterns:
                patterns.append(pattern)
    return patterns, members


def lvm_config(patterns):
    """The devices section that holds the filter, as lvm.conf takes it."""
    if not patterns:
        return ["# hottiertab lists no members: no filter needed"]
    quoted = ", ".join(f'"{p}"' for p in patterns)
    return ["devices {", f"\tglobal_filter = [ {quoted} ]", "}"]


USAGE = ("usage: hottierctl udev-member [--tab FILE] [--devnum MAJOR:MINOR] "
         "[--links-only] DEVNAME [LINK ...]")


def udev_args(argv):
    """udev-member's arguments, parsed without argparse (the hottierctl
    script calls udev_main() for udev-member alone: udev runs it for every
    block device event, and importing the whole tool doubles its start
    time). None on a usage error."""
    opts = {"tab": DEFAULT_PATH, "devnum": None, "links_only": False}
    rest = []
    it = iter(argv)
    for word in it:
        if rest or not word.startswith("--"):
            rest.append(word)
        elif word == "--links-only":
            opts["links_only"] = True
        elif word in ("--tab", "--devnum"):
            value = next(it, None)
            if value is None:
                return None
            opts[word[2:]] = value
        elif word.startswith(("--tab=", "--devnum=")):
            key, value = word[2:].split("=", 1)
            opts[key] = value
        else:
            return None
    if not rest:
        return None
    opts["devnode"], opts["links"] = rest[0], rest[1:]
    return opts


def udev_member(opts, dev="/dev"):
    """The lines udev-member prints (see hottierctl(8))."""
    if opts["links_only"]:              # a member already: its links
        return links_lines(opts["links"])
    specs = read_specs(opts["tab"])
    if not specs:
        return []
    devnum = opts["devnum"] or block_devnum(opts["devnode"])
    return udev_lines(match(specs, opts["devnode"], opts["links"], devnum,
                            dev), opts["links"])


def udev_main(argv, out=sys.stdout):
    opts = udev_args(argv)
    if opts is None or "-h" in argv or "--help" in argv:
        return None                     # the full parser says it
    for line in udev_member(opts):
        print(line, file=out)
    return 0
