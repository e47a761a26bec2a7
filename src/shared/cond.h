/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/* Condition variables on CLOCK_MONOTONIC, with deadlines in µs. */

#include <pthread.h>
#include <stdint.h>

/* pthread_cond_init() with CLOCK_MONOTONIC: 0 or a negative errno. */
int cond_init_monotonic(pthread_cond_t *c);
/* Wait on c (m held) until signalled or the absolute CLOCK_MONOTONIC deadline
 * (USEC_INFINITY: none): 0 or -ETIMEDOUT (spurious wake-ups return 0). */
int cond_wait_until(pthread_cond_t *c, pthread_mutex_t *m, uint64_t deadline_usec);
