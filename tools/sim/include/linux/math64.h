/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/math64.h> for the simulator: see ../sim-kernel.h. */
#include <sim-kernel.h>
