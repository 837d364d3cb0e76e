/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex/libflex.h - all of libflex's API in one include.
 *
 * Each header below reads as the manual of its part: flex/error.h the
 * error channel, flex/device.h a device node and its ioctls,
 * flex/region_source.h and flex/allocator.h FlexAllocator, flex/context.h
 * a device with its allocator and default stream, flex/stream.h FlexStream
 * and events, flex/tiling.h, flex/job.h, flex/program.h and
 * flex/manifest.h what a stream launches.
 *
 * Naming: every symbol carries the flex_ prefix of its part
 * (flex_alloc_, flex_stream_ ...). Objects are made by *_new() and freed by
 * *_destroy(); the shared ones (devices, region sources) are counted with
 * *_ref() and *_unref() instead. Calls that can fail return 0 or a
 * negative errno and leave a message for flex_last_error().
 */
#ifndef FLEX_LIBFLEX_H
#define FLEX_LIBFLEX_H

#include <flex/error.h>
#include <flex/region_source.h>
#include <flex/allocator.h>
#include <flex/device.h>
#include <flex/context.h>
#include <flex/tiling.h>
#include <flex/job.h>
#include <flex/program.h>
#include <flex/stream.h>
#include <flex/manifest.h>

#endif /* FLEX_LIBFLEX_H */
