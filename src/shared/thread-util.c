/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#include <pthread.h>
#include <sys/prctl.h>

#include "shared/thread-util.h"

int thread_start(pthread_t *ret, void *(*fn)(void *), void *arg)
{
        pthread_attr_t attr;
        int r;

        r = pthread_attr_init(&attr);
        if (r != 0)
                return -r;
        r = pthread_attr_setstacksize(&attr, THREAD_STACK_SIZE);
        if (r == 0)
                r = pthread_create(ret, &attr, fn, arg);
        pthread_attr_destroy(&attr);
        return -r;
}

void thread_set_name(const char *name)
{
        (void)prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}
