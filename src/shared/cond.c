/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#include <time.h>

#include "shared/cond.h"
#include "shared/time-util.h"

int cond_init_monotonic(pthread_cond_t *c)
{
        pthread_condattr_t attr;
        int r;

        r = pthread_condattr_init(&attr);
        if (r != 0)
                return -r;
        r = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        if (r == 0)
                r = pthread_cond_init(c, &attr);
        pthread_condattr_destroy(&attr);
        return -r;
}

int cond_wait_until(pthread_cond_t *c, pthread_mutex_t *m, uint64_t deadline_usec)
{
        struct timespec ts;

        if (deadline_usec == USEC_INFINITY) {
                pthread_cond_wait(c, m);
                return 0;
        }
        ts.tv_sec = (time_t)(deadline_usec / USEC_PER_SEC);
        ts.tv_nsec = (long)((deadline_usec % USEC_PER_SEC) * NSEC_PER_USEC);
        return -pthread_cond_timedwait(c, m, &ts);
}
