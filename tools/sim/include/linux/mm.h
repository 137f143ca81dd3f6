/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/mm.h> for the simulator: see ../sim-kernel.h. */
#include <sim-kernel.h>
