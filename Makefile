# dm-hottier: top-level entry points. See README.md.
#
#   make              build dm-hottier.ko against KDIR (default: newest
#                     installed Debian kernel with headers and a /boot image)
#   make install      install-module and install-userspace
#   make install-module      into /lib/modules/<ver>/updates, run depmod
#   make install-userspace   hottierctl, its man page, udev rules, systemd
#                     units (boot, metrics) and the Grafana dashboard under
#                     PREFIX (default /usr/local); DESTDIR stages
#   make deb          the Debian packages dm-hottier-dkms and hottierctl
#                     (debian/), built from a copy of the tree into
#                     results/deb/
#   make check        everything CI runs; ends with "N passed, N failed"
#   make demo         the same zipf workload on a bare emulated HDD and on
#                     hottier in a guest: hit ratio, speed-up, a plot
#   make bench        overhead against dm-linear, hit ratio against dm-cache,
#                     then bench-workloads; results/bench/report.md
#   make bench BENCH=quick  zipf beside dm-cache smq, 30 s a system, with
#                     loose floors (what make check runs); results/bench-quick/
#   make bench-workloads  issue 14's workloads (moving hot set, streaming,
#                     backup scan, SoftLayer, capture writer) on hottier,
#                     dm-cache smq and dm-linear with the oracle, one guest
#   make bench-sweep  the extent-size sweep: zipf and streaming at 32 KiB to
#                     4 MiB beside dm-cache smq; results/sweep/report.md
#   make soak         the integrity race test for SOAK_SECONDS (default 600),
#                     the crash cuts (CRASH_CUTS), a 4 TiB SSD (64M slots)
#                     loaded in a 10 GiB guest, KILL_ROUNDS QEMU kills,
#                     the whole guest suite on 6.1 and 6.12, the debug
#                     tier's whole list under KASAN
#   make boot-test    a real systemd boot of a small Debian image (6.1):
#                     hottier.service at boot and shutdown, a warm reboot,
#                     a hard QEMU kill; "boot-6.1: N passed, N failed"
#
# Overrides: make KVER=<version> or make KDIR=<build tree>.

