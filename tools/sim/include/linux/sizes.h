/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/sizes.h> for the simulator: see ../sim-kernel.h. */
#include <sim-kernel.h>
