/* SPDX-License-Identifier: GPL-2.0 */
/* device.c internals: enumeration below a given sysfs class directory (for tests), and the budget of DMA queues. */
#ifndef FLEX_DEVICE_INTERNAL_H
#define FLEX_DEVICE_INTERNAL_H

#include <stdbool.h>

#include <linux/flex.h>
#include <flex/device.h>

/* flex_device_enumerate() reading @class_dir instead of /sys/class/flex. */
int flex_device_enumerate_at(const char *class_dir, struct flex_device_info *out, unsigned int max,
			unsigned int *count);

/*
 * Streams' DMA queues (overlap.c) on one device file: at most
 * FLEX_DMA_QUEUES_MAX of its FLEX_MAX_QUEUES, so that at least the other
 * three quarters are left for streams' main queues. Take one before
 * creating it (false: none left), give it back when it is destroyed.
 */
#define FLEX_DMA_QUEUES_MAX	(FLEX_MAX_QUEUES / 4)
bool flex_device_dma_queue_take(struct flex_device *dev);
void flex_device_dma_queue_give(struct flex_device *dev);

#endif /* FLEX_DEVICE_INTERNAL_H */
