/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
#include <stdint.h>
#include <time.h>

#define USEC_PER_SEC ((uint64_t)1000000)
#define USEC_PER_MSEC ((uint64_t)1000)
#define NSEC_PER_USEC ((uint64_t)1000)
#define USEC_INFINITY UINT64_MAX

/* Microseconds of the given clock (CLOCK_MONOTONIC, CLOCK_REALTIME, ...). */
uint64_t now_usec(clockid_t clock);
/* Parse "30", "30s", "500ms", "3min", "1h", "2min 30s" into microseconds.
 * Bare numbers are seconds. Returns 0 or -EINVAL / -ERANGE. */
int parse_timespan_usec(const char *s, uint64_t *ret);
