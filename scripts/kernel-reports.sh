#!/usr/bin/env bash
# Print the kernel's own report lines found in a kernel log; exit 0 if there
# are any, 1 if the log is clean. Each pattern is the exact first line the
# kernel prints for that kind of report:
#   Oops / GPF / panic:  "Oops: ", "general protection fault", "Kernel panic - not syncing"
#   BUG:                 "BUG: " (also "BUG: KASAN: ...", "BUG: soft lockup", ...)
#   WARN and lockdep:    "WARNING: " ("WARNING: possible circular locking ...")
#   UBSAN:               "UBSAN: "
#   hung task, RCU:      "INFO: task ... blocked for more than", "rcu: INFO: ... stall"
#   kmemleak:            "kmemleak: N new suspected memory leaks"
set -u
pat='(Oops: |BUG: |WARNING: |Kernel panic - not syncing|general protection fault|UBSAN: '
pat+='|INFO: task .* blocked for more than|rcu: INFO: .*stall'
pat+='|kmemleak: [0-9]+ new suspected memory leaks)'
grep -E "^(\[ *[0-9]+\.[0-9]+\] )?$pat" "$1"
