/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex/error.h - libflex's error channel.
 *
 * Every libflex call that can fail returns 0 or a negative errno (a few
 * return a pointer, NULL on failure, and say so) and leaves a message in a
 * per-thread buffer, the way dlerror() does: what failed, on which object,
 * and for memory, what was free. flex_last_error() reads it. There is no
 * other error channel: no errno side effects callers must read, no
 * caller-supplied message buffers, no global state.
 */
#ifndef FLEX_ERROR_H
#define FLEX_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * flex_last_error() - the message of the calling thread's last failed
 * libflex call.
 *
 * The text stays valid and unchanged until the same thread's next failing
 * call; it is "" if the thread has had no failure. Successful calls do not
 * clear it. Never NULL.
 *
 * Since: 1.0
 */
const char *flex_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* FLEX_ERROR_H */
