/* SPDX-License-Identifier: GPL-2.0 */
/* Device enumeration below a given sysfs class directory (device.c), for tests. */
#ifndef FLEX_DEVICE_INTERNAL_H
#define FLEX_DEVICE_INTERNAL_H

#include <flex/device.h>

/* flex_device_enumerate() reading @class_dir instead of /sys/class/flex. */
int flex_device_enumerate_at(const char *class_dir, struct flex_device_info *out, unsigned int max,
			unsigned int *count);

#endif /* FLEX_DEVICE_INTERNAL_H */
