# dm-hottier: top-level entry points. See README.md.
#
#   make              build dm-hottier.ko against KDIR (default: newest
#                     installed Debian kernel with headers and a /boot image)
#   make install      install into /lib/modules/<ver>/updates, run depmod
#   make check        everything CI runs; ends with "N passed, N failed"
#   make demo         boot a guest, create a hottier device, run fio
#   make bench        overhead against dm-linear, hit ratio against dm-cache
#   make soak         the integrity race test for SOAK_SECONDS (default 600)
#
# Overrides: make KVER=<version> or make KDIR=<build tree>.

KVER ?= $(shell scripts/kver.sh 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
MDIR := $(CURDIR)/dm-hottier
W ?= 1

.PHONY: all modules install clean distclean setup check demo kunit static guest-test dkms-test host-test matrix debug-kernel bench soak

all: modules

modules:
	@test -f "$(KDIR)/Makefile" || { echo "no kernel build tree at '$(KDIR)': run 'make setup' or set KDIR/KVER" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(MDIR) W=$(W) modules

# Debian's headers carry no signing key: signing is left to the user (DKMS
# signs with its own MOK key). Newer kernels compress the installed .ko.
install: modules
	$(MAKE) -C $(KDIR) M=$(MDIR) INSTALL_MOD_DIR=updates CONFIG_MODULE_SIG_ALL= modules_install
	depmod -a $(KVER)

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

bench:
	scripts/bench.sh

# The integrity race test, minutes long; HOTTIER_SEED repeats a run.
SOAK_SECONDS ?= 600
soak:
	scripts/setup.sh >/dev/null
	scripts/matrix.sh build 6.1 >/dev/null
	HOTTIER_MODULE=$(CURDIR)/results/matrix/6.1/src/dm-hottier.ko \
	HOTTIER_VM_APPEND=null_blk.nr_devices=0 \
	HOTTIER_SOAK_SECONDS=$(SOAK_SECONDS) \
		scripts/vm-run.sh --kver $$(scripts/matrix.sh list | sed -n 's/^6\.1: //p') \
		--results results/soak --timeout $$(( $(SOAK_SECONDS) * 3 + 600 )) -- \
		scripts/guest-suite.sh tests/guest/test_integrity.py