KVER ?= $(shell scripts/kver.sh 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
MDIR := $(CURDIR)/dm-hottier
W ?= 1

# hottierctl's files; udev and systemd read /usr/local/lib too.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
HOTTIER_LIBDIR ?= $(PREFIX)/lib/hottierctl
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/hottierctl
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
UNITDIR ?= $(PREFIX)/lib/systemd/system

.PHONY: all modules install install-module install-userspace deb clean distclean setup check demo kunit static guest-test dkms-test host-test matrix debug-kernel bench bench-workloads bench-sweep soak boot-test

all: modules

modules:
	@test -f "$(KDIR)/Makefile" || { echo "no kernel build tree at '$(KDIR)': run 'make setup' or set KDIR/KVER" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(MDIR) W=$(W) modules

install: install-module install-userspace

# Debian's headers carry no signing key: signing is left to the user (DKMS
# signs with its own MOK key). Newer kernels compress the installed .ko.
install-module: modules
	$(MAKE) -C $(KDIR) M=$(MDIR) INSTALL_MOD_DIR=updates CONFIG_MODULE_SIG_ALL= modules_install
	depmod -a $(KVER)

# The script, the rules and the units name where hottierctl and its
# package are installed.
install-userspace:
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(HOTTIER_LIBDIR)/hottier \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(UNITDIR)
	sed 's|^LIBDIR = .*|LIBDIR = "$(HOTTIER_LIBDIR)"|' userspace/hottierctl \
		> $(DESTDIR)$(SBINDIR)/hottierctl
	chmod 0755 $(DESTDIR)$(SBINDIR)/hottierctl
	install -m 0644 userspace/hottier/*.py $(DESTDIR)$(HOTTIER_LIBDIR)/hottier/
	install -m 0644 userspace/hottierctl.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 userspace/hottiertab.example $(DESTDIR)$(DOCDIR)/
	for r in 60-hottier.rules 59-hottier-members.rules \
		68-hottier-members.rules; do \
		sed 's|/usr/local/sbin/hottierctl|$(SBINDIR)/hottierctl|' \
			userspace/$$r > $(DESTDIR)$(UDEVRULESDIR)/$$r || exit 1; \
	done
	for u in hottier.service hottier-metrics.service; do \
		sed 's|/usr/local/sbin/hottierctl|$(SBINDIR)/hottierctl|' \
			userspace/$$u > $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	install -m 0644 userspace/hottier-metrics.timer $(DESTDIR)$(UNITDIR)/
	install -m 0644 userspace/grafana/hottier-dashboard.json \
		$(DESTDIR)$(DOCDIR)/

# dpkg-buildpackage in a copy of the tree: see scripts/deb.sh.
deb:
	scripts/deb.sh

clean:
	@test ! -f "$(KDIR)/Makefile" || $(MAKE) -C $(KDIR) M=$(MDIR) clean

distclean: clean
	rm -rf results

setup:
	scripts/setup.sh

kunit:
	scripts/kunit.sh

static:
	scripts/static-checks.sh

guest-test: modules
	scripts/vm-run.sh --kver $(KVER) --results results/guest -- \
		/usr/bin/python3 -m pytest -p no:cacheprovider -q tests/guest

host-test:
	python3 -m pytest -p no:cacheprovider -q tests/host

dkms-test:
	scripts/dkms-test.sh

# Build against every kernel of the matrix and run each one's guest suite.
matrix:
	scripts/matrix.sh all

debug-kernel:
	scripts/debug-kernel.sh

check:
	scripts/check.sh

demo:
	scripts/demo.sh

# Results in results/bench/ (report.md); the run's performance.rst and its
# plots are copied into Documentation/ (performance.rst, performance/).
# BENCH=quick: what make check runs in its measurement boot (zipf beside
# dm-cache smq, 30 s a system, loose floors); results/bench-quick/ only.
bench:
	BENCH=$(BENCH) scripts/bench.sh

# BENCH_WORKLOADS (comma list), BENCH_SECONDS (runtime scale, 30),
# BENCH_EXTENT (sectors, 128): see scripts/bench-workloads.sh.
bench-workloads:
	scripts/setup.sh >/dev/null
	scripts/bench-workloads.sh
	MPLBACKEND=Agg /usr/bin/python3 tests/bench/bench_report.py results/bench

# SWEEP_EXTENTS (sectors, "64 128 512 2048 8192"), BENCH_SECONDS (30): see
# scripts/bench-sweep.sh.
bench-sweep:
	scripts/setup.sh >/dev/null
	scripts/bench-sweep.sh

# The integrity race test, minutes long; HOTTIER_SEED repeats a run. The
# crash cuts of the on-SSD map, CRASH_CUTS per write policy. Then
# the 64M-slot table of a 4 TiB SSD at 64 KiB extents (1.9 GiB of kernel
# memory: see Documentation/hottier.rst, Memory), and QEMU killed
# KILL_ROUNDS times mid-load.
SOAK_SECONDS ?= 600
# Crash cuts per write policy (tests/guest/test_crash.py): 1,000 in all.
CRASH_CUTS ?= 500
# QEMU kills (scripts/qemu-kill.sh), each a boot after the last one's
# takeover; make check makes 1.
KILL_ROUNDS ?= 10
soak:
	scripts/setup.sh >/dev/null
	scripts/matrix.sh build 6.1 >/dev/null
	HOTTIER_MODULE=$(CURDIR)/results/matrix/6.1/src/dm-hottier.ko \
	HOTTIER_VM_APPEND=null_blk.nr_devices=0 \
	HOTTIER_SOAK_SECONDS=$(SOAK_SECONDS) \
		scripts/vm-run.sh --kver $$(scripts/matrix.sh list | sed -n 's/^6\.1: //p') \
		--results results/soak --timeout $$(( $(SOAK_SECONDS) * 3 + 600 )) -- \
		scripts/guest-suite.sh tests/guest/test_integrity.py
	HOTTIER_MODULE=$(CURDIR)/results/matrix/6.1/src/dm-hottier.ko \
	HOTTIER_VM_APPEND=null_blk.nr_devices=0 \
	HOTTIER_CRASH_CUTS=$(CRASH_CUTS) HOTTIER_DROP_SECONDS="2 4 6" \
		scripts/vm-run.sh --kver $$(scripts/matrix.sh list | sed -n 's/^6\.1: //p') \
		--results results/soak-crash --timeout $$(( $(CRASH_CUTS) * 30 + 600 )) -- \
		scripts/guest-suite.sh tests/guest/test_crash.py
	HOTTIER_MODULE=$(CURDIR)/results/matrix/6.1/src/dm-hottier.ko \
	HOTTIER_VM_APPEND=null_blk.nr_devices=0 \
	HOTTIER_SCALE_SSD_GIB=4096 \
		scripts/vm-run.sh --kver $$(scripts/matrix.sh list | sed -n 's/^6\.1: //p') \
		--results results/soak-4tib --memory 10G --timeout 3600 -- \
		scripts/guest-suite.sh \
		tests/guest/test_scale.py::test_a_large_ssd_loads_with_default_keys_and_serves
	scripts/qemu-kill.sh --tier 6.1 --rounds $(KILL_ROUNDS) \
		--kver $$(scripts/matrix.sh list | sed -n 's/^6\.1: //p') \
		--module results/matrix/6.1/src/dm-hottier.ko --results results/soak-kill
	HOTTIER_MATRIX_FULL=1 scripts/matrix.sh guest 6.1
	scripts/matrix.sh build 6.12 >/dev/null
	HOTTIER_MATRIX_FULL=1 scripts/matrix.sh guest 6.12
	scripts/matrix.sh build 7.2-debug >/dev/null
	HOTTIER_MATRIX_FULL=1 scripts/matrix.sh guest 7.2-debug

# A real boot (issue 15): debootstrap's bookworm (cached in
# ~/.cache/dm-hottier/boot-image-<key>/) booted with systemd under QEMU TCG;
# /etc/hottiertab and hottier.service create the device before /etc/fstab
# mounts it by UUID, a reboot comes back warm, a SIGKILL of QEMU comes back
# clean. See scripts/boot-test.sh.
boot-test:
	scripts/matrix.sh build 6.1 >/dev/null
	scripts/boot-test.sh
